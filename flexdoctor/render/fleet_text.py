"""The fleet report for a terminal: the majority stack, then every node that will break the job."""

from __future__ import annotations

import io
from typing import Optional

from ..fleet.hostlist import compress
from ..fleet.model import FleetReport
from ..text import t, words
from . import fleet_common as c
from ._common import console as make_console
from ._escape import for_terminal, no_commands


def render(report: FleetReport, width: Optional[int] = None, color: bool = False, verbose: bool = False,
           exclude_file: Optional[str] = None, **_: object) -> str:
    from rich.cells import cell_len
    from rich.padding import Padding
    from rich.text import Text

    buf = io.StringIO()
    con = make_console(file=buf, width=width or 100, force_terminal=color, no_color=not color, highlight=False,
                       emoji=False, soft_wrap=False)

    def line(text: str, style: str = "", indent: int = 0) -> None:
        # Wrapped lines stay under their first word: long outlier lists remain readable. Node
        # names, paths and findings come from node reports: one visible line (render/_escape.py).
        con.print(Padding(Text(for_terminal(text), style=style), (0, 0, 0, indent)))

    def command(cmd: str, indent: int) -> None:  # never wrapped: copy-paste must work
        con.print(Text(" " * indent + "$ " + for_terminal(cmd), style="cyan"), soft_wrap=True)

    head = t("fleet.heading") + (f" ({t('fleet.source', source=words(report.source))})" if report.source else "")
    line(head, "bold")
    line(c.headline(report), "bold red" if not report.ok else "bold green")
    if report.ignored:
        line(t("fleet.ignored", fields=", ".join(report.ignored)), "dim")
    if report.gather_error:
        line(t("fleet.gather_error", error=words(report.gather_error)), "bold red")
    con.print()

    majority = c.majority_line(report)
    if majority:
        line(majority, "bold underline")
        g = report.majority_group
        for field in report.fields:
            label = c.label(field)  # padded by display cells: CJK labels are two cells a character
            line(label + " " * max(1, 21 - cell_len(label)) + c.value(g.stack.get(field)), indent=2)
        if verbose and len(report.groups) > 1:
            line(t("fleet.groups", count=len(report.groups)), "dim", indent=2)
            for other in report.groups:
                line(t("fleet.group_line", id=other.id, nodes=c.n("nodes", len(other.nodes)),
                       hosts=compress(other.nodes)), "dim", indent=4)
        con.print()

    if report.outliers:
        line(t("fleet.outliers"), "bold underline")
        for hosts, diffs, _count in c.outlier_groups(report):
            line("! " + t("fleet.outlier_line", node=hosts, differences=c.differences(diffs)), "yellow", indent=2)
        con.print()

    if report.failing:
        line(t("fleet.failing"), "bold underline")
        for hosts, _count, findings in c.failing_groups(report):
            line("✗ " + t("fleet.failing_line", node=hosts, count=len(findings)), "bold red", indent=2)
            for f in findings:
                line(t("fleet.finding_line", id=f.id, symbol=f.symbol, message=f.message), indent=6)
                if f.fix_summary:
                    line("→ " + f.fix_summary, indent=8)
                for cmd in f.fix_commands:
                    command(cmd, 10)
        con.print()

    node_problems = [p for p in report.problems if p.kind != "foreign"]
    if node_problems:
        line(t("fleet.problems"), "bold underline")
        for p in node_problems:
            line("✗ " + c.problem_line(p), "red", indent=2)
        con.print()
    foreign = [p for p in report.problems if p.kind == "foreign"]
    if foreign:
        line(t("fleet.foreign"), "dim")
        for p in foreign:
            line("- " + c.problem_line(p), "dim", indent=2)
        con.print()

    bundle = c.bundle_lines(report)
    if bundle:
        heading, lines, commands = bundle
        line(heading, "bold underline")
        for text in lines:
            line(text, indent=2)
        for cmd in commands:
            command(cmd, 4)
        con.print()

    if report.exclude:
        line(t("fleet.exclude", count=len(report.exclude), hosts=compress(report.exclude)), "bold")
    elif report.nodes:
        line(t("fleet.exclude_none"))
    if exclude_file:
        line(c.exclude_hint(exclude_file, empty=not report.exclude), "dim")
    line(c.verdict(report), "bold red" if not report.ok else "bold green")
    return no_commands("\n".join(x.rstrip() for x in buf.getvalue().splitlines()) + "\n")
