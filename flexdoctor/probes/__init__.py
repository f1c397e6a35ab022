"""Probes touch the machine; everything else in flexdoctor is pure over the Facts they return.

``gather`` runs every probe concurrently in daemon threads, each with its own time box. The
subprocess probes (target interpreter, ``import torch``) run in parallel with NVML and the
toolchain lookups, so a full check costs about one ``import torch``.
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
from typing import Any, Callable, Optional

from .. import __version__
from ..facts import Facts, ProbeError

# Per-probe wall-clock limits (seconds). The torch runtime probe imports torch and initialises
# CUDA, which takes 3-10 s on a healthy machine and can hang on a broken driver.
DEFAULT_TIMEOUTS = {
    "host": 5.0,
    "gpu": 10.0,
    "interp": 20.0,
    "torch_runtime": 90.0,
    "toolchain": 20.0,
    "cache": 10.0,
    # check --project / DIFFUSERS_ATTN_*: `import diffusers` (imports torch) in the target interpreter.
    "project": 90.0,
    # check --deep compiles flex per dtype (10-30 s each cold) and runs every attention kernel.
    "deep": 300.0,
    # check --deep on a node with 2+ GPUs: one process per GPU imports torch, then an all-reduce.
    "multi_gpu": 120.0,
}


class _Job:
    def __init__(self, name: str, fn: Callable[[], Any], timeout: float):
        self.name, self.fn, self.timeout = name, fn, timeout
        self.value: Any = ProbeError.because("probe_timeout", kind="timeout", probe=name, seconds=f"{timeout:g}")
        self.seconds: Optional[float] = None
        self.thread = threading.Thread(target=self._run, name=f"flexdoctor-{name}", daemon=True)

    def _run(self) -> None:
        t0 = time.perf_counter()
        try:
            self.value = self.fn()
        except Exception as exc:  # a probe bug or an OS surprise is a fact, not a crash
            self.value = ProbeError(f"{type(exc).__name__}: {exc}", kind="error", stage=self.name)
        self.seconds = round(time.perf_counter() - t0, 3)


def gather(
    python: str,
    runtime: bool = True,
    timeouts: Optional[dict] = None,
    on_done: Optional[Callable[[str], None]] = None,
    deep: Optional[Callable[[float], Any]] = None,
    config: Any = None,
    multi_gpu: Optional[Callable[[float], Any]] = None,
) -> Facts:
    """Collect all facts. ``runtime=False`` skips the ``import torch`` tier (``--static``);
    ``deep(timeout)`` also runs the real kernels (``check --deep`` passes flexdoctor.deep's
    probe: deep/ stands beside probes/, which never import it); ``multi_gpu(timeout)`` the GPUs
    of the node together (deep.multigpu), before the deep probe."""
    # long: the one place that wires every probe with its time limit and ordering; each line is one probe.
    from . import cache, gpu, host, interp, toolchain, torch_runtime

    limits = {**DEFAULT_TIMEOUTS, **(timeouts or {})}
    specs: dict[str, Callable[[], Any]] = {
        "host": host.probe,
        "gpu": gpu.probe,
        "interp": lambda: interp.observe(python, timeout=limits["interp"]),
        "toolchain": toolchain.probe,
        "cache": cache.probe,
    }
    if runtime:
        specs["torch_runtime"] = lambda: torch_runtime.probe(python, timeout=limits["torch_runtime"])
    job_limits = dict(limits)
    if multi_gpu is not None:
        # The node's GPUs together run first and alone: the deep probe's kernels on GPU 0 would
        # share the GPUs with the all-reduce and lower the bandwidth it measures. On a node with
        # fewer than two GPUs the multi-GPU probe returns at once.
        multi_done = threading.Event()

        def run_multi():
            try:
                return multi_gpu(limits["multi_gpu"])
            finally:
                multi_done.set()

        specs["multi_gpu"] = run_multi
    if deep is not None:
        if multi_gpu is not None:
            def run_deep():
                multi_done.wait(limits["multi_gpu"] + 5.0)
                return deep(limits["deep"])

            specs["deep"] = run_deep
            job_limits["deep"] = limits["deep"] + limits["multi_gpu"] + 5.0
        else:
            specs["deep"] = lambda: deep(limits["deep"])
    from . import diffusers as project_probe  # ``config``: a parsed SimpleTuner config (check --project)

    specs["project"] = lambda: project_probe.probe(python, config=config, runtime=runtime,
                                                   timeout=limits["project"])
    jobs = [_Job(name, fn, job_limits[name]) for name, fn in specs.items()]
    started = time.perf_counter()
    for job in jobs:
        job.thread.start()
    for job in jobs:
        # Subprocess probes enforce their own timeout; the small margin lets them report it.
        remaining = job.timeout + 2.0 - (time.perf_counter() - started)
        job.thread.join(max(remaining, 0.0))
        if on_done is not None:
            on_done(job.name)
    values = {job.name: job.value for job in jobs}
    py, torch, not_started = values["interp"] if isinstance(values["interp"], tuple) else (values["interp"],) * 2 + (None,)
    runtime_value = values.get("torch_runtime") or _not_run(python, not_started)
    return Facts(
        host=values["host"],
        gpu=values["gpu"],
        python=py,
        torch=torch,
        torch_runtime=runtime_value,
        toolchain=values["toolchain"],
        cache=values["cache"],
        deep=values.get("deep"),
        multi_gpu=values.get("multi_gpu"),
        project=values.get("project"),
        timings={job.name: job.seconds for job in jobs},
        collected_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        flexdoctor_version=__version__,
    )


def _not_run(python: str, not_started: Optional[str]) -> ProbeError:
    """Why there are no torch runtime facts: --static, or (as root) the interpreter was not started
    (``not_started``: why, from ``interp.observe``)."""
    if not_started:
        return ProbeError.because("root_files_only", kind="skipped", python=python, why=not_started)
    return ProbeError.because("runtime_skipped", kind="skipped")
