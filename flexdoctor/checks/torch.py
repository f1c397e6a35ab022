"""torch installation checks (FD2xx)."""

from __future__ import annotations

import re

from packaging.version import Version

from .. import knowledge as kb
from .. import wheels
from ..facts import Facts, ok, require
from ..model import Finding
from . import _util as u
from .base import check, fail, note, passed, skip, warn

MIN_FLEX = Version("2.5.0")

# torch release -> newest Python its Dynamo supports (FACTS §2). flex needs Dynamo even eagerly.
DYNAMO_MAX_PYTHON = (
    (Version("2.5"), (3, 12)),
    (Version("2.6"), (3, 13)),
    (Version("2.10"), (3, 14)),
)
DYNAMO_TABLE_UNTIL = Version("2.15")  # releases checked against this table: 2.5 ... 2.14


@check("FD201", "torch-installed", area="torch")
def torch_installed(facts: Facts) -> Finding:
    """What it checks: that the target interpreter has a torch distribution installed (read
    from package metadata, without importing it).

    Why it matters: FlexAttention, SDPA and flash-attn all run on torch. flexdoctor inspects the
    interpreter you name with --python (an interpreter or a venv folder); without it, its own
    interpreter when that has torch, else the first of $VIRTUAL_ENV, $CONDA_PREFIX and python on
    PATH whose files show torch (the report's first line says which, and why).

    How to fix: point flexdoctor at the interpreter your training runs with (--python PATH), or
    install torch into that interpreter from the index that matches your driver.
    """
    py = require(facts.python, "python")
    if facts.torch is None:
        return fail("torch-installed.missing", kb.fix("torch-not-installed", python=u.python_cmd(facts),
                    **u.wheel_context(facts)), python=py.executable)
    torch = require(facts.torch, "torch")
    return passed("torch-installed.pass", version=torch.version, location=torch.location or "?")


@check("FD202", "torch-importable", area="torch")
def torch_importable(facts: Facts) -> Finding:
    """What it checks: that `import torch` succeeds in the target interpreter, run in a
    subprocess with a time limit; also that the torch which imports is the one pip installed.

    Why it matters: a torch that is installed but broken (a missing libcudnn/libnccl from
    another nvidia-* wheel, an ABI mismatch, a segfault in CUDA initialisation, a hang on a
    wedged driver) fails every job at its first line. flexdoctor records the crash, the hang or
    the exception as a result instead of dying with it.

    How to fix: reinstall torch cleanly in a fresh environment; remove shadowing copies (a
    source checkout on PYTHONPATH, a user-site install).
    """
    if facts.torch is None:
        return skip("common.torch_not_installed")
    rt = facts.torch_runtime
    if rt is None or (not ok(rt) and rt.kind == "skipped"):
        return skip("torch-importable.not_run")
    wheel = u.wheel_context(facts, same_build=True)  # (after the skip: --static reads no wheel table)
    fix = kb.fix("torch-import-broken", python=u.python_cmd(facts), **wheel)
    if not ok(rt):
        first = u.probe_error_text(rt).strip().splitlines()
        text = rt.message + "\n" + (rt.detail or "")
        matched = kb.match_text(text)
        if matched:
            fix = matched[0].render(python=u.python_cmd(facts), **wheel)
        elif rt.kind == "timeout":  # a hang is no sign of a wrong build: find where it stops
            fix = _hang_fix(facts)
        else:  # read by its shape, in the words explain uses (issue 22)
            from ..knowledge import explain as kb_explain

            torch = facts.torch if ok(facts.torch) else None  # a probe error when the interpreter is not Python
            fix = kb_explain.error_fix(text, u.python_cmd(facts), getattr(torch, "version", None),
                                       getattr(torch, "cuda", None)) or fix
        lines = [ln for ln in (rt.detail or "").strip().splitlines() if not ln.startswith("Traceback (")]
        details = tuple(lines[-6:])
        key = {"crash": "torch-importable.crash", "timeout": "torch-importable.timeout",
               "garbage": "torch-importable.garbage"}.get(rt.kind, "torch-importable.error")
        return fail(key, fix, details=details, stage=rt.stage or "import torch",
                    error=first[-1] if first else rt.kind)
    static = require(facts.torch, "torch")
    if u.base_version(rt.version) != u.base_version(static.version) or (
        static.cuda != rt.cuda and static.cuda is not None
    ):
        return warn("torch-importable.shadowed", kb.fix("two-torch-installs", python=u.python_cmd(facts)),
                    runtime=rt.version, installed=static.version)
    return passed("torch-importable.pass", seconds=f"{rt.seconds:.1f}" if rt.seconds is not None else "?")


def _hang_fix(facts: Facts):
    """FD202's fix for an import that timed out (FDE208), with nvidia-smi where there is a GPU."""
    import dataclasses

    fix = kb.fix("torch-import-hangs", python=u.python_cmd(facts))
    if u.has_nvidia_gpu(facts):
        fix = dataclasses.replace(fix, commands=fix.commands + ("timeout 30 nvidia-smi",))
    return fix


@check("FD203", "torch-version", area="torch")
def torch_version(facts: Facts) -> Finding:
    """What it checks: that torch is at least 2.5.0, the first release with
    torch.nn.attention.flex_attention, and that flex_attention imports.

    Why it matters: older torch has no FlexAttention; diffusers then reports "Flex Attention
    backend 'flex' is not usable because of missing package". Compiling flex on the CPU needs
    2.6, Blackwell GPUs need 2.7. No release has `build_flex_attention_kernels()`: upgrading
    does not add it (the real warm-up is `flexdoctor warm-cache`).

    How to fix: upgrade torch (>= 2.5; >= 2.7 for Blackwell).
    """
    torch = require(facts.torch, "torch")
    v = u.base_version(torch.version)
    if v is None:
        return skip("torch-version.unparsed", version=torch.version)
    if v < MIN_FLEX:
        fix = kb.fix("torch-too-old-for-flex", python=u.python_cmd(facts),
                     **u.wheel_context(facts, min_torch=str(MIN_FLEX)))
        return fail("torch-version.too_old", fix, version=torch.version)
    rt = facts.torch_runtime
    if ok(rt) and rt.flex_importable is False:
        # The release has flex_attention: the install is broken. A newer release may not exist
        # (pip --upgrade to the same one changes nothing), so the pin is the newest that fits.
        fix = kb.fix("torch-too-old-for-flex", python=u.python_cmd(facts),
                     **u.wheel_context(facts, keep=False, min_torch=str(MIN_FLEX)))
        return fail("torch-version.flex_import", fix, version=torch.version, error=rt.flex_import_error)
    return passed("torch-version.pass", version=torch.version)


@check("FD204", "torch-cuda-build", area="torch")
def torch_cuda_build(facts: Facts) -> Finding:
    """What it checks: that torch is a CUDA build (torch.version.cuda is set, read from
    torch/version.py without importing torch): on a machine with an NVIDIA GPU a CPU-only build
    fails; on a machine without one (Linux, Windows) it is a note, which `--profile image` makes
    a failure: an image built for GPUs on a builder without one must carry the CUDA build.

    Why it matters: a '+cpu' wheel on a GPU box is a classic: pip picked the CPU wheel or a
    requirements file pinned it, and everything silently runs on the CPU, or fails with "Torch
    not compiled with CUDA enabled". A ROCm build on an NVIDIA machine is the same mistake. In an
    image build nothing shows it until the image first runs on a GPU node.

    How to fix: reinstall torch from the CUDA index your driver supports (the fix names it).
    """
    if not u.has_nvidia_gpu(facts):
        return _build_without_gpu(facts)
    build = u.torch_build(facts)
    if build == "cuda":
        return passed("torch-cuda-build.pass", cuda=facts.torch.cuda)
    return fail("torch-cuda-build.cpu" if build == "cpu" else "torch-cuda-build.rocm",
                kb.fix("cpu-wheel-on-gpu", python=u.python_cmd(facts), **u.wheel_context(facts)),
                version=facts.torch.version, driver_cuda=facts.gpu.cuda_driver_version)


def _build_without_gpu(facts: Facts) -> Finding:
    """FD204 where there is no NVIDIA GPU: a CUDA build passes (it is ready for one), a CPU-only
    build is a note (fine here; `--profile image` fails it); macOS (no CUDA wheels) and ROCm
    builds skip."""
    build = u.torch_build(facts)
    if build == "cuda":
        return passed("torch-cuda-build.pass", cuda=facts.torch.cuda)
    if build == "rocm" or (ok(facts.python) and facts.python.platform == "darwin"):
        return skip("common.no_nvidia_gpu_skip")
    return note("torch-cuda-build.cpu_no_gpu",
                kb.fix("cpu-wheel-on-gpu", python=u.python_cmd(facts), **_cuda_wheel(facts)),
                version=facts.torch.version)


def _cuda_wheel(facts: Facts) -> dict:
    """The CUDA build of the installed release with no driver to ask (an image builder): the one
    PyPI ships for this platform, else the newest (wheels.recommend with the driver unknown)."""
    import dataclasses

    current = u.base_version(facts.torch.version)
    advice = wheels.recommend(dataclasses.replace(u.machine(facts), kind="cuda"),
                              keep=str(current) if current else None)
    if advice is None or advice.variant.kind != "cuda":
        return {}
    return {"cuda_tag": advice.variant.tag, "torch_spec": advice.spec(), "index_args": advice.index_args()}


@check("FD205", "cuda-available", area="torch")
def cuda_available(facts: Facts) -> Finding:
    """What it checks: that torch.cuda.is_available() is True when there is an NVIDIA GPU and a
    CUDA build of torch, and captures the "CUDA initialization: ..." warning when it is not.

    Why it matters: is_available() swallows the reason: the driver is too old, CUDA_VISIBLE_DEVICES
    hides every GPU, the container has no GPU. Training then runs on the CPU or crashes later.

    How to fix: follow the reason in the warning (the fix matches it against the knowledge
    base); check CUDA_VISIBLE_DEVICES and nvidia-smi in the same environment.
    """
    if not u.has_nvidia_gpu(facts):
        return skip("common.no_nvidia_gpu_skip")
    if u.torch_build(facts) != "cuda":
        return skip("cuda-available.not_cuda_build")
    rt = u.runtime(facts)
    if rt.cuda_available:
        return passed("cuda-available.pass", count=rt.device_count,
                      details=[f"{d.index}: {d.name} (sm_{d.capability.replace('.', '')})" for d in rt.devices])
    warning = (rt.cuda_init_warning or "").strip()
    matched = kb.match_text(warning) if warning else []
    visible = facts.host.env.get("CUDA_VISIBLE_DEVICES") if ok(facts.host) else None
    if matched:
        fix = matched[0].render(python=u.python_cmd(facts), torch_cuda=u.driver_for(facts, facts.torch.cuda),
                                **u.wheel_context(facts))
    else:
        fix = kb.fix("cuda-not-available", python=u.python_cmd(facts))
    if visible is not None and visible.strip() in ("", "-1", "none", "NoDevFiles"):
        return fail("cuda-available.hidden", fix, value=visible)
    lines = [re.sub(r"\s*\(Triggered internally at [^)]*\)\s*$", "", ln).strip() for ln in warning.splitlines()]
    lines = [ln for ln in lines if ln]
    return fail("cuda-available.no", fix, warning=lines[-1] if lines else u.t("cuda-available.no_warning"),
                details=tuple(lines[-4:-1]))


@check("FD206", "python-dynamo", area="torch")
def python_dynamo(facts: Facts) -> Finding:
    """What it checks: that the target Python version is one this torch's Dynamo supports
    (2.5: up to 3.12; 2.6-2.9: up to 3.13; 2.10-2.14: up to 3.14).

    Why it matters: flex_attention needs Dynamo even uncompiled; on a too-new Python it raises
    RuntimeError("flex_attention requires dynamo support") and torch.compile refuses to run.

    How to fix: use an older Python for this environment, or a torch release that supports
    yours.
    """
    py = require(facts.python, "python")
    torch = require(facts.torch, "torch")
    v = u.base_version(torch.version)
    pv = tuple(int(x) for x in py.version.split(".")[:2])
    if v is None or v < MIN_FLEX:
        return skip("python-dynamo.no_flex")
    if v >= DYNAMO_TABLE_UNTIL:
        return skip("python-dynamo.unknown", version=torch.version, python_version=py.version)
    limit = max(lim for since, lim in DYNAMO_MAX_PYTHON if v >= since)
    max_py = f"{limit[0]}.{limit[1]}"
    if pv > limit:
        return fail("python-dynamo.unsupported",
                    kb.fix("python-without-dynamo", python=u.python_cmd(facts), max_python=max_py,
                           python_version=py.version, **u.wheel_context(facts, python=limit)),
                    python_version=py.version, version=torch.version, max_python=max_py)
    return passed("python-dynamo.pass", python_version=py.version, max_python=max_py)

