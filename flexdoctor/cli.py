"""The command line. Thin: parse, call into the package, render, choose the exit code.

Heavy imports (pynvml, the probes, rich tables) happen inside commands so that
``flexdoctor --help`` stays fast and never imports torch.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from . import __version__
from .cliutil import EXIT_USAGE, in_ci
from .cliutil import resolve_python as _resolve_python
from .cliutil import split as _split
from .cliutil import usage_error as _usage_error
from .cliutil import which_python as _which_python
from .cliutil import check_output as _check_output
from .cliutil import write as _write

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
        from .probes import torch_runtime

        torch_runtime.prefetch(target)


def _color(no_color: bool) -> bool:
    if no_color or os.environ.get("NO_COLOR") or in_ci():
        return False
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def _gather(python: str, static: bool, progress: bool, deep: bool = False, config: Optional[str] = None):
    from .probes import gather

    if not progress or not sys.stderr.isatty() or in_ci():
        return gather(python, runtime=not static, deep=deep, config=config)
    from rich.console import Console

    console = Console(stderr=True)
    msg = "flexdoctor: probing GPU, driver, toolchain" + ("" if static else " and import torch") + "…"
    with console.status(msg) as status:
        if not deep:
            return gather(python, runtime=not static, config=config)
        from .deep import deep as deep_mod

        with deep_mod.listen(lambda stage: status.update(f"flexdoctor: deep tier: {stage}…")):
            return gather(python, runtime=not static, deep=True, config=config)


def _settings(path: Optional[Path]):
    from . import policy

    if path is not None:
        if not path.is_file():
            raise policy.ConfigError(f"--settings {path}: no such file")
        return policy.load(path)
    found = policy.find_config(Path.cwd())
    return policy.load(found) if found else policy.Settings()


def _require_interpreter(facts, python: Optional[str]) -> None:
    """--python must name a working Python: without one flexdoctor cannot inspect anything."""
    from .facts import ProbeError

    if python and isinstance(facts.python, ProbeError):
        raise _usage_error(f"--python {python}: not a working Python interpreter ({facts.python.message})")


def _project(path: Path):
    """Parse a SimpleTuner config up front: a malformed one is a usage error (exit 2)."""
    from .project import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        raise _usage_error(f"--config: {exc}")


def _attach_project(facts, project):
    import dataclasses

    from .facts import ProjectFacts, ok

    diffusers = facts.project.diffusers if ok(facts.project) else None
    return dataclasses.replace(facts, project=ProjectFacts(config=project, diffusers=diffusers))


def _load_facts(path: Path):
    import json

    from .facts import Facts

    try:
        raw = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
        data = json.loads(raw)
        if isinstance(data, dict) and "facts" in data and "results" in data:  # a whole check report
            data = data["facts"]
        return Facts.load(data)
    except OSError as exc:
        raise _usage_error(f"--from-facts {path}: {exc.strerror or exc}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise _usage_error(f"--from-facts {path}: {exc}")


PythonOpt = Annotated[
    Optional[str],
    typer.Option("--python", metavar="PATH",
                 help="Interpreter to inspect (the one your training runs with). Default: this one."),
]
StaticOpt = Annotated[
    bool,
    typer.Option("--static", help="Skip the `import torch` tier: answer from NVML, package metadata and files "
                                  "only (well under a second; torch runtime checks are skipped)."),
]
OutputOpt = Annotated[Optional[Path], typer.Option("--output", "-o", metavar="FILE",
                                                   help="Write the report to FILE instead of stdout.")]


@app.command()
def check(
    python: PythonOpt = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT",
                                     help="text (default), json, markdown, github (workflow annotations "
                                          "+ step summary) or junit (XML).")] = "text",
    output: OutputOpt = None,
    only: Annotated[Optional[List[str]], typer.Option("--only", metavar="ID",
                    help="Run only these checks (ID or symbol; repeat or comma-separate).")] = None,
    skip: Annotated[Optional[List[str]], typer.Option("--skip", metavar="ID",
                    help="Do not run these checks (ID or symbol).")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")] = False,
    profile: Annotated[Optional[str], typer.Option("--profile", "-p", metavar="NAME",
                       help="default, gpu (GPU runner before training: no GPU fails), image (image build "
                            "without a GPU: GPU checks skipped), extensions (building flash-attn: nvcc and "
                            "CUDA_HOME fail).")] = None,
    settings_file: Annotated[Optional[Path], typer.Option("--settings", metavar="FILE",
                             help="Project settings file (pyproject.toml with [tool.flexdoctor], or "
                                  "flexdoctor.toml). Default: found in this directory or a parent.")] = None,
    from_facts: Annotated[Optional[Path], typer.Option("--from-facts", metavar="FILE",
                          help="Judge facts recorded earlier with `flexdoctor facts --format json --raw` "
                               "instead of probing this machine.")] = None,
    static: StaticOpt = False,
    deep: Annotated[bool, typer.Option("--deep", help="Also run the real kernels here: SDPA per backend with "
                    "torch's refusal reasons, compiled flex_attention against float64, flash-attn, xformers "
                    "(checks FD801-FD808; ~10-60 s, at most 300 s).")] = False,
    config: Annotated[Optional[Path], typer.Option("--config", metavar="PATH",
                      help="A SimpleTuner training config to judge against this machine: config.json, "
                           "config.toml or config.env, its directory, a checkout, or config/<profile> "
                           "(checks FD701-FD708).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v",
                       help="Show passing details, skipped checks and per-probe timings.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only problems and the summary line.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour (also: NO_COLOR=1).")] = False,
    no_plugins: Annotated[bool, typer.Option("--no-plugins", help="Do not load third-party checks.")] = False,
) -> None:
    """Check whether this machine can run FlexAttention / FlashAttention / SDPA, and how to fix it.

    Examples:

      flexdoctor check

      flexdoctor check --python ~/venvs/train/bin/python -v

      flexdoctor check --format json -o report.json

      flexdoctor check --static --only FD101,FD104

      flexdoctor check --profile gpu --format github     (first step of a GPU CI job)

      flexdoctor check --profile image --format junit -o flexdoctor.xml
    """
    from . import checks, policy, runner
    from .render import Format, renderer

    _check_output(output)

    try:
        format_ = Format(fmt)
    except ValueError:
        raise _usage_error(f"--format {fmt}: choose one of {', '.join(f.value for f in Format)}")
    specs, problems = checks.all_checks(with_plugins=not no_plugins)
    try:
        settings = _settings(settings_file).with_overrides(
            profile=profile, strict=strict, select=_split(only), ignore=_split(skip))
        policy.validate_names(settings, specs)
    except policy.ConfigError as exc:
        raise _usage_error(str(exc))
    if only is not None and not _split(only):
        raise _usage_error("--only needs at least one check ID or symbol")
    specs = policy.select(specs, settings)
    if not specs:
        raise _usage_error("no check left to run: --only/--skip (or the settings' select/ignore) exclude them all")
    if deep and (static or from_facts is not None):
        raise _usage_error("--deep runs kernels in the torch runtime: drop --static / --from-facts")
    project = _project(config) if config is not None else None
    if from_facts is not None:
        facts = _load_facts(from_facts)
        if project is not None:
            facts = _attach_project(facts, project)
    else:
        facts = _gather(_resolve_python(python), static, progress=format_ == Format.text and output is None,
                        deep=deep, config=str(config) if config is not None else None)
        _require_interpreter(facts, python)
    report = runner.run(specs, facts, plugin_problems=problems, settings=settings)
    text = renderer(format_)(report, verbose=verbose, quiet=quiet, show_skips=bool(_split(only)),
                             color=_color(no_color) and output is None,
                             width=shutil.get_terminal_size((100, 24)).columns)
    _write(text, output)
    raise typer.Exit(report.exit_code)


@app.command()
def facts(
    python: PythonOpt = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="text (default) or json.")] = "text",
    output: OutputOpt = None,
    static: StaticOpt = False,
    raw: Annotated[bool, typer.Option("--raw", help="Keep paths under your home as they are (for "
                                                    "`check --from-facts`).")] = False,
    deep: Annotated[bool, typer.Option("--deep", help="Also run the real kernels (see `check --deep`).")] = False,
    config: Annotated[Optional[Path], typer.Option("--config", metavar="PATH",
                      help="Also read a SimpleTuner training config (see `check --config`).")] = None,
) -> None:
    """Print everything flexdoctor gathered about this machine, for bug reports.

    A better `python -m torch.utils.collect_env`: GPUs and driver from NVML, torch read without
    importing it and then imported in a subprocess, Triton, toolchain, relevant environment
    variables. Paths under your home directory are shown as ~.
    """
    from .render import facts_view

    _check_output(output)

    if fmt not in ("text", "json"):
        raise _usage_error(f"--format {fmt}: choose text or json")
    target = _resolve_python(python)
    if deep and static:
        raise _usage_error("--deep runs kernels in the torch runtime: drop --static")
    if config is not None:
        _project(config)
    gathered = _gather(target, static, progress=fmt == "text" and output is None, deep=deep,
                       config=str(config) if config is not None else None)
    _require_interpreter(gathered, python)
    _write(facts_view.render(gathered, fmt=fmt, redact=not raw), output)


@app.command()
def rules(
    rule: Annotated[Optional[str], typer.Argument(metavar="[ID]", help="A check (FD201 or nvcc-found) or "
                                                  "knowledge-base entry (FDE105) to print in full.")] = None,
) -> None:
    """List every check and knowledge-base entry, or print one in full.

    Examples:

      flexdoctor rules

      flexdoctor rules FD401

      flexdoctor rules nvidia-driver-too-old
    """
    from .render import rules_view

    try:
        text = rules_view.render(rule)
    except KeyError:
        raise _usage_error(f"no check or knowledge-base entry named {rule!r} (run `flexdoctor rules`)")
    _write(text, None)


@app.command()
def explain(
    file: Annotated[Optional[str], typer.Argument(metavar="[FILE|-]", help="Log or traceback to read; - or "
                                                  "nothing reads stdin.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="text (default) or json.")] = "text",
    output: OutputOpt = None,
) -> None:
    """Explain the known problems in a log or traceback: cause, fix, commands.

    Reads the whole log (any size, streamed; binary junk is tolerated) and reports every known
    problem found, most fundamental first. Exit codes: 0 a known problem found, 1 none, 2 usage error.

    Examples:

      flexdoctor explain train.log

      python train.py 2>&1 | flexdoctor explain

      flexdoctor explain crash.txt --format json
    """
    from .knowledge import explain as kb_explain
    from .render import explain_view
    from .text import t

    if fmt not in ("text", "json"):
        raise _usage_error(f"--format {fmt}: choose text or json")
    if file in (None, "-"):
        if file is None and sys.stdin.isatty():
            raise _usage_error("give a FILE, or pipe a log into stdin (flexdoctor explain - < train.log)")
        source = t("explain.stdin")
        try:
            result = kb_explain.scan(sys.stdin.buffer)
        except OSError as exc:
            raise _usage_error(f"cannot read stdin: {exc.strerror or exc}")
    else:
        source = file
        if os.path.isdir(file):
            raise _usage_error(f"{file}: is a directory")
        try:
            with open(file, "rb") as stream:
                result = kb_explain.scan(stream)
        except OSError as exc:
            raise _usage_error(f"{file}: {exc.strerror or exc}")
    text = explain_view.render(result, source, fmt=fmt, width=shutil.get_terminal_size((100, 24)).columns)
    _write(text, output)
    raise typer.Exit(0 if result.found else 1)


from .cache import commands as _cache_commands  # noqa: E402

_cache_commands.register(app)


from .deep import commands as _deep_commands  # noqa: E402
_deep_commands.register(app)


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
