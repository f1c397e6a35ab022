"""The structural layer's round 4 (issue 22, tune-c4): GPUs the machine cannot use, hardware faults,
Windows and macOS platform errors, ROCm libraries without this GPU.

- GPU faults the NVIDIA kernel driver logs (``NVRM: Xid (PCI:0000:3b:00): 79, ...``), nvidia-smi's
  "GPU is lost": what an operator does, per Xid, from NVIDIA's Xid catalog (``c4_hardware.toml``).
- No usable GPU: torch's "No CUDA GPUs are available" (CUDA_VISIBLE_DEVICES, a container or job without
  GPUs), "nvidia-smi: command not found" (no driver, or a container without the NVIDIA runtime), torch's
  "No XPU devices are available".
- Text read with the system's code page (``UnicodeDecodeError: 'gbk' codec can't decode``): UTF-8 mode.
- Windows: symbolic links without the privilege (WinError 1314), paths over MAX_PATH (WinError 206, pip's
  long-path hint, "[Errno 2]" on a path longer than 260 characters).
- macOS: a binary of the other architecture (Rosetta), MPS on a macOS torch does not support, tensors
  not on MPS ("Placeholder storage has not been allocated on MPS device!").
- ROCm: rocBLAS without Tensile kernels for this gfx (HSA_OVERRIDE_GFX_VERSION per family,
  ``c4_rocm.toml``), MIOpen failures.

Every value put in a command is checked to be a plain token first (text from a log is data).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen, package_of
from .context import LogFacts
from .errors import env
from .model import Answer
from .readers import SAFE, _answer, _dist_of, on_windows
from .tables import _load

_BUS = re.compile(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")


# --- GPU hardware faults (Xid) -----------------------------------------------------------------------

def _xid_row(code: int) -> Optional[dict]:
    return next((r for r in _load("c4_hardware.toml")["xid"] if r["code"] == code), None)


def _bus_id(g: dict) -> Optional[str]:
    raw = g.get("pci") or g.get("pci2") or g.get("pci3") or ""
    bus = raw if raw.count(".") else raw + ".0"
    return bus.lower() if _BUS.fullmatch(bus) else None


def _xid_commands(action: str, bus: Optional[str], facts: LogFacts) -> list:
    sel = f" -i {bus}" if bus else ""
    drain = [f"nvidia-smi --query-compute-apps=pid,process_name --format=csv{sel}"]
    reset = drain + [f"sudo nvidia-smi -r{sel}"]
    memory = [f"nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER{sel}"]
    return {"app": [env("CUDA_LAUNCH_BLOCKING=1", facts)], "contained": memory,
            "reset": reset, "ecc": memory + reset, "remap": memory + reset, "remapfail": memory + reset,
            "nvlink": [f"nvidia-smi nvlink -e{sel}", "systemctl status nvidia-fabricmanager"] + reset,
            "bus": [f"sudo lspci -vvv -s {bus}" if bus else "lspci | grep -i nvidia",
                    "sudo dmesg -T | grep -i -e xid -e 'fallen off'"],
            "gsp": reset + ["cat /proc/driver/nvidia/version"],
            "unknown": ["sudo dmesg -T | grep -i xid"] + reset}[action]


_XID_RANK = {"app": 46, "contained": 20, "remap": 50}  # a fault of the program, or a notice: others rank first


def xid(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A GPU fault the NVIDIA driver reported: the operator's action for its Xid (c4_hardware.toml)."""
    g = seen.groups
    code = 79 if (g.get("pci2") or g.get("lost")) else int(g.get("xid") or 0)
    row = _xid_row(code)
    action = row["action"] if row else "unknown"
    if action == "after":
        return None  # Xid 45 follows another error: that one is the cause
    bus = _bus_id(g)
    what = row["what"] if row else t("structural.c4.xid.unlisted")
    shown = bus or t("structural.c4.word.the_gpu")
    return _answer("cuda-error", f"Xid {code}", "high" if row else "medium",
                   t("structural.c4.xid.title", code=code, what=what, bus=shown),
                   t(f"structural.c4.xid.{action}.cause", code=code, bus=shown),
                   t(f"structural.c4.xid.{action}.fix", code=code, bus=shown),
                   _xid_commands(action, bus, facts), seen, facts, _XID_RANK.get(action, 11))


# --- no usable GPU -------------------------------------------------------------------------------------

_SHOW_VISIBLE = "python -c \"import os; print(repr(os.environ.get('CUDA_VISIBLE_DEVICES')))\""


def no_gpu(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("xpu"):
        return _answer("cuda-error", "xpu", "high", t("structural.c4.nogpu.xpu.title"),
                       t("structural.c4.nogpu.xpu.cause"), t("structural.c4.nogpu.xpu.fix"),
                       ([] if facts.platform == "windows" else ["ls -l /dev/dri"])
                       + ["python -c \"import torch; print(torch.__version__, torch.xpu.is_available())\""],
                       seen, facts, 14)
    if g.get("smi") or g.get("smi2") or g.get("smi3"):
        return _smi_missing(seen, facts)
    unset = "set CUDA_VISIBLE_DEVICES=" if facts.platform == "windows" else "unset CUDA_VISIBLE_DEVICES"
    return _answer("cuda-error", "cudaErrorNoDevice", "high", t("structural.c4.nogpu.cuda.title"),
                   t("structural.c4.nogpu.cuda.cause"), t("structural.c4.nogpu.cuda.fix"),
                   ["nvidia-smi -L", _SHOW_VISIBLE, unset], seen, facts, 14)


def _smi_missing(seen: Seen, facts: LogFacts) -> Answer:
    """nvidia-smi is not on PATH: no NVIDIA driver here, or a container without the NVIDIA runtime."""
    g = seen.groups
    if g.get("smi3") or facts.platform == "windows":
        where, commands = "windows", ["where nvidia-smi"]
    elif facts.platform == "wsl2":
        where, commands = "wsl", ["ls -l /usr/lib/wsl/lib/nvidia-smi"]
    else:
        where = "linux"
        commands = ["lspci | grep -i nvidia", "ls -l /dev/nvidia*"]
        if g.get("smi2"):  # Ubuntu's command-not-found: the driver metapackage brings nvidia-smi with the module
            commands.append("sudo ubuntu-drivers autoinstall")
    return _answer("cuda-error", "nvidia-smi", "high", t("structural.c4.nogpu.smi.title"),
                   t("structural.c4.nogpu.smi.cause"), t(f"structural.c4.nogpu.smi.fix_{where}"),
                   commands, seen, facts, 13)


# --- text read with the system's code page -----------------------------------------------------------

def codec(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A UnicodeDecodeError/UnicodeEncodeError in a locale codec (not UTF-8): Python's UTF-8 mode."""
    name = (seen.groups.get("codec") or "").lower()
    table = _load("c4_platform.toml")["codecs"]
    if name in table["windows"] and facts.platform not in ("linux", "macos", "wsl2"):
        where = "windows"
        commands = ["setx PYTHONUTF8 1"] + (["setx PYTHONIOENCODING utf-8"] if seen.groups.get("dir") == "Encode" else [])
    elif name in {c.lower() for c in table["posix"]} or name in table["windows"]:
        where = "posix"
        commands = ["export PYTHONUTF8=1", "export LC_ALL=C.UTF-8"]
    else:
        return None  # 'utf-8' itself: the file is not text, or not UTF-8; another problem
    commands.append("python -c \"import sys, locale; print(sys.flags.utf8_mode, locale.getpreferredencoding(False))\"")
    direction = "encode" if seen.groups.get("dir") == "Encode" else "decode"
    return _answer("unsupported-op", "encoding", "high", t("structural.c4.codec.title", codec=name),
                   t(f"structural.c4.codec.{direction}.cause", codec=name),
                   t(f"structural.c4.codec.fix_{where}", codec=name), commands, seen, facts, 30)


# --- Windows: symbolic links, long paths ---------------------------------------------------------------

_DEV_MODE = ('reg add "HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\AppModelUnlock" /t REG_DWORD /f '
             '/v "AllowDevelopmentWithoutDevLicense" /d "1"')
# Microsoft, "Maximum Path Length Limitation" (learn.microsoft.com/windows/win32/fileio/maximum-file-path-limitation)
_LONG_PATHS = ('New-ItemProperty -Path "HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem" '
               '-Name "LongPathsEnabled" -Value 1 -PropertyType DWORD -Force')
_MAX_PATH = 260


def windows(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("code") == "1314":
        hub = "huggingface_hub" in seen.text or facts.package == "huggingface_hub"
        commands = [_DEV_MODE] + (["python -m pip install --upgrade huggingface_hub"] if hub else [])
        return _answer("windows-error", "1314", "high", t("structural.c4.win.symlink.title"),
                       t("structural.c4.win.symlink.cause"),
                       t("structural.c4.win.symlink.fix" + ("_hub" if hub else "")), commands, seen, facts, 23)
    path = g.get("winpath")
    if path is not None and len(path.replace("\\\\", "\\")) <= _MAX_PATH:
        return None  # a path within MAX_PATH that does not exist: a missing file, not a long path
    return _answer("windows-error", "206", "high", t("structural.c4.win.longpath.title"),
                   t("structural.c4.win.longpath.cause"), t("structural.c4.win.longpath.fix"),
                   [_LONG_PATHS], seen, facts, 23)


# --- macOS: architecture, MPS -------------------------------------------------------------------------

_DLOPEN = re.compile(r"dlopen\((?P<path>[^,()\n]{1,500}),")


def _arch(seen: Seen, facts: LogFacts) -> Answer:
    m = _DLOPEN.search(seen.text)
    path = m.group("path") if m else ""
    lib = path.rsplit("/", 1)[-1] if path else t("structural.word.the_package")
    pkg = package_of(path) if path else facts.package
    dist = _dist_of(pkg) if pkg else None
    dist = dist if dist and SAFE.fullmatch(dist) else None
    machine = "python -c \"import platform; print(platform.machine())\""
    if seen.groups.get("need", "").startswith("x86_64"):  # the Python runs as x86_64 (Rosetta), the file is arm64
        return _answer("shared-library", lib, "high", t("structural.c4.mac.arch.title", lib=lib),
                       t("structural.c4.mac.arch.rosetta.cause"), t("structural.c4.mac.arch.rosetta.fix"),
                       [machine, "sysctl -n sysctl.proc_translated"], seen, facts, 15, dist)
    what = dist or t("structural.word.the_package")
    commands = [machine] + ([f"python -m pip install --force-reinstall --no-cache-dir {dist}"] if dist else [])
    return _answer("shared-library", lib, "high", t("structural.c4.mac.arch.title", lib=lib),
                   t("structural.c4.mac.arch.other.cause", dist=what), t("structural.c4.mac.arch.other.fix", dist=what),
                   commands, seen, facts, 15, dist)


def mac(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("have") or g.get("wrong"):
        return _arch(seen, facts)
    if g.get("macos"):
        need = g["macos"]
        return _answer("version-constraint", "macos", "high", t("structural.c4.mac.mpsos.title", need=need),
                       t("structural.c4.mac.mpsos.cause", need=need), t("structural.c4.mac.mpsos.fix", need=need),
                       ["sw_vers -productVersion",
                        "python -c \"import torch, platform; print(torch.__version__, platform.mac_ver()[0], "
                        "platform.machine(), torch.backends.mps.is_built())\""], seen, facts, 16, "torch")
    return _answer("unsupported-op", "mps", "high", t("structural.c4.mac.placeholder.title"),
                   t("structural.c4.mac.placeholder.cause"), t("structural.c4.mac.placeholder.fix"),
                   [], seen, facts, 28)


# --- ROCm: rocBLAS without this gfx, MIOpen -------------------------------------------------------------

def _gfx_row(gfx: str) -> Optional[dict]:
    return next((r for r in _load("c4_rocm.toml")["gfx"] if gfx in r["targets"]), None)


_GFX_INFO = "rocminfo | grep -m1 -o 'gfx[0-9a-f]*'"
_TORCH_HIP = "python -c \"import torch; print(torch.__version__, torch.version.hip, torch.cuda.get_arch_list())\""


def rocm(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("miopen") or g.get("mstage"):
        return _answer("unsupported-op", "miopen", "medium", t("structural.c4.rocm.miopen.title"),
                       t("structural.c4.rocm.miopen.cause"), t("structural.c4.rocm.miopen.fix"),
                       ["rm -rf ~/.cache/miopen ~/.config/miopen", _GFX_INFO], seen, facts, 35)
    gfx = g.get("gfx") or ""
    row = _gfx_row(gfx)
    windows = on_windows(seen, facts)
    if windows:
        key, commands = "windows", []
    elif row and row["override"]:
        key, commands = "override", [f"export HSA_OVERRIDE_GFX_VERSION={row['override']}", _GFX_INFO, _TORCH_HIP]
    elif row and row.get("upgrade"):
        key = "upgrade"
        commands = [f"python -m pip install --upgrade torch --index-url https://download.pytorch.org/whl/rocm{row['upgrade']}",
                    _TORCH_HIP]
    else:
        key, commands = "none", [_GFX_INFO, _TORCH_HIP]
    words = dict(gfx=gfx, family=row["family"] if row else "", override=row["override"] if row else "",
                 runs_as=row["runs_as"] if row else "", rocm=row.get("upgrade", "") if row else "")
    return _answer("unsupported-op", "rocm", "high" if row else "medium", t("structural.c4.rocm.tensile.title", **words),
                   t("structural.c4.rocm.tensile.cause", **words), t(f"structural.c4.rocm.tensile.fix_{key}", **words),
                   commands, seen, facts, 29)
