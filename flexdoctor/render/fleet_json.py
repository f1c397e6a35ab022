"""The fleet report as JSON: a versioned contract (flexdoctor/schema/fleet.schema.json)."""

from __future__ import annotations

import json

from ..fleet.model import FLEET_SCHEMA_VERSION, FleetReport
from ._escape import for_json


def _english(value):
    """A Said (flexdoctor's words) as its English text: the JSON is a contract, never translated."""
    return None if value is None else str(value)


def _finding(f) -> dict:
    return {"id": f.id, "symbol": f.symbol, "title": f.title, "status": f.status, "message": f.message,
            "fix": {"summary": f.fix_summary, "commands": list(f.fix_commands)} if f.fix_summary else None}


def to_dict(report: FleetReport) -> dict:
    outlier_of = {o.node: o for o in report.outliers}
    group_of = {name: g.id for g in report.groups for name in g.nodes}
    nodes = []
    for n in report.nodes:
        status = "failing" if not n.ok else ("outlier" if n.name in outlier_of else "ok")
        nodes.append({"node": n.name, "file": n.file, "status": status, "ok": n.ok, "group": group_of.get(n.name),
                      "stack": n.stack, "counts": n.counts, "scheduler": n.scheduler,
                      "flexdoctor_version": n.flexdoctor_version})
    majority = report.majority_group
    bundle = None
    if report.bundle is not None:
        b = report.bundle
        bundle = {
            "file": b.path, "fingerprint": b.fingerprint, "fingerprint_id": b.fingerprint_id,
            "configs": list(b.configs), "created_at": b.created_at, "ship": list(b.ship),
            "ship_refused": list(b.ship_refused),
            "nodes": {state: b.having(state) for state in ("warm", "import", "incompatible", "unknown")},
            "incompatible": [{"node": s.node, "differences": [{"field": f, "bundle": a, "node": c}
                                                            for f, a, c in s.differences]}
                             for s in b.nodes if s.state == "incompatible"],
        }
    return {
        "schema_version": FLEET_SCHEMA_VERSION,
        "kind": "flexdoctor-fleet",
        "flexdoctor_version": report.flexdoctor_version,
        "ok": report.ok,
        "exit_code": report.exit_code,
        "source": _english(report.source),
        "fields": list(report.fields),
        "ignored": list(report.ignored),
        "counts": report.counts(),
        "majority": None if majority is None else {"group": majority.id, "stack": majority.stack,
                                                   "count": len(majority.nodes), "tie": report.tie},
        "groups": [{"id": g.id, "stack": g.stack, "count": len(g.nodes), "nodes": list(g.nodes)}
                   for g in report.groups],
        "outliers": [{"node": o.node, "group": o.group,
                      "differences": [{"field": d.field, "expected": d.expected, "actual": d.actual}
                                      for d in o.differences]} for o in report.outliers],
        "failing": [{"node": n.name, "file": n.file, "findings": [_finding(f) for f in n.findings]}
                    for n in report.failing],
        "problems": [{"file": p.path, "kind": p.kind, "detail": str(p.detail), "node": p.node,
                      "excluded": p.excludes_node} for p in report.problems],
        "exclude": list(report.exclude),
        "bundle": bundle,
        "gather_error": _english(report.gather_error),
        "nodes": nodes,
    }


def render(report: FleetReport, **_: object) -> str:
    return for_json(json.dumps(to_dict(report), indent=2, sort_keys=True) + "\n")
