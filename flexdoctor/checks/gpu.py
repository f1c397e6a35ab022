"""GPU and driver checks (FD1xx): judged from NVML facts, no torch needed."""

from __future__ import annotations

from .. import knowledge as kb
from .. import wheels
from ..facts import Facts, ok, require
from ..model import Finding, Status
from . import _util as u
from ..text import t
from .base import check, fail, note, passed, skip, warn


@check("FD101", "gpu-present", area="gpu")
def gpu_present(facts: Facts) -> Finding:
    """What it checks: that NVML (the NVIDIA driver's management library) can be loaded and
    reports at least one NVIDIA GPU, without importing torch.

    Why it matters: FlexAttention training, FlashAttention and SDPA's fast kernels need a CUDA
    GPU. A container started without the NVIDIA runtime, a driver that is not loaded, or a
    driver upgraded without a reboot ("Driver/library version mismatch") all look like "no GPU"
    to torch. On a CPU-only machine flex_attention still compiles for inference (torch >= 2.6).
    A machine with no NVIDIA GPU and no sign of one (no driver library, no /dev/nvidia*) is a
    note under the default profile (nothing there is broken) and a failure under --profile gpu.

    How to fix: run on a GPU machine; in containers pass --gpus all (Docker) or a
    nvidia.com/gpu limit (Kubernetes); load or reinstall the driver; reboot after a driver
    upgrade. The finding names which of these applies.
    """
    gpu = require(facts.gpu, "gpu")
    rt = facts.torch_runtime
    other_platform = ok(rt) and (rt.hip or rt.mps_available)
    if gpu.nvml == "ok":
        if not gpu.devices:
            return fail("gpu-present.no_devices", kb.fix("container-without-gpu"),
                        driver=gpu.driver_version)
        names = ", ".join(sorted({d.name for d in gpu.devices}))
        return passed("gpu-present.pass", count=len(gpu.devices), names=names,
                      driver=gpu.driver_version, cuda=gpu.cuda_driver_version,
                      details=[u.gpu_label(d) for d in gpu.devices])
    if gpu.nvml == "no-library":
        if other_platform:
            return skip("gpu-present.other_platform")
        seen = u.all_gpus(facts)  # Jetson/Tegra: no NVML, torch runs on the integrated GPU
        if seen:
            return passed("gpu-present.torch_only", count=len(seen), names=", ".join(sorted({d.name for d in seen})),
                          details=[u.gpu_label(d) for d in seen])
        if gpu.device_nodes:
            return fail("gpu-present.nodes_without_library", kb.fix("container-without-gpu"),
                        error=gpu.nvml_error)
        return note("gpu-present.none", kb.fix("no-nvidia-gpu"))  # a CPU machine: --profile gpu fails it
    if gpu.nvml == "driver-not-loaded":
        return fail("gpu-present.driver_not_loaded", kb.fix("nvidia-driver-not-loaded"), error=gpu.nvml_error)
    if gpu.nvml == "driver-mismatch":
        return fail("gpu-present.driver_mismatch", kb.fix("nvml-driver-mismatch"), error=gpu.nvml_error)
    if gpu.nvml == "no-permission":
        return fail("gpu-present.no_permission", kb.fix("container-without-gpu"), error=gpu.nvml_error)
    return warn("gpu-present.nvml_error", kb.fix("nvidia-driver-not-loaded"), error=gpu.nvml_error)


@check("FD102", "compute-capability", area="gpu")
def compute_capability(facts: Facts) -> Finding:
    """What it checks: the compute capability of every GPU: below 7.0 fails, 7.x warns, 8.0 and
    newer passes; it notes which GPUs can run FlashAttention-3 (sm90) and FlashAttention-4
    (8.x-12.x at flash-attention HEAD: flash_attn/cute/arch_policy.py).

    Why it matters: compiled flex_attention is a Triton kernel, and Inductor refuses GPUs below
    sm70 ("Found ... which is too old to be supported by the triton GPU compiler"). There is no
    other capability gate at "kernel registration", whatever guides say, but on sm70/sm75
    (V100, T4) flex is unreliable (shared memory, dtype bugs, often ~10x slower than SDPA), bf16 is
    missing, and FlashAttention 2 / SDPA's flash kernel need sm80: the T4 "No available kernel"
    story.

    How to fix: on sm7x use SDPA's memory-efficient backend in fp16; below sm70 use SDPA; for
    flex and FlashAttention use an sm80+ GPU (A100, RTX 30xx/40xx, L4/L40S, H100, B200).
    """
    findings = []
    for dev in u.nvidia_gpus(facts):
        major, minor = dev.cc
        label = u.gpu_label(dev)
        if major < 7:
            findings.append(fail("compute-capability.too_old", kb.fix("gpu-too-old-for-triton", gpu=dev.name),
                                 gpu=label))
        elif major < 8:
            findings.append(warn("compute-capability.sm7x", kb.fix("sm7x-limited"), gpu=label))
        else:
            extra = t("compute-capability.fa3_note") if major == 9 else ""
            if 8 <= major <= 12:  # flash_attn/cute/arch_policy.py: forward kernels for sm80, 90, 100/110, 120
                extra += t("compute-capability.fa4_note")
            findings.append(passed("compute-capability.pass", gpu=label, note=extra))
    worst = max(findings, key=lambda f: f.status.rank)
    details = [f.message for f in findings]
    if len(findings) == 1:
        return worst
    return Finding(worst.status, worst.message if worst.status != Status.PASS else
                   t("compute-capability.all_pass", count=len(findings)), worst.fix, tuple(details))


def _arch_supported(cc: tuple[int, int], arch_list: list[str]) -> bool:
    """torch's own rule (wheels.arch_runs, after torch/cuda/__init__.py DEVICE_REQUIREMENT): a
    cubin runs on the same major with an equal or higher minor, except on the integrated Jetson
    GPUs 5.3/6.2/7.2/8.7, which run only code built for exactly them; PTX JITs to anything newer."""
    return wheels.carries(arch_list, cc)


@check("FD103", "torch-gpu-arch", area="gpu")
def torch_gpu_arch(facts: Facts) -> Finding:
    """What it checks: that torch.cuda.get_arch_list() of the installed torch covers every GPU:
    a cubin for the same major architecture with an equal or lower minor (not on the integrated
    Jetson GPUs 5.3/6.2/7.2/8.7, which run only code built for them: torch's DEVICE_REQUIREMENT),
    or PTX it can JIT.

    Why it matters: a GPU the wheel was not built for fails at the first kernel with "no kernel
    image is available for execution on the device" (torch warns "... with CUDA capability sm_120
    is not compatible with the current PyTorch installation"). Classic cases: an RTX 50xx or B200
    with torch < 2.7 or a cu126 wheel; an old GPU dropped from a new wheel.

    How to fix: install a torch wheel whose arch list includes the GPU (Blackwell: torch >= 2.7
    with CUDA 12.8+).
    """
    gpus = u.nvidia_gpus(facts)
    rt = u.runtime(facts)
    if not rt.arch_list:
        return skip("torch-gpu-arch.no_list")
    missing = [d for d in gpus if not _arch_supported(d.cc, rt.arch_list)]
    archs = " ".join(rt.arch_list)
    if missing:
        d = missing[0]
        return fail("torch-gpu-arch.missing", kb.fix("arch-not-in-torch-build", python=u.python_cmd(facts),
                    arch=f"sm_{d.compute_capability.replace('.', '')}", **u.wheel_context(facts)),
                    gpu=u.gpu_label(d), archs=archs)
    return passed("torch-gpu-arch.pass", archs=archs)


@check("FD104", "driver-cuda-version", area="gpu")
def driver_cuda_version(facts: Facts) -> Finding:
    """What it checks: that the newest CUDA version the driver supports (NVML, the "CUDA
    Version" of nvidia-smi) is at least torch.version.cuda of the installed wheel.

    Why it matters: a driver older than the wheel's CUDA major version cannot run it at all:
    torch.cuda.is_available() returns False with "The NVIDIA driver on your system is too old
    (found version N)". From torch 2.11 the default wheel is CUDA 13.0 and needs an R580+ driver.
    A newer minor (driver 12.4, wheel 12.8) usually runs through CUDA minor-version compatibility
    but loses PTX JIT, so it warns.

    How to fix: upgrade the driver, or install the torch wheel for the CUDA your driver supports
    (the fix names the index URL).
    """
    gpu = require(facts.gpu, "gpu")
    if gpu.nvml != "ok" or not gpu.cuda_driver_version:
        return skip("common.no_nvidia_gpu_skip")
    if u.torch_build(facts) != "cuda":
        return skip("driver-cuda-version.not_cuda_build")
    wheel = facts.torch.cuda
    drv, whl = u.major_minor(gpu.cuda_driver_version), u.major_minor(wheel)
    if drv is None or whl is None:
        return skip("driver-cuda-version.unparsed", driver=gpu.cuda_driver_version, wheel=wheel)
    fix = kb.fix("nvidia-driver-too-old", python=u.python_cmd(facts), torch_cuda=u.driver_for(facts, wheel),
                 **u.wheel_context(facts))
    kw = dict(driver=gpu.driver_version, driver_cuda=gpu.cuda_driver_version, wheel=wheel)
    if drv[0] < whl[0]:
        return fail("driver-cuda-version.too_old", fix, **kw)
    if drv < whl:
        return warn("driver-cuda-version.minor", kb.fix("driver-minor-older", torch_cuda=wheel), **kw)
    return passed("driver-cuda-version.pass", **kw)


@check("FD105", "dtype-support", area="gpu")
def dtype_support(facts: Facts) -> Finding:
    """What it checks: which attention dtypes each GPU runs well: bf16 needs sm80+, fp16 runs
    everywhere Triton does, fp32 works for flex_attention but is much slower.

    Why it matters: training recipes default to bf16; on a V100 or T4 bf16 is unsupported or
    emulated. The error "Query, key, and value must be either bfloat16 or float16" does not come
    from flex (flex accepts fp32): it is diffusers' check for its flash/sage backends.

    How to fix: use fp16 (with a GradScaler) on pre-Ampere GPUs, bf16 on sm80+.
    """
    gpus = u.nvidia_gpus(facts)
    no_bf16 = [d for d in gpus if d.cc < (8, 0)]
    if no_bf16:
        return warn("dtype-support.no_bf16", kb.fix("bf16-needs-ampere"),
                    gpus=", ".join(u.gpu_label(d) for d in no_bf16))
    return passed("dtype-support.pass")
