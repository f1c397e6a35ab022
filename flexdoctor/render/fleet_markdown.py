"""The fleet report in Markdown: for a PR comment, a wiki page or the GitHub step summary."""

from __future__ import annotations

from typing import Optional

from ..fleet.hostlist import compress
from ..fleet.model import FleetReport
from ..text import t, words
from . import fleet_common as c


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(report: FleetReport, exclude_file: Optional[str] = None, **_: object) -> str:
    lines = [f"## {t('fleet.heading')} {report.flexdoctor_version}", "", f"**{c.headline(report)}**", ""]
    if report.ignored:
        lines += [t("fleet.ignored", fields=", ".join(f"`{x}`" for x in report.ignored)), ""]
    if report.gather_error:
        lines += [f"**{t('fleet.gather_error', error=words(report.gather_error))}**", ""]
    majority = c.majority_line(report)
    if majority:
        g = report.majority_group
        lines += [f"### {_cell(majority)}", "", "| | |", "|---|---|"]
        lines += [f"| {c.label(f)} | {_cell(c.value(g.stack.get(f)))} |" for f in report.fields]
        lines.append("")
    if report.outliers:
        lines += [f"### {t('fleet.outliers')}", "", "| nodes | " + " | ".join(["what differs"]) + " |", "|---|---|"]
        for hosts, diffs, _n in c.outlier_groups(report):
            lines.append(f"| `{hosts}` | {_cell(c.differences(diffs))} |")
        lines.append("")
    if report.failing:
        lines += [f"### {t('fleet.failing')}", ""]
        for hosts, _n, findings in c.failing_groups(report):
            lines.append(f"- `{hosts}`")
            for f in findings:
                lines.append(f"  - **{f.id} {f.symbol}**: {_cell(f.message)}")
                if f.fix_summary:
                    lines.append(f"    {_cell(f.fix_summary)}")
                if f.fix_commands:
                    lines += ["", "    ```bash", *("    " + cmd for cmd in f.fix_commands), "    ```", ""]
        lines.append("")
    node_problems = [p for p in report.problems if p.kind != "foreign"]
    if node_problems:
        lines += [f"### {t('fleet.problems')}", ""] + [f"- {_cell(c.problem_line(p))}" for p in node_problems]
        lines.append("")
    foreign = [p for p in report.problems if p.kind == "foreign"]
    if foreign:
        lines += [f"### {t('fleet.foreign')}", ""] + [f"- {_cell(c.problem_line(p))}" for p in foreign]
        lines.append("")
    bundle = c.bundle_lines(report)
    if bundle:
        heading, texts, commands = bundle
        lines += [f"### {_cell(heading)}", ""] + [f"- {_cell(x)}" for x in texts]
        if commands:
            lines += ["", "```bash", *commands, "```"]
        lines.append("")
    if report.exclude:
        lines.append(f"**{t('fleet.exclude', count=len(report.exclude), hosts='`' + compress(report.exclude) + '`')}**")
    elif report.nodes:
        lines.append(t("fleet.exclude_none"))
    if exclude_file:
        lines += ["", c.exclude_hint(exclude_file, empty=not report.exclude)]
    lines += ["", c.verdict(report)]
    return "\n".join(lines).rstrip() + "\n"
