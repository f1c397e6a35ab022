"""Shared, pure helpers for checks: version arithmetic and questions many checks ask."""

from __future__ import annotations

import shlex
from typing import Optional

from packaging.version import InvalidVersion, Version

from ..facts import Facts, GpuDevice, ProbeError, Skip, ok, require
from ..text import t

# CUDA versions that torch publishes wheels for (download.pytorch.org/whl/cuXYZ), newest first.
WHEEL_CUDA = ("13.0", "12.9", "12.8", "12.6", "12.4", "12.1", "11.8")


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
    """The newest torch wheel CUDA version a driver supporting ``driver_cuda`` can run."""
    d = major_minor(driver_cuda)
    if d is None:
        return None
    for cuda in WHEEL_CUDA:
        if major_minor(cuda) <= d:
            return cuda
    return None


def python_cmd(facts: Facts) -> str:
    """How to invoke the target interpreter in a copy-paste command."""
    if ok(facts.python):
        return shlex.quote(facts.python.executable)
    return "python"


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
