"""`explain --format json` validates against the shipped schema (flexdoctor/schema/explain.schema.json)
for every real log we hold: fingerprint entries, structural answers, the unknown fallback, notes."""

from __future__ import annotations

import io
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from flexdoctor.knowledge import explain as kbx
from flexdoctor.render import explain_view

DATA = Path(__file__).parent / "data"
LOGS = sorted((DATA / "logs").glob("**/*.log")) + sorted((DATA / "corpus").glob("*/*.log"))
EXTRA = {
    "unknown": b"Traceback (most recent call last):\n  File \"/x/site-packages/peft/a.py\", line 1, in f\nKeyError: 'q'\n",
    "structural": b"RuntimeError: CUDA error: an illegal memory access was encountered\n",
    "empty": b"",
}


def _schema() -> dict:
    return json.loads(resources.files("flexdoctor.schema").joinpath("explain.schema.json").read_text())


@pytest.mark.parametrize("name, data", [(p.name, p.read_bytes()) for p in LOGS] + sorted(EXTRA.items()),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_explain_json_validates(name, data):
    result = kbx.scan(io.BytesIO(data))
    doc = json.loads(explain_view.render(result, name, fmt="json"))
    jsonschema.Draft202012Validator(_schema()).validate(doc)


def test_schema_rejects_what_it_must():
    validator = jsonschema.Draft202012Validator(_schema())
    doc = json.loads(explain_view.render(kbx.scan(io.BytesIO(EXTRA["structural"])), "x", fmt="json"))
    assert validator.is_valid(doc)
    bad = dict(doc, problems=[dict(doc["problems"][0], kind="made-up")])
    assert not validator.is_valid(bad)
