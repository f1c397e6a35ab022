"""Pieces the `check` and `facts` commands share: probing with a progress line, settings, a
SimpleTuner config, recorded facts, and the options both spell the same way. Imports nothing heavy."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Optional

import typer
from typing_extensions import Annotated

from ..cliutil import in_ci
from ..cliutil import usage_error as _usage_error
from ..text import t


def _color(no_color: bool) -> bool:
    if no_color or os.environ.get("NO_COLOR") or in_ci():
        return False
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def _gather(python: str, static: bool, progress: bool, deep: bool = False, config=None):
    """Probe this machine; ``config`` is the SimpleTuner config :func:`_project` already parsed."""
    from ..deep import deep as deep_mod
    from ..deep import multigpu
    from ..probes import gather

    deep_probe = (lambda timeout: deep_mod.probe(python, timeout=timeout)) if deep else None
    # --deep on a node with two or more GPUs also runs them together (FD901-FD905), first.
    multi_probe = (lambda timeout: multigpu.probe(python, timeout=timeout)) if deep else None
    if not progress or not sys.stderr.isatty() or in_ci():
        return gather(python, runtime=not static, deep=deep_probe, config=config, multi_gpu=multi_probe)
    from ..render._common import console as make_console

    console = make_console(stderr=True)
    with console.status(t("cli.probing_static" if static else "cli.probing")) as status:
        if not deep:
            return gather(python, runtime=not static, config=config)
        with deep_mod.listen(lambda stage: status.update(t("cli.probing_deep", stage=stage))):
            return gather(python, runtime=not static, deep=deep_probe, config=config, multi_gpu=multi_probe)


class Gathering:
    """``probes.gather`` running in a thread: started before the checks and settings load, since
    probing only reads the machine (a usage error found meanwhile still exits 2; the probes are
    dropped and worker.lifetime ends their processes)."""

    def __init__(self, python: str, static: bool, config: Optional[str] = None) -> None:
        import threading

        from ..probes import gather

        self.static = static
        self.facts = None
        self.error: Optional[BaseException] = None

        def work() -> None:
            try:
                self.facts = gather(python, runtime=not static, config=config)
            except BaseException as exc:  # handed to the main thread by result()
                self.error = exc

        self.thread = threading.Thread(target=work, name="flexdoctor-gather", daemon=True)
        self.thread.start()
        _RUNNING.append(self)

    def result(self, progress: bool):
        """The facts, with the progress line on a terminal while they are still coming."""
        if self.thread.is_alive() and progress and sys.stderr.isatty() and not in_ci():
            from ..render._common import console as make_console

            with make_console(stderr=True).status(t("cli.probing_static" if self.static else "cli.probing")):
                while self.thread.is_alive():
                    self.thread.join(0.1)
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.facts


# (python, static) -> Gathering the entry point started before parsing (see cli/__init__._prefetch).
_EARLY: dict = {}
_RUNNING: list = []  # every Gathering started, for settle()
_PRELOADING: list = []  # every preload thread started, for settle()


def settle(timeout: float = 10.0) -> None:
    """Wait for probing threads still running (a usage error found while they ran): ending the
    interpreter under a thread that is inside NVML or a subprocess wait can crash it. Called by
    the entry point after worker.lifetime ended every child, so they finish at once."""
    import time

    deadline = time.monotonic() + timeout
    # A preload still importing modules when the interpreter finalizes can crash it too (a usage
    # error found while the words and renderer loaded: `check --static` with a bad settings key
    # ended in SIGSEGV about 1 run in 12 on the CPU machine)
    for thread in [g.thread for g in _RUNNING] + _PRELOADING:
        thread.join(max(deadline - time.monotonic(), 0.0))


def start_early(python: str, static: bool) -> None:
    """Start probing now, before typer parses the command line (`check` without --project/--deep)."""
    if (python, static) not in _EARLY:
        _EARLY[(python, static)] = Gathering(python, static)


def gathering(python: str, static: bool, config: Optional[str] = None) -> Gathering:
    """The probes of this command: the ones the entry point started early, else new ones."""
    early = _EARLY.pop((python, static), None) if config is None else None
    return early if early is not None else Gathering(python, static, config=config)


def preload(fmt: str):
    """Load, while the probes run, what is needed only after them: the words and the renderer
    (rich, for text). The torch probe takes seconds, so this
    work leaves the path from its answer to the report. Returns the thread; join it before use."""
    import threading

    def work() -> None:
        try:
            from .. import text
            from ..render import Format, renderer

            text.catalog(text.language())  # (the knowledge base is read entry by entry: knowledge.get)
            renderer(Format(fmt))
            if fmt == "text":
                import rich.console  # noqa: F401
                import rich.table  # noqa: F401
        except Exception:  # only a head start: anything that fails here fails again, visibly, later
            pass

    thread = threading.Thread(target=work, name="flexdoctor-preload", daemon=True)
    thread.start()
    _PRELOADING.append(thread)
    return thread


def _settings(path: Optional[Path]):
    from .. import policy

    if path is not None:
        if not path.is_file():
            raise policy.ConfigError(t("cli.no_such_file", what=f"--settings {path}"))
        return policy.load(path.absolute())  # refused (exit 2) unless trusted like code
    return policy.discover()  # the nearest trusted file; what was not used is noted in the report


def _require_interpreter(facts, python: Optional[str]) -> None:
    """--python must name a working Python: without one flexdoctor cannot inspect anything."""
    from ..checks._util import probe_error_text
    from ..facts import ProbeError
    from ..text import t
    from ._interp import from_flag

    if python and isinstance(facts.python, ProbeError):
        require_worker_python(python, from_flag(python))  # says "too old" when it is
        raise _usage_error(t("cli.error.not_python", python=python, error=probe_error_text(facts.python)))


def require_worker_python(flag: Optional[str], target: str) -> None:
    """--python must run flexdoctor's worker scripts (Python 3.8+): one that cannot (Python 2, not
    a Python at all) is an environment error, exit 2, before any work starts."""
    import sys

    from ..checks._util import probe_error_text
    from ..facts import ProbeError
    from ..probes import interp
    from ..text import t
    from ..worker import MIN_PYTHON

    if os.path.realpath(target) == os.path.realpath(sys.executable):
        return
    got = interp.version(target)
    if isinstance(got, ProbeError):
        raise _usage_error(t("exit.not_python", python=flag or target, error=probe_error_text(got)))
    if got < MIN_PYTHON:
        raise _usage_error(t("exit.python_too_old", python=flag or target, version=".".join(map(str, got)),
                             needs=".".join(map(str, MIN_PYTHON))))


def _project(path: Path, flag: str = "--project"):
    """Parse a SimpleTuner config once, up front: a malformed one is a usage error (exit 2)."""
    from ..project import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        raise _usage_error(t("cli.file_error", what=flag, error=exc.text()))


def renamed(new_value, old_value, new: str, old: str):
    """The value of an option that was renamed: the new spelling, else the old one (with a note
    on stderr that it is deprecated). Both at once is a usage error."""
    from ..text import t

    if old_value is None:
        return new_value
    if new_value is not None:
        raise _usage_error(t("cli.renamed_both", old=old, new=new))
    typer.echo(t("cli.renamed", old=old, new=new), err=True)
    return old_value


def _attach_project(facts, project):
    import dataclasses

    from ..facts import ProjectFacts, ok

    diffusers = facts.project.diffusers if ok(facts.project) else None
    return dataclasses.replace(facts, project=ProjectFacts(config=project, diffusers=diffusers))


def _load_facts(path: Path):
    import json

    from ..facts import Facts

    try:
        raw = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
        data = json.loads(raw)
        if isinstance(data, dict) and "facts" in data and "results" in data:  # a whole check report
            data = data["facts"]
        return Facts.load(data)
    except OSError as exc:
        raise _usage_error(t("cli.error.from_facts", path=path, error=exc.strerror or exc))
    except (ValueError, UnicodeDecodeError) as exc:
        raise _usage_error(t("cli.error.from_facts", path=path, error=exc))
    except RecursionError:  # [[[[... a hundred thousand deep
        raise _usage_error(t("cli.error.from_facts_deep", path=path))


PythonOpt = Annotated[
    Optional[str],
    typer.Option("--python", metavar="PATH",
                 help="Interpreter to inspect (the one your training runs with), or its venv folder. "
                      "Default: this one when it has torch, else the active venv or conda env, or "
                      "python on PATH, that has torch."),
]
StaticOpt = Annotated[
    bool,
    typer.Option("--static", help="Skip the `import torch` tier: answer from NVML, package metadata and files "
                                  "only (well under a second; torch runtime checks are skipped)."),
]
ProjectOpt = Annotated[
    Optional[Path],
    typer.Option("--project", metavar="PATH",
                 help="A SimpleTuner training config to judge against this machine: config.json, "
                      "config.toml or config.env, its directory, a checkout, or config/<profile> "
                      "(checks FD701-FD708)."),
]
# `--config` was this option's name until 0.x; other commands used --config for other files.
OldProjectOpt = Annotated[Optional[Path], typer.Option("--config", metavar="PATH", hidden=True,
                                                       help="Deprecated spelling of --project.")]
OutputOpt = Annotated[Optional[Path], typer.Option("--output", "-o", metavar="FILE",
                                                   help="Write the report to FILE instead of stdout.")]



# ---- output helpers warm-cache and clear-cache share

def _interactive() -> bool:
    return sys.stderr.isatty() and not in_ci() and os.environ.get("TERM") != "dumb"


def _console(stderr: bool = False, no_color: bool = False):
    from ..render._common import console as make_console

    stream = sys.stderr if stderr else sys.stdout
    color = not no_color and not os.environ.get("NO_COLOR") and not in_ci() and stream.isatty()
    return make_console(file=stream, no_color=not color, highlight=False, soft_wrap=False,
                        width=max(shutil.get_terminal_size((120, 24)).columns, 100))
