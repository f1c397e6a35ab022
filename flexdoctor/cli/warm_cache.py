"""The ``warm-cache`` command: parse, plan (cache/plan.py), run (cache/warm.py), render
(render/warm_view.py). Usage errors exit 2 with one line; exit 1 when a config failed or a fresh
process did not hit the cache; 2 when the manifest or bundle cannot be written (after the
report); 128+N after signal N (nothing written to the manifest).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from ..cliutil import split as _split
from ..cliutil import usage_error as _usage_error
from ._root import require_safe_command, require_safe_python
from ._common import _color, _console, _interactive, renamed, require_worker_python
from ._interp import choose_for_worker
from ._safety import guard_cache_dirs


def _request(presets, axes: dict, scalars: dict, modes, dynamic, fullgraph, kernel_option, **rest):
    """The parsed flags as a plan.WarmRequest; bad words are usage errors."""
    from ..cache.plan import CompileOptions, WarmRequest
    from ..workload import WorkloadError, parse_kernel_options, parse_mode, parse_sizes

    try:
        for key in ("head_dim", "seq_len"):
            axes[key] = parse_sizes(axes.get(key) or [], "--" + key.replace("_", "-"))
        options = CompileOptions(
            modes=tuple(dict.fromkeys(parse_mode(m) for m in modes)) if modes else None,
            dynamic=dynamic, fullgraph=fullgraph,
            kernel_options=parse_kernel_options(kernel_option) if kernel_option else None)
    except WorkloadError as exc:
        raise _usage_error(str(exc))
    return WarmRequest(presets=tuple(presets), axes={k: v for k, v in axes.items() if v},
                       scalars={k: v for k, v in scalars.items() if v is not None}, compile=options, **rest)


def _settings_run(command, source, req):
    """A `run =` from a settings file is a command someone else may have written (a cloned repo):
    it runs only with --run-from-settings, or once confirmed at a terminal (the prompt shows it
    exactly, controls escaped). Otherwise nothing runs: exit 2 saying how to allow it."""
    from ..render.clear_view import show
    from ..text import t

    if command is None or req.run_from_settings:
        return command
    if sys.stdin.isatty() and _interactive():
        if typer.confirm(t("warm-run.confirm", source=show(str(source)), command=show(command)), default=False, err=True):
            return command
        typer.echo(t("warm-run.declined"), err=True)
        raise typer.Exit(1)
    raise _usage_error(t("warm-run.not_asked", source=show(str(source)), command=show(command)))


def _plan(req):
    """The plan: configs from flags, presets or the settings table; the machine looked at once."""
    from ..cache import plan as planner
    from ..cache import warm
    from ..probes import gpu, interp
    from ..text import t

    try:
        source, table = planner.settings_table(req.settings_file)
        configs = planner.configs_from_request(req, table, source)
        run = req.run if req.run is not None else _settings_run(planner.settings_run(table, configs, req), source, req)
        run_argv = None
        if run is not None:
            try:
                run_argv = tuple(shlex.split(run))
            except ValueError as exc:
                raise planner.PlanError(t("warm.error.run_parse", error=exc))
            if not run_argv:
                raise planner.PlanError(t("warm.error.run_empty"))
        if req.import_ is None:
            env = planner.gather(req, configs, table, read_interp=interp.probe, read_gpu=gpu.probe)
            plan = planner.decide(req, configs, env, table, run_argv=run_argv)
            _guard(env)
            return plan
        # A bundle is code: who wrote it, the --sha256 pin and its sizes are judged before anything
        # else, and every artifact is checked before torch sees one (cache/bundlefile, megacache).
        with warm.read_bundle(str(req.import_), req.sha256) as bundle:
            if not configs:
                configs = planner.dedupe([warm.bundle_workload(c) for c in bundle.meta.get("configs", [])])
            env = planner.gather(req, configs, table, read_interp=interp.probe, read_gpu=gpu.probe)
            plan = planner.decide(req, configs, env, table, run_argv=run_argv, bundle=bundle.meta)
            _guard(env)
            return dataclasses.replace(plan, staged=warm.stage_bundle(bundle, env.cache_dir))
    except planner.PlanError as exc:
        raise _usage_error(str(exc))


def _guard(env) -> None:
    """Compile into, and load from, only a safe cache (FD504's verdict, exit 2 with its fix); a
    missing dir is created private. Before this nothing was created."""
    named = env.cache_source == "--cache-dir"
    guard_cache_dirs(env.cache_dir, dict(os.environ, TORCHINDUCTOR_CACHE_DIR=env.cache_dir) if named else None)


def warm_cache(
    preset: Annotated[Optional[List[str]], typer.Option("--preset", metavar="NAME",
                      help="Named set of configs (repeatable): llm-causal, llm-packed, diffusers, sweep, "
                           "cpu-smoke. See --list-presets.")] = None,
    dtype: Annotated[Optional[List[str]], typer.Option("--dtype", metavar="DT",
                     help="bf16, fp16, fp32 (repeat or comma-separate: each value is a config).")] = None,
    head_dim: Annotated[Optional[List[str]], typer.Option("--head-dim", metavar="D", help="Head dims, e.g. 64,128.")] = None,
    heads: Annotated[Optional[int], typer.Option("--heads", help="Query heads (default 16).")] = None,
    kv_heads: Annotated[Optional[int], typer.Option("--kv-heads", help="K/V heads for GQA (default: --heads).")] = None,
    seq_len: Annotated[Optional[List[str]], typer.Option("--seq-len", metavar="L", help="Query lengths, e.g. 1024,4k.")] = None,
    kv_len: Annotated[Optional[int], typer.Option("--kv-len", help="K/V length (default: --seq-len).")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", help="Batch size (default 1).")] = None,
    mask: Annotated[Optional[List[str]], typer.Option("--mask", metavar="MASK",
                    help="none, causal, sliding:N (window), prefix:N (prefix-LM), document:N (N packed "
                         "documents, causal inside each). Repeatable.")] = None,
    score_mod: Annotated[Optional[List[str]], typer.Option("--score-mod", metavar="MOD",
                         help="none, softcap[:X], alibi, relative.")] = None,
    device: Annotated[Optional[str], typer.Option("--device", help="cuda (default) or cpu.")] = None,
    backward: Annotated[Optional[bool], typer.Option("--backward/--no-backward",
                        help="Compile the backward too (default: yes on cuda, no on cpu).")] = None,
    mode: Annotated[Optional[List[str]], typer.Option("--mode", metavar="MODE",
                    help="torch.compile mode, as your training compiles: default, reduce-overhead, max-autotune, "
                         "max-autotune-no-cudagraphs (repeat or comma-separate: each is a config; each mode is "
                         "its own cache entry).")] = None,
    dynamic: Annotated[Optional[bool], typer.Option("--dynamic/--no-dynamic",
                       help="torch.compile(dynamic=True): what training compiles after a shape changes. "
                            "Default static, which torch.compile's default compiles first.")] = None,
    fullgraph: Annotated[Optional[bool], typer.Option("--fullgraph/--no-fullgraph",
                         help="torch.compile(fullgraph=True), as your training compiles.")] = None,
    kernel_option: Annotated[Optional[List[str]], typer.Option("--kernel-option", metavar="KEY=VALUE",
                             help="flex_attention kernel_options, e.g. BLOCK_M=64 (repeatable): part of the "
                                  "cache key, so use the ones your training passes.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Compile configs that are already warm for this "
                                                        "environment again (default: skip them).")] = False,
    warm_config: Annotated[Optional[Path], typer.Option("--warm-config", metavar="FILE",
                           help="Read the warm settings from this TOML file ([warm] table; default: "
                                "./flexdoctor.toml [warm] or ./pyproject.toml [tool.flexdoctor.warm]).")] = None,
    old_config: Annotated[Optional[Path], typer.Option("--config", metavar="FILE", hidden=True,
                          help="Deprecated spelling of --warm-config.")] = None,
    run: Annotated[Optional[str], typer.Option("--run", metavar="CMD",
                   help="Also warm by running your own one-step command under the same cache dir "
                        "(for models compiled whole: torch.compile(model)).")] = None,
    run_from_settings: Annotated[bool, typer.Option("--run-from-settings",
                                 help="Run the `run =` command of the warm settings table (a command from a "
                                      "file: without this flag it runs only if you confirm it at a "
                                      "terminal).")] = False,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Parallel compile processes "
                    "(default: half the cores, at most 8, fewer when GPU memory is short).")] = None,
    cache_dir: Annotated[Optional[Path], typer.Option("--cache-dir", metavar="DIR",
                         help="TORCHINDUCTOR_CACHE_DIR for this run (default: what torch would use).")] = None,
    export: Annotated[Optional[Path], typer.Option("--export", metavar="FILE",
                      help="Write a portable cache bundle (torch's mega-cache, torch >= 2.7) and print its "
                           "sha256. A bundle is code, like a wheel: share it only where others cannot "
                           "change it.")] = None,
    import_: Annotated[Optional[Path], typer.Option("--import", metavar="FILE",
                       help="Load a bundle written by --export into the cache dir, then verify that a fresh "
                            "process's first call is as fast as the exporter's. A bundle runs code as you "
                            "(torch loads its pickles and generated code): only a file you or root own, in a "
                            "folder only you or root can write, is loaded; pin it with --sha256.")] = None,
    sha256: Annotated[Optional[str], typer.Option("--sha256", metavar="HEX",
                      help="With --import: load the bundle only if its sha256 is HEX (printed by --export).")] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Skip the fresh-process cache-hit proof.")] = False,
    measure: Annotated[Optional[bool], typer.Option("--measure/--no-measure",
                       help="After every fresh process hit, time the warm start as it is and with "
                            "TORCHINDUCTOR_COMPILE_THREADS=1 (--measure-runs fresh processes each, interleaved) and "
                            "advise the setting for training only if it was faster on this machine. Default: "
                            "measure when the warm process started Inductor's compile-worker pool (the one thing "
                            "the setting changes once every graph hits); --no-measure never.")] = None,
    measure_runs: Annotated[int, typer.Option("--measure-runs", metavar="N",
                            help="Fresh processes per side when measuring (the median counts).")] = 2,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT",
                   help="text (default), json (schema: flexdoctor/schema/warm.schema.json) or markdown. "
                        "Progress goes to stderr.")] = "text",
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds allowed per compile process.")] = 900.0,
    python: Annotated[Optional[str], typer.Option("--python", metavar="PATH",
                      help="Interpreter to compile with (the one your training runs with).")] = None,
    list_presets: Annotated[bool, typer.Option("--list-presets", help="List the presets and exit.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour (also: NO_COLOR=1).")] = False,
) -> None:
    """Pre-compile FlexAttention kernels into the compile cache, and prove the cache hits.

    Really runs torch.compile(flex_attention) (forward, and backward on GPU) in the target
    interpreter, one subprocess per config, in parallel; then a fresh process per config must
    hit the cache. Writes a manifest into the cache dir; `flexdoctor check` reads it.

    Configs already warm for this environment are skipped without starting torch: the manifest
    names the environment (torch, its build, Triton, CUDA, the GPU; read from files and NVML, not
    by importing torch), the compile environment variables and each config, and their cache
    entries must still be there. --force compiles them again.

    Examples:

      flexdoctor warm-cache --preset llm-causal

      flexdoctor warm-cache --preset llm-causal --mode max-autotune-no-cudagraphs

      flexdoctor warm-cache --dtype bf16,fp16 --head-dim 64,128 --mask causal,none --seq-len 2k

      flexdoctor warm-cache --cache-dir /data/inductor --preset diffusers --export cache.zip

      flexdoctor warm-cache --cache-dir /data/inductor --import cache.zip --sha256 HEX

      flexdoctor warm-cache --run "python train.py --max-steps 1"
    """
    # Long only because typer declares each option in the signature; the body is parse -> plan ->
    # run -> render, each a call into its own module.
    from ..cache import plan as planner
    from ..cache import warm
    from ..render import warm_view
    from ..text import t
    from ..workload import make

    if list_presets:
        typer.echo(warm_view.presets(planner.PRESETS, lambda raw: make(**raw).name), nl=False)
        raise typer.Exit(0)
    if jobs is not None and jobs < 1:
        raise _usage_error(t("warm.error.jobs"))
    if timeout <= 0:
        raise _usage_error(t("warm.error.timeout"))
    if fmt not in FORMATS:
        raise _usage_error(t("cli.error.format", value=fmt, choices=", ".join(FORMATS)))
    if measure_runs < 1:
        raise _usage_error(t("cli.error.not_positive", flag="--measure-runs"))
    if sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        raise _usage_error(t("warm-bundle.sha256_form", value=sha256))
    if sha256 is not None and import_ is None:
        raise _usage_error(t("warm-bundle.sha256_needs_import"))
    target = choose_for_worker(python)
    require_safe_python(target)  # as root: nothing a non-root user can change is started
    if run:
        require_safe_command(shlex.split(run))
    require_worker_python(python, target)
    req = _request(
        _split(preset), {"dtype": _split(dtype), "head_dim": _split(head_dim), "seq_len": _split(seq_len),
                         "mask": _split(mask), "score_mod": _split(score_mod)},
        {"heads": heads, "kv_heads": kv_heads, "kv_len": kv_len, "batch": batch, "device": device,
         "backward": backward},
        _split(mode), dynamic, fullgraph, _split(kernel_option),
        settings_file=renamed(warm_config, old_config, "--warm-config", "--config"), run=run,
        run_from_settings=run_from_settings, jobs=jobs,
        cache_dir=cache_dir, export=export, import_=import_, sha256=sha256, verify=not no_verify, force=force,
        timeout=timeout, python=target, measure=measure, measure_runs=measure_runs,
        run_stdout=sys.stderr.fileno() if fmt == "json" else None)  # JSON on stdout stays parseable
    plan = _plan(req)
    try:
        _run(plan, req, target, no_color, fmt)
    finally:
        warm.discard(plan)  # the checked --import blobs, whatever happened


FORMATS = ("text", "json", "markdown")


def _say(err):
    """Progress lines of warm.execute: they hold paths, commands and a bundle's environment, all
    outside text, shown escaped (render/_escape.py)."""
    from ..render._escape import for_terminal, no_commands

    return lambda s: err.print(no_commands(for_terminal(s)), markup=False)


def _echo_err(line: str) -> None:
    from ..render._escape import for_terminal, no_commands

    typer.echo(no_commands(for_terminal(line)), err=True)


def _report(result, fmt: str, no_color: bool) -> str:
    from ..render import warm_json, warm_markdown, warm_view

    if fmt == "json":
        return warm_json.render(result)
    if fmt == "markdown":
        return warm_markdown.render(result)
    return warm_view.render(result, color=_color(no_color), width=shutil.get_terminal_size((120, 24)).columns)


def _run(plan, req, target: str, no_color: bool, fmt: str = "text") -> None:
    """Show the plan, run it, render the result; raises typer.Exit with the exit code."""
    from ..cache import warm
    from ..render import warm_view
    from ..text import t
    from ..worker import lifetime

    err = _console(stderr=True, no_color=no_color)
    err.print(warm_view.header(plan, target), markup=False)
    outcomes = warm.outcomes(plan)
    view = warm_view.LiveView(outcomes, err, live=_interactive(), echo=lambda s: typer.echo(s, err=True))
    try:
        result = warm.execute(plan, req, outcomes, on_update=view.update, live=view, say=_say(err))
    except warm.ImportFailed as exc:
        if exc.usage:
            raise _usage_error(t("warm.error.import_failed", error=exc))
        _echo_err(t("warm.import_failed", path=req.import_, error=exc))
        raise typer.Exit(1)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP: the CLI entry prints the line and exits 128+n
        lifetime.note(t("stopped.manifest_untouched"))
        raise
    typer.echo(_report(result, fmt, no_color), nl=False)
    sys.stdout.flush()
    for line in result.write_errors:  # a full disk: the results are shown first, then one line, exit 2
        _echo_err(t("cli.usage_error", message=line))
    raise typer.Exit(2 if result.write_errors else 1 if result.failed else 0)
