"""``import torch`` in the target interpreter, in a time-boxed subprocess.

A broken torch (missing .so, ABI mismatch, segfault in CUDA init, a hang) becomes a
ProbeError naming the stage it died in, never a traceback in flexdoctor.
"""

from __future__ import annotations

import atexit
import time
from pathlib import Path

from ..facts import ProbeError, TorchRuntimeFacts, from_jsonable
from . import _subprocess
from .interp import read_result

SCRIPT = Path(__file__).with_name("_torch_probe.py")

# python -> (process, started at). `import torch` is the slowest thing flexdoctor does, so the
# CLI starts it before parsing arguments (prefetch) and the probe collects it later.
_PREFETCHED: dict = {}


def prefetch(python: str) -> None:
    if python in _PREFETCHED:
        return
    proc = _subprocess.start([python, str(SCRIPT)])
    if isinstance(proc, _subprocess.Completed):
        return  # could not start: probe() will start it again and report why
    _PREFETCHED[python] = (proc, time.monotonic())
    atexit.register(_subprocess.kill, proc)  # never leave it behind (usage errors, Ctrl-C)


def probe(python: str, timeout: float = 60.0) -> TorchRuntimeFacts | ProbeError:
    if python in _PREFETCHED:
        proc, started = _PREFETCHED.pop(python)
        done = _subprocess.wait(proc, max(timeout - (time.monotonic() - started), 0.1))
    else:
        done = _subprocess.run([python, str(SCRIPT)], timeout=timeout)
    data = read_result(done, "the torch probe")
    if isinstance(data, ProbeError):
        return data
    if "import_error" in data:
        return ProbeError(data["import_error"], kind="import-error", stage="import torch",
                          detail=data.get("traceback"))
    return from_jsonable(TorchRuntimeFacts, data)
