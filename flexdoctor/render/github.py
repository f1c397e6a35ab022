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
from ._escape import for_github_data, for_github_property, for_terminal, no_commands, register

LEVEL = {Status.WARN: "warning", Status.NOTE: "notice"}  # what does not fail the run (Report.fails)


def annotation(level: str, title: object, message: object) -> str:
    """One workflow command, ``::level title=...::message``. ``message`` is one field or a list of
    lines (flexdoctor's own line breaks); every field is outside text, escaped (render/_escape.py):
    it can neither end the command's line nor hold another command."""
    return f"::{level} title={for_github_property(title)}::{for_github_data(message)}"


def render(report: Report, step_summary: Optional[str] = None, **_: object) -> str:
    lines = []
    for r in report.results:
        level = "error" if report.fails(r) else LEVEL.get(r.status)
        if level is None:
            continue
        body = [r.message]
        if r.fix:
            body += [f"{t('report.fix')}: {for_terminal(r.fix.summary)}", *(f"  $ {c}" for c in r.fix.commands)]
        lines.append(annotation(level, f"{r.id} {r.symbol}: {r.title}", body))
    settings = settings_lines(report)
    lines += [annotation("notice", "settings", n.strip()) for n in settings[1:]]
    lines += [no_commands(line) for line in settings[:1]]
    lines.append(no_commands(summary_line(report)))
    path = step_summary if step_summary is not None else os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        append_step_summary(path, markdown.render(report))
    return "\n".join(lines) + "\n"


def append_step_summary(path: str, text: str) -> None:
    """Append (never overwrite): other steps write to the same summary file."""
    try:
        with open(path, "a", encoding="utf-8", errors=register()) as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    except OSError:
        pass  # a summary we cannot write must not fail the preflight itself
