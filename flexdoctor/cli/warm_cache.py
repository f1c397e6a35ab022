"""The ``warm-cache`` command: pre-compile FlexAttention kernels into the compile cache and prove
the cache hits. Usage errors exit 2 with one line; exit 1 when any config failed or a fresh
process did not hit the cache.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from ..cliutil import resolve_python
from ..cliutil import split as _split
from ..cliutil import usage_error as _usage_error
from ._common import _console, _interactive, _size, require_worker_python
from ._safety import guard_cache_dirs


def _secs(v: Optional[float]) -> str:
    return "—" if v is None else f"{v:.2f}"


def _ints(values: Optional[List[str]], flag: str) -> list:
    """Whole numbers; "4k" means 4096, as in `bench -L 4k`."""
    out = []
    for w in _split(values):
        low = w.lower()
        try:
            out.append(int(low[:-1]) * 1024 if low.endswith("k") else int(low))
        except ValueError:
            raise _usage_error(f"{flag}: expected whole numbers (4096 or 4k), got {w!r}")
    return out


# --------------------------------------------------------------------------- warm-cache

class _Display:
    """A live table per config on a terminal; plain event lines in logs and CI."""

    def __init__(self, outcomes: list, live: bool):
        self.outcomes, self.live_on, self.live = outcomes, live, None
        self._last: dict = {}

    def __enter__(self) -> "_Display":
        if self.live_on:
            from rich.live import Live

            self.live = Live(self._table(), console=_console(stderr=True), refresh_per_second=4, transient=True)
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def _table(self):
        from rich.table import Table

        table = Table(box=None, show_header=True, header_style="bold")
        for col in ("config", "state", "stage", "s"):
            table.add_column(col)
        now = time.monotonic()
        for o in self.outcomes:
            el = "" if o.started is None else f"{(o.wall_s if o.state in ('compiled', 'done', 'failed') else now - o.started):.1f}"
            table.add_row(o.config.name, o.state, o.stage or "", el)
        return table

    def update(self) -> None:
        if self.live is not None:
            self.live.update(self._table())
            return
        for i, o in enumerate(self.outcomes):
            key = (o.state, o.stage if o.state in ("compiling", "verifying") else None)
            if self._last.get(i) != key:
                self._last[i] = key
                if o.state == "queued":
                    continue
                extra = f" ({o.stage})" if o.stage and o.state in ("compiling", "verifying") else ""
                if o.state in ("compiled", "done"):
                    extra = f" in {_secs(o.wall_s)} s"
                if o.state == "failed":
                    extra = f": {(o.error or '').splitlines()[-1][:160] if o.error else ''}"
                typer.echo(f"[{i + 1}/{len(self.outcomes)}] {o.config.name}: {o.state}{extra}", err=True)


def _render_table(outcomes: list, console, verified: bool) -> None:
    from rich.table import Table

    table = Table(title="flexdoctor warm-cache", title_justify="left")
    table.add_column("config")
    table.add_column("status")
    table.add_column("compile s", justify="right")
    if verified:
        table.add_column("warm first call s", justify="right")
        table.add_column("cache hit/miss", justify="right")
    for o in outcomes:
        row = [o.config.name, o.status(), _secs((o.cold or {}).get("first_call_s"))]
        if verified:
            c = (o.warm or {}).get("counters") or {}
            hm = f"{c.get('fxgraph_cache_hit', 0)}/{c.get('fxgraph_cache_miss', 0)}" if c else "—"
            if c.get("autograd_cache_hit") or c.get("autograd_cache_miss"):
                hm += f" (aot {c.get('autograd_cache_hit', 0)}/{c.get('autograd_cache_miss', 0)})"
            row += [_secs((o.warm or {}).get("first_call_s")), hm]
        table.add_row(*row)
    console.print(table)


def _gpu_memory() -> tuple[Optional[bool], Optional[int]]:
    """(NVIDIA GPU present?, memory of the smallest GPU) from NVML, no torch import."""
    try:
        from ..probes import gpu

        facts = gpu.probe()
    except Exception:
        return None, None
    if facts.nvml != "ok":
        return (False if facts.nvml == "no-library" and not facts.device_nodes else None), None
    mems = [d.memory_total_bytes for d in facts.devices if d.memory_total_bytes]
    return bool(facts.devices), (min(mems) if mems else None)


def _driver() -> Optional[str]:
    try:
        from ..probes import gpu

        facts = gpu.probe()
        return facts.driver_version if facts.nvml == "ok" else None
    except Exception:
        return None


def _torch_version(python: str) -> Optional[str]:
    try:
        from ..probes import interp

        _, torch = interp.probe(python)
        return getattr(torch, "version", None)
    except Exception:
        return None


def _cache_switches_off(python: str) -> list:
    """The cache switches in this environment that turn caching off, parsed as the target
    interpreter's torch and Triton parse them (cache/envflags.py)."""
    from ..cache import envflags, locations

    if not any(os.environ.get(n) is not None for n in envflags.NAMES):
        return []
    try:
        from ..probes import interp

        py, torch = interp.probe(python)
        pk = getattr(py, "packages", None) or {}
        triton = next((pk[n] for n in ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-windows")
                       if n in pk), None)
        return locations.disabled_by(torch_version=getattr(torch, "version", None), triton_version=triton)
    except Exception:
        return locations.disabled_by()


def warm_cache(
    preset: Annotated[Optional[List[str]], typer.Option("--preset", metavar="NAME",
                      help="Named set of configs (repeatable): llm-causal, llm-packed, diffusers, sweep, "
                           "cpu-smoke. See --list-presets.")] = None,
    dtype: Annotated[Optional[List[str]], typer.Option("--dtype", metavar="DT",
                     help="bf16, fp16, fp32 (repeat or comma-separate: each value is a config).")] = None,
    head_dim: Annotated[Optional[List[str]], typer.Option("--head-dim", metavar="D", help="Head dims, e.g. 64,128.")] = None,
    heads: Annotated[Optional[int], typer.Option("--heads", help="Query heads (default 16).")] = None,
    kv_heads: Annotated[Optional[int], typer.Option("--kv-heads", help="K/V heads for GQA (default: --heads).")] = None,
    seq_len: Annotated[Optional[List[str]], typer.Option("--seq-len", metavar="L", help="Query lengths, e.g. 1024,4096.")] = None,
    kv_len: Annotated[Optional[int], typer.Option("--kv-len", help="K/V length (default: --seq-len).")] = None,
    batch: Annotated[Optional[int], typer.Option("--batch", help="Batch size (default 1).")] = None,
    mask: Annotated[Optional[List[str]], typer.Option("--mask", metavar="MASK",
                    help="none, causal, sliding:N (window), prefix:N (prefix-LM), document:N (N packed "
                         "documents, causal inside each). Repeatable.")] = None,
    score_mod: Annotated[Optional[List[str]], typer.Option("--score-mod", metavar="MOD",
                         help="none, softcap[:X], alibi, relative.")] = None,
    dynamic: Annotated[bool, typer.Option("--dynamic", help="Compile with dynamic shapes "
                                          "(torch.compile(dynamic=True)); default static.")] = False,
    device: Annotated[Optional[str], typer.Option("--device", help="cuda (default) or cpu.")] = None,
    backward: Annotated[Optional[bool], typer.Option("--backward/--no-backward",
                        help="Compile the backward too (default: yes on cuda, no on cpu).")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", metavar="FILE",
                      help="Read [warm] from this TOML file (default: ./flexdoctor.toml [warm] or "
                           "./pyproject.toml [tool.flexdoctor.warm]).")] = None,
    run: Annotated[Optional[str], typer.Option("--run", metavar="CMD",
                   help="Also warm by running your own one-step command under the same cache dir "
                        "(for models compiled whole).")] = None,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Parallel compile processes "
                    "(default: half the cores, at most 8, fewer when GPU memory is short).")] = None,
    cache_dir: Annotated[Optional[Path], typer.Option("--cache-dir", metavar="DIR",
                         help="TORCHINDUCTOR_CACHE_DIR for this run (default: what torch would use).")] = None,
    export: Annotated[Optional[Path], typer.Option("--export", metavar="FILE",
                      help="Write a portable cache bundle (torch's mega-cache, torch >= 2.7).")] = None,
    import_: Annotated[Optional[Path], typer.Option("--import", metavar="FILE",
                       help="Load a bundle written by --export into the cache dir, then verify it.")] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Skip the fresh-process cache-hit proof.")] = False,
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

    Examples:

      flexdoctor warm-cache --preset llm-causal

      flexdoctor warm-cache --dtype bf16,fp16 --head-dim 64,128 --mask causal,none --seq-len 2048

      flexdoctor warm-cache --cache-dir /data/inductor --preset diffusers --export cache.zip

      flexdoctor warm-cache --cache-dir /data/inductor --import cache.zip

      flexdoctor warm-cache --run "python train.py --max-steps 1"
    """
    from .. import __version__
    from ..cache import locations, warm
    from ..cache import manifest as mf
    from ..cache.clear import shared
    from ..text import t
    from ..worker import lifetime

    if list_presets:
        for name, (doc, cfgs) in warm.PRESETS.items():
            typer.echo(f"{name:12s} {doc}")
            for raw in cfgs:
                typer.echo(f"{'':12s}   {warm.make(**raw).name}")
        raise typer.Exit(0)

    target = resolve_python(python)
    require_worker_python(python, target)
    if jobs is not None and jobs < 1:
        raise _usage_error("--jobs must be at least 1")
    if timeout <= 0:
        raise _usage_error("--timeout must be positive")

    # ---- configurations
    try:
        source, table = warm.from_file(config)
        flag_axes = {"dtype": _split(dtype), "head_dim": _ints(head_dim, "--head-dim"),
                     "seq_len": _ints(seq_len, "--seq-len"), "mask": _split(mask), "score_mod": _split(score_mod)}
        flag_axes = {k: v for k, v in flag_axes.items() if v}
        scalars = {"heads": heads, "kv_heads": kv_heads, "kv_len": kv_len, "batch": batch, "device": device,
                   "backward": backward, "shapes": "dynamic" if dynamic else None}
        scalars = {k: v for k, v in scalars.items() if v is not None}
        configs: list = []
        for name in _split(preset):
            for c in warm.preset(name, device):
                if backward is not None and backward != c.backward:
                    c = warm.make(**{**c.to_dict(), "backward": backward})
                configs.append(c)
        if flag_axes or (scalars and not preset):
            configs += warm.product({**flag_axes, **scalars})
        if not preset and not flag_axes and table:
            configs += warm.configs_from_table(table, str(source))
        configs = warm.dedupe(configs)
    except warm.ConfigError as exc:
        raise _usage_error(str(exc))

    if run is None and table.get("run") and not configs and not preset:
        run = str(table["run"])
    run_argv = None
    if run is not None:
        try:
            run_argv = shlex.split(run)
        except ValueError as exc:
            raise _usage_error(f"--run: {exc}")
        if not run_argv:
            raise _usage_error("--run: empty command")

    bundle = None
    if import_ is not None:
        try:
            bundle = warm.read_bundle(str(import_))
        except warm.ConfigError as exc:
            raise _usage_error(str(exc))
        if not configs:
            configs = warm.dedupe([warm.WarmConfig.from_dict(c) for c in bundle.get("configs", [])])

    if not configs and run_argv is None and bundle is None:
        raise _usage_error("nothing to warm: give --preset NAME (see --list-presets), config flags "
                           "(--dtype/--head-dim/--mask ...), --run CMD, --import FILE, or a [warm] table "
                           "in flexdoctor.toml / [tool.flexdoctor.warm] in pyproject.toml")
    if export is not None and not configs:
        raise _usage_error("--export needs configs to compile (the bundle holds what they compile)")

    # ---- cache dir and environment
    if cache_dir is None and table.get("cache_dir"):
        cache_dir = Path(str(table["cache_dir"]))
    if cache_dir is not None:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.abspath(os.path.expanduser(str(cache_dir)))
    loc = locations.inductor()
    root = loc.path
    off = _cache_switches_off(target)
    if off:
        raise _usage_error(f"compile caching is turned off by {', '.join(off)}: warming cannot help "
                           "(your training run would not read the cache either); unset it first")
    guard_cache_dirs(root)  # the FD504 verdict (exit 2 when unsafe); a missing dir is made 0700
    if not os.access(root, os.W_OK | os.X_OK):
        raise _usage_error(f"cache dir {root} is not writable")

    if (export is not None or bundle is not None):
        from packaging.version import InvalidVersion, Version

        tv = _torch_version(target)
        try:
            too_old = tv is not None and Version(Version(tv).base_version) < Version("2.7")
        except InvalidVersion:
            too_old = False
        if too_old:
            flag = "--export" if export is not None else "--import"
            raise _usage_error(f"{flag} needs torch >= 2.7 (torch.compiler.save_cache_artifacts / "
                               f"load_cache_artifacts); {target} has torch {tv}")

    has_gpu, gpu_mem = (None, None)
    if any(c.device == "cuda" for c in configs):
        has_gpu, gpu_mem = _gpu_memory()
        if has_gpu is False:
            raise _usage_error("no NVIDIA GPU here: add --device cpu (flex compiles on the CPU for "
                               "inference, torch >= 2.6) or warm on the GPU machine")
    n_jobs = jobs or (table.get("jobs") if isinstance(table.get("jobs"), int) else None) \
        or warm.default_jobs(configs or [warm.make(device="cpu")], gpu_mem)

    err = _console(stderr=True, no_color=no_color)
    outc = _console(no_color=no_color)
    verify = not no_verify
    outcomes = [warm.Outcome(c) for c in configs]
    display = _Display(outcomes, live=_interactive())
    runner = warm.Runner(target, root, n_jobs, timeout=timeout, on_update=display.update)
    failed = False
    extra: dict = {}
    started_at = mf.now()
    t_all = time.monotonic()
    export_dir = tempfile.mkdtemp(prefix="flexdoctor-export-") if export is not None else None
    try:
        with shared(root):
            before = mf.entries(root)
            err.print(f"cache dir: {root}  ({loc.source}); {len(configs)} config(s), {n_jobs} job(s); "
                      f"interpreter {target}")
            if bundle is not None:
                res = runner.import_bundle(str(import_))
                if not res.get("ok"):
                    if res.get("error_kind") == "no-mega-cache":
                        raise _usage_error(f"--import: {res.get('error')}")
                    typer.echo(f"flexdoctor: error: --import {import_}: {res.get('error')}", err=True)
                    raise typer.Exit(1)
                changed = mf.compare(bundle["fingerprint"], res.get("fingerprint") or {})
                loaded = res.get("loaded", [])
                err.print(f"imported {len(loaded)} artifact blob(s), "
                          f"{_size(sum(x.get('bytes', 0) for x in loaded))} from {import_}")
                if changed:
                    err.print("[yellow]warning[/]: the bundle was built for another environment ("
                              + "; ".join(f"{k} {a} -> {b}" for k, a, b in changed)
                              + "): its entries will not be hit here")
                extra["imported_from"] = str(import_)
            compile_wall = verify_wall = None
            if configs:
                with display:
                    if bundle is None:
                        compile_wall = runner.compile(outcomes, None if verify else export_dir)
                    if verify or bundle is not None:
                        verify_wall = runner.verify(outcomes, export_dir)
                    display.update()
            run_info = None
            if run_argv is not None:
                err.print(f"running your command under {root}: {run}")
                first = warm.run_command(run_argv, root)
                run_info = {"command": run, "first": first}
                if first["error"] is None and verify:
                    err.print("running it again in a fresh process to check it hits the cache")
                    run_info["second"] = warm.run_command(run_argv, root)
            fp_res = None
            for o in outcomes:
                for r in (o.warm, o.cold):
                    if r and r.get("fingerprint") and (fp_res is None or o.config.device == "cuda"):
                        fp_res = r["fingerprint"]
            if fp_res is None:
                fp_res = (runner.fingerprint() or {}).get("fingerprint") or {}
            fp = dict(fp_res)
            fp["driver"] = _driver()
            after = mf.entries(root)
            extra["last_run"] = {"started_at": started_at, "jobs": n_jobs, "verify": verify,
                                 "compile_wall_s": compile_wall, "verify_wall_s": verify_wall,
                                 "total_s": round(time.monotonic() - t_all, 3), "python": target}
            if run_info:
                extra["run"] = run_info
            write_errors = []  # a full disk: the results are still shown, then one line, exit 2
            if export is not None:
                try:
                    size = warm.write_bundle(str(export), export_dir, outcomes, fp, __version__)
                    extra["last_run"]["export"] = {"path": os.path.abspath(str(export)), "bytes": size}
                except OSError as exc:
                    write_errors.append(t("exit.not_written", what=export, error=exc.strerror or exc))
            try:
                old = mf.read(root)
            except ValueError:
                old = None
            warmed = [o.record() for o in outcomes if not o.failed]
            run_ok = bool(run_info) and not run_info["first"]["error"]
            mpath = None
            if warmed or run_ok:  # a run that warmed nothing must not make `check` call the cache warm
                data = mf.merge(old, fp, warmed, after - before, root, __version__, extra)
                try:
                    mpath = mf.write(root, data)
                except OSError as exc:
                    write_errors.append(t("exit.not_written", what=locations.manifest_path(root),
                                          error=exc.strerror or exc))
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP: the CLI entry prints the line and exits 128+n
        runner.kill_all()
        lifetime.note(t("stopped.manifest_untouched"))
        raise
    finally:
        if export_dir:
            shutil.rmtree(export_dir, ignore_errors=True)

    # ---- report
    if outcomes:
        _render_table(outcomes, outc, verified=verify or bundle is not None)
    for o in outcomes:
        if o.failed:
            failed = True
            outc.print(f"[red]✗[/] {o.config.name}: {o.error_stage + ': ' if o.error_stage else ''}"
                       f"{(o.error or '').strip().splitlines()[-1] if o.error else 'failed'}")
            _print_fixes(outc, o.kb)
        elif o.hit is False:
            failed = True
            outc.print(f"[yellow]![/] {o.config.name}: a fresh process did not hit the cache "
                       f"({o.warm.get('counters')})")
    if run_info:
        first = run_info["first"]
        if first["error"]:
            failed = True
            outc.print(f"[red]✗[/] --run {run}: {first['error']}")
        else:
            line = f"--run: first run {first['seconds']:.1f} s, {len(first['new_entries'])} new cache entries"
            second = run_info.get("second")
            if second:
                line += (f"; second run {second['seconds']:.1f} s, {len(second['new_entries'])} new entries"
                         + (" (all from the cache)" if not second["new_entries"] else ""))
                if second["error"]:
                    failed = True
            outc.print(line)
    hits = [o for o in outcomes if o.hit is not None]
    if hits:
        ok = sum(1 for o in hits if o.hit)
        outc.print(f"cache hits in fresh processes: {ok}/{len(hits)} configs ({100 * ok // len(hits)}%)")
    lr = extra.get("last_run", {})
    if lr.get("compile_wall_s") is not None:
        outc.print(f"warm-up: {lr['compile_wall_s']:.1f} s for {len(outcomes)} config(s) with {n_jobs} job(s)")
    if export is not None and "export" in lr:
        outc.print(f"exported {_size(lr.get('export', {}).get('bytes'))} to {export} "
                   f"(load it with: flexdoctor warm-cache --import {export} --cache-dir DIR)")
    if not write_errors:
        outc.print(f"manifest: {mpath}" if mpath else "manifest: unchanged (nothing was warmed)")
    outc.print(f"use this cache at training time: export TORCHINDUCTOR_CACHE_DIR={shlex.quote(root)}")
    if locations.in_temp(root):
        outc.print("[yellow]note[/]: this cache is under a temporary directory, often wiped on reboot and "
                   "private to a container; pick a persistent --cache-dir")
    for line in write_errors:
        typer.echo(f"flexdoctor: error: {line}", err=True)
    raise typer.Exit(2 if write_errors else 1 if failed else 0)


def _print_fixes(console, ids: list) -> None:
    from .. import knowledge as kb

    for ref in ids[:2]:
        try:
            entry = kb.get(ref)
        except KeyError:
            continue
        fix = entry.render()
        console.print(f"    {entry.id} {entry.title}: {fix.summary}")
        for cmd in fix.commands:
            console.print(f"      $ {cmd}", markup=False)
