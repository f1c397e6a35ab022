"""All user-facing words live in ``flexdoctor/locale/<lang>.toml``; code refers to them by key.

``t("gpu-present.pass", count=2)`` formats the English template (or the language chosen with
``FLEXDOCTOR_LANG``, falling back to English key by key). Keeping the words in one place is
what lets reports be translated and reviewed without reading code.
"""

from __future__ import annotations

import functools
import os
import string
from importlib import resources

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
            _flatten(toml_loads(item.read_text(encoding="utf-8")), flat)
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


def language() -> str:
    return os.environ.get("FLEXDOCTOR_LANG", "en").split(".")[0].split("_")[0] or "en"


def has(key: str) -> bool:
    return key in catalog("en")


def t(key: str, **kwargs: object) -> str:
    """The text for ``key`` with ``{placeholders}`` filled; unknown placeholders stay visible."""
    template = catalog(language()).get(key) or catalog("en").get(key)
    if template is None:
        raise KeyError(f"no text for {key!r} in flexdoctor/locale/en.toml")
    try:
        return string.Formatter().vformat(template, (), _Missing(kwargs))
    except (ValueError, IndexError, AttributeError):  # a stray brace in a translation: show it as written
        return template
