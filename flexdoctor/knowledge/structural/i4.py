"""The structural layer's readers of coverage builder i4 (issue 22, cov12): installing and platforms.

- ``no_hip``: torch's ROCm build found no AMD GPU it may use ("RuntimeError: No HIP GPUs are available": torch's
  "No CUDA GPUs are available" of c10/cuda/CUDAFunctions.cpp, hipified). What the threads settle on, in the order to try
  (i4_tables.toml [nohip]): the user's access to /dev/kfd and /dev/dri (render and video groups), a container started
  without those devices, HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES hiding the GPU, a ROCm wheel on a machine whose GPU
  is not AMD's.
- ``poetry_python``: poetry found no file of a torch local build (2.5.1+cu124): besides macOS (h7's reading), the
  Python of the project's environment may be newer than the release's wheels (torch's release history, per platform).
"""

from __future__ import annotations

from typing import Optional

from . import history
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue
from .tables import _load

_say = catalogue("i4")


def _table() -> dict:
    return _load("i4_tables.toml")  # _load caches each file


def no_hip(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if not seen.groups.get("hip"):
        return None
    row = _table()["nohip"]
    where = "wsl" if facts.platform == "wsl2" else "linux"
    return _answer("cuda-error", "hipErrorNoDevice", "high", _say("nohip.title"), _say("nohip.cause"),
                   _say(f"nohip.fix_{where}"), list(row[f"commands_{where}"]), seen, facts, 14, package="torch")


def poetry_python(ver: str, platform: Optional[str]) -> str:
    """Words on the Pythons a torch local build covers (tune-i4, for h7's poetry reading); '' when unknown."""
    pub = ver.split("+")[0]
    linux = history.python_range(pub, "linux-x86_64")
    windows = history.python_range(pub, "windows-x86_64")
    if linux is None or windows is None:
        return ""
    newest = linux[1] if platform == "linux" else windows[1]  # unknown platform: the one both cover
    return _say("poetry.python", ver=ver, lo=history.pyname(linux[0]), linux=history.pyname(linux[1]),
                windows=history.pyname(windows[1]), newest=history.pyname(newest))
