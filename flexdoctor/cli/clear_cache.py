"""The ``clear-cache`` command: parse, plan (cache/clear.py), show (render/clear_view.py), ask,
delete, choose the exit code. 0: cleared or nothing to clear; 1: something refused or not
deleted, or the user said no; 2: usage error."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer
from typing_extensions import Annotated

from ..cliutil import usage_error as _usage_error



# --------------------------------------------------------------------------- clear-cache

def clear_cache(
    inductor: Annotated[bool, typer.Option("--inductor", help="Inductor's cache (TORCHINDUCTOR_CACHE_DIR or "
                        "<tmp>/torchinductor_<user>), with flexdoctor's manifest.")] = False,
    triton: Annotated[bool, typer.Option("--triton", help="Triton's own cache (TRITON_CACHE_DIR or "
                      "~/.triton/cache).")] = False,
    aten: Annotated[bool, typer.Option("--aten", help="ATen's NVRTC/jiterator kernel cache "
                    "(PYTORCH_KERNEL_CACHE_PATH or ~/.cache/torch/kernels); unrelated to flex.")] = False,
    manifest_only: Annotated[bool, typer.Option("--manifest", help="Only flexdoctor's manifest.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="List exactly what --yes would delete, "
                       "and what it keeps; delete nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (needed when not interactive).")] = False,
    cache_dir: Annotated[Optional[str], typer.Option("--cache-dir", metavar="DIR",
                         help="The Inductor cache dir to clear (default: TORCHINDUCTOR_CACHE_DIR or "
                              "torch's default).")] = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour (also: NO_COLOR=1).")] = False,
) -> None:
    """Delete compile caches safely: only what torch, Inductor, Triton and ATen wrote.

    Each entry is identified by its name and its content, as the code that writes it names and
    fills it; hidden files, unknown names, symbolic links and folders holding anything else
    are kept and listed. Shows what and how much first, asks, reports bytes freed.
    Default: all of them (Inductor with flexdoctor's manifest, Triton, ATen kernels).
    Refuses /, your home and system directories; will not run while a warm-cache is using
    the cache. Exit 0: cleared or nothing to clear; 1: something refused or not deleted;
    2: usage error.

    Examples:

      flexdoctor clear-cache --dry-run

      flexdoctor clear-cache --inductor --yes
    """
    from ..cache import clear
    from ..render import clear_view as view
    from ..render._escape import terminal_line
    from ..text import t

    env = dict(os.environ)
    if cache_dir is not None:
        if not cache_dir.strip():
            raise _usage_error(t("clear.cache_dir_empty"))
        named = os.path.abspath(os.path.expanduser(cache_dir))
        if not os.path.isdir(named):  # a typo must not read as "nothing to delete"
            raise _usage_error(t("clear.cache_dir_missing", path=cache_dir))
    kinds = [k for k, on in (("inductor", inductor), ("triton", triton), ("aten", aten),
                             ("manifest", manifest_only)) if on] or list(clear.KINDS)
    plan = clear.plan(kinds, env, cache_dir=named if cache_dir is not None else None)
    refused = 1 if plan.refused else 0
    for line in view.plan_lines(plan, dry_run):
        typer.echo(terminal_line(line))
    if dry_run or not plan.count:
        raise typer.Exit(refused)
    if not yes:
        if not sys.stdin.isatty():
            raise _usage_error(t("clear.not_interactive"))
        if not typer.confirm(view.prompt(plan), default=False):
            typer.echo(t("clear.declined"))
            raise typer.Exit(1)
    try:
        outcome = clear.execute(plan)
    except clear.Refused as exc:
        typer.echo(terminal_line(t("cli.usage_error", message=view.holder(exc.holder, plan.lock_root))), err=True)
        raise typer.Exit(1)
    for line in view.outcome_lines(outcome):
        typer.echo(terminal_line(line))
    raise typer.Exit(1 if (outcome.errors or refused) else 0)


def register(app: typer.Typer) -> None:
    app.command("warm-cache")(warm_cache)
    app.command("clear-cache")(clear_cache)
