"""GitHub Actions: one annotation per group of nodes that will break the job, the Markdown report
appended to the step summary (never overwritten: other steps write there too)."""

from __future__ import annotations

import os
from typing import Optional

from ..fleet.model import FleetReport
from ..text import t, words
from . import fleet_common as c
from . import fleet_markdown
from ._escape import no_commands
from .github import annotation, append_step_summary


def render(report: FleetReport, step_summary: Optional[str] = None, exclude_file: Optional[str] = None,
           **_: object) -> str:
    title = t("fleet.heading")
    lines = []
    if report.gather_error:
        lines.append(annotation("error", title, t("fleet.gather_error", error=words(report.gather_error))))
    for hosts, findings_count, findings in c.failing_groups(report):
        body = []  # lines: each a field from a node report, escaped by annotation()
        for f in findings:
            body.append(t("fleet.finding_line", id=f.id, symbol=f.symbol, message=f.message))
            body += [f"{t('report.fix')}: {f.fix_summary}"] if f.fix_summary else []
            body += [f"  $ {cmd}" for cmd in f.fix_commands]
        lines.append(annotation("error", f"{title}: {hosts}", body))
    for hosts, diffs, _n in c.outlier_groups(report):
        lines.append(annotation("error", f"{title}: {hosts}", c.differences(diffs)))
    for p in report.problems:
        level = "warning" if p.kind == "foreign" else "error"
        lines.append(annotation(level, f"{title}: {p.path}", c.problem_line(p)))
    lines.append(no_commands(c.headline(report)))
    path = step_summary if step_summary is not None else os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        append_step_summary(path, fleet_markdown.render(report, exclude_file=exclude_file))
    return "\n".join(lines) + "\n"
