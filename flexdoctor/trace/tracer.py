"""`flexdoctor trace`: run the user's command once, timed phase by phase (timing/), judge its
compile-cache lookups (cache/why.py: the section `cache why` prints), and say what went wrong
silently and what to change (findings.py); with ``measure_advice`` run it again with the advised
settings and put both wall times next to the advice."""

from __future__ import annotations

import os
from typing import Optional

from .. import timing
from ..cache import trace as trace_mod
from ..cache import why as why_mod
from . import findings as judge
from .model import TraceResult


def _compiled(m: timing.Measurement, why) -> bool:
    """Did this run compile (not only load) anything? Then a rerun would find a warmer cache."""
    if why is not None and (why.counts()["miss"] or why.counts()["bypass"]):
        return True
    return any(p.seconds("compile") > 1.0 for p in m.workers())


def _measure_advice(result: TraceResult, argv: list, kw: dict) -> None:
    """Time the command again with the settings the advice names; compare against the run as it
    was, itself run again first when the first run compiled (so both find the cache as warm)."""
    settings: dict = {}
    for a in result.advice:
        settings.update(a.env)
    if not settings:
        return
    base = result.measurement
    if _compiled(base, result.why):
        base = timing.measure(argv, **kw)
        result.reruns.append(base)
    after = timing.measure(argv, settings=settings, **kw)
    result.reruns.append(after)
    for a in result.advice:
        if a.env:
            a.measured = {"without": base.wall, "with": after.wall, "runs": 1,
                          "exit_pool_without": _max_phase(base, "exit_pool"),
                          "exit_pool_with": _max_phase(after, "exit_pool")}


def _max_phase(m: timing.Measurement, phase: str) -> Optional[float]:
    workers = m.workers()
    return round(max(p.seconds(phase) for p in workers), 3) if workers else None


def run(argv: list, cache_dir: str, cache_source: str = "default", env: Optional[dict] = None,
        timeout: Optional[float] = None, stdout: Optional[int] = None, keep_trace: Optional[str] = None,
        measure_advice: bool = False) -> TraceResult:
    """Trace ``argv`` with TORCHINDUCTOR_CACHE_DIR=cache_dir (the dir warm-cache fills)."""
    base = dict(os.environ if env is None else env)
    base["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    kw = {"env": base, "timeout": timeout, "stdout": stdout}
    m = timing.measure(argv, keep_trace=keep_trace, inspect=trace_mod.read, **kw)
    result = TraceResult(command=list(argv), cache_dir=cache_dir, cache_source=cache_source, measurement=m)
    failed = judge.command_failure(m, timeout)
    if not m.started:
        result.findings = [failed]
        return result
    tr = m.inspected if isinstance(m.inspected, trace_mod.Trace) else trace_mod.Trace()
    result.why = why_mod.section(argv, tr, cache_dir, cache_source, base, returncode=m.returncode,
                                 seconds=m.wall, trace_dir=keep_trace)
    result.findings = judge.findings(m, result.why, timeout)
    warm = why_mod.warm_command(result.why) if result.why.counts()["miss"] else None
    result.advice = judge.advice(m, result.why, result.findings, warm)
    if measure_advice and failed is None:
        _measure_advice(result, argv, kw)
    return result
