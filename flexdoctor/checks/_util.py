"""Shared, pure helpers for checks: version arithmetic and questions many checks ask."""

from __future__ import annotations

import shlex
from typing import Optional

from packaging.version import InvalidVersion, Version

from ..facts import Facts, GpuDevice, ProbeError, Skip, ok, require
from ..text import t

def version(text: Optional[str]) -> Optional[Version]:
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def base_version(text: Optional[str]) -> Optional[Version]:
    """'2.11.0+cu130' -> 2.11.0 ; '2.12.0.dev20260101' -> 2.12.0."""
    v = version(text)
    return Version(v.base_version) if v is not None else None


def major_minor(text: Optional[str]) -> Optional[tuple[int, int]]:
    v = version(text)
    if v is None:
        return None
    rel = v.release + (0,)
    return rel[0], rel[1]


def cuda_tag(cuda: str) -> str:
    return "cu" + cuda.replace(".", "")


def best_wheel_for_driver(driver_cuda: Optional[str]) -> Optional[str]:
    """The torch wheel CUDA variant to suggest for a driver that supports ``driver_cuda``.

    Same-major wheels run through CUDA minor-version compatibility, so a 12.2 driver gets the
    cu126 wheel (published for torch 2.6 through 2.11), not an old cu121 one whose newest torch
    is 2.5: suggesting that would downgrade torch by many releases.
    """
    d = major_minor(driver_cuda)
    if d is None:
        return None
    if d >= (13, 0):
        return "13.0"
    if d >= (12, 8):
        return "12.8"
    if d >= (12, 0):
        return "12.6"
    if d >= (11, 0):
        return "11.8"
    return None


def wheel_tag(facts: Facts) -> str:
    """The download.pytorch.org/whl/<tag> index to suggest on this machine."""
    if has_nvidia_gpu(facts):
        driver = facts.gpu.cuda_driver_version if ok(facts.gpu) else None
        best = best_wheel_for_driver(driver) or "12.6"
        # cu130 wheels start at sm_75: older GPUs (V100, Pascal) keep the cu126 variant.
        if any(g.cc < (7, 5) for g in all_gpus(facts)) and major_minor(best) > (12, 6):
            best = "12.6"
        return cuda_tag(best)
    if ok(facts.torch) and facts.torch.hip:
        return "rocm" + ".".join(facts.torch.hip.split(".")[:2])
    return "cpu"


def torch_spec(facts: Facts) -> str:
    """What to reinstall so the fix keeps this torch release (and its companions) and only swaps
    the build variant: "'torch==2.11.0' torchvision". pip fails loudly if the variant does not
    exist, instead of silently moving torch to another release."""
    if not ok(facts.torch):
        return "torch"
    base = base_version(facts.torch.version)
    spec = f"'torch=={base}'" if base is not None else "torch"
    pk = facts.python.packages if ok(facts.python) else {}
    return " ".join([spec] + [c for c in ("torchvision", "torchaudio") if c in pk])


def python_cmd(facts: Facts) -> str:
    """How to invoke the target interpreter in a copy-paste command."""
    if not ok(facts.python):
        return "python"
    exe = facts.python.executable
    if facts.python.platform.startswith("win"):  # cmd.exe / PowerShell: no POSIX quoting
        return f'& "{exe}"' if " " in exe else exe
    if exe.startswith("~/"):  # recorded facts shown with ~: keep the tilde expandable
        return "~/" + shlex.quote(exe[2:])
    return shlex.quote(exe)


def all_gpus(facts: Facts) -> list[GpuDevice]:
    """Every NVIDIA GPU of the machine: NVML's list, or torch's when NVML is absent but torch
    runs on CUDA (Jetson/Tegra boards have no NVML)."""
    gpu = facts.gpu
    if ok(gpu) and gpu.nvml == "ok" and gpu.devices:
        return list(gpu.devices)
    rt = facts.torch_runtime
    if ok(rt) and rt.cuda_available and not rt.hip and rt.devices:
        return [GpuDevice(index=d.index, name=d.name, compute_capability=d.capability,
                          memory_total_bytes=d.total_memory, uuid=d.uuid) for d in rt.devices]
    return []


def _uuid(text: Optional[str]) -> str:
    low = (text or "").lower()
    return low[4:] if low.startswith("gpu-") else low


def nvidia_gpus(facts: Facts) -> list[GpuDevice]:
    """The GPUs a training job here can use, or Skip with a reason.

    NVML lists every GPU of the machine and ignores CUDA_VISIBLE_DEVICES; a display card or a GPU
    given to another job must not fail the report. So: the GPUs torch sees (matched by UUID),
    else those CUDA_VISIBLE_DEVICES names, else all of them.
    """
    gpus = all_gpus(facts)
    if not gpus:
        raise Skip(t("common.no_nvidia_gpu"))
    rt = facts.torch_runtime
    if ok(rt) and rt.devices and all(d.uuid for d in rt.devices):
        seen = {_uuid(d.uuid) for d in rt.devices}
        chosen = [g for g in gpus if g.uuid and _uuid(g.uuid) in seen]
        if chosen:
            return chosen
    visible = facts.host.env.get("CUDA_VISIBLE_DEVICES") if ok(facts.host) else None
    if visible:
        tokens = [x.strip() for x in visible.split(",") if x.strip()]
        chosen = [g for g in gpus if str(g.index) in tokens
                  or any(g.uuid and _uuid(g.uuid).startswith(_uuid(x)) for x in tokens if x.lower().startswith("gpu-"))]
        if chosen:
            return chosen
    return gpus


def has_nvidia_gpu(facts: Facts) -> bool:
    return bool(all_gpus(facts))


def torch_build(facts: Facts) -> str:
    """'cuda', 'rocm' or 'cpu' for the installed torch; Skip when torch is absent/unknown."""
    torch = facts.torch
    if torch is None:
        raise Skip(t("common.torch_not_installed"))
    torch = require(torch, "torch")
    if torch.hip:
        return "rocm"
    if torch.cuda:
        return "cuda"
    return "cpu"


def runtime(facts: Facts):
    """The torch runtime facts, or Skip (not gathered, torch absent or broken: FD302 says why)."""
    if facts.torch is None:
        raise Skip(t("common.torch_not_installed"))
    rt = facts.torch_runtime
    if isinstance(rt, ProbeError):
        raise Skip(t("common.runtime_unavailable", reason=rt.message.splitlines()[0] if rt.message else rt.kind))
    return require(rt, "torch runtime")


def gpu_label(dev: GpuDevice) -> str:
    return f"GPU {dev.index} {dev.name} (sm_{dev.compute_capability.replace('.', '')})"


def is_linux(facts: Facts) -> bool:
    if ok(facts.python):
        return facts.python.platform.startswith("linux")
    return ok(facts.host) and facts.host.os == "Linux"
