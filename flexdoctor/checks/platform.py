"""Platform checks (FD6xx): what works on this OS / accelerator combination."""

from __future__ import annotations

from .. import knowledge as kb
from ..facts import Facts, ok, require
from ..model import Finding
from . import _util as u
from .base import check, passed, warn
from .torch import MIN_FLEX

from packaging.version import Version

CPU_FLEX = Version("2.6.0")
# torch 2.6-2.12 reject MPS tensors in flex_attention (_validate_device: "FlexAttention is only
# supported on CUDA or CPU devices" / "... CUDA, CPU or HPU devices"); 2.13 adds MPS, with an
# Inductor lowering to a Metal shader (torch/_inductor/kernel/flex/flex_mps.py), inference only.
MPS_FLEX = Version("2.13.0")


@check("FD601", "platform", area="platform")
def platform(facts: Facts) -> Finding:
    """What it checks: the operating system, the kind of torch build and accelerator, and says
    what works there: Linux + NVIDIA (everything), ROCm (Triton's AMD backend; CUDA checks do
    not apply), macOS (no Triton; torch 2.13+ compiles flex_attention's forward for MPS to a Metal
    shader, inference only; torch 2.6-2.12 reject MPS tensors in flex; compiling flex on the CPU
    raises "torch.compile on current platform is not supported for CPU." there, because torch's CPU
    lowering (check_cpu_supported, read in 2.6-2.14) excludes darwin, and 2.5 has no CPU lowering
    at all; SDPA works on MPS), Windows (no official Triton), CPU only (flex compiles for
    inference from torch 2.6, x86 with AVX2).

    Why it matters: "FlexAttention requires CUDA" is only half true, and the other half decides
    whether your tests or inference can run on the CPU or an Apple GPU; training with flex (its
    backward) still needs a CUDA or ROCm GPU.

    How to fix: nothing on Linux + NVIDIA; elsewhere the finding names the supported route.
    """
    host = require(facts.host, "host")
    py = require(facts.python, "python")
    torch = facts.torch if ok(facts.torch) else None
    tv = u.base_version(torch.version) if torch else None
    where = f"{host.os_release or host.os} {host.machine}"
    if torch and torch.hip:
        return passed("platform.rocm", where=where, hip=torch.hip, details=[kb.get("rocm-build").cause])
    if py.platform == "darwin":
        rt = facts.torch_runtime
        if tv is None or tv < MIN_FLEX:
            return warn("platform.macos_no_flex", kb.fix("macos-mps"), where=where)
        if ok(rt) and rt.mps_available is False:
            key = "platform.macos_no_mps" if tv >= CPU_FLEX else "platform.macos_no_mps_old"
            return warn(key, kb.fix("macos-mps"), where=where, version=torch.version)
        if tv >= MPS_FLEX:
            return warn("platform.macos_mps", kb.fix("macos-mps"), where=where, version=torch.version)
        if tv >= CPU_FLEX:
            return warn("platform.macos_mps_rejected", kb.fix("macos-mps"), where=where, version=torch.version)
        return warn("platform.macos_eager", kb.fix("macos-mps"), where=where, version=torch.version)
    if py.platform.startswith("win"):
        return warn("platform.windows", kb.fix("windows-triton", python=u.python_cmd(facts),
                                                triton_spec=u.triton_windows_spec(facts)), where=where)
    if u.has_nvidia_gpu(facts) and torch and torch.cuda:
        return passed("platform.linux_cuda", where=where, cuda=torch.cuda)
    # No usable NVIDIA GPU for this torch: say what the CPU can do.
    if tv is not None and tv < CPU_FLEX:
        return warn("platform.cpu_old_torch", kb.fix("flex-on-cpu"), where=where,
                    version=torch.version)
    if host.cpu_avx2 is False:
        return warn("platform.cpu_no_avx2", kb.fix("flex-on-cpu"), where=where)
    if tv is None or tv < MIN_FLEX:
        return passed("platform.cpu_no_torch", where=where)
    return passed("platform.cpu", where=where, version=torch.version,
                  details=[kb.get("flex-on-cpu").cause])
