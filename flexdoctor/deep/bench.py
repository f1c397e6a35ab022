"""``flexdoctor bench``: time every attention path in the target interpreter.

The parent builds the grid (shape x dtype x mask x implementation x pass), runs
``worker/_bench_worker.py`` once for all of it (one ``import torch``, items strictly one after the
other), and restarts it after an item that crashed or hung, so one bad configuration never
loses the rest. Results are plain data; ``render/bench_view.py`` turns them into a table with
bars, JSON or Markdown.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..text import english, has, t
from ..worker import run as worker_run
from ..worker import script
from ..workload import Workload, make

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
    """One shape of the grid: an attention workload (``flexdoctor.workload``) and its place."""

    index: int
    workload: Workload

    def to_dict(self) -> dict:
        """The bench JSON's ``cases[]`` entry and the worker's view of the case (schema 1)."""
        w = self.workload
        return {"index": self.index, "batch": w.batch, "heads": w.heads, "kv_heads": w.kv_heads_or_heads,
                "seq_len": w.seq_len, "head_dim": w.head_dim, "dtype": w.dtype, "mask": w.mask}

    @classmethod
    def from_dict(cls, data: dict) -> "Case":
        return cls(int(data["index"]), make(**{k: data[k] for k in ("batch", "heads", "kv_heads", "seq_len",
                                                                      "head_dim", "dtype", "mask") if k in data},
                                            device="auto", backward=True))

    def label(self) -> str:
        w = self.workload
        kv = f"/{w.kv_heads_or_heads}" if w.kv_heads_or_heads != w.heads else ""
        return t("bench.case", batch=w.batch, heads=w.heads, kv=kv, seq_len=w.seq_len,
                 head_dim=w.head_dim, dtype=w.dtype, mask=w.mask)


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
    reason: Optional[str] = None  # torch's own words, or the English text of reason_code
    # Why it is unavailable when flexdoctor says it (the worker cannot import flexdoctor, so it
    # sends a code): the catalogue's worker-reason.<code> filled with reason_args.
    reason_code: Optional[str] = None
    reason_args: dict = field(default_factory=dict)
    # The worker process died on this item (status timeout, crash or error): the stage it was in.
    # The words come at rendering (render/bench_view.died_reason), so the JSON holds data only.
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
            "cases": [c.to_dict() for c in self.cases],
            "results": [dataclasses.asdict(r) for r in self.results],
        }

    @property
    def failed(self) -> bool:
        return any(r.status in ("error", "timeout", "crash") for r in self.results)


def grid(batch: int, heads: int, kv_heads: Optional[int], seq_lens: list, head_dims: list, dtypes: list,
         masks: list, device: str = "auto") -> list[Case]:
    out: list[Case] = []
    for L in seq_lens:
        for d in head_dims:
            for m in masks:
                for dt in dtypes:
                    out.append(Case(len(out), make(batch=batch, heads=heads, kv_heads=kv_heads or heads, seq_len=L,
                                                   head_dim=d, dtype=dt, mask=m, device=device, backward=True)))
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
    payload_items = [[c.to_dict(), impl, mode] for c, impl, mode in items]
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
    if m.reason_code and not m.reason:  # the JSON keeps an English reason, as before
        m.reason = reason_english(m.reason_code, m.reason_args)


def reason_english(code: str, args: object) -> str:
    """A worker's reason code in English (JSON); a code this flexdoctor has no words for, as it is."""
    key = f"worker-reason.{code}"
    return english(key, **args) if has(key) and isinstance(args, dict) else code
