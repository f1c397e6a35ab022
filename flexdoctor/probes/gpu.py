"""NVIDIA GPUs through NVML (nvidia-ml-py), without importing torch.

NVML answers in ~0.15 s and reports the driver and every GPU even when torch is missing,
broken or a CPU build. NVML ignores CUDA_VISIBLE_DEVICES: it sees the whole machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..facts import GpuDevice, GpuFacts

# str(pynvml.NVMLError(NVML_ERROR_LIBRARY_NOT_FOUND)): what nvmlInit raises when the dlopen fails.
LIBRARY_NOT_FOUND = "NVML Shared Library Not Found"


def _device_nodes() -> bool:
    return Path("/dev/nvidia0").exists() or Path("/proc/driver/nvidia/version").exists()


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _classify(pynvml, exc: Exception) -> str:
    value = getattr(exc, "value", None)
    table = {
        getattr(pynvml, "NVML_ERROR_LIBRARY_NOT_FOUND", -1): "no-library",
        getattr(pynvml, "NVML_ERROR_DRIVER_NOT_LOADED", -1): "driver-not-loaded",
        getattr(pynvml, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", -1): "driver-mismatch",
        getattr(pynvml, "NVML_ERROR_NO_PERMISSION", -1): "no-permission",
    }
    return table.get(value, "error")


def _no_library() -> bool:
    """Linux: does the dlopen pynvml's nvmlInit makes, ``CDLL("libnvidia-ml.so.1")``, fail? Asked
    first, the same way, so that a machine without the NVIDIA driver does not pay for importing
    pynvml (~15 ms of a ~0.2 s ``check --static``) only to hear it. Elsewhere: False (ask pynvml)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return True
    return False


def probe() -> GpuFacts:
    nodes = _device_nodes()
    if _no_library():
        return GpuFacts(nvml="no-library", nvml_error=LIBRARY_NOT_FOUND, device_nodes=nodes)
    try:
        import pynvml
    except ImportError as exc:  # nvidia-ml-py is a dependency; a broken install is still a fact
        return GpuFacts(nvml="no-library", nvml_error=f"pynvml: {exc}", device_nodes=nodes)
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return GpuFacts(nvml=_classify(pynvml, exc), nvml_error=str(exc), device_nodes=nodes)
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda_int = pynvml.nvmlSystemGetCudaDriverVersion()
        cuda = f"{cuda_int // 1000}.{(cuda_int % 1000) // 10}"
        devices = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
            devices.append(
                GpuDevice(
                    index=i,
                    name=_text(pynvml.nvmlDeviceGetName(h)),
                    compute_capability=f"{major}.{minor}",
                    memory_total_bytes=_safe(lambda: int(pynvml.nvmlDeviceGetMemoryInfo(h).total)),
                    uuid=_safe(lambda: _text(pynvml.nvmlDeviceGetUUID(h))),
                    pci_bus_id=_safe(lambda: _text(pynvml.nvmlDeviceGetPciInfo(h).busId)),
                )
            )
        return GpuFacts(
            nvml="ok",
            driver_version=driver,
            cuda_driver_version=cuda,
            devices=devices,
            device_nodes=nodes or bool(devices),
        )
    except pynvml.NVMLError as exc:
        return GpuFacts(nvml=_classify(pynvml, exc), nvml_error=str(exc), device_nodes=nodes)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _safe(fn):
    try:
        return fn()
    except Exception:
        return None

