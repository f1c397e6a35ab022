"""The command line: one thin module per command (parse, call into the package, render, exit code).

``app`` is the typer application; each command module defines one function and this package
registers it. Heavy imports (pynvml, the probes, rich tables, torch) happen inside the command
functions so that ``flexdoctor --help`` stays fast and never imports torch.

To add a command: copy ``cli/rules.py`` (the smallest), register it below.
"""

from __future__ import annotations

import sys

import typer
from typing_extensions import Annotated

from .. import __version__
from ..cliutil import EXIT_USAGE
from ..cliutil import which_python as _which_python

app = typer.Typer(
    name="flexdoctor",
    help=(
        "Doctor and CI preflight for GPU attention kernels (PyTorch FlexAttention, "
        "FlashAttention, SDPA).\n\n"
        "Start with `flexdoctor check`: it says in seconds what will break on this machine and "
        "exactly how to fix it. Exit codes: 0 no failure, 1 a failure (or a warning with "
        "--strict), 2 usage error."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"flexdoctor {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Doctor and CI preflight for GPU attention kernels."""


def _prefetch(argv: list[str]) -> None:
    """Start `import torch` in the target interpreter before typer parses anything.

    It is the slowest probe (seconds) and needs nothing from argument parsing but --python,
    so overlapping it with start-up keeps a full check close to one bare `import torch`.
    """
    words = [a for a in argv if not a.startswith("-")]
    if not words or words[0] not in ("check", "facts"):
        return
    if any(a in ("--static", "-h", "--help", "--version") or a.startswith("--from-facts") for a in argv):
        return
    python = None
    for i, a in enumerate(argv):
        if a == "--python" and i + 1 < len(argv):
            python = argv[i + 1]
        elif a.startswith("--python="):
            python = a.split("=", 1)[1]
    target = _which_python(python)
    if target is not None:
        from ..probes import torch_runtime

        torch_runtime.prefetch(target)


# The command modules import nothing heavy at module level (see each one's imports).
from . import bench as _bench  # noqa: E402
from . import check as _check  # noqa: E402
from . import clear_cache as _clear_cache  # noqa: E402
from . import explain as _explain  # noqa: E402
from . import facts as _facts  # noqa: E402
from . import fleet as _fleet  # noqa: E402
from . import rules as _rules  # noqa: E402
from . import warm_cache as _warm_cache  # noqa: E402

# Registration order is the order `flexdoctor --help` lists the commands in.
app.command("check")(_check.check)
app.command("facts")(_facts.facts)
app.command("rules")(_rules.rules)
app.command("explain")(_explain.explain)
app.command("warm-cache")(_warm_cache.warm_cache)
app.command("clear-cache")(_clear_cache.clear_cache)
app.command("bench")(_bench.bench)
app.add_typer(_fleet.app, name="fleet")


def main() -> None:
    try:
        _prefetch(sys.argv[1:])
        app()
    except KeyboardInterrupt:
        typer.echo("flexdoctor: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # a flexdoctor bug: one clear line, never a traceback
        typer.echo(f"flexdoctor: internal error: {type(exc).__name__}: {exc}\n"
                   "Please report it with the output of `flexdoctor facts`.", err=True)
        sys.exit(EXIT_USAGE)
