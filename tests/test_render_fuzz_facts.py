"""Issue 20 item 9: renderers survive any `--from-facts` file. Hypothesis makes facts files out of
real recordings with garbage put anywhere (wrong types, missing keys, huge strings, controls,
undecodable bytes, nested junk): every one is either refused by loading with one usage line (the
document is not a facts file: not an object, another schema_version, a section missing or of the
wrong type) or judged, each check that cannot read its facts a skip or error result, and rendered
by every format, with and without -v. Never a renderer's traceback (exit 2, "internal error").
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import load_facts_dict

BASES = ["h100", "cpu_only", "driver_too_old", "broken_torch"]
NASTY = st.sampled_from(["\x1b[2J", "\n::warning::x", "##[error]", "```", "<!--", "\udcff", "\ud800", "\x00",
                         "a" * 5000, "", "%", "{count}", "{", "[bold]x", "\u202e", "\r"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30), NASTY)
junk = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                    max_leaves=12)


def _paths(d, prefix=()):
    """Every (path) to a value inside the document, containers included."""
    if isinstance(d, dict):
        for k, v in d.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


@st.composite
def facts_documents(draw):
    doc = copy.deepcopy(load_facts_dict(draw(st.sampled_from(BASES))))
    paths = sorted(_paths(doc), key=repr)
    for _ in range(draw(st.integers(1, 6))):
        path = draw(st.sampled_from(paths))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = draw(junk)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed or replaced this path
    return doc


def _render_all(doc) -> None:
    from flexdoctor import checks, runner
    from flexdoctor.facts import Facts
    from flexdoctor.render import Format, renderer

    try:
        facts = Facts.load(json.loads(json.dumps(doc)))  # what --from-facts reads: JSON text
    except (ValueError, RecursionError):
        return  # the CLI says it in one line (exit 2): tests/test_ci.py, test_exit_codes.py
    report = runner.run(checks.builtin(), facts)
    for fmt in Format:
        for verbose in (False, True):
            text = renderer(fmt)(report, verbose=verbose, width=100, color=False, step_summary="")
            assert isinstance(text, str)
            text.encode("utf-8")  # no lone surrogate left
            if fmt == Format.junit:
                ET.fromstring(text.encode("utf-8"))
            if fmt == Format.json:
                json.loads(text)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(facts_documents())
def test_every_renderer_survives_any_facts_document(doc):
    _render_all(doc)


@pytest.mark.parametrize("change", [
    lambda d: d["host"].update(hostname=12345),
    lambda d: d.update(timings={"gpu": "slow", "torch": [1], "x": None}),
    lambda d: d.update(timings=[1, 2]),
    lambda d: d["host"].update(hostname={"a": ["\x1b"]}),
    lambda d: d["python"].update(executable=None, packages="torch"),
    lambda d: d["gpu"]["devices"][0].update(name=5, index="0", compute_capability=["\x1b", 9]),
])
def test_known_crashers_render_through_the_cli(tmp_path, change):
    """The shapes that ended in exit 2 from the JUnit and -v renderers, through the real CLI."""
    doc = load_facts_dict("h100")
    change(doc)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    for args in (["--format", "junit"], ["-v"], ["--format", "github"], ["--format", "markdown", "-v"]):
        done = subprocess.run([sys.executable, "-m", "flexdoctor", "check", "--from-facts", str(path), *args],
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode in (0, 1), (args, done.stderr)
        assert "internal error" not in done.stderr and done.stdout
