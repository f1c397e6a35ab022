"""``import torch`` in the target interpreter, in a time-boxed subprocess.

A broken torch (missing .so, ABI mismatch, segfault in CUDA init, a hang) becomes a
ProbeError naming the stage it died in, never a traceback in flexdoctor.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..facts import ProbeError, TorchRuntimeFacts, from_jsonable
from . import _subprocess
from ._torch_probe import RESULT, STAGE
from .interp import failure

SCRIPT = Path(__file__).with_name("_torch_probe.py")


def probe(python: str, timeout: float = 60.0) -> TorchRuntimeFacts | ProbeError:
    done = _subprocess.run([python, str(SCRIPT)], timeout=timeout)
    stage = None
    result = None
    for line in done.stdout.splitlines():
        if line.startswith(STAGE):
            stage = line[len(STAGE):].strip()
        elif line.startswith(RESULT):
            result = line[len(RESULT):]
    if result is None:
        err = failure(done, "the torch probe", stage=stage)
        if err is not None:
            return err
        return ProbeError("the torch probe printed no result", kind="garbage", stage=stage,
                          detail=_subprocess.tail(done.stdout + done.stderr) or None)
    try:
        data = json.loads(result)
    except ValueError:
        return ProbeError("the torch probe printed garbage", kind="garbage", stage=stage,
                          detail=_subprocess.tail(result))
    if "import_error" in data:
        return ProbeError(data["import_error"], kind="import-error", stage="import torch",
                          detail=data.get("traceback"))
    return from_jsonable(TorchRuntimeFacts, data)
