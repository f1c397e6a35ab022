"""Golden tests: recorded facts of real machines through every renderer on a fixed-width console.

Regenerate after an intended change with:  UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
and review the diff like code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from flexdoctor import __version__, checks, runner
from flexdoctor.facts import Facts
from flexdoctor.render import Format, renderer

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "facts"
GOLDEN = HERE / "golden"
CASES = ["h100", "driver_too_old", "cpu_only"]
SUFFIX = {Format.text: "txt", Format.json: "json", Format.markdown: "md", Format.github: "github.txt",
          Format.junit: "junit.xml"}


def render(case: str, fmt: Format, **options) -> str:
    facts = Facts.from_dict(json.loads((FIXTURES / f"{case}.json").read_text()))
    report = runner.run(checks.builtin(), facts)
    # step_summary="": the GitHub renderer must not append to a real $GITHUB_STEP_SUMMARY here.
    out = renderer(fmt)(report, **{"width": 100, "color": False, "step_summary": "", **options})
    return out.replace(__version__, "<version>")


def compare(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}: run with UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fmt", list(Format))
def test_golden(case, fmt):
    compare(f"{case}.{SUFFIX[fmt]}", render(case, fmt))


@pytest.mark.parametrize("case", CASES)
def test_golden_verbose_text(case):
    compare(f"{case}.verbose.txt", render(case, Format.text, verbose=True))


def test_every_format_has_a_renderer_and_a_golden():
    """Every format renders every case to its own text, and each has a golden file to compare."""
    for case in CASES:
        facts = Facts.from_dict(json.loads((FIXTURES / f"{case}.json").read_text()))
        problems = {r.id for r in runner.run(checks.builtin(), facts).results
                    if r.status.value in ("note", "warn", "fail", "error")}
        assert problems, case
        outputs = {fmt: render(case, fmt) for fmt in Format}
        for fmt, out in outputs.items():
            assert (GOLDEN / f"{case}.{SUFFIX[fmt]}").is_file(), (case, fmt)
            assert all(i in out for i in problems), (case, fmt)  # every problem reaches every format
        assert len(set(outputs.values())) == len(Format)  # no two formats share one renderer


def test_colour_only_when_asked():
    plain = render("driver_too_old", Format.text)
    coloured = render("driver_too_old", Format.text, color=True)
    assert "\x1b[" not in plain and "\x1b[" in coloured
