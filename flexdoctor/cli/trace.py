"""The `trace` command: run the user's own step timed phase by phase and per rank, with torch's
structured trace; say where the time went, what went wrong silently and what to change."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from ..cliutil import check_output as _check_output
from ..cliutil import usage_error as _usage_error
from ..cliutil import write as _write
from ._common import OutputOpt
from ._step import CONTEXT, CacheDirOpt, FormatOpt, KeepTraceOpt, TimeoutOpt, prepare


def command_argv(command: Optional[List[str]]) -> list:
    """The command after ``--``; one quoted string (``trace "python train.py"``) is split the way a
    shell splits words, without a shell."""
    argv = list(command or [])
    if argv and argv[0] == "--":
        argv = argv[1:]
    if len(argv) == 1 and any(c.isspace() for c in argv[0]):
        try:
            argv = shlex.split(argv[0])
        except ValueError:
            pass
    return argv


def trace(
    command: Annotated[Optional[List[str]], typer.Argument(metavar="-- CMD [ARGS]...",
                       help="Your step, e.g. -- python train.py --max-steps 20, or -- torchrun --nproc-per-node 8 "
                            "train.py.")] = None,
    cache_dir: CacheDirOpt = None,
    fmt: FormatOpt = "text",
    output: OutputOpt = None,
    timeline: Annotated[Optional[Path], typer.Option("--timeline", metavar="FILE",
                        help="Also write the time line as one self-contained HTML file.")] = None,
    measure: Annotated[bool, typer.Option("--measure", help="Run the command again with each advised setting "
                                          "(e.g. TORCHINDUCTOR_COMPILE_THREADS=1) and report both wall times.")] = False,
    keep_trace: KeepTraceOpt = None,
    timeout: TimeoutOpt = None,
) -> None:
    """Where did the time go? Run CMD timed phase by phase, per process and per rank.

    Runs CMD (your own step; under torchrun too) with torch's structured trace (TORCH_TRACE) and a
    timing bootstrap that only records times, and splits each process's wall time into phases:
    interpreter start, import torch, Dynamo/Inductor import, the compile-worker pool, Dynamo
    tracing, cache lookups (hit, miss, bypass and why: the section `flexdoctor cache why` prints),
    compiling, kernel loading, first forward, first backward, later steps and exit. Then what went
    wrong silently (flex_attention running uncompiled, recompiles and the recompile limit, graph
    breaks, cache misses) and what to change.
    Exit codes: 0 nothing went wrong, 1 a finding or the command failed, 2 usage error.

    Examples:

      flexdoctor trace -- python train.py --max-steps 20

      flexdoctor trace --measure --timeline trace.html -- torchrun --standalone --nproc-per-node 8 train.py
    """
    from ..render import trace_timeline, trace_view
    from ..render._escape import terminal_line
    from ..text import t
    from ..trace import run as trace_run

    argv = command_argv(command)
    env, root, source = prepare(argv, "trace.error.no_command", fmt, timeout, output, cache_dir, keep_trace)
    if timeline is not None:
        _check_output(timeline)
    typer.echo(terminal_line(t("trace.running", command=trace_view.command_line(argv), path=root)), err=True)
    to_stderr = sys.stderr.fileno() if fmt == "json" and output is None else None  # JSON on stdout stays parseable
    result = trace_run(argv, root, cache_source=source, env=env, timeout=timeout, stdout=to_stderr,
                       keep_trace=str(keep_trace) if keep_trace is not None else None, measure_advice=measure)
    m = result.measurement
    if not m.started:  # not found, not executable: a usage error, as `cache why` says it
        raise _usage_error(t("trace.error.not_started", error=m.start_error or "?"))
    if timeline is not None:
        _write(trace_timeline.render(result), timeline)
    width = shutil.get_terminal_size((100, 24)).columns
    _write(trace_view.render(result, fmt=fmt, width=width, timeline=str(timeline) if timeline else None), output)
    raise typer.Exit(result.exit_code)
