"""The structural layer's fourth round (issue 22, tune-b3): build toolchains and binaries pinned to torch.

- No C/C++ compiler (``compiler``): Inductor's ``Compiler: cl is not found`` / ``InvalidCxxCompiler``,
  setuptools' ``Microsoft Visual C++ 14.0 or greater is required``, ``error: command 'gcc' failed: No such
  file or directory``. The fix is the compiler for the platform the log shows: Visual Studio Build Tools
  with the C++ workload and a shell that has run ``vcvarsall.bat x64`` on Windows (torch/_inductor/
  cpp_builder.py check_compiler_exist_windows looks for ``cl`` on PATH; setuptools' msvc.py names the
  Build Tools), build-essential / conda-forge's cxx-compiler on Linux, the Xcode command line tools on macOS.
- A CUDA extension built without nvcc (``nvcc``) on Linux/Windows: flash-attn's setup.py ("flash_attn was
  requested, but nvcc was not found"), torch.utils.cpp_extension ("CUDA_HOME environment variable is not
  set"): a prebuilt wheel for the installed torch, or the CUDA toolkit of torch's CUDA version with
  CUDA_HOME pointing at it (macOS is errors.cuda_build's: no CUDA exists there).

Every value put in a command is checked to be a plain token first (text from a log is data).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from . import abi, history, tables
from .tables import _load
from .readers import SAFE, _answer, _dist_of, word_before, NVCC_REQUESTED

# Visual Studio Build Tools 2022 with the C++ workload (learn.microsoft.com "Use command-line parameters to
# install Visual Studio": workload ID Microsoft.VisualStudio.Workload.VCTools), and the script that puts
# cl.exe on PATH for x64 (learn.microsoft.com "Use the Microsoft C++ toolset from the command line").
_MSVC_INSTALL = ('winget install --id Microsoft.VisualStudio.2022.BuildTools -e --override '
                 '"--passive --wait --add Microsoft.VisualStudio.Workload.VCTools --includeRecommended"')
_VCVARS = '"C:\\Program Files (x86)\\Microsoft Visual Studio\\2022\\BuildTools\\VC\\Auxiliary\\Build\\vcvarsall.bat" x64'
_MSVC = {"cl", "cl.exe", "msvc"}


def _windows(seen: Seen, facts: LogFacts, cc: str) -> bool:
    return cc.lower() in _MSVC or facts.platform == "windows" or bool(seen.groups.get("msvc"))


def compiler(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """No C/C++ compiler where a build (a CUDA/C++ extension, Inductor's C++ code) needs one."""
    cc = seen.groups.get("cc") or ("cl" if seen.groups.get("msvc") else "g++")
    if not re.fullmatch(r"[\w.+-]{1,40}", cc):  # "{compiler}": the raise line of a paste cut short
        cc = "cl" if facts.platform == "windows" or "\\" in seen.text else "c++"
    if _windows(seen, facts, cc):
        return _answer("unsupported-op", "compiler", "high", t("structural.b3.title.compiler", cc=cc),
                       t("structural.b3.cause.compiler_windows", cc=cc), t("structural.b3.fix.compiler_windows"),
                       [_MSVC_INSTALL, _VCVARS, "where cl"], seen, facts, 27)
    if facts.platform == "macos":
        return _answer("unsupported-op", "compiler", "high", t("structural.b3.title.compiler", cc=cc),
                       t("structural.b3.cause.compiler", cc=cc), t("structural.b3.fix.compiler_macos"),
                       ["xcode-select --install"], seen, facts, 27)
    commands = (["conda install -c conda-forge cxx-compiler"] if facts.conda else []) + [
        "sudo apt-get install -y build-essential  # Debian/Ubuntu", "sudo dnf install -y gcc-c++  # Fedora/RHEL"]
    return _answer("unsupported-op", "compiler", "high", t("structural.b3.title.compiler", cc=cc),
                   t("structural.b3.cause.compiler", cc=cc), t("structural.b3.fix.compiler_linux"),
                   commands + [f"which {cc}"], seen, facts, 27)


def _cuda_version(facts: LogFacts) -> Optional[str]:
    if facts.cuda and re.fullmatch(r"\d{1,2}\.\d{1,2}", facts.cuda):
        return facts.cuda
    return None


def nvcc(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A CUDA extension built where nvcc is absent (Linux, Windows, WSL; macOS is errors.cuda_build's)."""
    if facts.platform == "macos":
        return None
    named = seen.groups.get("dist") or word_before(seen.text, NVCC_REQUESTED) or facts.package or ""
    dist = _dist_of(named.replace("-", "_")) or ""
    dist = dist if SAFE.fullmatch(dist) and dist != "torch" else t("structural.word.the_package")
    cuda = _cuda_version(facts)
    commands = ['python -c "import torch; print(torch.__version__, torch.version.cuda)"', "nvcc --version"]
    if cuda and facts.conda:
        commands.append(f'conda install -c "nvidia/label/cuda-{cuda}.0" cuda-toolkit')
    if cuda and facts.platform != "windows":
        commands.append(f"export CUDA_HOME=/usr/local/cuda-{cuda}")
    shown = cuda or t("structural.b3.word.torch_cuda")
    return _answer("pip-no-distribution", dist, "high", t("structural.b3.title.nvcc", dist=dist),
                   t("structural.b3.cause.nvcc", dist=dist), t("structural.b3.fix.nvcc", dist=dist, cuda=shown),
                   commands, seen, facts, 27)



_CUDA_EXTENSION_RULES = {"needs-torch", "linux-cuda", "torch-pair"}  # torch-pair: xformers, torchvision, torchaudio


def build_failed(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """pip's summary that a CUDA extension's source build failed (a compiler killed for memory, no
    ninja, a toolchain error above): prebuilt wheel first, else a build that can finish."""
    name = seen.groups.get("dist") or ""
    row = tables.module_row(name.replace("-", "_")) or tables.module_row(name)
    if row is None or row["rule"] not in _CUDA_EXTENSION_RULES or not SAFE.fullmatch(row["dist"]):
        return None
    dist = row["dist"]
    jobs = "set MAX_JOBS=4" if facts.platform == "windows" else "export MAX_JOBS=4"
    return _answer("pip-no-distribution", dist, "medium", t("structural.b3.title.build_failed", dist=dist),
                   t("structural.b3.cause.build_failed", dist=dist), t("structural.b3.fix.build_failed", dist=dist),
                   ['python -c "import torch; print(torch.__version__, torch.version.cuda)"',
                    "python -m pip install ninja", jobs, f"python -m pip install {dist} --no-build-isolation"],
                   seen, facts, 60)


def ptxas_old(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A ptxas older than the PTX it assembles: which CUDA the PTX needs (b2_versions.toml [ptx_isa])."""
    isa = _load("b2_versions.toml")["ptx_isa"]
    ptx, have = seen.groups.get("ptx", ""), seen.groups.get("have", "")
    need = isa.get(ptx)
    if need is None:
        return None
    old = isa.get(have) or t("structural.word.unknown_package")
    env = "set TRITON_PTXAS_PATH=" if facts.platform == "windows" else "unset TRITON_PTXAS_PATH"
    return _answer("version-constraint", "ptxas", "high", t("structural.b3.title.ptxas", ptx=ptx, have=have),
                   t("structural.b3.cause.ptxas", ptx=ptx, have=have, need=need, old=old),
                   t("structural.b3.fix.ptxas", need=need), [env, "ptxas --version"], seen, facts, 25)


def inductor_internal(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """An error inside Inductor (not the model's code, not a missing tool: those shapes rank first)."""
    pkg = facts.package if facts.package and facts.package != "torch" else None
    row = tables.module_row(pkg) if pkg else None
    dist = row["dist"] if row and SAFE.fullmatch(row["dist"]) else None
    with_pkg = [f"python -m pip install --upgrade {dist}"] if dist else []
    return _answer("unsupported-op", "inductor", "medium", t("structural.b3.title.inductor"),
                   t("structural.b3.cause.inductor"),
                   t("structural.b3.fix.inductor", pkg=dist or t("structural.b3.word.compiling_package")),
                   with_pkg + ['python -c "import torch; print(torch.__version__)"'], seen, facts, 70, dist)


def pair_cuda(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """torchvision/torchaudio built for another CUDA major than torch: its release for this torch, from
    the index of torch's CUDA (the version the message states)."""
    dist, cuda = seen.groups.get("dist", ""), seen.groups.get("cuda", "")
    tag = "cu" + cuda.replace(".", "")
    vision, audio = history.companions(facts.torch_release) if facts.torch_release else (None, None)
    pin = {"torchvision": vision, "torchaudio": audio}.get(dist)
    summary, commands = abi.pair_fix(dist, facts)
    if pin:
        commands = [f"python -m pip install --force-reinstall --no-deps {dist}=={pin} "
                    f"--index-url https://download.pytorch.org/whl/{tag}"]
    return _answer("version-constraint", dist, "high", t("structural.b3.title.pair_cuda", dist=dist),
                   t("structural.b3.cause.pair_cuda", dist=dist, cuda=cuda), summary,
                   commands + ['python -c "import torch; print(torch.__version__, torch.version.cuda)"'], seen, facts, 20)


def jit_extension(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A torch JIT extension (torch.utils.cpp_extension.load) built by another torch, reused from the cache."""
    name = seen.groups.get("name", "")
    new_dir = 'export TORCH_EXTENSIONS_DIR="$HOME/.cache/torch_extensions_$(python -c \'import torch; print(torch.__version__)\')"'
    if facts.platform == "windows":
        new_dir = "set TORCH_EXTENSIONS_DIR=%LOCALAPPDATA%\\torch_extensions_new"
    return _answer("undefined-symbol", "torch", "high", t("structural.b3.title.jit_ext", name=name),
                   t("structural.b3.cause.jit_ext", name=name), t("structural.b3.fix.jit_ext", name=name),
                   [new_dir], seen, facts, 19)
