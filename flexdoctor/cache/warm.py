"""warm-cache, step 2: run the plan (cache/plan.py) in workers, then record it in the manifest.

Each config to compile runs in its own subprocess of the target interpreter
(``worker/_warm_worker.py``), ``jobs`` at a time (phase 1). Then a fresh process per config runs
it again and must hit the cache (phase 2, the proof): its Inductor counters and first-call time
are reported beside the cold ones. Configs the plan found already warm start no process. The run
is merged into the manifest (``cache/manifest.py``), written atomically into the cache dir.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shlex
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..text import has, human_bytes, t
from ..worker import run as worker_run
from ..worker import script
from ..workload import Workload, WorkloadError
from . import keys, locations
from . import manifest as mf
from .fingerprint import Fingerprint
from .plan import WARM, Plan, PlanError

WORKER = script("_warm_worker.py")
SCHEMA_VERSION = 1  # of `warm-cache --format json` (flexdoctor/schema/warm.schema.json)


class ImportFailed(Exception):
    """--import could not load the bundle; ``usage``: this torch cannot (exit 2), else exit 1."""

    def __init__(self, message: str, usage: bool = False):
        super().__init__(message)
        self.usage = usage


@dataclass
class Outcome:
    workload: Workload
    state: str = "queued"  # queued | compiling | compiled | verifying | measuring | done | failed | skipped
    stage: Optional[str] = None
    started: Optional[float] = None
    cold: Optional[dict] = None  # worker result of the compile run
    warm: Optional[dict] = None  # worker result of the fresh verification run
    error: Optional[str] = None
    error_stage: Optional[str] = None
    kb: list = field(default_factory=list)  # knowledge-base ids matching the error
    wall_s: Optional[float] = None  # wall time of the latest worker process (cold["wall_s"]: the compile's)
    forced: bool = False  # --force: compiled although the plan found it warm
    imported: bool = False  # from an --import bundle: verified against the exporter's first call
    exported_first_call_s: Optional[float] = None  # the exporter's warm first call (bundle metadata)
    process: Optional[dict] = None  # the fresh verification process, timed: process_times()

    @property
    def failed(self) -> bool:
        return self.state == "failed"

    @property
    def hit(self) -> Optional[bool]:
        """Did the fresh process hit the cache for everything it compiled?"""
        if not self.warm or not self.warm.get("ok"):
            return None
        return all_hit(self.warm)

    def status(self) -> str:
        """A stable identifier (stored in the manifest; render/warm_view.py shows it in words)."""
        if self.failed:
            return "failed"
        if self.state == "skipped":
            return "already warm"
        if self.hit is False:
            return "missed"
        if self.imported and self.hit:
            return IMPORT_STATUS[import_speed(self.exported_first_call_s, first_call_seconds(self.warm))]
        cold_c = (self.cold or {}).get("counters") or {}
        cold_hit = cold_c.get("fxgraph_cache_miss", 0) == 0 and cold_c.get("fxgraph_cache_hit", 0) > 0
        if self.cold and cold_hit and not self.forced:  # --force asked for it: not "already warm"
            return "already warm"
        if self.hit:
            return "warm (verified)"
        return "compiled"

    def record(self) -> mf.ConfigRecord:
        cold, warm = self.cold or {}, self.warm or {}
        return mf.ConfigRecord(
            workload=self.workload, status=self.status(), compile_s=cold.get("first_call_s"),
            fwd_s=cold.get("fwd_s"), bwd_s=cold.get("bwd_s"), process_s=cold.get("seconds"),
            stage_seconds=cold.get("stage_seconds"), counters=cold.get("counters"),
            warm_first_call_s=warm.get("first_call_s"), warm_fwd_s=warm.get("fwd_s"), warm_bwd_s=warm.get("bwd_s"),
            warm_counters=warm.get("counters"), export_bytes=warm.get("export_bytes", cold.get("export_bytes")),
            error=self.error, error_stage=self.error_stage, kb=tuple(self.kb))


def all_hit(result: dict) -> bool:
    """A worker result whose every compiled graph came from Inductor's FX graph cache."""
    c = result.get("counters") or {}
    return c.get("fxgraph_cache_miss", 0) == 0 and c.get("fxgraph_cache_hit", 0) > 0


def outcomes(plan: Plan) -> list[Outcome]:
    """One outcome per planned config, in plan order; already-warm ones start (and stay) skipped.
    Configs of an --import bundle carry the exporter's first-call time to be judged against."""
    timed = (plan.bundle or {}).get("first_call_s") if plan.bundle is not None else None
    timed = timed if isinstance(timed, dict) else {}
    out = []
    for s in plan.steps:
        ref = timed.get(s.workload.name)
        out.append(Outcome(s.workload, state="skipped" if s.action == WARM else "queued", forced=s.reason == "forced",
                           imported=plan.bundle is not None,
                           exported_first_call_s=float(ref) if isinstance(ref, (int, float)) and ref > 0 else None))
    return out


# --------------------------------------------------------------------------- is an import fast?

# An imported cache is verified only when a fresh process's first call is about as fast as the
# exporter's was. Slow means both more than SLOW_RATIO times the exporter's and more than
# SLOW_MARGIN_S seconds slower: first calls of a warm cache take ~1 s (FACTS §2, §11), so the
# margin absorbs another machine's noise, while what a bundle cannot carry costs a compile
# (CPU: 11.6 s against 1.6 s, FACTS §11). Generous on purpose: a false "slow" costs a user trust.
SLOW_RATIO = 3.0
SLOW_MARGIN_S = 2.0
IMPORT_STATUS = {"fast": "warm (verified)", "slow": "imported (slow)", "untimed": "imported (not timed)"}


def first_call_seconds(result: Optional[dict]) -> Optional[float]:
    """The one timing verification compares: the first compiled call (forward, plus backward when
    compiled) in a fresh process, as the worker measured it. The whole-process phases can be added
    here later; the exporter records the same number (``write_bundle``)."""
    value = (result or {}).get("first_call_s")
    return float(value) if isinstance(value, (int, float)) else None


def import_speed(exported_s: Optional[float], imported_s: Optional[float]) -> str:
    """fast | slow | untimed: the imported first call judged against the exporter's (pure)."""
    if exported_s is None or imported_s is None:
        return "untimed"
    if imported_s > SLOW_RATIO * exported_s and imported_s - exported_s > SLOW_MARGIN_S:
        return "slow"
    return "fast"


def worker_env(cache_dir: str, base: Optional[dict] = None) -> dict:
    env = dict(os.environ if base is None else base)
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_worker(python: str, args: list, env: dict, timeout: float,
               on_stage: Optional[Callable[[str], None]] = None,
               procs: Optional[set] = None) -> dict:
    """Run the worker; always returns a result dict (``ok`` False with ``error`` on failure).
    ``procs``: a set the started process is kept in while it runs (``Runner.kill_all``)."""
    wire = worker_run.Reader(on_stage=on_stage)
    child = worker_run.start([python, str(WORKER)] + list(args), env, on_line=wire.feed, merge_stderr=True)
    if isinstance(child, worker_run.Completed):
        return {"ok": False, "error": t("warm-process.start_failed", error=child.start_error)}
    if procs is not None:
        procs.add(child)
    try:
        done = worker_run.wait(child, timeout)
    finally:
        if procs is not None:
            procs.discard(child)
    return worker_result(wire, done, timeout)


def measure_worker(python: str, args: list, env: dict, timeout: float,
                   on_stage: Optional[Callable[[str], None]] = None, procs: Optional[set] = None,
                   keep_trace: Optional[str] = None) -> tuple:
    """Run the worker as `flexdoctor trace` runs a command (timing/: the bootstrap and torch's
    structured trace, in ``keep_trace`` when given): (its result dict, the ``timing.Measurement``
    of the whole fresh process, cut into phases)."""
    from .. import timing

    wire = worker_run.Reader(on_stage=on_stage)
    m = timing.measure([python, str(WORKER)] + list(args), env=env, timeout=timeout, on_line=wire.feed,
                       keep_trace=keep_trace, procs=procs)
    if not m.started:
        return {"ok": False, "error": t("warm-process.start_failed", error=m.start_error)}, m
    return worker_result(wire, worker_run.Completed(m.returncode, "", "", timed_out=m.timed_out), timeout), m


def worker_result(wire: "worker_run.Reader", done: "worker_run.Completed", timeout: float) -> dict:
    """The worker's result line, worded (``ok`` False with ``error`` when there is none)."""
    tail = list(wire.other)
    data = wire.result()
    if data is not None:
        code, args = data.get("error_code"), data.get("error_args")
        if code and not data.get("error") and has(f"worker-reason.{code}") and isinstance(args, dict):
            data["error"] = t(f"worker-reason.{code}", **args)  # the worker cannot import flexdoctor's words
        if not data.get("ok") and tail and "log" not in data:
            data["log"] = "\n".join(tail[-20:])
        return data
    if done.timed_out:
        error = t("warm-process.timeout", seconds=f"{timeout:g}")
    elif done.signal_name:
        error = t("warm-process.crashed", signal=done.signal_name)
    else:
        error = t("warm-process.exit_status", status=done.returncode)
    return {"ok": False, "error": error, "stage": wire.stage, "log": "\n".join(tail[-20:])}


def payload(w: Workload) -> dict:
    """What the worker script reads: the workload's identity (+ ``shapes``, read by workers
    written before ``dynamic`` existed)."""
    return {**w.to_dict(), "shapes": "dynamic" if w.dynamic else "static"}


def _explain(out: Outcome, result: dict) -> None:
    from .. import knowledge as kb

    out.state = "failed"
    out.error = (result.get("error") or "failed").strip()
    out.error_stage = result.get("stage")
    text = "\n".join(filter(None, [result.get("error"), result.get("traceback"), result.get("log")]))
    try:
        out.kb = [e.id for e in kb.match_text(text)][:3]
    except Exception:  # a broken knowledge file must not hide the real error
        out.kb = []


class Runner:
    """Runs the phases; ``on_update`` is called (from worker threads) whenever a state changes."""

    def __init__(self, python: str, cache_dir: str, jobs: int, timeout: float = 900.0,
                 on_update: Optional[Callable[[], None]] = None):
        self.python, self.cache_dir, self.jobs, self.timeout = python, cache_dir, jobs, timeout
        self.on_update = on_update or (lambda: None)
        self.procs: set = set()
        self.env = worker_env(cache_dir)

    def _run(self, out: Outcome, args: list, state: str, timed: bool = False) -> dict:
        """One worker process for ``out``; ``timed``: the whole process timed phase by phase, as
        `flexdoctor trace` times a command (timing/), into ``out.process``."""
        out.state, out.started, out.stage = state, time.monotonic(), None
        self.on_update()

        def stage(name: str) -> None:
            out.stage = name
            self.on_update()

        # Traced, so `flexdoctor cache why` can later name what differs from this config (keys.py).
        with keys.recording(self.cache_dir, {"kind": "config", "label": out.workload.name}, self.env) as rec:
            if timed:  # the timing run writes torch's trace where the recording reads it
                result, m = measure_worker(self.python, args, rec.env, self.timeout, on_stage=stage,
                                           procs=self.procs, keep_trace=rec.env.get("TORCH_TRACE"))
                out.process = process_times(m)
            else:
                result = run_worker(self.python, args, rec.env, self.timeout, on_stage=stage, procs=self.procs)
            rec.fingerprint = result.get("fingerprint") if result.get("ok") else None
        out.wall_s = round(time.monotonic() - out.started, 3)
        return result

    def compile(self, outcomes: list[Outcome], export_dir: Optional[str] = None) -> float:
        return self._phase(outcomes, export_dir, "compiling", "cold", "compiled")

    def verify(self, outcomes: list[Outcome], export_dir: Optional[str] = None) -> float:
        """The same compile in a fresh process: on a warm cache it must hit."""
        return self._phase(outcomes, export_dir, "verifying", "warm", "done", skip_failed=True)

    def _phase(self, outcomes: list[Outcome], export_dir: Optional[str], label: str, slot: str,
               done_state: str, skip_failed: bool = False) -> float:
        def one(item: tuple[int, Outcome]) -> None:
            i, out = item
            if out.state == "skipped" or (skip_failed and out.failed):
                return
            args = ["compile", json.dumps(payload(out.workload))]
            if export_dir:
                args += ["--export", os.path.join(export_dir, f"{i:03d}.bin")]
            res = self._run(out, args, label, timed=slot == "warm")
            res["wall_s"], res["started"] = out.wall_s, out.started  # the one time shown (warm_view)
            setattr(out, slot, res)
            if res.get("ok"):
                out.state = done_state
            else:
                _explain(out, res)
            self.on_update()

        return self._pool(one, list(enumerate(outcomes)))

    def _pool(self, fn, items) -> float:
        t0 = time.monotonic()
        pool = ThreadPoolExecutor(max_workers=max(1, self.jobs), thread_name_prefix="flexdoctor-warm")
        futures = [pool.submit(fn, it) for it in items]
        try:
            for f in futures:
                while True:  # short waits so Ctrl-C reaches the main thread promptly
                    try:
                        f.result(timeout=0.2)
                        break
                    except FutureTimeout:
                        continue
        except BaseException:
            for f in futures:
                f.cancel()
            self.kill_all()
            pool.shutdown(wait=False)
            raise
        pool.shutdown(wait=True)
        return round(time.monotonic() - t0, 3)

    def measure_settings(self, out: Outcome, runs: int, settings: dict) -> Measured:
        """``out``'s warm fresh process without and with ``settings``, interleaved (timing.compare),
        shown as the config's state "measuring"; judged by ``judge_settings``."""
        from .. import timing

        progress = _Runs(out, runs, settings, self.on_update)
        out.state, out.stage, out.started = "measuring", None, time.monotonic()
        self.on_update()
        pairs = timing.compare([self.python, str(WORKER), "compile", json.dumps(payload(out.workload))], settings,
                               runs=runs, env=self.env, timeout=self.timeout, on_line=progress.feed, procs=self.procs)
        out.state, out.stage = "done", None  # (Ctrl-C: the stop is the news, not this config's state)
        out.wall_s = round(time.monotonic() - out.started, 3)
        self.on_update()
        return judge_settings(pairs, settings, out.workload.name, ok=progress.ok())

    def kill_all(self) -> None:
        self.on_update = lambda: None  # stopping: the killed workers' ends are not news
        for child in list(self.procs):
            worker_run.kill(child)

    def fingerprint(self) -> dict:
        return run_worker(self.python, ["fingerprint"], self.env, min(self.timeout, 180.0))

    def import_bundle(self, folder: str) -> dict:
        """Load the checked artifact blobs in ``folder`` (``stage_bundle``)."""
        return run_worker(self.python, ["import", folder], self.env, self.timeout)


# --------------------------------------------------------------------------- a warm start's settings, measured

# What the warm start may run with, measured on this machine before it is advised. Inductor's
# compile-worker pool (torch/_inductor/async_compile.py, compile_worker/subproc_pool.py; started
# when compile_threads > 1, on Linux min(32, cores) by default: torch/_inductor/config.py
# decide_compile_threads) only helps when something compiles; with every graph a hit it is pure
# cost, mostly after the script's last line (FACTS §11, H100: 23.7/22.9 s against 14.1/14.2 s).
WARM_SETTINGS = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
MEASURE_RUNS = 2
# "Faster" is a median wall time lower by at least MIN_SAVED_S and MIN_SAVED_SHARE of the time
# without: a smaller difference is the noise of a fresh process start on a busy machine, and a
# setting advised for nothing is one more thing to carry to every job.
MIN_SAVED_S = 0.1
MIN_SAVED_SHARE = 0.02
MEASURED_REASONS = ("faster", "not_faster", "failed", "no_pool", "already_set", "off")


@dataclass
class Measured:
    """The warm start timed without and with ``settings`` (``timing.compare``), and the verdict.
    ``reason``: faster (advised) | not_faster | failed (a timed run failed or missed the cache) |
    no_pool (not measured: the warm process started no compile-worker pool, the one thing the
    setting changes once every graph hits) | already_set (the environment has it) | off
    (--no-measure)."""

    settings: dict
    reason: str
    config: Optional[str] = None  # the config whose fresh process was timed
    without: list = field(default_factory=list)  # wall s of each run as it is
    with_: list = field(default_factory=list)  # wall s of each run with the settings
    pool_without: Optional[float] = None  # median s of the pool's phases (start + exit) as it is
    pool_with: Optional[float] = None

    @property
    def helped(self) -> bool:
        return self.reason == "faster"

    @property
    def runs(self) -> int:
        return len(self.without)

    @property
    def without_s(self) -> Optional[float]:
        return _median(self.without)

    @property
    def with_s(self) -> Optional[float]:
        return _median(self.with_)

    @property
    def saved_s(self) -> Optional[float]:
        a, b = self.without_s, self.with_s
        return None if a is None or b is None else round(a - b, 3)

    @property
    def ratio(self) -> Optional[float]:
        """with / without: below 1 the settings made the warm start faster."""
        a, b = self.without_s, self.with_s
        return None if not a or b is None else round(b / a, 3)

    def to_dict(self) -> dict:
        return {"settings": dict(self.settings), "reason": self.reason, "helped": self.helped,
                "config": self.config, "runs": self.runs, "without_s": self.without_s, "with_s": self.with_s,
                "saved_s": self.saved_s, "ratio": self.ratio, "without_runs_s": list(self.without),
                "with_runs_s": list(self.with_), "pool_without_s": self.pool_without, "pool_with_s": self.pool_with}


def _median(values: list) -> Optional[float]:
    import statistics

    return round(statistics.median(values), 3) if values and None not in values else None


def pool_seconds(m: Any) -> Optional[float]:
    """Seconds the compile-worker pool took in a measured process (its start and its shutdown)."""
    top = getattr(m, "top", None)
    return None if top is None else round(top.seconds("pool_start") + top.seconds("exit_pool"), 3)


def judge_settings(pairs: list, settings: dict, config: Optional[str] = None, ok: bool = True) -> Measured:
    """The verdict on ``timing.compare``'s [(without, with)] Measurements (pure): faster only when
    every run ran to the end (``ok``: and every graph hit) and the median wall time with the
    settings is lower by MIN_SAVED_S and MIN_SAVED_SHARE."""
    runs = [x for pair in pairs for x in pair]
    done = bool(pairs) and ok and all(x.started and not x.timed_out and x.returncode == 0 and x.wall is not None
                                      for x in runs)
    wall = lambda m: None if m.wall is None else round(m.wall, 3)  # noqa: E731
    out = Measured(dict(settings), "failed", config, [wall(a) for a, _ in pairs], [wall(b) for _, b in pairs],
                   _median([pool_seconds(a) for a, _ in pairs]), _median([pool_seconds(b) for _, b in pairs]))
    if not done:
        return out
    saved = out.without_s - out.with_s
    out.reason = "faster" if saved >= max(MIN_SAVED_S, MIN_SAVED_SHARE * out.without_s) else "not_faster"
    return out


def process_times(m: Any) -> Optional[dict]:
    """The fresh process as `flexdoctor trace` shows it: its wall time and its phases (they add up
    to it, timing/phases.py), and whether Inductor's compile-worker pool started in it."""
    top = getattr(m, "top", None)
    if top is None or m.wall is None:
        return None
    return {"wall_s": round(m.wall, 3), "booted": top.boot is not None, "pool": bool(top.pool),
            "pool_s": pool_seconds(m),
            "phases": [{"name": ph.name, "seconds": round(ph.seconds, 3), "measured": ph.measured} for ph in top.phases]}


class _Runs:
    """Reads the wire of ``timing.compare``'s runs (as it is, then with the settings, interleaved):
    names the run in progress as the outcome's stage, and keeps each run's result."""

    def __init__(self, out: Outcome, runs: int, settings: dict, on_update: Callable[[], None]):
        self.out, self.runs, self.settings, self.on_update = out, runs, settings, on_update
        self.results: list = []
        self.wire = worker_run.Reader(on_stage=self._stage)

    def feed(self, line: str) -> None:
        self.wire.feed(line)
        if self.wire.result_text is not None:
            self.results.append(self.wire.result())
            self.wire.result_text = None

    def _stage(self, name: str) -> None:
        i = len(self.results)
        side = (t("warm-trace.side.without") if i % 2 == 0 else
                t("warm-trace.side.with", settings=" ".join(f"{k}={v}" for k, v in self.settings.items())))
        self.out.stage = t("warm-trace.stage", run=i // 2 + 1, runs=self.runs, side=side, stage=name)
        self.on_update()

    def ok(self) -> bool:
        return len(self.results) == 2 * self.runs and all(r and r.get("ok") and all_hit(r) for r in self.results)


def measure_settings(todo: list, req: Any, runner: "Runner", environ: Optional[dict] = None) -> Optional[Measured]:
    """After every fresh process hit: time the warm start without and with WARM_SETTINGS. None when
    the verification did not succeed (nothing to advise). ``req.measure``: None measures when the
    warm process started a compile-worker pool, True always, False never."""
    mode = getattr(req, "measure", None)
    settings = dict(WARM_SETTINGS)
    if not todo or not all(o.hit for o in todo):
        return None
    if mode is False:
        return Measured(settings, "off")
    environ = os.environ if environ is None else environ
    if all(environ.get(k) == v for k, v in settings.items()):
        return Measured(settings, "already_set")
    pick = max(todo, key=lambda o: (o.process or {}).get("pool_s") or 0.0)  # the first, unless one had a pool
    if mode is None and not (pick.process or {}).get("pool"):
        return Measured(settings, "no_pool", pick.workload.name)
    return runner.measure_settings(pick, max(1, int(getattr(req, "measure_runs", MEASURE_RUNS))), settings)


# --------------------------------------------------------------------------- export bundles

BUNDLE_FORMAT = 1


def write_bundle(dest: str, export_dir: str, outcomes: list[Outcome], fp: Fingerprint,
                 flexdoctor_version: str) -> tuple:
    """Zip the per-config mega-cache blobs with the configs, the fingerprint and each config's warm
    first-call time (what an importer's verification is judged against); atomic, mode 0644 under
    the umask. Returns (bytes, sha256 hex of exactly what was written)."""
    import hashlib
    import zipfile

    dest_path = os.path.abspath(dest)
    os.makedirs(os.path.dirname(dest_path) or ".", exist_ok=True)
    with locations.replacing(dest_path, ".flexdoctor-export.") as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            meta = {"format": BUNDLE_FORMAT, "flexdoctor_version": flexdoctor_version, "created_at": mf.now(),
                    "fingerprint": fp.to_dict(), "configs": [], "first_call_s": {}}
            for i, out in enumerate(outcomes):
                blob = os.path.join(export_dir, f"{i:03d}.bin")
                if out.failed or not os.path.isfile(blob):
                    continue
                zf.write(blob, f"artifacts/{i:03d}.bin")
                meta["configs"].append(out.workload.to_dict())
                timed = first_call_seconds(out.warm) if out.hit else None
                if timed is not None:
                    meta["first_call_s"][out.workload.name] = timed
            zf.writestr("flexdoctor-bundle.json", json.dumps(meta, indent=2, sort_keys=True))
        digest = hashlib.sha256()
        with open(tmp, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return os.path.getsize(dest_path), digest.hexdigest()


def read_bundle(path: str, sha256: Optional[str] = None):
    """The --import bundle opened as code (cache/bundlefile.py: who wrote it, the pin, sizes),
    with its metadata read; PlanError (exit 2) saying why not. Close it when done."""
    from . import bundlefile

    try:
        return bundlefile.open_bundle(path, sha256)
    except bundlefile.Refused as exc:
        raise PlanError(t("warm-bundle.import_refused", why=exc.text())) from None


def stage_bundle(bundle: Any, cache_dir: str) -> dict:
    """Check every artifact of ``bundle`` (cache/megacache.py: type, key, content) and write the
    checked blobs into a private folder for the import worker; nothing reaches torch before all
    passed. PlanError (exit 2) saying why not. Returns {"dir", "sha256", "blobs"}."""
    from . import bundlefile, megacache

    folder = tempfile.mkdtemp(prefix="flexdoctor-import-")
    blobs = []
    try:
        for name, data in bundle.artifacts():
            try:
                blob, artifacts = megacache.checked(data, cache_dir)
            except megacache.BadArtifacts as exc:
                refused = bundlefile.Refused(f"artifact_{exc.reason.replace('-', '_')}", path=bundle.path,
                                             member=name, **exc.args_)
                raise PlanError(t("warm-bundle.import_refused", why=refused.text())) from None
            with open(os.path.join(folder, os.path.basename(name)), "wb") as fh:
                fh.write(blob)
            blobs.append({"name": name, "bytes": len(blob), "types": megacache.summary(artifacts)})
        if not blobs:
            raise PlanError(t("warm-bundle.import_refused",
                              why=bundlefile.Refused("no_artifacts", path=bundle.path).text()))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return {"dir": folder, "sha256": bundle.sha256, "blobs": blobs}


def read_bundle_meta(path: str) -> tuple:
    """(metadata, sha256) of a bundle read as data only (``fleet merge --bundle``): a regular
    file, the same size limits; bundlefile.Refused when not."""
    from . import bundlefile

    with bundlefile.open_bundle(path, trusted=False) as bundle:
        return bundle.meta, bundle.sha256


def bundle_workload(data: Any) -> Workload:
    """A config recorded in a bundle (any flexdoctor version's layout)."""
    try:
        return Workload.from_dict(data)
    except (WorkloadError, TypeError, AttributeError) as exc:
        raise PlanError(t("warm.error.import_config", error=exc))


# --------------------------------------------------------------------------- --run CMD

def run_command(argv: list, cache_dir: str, timeout: Optional[float] = None, extra_env: Optional[dict] = None,
                base: Optional[dict] = None, record: bool = True, stdout: Optional[int] = None) -> dict:
    """Run the user's own one-step command under the cache dir; its output goes to the terminal
    (``stdout``: a file descriptor for its standard output instead). With ``record`` it runs traced
    and the keys of the graphs it compiled are stored for `flexdoctor cache why` (keys.py)."""
    env = worker_env(cache_dir, base)
    env.update(extra_env or {})
    before = mf.entries(cache_dir)
    t0 = time.monotonic()
    label = " ".join(shlex.quote(str(a)) for a in argv)
    with keys.recording(cache_dir, {"kind": "run", "label": label}, env, enabled=record) as rec:
        done = worker_run.attached(argv, rec.env, timeout, stdout=stdout)
    code: Optional[int] = done.returncode
    if done.start_error:
        missing = done.start_errno == errno.ENOENT
        error = (t("warm-process.command_not_found", command=argv[0]) if missing
                 else t("warm-process.start_failed", error=done.start_error))
    elif done.timed_out:
        error = t("warm-process.run_timeout", seconds=f"{timeout:g}")
    else:
        error = None if code == 0 else t("warm-process.run_exit", status=code)
    after = mf.entries(cache_dir)
    return {"returncode": code, "error": error, "seconds": round(time.monotonic() - t0, 3),
            "new_entries": sorted(after - before), "started": not done.start_error}


# --------------------------------------------------------------------------- the whole run

@dataclass
class WarmResult:
    """What ``execute`` did; ``render/warm_view.py`` shows it."""

    plan: Plan
    outcomes: list
    verified: bool = True  # the fresh-process proof ran (or an --import was verified)
    compile_wall_s: Optional[float] = None
    verify_wall_s: Optional[float] = None
    run: Optional[dict] = None  # {"command", "first", "second"}
    imported: Optional[dict] = None  # {"path", "loaded", "changes"}
    export: Optional[dict] = None  # {"path", "bytes"}
    manifest_path: Optional[str] = None
    write_errors: list = field(default_factory=list)  # the manifest or bundle could not be written
    measured: Optional[Measured] = None  # the warm start's settings, timed (measure_settings)

    @property
    def training_env(self) -> dict:
        """What to run training with: the cache dir, and the settings measured faster here."""
        env = {"TORCHINDUCTOR_CACHE_DIR": self.plan.env.cache_dir}
        if self.measured is not None and self.measured.helped:
            env.update(self.measured.settings)
        return env

    @property
    def failed(self) -> bool:
        """Exit 1: a config failed, a fresh process missed, an imported cache was not fast (its
        first call far slower than the exporter's: not verified), or --run failed."""
        if any(o.failed or o.hit is False or o.status() == IMPORT_STATUS["slow"] for o in self.outcomes):
            return True
        if self.run and (self.run["first"]["error"] or (self.run.get("second") or {}).get("error")):
            return True
        return False


def _runtime_fingerprint(todo: list, runner: Runner, driver: Optional[str]) -> Fingerprint:
    """The environment as the workers saw it after ``import torch`` (a GPU config's view first);
    one extra worker only when no config ran (an --import or --run alone)."""
    seen = None
    for o in todo:
        for r in (o.warm, o.cold):
            if r and r.get("fingerprint") and (seen is None or o.workload.device == "cuda"):
                seen = r["fingerprint"]
    if seen is None:
        seen = (runner.fingerprint() or {}).get("fingerprint") or {}
    return Fingerprint.from_runtime(seen, driver)


def _import(plan: Plan, req: Any, runner: Runner, say: Callable[[str], None]) -> dict:
    staged = plan.staged or {}
    res = runner.import_bundle(staged.get("dir", ""))
    if not res.get("ok"):
        raise ImportFailed(str(res.get("error")), usage=res.get("error_kind") == "no-mega-cache")
    loaded = res.get("loaded", [])
    refused = [x.get("name") for x in loaded if x.get("refused")]
    if refused:  # checked, yet this torch could not read it: another torch's layout
        raise ImportFailed(t("warm-bundle.torch_refused", names=", ".join(map(str, refused))))
    changes = Fingerprint.from_dict(plan.bundle["fingerprint"]).changes(Fingerprint.from_dict(res.get("fingerprint")))
    say(t("warm.imported", count=len(loaded), size=human_bytes(sum(x.get("bytes", 0) for x in loaded)),
          path=req.import_))
    if changes:
        say(t("warm.import_other_env", changes="; ".join(f"{k} {a} -> {b}" for k, a, b in changes)))
    return {"path": str(req.import_), "sha256": staged.get("sha256"), "loaded": loaded, "changes": changes}


def _run_command(plan: Plan, req: Any, say: Callable[[str], None]) -> dict:
    root = plan.env.cache_dir
    command = " ".join(shlex.quote(a) for a in plan.run_argv) if req.run is None else req.run
    say(t("warm.running", root=root, command=command))
    out = getattr(req, "run_stdout", None)  # --format json: the command's output kept off stdout
    first = run_command(list(plan.run_argv), root, stdout=out)
    info = {"command": command, "first": first}
    if first["error"] is None and req.verify:
        say(t("warm.running_again"))
        info["second"] = run_command(list(plan.run_argv), root, stdout=out)
    return info


def execute(plan: Plan, req: Any, outcomes: list, on_update: Callable[[], None] = lambda: None,
            live: Any = None, say: Callable[[str], None] = lambda s: None) -> WarmResult:
    """Run the plan: --import, compile (phase 1) and verify (phase 2: each fresh process timed phase
    by phase; then the warm start's settings measured, ``measure_settings``) the configs, --run,
    --export, then merge this run into the manifest. Nothing starts, and nothing is written, when
    every config is already warm. ``live`` is a context manager around the phases (the progress
    view); ``say`` prints a progress line. Ctrl-C kills the workers and leaves the manifest as it
    was (KeyboardInterrupt propagates)."""
    from .. import __version__
    from .clear import shared

    root = plan.env.cache_dir
    todo = [o for o in outcomes if o.state != "skipped"]
    result = WarmResult(plan, outcomes, verified=req.verify or plan.bundle is not None)
    if not todo and plan.run_argv is None and plan.bundle is None:
        return result  # all already warm: no torch process, the manifest stays as it is
    runner = Runner(req.python, root, plan.jobs, timeout=req.timeout, on_update=on_update)
    export_dir = tempfile.mkdtemp(prefix="flexdoctor-export-") if req.export is not None else None
    started_at, t0 = mf.now(), time.monotonic()
    try:
        with shared(root):
            before = mf.entries(root)
            if plan.bundle is not None:
                result.imported = _import(plan, req, runner, say)
            if todo:
                with (live if live is not None else contextlib.nullcontext()):
                    if plan.bundle is None:
                        result.compile_wall_s = runner.compile(todo, None if req.verify else export_dir)
                    if result.verified:
                        result.verify_wall_s = runner.verify(todo, export_dir)
                        result.measured = measure_settings(todo, req, runner)
                    on_update()
            if plan.run_argv is not None:
                result.run = _run_command(plan, req, say)
            fp = _runtime_fingerprint(todo, runner, plan.env.driver)
            after = mf.entries(root)
            last_run = {"started_at": started_at, "jobs": plan.jobs, "verify": req.verify,
                        "compile_wall_s": result.compile_wall_s, "verify_wall_s": result.verify_wall_s,
                        "total_s": round(time.monotonic() - t0, 3), "python": req.python,
                        "already_warm": [w.name for w in plan.already_warm],
                        "measured": result.measured.to_dict() if result.measured is not None else None}
            if req.export is not None:
                try:
                    size, digest = write_bundle(str(req.export), export_dir, todo, fp, __version__)
                    result.export = last_run["export"] = {"path": os.path.abspath(str(req.export)), "bytes": size,
                                                          "sha256": digest}
                except OSError as exc:  # a full disk: the results are still shown, then one line, exit 2
                    result.write_errors.append(t("exit.not_written", what=req.export, error=exc.strerror or exc))
            warmed = [o.record() for o in todo if not o.failed]
            run_ok = bool(result.run) and not result.run["first"]["error"]
            if warmed or run_ok:  # a run that warmed nothing must not make `check` call the cache warm
                try:
                    old = mf.load(root)
                except ValueError:
                    old = None
                data = mf.merge(old, fp, warmed, after - before, root, __version__,
                                compile_env=dict(plan.env.compile_env), last_run=last_run, run=result.run,
                                imported_from=str(req.import_) if req.import_ is not None else None)
                try:
                    result.manifest_path = mf.write(root, data)
                except OSError as exc:
                    result.write_errors.append(t("exit.not_written", what=mf.locations.manifest_path(root),
                                                 error=exc.strerror or exc))
    except KeyboardInterrupt:
        runner.kill_all()
        raise
    finally:
        if export_dir:
            shutil.rmtree(export_dir, ignore_errors=True)
        discard(plan)
    return result


def discard(plan: Plan) -> None:
    """Remove the private folder of checked --import blobs (``stage_bundle``), if any."""
    if plan.staged and plan.staged.get("dir"):
        shutil.rmtree(plan.staged["dir"], ignore_errors=True)
