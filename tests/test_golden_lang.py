"""Golden renders per language: the same report, rule pages and explain output in every catalogue.

A translation changes only words: the layout (columns, wrapping by terminal cells, the commands
that must copy-paste intact) must hold in Japanese, Portuguese and Hindi as in English. Each
language's goldens live in tests/golden/lang/<lang>/. A language without a catalogue yet is
skipped; once its catalogue lands, generate its goldens and review them like code:

    UPDATE_GOLDEN=1 python -m pytest tests/test_golden_lang.py

(``-k hi`` for one language). To add a language, add it to LANGS.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rich.cells import cell_len

from flexdoctor import __version__, checks, runner, text
from flexdoctor.facts import Facts
from flexdoctor.knowledge import explain as kb_explain
from flexdoctor.render import Format, explain_view, renderer, rules_view

HERE = Path(__file__).parent
GOLDEN = HERE / "golden" / "lang"
LANGS = ["en", "ja", "pt-BR", "hi"]
WIDTH = 100
LOG = HERE / "data" / "logs" / "FDE608_flex_shared_memory.log"


@pytest.fixture(params=LANGS)
def lang(request):
    if request.param not in text.available():
        pytest.skip(f"no {request.param} catalogue yet (flexdoctor/locale/{request.param}.toml)")
    text.set_language(request.param)
    yield request.param
    text.set_language(None)


def report(case: str = "driver_too_old", **options) -> str:
    facts = Facts.from_dict(json.loads((HERE / "fixtures" / "facts" / f"{case}.json").read_text()))
    out = renderer(Format.text)(runner.run(checks.builtin(), facts), **{"width": WIDTH, "color": False, **options})
    return out.replace(__version__, "<version>")


def explained() -> str:
    with open(LOG, "rb") as stream:
        result = kb_explain.scan(stream)
    return explain_view.render(result, LOG.name, width=WIDTH)


RENDERS = {
    "driver_too_old.txt": report,
    "rules_FD504.txt": lambda: rules_view.render("FD504"),
    "rules_FDE105.txt": lambda: rules_view.render("FDE105"),
    "explain_FDE608.txt": explained,
}


def compare(path: Path, actual: str) -> None:
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}: run UPDATE_GOLDEN=1 python -m pytest {__file__}"
    assert actual == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(RENDERS))
def test_golden_per_language(lang, name):
    compare(GOLDEN / lang / name, RENDERS[name]())


@pytest.mark.parametrize("name", ["rules_FDE105.txt", "explain_FDE608.txt"])
def test_wrapped_prose_fits_the_width_in_terminal_cells(lang, name):
    """rules and explain wrap a cause and a fix by cells, not characters: a CJK character takes
    two, a Devanagari vowel sign none. Commands stay whole on their own lines."""
    limit = rules_view.WIDTH if name.startswith("rules") else WIDTH - 4
    heads = {text.t("rules.cause"), text.t("rules.fix"), f"{text.t('explain.cause')}:", f"{text.t('explain.fix')}:"}
    block, checked = False, 0
    for line in RENDERS[name]().splitlines():
        if line.strip() in heads:
            block = True
        elif not line.strip() or line.lstrip().startswith("$ "):
            block = False
        elif block:
            checked += 1
            assert cell_len(line) <= limit, (lang, line, cell_len(line))
    assert checked >= 3


def test_the_report_is_translated_not_only_wrapped(lang):
    """Every heading and verdict of the report comes from the language's catalogue."""
    out = report()
    for key in ("area.gpu", "report.verdict_fail", "gpu-present.title"):
        assert text.t(key) in out, key
    if lang != "en":
        assert text.catalog("en")["report.verdict_fail"] not in out


def test_every_column_lines_up_in_cells(lang):
    """The check IDs start in the same terminal column on every line, whatever the script."""
    starts = set()
    for line in report(verbose=True).splitlines():
        words = line.split()
        if len(words) >= 2 and words[1].startswith("FD") and words[0] in "✓!✗-E":
            starts.add(cell_len(line[: line.index(words[1])]))
    assert len(starts) == 1, starts


def test_json_keeps_english_identifiers(lang):
    facts = Facts.from_dict(json.loads((HERE / "fixtures" / "facts" / "driver_too_old.json").read_text()))
    doc = json.loads(renderer(Format.json)(runner.run(checks.builtin(), facts)))
    result = next(r for r in doc["results"] if r["id"] == "FD104")
    assert result["symbol"] == "driver-cuda-version" and result["status"] == "fail"
    assert result["title"] == text.t("driver-cuda-version.title")


