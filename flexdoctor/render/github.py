"""GitHub Actions: workflow-command annotations on stdout, Markdown appended to the step summary.

https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions
"""

from __future__ import annotations

import os
from typing import Optional

from ..model import Report, Status
from ..text import t
from . import markdown
from ._common import settings_lines, summary_line

LEVEL = {Status.WARN: "warning", Status.NOTE: "notice"}  # what does not fail the run (Report.fails)


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, title: str, message: str) -> str:
    return f"::{level} title={_prop(title)}::{_data(message)}"


def render(report: Report, step_summary: Optional[str] = None, **_: object) -> str:
    lines = []
    for r in report.results:
        level = "error" if report.fails(r) else LEVEL.get(r.status)
        if level is None:
            continue
        body = r.message
        if r.fix:
            body += f"\n{t('report.fix')}: " + r.fix.summary + "".join("\n  $ " + c for c in r.fix.commands)
        lines.append(annotation(level, f"{r.id} {r.symbol}: {r.title}", body))
    settings = settings_lines(report)
    lines += [annotation("notice", "settings", n.strip()) for n in settings[1:]] + settings[:1]
    lines.append(summary_line(report))
    path = step_summary if step_summary is not None else os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        append_step_summary(path, markdown.render(report))
    return "\n".join(lines) + "\n"


def append_step_summary(path: str, text: str) -> None:
    """Append (never overwrite): other steps write to the same summary file."""
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    except OSError:
        pass  # a summary we cannot write must not fail the preflight itself
