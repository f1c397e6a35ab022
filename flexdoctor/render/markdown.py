"""Markdown for bug reports, PR comments and the GitHub step summary. Every field is outside text
to Markdown (render/_escape.py): HTML and Markdown punctuation escaped, commands in a fence
that no line can close."""

from __future__ import annotations

from ..model import Report
from ..text import t
from ._common import WITH_FIX, grouped, icons, settings_lines, summary_line
from ._escape import code_block, for_markdown, no_commands


def _cell(text: object) -> str:
    return for_markdown(text, table=True)


def render(report: Report, **_: object) -> str:
    marks = icons()
    lines = [f"## flexdoctor {for_markdown(report.flexdoctor_version)}", "", summary_line(report), ""]
    settings = settings_lines(report)
    if settings:
        lines += [for_markdown(settings[0]), *("- " + for_markdown(n.strip()) for n in settings[1:]), ""]
    for area, results in grouped(report):
        lines += [f"### {t(f'area.{area}')}", "", f"| | ID | {t('markdown.check')} | {t('markdown.result')} |", "|---|---|---|---|"]
        for r in results:
            lines.append(f"| {marks[r.status]} | {_cell(r.id)} | {_cell(r.title)} | {_cell(r.message)} |")
        lines.append("")
        for r in results:
            if r.fix and r.status in WITH_FIX:
                lines.append(f"**{for_markdown(r.id)} {for_markdown(r.symbol)}**: {for_markdown(r.fix.summary)}")
                if r.fix.commands:
                    lines += ["", *code_block(r.fix.commands)]
                lines.append("")
    return no_commands("\n".join(lines).rstrip() + "\n")
