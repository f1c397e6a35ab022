"""What a translation still lacks against English (``python -m flexdoctor.locale``, tests).

It lives with the catalogues, not in text.py: it reads the knowledge base too, which stands
floors above text (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

from .. import text


def english_words() -> dict[str, str]:
    """Every English text a translation must cover: the catalogues and the knowledge base."""
    from ..knowledge import english_words as kb_words

    return {**text.catalog("en"), **kb_words()}


def audit(lang: str) -> dict[str, list[str]]:
    """What the ``lang`` catalogue lacks or gets wrong against English, key by key.

    ``missing``: English keys with no translation; ``placeholders``: keys whose ``{names}`` differ
    from the English ones; ``extra``: keys English no longer has (stale, safe to delete).
    """
    english = english_words()
    words = text.catalog(lang)
    return {
        "missing": sorted(k for k in english if not words.get(k)),
        "placeholders": sorted(k for k in english if words.get(k)
                               and text.placeholders(words[k]) != text.placeholders(english[k])),
        "extra": sorted(k for k in words if k not in english),
    }
