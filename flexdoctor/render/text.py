"""The human report: grouped by area, ✓ / ! / ✗ per check, finding and fix under each problem."""

from __future__ import annotations

import io
from typing import Optional

from ..model import Report, Result, Status
from ..text import t
from ._common import WITH_FIX, grouped, icons, settings_lines, summary_line, wrap_rich
from ._common import console as make_console
from ._escape import for_terminal, no_commands

STYLES = {
    Status.PASS: "green",
    Status.NOTE: "cyan",
    Status.WARN: "yellow",
    Status.FAIL: "bold red",
    Status.SKIP: "dim",
    Status.ERROR: "bold magenta",
}
PROBLEMS = (Status.FAIL, Status.WARN, Status.ERROR)


def _body(r: Result, verbose: bool):
    """The right-hand cell of a result: wraps under itself, so long messages stay readable.
    Every field is one line of visible text (render/_escape.py): the line breaks are ours."""
    from rich.text import Text

    problem = r.status in PROBLEMS
    body = Text()
    body.append(for_terminal(r.title), style="bold" if r.status in (Status.FAIL, Status.ERROR) else "")
    body.append(": ")
    body.append(for_terminal(r.message), style="dim" if r.status == Status.SKIP else "")
    if r.details and (verbose or problem):
        for d in r.details:
            body.append("\n  " + for_terminal(d), style="dim")
    if r.fix and r.status in WITH_FIX:
        body.append("\n→ ", style=STYLES[r.status])
        body.append(for_terminal(r.fix.summary))
    return body


def _commands(r: Result, verbose: bool):
    """Fix commands, one logical line each: never wrapped, so they copy-paste intact."""
    from rich.text import Text

    if not r.fix or r.status not in WITH_FIX:
        return
    for cmd in r.fix.commands:
        yield Text(f"            $ {for_terminal(cmd)}", style="cyan")
    if r.fix.kb and verbose:
        yield Text("            " + t("report.kb", kb=for_terminal(r.fix.kb)), style="dim")


def _timings(timings: object) -> str:
    """``name 1.23s, ...``; a recorded facts file may hold anything here."""
    items = timings.items() if isinstance(timings, dict) else ()
    return ", ".join(f"{for_terminal(k)} {v:.2f}s" if isinstance(v, (int, float)) and not isinstance(v, bool)
                     else f"{for_terminal(k)} —" for k, v in items)


def render(report: Report, verbose: bool = False, width: Optional[int] = None, color: bool = False,
           quiet: bool = False, show_skips: bool = False, **_: object) -> str:
    from rich.table import Table
    from rich.text import Text

    buf = io.StringIO()
    width = width or 100
    marks = icons()
    mark_width = max(len(m) for m in marks.values())
    console = make_console(file=buf, width=width, force_terminal=color, no_color=not color,
                      highlight=False, emoji=False)
    for i, line in enumerate(settings_lines(report)):  # which settings file judged this report
        console.print(Text(line, style="dim" if i == 0 else "yellow"), soft_wrap=True)
    for area, results in grouped(report):
        # Skips are noise in a full report, but not when the user asked for these checks by name.
        shown = [r for r in results if verbose or show_skips or r.status != Status.SKIP]
        if quiet:
            shown = [r for r in shown if r.status in PROBLEMS]
        if not shown:
            continue
        console.print(Text(t(f"area.{area}"), style="bold underline"))
        for r in shown:
            grid = Table.grid(padding=(0, 1))
            grid.add_column(width=max(3, mark_width), justify="right", no_wrap=True)
            grid.add_column(width=5, no_wrap=True)
            grid.add_column(ratio=1, overflow="fold")
            # The body column starts after "  ✓ FD101 " (3 + 1 + 5 + 1 cells); wrapped by cells here,
            # because rich breaks only at spaces and Japanese has none between words.
            grid.add_row(Text(marks[r.status], style=STYLES[r.status]), Text(for_terminal(r.id), style="dim"),
                         wrap_rich(_body(r, verbose), width - 7 - max(3, mark_width)))
            console.print(grid)
            for line in _commands(r, verbose):
                console.print(line, soft_wrap=True)
        console.print()
    if verbose and report.facts.timings:
        console.print(Text(f"{t('report.timings')}: {_timings(report.facts.timings)}", style="dim"))
    console.print(Text(summary_line(report), style="bold red" if report.failed else "bold green"))
    if not quiet:
        if not report.failed:
            verdict = t("report.verdict_ok")
        elif any(r.status in (Status.FAIL, Status.ERROR) for r in report.results):
            verdict = t("report.verdict_fail")
        else:
            verdict = t("report.verdict_strict")
        console.print(Text(verdict))
        console.print(Text(t("report.facts_hint"), style="dim"))
    # Grid cells pad to the full width; trailing blanks only hurt copy-paste and diffs.
    return no_commands("\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n")
