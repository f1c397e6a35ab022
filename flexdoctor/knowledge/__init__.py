"""The knowledge base: known failures, their real error strings, causes and fixes, as data.

Entries live in ``flexdoctor/knowledge/*.toml`` (one file per area). Checks take their fixes
from here (``fix("FDE101", cuda_tag="cu128")``) so a fix is written once and ``explain`` and
``check`` always agree.

Entry fields: ``id`` (FDE###, stable forever), ``symbol``, ``title``, ``patterns`` (regular
expressions matched line by line against logs), ``cause``, ``fix``, ``commands``, ``applies``
(versions it applies to), ``links`` (upstream source or issue thread), ``rank`` (lower = more
fundamental: reported first), ``defaults`` (values for ``{placeholders}`` when no context is
given, e.g. in ``explain``).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Optional

from .._toml import loads as toml_loads
from ..model import Fix
from ..text import catalog, language


@dataclass(frozen=True)
class Entry:
    id: str
    symbol: str
    title: str
    cause: str
    fix: str
    commands: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    applies: Optional[str] = None
    links: tuple[str, ...] = ()
    rank: int = 50
    defaults: dict = field(default_factory=dict)

    @functools.cached_property
    def regexes(self) -> tuple[re.Pattern, ...]:
        return tuple(re.compile(p) for p in self.patterns)

    def render(self, **context: object) -> Fix:
        values = {**self.defaults, **{k: v for k, v in context.items() if v is not None}}
        return Fix(
            summary=_fill(self.fix, values),
            commands=tuple(_fill(c, values) for c in self.commands),
            kb=self.id,
            links=self.links,
        )


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _fill(template: str, values: dict) -> str:
    """Replace ``{name}`` placeholders; any other brace (a dict literal in a fix) stays as written."""
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), template)


TRANSLATED = ("title", "cause", "fix")  # the words of an entry; patterns and commands stay as written


def entries() -> dict[str, Entry]:
    """Every entry, its words in the report language (``kb.<ID>.<field>`` keys of the catalogues)."""
    return _localized(language())


@functools.lru_cache(maxsize=None)
def _localized(lang: str) -> dict[str, Entry]:
    english = _english()
    if lang == "en":
        return english
    words = catalog(lang)
    out = {}
    for eid, entry in english.items():
        changes = {f: words[f"kb.{eid}.{f}"] for f in TRANSLATED if words.get(f"kb.{eid}.{f}")}
        out[eid] = dataclasses.replace(entry, **changes) if changes else entry
    return out


def english_words() -> dict[str, str]:
    """The knowledge base's English words as catalogue keys (what a translation must cover)."""
    return {f"kb.{eid}.{f}": getattr(e, f) for eid, e in _english().items() for f in TRANSLATED}


@functools.lru_cache(maxsize=1)
def _english() -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for item in sorted(resources.files(__name__).iterdir(), key=lambda p: p.name):
        if not item.name.endswith(".toml"):
            continue
        for raw in toml_loads(item.read_text(encoding="utf-8")).get("entry", []):
            raw = dict(raw)
            for key in ("commands", "patterns", "links"):
                raw[key] = tuple(raw.get(key, ()))
            entry = Entry(**raw)
            if entry.id in out:
                raise ValueError(f"duplicate knowledge-base id {entry.id} in {item.name}")
            out[entry.id] = entry
    return out


def get(ref: str) -> Entry:
    """An entry by ID (FDE101) or symbol (nvidia-driver-too-old)."""
    table = entries()
    if ref.upper() in table:
        return table[ref.upper()]
    for entry in table.values():
        if entry.symbol == ref:
            return entry
    raise KeyError(ref)


def fix(ref: str, **context: object) -> Fix:
    return get(ref).render(**context)


def match_text(text: str) -> list[Entry]:
    """Entries whose patterns match anywhere in ``text`` (a short error message), best first."""
    found = [e for e in entries().values() if any(r.search(text) for r in e.regexes)]
    return sorted(found, key=lambda e: (e.rank, e.id))
