"""The `facts` command: print everything flexdoctor gathered about this machine."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from typing_extensions import Annotated
import typer

from ..cliutil import usage_error as _usage_error
from ..cliutil import check_output as _check_output
from ..cliutil import write as _write
from ..text import t
from ._root import require_safe_python
from ._interp import choose, with_note
from ._common import OldProjectOpt, OutputOpt, PythonOpt, StaticOpt, _gather, _project, _require_interpreter, renamed


def facts(
    python: PythonOpt = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="text (default) or json.")] = "text",
    output: OutputOpt = None,
    static: StaticOpt = False,
    raw: Annotated[bool, typer.Option("--raw", help="Keep paths under your home as they are (for "
                                                    "`check --from-facts`).")] = False,
    deep: Annotated[bool, typer.Option("--deep", help="Also run the real kernels (see `check --deep`).")] = False,
    project_file: Annotated[Optional[Path], typer.Option("--project", metavar="PATH",
                            help="Also read a SimpleTuner training config (see `check --project`).")] = None,
    old_config: OldProjectOpt = None,
) -> None:
    """Print everything flexdoctor gathered about this machine, for bug reports.

    A better `python -m torch.utils.collect_env`: GPUs and driver from NVML, torch read without
    importing it and then imported in a subprocess, Triton, toolchain, relevant environment
    variables. Paths under your home directory are shown as ~.
    """
    from ..render import facts_view

    _check_output(output)

    if fmt not in ("text", "json"):
        raise _usage_error(t("cli.error.format", value=fmt, choices="text or json"))
    chosen = choose(python)
    target = chosen.path
    if deep and static:
        raise _usage_error(t("cli.error.deep_facts"))
    require_safe_python(target, files_ok=static)  # as root: exit 2, or judged from its files only
    flag = "--config" if old_config is not None else "--project"
    project_file = renamed(project_file, old_config, "--project", "--config")
    project = _project(project_file, flag) if project_file is not None else None
    gathered = _gather(target, static, progress=fmt == "text" and output is None, deep=deep, config=project)
    _require_interpreter(gathered, python)
    _write(with_note(facts_view.render(gathered, fmt=fmt, redact=not raw), chosen, fmt), output)

