"""``import torch`` in the target interpreter, in a time-boxed subprocess.

A broken torch (missing .so, ABI mismatch, segfault in CUDA init, a hang) becomes a
ProbeError naming the stage it died in, never a traceback in flexdoctor.
"""

from __future__ import annotations

import time

from ..facts import ProbeError, TorchRuntimeFacts, from_jsonable
from ..worker import run as worker_run
from ..worker import script
from .interp import read_result

SCRIPT = script("_torch_probe.py")

# python -> (process, started at). `import torch` is the slowest thing flexdoctor does, so the
# CLI starts it before parsing arguments (prefetch) and the probe collects it later.
_PREFETCHED: dict = {}


def prefetch(python: str) -> None:
    if python in _PREFETCHED:
        return
    child = worker_run.start([python, str(SCRIPT)])
    if isinstance(child, worker_run.Completed):
        return  # could not start: probe() will start it again and report why
    _PREFETCHED[python] = (child, time.monotonic())  # never left behind: worker.lifetime ends it at exit


def probe(python: str, timeout: float = 60.0) -> TorchRuntimeFacts | ProbeError:
    if python in _PREFETCHED:
        child, started = _PREFETCHED.pop(python)
        done = worker_run.wait(child, max(timeout - (time.monotonic() - started), 0.1))
    else:
        done = worker_run.run([python, str(SCRIPT)], timeout=timeout)
    data = read_result(done, f"{python} {SCRIPT.name}")
    if isinstance(data, ProbeError):
        return data
    if "import_error" in data:
        return ProbeError(data["import_error"], kind="import-error", stage="import torch",
                          detail=data.get("traceback"))
    return from_jsonable(TorchRuntimeFacts, data)
