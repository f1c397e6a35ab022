"""Shared libraries that do not load: which file, what provides it, and the fix for this log's
platform, CUDA major and installer (pip or conda)."""

from __future__ import annotations

import re
from typing import Optional

from ...model import Fix
from ...text import t
from . import tables
from .collect import Seen, package_of
from .context import LogFacts
from .model import Answer

_SEPS = " \t'\"(:,;=`[{<"
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,119}")


def name_before(text: str, start: int) -> str:
    """The file name that ends where a ``.so...`` match starts: back to a separator or a slash."""
    i = start
    while i > 0 and text[i - 1] not in _SEPS and text[i - 1] not in "/\\":
        i -= 1
    return text[i:start]


def library_name(seen: Seen) -> Optional[str]:
    g = seen.groups
    if g.get("lib"):
        name = g["lib"].rstrip(".,;:")
    elif g.get("path"):
        name = re.split(r"[\\/]", g["path"])[-1]
    elif g.get("stem"):
        name = "lib" + g["stem"] + ".so"
    elif g.get("mod"):
        return None
    else:
        so = re.match(r"\.so(?:\.\d+)*", seen.text[seen.start:])
        name = name_before(seen.text, seen.start) + (so.group(0) if so else ".so")
    name = name.strip()
    return name if _SAFE.fullmatch(name) else None


def split_name(name: str) -> tuple[str, Optional[str]]:
    """(stem, number): libcudnn_ops.so.9 -> (cudnn_ops, 9); cudart64_12.dll -> (cudart64_12, 12);
    libcudart.so.11.0 -> (cudart, 11.0); nvrtc64_120_0.dll -> (nvrtc64_120_0, 120)."""
    low = name
    if low.lower().startswith("lib"):
        low = low[3:]
    m = re.match(r"(.+?)\.so(?:\.(\d+(?:\.\d+)?))?", low)
    if m:
        return m.group(1), m.group(2)
    m = re.match(r"(.+?)\.(?:dll|dylib)$", low, re.I)
    stem = m.group(1) if m else low
    num = re.search(r"(?:64)?_(\d+)", stem)
    return stem, (num.group(1) if num else None)


def cuda_major(row: dict, number: Optional[str], facts: LogFacts) -> Optional[int]:
    """The CUDA major the missing file belongs to: its soname when that says it, else the log's."""
    if number and not row.get("own_major"):
        mapped = row.get("cuda_of_soname", {}).get(number)
        if mapped is not None:
            return int(mapped)
    major = facts.cuda_major
    return major if major is not None and str(major) in {str(k) for k in row.get("pip", {})} else None


def _loaded_by_torch(seen: Seen, facts: LogFacts) -> bool:
    pkg = package_of(seen.text) or facts.package
    return pkg == "torch" or (pkg is None and "torch" in seen.text)


def _cuda_pip(row: dict, name: str, number: Optional[str], seen: Seen, facts: LogFacts) -> tuple[str, list, str]:
    major = cuda_major(row, number, facts)
    pip = row["pip"].get(str(major)) if major is not None else None
    pin = f"=={number.split('.')[0]}.*" if row.get("own_major") and number else ""
    commands, words = ["python -m pip check"], []
    if pip:
        commands.append(f'python -m pip install "{pip}{pin}"')
        words.append(t("structural.lib.pip_major", what=row["what"], major=pin[2:-2], pip=pip + pin) if pin
                     else t("structural.lib.pip", pip=pip + pin))
    else:
        words.append(_older_cuda(row, name, number, facts) or t(
            "structural.lib.pip_unknown", what=row["what"],
            names=", ".join(f"{v} (CUDA {k})" for k, v in sorted(row["pip"].items()))))
    if not _loaded_by_torch(seen, facts) and pip and major in (11, 12) and facts.platform != "windows":
        mod = row.get("module")
        if mod:
            commands.append(f"export LD_LIBRARY_PATH=\"$(python -c 'import os, {mod}.lib as m; "
                            f"print(os.path.dirname(m.__file__))'):$LD_LIBRARY_PATH\"")
            words.append(t("structural.lib.ld_path"))
    system = _system_copy(row, name, number, major, seen, facts, bool(pip))
    words += system[0]
    commands += system[1]
    if facts.platform == "windows" and pip:
        words.append(t("structural.lib.windows_path", module=row.get("module", "nvidia").replace(".", "\\")))
    if facts.conda and row.get("conda") and major:
        commands.append(f'conda install -c conda-forge {row["conda"]} "cuda-version={major}"')
        words.append(t("structural.lib.conda"))
    return " ".join(words), commands, "high" if pip else "medium"


def _older_cuda(row: dict, name: str, number: Optional[str], facts: LogFacts) -> Optional[str]:
    """A soname numbered by a CUDA release older than any NVIDIA pip wheel (libcublas.so.8.0,
    cudart64_100.dll): the loading package was built against that CUDA."""
    if not number or row.get("own_major") or not re.fullmatch(r"\d{1,2}\.\d|\d{2,3}", number):
        return None
    ver = number if "." in number else f"{number[:-1]}.{number[-1]}"
    if int(ver.split(".")[0]) >= 11:
        return None
    return t("structural.lib_a2.old_cuda", lib=name, cuda=ver, pkg=facts.package or t("structural.word.the_package"))


def _system_copy(row: dict, name: str, number: Optional[str], major: Optional[int], seen: Seen, facts: LogFacts,
                 pip: bool) -> tuple[list, list]:
    """The system-wide way (NVIDIA's apt repository) and, for a loader other than torch, how to make
    an installed copy findable (the dynamic loader reads LD_LIBRARY_PATH and ldconfig's cache)."""
    words, commands = [], []
    if facts.platform not in (None, "linux", "wsl2"):
        return words, commands
    apt = row.get("apt_of_major", {}).get(number.split(".")[0] if number else "")
    if apt and ("{cuda}" not in apt or major):
        apt = apt.replace("{cuda}", str(major))
        words.append(t("structural.lib_a2.apt_repo", pkg=apt))
        commands.append(f"sudo apt-get install -y {apt}")
    if not _loaded_by_torch(seen, facts) and not pip:
        words.append(t("structural.lib_a2.findable", lib=name))
        commands.append(f"ldconfig -p | grep -i {split_name(name)[0]}")
    return words, commands


def _system(row: dict, facts: LogFacts) -> tuple[str, list, str]:
    commands, words = [], []
    if facts.platform in (None, "linux", "wsl2") and row.get("apt"):
        alt = f" || sudo apt-get install -y {row['apt_alt']}" if row.get("apt_alt") else ""
        commands.append(f"sudo apt-get install -y {row['apt']}{alt}")
        words.append(t("structural.lib.apt", pkg=row["apt"]))
    if row.get("headless"):
        commands.append(f"python -m pip install {row['headless']}")
        words.append(t("structural.lib.headless", pkg=row["headless"]))
    if (facts.conda or not commands) and row.get("conda"):
        commands.append(f"conda install -c conda-forge {row['conda']}")
        words.append(t("structural.lib.conda_pkg", pkg=row["conda"]))
    if facts.platform == "macos" and row["provider"] == "openmp-llvm":
        commands.insert(0, "brew install libomp")
    if row.get("ldpath") and facts.platform in (None, "linux", "wsl2"):
        words.append(t("structural.h7.lib.ldpath"))  # tune-h7: a hand-installed copy outside the loader's path
    return " ".join(words) or t("structural.lib.system"), commands, "high" if commands else "medium"


def _torch(facts: LogFacts, seen: Seen) -> tuple[str, list, str]:
    pkg = package_of(seen.text) or facts.package
    if pkg and pkg != "torch":
        return t("structural.lib.torch_ext", pkg=pkg), ["python -c \"import torch; print(torch.__version__)\""], "medium"
    if facts.platform == "windows" or re.search(r"\.dll\b", seen.text):
        # the DLL is in torch's wheel: what does not load is a system DLL it needs (the VC++ runtime)
        return t("structural.lib.torch_windows"), ["winget install Microsoft.VCRedist.2015+.x64"], "high"
    commands = []
    if facts.torch_release and facts.cuda_tag:
        commands.append(f"python -m pip install --force-reinstall torch=={facts.torch_release} "
                        f"--index-url https://download.pytorch.org/whl/{facts.cuda_tag}")
    return t("structural.lib.torch"), commands, "high"


def _provider_fix(row: Optional[dict], name: str, seen: Seen, facts: LogFacts) -> tuple[str, list, str]:
    _stem, number = split_name(name)
    if row is None:
        return t("structural.lib.unknown", lib=name), [], "medium"
    kind = row["provider"]
    if kind == "cuda-pip":
        return _cuda_pip(row, name, number, seen, facts)
    if kind == "driver":
        commands = ["nvidia-smi"]
        if facts.platform == "wsl2":
            commands.append("export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH")
        return t("structural.lib.driver"), commands, "high"
    if kind == "torch":
        return _torch(facts, seen)
    if kind == "package":
        return t("structural.lib.package", pkg=row["pip_name"]), [f"python -m pip install --upgrade {row['pip_name']}"], "high"
    if kind in ("mkl", "openmp"):
        commands = [f"python -m pip install {row['pip_name']}"] + (
            [f"conda install -c conda-forge {row['conda']}"] if facts.conda else [])
        return t("structural.lib.pip_or_conda", pkg=row["pip_name"]), commands, "high"
    if kind == "rocm":
        return t("structural.lib.rocm"), ["python -c \"import torch; print(torch.__version__, torch.version.hip)\""], "medium"
    if kind == "python":
        return t("structural.lib.python"), [], "medium"
    return _system(row, facts)


def answer(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    name = library_name(seen)
    if name is None:
        mod = seen.groups.get("mod")
        if not mod or not _SAFE.fullmatch(mod):
            return None
        summary = t("structural.lib.dll_module", mod=mod)
        commands = ["winget install Microsoft.VCRedist.2015+.x64"]
        return Answer("shared-library", mod, "medium", t("structural.title.dll_module", mod=mod),
                      t("structural.cause.dll_module"), Fix(summary, tuple(commands)), seen.line, seen.text,
                      rank=21, package=facts.package)
    stem, _number = split_name(name)
    row = tables.library_row(stem)
    if re.search(r"[\\/]torch[\\/]lib[\\/]", seen.groups.get("path", "")):
        row = {"provider": "torch", "what": t("structural.lib.torch_lib")}  # torch's wheel bundles it
    summary, commands, confidence = _provider_fix(row, name, seen, facts)
    what = row["what"] if row else name
    return Answer("shared-library", name, confidence, t("structural.title.lib", lib=name, what=what),
                  t("structural.cause.lib", lib=name, what=what), Fix(summary, tuple(commands)), seen.line,
                  seen.text, rank=21, package=package_of(seen.text) or facts.package)


_CUDA_SYMBOL = re.compile(r"(?:__)?(nccl|cublasLt|cublas|cudnn|cusparseLt|cusparse|cufft|curand|cusolver|nvJitLink)")


def mismatch(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """Two copies of a CUDA library: the loaded one lacks a symbol (or a symbol version) the caller
    was built against. The fix is to keep one copy, the one that matches torch."""
    g = seen.groups
    lib = g.get("lib") or ""
    m = _CUDA_SYMBOL.match(g.get("sym") or "")
    stem = split_name(lib)[0] if lib else (m.group(1).lower() if m else "")
    row = tables.library_row(stem) if stem else None
    if row is None and lib and m:  # a cut line ("version libnvJitL"): the symbol names the library
        lib, stem = "", m.group(1).lower()
        row = tables.library_row(stem)
    if row is None or row["provider"] != "cuda-pip" or (lib and not _SAFE.fullmatch(lib)):
        return None
    major = cuda_major(row, split_name(lib)[1] if lib else None, facts)
    pip = row["pip"].get(str(major)) if major is not None else None
    pkgs = pip or ", ".join(f"{v} (CUDA {k})" for k, v in sorted(row["pip"].items()))
    name = lib or f"lib{stem}"
    commands = ["python -m pip list 2>/dev/null | grep -i -E '^(torch|nvidia-)'"]
    if facts.platform != "windows":
        commands += ['echo "$LD_LIBRARY_PATH"', f"ldconfig -p | grep -i {stem}"]
    return Answer("shared-library", name, "high", t("structural.lib_a2.mismatch_title", lib=name, what=row["what"]),
                  t("structural.lib_a2.mismatch_cause", lib=name, what=row["what"], sym=(g.get("sym") or "")[:120]),
                  Fix(t("structural.lib_a2.mismatch_fix", lib=name, what=row["what"], pkgs=pkgs), tuple(commands)),
                  seen.line, seen.text, rank=20, package=package_of(seen.text) or facts.package)


def compiled_missing(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """``No module named 'torch._C'``: the package's compiled core is not next to its ``__init__.py``.
    Imported from a folder outside site-packages, a source checkout or an unzipped wheel shadows the
    installed package (run from another directory, or build it); from site-packages, the install is broken."""
    mod = seen.groups.get("mod") or ""
    top = mod.split(".")[0]
    if not _SAFE.fullmatch(mod):
        return None
    inits = [p for p in facts.paths if re.search(r"[\\/]" + re.escape(top) + r"[\\/]", p)]
    where = ("broken" if re.search(r"(?:site|dist)-packages", inits[-1]) else "shadow") if inits else "either"
    commands = [f"python -c \"import {top}; print({top}.__file__)\""]
    if where != "shadow":  # the reinstall command depends on the platform and CUDA: pytorch.org's, not a guess
        commands.append(f"python -m pip show {top}")
    return Answer("missing-module", mod, "high" if inits else "medium",
                  t("structural.lib_a2.compiled_title", mod=mod, pkg=top),
                  t(f"structural.lib_a2.compiled_{where}_cause", mod=mod, pkg=top),
                  Fix(t(f"structural.lib_a2.compiled_{where}_fix", mod=mod, pkg=top), tuple(commands)),
                  seen.line, seen.text, rank=19, package=top)
