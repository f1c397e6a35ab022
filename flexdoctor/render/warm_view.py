"""Output of `flexdoctor warm-cache`: a live table while it runs (plain lines in logs and CI), then
the result table and the summary lines. Words come from locale/en.warm.toml.

The result is ``cache.warm.WarmResult``: the plan (what was already warm, what compiled) and one
outcome per config. Statuses are stable identifiers in the manifest ("warm (verified)" ...);
here they are shown in the user's language.
"""

from __future__ import annotations

import io
import shlex
import time
from typing import Any, Callable, Optional

from ..text import human_bytes, seconds, t
from ._escape import for_terminal as _x
from ._escape import no_commands

STATUS_KEYS = {"failed": "failed", "missed": "missed", "already warm": "already_warm",
               "warm (verified)": "verified", "compiled": "compiled"}
STATUS_KEYS_BUNDLE = {"imported (slow)": "warm-bundle.status.slow", "imported (not timed)": "warm-bundle.status.untimed"}
FINISHED = ("compiled", "done", "failed", "skipped")


def status_word(status: str) -> str:
    if status in STATUS_KEYS_BUNDLE:
        return t(STATUS_KEYS_BUNDLE[status])
    key = STATUS_KEYS.get(status)
    return t(f"warm.status.{key}") if key else status


def compile_seconds(o: Any) -> Optional[float]:
    """The one time shown for a config's compile, in the progress line, the table and (summed up as
    the span of the runs) the summary: the wall time of its compile process, from start to exit,
    which is what the user waits for (the first call alone is in the manifest as compile_s)."""
    return (o.cold or {}).get("wall_s")


def state_word(state: str) -> str:
    return t(f"warm.state.{state}") if state in ("queued", "compiling", "compiled", "verifying", "measuring", "done",
                                                  "failed", "skipped") else state


TOP_PHASES = 3  # phases named per config (the largest), after its fresh process's wall time


def top_phases(process: dict, count: int = TOP_PHASES) -> list:
    """(phase, seconds) of a timed fresh process, the largest first (warm.process_times)."""
    phases = [p for p in process.get("phases") or [] if p.get("seconds", 0) > 0]
    return [(p["name"], p["seconds"]) for p in sorted(phases, key=lambda p: -p["seconds"])[:count]]


def phase_word(name: str) -> str:
    from ..text import has

    return t(f"trace.phase.{name}") if has(f"trace.phase.{name}") else name


def process_line(o: Any) -> Optional[str]:
    """One config's fresh verification process: its wall time and its largest phases."""
    p = o.process
    if not p:
        return None
    if not p.get("booted"):
        return t("warm-trace.process_unsplit", name=o.workload.name, wall=seconds(p["wall_s"]))
    parts = t("warm-trace.sep").join(t("warm-trace.phase", phase=phase_word(n), seconds=seconds(v))
                                     for n, v in top_phases(p))
    return t("warm-trace.process", name=o.workload.name, wall=seconds(p["wall_s"]), phases=parts)


def quote(value: Any) -> str:
    return shlex.quote(str(value))


def settings_words(settings: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in settings.items())


def use_line(result: Any) -> str:
    """"use this cache at training time", with the settings measured faster on this machine."""
    root = shlex.quote(result.plan.env.cache_dir)
    m = result.measured
    if m is not None and m.helped:
        return t("warm-trace.use_with", root=root, settings=settings_words(m.settings))
    return t("warm.use", root=root)


def measured_line(m: Any) -> Optional[str]:
    """What the measurement of the warm start's settings found, with its numbers."""
    if m is None:
        return None
    args = {"settings": settings_words(m.settings), "config": m.config or "?", "runs": m.runs}
    if m.reason in ("faster", "not_faster"):
        args.update(without=seconds(m.without_s), with_=seconds(m.with_s), saved=seconds(m.saved_s),
                    ratio=f"{m.ratio:.2f}")
    return t(f"warm-trace.measured.{m.reason}", **args)


def pool_line(m: Any) -> Optional[str]:
    if m is None or m.reason not in ("faster", "not_faster") or m.pool_without is None or m.pool_with is None:
        return None
    return t("warm-trace.pool", without=seconds(m.pool_without), with_=seconds(m.pool_with),
             settings=settings_words(m.settings))


def _last_line(text: Optional[str], limit: int = 160) -> str:
    lines = (text or "").strip().splitlines()
    return lines[-1][:limit] if lines else ""


class LiveView:
    """Progress on stderr: a live table per config on a terminal; plain event lines otherwise.
    ``update()`` may be called from worker threads."""

    def __init__(self, outcomes: list, console: Any, live: bool, echo: Callable[[str], None]):
        self.outcomes, self.console, self.live_on, self.echo = outcomes, console, live, echo
        self.live = None
        self._last: dict = {}

    def __enter__(self) -> "LiveView":
        if self.live_on:
            from rich.live import Live

            self.live = Live(self._table(), console=self.console, refresh_per_second=4, transient=True)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)
            self.live = None

    def _table(self):
        from rich.table import Table

        table = Table(box=None, show_header=True, header_style="bold")
        for col in ("col_config", "col_state", "col_stage", "col_seconds"):
            table.add_column(t(f"warm.{col}"))
        now = time.monotonic()
        for o in self.outcomes:
            el = "" if o.started is None else f"{(o.wall_s if o.state in FINISHED else now - o.started):.1f}"
            table.add_row(_x(o.workload.name), state_word(o.state), _x(o.stage or ""), el)
        return table

    def update(self) -> None:
        if self.live is not None:
            self.live.update(self._table())
            return
        for i, o in enumerate(self.outcomes):
            key = (o.state, o.stage if o.state in ("compiling", "verifying", "measuring") else None)
            if self._last.get(i) == key:
                continue
            self._last[i] = key
            if o.state in ("queued", "skipped"):
                continue
            extra = f" ({o.stage})" if o.stage and o.state in ("compiling", "verifying", "measuring") else ""
            if o.state in ("compiled", "done"):
                extra = t("warm.live.took", seconds=seconds(compile_seconds(o) if o.state == "compiled" else o.wall_s))
            if o.state == "failed":
                extra = f": {_last_line(o.error)}"
            self.echo(no_commands(_x(t("warm.live.line", index=i + 1, total=len(self.outcomes), name=o.workload.name,
                                       state=state_word(o.state), extra=extra))))


def header(plan: Any, python: str) -> str:
    return no_commands(_x(t("warm.header", root=plan.env.cache_dir, source=plan.env.cache_source,
                            count=len(plan.steps), jobs=plan.jobs, python=python)))


def _hits(counters: dict) -> str:
    if not counters:
        return "—"
    out = f"{counters.get('fxgraph_cache_hit', 0)}/{counters.get('fxgraph_cache_miss', 0)}"
    if counters.get("autograd_cache_hit") or counters.get("autograd_cache_miss"):
        out += f" (aot {counters.get('autograd_cache_hit', 0)}/{counters.get('autograd_cache_miss', 0)})"
    return out


def _table(result: Any, console: Any) -> None:
    from rich.table import Table

    verified = result.verified
    table = Table(title=t("warm.table_title"), title_justify="left")
    # On a narrow terminal the config's name (its identity) wraps onto a second line rather than the
    # numbers being cut to "16.…": every column but the name keeps its values whole.
    # (min_width: the widest value, so only the header may wrap; a header in a language written
    # without spaces cannot, and would squeeze the names otherwise.)
    rows = []
    for o in result.outcomes:
        row = [_x(o.workload.name), status_word(o.status()), seconds(compile_seconds(o))]
        if verified:
            row += [seconds((o.warm or {}).get("first_call_s")), _hits((o.warm or {}).get("counters") or {})]
        rows.append(row)

    def widest(i: int) -> int:
        from rich.cells import cell_len

        return max((cell_len(r[i]) for r in rows), default=1)

    table.add_column(t("warm.col_config"), overflow="fold")
    table.add_column(t("warm.col_status"), no_wrap=True)
    table.add_column(t("warm.col_compile"), justify="right", min_width=widest(2))
    if verified:
        table.add_column(t("warm.col_warm_first"), justify="right", min_width=widest(3))
        table.add_column(t("warm.col_hits"), justify="right", min_width=min(widest(4), 8))
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _fixes(console: Any, ids: list) -> None:
    from .. import knowledge as kb

    for ref in ids[:2]:
        try:
            entry = kb.get(ref)
        except KeyError:
            continue
        fix = entry.render()
        console.print(_x(f"    {entry.id} {entry.title}: {fix.summary}"), markup=False)
        for cmd in fix.commands:
            console.print(f"      $ {_x(cmd)}", markup=False)


def _problems(result: Any, console: Any) -> None:
    for o in result.outcomes:
        if o.failed:
            error = _last_line(o.error) or status_word("failed")
            console.print(_x(t("warm.failed", name=o.workload.name,
                               error=(f"{o.error_stage}: " if o.error_stage else "") + error)),
                          style="red", markup=False)
            _fixes(console, o.kb)
        elif o.hit is False:
            console.print(_x(t("warm.missed", name=o.workload.name, counters=(o.warm or {}).get("counters"))),
                          style="yellow", markup=False)
        else:
            _import_line(o, console)


def _import_line(o: Any, console: Any) -> None:
    """An imported config that hit but was not proven fast: say the two times and what a bundle
    cannot carry (FACTS §11; torch/compiler/_cache.py: graph entries and autotune results only)."""
    status = o.status()
    if status == "imported (slow)":
        what = t("warm-bundle.cannot_carry_cpu" if o.workload.device == "cpu" else "warm-bundle.cannot_carry_cuda")
        console.print(_x(t("warm-bundle.import_slow", name=o.workload.name,
                        imported=f"{(o.warm or {}).get('first_call_s', 0):.1f}",
                        exported=f"{o.exported_first_call_s:.1f}", what=what)), style="yellow", markup=False)
    elif status == "imported (not timed)":
        console.print(_x(t("warm-bundle.import_untimed", name=o.workload.name,
                        imported=f"{(o.warm or {}).get('first_call_s', 0):.1f}")), markup=False)


def _run_lines(result: Any, console: Any) -> None:
    info = result.run
    if not info:
        return
    first = info["first"]
    if first["error"]:
        console.print(_x(t("warm.run_failed", command=info["command"], error=first["error"])), style="red",
                      markup=False)
        return
    line = t("warm.run_first", seconds=f"{first['seconds']:.1f}", entries=len(first["new_entries"]))
    second = info.get("second")
    if second:
        line += t("warm.run_second", seconds=f"{second['seconds']:.1f}", entries=len(second["new_entries"]))
        if not second["new_entries"]:
            line += t("warm.run_all_cached")
    console.print(line, markup=False)


def render(result: Any, color: bool = False, width: int = 100) -> str:
    """The report printed on stdout when warm-cache ends."""
    from ._common import console as make_console

    buf = io.StringIO()
    console = make_console(file=buf, force_terminal=color, no_color=not color, width=max(width, 100),
                      highlight=False, soft_wrap=False)
    plan = result.plan
    if result.outcomes:
        _table(result, console)
    _problems(result, console)
    for o in result.outcomes:
        line = process_line(o)
        if line:
            console.print(_x(line), markup=False)
    _run_lines(result, console)
    hits = [o for o in result.outcomes if o.hit is not None]
    if hits:
        ok = sum(1 for o in hits if o.hit)
        console.print(t("warm.hits", ok=ok, total=len(hits), percent=100 * ok // len(hits)), markup=False)
    compiled = [o for o in result.outcomes if o.state != "skipped"]
    span = _compile_span(compiled)
    span = result.compile_wall_s if span is None else span  # a result recorded before per-config times
    if result.compile_wall_s is not None and span is not None:
        console.print(t("warm.warmup", seconds=seconds(span), count=len(compiled), jobs=plan.jobs), markup=False)
    _why_compiled(plan, console)
    skipped = plan.already_warm
    if skipped:
        fp = plan.env.fingerprint
        where = ", ".join(x for x in (f"torch {fp.torch}" if fp and fp.torch else None,
                                      fp.gpu_name if fp and fp.gpu_name else None) if x) or "?"
        console.print(_x(t("warm.already_warm", count=len(skipped), fingerprint=where)), markup=False)
    if result.export:
        path = _x(shlex.quote(result.export["path"]))
        console.print(t("warm-bundle.exported", size=human_bytes(result.export.get("bytes")), path=path,
                        sha256=result.export.get("sha256", "")), markup=False)
        console.print(t("warm-bundle.exported_use", path=path, sha256=result.export.get("sha256", "")), markup=False)
    if not result.write_errors:  # else the CLI says what could not be written, last
        console.print(_x(t("warm.manifest", path=result.manifest_path)) if result.manifest_path
                      else t("warm.manifest_unchanged"), markup=False)
    console.print(_x(use_line(result)), markup=False)
    for line in (measured_line(result.measured), pool_line(result.measured)):
        if line:
            console.print(_x(line), markup=False)
    if plan.env.temporary:
        console.print(t("warm.temporary"), style="yellow", markup=False)
    if plan.steps and plan.run_argv is None:
        console.print(t("warm.whole_model"), style="dim", markup=False)
    _other_gpus(plan, console)
    return no_commands(buf.getvalue())


def _compile_span(compiled: list) -> Optional[float]:
    """The compile phase as the configs' own processes span it (first start to last exit): with one
    config exactly its compile time, with several run in parallel the time the phase took."""
    runs = [(o.cold["started"], o.cold["started"] + o.cold["wall_s"]) for o in compiled
            if o.cold and isinstance(o.cold.get("started"), float) and isinstance(o.cold.get("wall_s"), float)]
    if not runs:
        return None
    return max(end for _, end in runs) - min(start for start, _ in runs)


def _other_gpus(plan: Any, console: Any) -> None:
    """On a node with several GPUs the configs warmed GPU 0 only: Inductor's FX-graph and AOT
    autograd keys hold the inputs' device with its index (codecache.FxGraphCachePickler pickles
    TensorMetadata.device; only the SPMD check normalises it) and Inductor keeps Triton kernels per
    device (runtime/cache_dir_utils.triton_cache_dir: triton/<index>). A torchrun rank on cuda:1
    therefore compiles again; one `--run` of the job's own launcher warms every rank."""
    count = plan.env.gpu_count or 0
    if count > 1 and plan.run_argv is None and any(s.workload.device == "cuda" for s in plan.steps):
        console.print(t("warm.other_gpus", count=count), style="dim", markup=False)


WHY = ("environment-changed", "compile-env-changed", "entries-missing", "not-warm", "manifest-unreadable")


def _why_compiled(plan: Any, console: Any) -> None:
    """Configs the manifest knew but that compiled again: one line per reason, with what changed."""
    for reason in WHY:
        steps = [s for s in plan.steps if s.reason == reason]
        if steps:
            console.print(_x(t(f"warm.why.{reason}", count=len(steps), detail=steps[0].detail)), markup=False)


def presets(table: dict, name_of: Callable[[dict], str]) -> str:
    """``--list-presets``: each preset, what it is for, and the configs it warms."""
    out = []
    for name, cfgs in table.items():
        out.append(f"{name:12s} {t(f'warm-preset.{name}')}")
        out += [f"{'':12s}   {name_of(raw)}" for raw in cfgs]
    return "\n".join(out) + "\n"
