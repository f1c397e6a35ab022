"""Terminal cell widths of spacing combining marks (Devanagari vowel signs and the like).

rich counts every combining mark as zero cells wide. Terminals that follow wcwidth (glibc, tmux,
most emulators) give the *spacing* ones (Unicode category Mc: ा ि ी ो ौ in Devanagari, and their
kin in every Indic script) one cell. With rich's count each such sign shifts the rest of a line by
one column: Hindi reports overran their width and bordered tables went out of line (measured under
tmux 3.3a with rich 15). ``install()`` makes rich measure them as the terminal draws them; the CLI
calls it once at start-up (it changes rich for the whole process, which the CLI owns).
"""

from __future__ import annotations

import functools
import unicodedata


def install() -> None:
    """Measure spacing combining marks as one cell in rich (rich 13 … 15); safe to call twice."""
    import rich.cells
    import rich.segment

    original = rich.cells.get_character_cell_size
    if getattr(original, "_flexdoctor", False):
        return
    @functools.lru_cache(maxsize=4096)
    def cell_size(character: str, *args, **kwargs) -> int:
        if unicodedata.category(character) == "Mc":
            return 1
        return original(character, *args, **kwargs)

    cell_size._flexdoctor = True  # type: ignore[attr-defined]
    for module in (rich.cells, rich.segment):
        if hasattr(module, "get_character_cell_size"):
            module.get_character_cell_size = cell_size
    cached = getattr(rich.cells, "cached_cell_len", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()
