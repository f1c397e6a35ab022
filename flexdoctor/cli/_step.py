"""What `trace` and `cache why` share: both run the user's own step under the compile cache with
torch's structured trace, so they take the same options and check them the same way."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from typing_extensions import Annotated

from ..cliutil import check_output, usage_error
from ._root import require_safe_command
from ._safety import guard_cache_dirs

# Everything after the first word of the command is the command's own: `-- CMD ARGS...`.
CONTEXT = {"allow_interspersed_args": False, "ignore_unknown_options": True}

CacheDirOpt = Annotated[Optional[Path], typer.Option("--cache-dir", metavar="DIR",
                        help="TORCHINDUCTOR_CACHE_DIR for the run (default: what torch would use, as "
                             "warm-cache does).")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="text (default) or json.")]
KeepTraceOpt = Annotated[Optional[Path], typer.Option("--keep-trace", metavar="DIR",
                         help="Keep torch's structured trace in DIR (for tlparse) instead of deleting it.")]
TimeoutOpt = Annotated[Optional[float], typer.Option("--timeout", metavar="SECONDS",
                       help="Stop the command after this many seconds (default: no limit).")]


def prepare(argv: list, no_command: str, fmt: str, timeout: Optional[float], output: Optional[Path],
            cache_dir: Optional[Path], keep_trace: Optional[Path]) -> tuple:
    """(environment, cache dir, where it came from) for running ``argv``, after every check the two
    commands share; a usage error (exit 2) otherwise. ``no_command``: the message key when argv is empty."""
    from ..cache import locations
    from ..text import t

    if not argv:
        raise usage_error(t(no_command))
    if fmt not in ("text", "json"):
        raise usage_error(t("cli.error.format", value=fmt, choices="text, json"))
    if timeout is not None and timeout <= 0:
        raise usage_error(t("cli.error.not_positive", flag="--timeout"))
    check_output(output)
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
        raise usage_error(t("cli.error.not_a_dir", what=f"--keep-trace {keep_trace}"))
    return env, root, source
