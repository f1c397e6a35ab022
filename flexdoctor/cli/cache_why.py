"""The `cache why` command: run a command under the compile cache with torch's own cache tracing,
and say for every compiled graph whether it hit the cache, and if not, why."""

from __future__ import annotations

import os
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
from ._root import require_safe_command
from ._safety import guard_cache_dirs

# Everything after the first word of the command is the command's own: `-- CMD ARGS...`.
CONTEXT = {"allow_interspersed_args": False, "ignore_unknown_options": True}


def why(
    command: Annotated[Optional[List[str]], typer.Argument(metavar="-- CMD [ARGS]...",
                       help="The command to run, e.g. -- python train.py --max-steps 1 (one step is enough).")] = None,
    cache_dir: Annotated[Optional[Path], typer.Option("--cache-dir", metavar="DIR",
                         help="TORCHINDUCTOR_CACHE_DIR for the run (default: what torch would use, as "
                              "warm-cache does).")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="text (default) or json.")] = "text",
    output: OutputOpt = None,
    keep_trace: Annotated[Optional[Path], typer.Option("--keep-trace", metavar="DIR",
                          help="Keep torch's structured trace in DIR (for tlparse) instead of deleting it.")] = None,
    timeout: Annotated[Optional[float], typer.Option("--timeout", metavar="SECONDS",
                       help="Stop the command after this many seconds (default: no limit).")] = None,
) -> None:
    """Why did the first step still compile? Run CMD under the compile cache and tell, per compiled graph.

    Runs CMD with TORCHINDUCTOR_CACHE_DIR set like warm-cache and torch's structured trace on
    (TORCH_TRACE), which records every FX-graph and AOT-autograd cache lookup. For each graph
    torch compiled: hit, miss or bypass; for a miss, what in the cache key differs from the
    closest graph warm-cache warmed (torch/Triton/GPU, dtype, shapes, dynamic, compile mode,
    Inductor config, score_mod/mask_mod code); for a bypass, torch's own reason. Needs torch 2.5+.
    Exit codes: 0 every graph hit, 1 a miss, a bypass or a failed command, 2 usage error.

    Examples:

      flexdoctor cache why -- python train.py --max-steps 1

      flexdoctor cache why --cache-dir /data/inductor --format json -o why.json -- torchrun --nproc-per-node 2 train.py
    """
    from ..cache import locations
    from ..cache import why as why_mod
    from ..render import why_view
    from ..text import t

    argv = list(command or [])
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise _usage_error(t("why.error.no_command"))
    if fmt not in ("text", "json"):
        raise _usage_error(t("cli.error.format", value=fmt, choices="text, json"))
    if timeout is not None and timeout <= 0:
        raise _usage_error(t("cli.error.not_positive", flag="--timeout"))
    _check_output(output)
    env = dict(os.environ)
    if cache_dir is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.abspath(os.path.expanduser(str(cache_dir)))
    loc = locations.inductor(env)
    root, source = loc.path, ("--cache-dir" if cache_dir is not None else loc.source)
    # The command compiles into this cache and loads code from it: the same rule as warm-cache
    # (FD504's verdict, exit 2 when another user can write there; a missing dir is made 0700).
    guard_cache_dirs(root, env)
    require_safe_command(argv, env)  # as root: not a program (or Python) a non-root user can change
    if keep_trace is not None and keep_trace.exists() and not keep_trace.is_dir():
        raise _usage_error(t("cli.error.not_a_dir", what=f"--keep-trace {keep_trace}"))
    from ..render._escape import terminal_line

    typer.echo(terminal_line(t("why.running", command=shlex.join(argv), path=root)), err=True)
    # JSON on stdout must stay parseable: the command's own output goes to stderr then.
    to_stderr = sys.stderr.fileno() if fmt == "json" and output is None else None
    result = why_mod.run(argv, root, cache_source=source, timeout=timeout,
                         keep_trace=str(keep_trace) if keep_trace is not None else None, env=env, stdout=to_stderr)
    if not result.started:
        raise _usage_error(result.error or t("why.error.not_started"))  # not found, not executable
    _write(why_view.render(result, fmt=fmt, width=shutil.get_terminal_size((100, 24)).columns), output)
    raise typer.Exit(result.exit_code)
