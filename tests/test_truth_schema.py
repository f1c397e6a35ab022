"""Every report format, for every recorded machine, full and --static: JSON validates against the
shipped schema and the other formats render (issue 12: `check --static --format json` failed it)."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from flexdoctor import checks, runner
from flexdoctor.facts import Facts, ProbeError
from flexdoctor.render import Format, renderer

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "facts").glob("*.json"))
# What `flexdoctor check --static` puts in place of the torch runtime tier (probes.gather).
STATIC = ProbeError("not gathered: the torch runtime tier was skipped (--static)", kind="skipped")


def _schema() -> dict:
    return json.loads(resources.files("flexdoctor.schema").joinpath("report.schema.json").read_text())


def _report(path: Path, static: bool):
    facts = Facts.load(json.loads(path.read_text()))
    if static:
        facts = dataclasses.replace(facts, torch_runtime=STATIC, deep=None)
    specs, _ = checks.all_checks(with_plugins=False)
    return runner.run(specs, facts)


@pytest.mark.parametrize("static", [False, True], ids=["full", "static"])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_json_validates(path, static):
    doc = json.loads(renderer(Format.json)(_report(path, static)))
    jsonschema.Draft202012Validator(_schema()).validate(doc)


@pytest.mark.parametrize("static", [False, True], ids=["full", "static"])
@pytest.mark.parametrize("fmt", [f for f in Format if f != Format.json], ids=lambda f: f.value)
def test_other_formats_render(fmt, static):
    for path in FIXTURES:
        out = renderer(fmt)(_report(path, static))
        assert out.strip(), (fmt, path.name)
        assert "Traceback" not in out
        if fmt == Format.junit:
            ET.fromstring(out)


def test_a_probe_error_section_is_not_also_a_plain_object():
    """The bug itself: a ProbeError section matched two branches of the schema's oneOf."""
    schema = _schema()
    section = {"$defs": schema["$defs"], **schema["$defs"]["section"]}
    jsonschema.Draft202012Validator(section).validate(STATIC.to_dict())
    jsonschema.Draft202012Validator(section).validate({"version": "2.13.0"})
    jsonschema.Draft202012Validator(section).validate(None)
