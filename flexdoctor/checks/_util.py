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
        best = best_wheel_for_driver(facts.gpu.cuda_driver_version)
        return cuda_tag(best) if best else "cu126"
    if ok(facts.torch) and facts.torch.hip:
        return "rocm" + ".".join(facts.torch.hip.split(".")[:2])
    return "cpu"


def python_cmd(facts: Facts) -> str:
    """How to invoke the target interpreter in a copy-paste command."""
    if not ok(facts.python):
        return "python"
    exe = facts.python.executable
    if exe.startswith("~/"):  # recorded facts shown with ~: keep the tilde expandable
        return "~/" + shlex.quote(exe[2:])
    return shlex.quote(exe)


def nvidia_gpus(facts: Facts) -> list[GpuDevice]:
    """The GPUs NVML sees, or Skip with a reason."""
    gpu = require(facts.gpu, "GPU facts")
    if gpu.nvml != "ok" or not gpu.devices:
        raise Skip(t("common.no_nvidia_gpu"))
    return gpu.devices


def has_nvidia_gpu(facts: Facts) -> bool:
    return ok(facts.gpu) and facts.gpu.nvml == "ok" and bool(facts.gpu.devices)


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
