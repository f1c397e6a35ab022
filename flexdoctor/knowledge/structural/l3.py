"""The structural readers of tuner l3 (issue 22, round 13 train, its leftovers).

- ``launcher``: Triton's C launcher (cuda_utils / __triton_launcher: ``gcc main.c -O3 ... -lcuda``) failed to build,
  with the compiler's own message hidden (triton/common/build.py in 2.x, triton/runtime/build.py in 3.x run it with
  ``subprocess.check_call``): the causes are a libcuda.so the linker cannot find (TRITON_LIBCUDA_PATH; no driver on
  the node), no Python.h (the python3.X-dev package), or a torch without CUDA (torch.version.cuda is None).
- ``step``: Slurm refusing a job *step* (``srun: error: Unable to create step for job N: ...``): srun inside an
  allocation inherits the outer job's SLURM_* variables, so the step asks for what the allocation does not hold.
- ``bus``: a process killed by SIGBUS as UCX/faulthandler report it ("Caught signal 7 (Bus error: ...)", "Fatal
  Python error: Bus error"): shared memory (/dev/shm) ran out, errors.shm's answer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from . import errors
from .collect import Seen
from .context import LogFacts
from .model import Answer, Fix
from .readers import _answer, catalogue
from .tables import _load

_say = catalogue("l3")
_SPAN = 60  # lines a traceback's frames may take between _build's frame and its exception


def _table() -> dict:
    return _load("l3_tables.toml")  # _load caches each file


# --- Triton's C launcher ---------------------------------------------------------------------------------------------

def launcher(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.rocm or "amdhip64" in seen.text:
        return None  # ROCm's launcher links libamdhip64: another library, another answer
    if "CalledProcessError" not in seen.text and (facts.root is None or not 0 < facts.root[0] - seen.line <= _SPAN):
        return None  # a frame of _build: only in the traceback that ends in the root error
    py = facts.python or "3.X"
    if facts.conda:
        pydev = _say("launcher.pydev_conda", py=py)
    else:
        pydev = _say("launcher.pydev", py=py)
    libdir = _table()["libcuda"]["wsl2" if facts.platform == "wsl2" else "linux"]
    fix = _say("launcher.fix", libdir=libdir, pydev=pydev)
    commands = ["ldconfig -p | grep libcuda", "python -c \"import torch; print(torch.version.cuda)\""]
    return _answer("shared-library", "libcuda.so", "medium", _say("launcher.title"), _say("launcher.cause"),
                   fix, commands, seen, facts, 26, package="triton")


# --- Slurm job steps -------------------------------------------------------------------------------------------------

def step(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    a = errors.slurm(seen, facts)
    if a is None:
        return None
    fix = _say("step.fix") + " " + a.fix.summary
    return replace(a, fix=Fix(fix, a.fix.commands + ("env | grep ^SLURM_",)), rank=a.rank - 1,
                   cause=_say("step.cause") + " " + a.cause)


# --- SIGBUS --------------------------------------------------------------------------------------------------------

def bus(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    return errors.shm(Seen(seen.uid, seen.line, seen.text, {}, seen.start, seen.end), facts)
