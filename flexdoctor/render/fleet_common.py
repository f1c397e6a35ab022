"""What the human fleet views (text, markdown, github) share: nodes with the same problem are
shown once, as a host list, so a report of 2,000 nodes stays a page long."""

from __future__ import annotations

import re
from typing import Optional

from ..fleet.hostlist import compress, natural_key
from ..fleet.model import FleetReport
from ..text import t, words


def label(field: str) -> str:
    return t(f"fleet.field.{field}")


def n(what: str, count: int) -> str:
    """``n("nodes", 1)`` -> "1 node": the catalogue's singular or plural (fleet.n.<what>_one/_other)."""
    return t(f"fleet.n.{what}_one" if count == 1 else f"fleet.n.{what}_other", count=count)


# Stack values that are words (fleet/stack.py): stable in the JSON, in the report's language here.
_VALUE_WORDS = {"none": "none", "not installed": "not_installed", "cold": "cold", "disabled": "disabled",
                "unreadable": "unreadable"}
_WARM = re.compile(r"warm (\S+) \((\d+) configs\)")
_STALE = re.compile(r"stale (\S+)")


def value(v: Optional[str]) -> str:
    """A stack value as the report shows it: versions and names as they are, words translated."""
    if v is None:
        return t("fleet.unknown")
    if v in _VALUE_WORDS:
        return t(f"fleet.value.{_VALUE_WORDS[v]}")
    warm, stale = _WARM.fullmatch(v), _STALE.fullmatch(v)
    if warm:
        return t("fleet.value.warm", id=warm.group(1), configs=n("configs", int(warm.group(2))))
    if stale:
        return t("fleet.value.stale", id=stale.group(1))
    return v


def differences(diffs) -> str:
    return "; ".join(t("fleet.difference", label=label(d.field), actual=value(d.actual),
                       expected=value(d.expected)) for d in diffs)


def outlier_groups(report: FleetReport) -> list:
    """[(hostlist, [Difference])]: outliers that differ in exactly the same way, together."""
    by: dict = {}
    for o in report.outliers:
        key = tuple((d.field, d.expected, d.actual) for d in o.differences)
        by.setdefault(key, ([], o.differences))[0].append(o.node)
    return sorted(((compress(names), diffs, len(names)) for names, diffs in by.values()),
                  key=lambda x: natural_key(x[0]))


def failing_groups(report: FleetReport) -> list:
    """[(hostlist, count, findings)]: failing nodes with the same findings, together."""
    by: dict = {}
    for n in report.failing:
        key = tuple((f.id, f.status, f.message) for f in n.findings)
        by.setdefault(key, ([], n.findings))[0].append(n.name)
    return sorted(((compress(names), len(names), findings) for names, findings in by.values()),
                  key=lambda x: natural_key(x[0]))


def headline(report: FleetReport) -> str:
    c = report.counts()
    if not c["nodes"]:
        return t("fleet.headline_empty")
    return t("fleet.headline", nodes=n("nodes", c["nodes"]), ok=n("ready", c["ok"]),
             outliers=n("differ", c["outliers"]), failing=n("failing", c["failing"]),
             problems=n("unusable", c["problems"]))


def majority_line(report: FleetReport) -> Optional[str]:
    g = report.majority_group
    if g is None:
        return None
    total = len(report.nodes)
    if report.tie:
        same = len([x for x in report.groups if len(x.nodes) == len(g.nodes)])
        return t("fleet.majority_tie", count=len(g.nodes), total=n("nodes", total), hosts=compress(g.nodes),
                 groups=same)
    return t("fleet.majority", count=len(g.nodes), total=n("nodes", total), hosts=compress(g.nodes))


def problem_line(p) -> str:
    detail = f" ({words(p.detail)})" if p.detail else ""
    line = t("fleet.problem_line", file=p.path, what=t(f"fleet.problem.{p.kind}"), detail=detail)
    if p.excludes_node:
        line += t("fleet.problem_node", node=p.node)
    return line


def bundle_lines(report: FleetReport) -> tuple:
    """(heading, [lines], [commands]) for the bundle section, or None."""
    b = report.bundle
    if b is None:
        return None
    heading = t("fleet.bundle.heading", file=b.path, id=b.fingerprint_id[:8], configs=n("configs", len(b.configs)),
                created=b.created_at or "?")
    fp = b.fingerprint
    what = ", ".join(f"{k} {fp[k]}" for k in ("gpu_name", "torch", "triton", "cuda", "hip") if fp.get(k))
    lines = [t("fleet.bundle.fingerprint", what=what or "?")]
    for state in ("warm", "import", "unknown"):
        names = b.having(state)
        if names:
            lines.append(t(f"fleet.bundle.{state}", nodes=n("nodes", len(names)), hosts=f": {compress(names)}"))
    bad = [s for s in b.nodes if s.state == "incompatible"]
    if bad:
        by: dict = {}
        for s in bad:
            key = "; ".join(f"{f} {a} -> {c}" for f, a, c in s.differences)
            by.setdefault(key, []).append(s.node)
        details = " | ".join(f"{compress(names)}: {key}" for key, names in by.items())
        lines.append(t("fleet.bundle.incompatible", nodes=n("nodes", len(bad)), details=details))
    if b.ship_refused:  # a report's cache dir would have stood in the command: say so, print none
        lines.append(t("fleet-ship.refused", nodes=n("nodes", len(b.ship_refused)), hosts=compress(b.ship_refused)))
    else:
        lines.append(t("fleet.bundle.ship", file=b.path) if b.ship else t("fleet.bundle.ship_none"))
    return heading, lines, list(b.ship)


def exclude_hint(path: str, empty: bool = False) -> str:
    """How to use the exclude file; srun reads a host list from a file only when it has a '/'."""
    import shlex

    if empty:
        return t("fleet.exclude_written_empty", path=shlex.quote(path))
    slurm = path if "/" in path else f"./{path}"
    return t("fleet.exclude_written", path=shlex.quote(path), slurm_path=shlex.quote(slurm))


def verdict(report: FleetReport) -> str:
    if report.ok:
        return t("fleet.verdict_ok_one" if len(report.nodes) == 1 else "fleet.verdict_ok", count=len(report.nodes))
    return t("fleet.verdict_fail")


FORMATS = {"text": "fleet_text", "json": "fleet_json", "markdown": "fleet_markdown", "github": "fleet_github"}


def renderer(fmt: str):
    """The ``render(report, **options) -> str`` of a fleet format (KeyError: no such format)."""
    import importlib

    return importlib.import_module(f"{__package__}.{FORMATS[fmt]}").render
