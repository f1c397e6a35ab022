"""Shared test helpers. Keep additive: other test modules may add functions here."""

from __future__ import annotations

import json
from pathlib import Path

FACTS_DIR = Path(__file__).parent / "fixtures" / "facts"


def facts_fixture_names() -> list[str]:
    """Names (file stems) of every recorded-facts fixture, sorted."""
    return sorted(p.stem for p in FACTS_DIR.glob("*.json"))


def load_facts_dict(name: str) -> dict:
    return json.loads((FACTS_DIR / f"{name}.json").read_text(encoding="utf-8"))


def load_facts(name: str):
    """A recorded-facts fixture as a Facts object."""
    from flexdoctor.facts import Facts

    return Facts.from_dict(load_facts_dict(name))


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _english_reports(monkeypatch):
    """Reports in English whatever the developer's locale (LANG=ja_JP… would change every golden).

    Language tests opt out by setting FLEXDOCTOR_LANG themselves or calling ``set_language``.
    """
    from flexdoctor import text

    monkeypatch.setenv("FLEXDOCTOR_LANG", "en")
    text.set_language(None)
    yield
    text.set_language(None)
