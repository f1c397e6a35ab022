"""Run ``_deep_probe.py`` in the target interpreter, time-boxed, and turn its output into facts.

The script prints a stage line as each step starts and a part line as each section finishes,
so a crash (segfault in a kernel), a hang or an out-of-memory kill still leaves the finished
sections, plus a ProbeError naming the stage it died in (``DeepFacts.incomplete``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from typing import Callable, Optional

from ..facts import DeepFacts, ProbeError, from_jsonable
from ..worker import run as worker_run
from ..worker import script
from ..workload import make
from .bench import reason_english

SCRIPT = script("_deep_probe.py")
DEFAULT_TIMEOUT = 300.0

# What each section of the deep probe runs, per device the probe finds (small: the deep tier
# proves that kernels run and agree with float64, it does not time them). The probe compiles
# flex causal and runs SDPA and flash-attn unmasked, in each dtype it tests.
WORKLOADS = {
    "sdpa": {"cuda": make(batch=1, heads=8, seq_len=1024, head_dim=64, device="cuda"),
             "cpu": make(batch=1, heads=8, seq_len=256, head_dim=64, device="cpu")},
    "flex": {"cuda": make(batch=2, heads=4, seq_len=256, head_dim=64, mask="causal", device="cuda"),
             "cpu": make(batch=1, heads=2, seq_len=128, head_dim=16, mask="causal", device="cpu")},
    "flash_attn": {"cuda": make(batch=2, heads=4, seq_len=256, head_dim=64, device="cuda")},
}


def shapes() -> dict:
    """WORKLOADS as the probe script reads them: section -> device -> [B, H, L, D]."""
    return {section: {dev: [w.batch, w.heads, w.seq_len, w.head_dim] for dev, w in per.items()}
            for section, per in WORKLOADS.items()}
_LISTENERS: list = []


@contextlib.contextmanager
def listen(callback: Callable[[str], None]):
    """Call ``callback(stage)`` as each deep-probe stage starts (progress for ``check --deep``),
    also when ``probes.gather`` runs it."""
    _LISTENERS.append(callback)
    try:
        yield
    finally:
        _LISTENERS.remove(callback)


def _notify(stage: str) -> None:
    for cb in list(_LISTENERS):
        try:
            cb(stage)
        except Exception:  # a display problem must not lose the probe
            pass


def probe(
    python: str,
    timeout: float = DEFAULT_TIMEOUT,
    device: Optional[str] = None,
    flex_dtypes: Optional[list] = None,
    on_stage: Optional[Callable[[str], None]] = None,
    extra: Optional[dict] = None,
) -> DeepFacts | ProbeError:
    """Run the deep probe; ``on_stage`` is called with each stage name as it starts."""
    cfg: dict = {"shapes": shapes(), **(extra or {})}
    if device:
        cfg["device"] = device
    if flex_dtypes:
        cfg["flex_dtypes"] = list(flex_dtypes)

    def stage_seen(name: str) -> None:
        _notify(name)
        if on_stage is not None:
            on_stage(name)

    done = worker_run.stream([python, str(SCRIPT), json.dumps(cfg)], worker_run.Reader(on_stage=stage_seen).feed,
                             timeout=timeout)
    return parse(done.stdout, done.stderr, done.returncode, done.timed_out, done.start_error, timeout)


def parse(stdout: str, stderr: str, returncode: Optional[int], timed_out: bool = False,
          start_error: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> DeepFacts | ProbeError:
    """Facts from the probe's output, whole or partial."""
    if start_error:
        return ProbeError.because("deep_start_failed", kind="error", stage="start", error=start_error)
    wire = worker_run.read(stdout)
    stage, data = wire.stage, wire.result()
    parts = {name: value for name, value in wire.parts if name}
    detail = worker_run.tail(stderr, 12) or None
    if data is not None:
        if "import_error" in data:
            return ProbeError(data["import_error"], kind="import-error", stage="import torch")
        if data.get("device_error"):
            return ProbeError(data["device_error"], kind="error", stage="device")
        return _facts(data)
    # No final line: the process died or hung. Keep what it finished.
    incomplete = _failure(returncode, timed_out, stage, detail, timeout)
    if not parts:
        return incomplete
    data = {"device": "cpu", "incomplete": None}
    flex_runs = [v for k, v in parts.items() if k.startswith("flex ")]
    for key in ("sdpa", "flex", "flash_attn", "xformers"):
        if key in parts:
            data[key] = parts[key]
    if "flex" not in data and flex_runs:
        data["flex"] = flex_runs
    meta = parts.get("meta") or {}
    data.update(meta)
    facts = _facts(data)
    return dataclasses.replace(facts, incomplete=incomplete)


def _failure(returncode: Optional[int], timed_out: bool, stage: Optional[str], detail: Optional[str],
             timeout: float) -> ProbeError:
    # Each reason has a text naming the stage it died in (``..._during``) and one without.
    during, where = ("_during", {"where": stage}) if stage else ("", {})
    if timed_out:
        return ProbeError.because(f"deep_hung{during}", kind="timeout", stage=stage, detail=detail,
                                  seconds=f"{timeout:g}", **where)
    if returncode is not None and returncode < 0:
        sig = worker_run.Completed(returncode, "", "").signal_name
        reason = "deep_killed" if sig == "SIGKILL" else "deep_crashed"
        return ProbeError.because(reason + during, kind="crash", stage=stage, detail=detail, signal=sig, **where)
    return ProbeError.because(f"deep_exit{during}", kind="error", stage=stage, detail=detail, status=returncode,
                              **where)


def _facts(data: dict) -> DeepFacts:
    data = dict(data)
    data.setdefault("device", "cpu")
    for run in data.get("sdpa") or []:
        for b in (run.get("backends") if isinstance(run, dict) else None) or []:
            if isinstance(b, dict) and b.get("error_code") and not b.get("error"):  # English for the JSON
                b["error"] = reason_english(b["error_code"], b.get("error_args"))
    return from_jsonable(DeepFacts, data)
