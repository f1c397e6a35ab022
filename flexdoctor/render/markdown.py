"""Markdown for bug reports and PR comments."""

from __future__ import annotations

from ..model import Report
from ..text import t
from ._common import ICONS, WITH_FIX, grouped, settings_lines, summary_line


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(report: Report, **_: object) -> str:
    lines = [f"## flexdoctor {report.flexdoctor_version}", "", summary_line(report), ""]
    settings = settings_lines(report)
    if settings:
        lines += [settings[0], *("- " + n.strip() for n in settings[1:]), ""]
    for area, results in grouped(report):
        lines += [f"### {t(f'area.{area}')}", "", f"| | ID | {t('markdown.check')} | {t('markdown.result')} |", "|---|---|---|---|"]
        for r in results:
            lines.append(f"| {ICONS[r.status]} | {r.id} | {_cell(r.title)} | {_cell(r.message)} |")
        lines.append("")
        for r in results:
            if r.fix and r.status in WITH_FIX:
                lines.append(f"**{r.id} {r.symbol}**: {r.fix.summary}")
                if r.fix.commands:
                    lines += ["", "```bash", *r.fix.commands, "```"]
                lines.append("")
    return "\n".join(lines).rstrip() + "\n"
