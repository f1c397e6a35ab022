"""What torch.compile needs at run time to build flex kernels (FD3xx): Triton on GPUs, a C/C++
compiler, Python headers, libcuda."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from packaging.version import Version

if TYPE_CHECKING:
    from packaging.requirements import Requirement

from .. import knowledge as kb
from .. import wheels
from ..facts import Facts, Skip, ok, require
from ..model import Finding
from ..text import t
from . import _util as u
from .base import check, fail, passed, skip, warn

TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-rocm", "triton-windows")


def _triton(facts: Facts) -> tuple[str, str] | None:
    py = require(facts.python, "python")
    for name in TRITON_DISTS:
        if name in py.packages:
            return name, py.packages[name]
    return None


def _gpu_build(facts: Facts) -> str:
    """Skip unless torch is a GPU build: CPU Inductor generates C++, not Triton."""
    build = u.torch_build(facts)
    if build == "cpu":
        raise Skip(t("common.cpu_build_no_triton"))
    return build


@check("FD301", "triton-installed", area="compiler")
def triton_installed(facts: Facts) -> Finding:
    """What it checks: that Triton is installed for a CUDA or ROCm build of torch, and that it
    imports in the target interpreter.

    Why it matters: compiled flex_attention is an Inductor template lowered to a Triton kernel;
    without Triton, torch.compile fails with "Cannot find a working triton installation. Either
    the package is not installed or it is too old." (Uncompiled flex does not need Triton, but
    it materialises the whole score matrix.) CPU builds do not use Triton.

    How to fix: install the Triton version torch pins (pip install 'triton==X'); on Windows the
    community triton-windows package.
    """
    _gpu_build(facts)
    found = _triton(facts)
    py = require(facts.python, "python")
    if py.platform.startswith("win"):
        # No official Windows wheels; the community triton-windows of the Triton minor torch pins.
        spec = u.triton_windows_spec(facts)
        req = spec.strip('"')
    else:
        req = _requirement(facts)
        if req is not None:
            req = str(req).split(";")[0].strip()
        else:  # torch's metadata names none (a --no-deps or conda install): the release's own pin
            current = u.base_version(facts.torch.version) if ok(facts.torch) else None
            req = wheels.triton_requirement(str(current) if current else None) or "triton"
        spec = shlex.quote(req)
    fix = kb.fix("triton-missing", python=u.python_cmd(facts), requirement=req, triton_spec=spec,
                 index_args=_index_args(req, facts))
    if found is None:
        return fail("triton-installed.missing", fix, requirement=req)
    rt = facts.torch_runtime
    if ok(rt) and rt.triton_import_error:
        return fail("triton-installed.import_error", fix, dist=found[0], version=found[1],
                    error=rt.triton_import_error.splitlines()[-1])
    return passed("triton-installed.pass", dist=found[0], version=found[1])


@check("FD302", "triton-version", area="compiler")
def triton_version(facts: Facts) -> Finding:
    """What it checks: that the installed Triton satisfies torch's own requirement, read from
    torch's package metadata (Requires-Dist: triton==X), never from a hard-coded table.

    Why it matters: Inductor calls Triton internals that change with every release, so each
    torch pins one Triton (2.5.1 -> 3.1.0, 2.6.0 -> 3.2.0, 2.7.1 -> 3.3.1, 2.8.0 -> 3.4.0,
    2.9.1 -> 3.5.1, 2.10/2.11 -> 3.6.0). A different one breaks compilation with ImportErrors or
    API mismatches deep inside torch._inductor.

    How to fix: pip install the exact requirement torch names.
    """
    _gpu_build(facts)
    found = _triton(facts)
    if found is None:
        return skip("triton-version.not_installed")
    req = _requirement(facts)
    if req is None:
        return skip("triton-version.no_pin")
    spec = str(req).split(";")[0].strip()
    fix = kb.fix("triton-version-mismatch", python=u.python_cmd(facts), requirement=spec,
                 triton_spec=shlex.quote(spec), index_args=_index_args(spec, facts))
    installed = require(facts.python, "python").packages.get(req.name)
    if installed is None:  # e.g. torch wants pytorch-triton-rocm, only triton is installed
        return fail("triton-version.other_dist", fix, dist=found[0], version=found[1], requirement=spec)
    if req.specifier.contains(installed, prereleases=True):
        return passed("triton-version.pass", dist=req.name, version=installed, requirement=spec)
    return fail("triton-version.mismatch", fix, version=installed, requirement=spec)


def _index_args(requirement: str, facts: Facts) -> str:
    """Nightly torch pins pytorch-triton (e.g. 3.7.0+git...), which only the nightly index has."""
    if requirement.startswith("pytorch-triton") or "+git" in requirement:
        return f" --index-url https://download.pytorch.org/whl/nightly/{u.installed_tag(facts) or u.wheel_tag(facts)}"
    return ""


def _requirement(facts: Facts) -> Requirement | None:
    """torch's triton requirement if it applies to the target platform (markers evaluated)."""
    text = require(facts.torch, "torch").triton_requirement
    if not text:
        return None
    # Imported here: packaging.requirements costs ~25 ms to import and most reports never parse one.
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    if req.marker is not None:
        py = facts.python if ok(facts.python) else None
        host = facts.host if ok(facts.host) else None
        env = {}
        if py is not None:
            env.update(sys_platform=py.platform, python_version=".".join(py.version.split(".")[:2]),
                       python_full_version=py.version)
        if host is not None:
            env.update(platform_system=host.os, platform_machine=host.machine)
        try:
            if not req.marker.evaluate(env):
                return None
        except Exception:
            pass
    return req


@check("FD303", "triton-gpu-arch", area="compiler")
def triton_gpu_arch(facts: Facts) -> Finding:
    """What it checks: that the installed Triton can compile for every GPU: Blackwell (sm_100,
    sm_120) needs triton >= 3.3, because Triton compiles with the ptxas bundled in its wheel.

    Why it matters: triton 3.1/3.2 (torch 2.5/2.6) ship ptxas 12.4, which fails on RTX 50xx and
    B200 with "ptxas fatal : Value 'sm_120' is not defined for option 'gpu-name'".

    How to fix: upgrade to torch >= 2.7 (brings triton >= 3.3) with a CUDA 12.8+ wheel.
    """
    gpus = u.nvidia_gpus(facts)
    if _gpu_build(facts) != "cuda":
        return skip("triton-gpu-arch.not_cuda")
    found = _triton(facts)
    if found is None:
        return skip("triton-version.not_installed")
    tv = u.base_version(found[1])
    blackwell = [d for d in gpus if d.cc >= (10, 0)]
    if blackwell and tv is not None and tv < Version("3.3"):
        return fail("triton-gpu-arch.too_old", kb.fix("triton-too-old-for-blackwell", python=u.python_cmd(facts),
                                                      **u.wheel_context(facts, min_torch="2.7")),
                    version=found[1], gpu=u.gpu_label(blackwell[0]),
                    arch="sm_" + blackwell[0].compute_capability.replace(".", ""))
    return passed("triton-gpu-arch.pass", version=found[1])


@check("FD304", "c-compiler", area="compiler")
def c_compiler(facts: Facts) -> Finding:
    """What it checks: the C compiler Triton will use, found as Triton finds it: $CC, else gcc,
    else clang; and that $CC, when set, exists.

    Why it matters: Triton compiles C code when it starts compiling kernels: up to triton 3.6 a
    small launcher for each new kernel signature, from 3.7 one driver module (with a generic
    launcher) built once and cached. Slim images have no compiler and fail with "Failed to find C
    compiler. Please specify via CC environment variable." A warm Triton cache can hide this (on
    triton <= 3.6 until a kernel with a new signature appears).

    How to fix: install gcc (apt-get install gcc) or set CC to a working compiler.
    """
    _gpu_build(facts)
    if not u.is_linux(facts):
        return skip("c-compiler.not_linux")
    tc = require(facts.toolchain, "toolchain")
    cc = tc.c_compiler
    fix = kb.fix("no-c-compiler")
    if cc is None:
        return fail("c-compiler.missing", fix)
    if cc.path is None:
        return fail("c-compiler.cc_missing", fix, command=cc.command)
    return passed("c-compiler.pass", command=cc.command, path=cc.path, source=cc.source)


@check("FD305", "cxx-compiler", area="compiler")
def cxx_compiler(facts: Facts) -> Finding:
    """What it checks: for CPU builds of torch (or machines without an NVIDIA GPU), the C++
    compiler CPU Inductor uses to compile flex_attention: $CXX, else g++ (clang++ on macOS) and
    nothing else (torch/_inductor/config.py cpp.cxx): clang++ alone on Linux does not count.

    Why it matters: on the CPU, torch.compile generates C++ and builds it; without a compiler,
    compiled flex (and `flexdoctor warm-cache --device cpu`) fails.

    How to fix: install g++ or set CXX.
    """
    build = u.torch_build(facts)
    if build == "rocm" or (build == "cuda" and u.has_nvidia_gpu(facts)):
        return skip("cxx-compiler.gpu")
    tc = require(facts.toolchain, "toolchain")
    cxx = tc.cxx_compiler
    plat = facts.python.platform if ok(facts.python) else "linux"
    default = "cl" if plat.startswith("win") else ("clang++" if plat == "darwin" else "g++")
    if cxx is not None and cxx.source == "clang++" and u.is_linux(facts):  # recorded by a flexdoctor
        return fail("cxx-compiler.missing", kb.fix("no-cxx-compiler"), command=default)  # that took clang++
    if cxx is None or cxx.path is None:
        return fail("cxx-compiler.missing", kb.fix("no-cxx-compiler"), command=cxx.command if cxx else default)
    return passed("cxx-compiler.pass", command=cxx.command, path=cxx.path)


@check("FD306", "python-headers", area="compiler")
def python_headers(facts: Facts) -> Finding:
    """What it checks: that Python.h exists in the include directory of the target interpreter
    (sysconfig.get_paths()["include"]).

    Why it matters: Triton compiles its kernel launcher against the running interpreter's
    headers, and so do Inductor's C++ wrappers: "fatal error: Python.h: No such file or
    directory". Distribution Pythons ship them in a separate python3.X-dev package.

    How to fix: install the -dev package for this Python version.
    """
    py = require(facts.python, "python")
    if facts.torch is None:
        return skip("common.torch_not_installed")
    if py.python_h:
        return passed("python-headers.pass", include=py.include_dir)
    minor = ".".join(py.version.split(".")[:2])
    include = py.include_dir or ""
    if include.startswith("/usr/include/"):  # a distribution Python: its -dev package has the headers
        fix = kb.fix("python-headers-missing", python_version=minor, python_minor=minor)
    else:
        fix = kb.fix("python-headers-missing-managed", how=_reinstall_hint(include, minor))
    return fail("python-headers.missing", fix, include=include or "?")


def _reinstall_hint(include: str, minor: str) -> str:
    if "/.pyenv/" in include:
        return f"pyenv install --force {minor}"
    if "/uv/python/" in include:
        return f"uv python install --reinstall {minor}"
    if "conda" in include or "mamba" in include or "miniforge" in include:
        return f"conda install python={minor}"
    return t("python-headers.reinstall_any", minor=minor)


@check("FD307", "libcuda", area="compiler")
def libcuda(facts: Facts) -> Finding:
    """What it checks: that libcuda.so.1 can be found the way Triton looks for it:
    TRITON_LIBCUDA_PATH, else `/sbin/ldconfig -p`, else LD_LIBRARY_PATH; and, for triton <= 3.5,
    that an unversioned libcuda.so sits beside it (those releases link with -lcuda).

    Why it matters: containers often mount the driver library outside the ldconfig cache;
    Triton then dies with "libcuda.so cannot found!" or "/usr/bin/ld: cannot find -lcuda" at the
    first compiled kernel, though torch itself found the GPU.

    How to fix: export TRITON_LIBCUDA_PATH to the directory holding libcuda.so.1 or run ldconfig.
    """
    u.nvidia_gpus(facts)
    if _gpu_build(facts) != "cuda":
        return skip("triton-gpu-arch.not_cuda")
    if not u.is_linux(facts):
        return skip("libcuda.not_linux")
    tc = require(facts.toolchain, "toolchain")
    lib = require(tc.libcuda, "libcuda")
    fix = kb.fix("libcuda-not-found")
    if lib.path is None:
        return fail("libcuda.missing", fix)
    found = _triton(facts)
    tv = u.base_version(found[1]) if found else None
    if tv is not None and tv < Version("3.6") and not lib.unversioned:
        return warn("libcuda.unversioned", fix, path=lib.path, version=found[1])
    return passed("libcuda.pass", path=lib.path, method=lib.method)
