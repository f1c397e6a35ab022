"""The ``clear-cache`` command: delete compile caches safely (show, ask, report bytes freed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer
from typing_extensions import Annotated

from ..cliutil import usage_error as _usage_error
from ._common import _console, _size


def clear_cache(
    inductor: Annotated[bool, typer.Option("--inductor", help="Inductor's cache (TORCHINDUCTOR_CACHE_DIR or "
                        "<tmp>/torchinductor_<user>), with flexdoctor's manifest.")] = False,
    triton: Annotated[bool, typer.Option("--triton", help="Triton's own cache (TRITON_CACHE_DIR or "
                      "~/.triton/cache).")] = False,
    aten: Annotated[bool, typer.Option("--aten", help="ATen's NVRTC/jiterator kernel cache "
                    "(PYTORCH_KERNEL_CACHE_PATH or ~/.cache/torch/kernels); unrelated to flex.")] = False,
    manifest_only: Annotated[bool, typer.Option("--manifest", help="Only flexdoctor's manifest.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Show what would be deleted; delete nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask (needed when not interactive).")] = False,
    cache_dir: Annotated[Optional[Path], typer.Option("--cache-dir", metavar="DIR",
                         help="The Inductor cache dir to clear (default: TORCHINDUCTOR_CACHE_DIR or torch's default).")] = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour (also: NO_COLOR=1).")] = False,
) -> None:
    """Delete compile caches safely: shows what and how much first, asks, reports bytes freed.

    Default: all of them (Inductor with flexdoctor's manifest, Triton, ATen kernels).
    Refuses /, your home, and anything that does not look like the cache it claims to be; never
    follows symlinks out of a cache; will not run while a warm-cache is using the cache.

    Examples:

      flexdoctor clear-cache --dry-run

      flexdoctor clear-cache --inductor --yes
    """
    from rich.table import Table

    from ..cache import clear, locations

    if cache_dir is not None:
        named = os.path.abspath(os.path.expanduser(str(cache_dir)))
        if not os.path.isdir(named):  # a typo must not read as "nothing to delete"
            raise _usage_error(f"--cache-dir {cache_dir}: no such directory")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = named
    kinds = [k for k, on in (("inductor", inductor), ("triton", triton), ("aten", aten),
                             ("manifest", manifest_only)) if on]
    if not kinds:
        kinds = ["inductor", "triton", "aten", "manifest"]
    targets = clear.plan(kinds)
    console = _console(no_color=no_color)
    table = Table(title="flexdoctor clear-cache" + (" (dry run)" if dry_run else ""), title_justify="left")
    for col in ("cache", "path", "set by", "entries", "size", "note"):
        table.add_column(col, justify="right" if col in ("entries", "size") else "left")
    for t in targets:
        note = t.refused and f"refused: {t.refused}" or t.note or ("" if t.items else "nothing to delete")
        table.add_row(t.kind, t.path, t.source, str(len(t.items)), _size(t.bytes), note)
    console.print(table)
    total = sum(t.bytes for t in targets if not t.refused)
    count = sum(len(t.items) for t in targets if not t.refused)
    refused = [t for t in targets if t.refused]
    if count == 0:
        console.print("nothing to delete")
        raise typer.Exit(1 if refused else 0)
    if dry_run:
        console.print(f"would free {_size(total)} in {count} entries (dry run: nothing deleted)")
        raise typer.Exit(1 if refused else 0)
    if not yes:
        if not sys.stdin.isatty():
            raise _usage_error("refusing to delete without --yes when not interactive")
        if not typer.confirm(f"Delete {count} entries ({_size(total)})?", default=False):
            console.print("nothing deleted")
            raise typer.Exit(1)
    root = locations.inductor().path
    try:
        with clear.exclusive(root):
            result = clear.delete(targets)
    except clear.Refused as exc:
        typer.echo(f"flexdoctor: error: {exc}", err=True)
        raise typer.Exit(1)
    console.print(f"freed {_size(result.freed)} ({result.freed} bytes) in {result.deleted} entries")
    for e in result.errors[:10]:
        console.print(f"  could not delete {e}", markup=False)
    if len(result.errors) > 10:
        console.print(f"  ... and {len(result.errors) - 10} more")
    raise typer.Exit(1 if (result.errors or refused) else 0)

