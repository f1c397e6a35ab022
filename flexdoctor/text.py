"""All user-facing words live in ``flexdoctor/locale/<lang>.toml``; code refers to them by key.

``t("gpu-present.pass", count=2)`` formats the template of the chosen language, falling back to
English key by key. Keeping the words in one place is what lets reports be translated and
reviewed without reading code (docs/TRANSLATING.md; ``python -m flexdoctor.locale`` lists what
a translation still lacks).

The language: ``--lang`` (``set_language``), then ``FLEXDOCTOR_LANG``, then the POSIX locale
variables ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` in that order (the first one set decides). A
language flexdoctor has no catalogue for, and ``C``/``POSIX``, mean English, never an error.
"""

from __future__ import annotations

import functools
import os
import re
import string
from dataclasses import dataclass
from importlib import resources
from typing import Optional

from ._toml import loads as toml_loads


class _Missing(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@functools.lru_cache(maxsize=None)
def catalog(lang: str) -> dict[str, str]:
    """``<lang>.toml`` plus every ``<lang>.<part>.toml`` (one per feature area), flattened."""
    flat: dict[str, str] = {}
    try:
        files = sorted(resources.files("flexdoctor.locale").iterdir(), key=lambda p: p.name)
    except (FileNotFoundError, OSError):
        return flat
    for item in files:
        name = item.name
        if name == f"{lang}.toml" or (name.startswith(f"{lang}.") and name.endswith(".toml")):
            source = item.read_text(encoding="utf-8")
            fast = _simple_catalogue(source)
            if fast is None:
                _flatten(toml_loads(source), flat)
            else:
                flat.update(fast)
    return flat


_TABLE = re.compile(r"\[([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\][ \t]*(?:#[^\x00-\x08\x0a-\x1f\x7f]*)?")
_PAIR = re.compile(r"([A-Za-z0-9_-]+)[ \t]*=[ \t]*(?:\"((?:[^\"\\\x00-\x08\x0a-\x1f\x7f]|\\[btnfr\"\\])*)\""
                   r"|'([^'\x00-\x08\x0a-\x1f\x7f]*)')[ \t]*(?:#[^\x00-\x08\x0a-\x1f\x7f]*)?")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
_ESCAPE = re.compile(r"\\(.)")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _simple_catalogue(source: str) -> Optional[dict[str, str]]:
    """A catalogue file written as catalogues are (``[table]`` headers, ``key = "text"`` pairs on one
    line, comments), flattened, ~5x faster than the TOML parser: reading the English catalogue
    was a tenth of ``check --static``. None for anything else in the file (a multi-line string, a
    \\u escape, a dotted or quoted key, a key or table twice, ...): the TOML parser then reads
    it, and reports it if it is broken. tests/test_locale.py holds both readers equal on every
    catalogue."""
    flat: dict[str, str] = {}
    tables: set = set()
    prefix = ""
    for raw in source.split("\n"):  # TOML's newlines only (not str.splitlines' \x0b, \x85, \u2028...)
        line = (raw[:-1] if raw.endswith("\r") else raw).strip(" \t")
        if not line:
            continue
        if line[0] == "#":
            if _CONTROL.search(line):
                return None  # a control character in a comment: the TOML parser rejects the file
            continue
        if line[0] == "[":
            m = _TABLE.fullmatch(line)
            if m is None or m.group(1) in tables or m.group(1) in flat:
                return None
            tables.add(m.group(1))
            prefix = m.group(1) + "."
            continue
        m = _PAIR.fullmatch(line)
        if m is None:
            return None
        key = prefix + m.group(1)
        if key in flat or key in tables:
            return None
        basic = m.group(2)
        flat[key] = m.group(3) if basic is None else _ESCAPE.sub(lambda e: _ESCAPES[e.group(1)], basic)
    if any(name.startswith(key + ".") for key in flat for name in tables):
        return None  # a table under a key that holds a text: the TOML parser says what is wrong
    return flat


def _flatten(tree: dict, flat: dict) -> None:

    def walk(prefix: str, node: dict) -> None:
        for key, value in node.items():
            full = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(full, value)
            else:
                flat[full] = value

    walk("", tree)


_LOCALE_VARS = ("FLEXDOCTOR_LANG", "LC_ALL", "LC_MESSAGES", "LANG")
_chosen: Optional[str] = None


@functools.lru_cache(maxsize=1)
def available() -> tuple[str, ...]:
    """Languages with a catalogue: ``<lang>.toml`` files in flexdoctor/locale (``en``, ``ja``, ``pt-BR``…).

    A language counts once its main file exists: area files alone (``hi.views.toml`` written ahead
    of ``hi.toml``) do not make a language users can choose or the tests must hold complete."""
    try:
        names = [p.name for p in resources.files("flexdoctor.locale").iterdir()]
    except (FileNotFoundError, OSError):
        return ("en",)
    langs = {n[: -len(".toml")] for n in names if n.endswith(".toml") and n.count(".") == 1}
    return tuple(sorted(langs | {"en"}))


def normalize(tag: Optional[str]) -> Optional[str]:
    """A locale tag as users write it (``ja_JP.UTF-8``, ``pt-br``, ``hi_IN``) → a catalogue name, or None.

    The region decides only when a catalogue for it exists; otherwise the language alone does
    (``pt_PT`` reads the ``pt-BR`` catalogue rather than nothing). ``C`` and ``POSIX`` are English.
    """
    if not tag:
        return None
    base = tag.strip().split(".", 1)[0].split("@", 1)[0].replace("_", "-")
    if not base:
        return None
    if base.upper() in ("C", "POSIX"):
        return "en"
    by_lower = {name.lower(): name for name in available()}
    if base.lower() in by_lower:
        return by_lower[base.lower()]
    lang = base.split("-", 1)[0].lower()
    if lang in by_lower:
        return by_lower[lang]
    family = sorted(name for low, name in by_lower.items() if low.split("-", 1)[0] == lang)
    return family[0] if family else None


def set_language(tag: Optional[str]) -> None:
    """The ``--lang`` option: wins over the environment for the rest of this process."""
    global _chosen
    _chosen = tag


def language() -> str:
    """The catalogue to speak: the first of --lang / FLEXDOCTOR_LANG / LC_ALL / LC_MESSAGES / LANG set."""
    if _chosen:
        return normalize(_chosen) or "en"
    for var in _LOCALE_VARS:
        value = os.environ.get(var)
        if value:
            return normalize(value) or "en"
    return "en"


def has(key: str) -> bool:
    return key in catalog("en")


def t(key: str, /, **kwargs: object) -> str:
    """The text for ``key`` with ``{placeholders}`` filled; unknown placeholders stay visible."""
    return _fill(key, catalog(language()).get(key) or catalog("en").get(key), kwargs)


def english(key: str, /, **kwargs: object) -> str:
    """The English text for ``key`` whatever the report language (the ``message`` of JSON facts)."""
    return _fill(key, catalog("en").get(key), kwargs)


def _fill(key: str, template: Optional[str], kwargs: dict) -> str:
    if template is None:
        raise KeyError(f"no text for {key!r} in flexdoctor/locale/en.toml")
    try:
        return string.Formatter().vformat(template, (), _Missing(kwargs))
    except (ValueError, IndexError, AttributeError):  # a stray brace in a translation: show it as written
        return template


@dataclass(frozen=True)
class Said:
    """Words flexdoctor says, kept as data until shown: a catalogue ``key`` and what fills it.

    A result that outlives the moment it was made (a fleet report written as JSON and as text)
    holds a Said instead of a string: ``str()`` is the English text (the JSON keeps English),
    :meth:`text` the report language's (:func:`words` in a renderer)."""

    key: str
    args: tuple = ()  # (name, value) pairs: hashable, like the frozen results that hold a Said

    @classmethod
    def of(cls, key: str, /, **args: object) -> "Said":
        return cls(key, tuple(sorted(args.items())))

    def __str__(self) -> str:
        return english(self.key, **dict(self.args))

    def text(self) -> str:
        return t(self.key, **dict(self.args))


def words(value: object) -> str:
    """What ``value`` says in the report language: a :class:`Said` in its words, a string as it is."""
    if isinstance(value, Said):
        return value.text()
    return "" if value is None else str(value)


_FIELD = string.Formatter()


def placeholders(template: str) -> frozenset[str]:
    """The ``{names}`` a template fills (a translation must use the same ones)."""
    try:
        return frozenset(name for _, name, _, _ in _FIELD.parse(template) if name)
    except ValueError:  # unbalanced braces: compare as written
        return frozenset({"<unbalanced braces>"})


def human_bytes(n: object) -> str:
    """1536 -> '1.5 KiB'; None -> '?' (sizes in tables and summary lines, on any floor)."""
    if n is None:
        return "?"
    value = float(n)  # type: ignore[arg-type]
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(n)


def seconds(v: Optional[float]) -> str:
    """2.345 -> '2.35'; None -> '—'."""
    return "—" if v is None else f"{v:.2f}"
