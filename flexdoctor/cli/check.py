"""The `check` command: probe (or load recorded facts), run the selected checks, render the report."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from ..cliutil import split as _split
from ..cliutil import usage_error as _usage_error
from ..cliutil import check_output as _check_output
from ..cliutil import write as _write
from ..text import t
from ._root import require_safe_python
from ._interp import choose, with_note
from ._common import (OldProjectOpt, OutputOpt, ProjectOpt, PythonOpt, StaticOpt, _attach_project, _color,
                      _gather, _load_facts, _project, _require_interpreter, _settings, gathering, preload, renamed)


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
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1); notes never do.")] = False,
    profile: Annotated[Optional[str], typer.Option("--profile", "-p", metavar="NAME",
                       help="default, gpu (GPU runner before training: no GPU fails), image (GPU image built "
                            "without a GPU: a CPU-only torch fails, GPU checks skipped), extensions (building "
                            "flash-attn: nvcc and CUDA_HOME fail).")] = None,
    settings_file: Annotated[Optional[Path], typer.Option("--settings", metavar="FILE",
                             help="Project settings file (pyproject.toml with [tool.flexdoctor], or "
                                  "flexdoctor.toml). Default: found in this directory or a parent.")] = None,
    from_facts: Annotated[Optional[Path], typer.Option("--from-facts", metavar="FILE",
                          help="Judge facts recorded earlier with `flexdoctor facts --format json --raw` "
                               "instead of probing this machine.")] = None,
    static: StaticOpt = False,
    deep: Annotated[bool, typer.Option("--deep", help="Also run the real kernels here: SDPA per backend with "
                    "torch's refusal reasons, compiled flex_attention against float64, flash-attn, xformers "
                    "(checks FD801-FD808; ~10-60 s, at most 300 s); on a node with several GPUs also peer "
                    "access, NVLink/PCIe links and an NCCL all-reduce across them (FD901-FD905).")] = False,
    project_file: ProjectOpt = None,
    old_config: OldProjectOpt = None,
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

      flexdoctor check --project config/config.json     (a SimpleTuner training config)
    """
    # Long only because typer declares each option in the signature (and the docstring is the
    # --help text); the body is parse -> call the layer -> render.
    from ..render import Format, renderer

    _check_output(output)

    try:
        format_ = Format(fmt)
    except ValueError:
        raise _usage_error(t("cli.error.format", value=fmt, choices=", ".join(f.value for f in Format)))
    early = warm = target = None
    if from_facts is None:
        target = choose(python)  # the interpreter the user's training runs with, and why
        # as root: nothing a non-root user can change is started (exit 2, or files only)
        require_safe_python(target.path, files_ok=static)
    if from_facts is None and not deep and project_file is None and old_config is None:
        # Probing only reads the machine: it runs while the checks and settings load below.
        early = gathering(target.path, static)
        warm = preload(format_.value)
    from .. import checks, policy, runner  # imported while the probes run

    specs, problems = checks.all_checks(with_plugins=not no_plugins)
    try:
        policy.check_flag_names("--only", _split(only), specs)
        policy.check_flag_names("--skip", _split(skip), specs)
        settings = _settings(settings_file).with_overrides(
            profile=profile, strict=strict, select=_split(only), ignore=_split(skip))
        policy.validate_names(settings, specs)
    except policy.ConfigError as exc:
        raise _usage_error(str(exc))
    if only is not None and not _split(only):
        raise _usage_error(t("cli.error.only_empty"))
    specs = policy.select(specs, settings)
    if not specs:
        raise _usage_error(t("cli.error.nothing_selected"))
    if deep and (static or from_facts is not None):
        raise _usage_error(t("cli.error.deep_check"))
    flag = "--config" if old_config is not None else "--project"
    project_file = renamed(project_file, old_config, "--project", "--config")
    project = _project(project_file, flag) if project_file is not None else None
    if from_facts is not None:
        facts = _load_facts(from_facts)
        if project is not None:
            facts = _attach_project(facts, project)
    else:
        progress = format_ == Format.text and output is None
        if early is not None:
            facts = early.result(progress)
            warm.join()
        else:
            facts = _gather(target.path, static, progress=progress, deep=deep, config=project)
        _require_interpreter(facts, python)
    report = runner.run(specs, facts, plugin_problems=problems, settings=settings)
    text = renderer(format_)(report, verbose=verbose, quiet=quiet, show_skips=bool(_split(only)),
                             color=_color(no_color) and output is None,
                             width=shutil.get_terminal_size((100, 24)).columns)
    _write(with_note(text, target, format_.value), output)
    raise typer.Exit(report.exit_code)

