"""The command line: one thin module per command (parse, call into the package, render, exit code).

``app`` is the typer application; each command module defines one function and this package
registers it. Heavy imports (pynvml, the probes, rich tables, torch) happen inside the command
functions so that ``flexdoctor --help`` stays fast and never imports torch.

To add a command: copy ``cli/rules.py`` (the smallest), register it below.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Callable, Optional

import typer
from typing_extensions import Annotated

from .. import __version__
from ..cliutil import EXIT_USAGE

def _t(key: str, /, **kw) -> str:
    from ..text import t

    return t(key, **kw)


app = typer.Typer(
    name="flexdoctor",
    help=(
        "Doctor and CI preflight for GPU attention kernels (PyTorch FlexAttention, "
        "FlashAttention, SDPA).\n\n"
        "Start with `flexdoctor check`: it says in seconds what will break on this machine and "
        "exactly how to fix it.\n\n" + _t("exit.contract")
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


_LANG_HELP = ("Language of the report: en, ja, pt-BR, hi (default: FLEXDOCTOR_LANG, then LC_ALL, "
              "LC_MESSAGES, LANG; unknown languages mean English). JSON keeps its English identifiers.")
LangOption = Annotated[Optional[str], typer.Option("--lang", metavar="LANG", help=_LANG_HELP)]


def _choose_language(lang: Optional[str]) -> None:
    if lang:
        from ..text import set_language

        set_language(lang)


@app.callback()
def main_callback(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    lang: LangOption = None,
) -> None:
    """Doctor and CI preflight for GPU attention kernels."""
    _root_guard()  # also when the app runs without main() (typer's CliRunner)
    _choose_language(lang)


class _WithLang:
    """A command with a ``--lang`` option of its own (``flexdoctor rules --lang ja``), so no command
    module has to declare it; ``flexdoctor --lang ja rules`` works through the callback above.

    Its signature (what typer reads to build the options) is made when typer asks for it: reading
    a command's annotations evaluates them, and typer builds only the command being run
    (``_only_the_command``): ~5 ms of every start for the nine commands not run."""

    def __init__(self, command: Callable) -> None:
        functools.update_wrapper(self, command)
        self._command = command
        self.__annotations__ = {**getattr(command, "__annotations__", {}), "lang": LangOption}

    @functools.cached_property
    def __signature__(self) -> inspect.Signature:
        signature = inspect.signature(self._command, eval_str=True)
        extra = inspect.Parameter("lang", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=LangOption)
        return signature.replace(parameters=[*signature.parameters.values(), extra])

    def __call__(self, *args, lang: Optional[str] = None, **kwargs):
        _choose_language(lang)
        return self._command(*args, **kwargs)


def _prefetch(argv: list[str]) -> None:
    """Start `import torch` in the target interpreter before typer parses anything, and for
    `check` all the probes: they need nothing from argument parsing but --python and --static,
    so overlapping them with start-up keeps a full check close to one bare `import torch` and
    the static tier to a fraction of `collect_env`. Anything unusual (--project, --deep, recorded
    facts, help) is left to the command itself."""
    word = _command_word(argv)
    if word not in ("check", "facts"):
        return
    if any(a in ("-h", "--help", "--version") or a.startswith("--from-facts") for a in argv):
        return
    python = None
    for i, a in enumerate(argv):
        if a == "--python" and i + 1 < len(argv):
            python = argv[i + 1]
        elif a.startswith("--python="):
            python = a.split("=", 1)[1]
    from ._interp import choose

    chosen = choose(python, quiet=True)
    if chosen is None:
        return
    target = chosen.path
    static = "--static" in argv
    if not static:
        from ..probes import torch_runtime

        torch_runtime.prefetch(target)
    plain = not any(a.split("=", 1)[0] in ("--project", "--config", "--deep") for a in argv)
    if word == "check" and plain:
        from ._common import start_early

        start_early(target, static)


# The command modules import nothing heavy at module level (see each one's imports).
from . import bench as _bench  # noqa: E402
from . import cache_why as _cache_why  # noqa: E402
from . import check as _check  # noqa: E402
from . import clear_cache as _clear_cache  # noqa: E402
from . import explain as _explain  # noqa: E402
from . import facts as _facts  # noqa: E402
from . import fleet as _fleet  # noqa: E402
from . import rules as _rules  # noqa: E402
from . import trace as _trace  # noqa: E402
from . import warm_cache as _warm_cache  # noqa: E402



def _epilog(command: str) -> str:
    """The exit codes of ``command``, at the end of its --help (one contract: 0 ok, 1 findings or
    a refusal, 2 usage or environment error)."""
    return _t(f"exit.{command}") + "\n\n" + _t("exit.signal")


# Registration order is the order `flexdoctor --help` lists the commands in.
app.command("check", epilog=_epilog("check"))(_WithLang(_check.check))
app.command("facts", epilog=_epilog("facts"))(_WithLang(_facts.facts))
app.command("rules", epilog=_epilog("rules"))(_WithLang(_rules.rules))
app.command("explain", epilog=_epilog("explain"))(_WithLang(_explain.explain))
app.command("warm-cache", epilog=_epilog("warm-cache"))(_WithLang(_warm_cache.warm_cache))
app.command("clear-cache", epilog=_epilog("clear-cache"))(_WithLang(_clear_cache.clear_cache))
app.command("bench", epilog=_epilog("bench"))(_WithLang(_bench.bench))
app.command("trace", context_settings=_trace.CONTEXT, epilog=_epilog("trace"))(_WithLang(_trace.trace))
# `fleet` is a group: `fleet merge`, `fleet gather`.
_fleet.app.command("merge", epilog=_epilog("fleet-merge"))(_WithLang(_fleet.merge))
_fleet.app.command("gather", epilog=_epilog("fleet-gather"))(_WithLang(_fleet.gather))
app.add_typer(_fleet.app, name="fleet")

# `flexdoctor cache ...`: questions about the compile cache (room for more subcommands).
cache_app = typer.Typer(name="cache", help="Questions about the compile cache: `cache why -- CMD` says why a "
                        "command's compiled graphs missed it.", no_args_is_help=True, add_completion=False,
                        rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]})
cache_app.command("why", context_settings=_cache_why.CONTEXT, epilog=_epilog("cache-why"))(_WithLang(_cache_why.why))
app.add_typer(cache_app, name="cache")


def main() -> None:
    """The entry point: owns the signals and the standard streams, and ends every child process
    before exiting (worker.lifetime). Exit codes: see ``EXIT_CODES``."""
    from ..worker import lifetime
    from . import _streams

    stdout = _streams.guard()
    lifetime.own_signals()
    _root_guard()
    try:
        try:
            code = _invoke()
        finally:
            lifetime.shutdown()
            _settle()
    except KeyboardInterrupt:  # a signal while ending the children
        code = 130
    for stream in (sys.stdout, sys.stderr):  # the guards turn a failing flush into state
        stream.flush()
    signum = lifetime.received()
    if signum is not None or code == 130:
        _stopped(signum)
        code = lifetime.exit_status(signum) if signum is not None else code
    elif stdout.error is not None:
        _say(_t("exit.output_failed", error=stdout.error.strerror or stdout.error))
        code = EXIT_USAGE
    _exit(code)


def _root_guard() -> None:
    """As root, every process start first asks flexdoctor.safety (cli/_root.py): installed before
    anything can start, the probes _prefetch starts included."""
    import os

    if getattr(os, "geteuid", lambda: None)() == 0:
        from ._root import install

        install()


def _settle() -> None:
    from ._common import settle

    settle()


def _exit(code) -> None:
    """Exit with ``code``. The objects of the ~300 modules a command imported are frozen first
    (gc.freeze): the interpreter's last garbage collection then skips them instead of walking them
    all (measured on the 2-core CPU machine: `check --static` 0.87x the time without it)."""
    import gc

    gc.freeze()
    sys.exit(code)


def _command_word(argv: list) -> Optional[str]:
    """The command named on the command line (the first word that is no option or its value)."""
    words = [a for i, a in enumerate(argv) if not a.startswith("-") and (i == 0 or argv[i - 1] != "--lang")]
    return words[0] if words else None


def _only_the_command(argv: list) -> None:
    """Build only the command being run: on every start typer makes a click command of each one
    registered, inspecting its signature (~15 ms of `check --static`'s ~190 on the CPU machine).
    `flexdoctor --help` and an unknown word keep them all (the list, click's suggestions)."""
    name = _command_word(argv)
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if commands or groups:
        app.registered_commands[:] = commands
        app.registered_groups[:] = groups


def _invoke():
    """Run the command; its exit code (0 when it returns). typer runs without its own error
    handling (standalone_mode=False) so that click's usage errors are worded here, in the report's
    language (_click_errors.py); a command's typer.Exit(n) comes back as n."""
    from . import _click_errors

    click = _click_errors.exceptions()
    try:
        _prefetch(sys.argv[1:])
        _only_the_command(sys.argv[1:])
        code = app(standalone_mode=False)
    except SystemExit as exc:
        return exc.code
    except typer.Abort:  # a prompt answered with Ctrl-D / Ctrl-C
        typer.echo(_t("cli.click.aborted"), err=True)
        return 1
    except click.ClickException as exc:
        return _click_errors.show(exc, sys.argv[1:])
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a flexdoctor bug: one clear line, never a traceback
        from ..render._escape import for_terminal  # the exception's text may quote a path

        typer.echo(_t("cli.internal_error", error=for_terminal(f"{type(exc).__name__}: {exc}")), err=True)
        return EXIT_USAGE
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


def _stopped(signum) -> None:
    """The one line for a signal."""
    import signal

    from ..worker import lifetime

    if signum is None or signum == signal.SIGINT:
        line = _t("stopped.sigint")
    else:
        line = _t("stopped.signal", signal=lifetime.signal_name(signum))
    if lifetime.noted():
        line = _t("stopped.with_note", line=line, note=lifetime.noted())
    _say(line)


def _say(line: str) -> None:
    """One line on stderr, which may be gone (SIGHUP: the terminal closed)."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass

