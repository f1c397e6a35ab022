"""The structural layer's fifth round (issue 22, tune-e3): building CUDA/C++ extensions from source.

- nvcc's host compiler check (``host``): crt/host_config.h's "#error -- unsupported GNU version! gcc versions
  later than N are not supported!", its clang and Microsoft Visual Studio siblings. The message names the newest
  compiler the toolkit takes; the fix points the build at that compiler (torch.utils.cpp_extension passes
  ``-ccbin $CC`` to nvcc: torch/utils/cpp_extension.py unix_cuda_flags; CMake reads CUDAHOSTCXX), or a newer
  toolkit (e3_build.toml [gcc_first_cuda]); -allow-unsupported-compiler only as a last resort.
- A GPU architecture nvcc/ptxas does not know (``arch``): "Unsupported gpu architecture 'compute_XX'", "Value
  'sm_XX' is not defined for option 'gpu-name'": the toolkit that first knows it (or the last that still does).
- A header the build cannot find (``header``): which toolkit component, apt/conda package or NVIDIA wheel
  ships it, or the project's git submodules.
- The linker (``link``): "ld: cannot find -lcudart" (LIBRARY_PATH; -lcuda from the toolkit's stubs folder),
  MSVC's LNK1181, and "recompile with -fPIC".
- CMake without a CUDA compiler (``cmake``): "No CMAKE_CUDA_COMPILER could be found", "Failed to detect a
  default CUDA architecture", FindCUDA's "Failed to find nvcc" (llama-cpp-python's CMAKE_ARGS="-DGGML_CUDA=on").

Every value put in a command is checked to be a plain token first (text from a log is data).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer
from .tables import _load

_TOKEN = re.compile(r"[\w.+/-]{1,120}")
_CUDA_IN_PATH = re.compile(r"cuda-(\d{1,2}\.\d)|CUDA[\\/]v(\d{1,2}\.\d)")


def _table() -> dict:
    return _load("e3_build.toml")


def _toolkit(seen: Seen, facts: LogFacts) -> Optional[str]:
    """The toolkit's X.Y: from a versioned path on the line (/usr/local/cuda-11.7, CUDA\\v11.7), else the log's."""
    m = _CUDA_IN_PATH.search(seen.text)
    if m:
        return m.group(1) or m.group(2)
    return facts.cuda if facts.cuda and re.fullmatch(r"\d{1,2}\.\d{1,2}", facts.cuda) else None


def host(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """nvcc refused the host compiler (crt/host_config.h)."""
    g = seen.groups
    if g.get("vs_hi"):
        return _msvc(seen, facts, g["vs_lo"], g["vs_hi"])
    gcc, clang = g.get("gcc"), g.get("clang")
    if clang:
        keep = str(int(clang) - 1)
        cc, cxx, apt = f"clang-{keep}", f"clang++-{keep}", f"sudo apt-get install -y clang-{keep}"
        subject, newest = "clang", t("structural.e3.word.clang_below", n=clang)
    elif gcc:
        cc, cxx, apt = f"gcc-{gcc}", f"g++-{gcc}", f"sudo apt-get install -y gcc-{gcc} g++-{gcc}"
        subject, newest = "gcc", f"gcc {gcc}"
    else:
        return None
    commands = [apt] + ([f"conda install -c conda-forge gcc_linux-64={gcc} gxx_linux-64={gcc}"]
                        if gcc and facts.conda else [])
    commands.append(f"export CC={cc} CXX={cxx} CUDAHOSTCXX={cxx} NVCC_CCBIN={cxx}")
    newer = _newer_cuda(gcc)
    return _answer("version-constraint", subject, "high", t("structural.e3.title.host", cc=subject, newest=newest),
                   t("structural.e3.cause.host", cc=subject, newest=newest),
                   t("structural.e3.fix.host", cc=cc, cxx=cxx, newer=newer),
                   commands + [f"{cxx} --version", "nvcc --version"], seen, facts, 18)


def _newer_cuda(gcc: Optional[str]) -> str:
    """'gcc 13: CUDA 12.4; gcc 14: CUDA 12.9': the first toolkit taking each gcc newer than the one it names."""
    rows = [(int(k), v) for k, v in _table()["gcc_first_cuda"].items() if gcc and int(k) > int(gcc)]
    if not rows:
        return t("structural.e3.word.newer_cuda_any")
    return "; ".join(f"gcc {k}: CUDA {v}" for k, v in sorted(rows))


def _msvc(seen: Seen, facts: LogFacts, lo: str, hi: str) -> Answer:
    tools = _table()["msvc_buildtools"].get(hi)
    commands = []
    if tools:
        commands.append(f'winget install --id {tools} -e --override '
                        '"--passive --wait --add Microsoft.VisualStudio.Workload.VCTools --includeRecommended"')
    commands += ["where cl", "cl", "nvcc --version"]
    return _answer("version-constraint", "msvc", "high", t("structural.e3.title.msvc", lo=lo, hi=hi),
                   t("structural.e3.cause.msvc", lo=lo, hi=hi), t("structural.e3.fix.msvc", lo=lo, hi=hi),
                   commands, seen, facts, 18)


def _arch_row(sm: str) -> Optional[dict]:
    return next((r for r in _table()["arch"] if sm in r["sm"]), None)


def _older(a: str, b: str) -> bool:
    return tuple(int(x) for x in a.split(".")) < tuple(int(x) for x in b.split("."))


def arch(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """nvcc or ptxas does not know a GPU architecture the build asks for: too new for it, or removed."""
    sm = seen.groups.get("arch", "")
    row = _arch_row(sm)
    if row is None:
        return None
    have = _toolkit(seen, facts)
    removed = row.get("last") and (have is None or _older(row["last"], have) or int(sm) < 75)
    win = facts.platform == "windows"
    commands = ["nvcc --version", 'python -c "import torch; print(torch.__version__, torch.version.cuda, '
                'torch.cuda.get_device_capability() if torch.cuda.is_available() else None)"']
    if removed:
        fix = t("structural.e3.fix.arch_removed", sm=sm, last=row["last"])
        cause = t("structural.e3.cause.arch_removed", sm=sm, last=row["last"])
    else:
        fix = t("structural.e3.fix.arch_new", sm=sm, first=row["first"])
        cause = t("structural.e3.cause.arch_new", sm=sm, first=row["first"], have=have or "?")
        if not win:
            first = row["first"]
            commands.insert(1, f"export CUDA_HOME=/usr/local/cuda-{first} PATH=/usr/local/cuda-{first}/bin:$PATH"
                               "  # or any newer toolkit")
    return _answer("version-constraint", "nvcc", "high", t("structural.e3.title.arch", sm=sm), cause, fix,
                   commands, seen, facts, 19)


def _header_row(name: str) -> Optional[dict]:
    return next((r for r in _table()["header"] if name in r["names"]), None)


def header(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A header the build includes is not found: what ships it."""
    name = seen.groups.get("hdr", "")
    row = _header_row(name)
    if row is None or not _TOKEN.fullmatch(name):
        return None
    if row.get("submodule"):
        return _answer("shared-library", name, "high", t("structural.e3.title.header", hdr=name),
                       t("structural.e3.cause.submodule", hdr=name), t("structural.e3.fix.submodule", hdr=name),
                       ["git submodule update --init --recursive", "git clone --recursive <the project's URL>"],
                       seen, facts, 20)
    cuda = _toolkit(seen, facts)
    major = cuda.split(".")[0] if cuda else None
    commands = []
    if cuda and row.get("apt"):
        commands.append("sudo apt-get install -y " + row["apt"].format(v=cuda.replace(".", "-"), m=major))
    if row.get("conda") and (facts.conda or not cuda):
        label = f' -c "nvidia/label/cuda-{cuda}.0"' if cuda else " -c nvidia"
        commands.append(f"conda install{label} {row['conda']}")
    commands += ['python -c "from torch.utils import cpp_extension; print(cpp_extension.CUDA_HOME)"',
                 f"ls $CUDA_HOME/include/{name}"]
    what = row["component"]
    pip = row["pip"].format(m=major) if row.get("pip") and major else t("structural.e3.word.no_wheel")
    return _answer("shared-library", name, "high", t("structural.e3.title.header", hdr=name),
                   t("structural.e3.cause.header", hdr=name, what=what),
                   t("structural.e3.fix.header", hdr=name, what=what, pip=pip), commands, seen, facts, 20)


_LIB_PKG = {"cudart": "cudart", "cublas": "cuBLAS", "cublasLt": "cuBLAS", "cusparse": "cuSPARSE", "cusolver": "cuSOLVER",
            "curand": "cuRAND", "cufft": "cuFFT", "nvrtc": "NVRTC", "nvToolsExt": "NVTX", "cudnn": "cuDNN",
            "nccl": "NCCL", "cudadevrt": "cudart", "cudart_static": "cudart", "nvJitLink": "nvJitLink"}


def link(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """The linker found no library (-lX, X.lib) or refused an object built without -fPIC."""
    if seen.groups.get("pic") is not None:
        return _answer("shared-library", "-fPIC", "high", t("structural.e3.title.pic"), t("structural.e3.cause.pic"),
                       t("structural.e3.fix.pic"), ['export CFLAGS="-fPIC" CXXFLAGS="-fPIC"',
                                                    "cmake -DCMAKE_POSITION_INDEPENDENT_CODE=ON .."], seen, facts, 21)
    lib = seen.groups.get("lib") or (seen.groups.get("winlib") or "").removesuffix(".lib")
    if not _TOKEN.fullmatch(lib or ""):
        return None
    if lib == "cuda":  # the driver's library: linked against the toolkit's stub (lib64/stubs/libcuda.so)
        fix, cmds = t("structural.e3.fix.link_cuda"), [
            'export LIBRARY_PATH="$CUDA_HOME/lib64/stubs:$LIBRARY_PATH"', "ls $CUDA_HOME/lib64/stubs/libcuda.so"]
    elif lib in _LIB_PKG:
        fix = t("structural.e3.fix.link_toolkit", lib=lib, what=_LIB_PKG[lib])
        cmds = ['export LIBRARY_PATH="$CUDA_HOME/lib64:$LIBRARY_PATH"', f"ls $CUDA_HOME/lib64/lib{lib}.so"]
        if facts.platform == "windows" or seen.groups.get("winlib"):
            cmds = ["echo %CUDA_PATH%", f'dir "%CUDA_PATH%\\lib\\x64\\{lib}.lib"']
    else:
        fix, cmds = t("structural.e3.fix.link_other", lib=lib), [f"ldconfig -p | grep lib{lib}"]
    return _answer("shared-library", f"-l{lib}", "high", t("structural.e3.title.link", lib=lib),
                   t("structural.e3.cause.link", lib=lib), fix, cmds, seen, facts, 21)


def cmake(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """CMake found no working CUDA compiler (no nvcc, or one that cannot compile its test program)."""
    if seen.groups.get("detect") is not None:
        return _answer("version-constraint", "nvcc", "medium", t("structural.e3.title.cmake_arch"),
                       t("structural.e3.cause.cmake_arch"), t("structural.e3.fix.cmake_arch"),
                       ["nvcc --version", "nvidia-smi --query-gpu=compute_cap --format=csv",
                        'cmake -DCMAKE_CUDA_ARCHITECTURES=native ..  # CMake >= 3.24; or the number, e.g. 86'],
                       seen, facts, 24)
    # CMake reads CUDACXX on the first configure (CMAKE_CUDA_COMPILER's default); pip builds start a fresh one
    commands = ["nvcc --version", "ls /usr/local/cuda/bin/nvcc",
                "export CUDACXX=/usr/local/cuda/bin/nvcc PATH=/usr/local/cuda/bin:$PATH"]
    return _answer("pip-no-distribution", "nvcc", "high", t("structural.e3.title.cmake"),
                   t("structural.e3.cause.cmake"), t("structural.e3.fix.cmake"), commands, seen, facts, 24)
