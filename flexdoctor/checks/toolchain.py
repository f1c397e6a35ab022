"""CUDA toolkit checks (FD4xx): nvcc and CUDA_HOME matter for BUILDING flash-attn or other CUDA
extensions from source, never for FlexAttention, so they warn rather than fail (the
`extensions` profile turns them into failures)."""

from __future__ import annotations

import dataclasses

from .. import knowledge as kb
from .. import wheels
from ..facts import Facts, Skip, ok, require
from ..model import Finding, Status
from ..text import t
from . import _util as u
from .base import check, note, passed, skip, warn


def _cuda_torch(facts: Facts) -> str:
    if u.torch_build(facts) != "cuda":
        raise Skip(t("common.not_cuda_toolkit"))
    return facts.torch.cuda


def _not_cuda_torch(facts: Facts) -> Finding:
    """FD401's skip for a torch without CUDA, with the fix the `extensions` profile needs: under
    that profile this skip is a failure (policy: Profile.required)."""
    version = facts.torch.version if ok(facts.torch) else "?"
    build = _cuda_build(facts)
    fix = kb.fix("extension-build-needs-cuda-torch", python=u.python_cmd(facts), **build)
    if "torch_spec" not in build:  # no CUDA build is published for this platform and Python
        fix = dataclasses.replace(fix, commands=fix.commands[1:])
    return Finding(Status.SKIP, t("nvcc-found.not_cuda_torch", version=version), fix)


def _cuda_build(facts: Facts) -> dict:
    """The CUDA build of this torch release to install (the wheel table's choice for this
    platform, Python and driver; the PyPI build when the driver is unknown): its version without
    the local '+cpu', the variant, and the pip arguments. Empty when no CUDA build fits."""
    current = u.base_version(facts.torch.version) if ok(facts.torch) else None
    m = dataclasses.replace(u.machine(facts), kind="cuda")
    advice = wheels.recommend(m, keep=str(current) if current else None)
    if advice is None or advice.variant.kind != "cuda":
        return {"version": str(current) if current else "torch", "cuda_tag": t("wheels.no_cuda_build")}
    return {"version": advice.torch, "cuda_tag": advice.variant.tag, "torch_spec": advice.spec(),
            "index_args": advice.index_args()}


def _toolkit_ctx(torch_cuda: str) -> dict:
    mm = u.major_minor(torch_cuda) or (12, 8)
    return {"torch_cuda": f"{mm[0]}.{mm[1]}", "toolkit_pkg": f"{mm[0]}-{mm[1]}", "torch_cuda_major": str(mm[0])}


@check("FD401", "nvcc-found", area="toolchain")
def nvcc_found(facts: Facts) -> Finding:
    """What it checks: whether nvcc is on PATH and which CUDA release it is.

    Why it matters: FlexAttention does NOT need nvcc: under torch.compile, Inductor emits Triton
    code that Triton compiles through LLVM and the ptxas bundled in its wheel. (Guides claiming
    flex is "built with nvcc" at import are wrong: importing builds nothing.) nvcc is needed to
    build flash-attn without a matching prebuilt wheel, xformers, or any
    torch.utils.cpp_extension module, so its absence is a note (a failure under
    `--profile extensions`); an nvcc that is there but does not run is a warning.

    How to fix: nothing for flex; for extension builds install the CUDA toolkit whose major
    version matches torch.version.cuda and put its bin/ on PATH. A torch without CUDA ("+cpu",
    ROCm) cannot build CUDA extensions at all: this check skips, and under `--profile extensions`
    that skip is a failure whose fix is a CUDA build of torch.
    """
    if u.torch_build(facts) != "cuda":
        return _not_cuda_torch(facts)
    torch_cuda = facts.torch.cuda
    tc = require(facts.toolchain, "toolchain")
    fix = kb.fix("nvcc-not-found", **_toolkit_ctx(torch_cuda))
    if tc.nvcc is None:
        return note("nvcc-found.missing", fix)
    if not ok(tc.nvcc):
        return warn("nvcc-found.broken", fix, error=u.probe_error_text(tc.nvcc))
    return passed("nvcc-found.pass", path=tc.nvcc.path, version=tc.nvcc.version or "?")


@check("FD402", "nvcc-cuda-match", area="toolchain")
def nvcc_cuda_match(facts: Facts) -> Finding:
    """What it checks: that the nvcc extension builds really use, $CUDA_HOME/bin/nvcc (CUDA_HOME
    resolved as torch.utils.cpp_extension does: CUDA_HOME, CUDA_PATH, the parent of the nvcc on
    PATH, /usr/local/cuda), has torch.version.cuda's major version. The nvcc first on PATH only
    matters when CUDA_HOME is unset.

    Why it matters: torch.utils.cpp_extension (and so `pip install flash-attn` building from
    source) runs `$CUDA_HOME/bin/nvcc --version` and refuses a major mismatch: "The detected CUDA
    version (X) mismatches the version that was used to compile PyTorch (Y). Please make sure to
    use the same CUDA versions." A minor mismatch only warns. A CUDA_HOME without bin/nvcc fails
    with "nvcc not found at ...".

    How to fix: install the toolkit for torch's CUDA major and point CUDA_HOME (and PATH) at it,
    or install the torch built for your toolkit.
    """
    torch_cuda = _cuda_torch(facts)
    tc = require(facts.toolchain, "toolchain")
    home = tc.cuda_home
    if home is None:
        raise Skip(t("nvcc-cuda-match.no_cuda_home"))
    nvcc = home.nvcc
    on_path = tc.nvcc if ok(tc.nvcc) else None
    if nvcc is None and on_path is not None and _in_bin_of(on_path.path, home.path):
        nvcc = on_path  # facts recorded before CudaHome.nvcc: the PATH nvcc is CUDA_HOME's
    kw = dict(cuda_home=home.path, source=home.source)
    if nvcc is None:
        # /usr/local/cuda found by default with no nvcc anywhere (a CUDA runtime image): no toolkit
        # at all, a note like FD401's; a CUDA_HOME someone set without nvcc is a trap, a warning.
        level = note if home.source == "default" and tc.nvcc is None else warn
        return level("nvcc-cuda-match.missing", cuda_home_fix(facts), **kw)
    nvcc = require(nvcc, "nvcc")
    details = []
    if on_path is not None and on_path.path != nvcc.path and on_path.version != nvcc.version:
        details.append(t("nvcc-cuda-match.path_differs", path=on_path.path, version=on_path.version or "?"))
    if not nvcc.version:
        return skip("nvcc-cuda-match.unknown", path=nvcc.path)
    n, w = u.major_minor(nvcc.version), u.major_minor(torch_cuda)
    if n is None or w is None:
        return skip("nvcc-cuda-match.unknown", path=nvcc.path)
    if n[0] != w[0]:
        return warn("nvcc-cuda-match.major", kb.fix("nvcc-torch-cuda-mismatch", **_toolkit_ctx(torch_cuda)),
                    nvcc=nvcc.version, torch_cuda=torch_cuda, path=nvcc.path, details=details)
    if n != w:
        return passed("nvcc-cuda-match.minor", nvcc=nvcc.version, torch_cuda=torch_cuda, path=nvcc.path,
                      details=details)
    return passed("nvcc-cuda-match.pass", nvcc=nvcc.version, torch_cuda=torch_cuda, path=nvcc.path,
                  details=details)


def _in_bin_of(nvcc_path: str, home: str) -> bool:
    import os

    return os.path.normpath(os.path.dirname(os.path.dirname(nvcc_path))) == os.path.normpath(home)


def cuda_home_fix(facts: Facts):
    """The one CUDA_HOME to export, for FD402 and FD403 alike (two findings of one report must
    never name two different toolkits): another toolkit found on the machine than the one
    CUDA_HOME resolves to, preferring the one named for torch's CUDA version (/usr/local/cuda-12.8),
    else /usr/local/cuda."""
    import shlex

    tc = require(facts.toolchain, "toolchain")
    home = tc.cuda_home
    torch_cuda = u.major_minor(facts.torch.cuda) if ok(facts.torch) else None
    candidates = [c for c in tc.cuda_installs if not home or c != home.path]
    candidates.sort(key=lambda c: torch_cuda is None or not c.endswith(f"{torch_cuda[0]}.{torch_cuda[1]}"))
    suggestion = candidates[0] if candidates else "/usr/local/cuda"
    return kb.fix("cuda-home-not-set", cuda_home=shlex.quote(suggestion),
                  suggestion=t("cuda-home.suggestion", path=suggestion) if candidates else "")


@check("FD403", "cuda-home", area="toolchain")
def cuda_home(facts: Facts) -> Finding:
    """What it checks: where torch.utils.cpp_extension will find the CUDA toolkit (CUDA_HOME,
    then CUDA_PATH, then the parent of the nvcc on PATH, then /usr/local/cuda), that it holds
    include/cuda.h and include/cuda_runtime.h, and that its version agrees with nvcc.

    Why it matters: extension builds fail with "CUDA_HOME environment variable is not set" when
    nothing resolves, or with missing headers when nvcc is a wrapper script or a pip-installed
    binary whose parent is not a toolkit root. No toolkit at all (nothing resolves, or only the
    default /usr/local/cuda of a CUDA runtime image with no nvcc) is a note, like FD401's: it
    fails under `--profile extensions`; a toolkit someone pointed at that is broken is a warning.

    How to fix: export CUDA_HOME to the toolkit root (the directory holding bin/nvcc and
    include/cuda_runtime.h).
    """
    _cuda_torch(facts)
    tc = require(facts.toolchain, "toolchain")
    home = tc.cuda_home
    fix = cuda_home_fix(facts)
    if home is None:
        return note("cuda-home.unresolved", fix)  # no toolkit at all: FD401's note
    kw = dict(path=home.path, source=home.source)
    if not home.is_dir:
        return warn("cuda-home.not_dir", fix, **kw)
    if not (home.cuda_h and home.cuda_runtime_h):
        level = note if home.source == "default" and tc.nvcc is None else warn  # a runtime image
        return level("cuda-home.no_headers", fix, **kw)
    nvcc = tc.nvcc if ok(tc.nvcc) else None
    if nvcc and nvcc.version and home.version and u.major_minor(nvcc.version) != u.major_minor(home.version):
        return warn("cuda-home.version_mismatch", fix, version=home.version, nvcc=nvcc.version, **kw)
    return passed("cuda-home.pass", version=home.version or "?", **kw)

