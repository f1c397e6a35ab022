"""The `cache why` command: run a command under the compile cache with torch's own cache tracing,
and say for every compiled graph whether it hit the cache, and if not, why."""

from __future__ import annotations

import shlex
import shutil
import sys
from typing import List, Optional

import typer
from typing_extensions import Annotated

from ..cliutil import usage_error as _usage_error
from ..cliutil import write as _write
from ._common import OutputOpt
from ._step import CONTEXT, CacheDirOpt, FormatOpt, KeepTraceOpt, TimeoutOpt, prepare


def why(
    command: Annotated[Optional[List[str]], typer.Argument(metavar="-- CMD [ARGS]...",
                       help="The command to run, e.g. -- python train.py --max-steps 1 (one step is enough).")] = None,
    cache_dir: CacheDirOpt = None,
    fmt: FormatOpt = "text",
    output: OutputOpt = None,
    keep_trace: KeepTraceOpt = None,
    timeout: TimeoutOpt = None,
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
    from ..cache import why as why_mod
    from ..render import why_view
    from ..text import t

    argv = list(command or [])
    if argv and argv[0] == "--":
        argv = argv[1:]
    env, root, source = prepare(argv, "why.error.no_command", fmt, timeout, output, cache_dir, keep_trace)
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
