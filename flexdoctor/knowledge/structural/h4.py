"""The structural layer's readers of tune-h4 (issue 22, cycle 2 of rounds 8-9): containers, cuDNN and Windows DLLs, read
by the error's shape with the remedy the sources and threads establish (sources: h4_tables.toml).

- ``entry_context``: the NVIDIA Container Toolkit's "requirement error: unsatisfied condition: cuda>=X.Y" (answered by the
  entry FDE975) gets the oldest driver that reports CUDA X.Y, from NVIDIA's toolkit/driver table.
- ``win127``: Windows' ERROR_PROC_NOT_FOUND (127) loading a DLL in torch\\lib: the DLL was found, a function it imports
  was not, so another version of a dependency was loaded (DLLs left by an earlier torch, a conda env mixing CUDA packages,
  a Python build the wheel was not made for): a clean reinstall, not the VC++ runtime that answers 126.
- ``cudnn``: a framework that finds another cuDNN at run time than the one it was built with: TensorFlow's and JAX's
  "Loaded runtime CuDNN library: X but source was compiled with: Y" (dotted or packed 7103 versions) and torch's older
  wording "compiled against (8, 3, 2) but linked against (8, 0, 3)" (torch <= 1.12, reworded by pytorch#80877).
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Optional

from . import f2
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .errors import env
from .readers import _answer, catalogue
from .tables import _load

_WIN127 = re.compile(r"WinError 127\b")
_CUDA_REQ = re.compile(r"unsatisfied condition: cuda ?>= ?(\d{1,2})\.(\d{1,2})")


_say = catalogue("h4")


@functools.lru_cache(maxsize=1)
def _drivers() -> tuple:
    rows = _load("h4_tables.toml")["cuda_driver"]
    return tuple((tuple(int(x) for x in r["cuda"].split(".")), r["linux"], r.get("windows")) for r in rows)


def driver_for(major: int, minor: int) -> Optional[tuple]:
    """(CUDA release, Linux driver, Windows driver or None): the oldest driver whose CUDA version is >= major.minor."""
    for cuda, linux, windows in _drivers():
        if cuda >= (major, minor):
            return cuda, linux, windows
    return None


def entry_context(entry_id: str, text: str) -> dict:
    """Placeholder values an entry's fix takes from its line (FDE975: the driver that CUDA X.Y needs)."""
    m = _CUDA_REQ.search(text) if entry_id == "FDE975" else None
    row = driver_for(int(m.group(1)), int(m.group(2))) if m else None
    if row is None:
        return {}
    cuda, linux, windows = row
    need = _say("driver.linux_windows", linux=linux, windows=windows) if windows else _say("driver.linux", linux=linux)
    return {"need_driver": need, "need_cuda": f"{m.group(1)}.{m.group(2)}"}


# --- Windows error 127 in torch\lib ----------------------------------------------------------------------------------

def win127(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if not _WIN127.search(seen.text):
        return None  # 126 (a missing dependency) and the rest: libs.answer
    path = seen.groups.get("path") or ""
    name = re.split(r"[\\/]", path)[-1]
    if not re.fullmatch(r"[\w.+-]{1,80}\.dll", name, re.IGNORECASE) or not re.search(r"[\\/]torch[\\/]lib[\\/]", path,
                                                                                        re.IGNORECASE):
        return None
    case = "python" if name.lower().startswith("torch_python") else "conda" if facts.conda or _conda(path) else "pip"
    commands = ["python -m pip uninstall -y torch torchvision torchaudio"]
    if case == "conda":
        commands = []
    return _answer("shared-library", name, "high", _say("win127.title", lib=name), _say("win127.cause", lib=name),
                   _say(f"win127.fix_{case}") + " " + _say("win127.find"), commands, seen, facts, 20)


def _conda(path: str) -> bool:
    return bool(re.search(r"[\\/](?:mini|ana)conda\d?[\\/]|[\\/]envs[\\/]", path, re.IGNORECASE))


# --- cuDNN found at run time older (or other) than the build's --------------------------------------------------------

def _dotted(value: str) -> str:
    """'7103' -> '7.1.3' (cuDNN < 9: 1000*major + 100*minor + patch), '90100' -> '9.1.0'; dotted stays."""
    if "." in value:
        return value
    n = int(value)
    if n >= 10000:
        return f"{n // 10000}.{n % 10000 // 100}.{n % 100}"
    return f"{n // 1000}.{n % 1000 // 100}.{n % 100}"


def cudnn(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("tbuilt"):
        return f2.cudnn(replace(seen, groups={"built": g["tbuilt"], "found": g.get("tfound")}), facts)
    built, found = _dotted(g.get("built") or ""), _dotted(g.get("found") or "")
    if not built or not found:
        return None
    var = "PATH" if facts.platform == "windows" else "LD_LIBRARY_PATH"
    major = built.split(".")[0]
    commands = ["conda list cudnn"] if facts.conda or facts.platform is None else []
    commands += [f"conda install cudnn={built}"] if facts.conda else []
    if facts.platform != "windows":
        commands.insert(0, "echo $LD_LIBRARY_PATH")
    older = _vt(found) < _vt(built)
    lead = _say("cudnn.lead_older" if older else "cudnn.lead_other", built=built)
    return _answer("shared-library", "cudnn", "high", _say("cudnn.title", built=built, found=found),
                   _say("cudnn.cause", built=built, found=found, var=var),
                   _say("cudnn.fix", lead=lead, built=built, var=var, major=major), commands, seen, facts, 14)


def _vt(version: str) -> tuple:
    return tuple(int(x) for x in version.split("."))


# --- torch itself missing --------------------------------------------------------------------------------------------

def torch_missing(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """"No module named 'torch'": install it into the Python that runs; where pip was building a package (its isolated
    build environment holds only the declared build requirements), build with --no-build-isolation or use a wheel.
    Ranked under readers.module's answer for the same module (30), which words torch as a submodule's parent."""
    case = "build" if _building(seen, facts) else "plain"
    commands = ['python -c "import sys; print(sys.executable)"', "python -m pip show torch"]
    return _answer("missing-module", "torch", "high", _say("torchmod.title"), _say(f"torchmod.cause_{case}"),
                   _say(f"torchmod.fix_{case}"), commands, seen, facts, 29)


_BUILD = re.compile(r"pyproject_hooks|pep517|pip-build-env-|build_meta\.py|setup\.py|[Bb]uilding wheel|build wheel|"
                    r"\bpip3? install\b")


def _building(seen: Seen, facts: LogFacts) -> bool:
    return bool(_BUILD.search(seen.text)) or any(_BUILD.search(p) for p in facts.paths)


# --- vLLM's engine core start-up wrapper -----------------------------------------------------------------------------

_WRAPPER_RANK = 85  # as g3's wrappers: above LAST_RESORT (70), shown only when nothing names the engine core's own error


def vllm_core(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """"Engine core initialization failed. See root cause above.": the engine core process's own error comes before it;
    where the paste lacks it, the start-up failures people hit most are memory ones (gpu_memory_utilization)."""
    commands = ["nvidia-smi", env("VLLM_LOGGING_LEVEL=DEBUG", facts)]
    return _answer("launcher", "vllm-engine-core", "medium", _say("vllmcore.title"), _say("vllmcore.cause"),
                   _say("vllmcore.fix"), commands, seen, facts, _WRAPPER_RANK)
