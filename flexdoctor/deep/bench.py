"""``flexdoctor bench``: time every attention path in the target interpreter.

The parent builds the grid (shape x dtype x mask x implementation x pass), runs
``worker/_bench_worker.py`` once for all of it (one ``import torch``, items strictly one after the
other), and restarts it after an item that crashed or hung, so one bad configuration never
loses the rest. Results are plain data; ``render_*`` turn them into a table with bars, JSON
or Markdown.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..text import t
from ..worker import run as worker_run
from ..worker import script

WORKER = script("_bench_worker.py")
IMPLS = ("flex-compiled", "flex-eager", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn", "sdpa-math", "flash-attn")
MODES = ("fwd", "fwdbwd")
DTYPES = ("float16", "bfloat16", "float32")
MASKS = ("none", "causal")
BENCH_SCHEMA_VERSION = 1


class BenchError(Exception):
    """The benchmark could not run at all (message is user-facing)."""


@dataclass(frozen=True)
class Case:
    index: int
    batch: int
    heads: int
    kv_heads: int
    seq_len: int
    head_dim: int
    dtype: str
    mask: str

    def label(self) -> str:
        kv = f"/{self.kv_heads}" if self.kv_heads != self.heads else ""
        return t("bench.case", batch=self.batch, heads=self.heads, kv=kv, seq_len=self.seq_len,
                 head_dim=self.head_dim, dtype=self.dtype, mask=self.mask)


@dataclass
class Measurement:
    case: int
    impl: str
    mode: str
    status: str = "pending"  # ok | oom | unavailable | error | timeout | crash | pending
    ms: Optional[float] = None
    min_ms: Optional[float] = None
    max_ms: Optional[float] = None
    reps: Optional[int] = None
    tflops: Optional[float] = None
    peak_bytes: Optional[int] = None
    extra_bytes: Optional[int] = None
    first_call_s: Optional[float] = None
    compiled: Optional[bool] = None
    reason: Optional[str] = None
    # The worker process died on this item (status timeout, crash or error): the stage it was in.
    # The words come at rendering (died_reason), so the JSON holds data only.
    died_in: Optional[str] = None


@dataclass
class BenchReport:
    cases: list
    results: list
    env: dict = field(default_factory=dict)
    seed: Optional[int] = None
    started_at: Optional[str] = None
    seconds: Optional[float] = None
    settings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "schema_version": BENCH_SCHEMA_VERSION,
            "env": self.env,
            "seed": self.seed,
            "started_at": self.started_at,
            "seconds": self.seconds,
            "settings": self.settings,
            "cases": [dataclasses.asdict(c) for c in self.cases],
            "results": [dataclasses.asdict(r) for r in self.results],
        }

    @property
    def failed(self) -> bool:
        return any(r.status in ("error", "timeout", "crash") for r in self.results)


def grid(batch: int, heads: int, kv_heads: Optional[int], seq_lens: list, head_dims: list, dtypes: list,
         masks: list) -> list[Case]:
    out = []
    for L in seq_lens:
        for d in head_dims:
            for m in masks:
                for dt in dtypes:
                    out.append(Case(len(out), batch, heads, kv_heads or heads, L, d, dt, m))
    return out


def run(python: str, cases: list[Case], impls: list = list(IMPLS), modes: list = list(MODES),
        device: str = "auto", reps: int = 50, warmup: int = 3, budget_s: float = 1.0,
        item_timeout: float = 300.0, seed: Optional[int] = None,
        on_event: Optional[Callable[[int, int, Measurement], None]] = None) -> BenchReport:
    """Run the grid; ``on_event(i, n, measurement)`` is called as each item starts and ends."""
    started = time.monotonic()
    items = [(c, impl, mode) for c in cases for impl in impls for mode in modes]
    results = [Measurement(c.index, impl, mode) for c, impl, mode in items]
    report = BenchReport(cases=list(cases), results=results, seed=seed,
                         started_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
                         settings={"reps": reps, "warmup": warmup, "budget_s": budget_s, "device": device})
    payload_items = [[dataclasses.asdict(c), impl, mode] for c, impl, mode in items]
    start = 0
    while start < len(items):
        cfg = {"items": payload_items, "start": start, "reps": reps, "warmup": warmup, "budget_s": budget_s,
               "device": device, "seed": seed}
        seen: dict = {"current": None}

        def on_stage(name: str) -> None:
            if name.startswith("item "):
                i = int(name.split()[1])
                seen["current"] = i
                results[i].status = "running"
                if on_event:
                    on_event(i, len(items), results[i])

        def on_part(_name: Optional[str], data: object) -> None:
            if not isinstance(data, dict):
                return
            if "env" in data:
                report.env = data["env"]
                return
            i = data.get("item")
            if isinstance(i, int) and 0 <= i < len(results):
                _fill(results[i], data)
                seen["current"] = None
                if on_event:
                    on_event(i, len(items), results[i])

        wire = worker_run.Reader(on_stage=on_stage, on_part=on_part)
        done = worker_run.stream([python, str(WORKER), json.dumps(cfg)], wire.feed, idle_timeout=item_timeout)
        code, timed_out, stderr = done.returncode, done.timed_out, done.stderr
        if done.start_error:
            raise BenchError(done.start_error)
        res = (wire.result() or {}) if wire.result_text is not None else None
        if res is not None:
            if res.get("error") == "no-cuda":
                raise BenchError(t("bench.no_cuda", python=python))
            report.seed = res.get("seed", report.seed)
            break
        cur = seen["current"]
        if cur is None:
            # Died outside an item: before the first (import torch) or between items.
            done_items = [i for i, r in enumerate(results) if r.status not in ("pending", "running")]
            if not done_items and not report.env:
                raise BenchError(worker_run.tail(stderr, 8) or t("bench.worker_exited", status=code))
            nxt = [i for i in range(start, len(results)) if results[i].status in ("pending", "running")]
            if not nxt:
                break
            cur = nxt[0]
        what = "timeout" if timed_out else ("crash" if code is not None and code < 0 else "error")
        results[cur].status = what
        results[cur].died_in = wire.stage or "?"
        results[cur].reason = worker_run.tail(stderr, 3) if stderr.strip() and not timed_out else None
        if on_event:
            on_event(cur, len(items), results[cur])
        start = cur + 1
    for r in results:
        if r.status in ("pending", "running"):
            r.status = "skipped"
    report.seconds = round(time.monotonic() - started, 1)
    return report


def _fill(m: Measurement, data: dict) -> None:
    for f in dataclasses.fields(Measurement):
        if f.name in data and f.name not in ("case", "impl", "mode"):
            setattr(m, f.name, data[f.name])


# --------------------------------------------------------------------------- rendering


def _fmt_bytes(n: Optional[int]) -> str:
    if n is None:
        return "—"
    return f"{n / 2**30:.2f} GiB" if n >= 2**28 else f"{n / 2**20:.0f} MiB"


def _tf(v: Optional[float]) -> str:
    if v is None:
        return "—"
    return f"{v:.1f}" if v >= 1 else f"{v:.3f}"


_STATUSES = ("ok", "oom", "unavailable", "error", "skipped", "timeout", "crash", "pending", "running")


def status_word(m: Measurement) -> str:
    return t(f"bench.status_{m.status}") if m.status in _STATUSES else m.status


def died_reason(m: Measurement) -> Optional[str]:
    """Why an item has no measurement when the worker process died on it, in words; else None."""
    if m.died_in is None:
        return None
    what = t({"timeout": "deep-run.hung", "crash": "deep-run.crashed"}.get(m.status, "deep-run.stopped"))
    line = t("bench.worker_failed", what=what, stage=m.died_in)
    return f"{line}: {m.reason}" if m.reason else line


def reason_text(m: Measurement) -> str:
    """The reason shown beside a status: the worker's death in words, or torch's own words."""
    return died_reason(m) or (m.reason or "")


def _by_case(report: BenchReport) -> list:
    out = []
    for c in report.cases:
        out.append((c, [r for r in report.results if r.case == c.index]))
    return out


def gap_line(rows: list) -> Optional[str]:
    """eager flex vs compiled flex vs the fastest SDPA backend, fwd+bwd (the gap users care about)."""
    get = {(r.impl, r.mode): r for r in rows}
    eager, comp = get.get(("flex-eager", "fwdbwd")), get.get(("flex-compiled", "fwdbwd"))
    sdpa = [r for r in rows if r.impl.startswith("sdpa-") and r.mode == "fwdbwd" and r.status == "ok"]
    if comp is None or comp.status != "ok" or not sdpa or eager is None:
        return None
    best = min(sdpa, key=lambda r: r.ms)
    if eager.status == "oom":
        return t("bench.gap_oom", compiled=f"{comp.ms:.2f}", sdpa=f"{best.ms:.2f}",
                 sdpa_backend=best.impl[5:])
    if eager.status != "ok":
        return None
    return t("bench.gap", eager=f"{eager.ms:.2f}", compiled=f"{comp.ms:.2f}", sdpa=f"{best.ms:.2f}",
             sdpa_backend=best.impl[5:])


def _bar(ms: float, worst: float, width: int = 24) -> str:
    if worst <= 0:
        return ""
    cells = ms / worst * width
    full = int(cells)
    frac = cells - full
    parts = " ▏▎▍▌▋▊▉"
    tail = parts[int(frac * 8)] if full < width and frac > 0 else ""
    return ("█" * full + tail).rstrip() or "▏"


def header(report: BenchReport) -> str:
    env = report.env
    triton = f" · triton {env['triton']}" if env.get("triton") else ""
    cuda = f" (CUDA {env['cuda']})" if env.get("cuda") and env.get("device") == "cuda" else ""
    return t("bench.header", device=(env.get("device_name") or env.get("device") or "?"),
             torch=f"{env.get('torch', '?')}{cuda}", triton=triton, when=report.started_at or "?")


def render_text(report: BenchReport, color: bool = False, width: int = 120) -> str:
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table

    import io

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=color, no_color=not color, width=max(width, 100),
                      highlight=False, soft_wrap=False)
    console.print(header(report))
    for case, rows in _by_case(report):
        console.print()
        console.print(case.label(), style="bold")
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
        for col, just in (("col_impl", "left"), ("col_mode", "left"), ("col_ms", "right"), ("col_tflops", "right"),
                          ("col_mem", "right"), ("col_compile", "right")):
            title = t(f"bench.{col}")
            # Terminal cells, not characters: a Japanese title is twice as wide as its length. The
            # implementation names are never cut; the bars and reasons column gives way instead.
            least = max(cell_len(title), 8, *(len(r.impl) for r in rows)) if col == "col_impl" else max(cell_len(title), 8)
            table.add_column(title, justify=just, no_wrap=True, min_width=least)
        table.add_column(t("bench.col_speed"), no_wrap=True, overflow="ellipsis", max_width=44)
        worst = max((r.ms for r in rows if r.status == "ok" and r.ms), default=0.0)
        for mode in MODES:
            mode_rows = [r for r in rows if r.mode == mode]
            ok_ms = [r.ms for r in mode_rows if r.status == "ok" and r.ms]
            best = min(ok_ms) if ok_ms else None
            for r in mode_rows:
                if r.status == "ok":
                    ms = f"{r.ms:.3f}"
                    bar = _bar(r.ms, worst)
                    style = "green" if r.ms == best else None
                    if r.impl == "flex-compiled" and r.compiled is False:
                        bar += " " + t("bench.eager_fallback")
                    table.add_row(r.impl, t(f"bench.{mode}"), ms,
                                  _tf(r.tflops), _fmt_bytes(r.peak_bytes),
                                  f"{r.first_call_s:.2f}" if r.first_call_s is not None else "—", bar, style=style)
                else:
                    reason = reason_text(r).strip()
                    why = reason.splitlines()[-1][:60] if reason else ""
                    table.add_row(r.impl, t(f"bench.{mode}"), "—", "—", "—", "—",
                                  status_word(r) + (f": {why}" if why else ""), style="dim")
        console.print(table)
        gap = gap_line(rows)
        if gap:
            console.print(gap)
    console.print()
    console.print(t("bench.footer", reps=report.settings.get("reps", "?")), style="dim")
    return buf.getvalue()


def render_json(report: BenchReport) -> str:
    return json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n"


def render_markdown(report: BenchReport) -> str:
    out = [f"**{header(report)}**", ""]
    fwd, both = t("bench.fwd"), t("bench.fwdbwd")
    out.append(f"| {t('bench.md_shape')} | {t('bench.md_impl')} | {t('bench.md_ms', mode=fwd)} | "
               f"{t('bench.md_tflops', mode=fwd)} | {t('bench.md_ms', mode=both)} | {t('bench.md_tflops', mode=both)} | "
               f"{t('bench.md_mem', mode=both)} | {t('bench.md_first')} |")
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case, rows in _by_case(report):
        impls = []
        for r in rows:
            if r.impl not in impls:
                impls.append(r.impl)
        for impl in impls:
            f = next((r for r in rows if r.impl == impl and r.mode == "fwd"), None)
            b = next((r for r in rows if r.impl == impl and r.mode == "fwdbwd"), None)
            if all(x is None or x.status == "unavailable" for x in (f, b)):
                continue

            def cell(m: Optional[Measurement], what: str) -> str:
                if m is None:
                    return "—"
                if m.status != "ok":
                    return t("bench.md_oom") if m.status == "oom" else status_word(m)
                v = m.ms if what == "ms" else m.tflops
                return "—" if v is None else (f"{v:.3f}" if what == "ms" else _tf(v))

            first = max((x.first_call_s for x in (f, b) if x is not None and x.first_call_s is not None), default=None)
            out.append(f"| {case.label()} | {impl} | {cell(f, 'ms')} | {cell(f, 'tf')} | {cell(b, 'ms')} | "
                       f"{cell(b, 'tf')} | {_fmt_bytes(b.peak_bytes if b and b.status == 'ok' else None)} | "
                       f"{'—' if first is None else f'{first:.2f}'} |")
    out.append("")
    gaps = [(c, gap_line(rows)) for c, rows in _by_case(report)]
    for c, g in gaps:
        if g:
            out.append(f"- {c.label()}: {g}")
    out.append("")
    out.append(t("bench.footer", reps=report.settings.get("reps", "?")))
    return "\n".join(out) + "\n"
