"""The knowledge base: known failures, their real error strings, causes and fixes, as data.

Entries live in ``flexdoctor/knowledge/*.toml`` (one file per area). Checks take their fixes
from here (``fix("FDE101", cuda_tag="cu128")``) so a fix is written once and ``explain`` and
``check`` always agree.

Entry fields: ``id`` (FDE###, stable forever), ``symbol``, ``title``, ``patterns`` (regular
expressions matched line by line against logs), ``cause``, ``fix``, ``commands``, ``applies``
(versions it applies to), ``links`` (upstream source or issue thread), ``rank`` (lower = more
fundamental: reported first), ``defaults`` (values for ``{placeholders}`` when no context is
given, e.g. in ``explain``), ``translate`` (the names of those defaults that are words, not code:
a translation gives them as ``kb.<ID>.defaults.<name>``, like ``title``, ``cause``, ``fix`` and
``applies``).

Fields used by ``explain`` only: ``near`` (patterns of which one must match within
``near_lines`` lines of a ``patterns`` match for the entry to count: the traceback frames that
say *which* library raised a generic CUDA error), ``overrides`` (IDs of entries this one
replaces when both are found: the generic reading of the same error), ``advisory`` (a harmless
notice, reported as a note and never as a problem), ``log_commands`` (commands shown only when
every ``{placeholder}`` in them was read from the log by a named group ``(?P<name>...)`` of a
pattern: exact versions the user has).
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
    translate: tuple[str, ...] = ()
    near: tuple[str, ...] = ()
    near_lines: int = 40
    overrides: tuple[str, ...] = ()
    advisory: bool = False
    log_commands: tuple[str, ...] = ()
    layer: str = ""  # "" for entries; "shape" or "context" for the structural layer's units

    @functools.cached_property
    def regexes(self) -> tuple[re.Pattern, ...]:
        return tuple(re.compile(p) for p in self.patterns)

    @functools.cached_property
    def near_regexes(self) -> tuple[re.Pattern, ...]:
        return tuple(re.compile(p) for p in self.near)

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


# The words of an entry (plus the defaults its ``translate`` names); patterns and commands stay as written.
TRANSLATED = ("title", "cause", "fix", "applies")


def entries() -> dict[str, Entry]:
    """Every entry, its words in the report language (``kb.<ID>.<field>`` keys of the catalogues)."""
    return _localized(language())


@functools.lru_cache(maxsize=None)
def _localized(lang: str) -> dict[str, Entry]:
    english = _english()
    if lang == "en":
        return english
    return {eid: _localize(entry, lang) for eid, entry in english.items()}


def _localize(entry: Entry, lang: str) -> Entry:
    """``entry`` with its words in ``lang`` (``kb.<ID>.<field>`` of the catalogues), else English."""
    if lang == "en":
        return entry
    words = catalog(lang)
    eid = entry.id
    changes: dict = {f: words[f"kb.{eid}.{f}"] for f in TRANSLATED
                     if getattr(entry, f) is not None and words.get(f"kb.{eid}.{f}")}
    defaults = {name: words[f"kb.{eid}.defaults.{name}"] for name in entry.translate
                if words.get(f"kb.{eid}.defaults.{name}")}
    if defaults:
        changes["defaults"] = {**entry.defaults, **defaults}
    return dataclasses.replace(entry, **changes) if changes else entry


def english_words() -> dict[str, str]:
    """The knowledge base's English words as catalogue keys (what a translation must cover):
    ``kb.<ID>.title`` / ``cause`` / ``fix`` / ``applies`` and ``kb.<ID>.defaults.<name>``."""
    out: dict[str, str] = {}
    for eid, e in _english().items():
        for f in TRANSLATED:
            if getattr(e, f) is not None:
                out[f"kb.{eid}.{f}"] = getattr(e, f)
        for name in e.translate:
            out[f"kb.{eid}.defaults.{name}"] = str(e.defaults[name])
    return out


@functools.lru_cache(maxsize=1)
def _sources() -> tuple:
    """(file name, text) of every knowledge file, in name order (read, not parsed)."""
    items = sorted(resources.files(__name__).iterdir(), key=lambda p: p.name)
    return tuple((item.name, item.read_text(encoding="utf-8")) for item in items if item.name.endswith(".toml"))


@functools.lru_cache(maxsize=None)
def _parse(name: str, text: str) -> tuple:
    """The entries of one knowledge file, checked on their own."""
    out = []
    for raw in toml_loads(text).get("entry", []):
        raw = dict(raw)
        for key in ("commands", "patterns", "links", "translate", "near", "overrides", "log_commands"):
            raw[key] = tuple(raw.get(key, ()))
        entry = Entry(**raw)
        unknown = [n for n in entry.translate if n not in entry.defaults]
        if unknown:
            raise ValueError(f"{entry.id} in {name}: translate names no default: {', '.join(unknown)}")
        out.append(entry)
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _english() -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for name, text in _sources():
        for entry in _parse(name, text):
            if entry.id in out:
                raise ValueError(f"duplicate knowledge-base id {entry.id} in {name}")
            out[entry.id] = entry
    return out


def _one(ref: str) -> Optional[Entry]:
    """The entry ``ref`` names, parsing only the one file whose text names it (a check's fix needs
    one entry; parsing all the files was a twentieth of ``check --static``). None when unsure:
    no file or several name it (an ID in one and a symbol in another), and ``get`` reads them all."""
    wanted = (f'id = "{ref.upper()}"', f'symbol = "{ref}"')
    files = [(name, text) for name, text in _sources() if any(w in text for w in wanted)]
    if len(files) != 1:
        return None
    name, text = files[0]
    # Only the [[entry]] block that names it (with its sub-tables), parsed as a file of its own.
    blocks = [b for b in ("\n" + text).split("\n[[entry]]\n")[1:] if any(w in b for w in wanted)]
    source = "[[entry]]\n" + blocks[0] if len(blocks) == 1 else text
    found = [e for e in _parse(name, source) if e.id == ref.upper() or e.symbol == ref]
    return _localize(found[0], language()) if len(found) == 1 else None


def get(ref: str) -> Entry:
    """An entry by ID (FDE101) or symbol (nvidia-driver-too-old)."""
    if _english.cache_info().currsize == 0:  # nothing parsed yet: parse only the file that names it
        entry = _one(ref)
        if entry is not None:
            return entry
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
    """Entries whose patterns match anywhere in ``text`` (a short error message), best first; an
    entry with ``near`` patterns needs one of them in the text too, and ``overrides`` apply."""
    found = [e for e in entries().values() if any(r.search(text) for r in e.regexes)
             and (not e.near or any(r.search(text) for r in e.near_regexes))]
    replaced = {ref for e in found for ref in e.overrides}
    return sorted((e for e in found if e.id not in replaced), key=lambda e: (e.rank, e.id))
