"""Shared, pure helpers for checks: version arithmetic and questions many checks ask."""

from __future__ import annotations

import shlex
from typing import Optional

from packaging.version import InvalidVersion, Version

from .. import wheels
from ..facts import Facts, GpuDevice, ProbeError, Skip, ok, require
from ..text import has, t


def probe_error_text(err: ProbeError) -> str:
    """What a ProbeError says, in the report's language: its ``probe-error.<reason>`` text, or the
    failing program's own words (an import error) when flexdoctor had nothing to add."""
    if err.reason and has(f"probe-error.{err.reason}"):
        return t(f"probe-error.{err.reason}", **err.args)
    return err.message or err.kind


def skip_text(exc: Skip) -> str:
    """The message of a skipped check: its own words, or what :func:`require` found missing."""
    if exc.message or not (exc.need or exc.error):
        return exc.message
    what = t(f"needs.{exc.need}") if exc.need and has(f"needs.{exc.need}") else exc.need
    if exc.error is None:
        return t("skip.unavailable", what=what) if what else t("skip.unavailable", what="?")
    reason = probe_error_text(exc.error)
    return t("skip.failed", what=what, reason=reason) if what else reason


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


def installed_tag(facts: Facts) -> Optional[str]:
    """The index name of the installed torch build: its local version label ("2.7.1+cu126" ->
    "cu126"), else torch.version.cuda / hip ("12.8" -> "cu128"), else "cpu"; None without torch."""
    if not ok(facts.torch):
        return None
    local = (facts.torch.version or "").partition("+")[2]
    if local and (local.startswith("cu") or local.startswith("rocm") or local == "cpu"):
        return local
    if facts.torch.hip:
        return "rocm" + ".".join(facts.torch.hip.split(".")[:2])
    if facts.torch.cuda:
        return cuda_tag(facts.torch.cuda)
    return "cpu"


def machine(facts: Facts, python: Optional[tuple] = None) -> wheels.Machine:
    """The facts the wheel advice depends on (flexdoctor/wheels), unknowns left as None."""
    py = facts.python if ok(facts.python) else None
    host = facts.host if ok(facts.host) else None
    gpu = facts.gpu if ok(facts.gpu) else None
    try:
        ccs = tuple(d.cc for d in nvidia_gpus(facts))
    except Skip:
        ccs = ()
    if ccs:
        kind = "cuda"
    elif ok(facts.torch) and facts.torch.hip:
        kind = "rocm"
    else:
        kind = "cpu"
    pyver = python or (tuple(int(x) for x in py.version.split(".")[:2]) if py else None)
    return wheels.Machine(
        platform=wheels.platform_of(py.platform if py else None, host.machine if host else None),
        driver_cuda=gpu.cuda_driver_version if gpu else None,
        driver_version=gpu.driver_version if gpu else None,
        wsl=bool(host and host.wsl),
        gpu_ccs=ccs,
        python=pyver,
        kind=kind,
        companions=tuple(c for c in ("torchvision", "torchaudio") if py and c in py.packages),
    )


def wheel_advice(facts: Facts, *, keep: bool = True, min_torch: Optional[str] = None,
                 python: Optional[tuple] = None, same_build: bool = False) -> Optional[wheels.Advice]:
    """The (torch, variant) pair to install here (flexdoctor/wheels.recommend): the installed
    release when one of its builds fits (keep), the installed build itself for a plain reinstall
    (same_build)."""
    current = base_version(facts.torch.version) if ok(facts.torch) else None
    return wheels.recommend(machine(facts, python), keep=str(current) if keep and current else None,
                            min_torch=min_torch, prefer=installed_tag(facts) if same_build else None)


def wheel_context(facts: Facts, **kw) -> dict:
    """Placeholder values for a knowledge-base fix that installs torch: ``torch_spec`` (pinned torch
    and its companions), ``index_args`` (" --index-url https://download.pytorch.org/whl/cu126", or
    nothing on macOS) and ``cuda_tag``. Empty when no published torch fits (the entry's defaults
    then apply), except that a ROCm build is reinstalled from its own index."""
    advice = wheel_advice(facts, **kw)
    if advice is not None:
        tag = advice.variant.tag
        # cuda_tag is also read in fix texts ("the wheel ... your driver supports (cu126)"): say
        # when the build only helps after a driver upgrade, or lacks a GPU's kernels.
        if advice.needs_driver is not None:
            m = machine(facts)
            tag = t("wheels.needs_driver", tag=tag,
                    driver=advice.needs_driver.version("windows-x86_64" if m.wsl else m.platform))
        elif advice.missing_archs:
            tag = t("wheels.missing_archs", tag=tag,
                    archs=", ".join(f"sm_{a}{b}" for a, b in advice.missing_archs))
        return {"cuda_tag": tag, "torch_spec": advice.spec(), "index_args": advice.index_args()}
    tag = installed_tag(facts)
    current = base_version(facts.torch.version) if ok(facts.torch) else None
    if tag and tag.startswith("rocm") and current is not None and kw.get("keep", True):
        return {"cuda_tag": tag, "torch_spec": f"torch=={current}", "index_args": f" --index-url {wheels.INDEX}/{tag}"}
    return {}


def wheel_tag(facts: Facts) -> str:
    """The download.pytorch.org/whl/<tag> index to suggest on this machine."""
    advice = wheel_advice(facts)
    return advice.variant.tag if advice is not None else (installed_tag(facts) or "cpu")


def torch_spec(facts: Facts) -> str:
    """What to reinstall so the fix keeps this torch release (and its companions) and only swaps
    the build variant: "torch==2.11.0 torchvision==0.26.0". pip fails loudly if the variant does
    not exist, instead of silently moving torch to another release."""
    return wheel_context(facts).get("torch_spec") or "torch"


def triton_windows_spec(facts: Facts) -> str:
    """The triton-windows requirement matching the installed torch's Triton, shell-quoted for
    cmd.exe and PowerShell alike ("triton-windows<3.7"); plain triton-windows when none matches."""
    current = base_version(facts.torch.version) if ok(facts.torch) else None
    req = wheels.triton_requirement(str(current) if current else None, "windows-x86_64")
    return f'"{req}"' if req else "triton-windows"


def driver_for(facts: Facts, cuda: Optional[str]) -> Optional[str]:
    """'13.0 (driver 580 or newer)': a CUDA version with the oldest driver that runs its wheels."""
    if not cuda:
        return cuda
    major = major_minor(cuda)
    floor = wheels.table().drivers.get(major[0]) if major else None
    if floor is None:
        return cuda
    m = machine(facts)
    plat = "windows-x86_64" if m.wsl else m.platform
    return t("wheels.cuda_with_driver", cuda=cuda, driver=floor.version(plat))


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
    if torch.cuda and not str(torch.version or "").endswith("+cpu"):
        return "cuda"
    return "cpu"


def runtime(facts: Facts):
    """The torch runtime facts, or Skip (not gathered, torch absent or broken: FD302 says why)."""
    if facts.torch is None:
        raise Skip(t("common.torch_not_installed"))
    rt = facts.torch_runtime
    if isinstance(rt, ProbeError):
        reason = probe_error_text(rt).strip().splitlines()
        raise Skip(t("common.runtime_unavailable", reason=reason[0] if reason else rt.kind))
    return require(rt, "torch_runtime")


def gpu_label(dev: GpuDevice) -> str:
    return f"GPU {dev.index} {dev.name} (sm_{dev.compute_capability.replace('.', '')})"


def is_linux(facts: Facts) -> bool:
    if ok(facts.python):
        return facts.python.platform.startswith("linux")
    return ok(facts.host) and facts.host.os == "Linux"
