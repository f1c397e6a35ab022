"""The human report: grouped by area, ✓ / ! / ✗ per check, finding and fix under each problem."""

from __future__ import annotations

import io
from typing import Optional

from ..model import Report, Result, Status
from ..text import t
from ._common import ICONS, grouped, summary_line

STYLES = {
    Status.PASS: "green",
    Status.WARN: "yellow",
    Status.FAIL: "bold red",
    Status.SKIP: "dim",
    Status.ERROR: "bold magenta",
}


def _result_lines(r: Result, verbose: bool):
    from rich.text import Text

    style = STYLES[r.status]
    line = Text("  ")
    line.append(ICONS[r.status], style=style)
    line.append(f" {r.id} ", style="dim")
    line.append(r.title, style="bold" if r.status in (Status.FAIL, Status.ERROR) else "")
    line.append(": ")
    line.append(r.message, style="dim" if r.status == Status.SKIP else "")
    yield line
    problem = r.status in (Status.FAIL, Status.WARN, Status.ERROR)
    if r.details and (verbose or problem):
        for d in r.details:
            yield Text(f"      {d}", style="dim")
    if r.fix and problem:
        fix = Text("      → ", style=style)
        fix.append(r.fix.summary)
        yield fix
        for cmd in r.fix.commands:
            yield Text(f"        $ {cmd}", style="cyan")
        if r.fix.kb and verbose:
            yield Text("        " + t("report.kb", kb=r.fix.kb), style="dim")


def render(report: Report, verbose: bool = False, width: Optional[int] = None, color: bool = False,
           quiet: bool = False, **_: object) -> str:
    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(file=buf, width=width or 100, force_terminal=color, no_color=not color,
                      highlight=False, emoji=False, soft_wrap=False)
    for area, results in grouped(report):
        shown = [r for r in results if verbose or r.status != Status.SKIP]
        if quiet:
            shown = [r for r in shown if r.status in (Status.FAIL, Status.WARN, Status.ERROR)]
        if not shown:
            continue
        console.print(Text(t(f"area.{area}"), style="bold underline"))
        for r in shown:
            for line in _result_lines(r, verbose):
                console.print(line)
        console.print()
    if verbose and report.facts.timings:
        timings = ", ".join(f"{k} {v:.2f}s" if v is not None else f"{k} —"
                            for k, v in report.facts.timings.items())
        console.print(Text(f"{t('report.timings')}: {timings}", style="dim"))
    summary = Text(summary_line(report), style="bold red" if report.failed else "bold green")
    console.print(summary)
    if not quiet:
        console.print(Text(t("report.verdict_fail") if report.failed else t("report.verdict_ok")))
        console.print(Text(t("report.facts_hint"), style="dim"))
    return buf.getvalue()
