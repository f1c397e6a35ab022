"""``import torch`` in the target interpreter, in a time-boxed subprocess.

A broken torch (missing .so, ABI mismatch, segfault in CUDA init, a hang) becomes a
ProbeError naming the stage it died in, never a traceback in flexdoctor.
"""

from __future__ import annotations

import time
from pathlib import Path

from .. import _prefetch
from ..facts import ProbeError, TorchRuntimeFacts, from_jsonable
from . import _subprocess
from .interp import read_result

SCRIPT = Path(__file__).with_name("_torch_probe.py")


def prefetch(python: str) -> None:
    """Start the probe now and collect it in :func:`probe` (the CLI does this before parsing)."""
    _prefetch.start(python)


def probe(python: str, timeout: float = 60.0) -> TorchRuntimeFacts | ProbeError:
    if python in _prefetch.STARTED:
        proc, started = _prefetch.STARTED.pop(python)
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
