"""The fleet report in Markdown: for a PR comment, a wiki page or the GitHub step summary."""

from __future__ import annotations

from typing import Optional

from ..fleet.hostlist import compress
from ..fleet.model import FleetReport
from ..text import t, words
from . import fleet_common as c
from ._escape import code_block, code_span, for_markdown, no_commands

# Node names, paths, stack values and findings come from node reports: outside text, escaped
# (render/_escape.py); commands in a fence no line can close.
_cell = for_markdown


def _td(text: object) -> str:
    return for_markdown(text, table=True)


def render(report: FleetReport, exclude_file: Optional[str] = None, **_: object) -> str:
    lines = [f"## {t('fleet.heading')} {_cell(report.flexdoctor_version)}", "", f"**{_cell(c.headline(report))}**", ""]
    if report.ignored:
        lines += [t("fleet.ignored", fields=", ".join(code_span(x) for x in report.ignored)), ""]
    if report.gather_error:
        lines += [f"**{_cell(t('fleet.gather_error', error=words(report.gather_error)))}**", ""]
    majority = c.majority_line(report)
    if majority:
        g = report.majority_group
        lines += [f"### {_cell(majority)}", "", "| | |", "|---|---|"]
        lines += [f"| {_td(c.label(f))} | {_td(c.value(g.stack.get(f)))} |" for f in report.fields]
        lines.append("")
    if report.outliers:
        lines += [f"### {t('fleet.outliers')}", "", "| nodes | " + " | ".join(["what differs"]) + " |", "|---|---|"]
        for hosts, diffs, _n in c.outlier_groups(report):
            lines.append(f"| {code_span(hosts, table=True)} | {_td(c.differences(diffs))} |")
        lines.append("")
    if report.failing:
        lines += [f"### {t('fleet.failing')}", ""]
        for hosts, _n, findings in c.failing_groups(report):
            lines.append(f"- {code_span(hosts)}")
            for f in findings:
                lines.append(f"  - **{_cell(f.id)} {_cell(f.symbol)}**: {_cell(f.message)}")
                if f.fix_summary:
                    lines.append(f"    {_cell(f.fix_summary)}")
                if f.fix_commands:
                    lines += ["", *code_block(f.fix_commands, indent="    "), ""]
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
            lines += ["", *code_block(commands)]
        lines.append("")
    if report.exclude:
        lines.append(f"**{t('fleet.exclude', count=len(report.exclude), hosts=code_span(compress(report.exclude)))}**")
    elif report.nodes:
        lines.append(t("fleet.exclude_none"))
    if exclude_file:
        lines += ["", _cell(c.exclude_hint(exclude_file, empty=not report.exclude))]
    lines += ["", _cell(c.verdict(report))]
    return no_commands("\n".join(lines).rstrip() + "\n")
