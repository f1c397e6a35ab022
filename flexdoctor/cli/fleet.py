"""The `fleet` commands: `fleet merge` (node reports already written) and `fleet gather` (inside torchrun).

Both end in one fleet report: the nodes grouped by stack, every node that differs from the
majority and how, every failing node with its findings, and the hostnames to keep out of the job.
Exit codes: 0 every node ready, 1 a node fails, drifts or sent no usable report, 2 usage error.
Both commands are registered in cli/__init__.py (with --lang and their exit-code epilog).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from ..cliutil import check_output as _check_output
from ..cliutil import split as _split
from ..cliutil import usage_error as _usage_error
from ..cliutil import write as _write
from ..text import t
from ._common import OutputOpt, PythonOpt, StaticOpt, _color

app = typer.Typer(
    name="fleet",
    help="Check every node of a job: merge node reports, or gather them inside torchrun.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

FormatOpt = Annotated[str, typer.Option("--format", "-f", metavar="FORMAT",
                                        help="text (default), json (flexdoctor/schema/fleet.schema.json), "
                                             "markdown or github (annotations + step summary).")]
ExcludeOpt = Annotated[Optional[Path], typer.Option(
    "--exclude-file", metavar="FILE",
    help="Write the hostnames to keep out of the job to FILE, one valid hostname a line (srun --exclude=./FILE; "
         "xargs -r -n1 kubectl cordon -- < FILE). Written (maybe empty) on every run.")]
IgnoreOpt = Annotated[Optional[List[str]], typer.Option(
    "--ignore", metavar="FIELD",
    help="Do not count a difference in FIELD as drift (gpu, gpu_count, capability, driver, cuda, torch, "
         "torch_build, triton, python, cache), or compare a version only to major.minor (python.patch) or "
         "major (driver.minor). Repeat or comma-separate; adds to [tool.flexdoctor.fleet] ignore.")]
ExpectOpt = Annotated[Optional[Path], typer.Option(
    "--expect", metavar="FILE",
    help="Hostnames that must report, one a line (scontrol show hostnames \"$SLURM_JOB_NODELIST\" > FILE): "
         "a node without a report is kept out.")]
BundleOpt = Annotated[Optional[Path], typer.Option(
    "--bundle", metavar="FILE",
    help="A cache bundle from `warm-cache --export`: show which nodes it fits and how to ship it.")]
SettingsOpt = Annotated[Optional[Path], typer.Option(
    "--settings", metavar="FILE",
    help="Settings file (pyproject.toml [tool.flexdoctor] / flexdoctor.toml). Default: found here or in a parent.")]
ProfileOpt = Annotated[Optional[str], typer.Option("--profile", "-p", metavar="NAME",
                       help="Check profile raw facts files are judged with (default, gpu, image, extensions); "
                            "check reports keep the verdict of the profile their node ran.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Also list every stack group.")]
NoColorOpt = Annotated[bool, typer.Option("--no-color", help="No colour (also: NO_COLOR=1).")]


def _renderer(fmt: str):
    from ..render import fleet_common

    try:
        return fleet_common.renderer(fmt)
    except KeyError:
        raise _usage_error(t("cli.error.format", value=fmt, choices=", ".join(fleet_common.FORMATS)))


def _ignore(settings_file: Optional[Path], ignore: Optional[List[str]]) -> list:
    from .. import policy
    from ..fleet import settings
    from ..fleet.merge import IgnoreError, parse_ignore

    try:
        configured, _source = settings.load(settings_file)
    except policy.ConfigError as exc:
        raise _usage_error(str(exc))
    extra = _split(ignore)
    try:
        parse_ignore(extra)
    except IgnoreError as exc:
        raise _usage_error(t("cli.file_error", what="--ignore", error=exc))
    return configured + extra


def _expect(path: Optional[Path]) -> list:
    """The host names of --expect FILE: each must be a valid host name (it may go into the exclude file)."""
    from ..fleet.hostlist import is_hostname
    from ..fleet.load import shown

    if path is None:
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _usage_error(t("cli.file_error", what=f"--expect {path}", error=getattr(exc, "strerror", None) or exc))
    names = [x.strip() for x in text.split("\n") if x.strip() and not x.strip().startswith("#")]
    for name in names:
        if not is_hostname(name):
            raise _usage_error(t("cli.file_error", what=f"--expect {path}",
                                 error=t("fleet.cli.expect_not_hostname", name=shown(name))))
    return names


def _bundle(path: Optional[Path]) -> Optional[str]:
    if path is None:
        return None
    from ..fleet.bundle import BundleError, read

    try:
        read(str(path))
    except BundleError as exc:
        raise _usage_error(str(exc))
    return str(path)


def _emit(report, fmt: str, output: Optional[Path], exclude_file: Optional[Path], verbose: bool,
          no_color: bool) -> None:
    render = _renderer(fmt)
    if exclude_file is not None:
        _write("".join(f"{h}\n" for h in report.exclude), exclude_file)
    text = render(report, verbose=verbose, color=_color(no_color) and output is None,
                  width=shutil.get_terminal_size((100, 24)).columns,
                  exclude_file=str(exclude_file) if exclude_file is not None else None)
    _write(text, output)


def merge(
    paths: Annotated[List[str], typer.Argument(metavar="DIR|FILE...", help="Node reports (`flexdoctor check "
                                                "--format json`), or directories of them (*.json).")],
    fmt: FormatOpt = "text",
    output: OutputOpt = None,
    exclude_file: ExcludeOpt = None,
    ignore: IgnoreOpt = None,
    expect: ExpectOpt = None,
    bundle: BundleOpt = None,
    settings_file: SettingsOpt = None,
    profile: ProfileOpt = None,
    verbose: VerboseOpt = False,
    no_color: NoColorOpt = False,
) -> None:
    """Merge the node reports of a job: which nodes differ from the majority, which fail, what to exclude.

    Missing, empty, truncated or foreign files are named in the report and never stop the merge.
    A node is named by its file (DIR/<node>.json); raw facts files (`flexdoctor facts --format json
    --raw`) are judged here as `check --from-facts` judges them (--profile, --settings).

    Examples:

      srun --ntasks-per-node=1 --output='reports/%N.json' --error='reports/%N.err' flexdoctor check --format json

      flexdoctor fleet merge reports/ --exclude-file exclude.txt

      flexdoctor fleet merge reports/ --ignore python.patch --format markdown -o fleet.md

      flexdoctor fleet merge reports/ --bundle /shared/flex-cache.zip
    """
    import os

    from .. import policy
    from ..fleet import merge_paths

    _renderer(fmt)
    for p in paths:  # a missing node file is a finding; a missing directory is a typo
        if not os.path.lexists(p) and not p.lower().endswith(".json"):
            raise _usage_error(t("fleet.cli.no_such_path", path=p))
    _check_output(output)
    _check_output(exclude_file)
    rules = _ignore(settings_file, ignore)
    hosts = _expect(expect)
    try:
        check_settings = _check_settings(profile, settings_file)
    except policy.ConfigError as exc:
        raise _usage_error(str(exc))
    report = merge_paths(paths, ignore=rules, expect=hosts, bundle=_bundle(bundle), settings=check_settings)
    if not report.nodes and not report.node_problems:
        raise _usage_error(t("fleet.cli.no_reports", paths=" ".join(paths)))
    _emit(report, fmt, output, exclude_file, verbose, no_color)
    raise typer.Exit(report.exit_code)


def gather(
    python: PythonOpt = None,
    static: StaticOpt = False,
    deep: Annotated[bool, typer.Option("--deep", help="Run the deep checks on every node (real kernels; on a "
                                       "node with several GPUs also P2P, NVLink/PCIe and an NCCL all-reduce).")] = False,
    profile: Annotated[Optional[str], typer.Option("--profile", "-p", metavar="NAME",
                       help="Check profile on each node (default, gpu, image, extensions).")] = "gpu",
    fmt: FormatOpt = "text",
    output: OutputOpt = None,
    exclude_file: ExcludeOpt = None,
    ignore: IgnoreOpt = None,
    expect: ExpectOpt = None,
    bundle: BundleOpt = None,
    settings_file: SettingsOpt = None,
    reports_dir: Annotated[Optional[Path], typer.Option("--reports-dir", metavar="DIR",
                           help="Rank 0 also writes each node's report to DIR/<node>.json.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", min=5.0,
                       help="Time box of the collective phase (after this node's check): a rank stuck "
                            "longer becomes a finding, and every rank ends.")] = 180.0,
    backend: Annotated[str, typer.Option("--backend", metavar="NAME",
                       help="auto (nccl when CUDA is available, else gloo), nccl or gloo.")] = "auto",
    verbose: VerboseOpt = False,
    no_color: NoColorOpt = False,
) -> None:
    """Inside torchrun: check every node and merge the reports on rank 0, over the job's own process group.

    One rank per node (LOCAL_RANK 0) runs the node check; the reports travel to rank 0 over the
    job's backend as JSON bytes in uint8 tensors (never pickles), so the job's collective path is
    exercised too. Rank 0 prints (or writes) the fleet report; every rank exits with its verdict.

    Examples:

      torchrun --nnodes 64 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint $HEAD:29500 -m flexdoctor fleet gather -o fleet.txt

      torchrun --standalone --nproc-per-node 2 -m flexdoctor fleet gather --backend gloo --static
    """
    import os

    from .. import policy
    from ..fleet import gather as gather_mod
    from ._interp import choose_for_worker
    from ._root import require_safe_python

    _renderer(fmt)
    if backend not in ("auto", "nccl", "gloo"):
        raise _usage_error(t("cli.error.choose_from", flag="--backend", value=backend, choices="auto, nccl, gloo"))
    if deep and static:
        raise _usage_error(t("cli.error.deep_facts"))
    # Only rank 0 writes and reads the fleet-wide files: they need to exist on its node alone.
    rank0 = os.environ.get("RANK", "0") == "0"
    if rank0:
        _check_output(output)
        _check_output(exclude_file)
        if reports_dir is not None and not reports_dir.is_dir():
            raise _usage_error(t("fleet.cli.no_such_dir", what=f"--reports-dir {reports_dir}"))
    # The interpreter check would inspect (--python may name a venv folder; without it, where the
    # user is when flexdoctor's own has no torch), with its note on stderr; as root: exit 2 when a
    # non-root user can change it, or judged from its files only with --static.
    target = choose_for_worker(python)
    require_safe_python(target, files_ok=static)
    try:
        node_settings = _check_settings(profile, settings_file)
    except policy.ConfigError as exc:
        raise _usage_error(str(exc))
    opts = gather_mod.Options(timeout=timeout, backend=backend, ignore=tuple(_ignore(settings_file, ignore)),
                              expect=tuple(_expect(expect)) if rank0 else (),
                              bundle=_bundle(bundle) if rank0 else None)

    def emit(report, docs) -> None:
        if reports_dir is not None:
            _write_reports(reports_dir, report, docs)
        _emit(report, fmt, output, exclude_file, verbose, no_color)

    try:
        code = gather_mod.run(opts, lambda: _check_node(target, static, deep, node_settings), emit)
    except gather_mod.GatherError as exc:
        raise _usage_error(str(exc))
    raise typer.Exit(code)


def _check_node(python: str, static: bool, deep: bool, settings) -> dict:
    """This node's report, exactly as `flexdoctor check --format json` writes it."""
    from .. import checks, policy, runner
    from ..render import json_
    from ._common import _gather

    specs, problems = checks.all_checks()
    facts = _gather(python, static, progress=False, deep=deep)
    return json_.to_dict(runner.run(policy.select(specs, settings), facts, plugin_problems=problems,
                                    settings=settings))


def _check_settings(profile: Optional[str], settings_file: Optional[Path]):
    """The check settings ([tool.flexdoctor], found as `check` finds it) with --profile."""
    from ._common import _settings

    return _settings(settings_file).with_overrides(profile=profile)


def _write_reports(dest: Path, report, docs: dict) -> None:
    """DIR/<node>.json for each report that arrived whole and names its node with a valid host name."""
    import json

    from ..fleet.gather import node_reports

    for name, doc in node_reports(docs).items():
        _write(json.dumps(doc, indent=2, sort_keys=True) + "\n", dest / f"{name}.json")
