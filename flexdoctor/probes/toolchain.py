"""The native toolchain: nvcc, CUDA_HOME, the C compiler Triton uses, libcuda.

Each lookup mirrors the code that will really do it (torch.utils.cpp_extension for CUDA_HOME,
triton/runtime/build.py for the C compiler, triton's libcuda_dirs for libcuda), so the answer is
what the user's run will meet.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import re
import shutil
import sys
from pathlib import Path

from ..facts import Compiler, CudaHome, LibCuda, Nvcc, ProbeError, ToolchainFacts
from ..worker import run as worker_run

_RELEASE = re.compile(r"release (\d+)\.(\d+)")


def nvcc(timeout: float = 10.0, path: str | None = None) -> Nvcc | ProbeError | None:
    """The nvcc on PATH (or at ``path``) and the CUDA release it reports."""
    path = path or shutil.which("nvcc")
    if path is None:
        return None
    done = worker_run.run([path, "--version"], timeout=timeout)
    text = (done.stdout + done.stderr).strip()
    if done.start_error or done.timed_out or done.returncode != 0:
        from .interp import failure

        err = failure(done, f"{path} --version")
        return dataclasses.replace(err, detail=worker_run.tail(text) or None) if err else None
    m = _RELEASE.search(text)
    return Nvcc(path=path, version=f"{m.group(1)}.{m.group(2)}" if m else None,
                output=worker_run.tail(text, 6) or None)


def _toolkit_version(root: Path) -> str | None:
    try:
        data = json.loads((root / "version.json").read_text())
        full = data["cuda"]["version"]
        return ".".join(full.split(".")[:2])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    try:
        m = re.search(r"CUDA Version (\d+)\.(\d+)", (root / "version.txt").read_text())
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    except OSError:
        pass
    try:
        m = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", (root / "include" / "cuda.h").read_text(errors="replace"))
        if m:
            n = int(m.group(1))
            return f"{n // 1000}.{(n % 1000) // 10}"
    except OSError:
        pass
    return None


def cuda_home(path_nvcc: Nvcc | ProbeError | None = None) -> CudaHome | None:
    """Resolve CUDA_HOME exactly as torch.utils.cpp_extension._find_cuda_home does, and ask its
    bin/nvcc (what _check_cuda_version runs) for its release; ``path_nvcc`` is the PATH nvcc's
    answer, reused when it is the same file."""
    path, source = None, None
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            path, source = os.environ[var], var
            break
    if path is None:
        found = shutil.which("nvcc")
        if found:
            path, source = os.path.dirname(os.path.dirname(found)), "nvcc"
    if path is None:
        default = "/usr/local/cuda" if sys.platform != "win32" else None
        if default and os.path.exists(default):
            path, source = default, "default"
    if path is None:
        return None
    root = Path(path)
    inc = root / "include"
    exe = root / "bin" / ("nvcc.exe" if sys.platform == "win32" else "nvcc")
    home_nvcc = None
    if exe.is_file():
        same = isinstance(path_nvcc, Nvcc) and _same_file(path_nvcc.path, str(exe))
        home_nvcc = path_nvcc if same else nvcc(path=str(exe))
    return CudaHome(
        path=path,
        source=source,
        is_dir=root.is_dir(),
        cuda_h=(inc / "cuda.h").is_file(),
        cuda_runtime_h=(inc / "cuda_runtime.h").is_file(),
        version=_toolkit_version(root) if root.is_dir() else None,
        nvcc=home_nvcc,
    )


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _compiler(env_var: str, fallbacks: tuple[str, ...]) -> Compiler | None:
    if os.environ.get(env_var):
        cmd = os.environ[env_var]
        # $CC may carry flags ("ccache gcc"); Triton passes it as one argv element.
        return Compiler(source=env_var, command=cmd, path=shutil.which(cmd))
    for name in fallbacks:
        found = shutil.which(name)
        if found:
            return Compiler(source=name, command=name, path=found)
    return None


def c_compiler() -> Compiler | None:
    """Triton's choice (runtime/build.py): $CC, else gcc, else clang."""
    return _compiler("CC", ("gcc", "clang"))


def cxx_compiler() -> Compiler | None:
    """What CPU Inductor uses for generated C++ (torch/_inductor/config.py ``cpp.cxx``, read in
    torch 2.5-2.15): $CXX, else g++ on Linux and clang++ on macOS (cl on Windows: cpp_builder's
    get_cpp_compiler), and nothing else. A Linux machine with only clang++ has no compiler torch
    will use (unless CXX names it)."""
    default = "cl" if sys.platform == "win32" else ("clang++" if sys.platform == "darwin" else "g++")
    return _compiler("CXX", (default,))


def libcuda(timeout: float = 5.0) -> LibCuda | ProbeError | None:
    """Find libcuda.so.1 the way Triton's libcuda_dirs() does. None on non-Linux."""
    if not sys.platform.startswith("linux"):
        return None
    env_path = os.environ.get("TRITON_LIBCUDA_PATH")
    if env_path:
        dirs, method = [env_path], "TRITON_LIBCUDA_PATH"
    else:
        dirs, method = [], "ldconfig"
        ldconfig = "/sbin/ldconfig" if os.path.exists("/sbin/ldconfig") else shutil.which("ldconfig")
        if ldconfig:
            done = worker_run.run([ldconfig, "-p"], timeout=timeout)
            dirs = [
                os.path.dirname(line.split()[-1])
                for line in done.stdout.splitlines()
                if "libcuda.so.1" in line and line.split()
            ]
        if not dirs and os.environ.get("LD_LIBRARY_PATH"):
            method = "LD_LIBRARY_PATH"
            dirs = [d for d in os.environ["LD_LIBRARY_PATH"].split(":")
                    if d and os.path.exists(os.path.join(d, "libcuda.so.1"))]
    for d in dirs:
        lib = os.path.join(d, "libcuda.so.1")
        if os.path.exists(lib):
            unversioned = any(os.path.exists(os.path.join(x, "libcuda.so")) for x in dirs)
            return LibCuda(path=lib, method=method, unversioned=unversioned)
    return LibCuda(path=None, method=None, unversioned=False)


def cuda_installs() -> list[str]:
    roots = sorted(glob.glob("/usr/local/cuda-*"), reverse=True) + ["/usr/local/cuda", "/opt/cuda"]
    return [r for r in roots if os.path.isfile(os.path.join(r, "include", "cuda_runtime.h"))]


def probe() -> ToolchainFacts:
    on_path = nvcc()
    return ToolchainFacts(
        nvcc=on_path,
        cuda_home=cuda_home(on_path),
        c_compiler=c_compiler(),
        cxx_compiler=cxx_compiler(),
        libcuda=libcuda(),
        cuda_installs=cuda_installs() if sys.platform != "win32" else [],
    )
