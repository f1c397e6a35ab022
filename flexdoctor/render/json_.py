"""The JSON report: a versioned contract (see flexdoctor/schema/report.schema.json)."""

from __future__ import annotations

import json

from ..model import REPORT_SCHEMA_VERSION, Report
from ._escape import for_json


def to_dict(report: Report) -> dict:
    counts = report.counts()
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "flexdoctor_version": report.flexdoctor_version,
        "ok": not report.failed,
        "exit_code": report.exit_code,
        "strict": report.strict,
        "profile": report.profile,
        "settings": report.settings.to_dict() if report.settings is not None else None,
        "results": [r.to_dict() for r in report.results],
        "summary": {**counts, "total": len(report.results)},
        "facts": report.facts.to_dict(),
    }


def render(report: Report, **_: object) -> str:
    return for_json(json.dumps(to_dict(report), indent=2, sort_keys=True) + "\n")
