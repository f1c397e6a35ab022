"""The structural layer's round 5 (issue 22, tune-e2): GPUs a process cannot have, builds without their
toolchain, torch's companion packages, and GPUs in containers and clusters.

- Compute mode: "all CUDA-capable devices are busy or unavailable" (cudaErrorDevicesUnavailable, 46, in
  every wording: THC's ``error=46``, Caffe's ``Check failed ... (46 vs. 0)``, a program's own ``CUDA Runtime
  Error(46)``): another process holds a GPU in Exclusive_Process mode (or the mode is Prohibited).
- A GPU the driver lost without an Xid line: NVRM's "fallen off the bus" in its multi-line form, nvidia-smi's
  "Unable to determine the device handle for GPU...: Unknown Error".
- The NVIDIA driver's user-space and kernel parts of different versions (NVRM "API mismatch", named).
- nvidia-container-cli failing in a container's prestart hook: no driver library on the host, the kernel
  module not loaded, an unknown device, NVML version mismatch; Podman's unresolvable CDI devices.
- torch's TCPStore with libuv (the default from torch 2.4) on a Windows build without it.
- A Rust extension built from source without Rust (setuptools-rust, maturin): no wheel for this
  Python/platform.
- torchvision/torchaudio pinned next to a torch they were not made for (pip's resolution report), with the
  matching releases from structural/history.py (torch_history.toml, wheels/torch_wheels.toml).
- pkg_resources of an old setuptools on Python 3.12 (pkgutil.ImpImporter removed).
- DDP's unused-parameter report printed without its RuntimeError; an invalid device ordinal in THC's words.
- conda's "Run 'conda init' before 'conda activate'"; Horovod built without a framework's extension.

Every value put in a command is a number, a version or a name read by a bounded pattern (text from a log
is data).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from ...text import t
from . import c2
from .collect import Seen
from .context import LogFacts
from .errors import env
from .history import companions
from .model import Answer
from .readers import _answer

_BUS = re.compile(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_VERSION = re.compile(r"\d{1,4}(?:\.\d{1,4}){1,3}")


def _w(key: str, **kw) -> str:
    return t(f"structural.e2.{key}", **kw)


def _ans(kind: str, subject: str, key: str, seen: Seen, facts: LogFacts, rank: int, commands=(),
         confidence: str = "high", **kw) -> Answer:
    """An answer whose title, cause and fix are structural.e2.<key>.{title,cause,fix}."""
    return _answer(kind, subject, confidence, _w(f"{key}.title", **kw), _w(f"{key}.cause", **kw),
                   _w(f"{key}.fix", **kw), list(commands), seen, facts, rank)


# --- the GPU is held by another process (compute mode) ------------------------------------------------

def busy(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """cudaErrorDevicesUnavailable (46): the compute mode lets one process (or none) own the GPU.
    CUDA Runtime API, cudaComputeMode; nvidia-smi(1) -c/--compute-mode: 0/DEFAULT, 2/PROHIBITED,
    3/EXCLUSIVE_PROCESS. Ranks the CUDA table's generic reading of the same error (45) out."""
    return _ans("cuda-error", "cudaErrorDevicesUnavailable", "busy", seen, facts, 30,
                ["nvidia-smi --query-gpu=index,compute_mode --format=csv",
                 "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
                 "sudo nvidia-smi -c DEFAULT"])


# --- a GPU the driver lost (no Xid line in the log) -----------------------------------------------------

def lost(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    bus = (seen.groups.get("pci") or "").lower()
    bus = bus if _BUS.fullmatch(bus) else None
    shown = bus or _w("word.the_gpu")
    commands = [f"sudo lspci -vvv -s {bus}" if bus else "lspci | grep -i nvidia",
                "sudo dmesg -T | grep -i -e xid -e 'fallen off' -e AER"]
    return _ans("cuda-error", "gpu-lost", "lost", seen, facts, 12, commands, bus=shown)


# --- NVIDIA driver: user space and kernel module of different versions ---------------------------------

def nvml(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """NVRM's "API mismatch: the client has the version X, but this kernel module has the version Y"
    (nvidia.ko, nv.c): the user-space driver X was installed and the old module still runs."""
    client = seen.groups.get("client", "")
    if not _VERSION.fullmatch(client):
        return None
    return _ans("cuda-error", "nvml-mismatch", "api_mismatch", seen, facts, 6,
                ["cat /proc/driver/nvidia/version", "modinfo -F version nvidia",
                 "sudo reboot  # after checking that no jobs are running"], client=client)


def container(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """nvidia-container-cli (libnvidia-container) failing in the runtime's prestart hook, Podman's CDI."""
    g = seen.groups
    if g.get("cdi"):
        return _ans("cuda-error", "cdi", "cdi", seen, facts, 14,
                    ["sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml", "nvidia-ctk cdi list"])
    if g.get("mismatch"):
        return _ans("cuda-error", "nvml-mismatch", "ctr_mismatch", seen, facts, 8,
                    ["cat /proc/driver/nvidia/version", "sudo reboot  # after checking that no jobs are running"])
    if g.get("nolib"):
        return _ans("cuda-error", "container-no-driver", "ctr_nolib", seen, facts, 14,
                    ["nvidia-smi", "ldconfig -p | grep libnvidia-ml"])
    if g.get("notloaded"):
        return _ans("cuda-error", "container-no-driver", "ctr_notloaded", seen, facts, 14,
                    ["lsmod | grep nvidia", "sudo modprobe nvidia", "sudo dmesg -T | grep -i nvrm"])
    if g.get("unknown"):
        return _ans("cuda-error", "container-device", "ctr_unknown", seen, facts, 14,
                    ["nvidia-smi -L", "docker run --rm --gpus all ubuntu nvidia-smi -L"])
    return None


# --- torch's TCPStore with libuv on Windows -------------------------------------------------------------

def libuv(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """torch/csrc/distributed/c10d/TCPStore.cpp: "use_libuv was requested but PyTorch was build without
    libuv support". torch 2.4 made libuv the TCPStore default (torch/distributed/rendezvous.py reads
    use_libuv from the init_method URL, else USE_LIBUV, default "1"; elastic's c10d rendezvous reads
    --rdzv-conf use_libuv); Windows wheels are built without libuv."""
    commands = ["set USE_LIBUV=0", '$env:USE_LIBUV="0"'] if facts.platform in (None, "windows") \
        else [env("USE_LIBUV=0", facts)]
    return _ans("launcher", "libuv", "libuv", seen, facts, 20, commands)


# --- a Rust extension built without Rust ----------------------------------------------------------------

def rust(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """setuptools-rust ("error: can't find Rust compiler") or maturin ("Cargo, the Rust package manager,
    is not installed or is not on PATH"): pip is building a Rust extension (tokenizers, safetensors,
    orjson ...) from its sdist because no wheel fits this Python and platform."""
    if facts.platform == "windows":
        commands = ["winget install --id Rustlang.Rustup -e", "python -m pip install --upgrade pip"]
    else:
        commands = ["curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y",
                    '. "$HOME/.cargo/env"', "python -m pip install --upgrade pip"]
    return _ans("pip-no-distribution", "rust", "rust", seen, facts, 24, commands)


# --- torchvision / torchaudio next to another torch (pip's report) -------------------------------------

_PIN = re.compile(r"(?<![\w.-])(torch|torchvision|torchaudio)==(\d{1,3}\.\d{1,3}(?:\.\d{1,3})?)(\+[a-z]{2,5}\d{0,4})?")


def _pins(text: str) -> dict:
    return {m.group(1): (m.group(2), m.group(3) or "") for m in _PIN.finditer(text)}


def _install(torch: str, pins: dict, tag: str) -> str:
    words = " ".join(f"{d}=={v}" for d, v in [("torch", torch)] + sorted(pins.items()))
    index = f" --index-url https://download.pytorch.org/whl/{tag[1:]}" if re.fullmatch(r"\+(?:cu|rocm)[\d.]{2,6}", tag) \
        else ""
    return f"python -m pip install {words}{index}"


def pair(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("comp"):
        return _made_for(seen, facts)
    listed, sep, _rest = g.get("list", "").partition(" because these package versions have conflicting dependencies")
    if not sep:
        return None
    pins = _pins(listed)
    if "torch" not in pins:
        return None
    torch, tag = pins["torch"]
    vision, audio = companions(torch)
    made = {"torchvision": vision, "torchaudio": audio}
    wrong = {d: made[d] for d in ("torchvision", "torchaudio") if d in pins and made[d] and pins[d][0] != made[d]}
    if not wrong:
        return None
    right = {d: v for d, v in made.items() if v and (d in pins)}
    named = ", ".join(f"{d}=={v}" for d, v in sorted(wrong.items()))
    return _ans("version-constraint", sorted(wrong)[0], "pair", seen, facts, 24, [_install(torch, right, tag)],
                torch=torch, named=named,
                pinned=", ".join(f"{d}=={pins[d][0]}" for d in sorted(wrong)))


def _made_for(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """"torchvision 0.16.2 depends on torch==2.1.2": the torch that release was made for."""
    g = seen.groups
    comp, cv, tv = "torch" + g["comp"], g.get("cv", ""), g.get("tv", "")
    cv, tv = cv.split("+")[0], tv.split("+")[0]
    if not (_VERSION.fullmatch(cv) and _VERSION.fullmatch(tv)):
        return None
    return _ans("version-constraint", comp, "made_for", seen, facts, 25,
                [f"python -m pip install torch=={tv} {comp}=={cv}", "python -m pip show torch"],
                comp=comp, cv=cv, tv=tv)


# --- pkg_resources on Python 3.12 -----------------------------------------------------------------------

def impimporter(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """Python 3.12 removed pkgutil.ImpImporter (What's New in 3.12, "pkgutil"); the pkg_resources of old
    setuptools registers a finder for it at import."""
    return _ans("version-constraint", "setuptools", "impimporter", seen, facts, 24,
                ["python -m pip install --upgrade setuptools"])


# --- DDP's unused parameters, invalid ordinals in THC's words -------------------------------------------

def ddp(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """reducer.cpp's "Parameter indices which did not receive grad for rank N" (the RuntimeError above it
    may be cut off the log): tune-c2's unused-parameters answer."""
    return c2.ddp(replace(seen, groups={"unused": "iteration"}), facts)


def ordinal(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """torch < 1.5 (THC): "cuda runtime error (10) : invalid device ordinal" (cudaErrorInvalidDevice was 10
    before CUDA 10.1 renumbered it 101): tune-c2's reading."""
    return c2.ordinal(seen, facts)


# --- conda, Horovod ------------------------------------------------------------------------------------

def conda(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """conda/cli/main.py (conda < 23.x "CommandNotFoundError: Your shell has not been properly configured",
    conda >= 23 "CondaError: Run 'conda init' before 'conda activate'"): the shell has no conda function."""
    if facts.platform == "windows":
        commands = ["conda init powershell", "conda init cmd.exe"]
    else:
        commands = ['source "$(conda info --base)/etc/profile.d/conda.sh"', "conda init bash"]
    return _ans("launcher", "conda-init", "conda", seen, facts, 20, commands)


_HVD = {"torch": "PYTORCH", "tensorflow": "TENSORFLOW", "keras": "TENSORFLOW", "mxnet": "MXNET"}
_HVD_NAME = {"PYTORCH": "horovod.torch", "TENSORFLOW": "horovod.tensorflow", "MXNET": "horovod.mxnet", "MPI": "MPI",
             "GLOO": "Gloo"}


def horovod(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """horovod/common/util.py check_extension, horovod/runner/launch.py: a framework extension or a
    controller (MPI, Gloo) Horovod was not built with; the message names the variable that forces it."""
    ext, fw = seen.groups.get("ext", ""), seen.groups.get("fw", "")
    fw = fw or _HVD.get(ext, "")
    if fw not in _HVD_NAME:
        return None
    var = f"HOROVOD_WITH_{fw}"
    gpu = " HOROVOD_GPU_OPERATIONS=NCCL" if fw in _HVD.values() else ""
    return _ans("pip-no-distribution", "horovod", "horovod", seen, facts, 24,
                [f"{var}=1{gpu} python -m pip install --no-cache-dir --force-reinstall horovod",
                 "horovodrun --check-build"], var=var, ext=_HVD_NAME[fw])


# --- Ray: no node with the GPUs a task asks for ---------------------------------------------------------

def ray(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """The autoscaler's "No available node types can fulfill resource request {'GPU': 1.0}": no node of this
    Ray cluster has (or may get) the GPUs; a local instance started without them, or GPUs Ray did not count.
    vLLM's docs add nodes with several IPs (VLLM_HOST_IP)."""
    if "'GPU'" not in seen.groups.get("req", ""):
        return None
    return _ans("launcher", "ray-gpu", "ray", seen, facts, 24,
                ["ray status", "python -c \"import ray; ray.init(address='auto'); print(ray.cluster_resources())\""])


# --- notices that explain a later failure ----------------------------------------------------------------

_GPU_WORDS = re.compile(r"CUDA|cuda|GPU|NVIDIA|nvidia|[Dd]river")
# what a module imported before pip replaced it raises: old and new files mixed (a symbol, a name, a module attribute)
_STALE = re.compile(r"undefined symbol|cannot import name|partially initialized module|module '[\w.]{1,80}' has no attribute"
                    r"|compiled (?:using|against)|[Vv]ersion mismatch|DLL load failed")


def notice(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A notice read only when the log's root error comes after it and is of the kind it causes."""
    root = facts.root
    if root is None or root[0] <= seen.line:
        return None
    text = f"{root[1]}: {root[2]}"
    if seen.groups.get("sure") == "nv":
        if not _GPU_WORDS.search(text):
            return None
        return _ans("cuda-error", "apptainer-nv", "apptainer", seen, facts, 13,
                    ["nvidia-smi -L", "srun --gres=gpu:1 --pty nvidia-smi -L"])
    if not _STALE.search(text):
        return None
    return _ans("launcher", "runtime-restart", "restart", seen, facts, 15,
                ["python -c \"import torch; print(torch.__version__)\""])
