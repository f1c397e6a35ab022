"""Answers for each shape but shared libraries (libs.py): undefined symbols, missing modules, version
constraints, pip, CUDA/NCCL/Windows error tables, Triton's resources, out of memory, unsupported ops.
Every value put in a command is checked to be a plain token first (text from a log is data)."""

from __future__ import annotations

import re
from typing import Optional

from ...model import Fix
from ...text import t
from ... import wheels
from . import abi, pipdist, tables
from .collect import Seen, package_of
from .context import LogFacts
from .demangle import demangle
from .libs import name_before
from .model import Answer

def catalogue(area: str):
    """``t`` for one reader module's own keys: ``catalogue("h3")("oom.fix_vllm")`` is
    ``t("structural.h3.oom.fix_vllm")``."""
    def say(key: str, **kw) -> str:
        return t(f"structural.{area}.{key}", **kw)
    return say


def frame_package(path: str) -> Optional[str]:
    """The installed distribution a traceback frame's file belongs to, when its name is a plain one."""
    pkg = package_of(path.replace("\\", "/"))
    return pkg if pkg and DIST.fullmatch(pkg) else None


SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,119}")
DIST = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,80}")  # a distribution name as it may go into a pip command
HUB_REPO = re.compile(r"(?:[A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}")  # a Hugging Face Hub id: [owner/]name
SPEC = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,80}(?:[<>=!~]=?[A-Za-z0-9_.*+-]{1,40},?){0,4}")


def _safe(value: Optional[str]) -> Optional[str]:
    return value if value and SAFE.fullmatch(value) else None


def _answer(kind: str, subject: str, confidence: str, title: str, cause: str, summary: str, commands, seen: Seen,
            facts: LogFacts, rank: int, package: Optional[str] = None) -> Answer:
    return Answer(kind, subject, confidence, title, cause, Fix(summary, tuple(commands)), seen.line, seen.text,
                  rank=rank, package=package or package_of(seen.text) or facts.package)


# --- undefined symbols ------------------------------------------------------------------------------

def symbol_class(sym: str, ver: Optional[str] = None) -> str:
    if ver:
        return "glibc" if ver.startswith("GLIBC_") else "libstdc++"
    name = demangle(sym) or sym
    if re.match(r"(?:c10|at|torch|caffe2)::", name):
        return "torch"
    if re.match(r"_{0,2}(?:cuda|cu[A-Z]|cublas|cudnn|cufft|curand|cusolver|cusparse|nccl|nvrtc|__nvJitLink|nvJitLink)",
                sym):
        return "cuda"
    if sym.startswith("iJIT_") or sym.startswith("mkl_"):
        return "mkl"
    if re.match(r"_?Py|_Py", sym):
        return "python"
    if name.startswith("std::") or sym.startswith(("__cxa_", "_ZNSt", "_ZSt", "_ZTVN10__cxxabiv")):
        return "libstdc++"
    return "other"


_CUDA_SYMBOL_LIB = (("nccl", "nccl"), ("cublasLt", "cublaslt"), ("cublas", "cublas"), ("cudnn", "cudnn"),
                    ("cusparseLt", "cusparselt"), ("cusparse", "cusparse"), ("__nvJitLink", "nvjitlink"),
                    ("nvJitLink", "nvjitlink"), ("cufft", "cufft"), ("curand", "curand"), ("cusolver", "cusolver"),
                    ("nvrtc", "nvrtc"), ("cupti", "cupti"), ("cuda", "cudart"))


def _torch_cuda_lib(sym: str, facts: LogFacts) -> Optional[tuple[str, list]]:
    """torch itself misses a symbol of a CUDA library: the nvidia-* package it loads is older
    than the one torch was built with (a partial upgrade, --no-deps, another copy on the path)."""
    name = next((lib for prefix, lib in _CUDA_SYMBOL_LIB if sym.startswith(prefix)), None)
    row = tables.library_row(name) if name else None
    if row is None or row.get("provider") != "cuda-pip":
        return None
    pip = row["pip"].get(str(facts.cuda_major)) if facts.cuda_major else None
    commands = ["python -m pip check"] + ([f"python -m pip install --upgrade {pip}"] if pip else [])
    return t("structural.sym.torch_cuda_lib", what=row["what"], pip=pip or row["what"]), commands


def _symbol_fix(cls: str, pkg: Optional[str], facts: LogFacts, ver: Optional[str], sym: str = "") -> tuple[str, list]:
    dist = _dist_of(pkg)
    if cls == "cuda" and pkg == "torch":
        found = _torch_cuda_lib(sym, facts)
        if found:
            return found
    if cls == "torch" and pkg:
        row = tables.module_row(pkg)
        fixed = abi.rebuild_fix(row, facts) if row else None
        if fixed:
            return fixed
    if cls == "torch" and dist:
        cmd = f"python -m pip install --force-reinstall --no-deps --no-build-isolation --no-cache-dir {dist}"
        return t("structural.sym.torch", pkg=dist, torch=facts.torch or t("structural.word.installed")), [
            "python -c \"import torch; print(torch.__version__, torch.version.cuda)\"", cmd]
    if cls == "libstdc++":
        commands = ["/sbin/ldconfig -p | grep libstdc++"]
        if facts.conda:
            commands.append("conda install -c conda-forge libstdcxx-ng")
        return t("structural.sym.libstdcxx", ver=ver or "GLIBCXX"), commands
    if cls == "glibc":
        return t("structural.sym.glibc", ver=ver or "GLIBC"), ["ldd --version"]
    if cls == "mkl":
        return t("structural.sym.mkl"), ['conda install -c conda-forge "mkl<2024.1"'] if facts.conda else []
    if cls in ("python", "cuda") and dist:
        return t(f"structural.sym.{cls}", pkg=dist), [f"python -m pip install --force-reinstall --no-cache-dir {dist}"]
    return t("structural.sym.other", pkg=dist or t("structural.word.the_package")), []


def _package_of_relative(text: str) -> Optional[str]:
    """``xformers/_C.so: undefined symbol`` (a path relative to site-packages): its first folder,
    when it is a known module."""
    m = re.search(r"(?:^|[\s'\"])([A-Za-z_]\w{0,60})[\\/][\w./\\-]{0,200}\.(?:so|pyd)\b", text)
    if m and tables.module_row(m.group(1)):
        return m.group(1)
    return None


def symbol(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    sym = g.get("sym") or g.get("sym2") or ""
    ver = g.get("ver")
    cls = symbol_class(sym, ver)
    before = seen.text[: seen.start]
    pkg = abi.owner(before) or package_of(before) or _package_of_relative(before) or facts.package
    summary, commands = _symbol_fix(cls, pkg, facts, ver, sym)
    shown = (demangle(sym) or sym or ver or "?")[:200]
    confidence = "high" if cls in ("torch", "libstdc++", "glibc", "mkl") and (pkg or cls != "torch") else "medium"
    return _answer("undefined-symbol", cls, confidence, t("structural.title.symbol", symbol=shown),
                   t(f"structural.cause.symbol.{cls.replace('+', 'x')}", pkg=_shown(pkg) or t("structural.word.the_package")),
                   summary, commands, seen, facts, 21, pkg)


# --- modules --------------------------------------------------------------------------------------

def _dist_of(pkg: Optional[str]) -> Optional[str]:
    if not pkg:
        return None
    row = tables.module_row(pkg)
    if row and " " not in row["dist"]:
        return row["dist"]
    return _safe(pkg.replace("_", "-")) if not row else None


def _shown(pkg: Optional[str]) -> Optional[str]:
    """The package's name as users know it (apex for NVIDIA apex's fused_layer_norm_cuda)."""
    row = tables.module_row(pkg) if pkg else None
    return row["name"] if row and row.get("name") else _dist_of(pkg)


def _torch_pair(row: dict, facts: LogFacts) -> tuple[str, list]:
    return abi.pair_fix(row["dist"], facts)


def torch_pair_fix(dist: str, facts: LogFacts) -> tuple[str, list]:
    row = tables.module_row(dist) or {"dist": dist, "rule": "torch-pair"}
    return _torch_pair(row, facts)


def _module_fix(mod: str, row: Optional[dict], facts: LogFacts) -> tuple[str, list, str]:
    if row is None:
        top = mod.split(".")[0]
        return t("structural.mod.unknown", mod=top), [f"python -m pip show {top}"], "low"
    rule, dist = row["rule"], row["dist"]
    if rule == "windows" and facts.platform == "windows":
        req = wheels.triton_requirement(facts.torch_release, "windows-x86_64") if facts.torch_release else None
        return t("structural.mod.windows", dist=row["windows_dist"]), [
            f'python -m pip install "{req or row["windows_dist"]}"'], "high"
    if rule == "windows":
        req = wheels.triton_requirement(facts.torch_release) if facts.torch_release else None
        return t("structural.mod.plain", dist=dist), [f'python -m pip install "{req or dist}"'], "high"
    if rule in ("linux-cuda",) and facts.platform in ("windows", "macos"):
        return t("structural.mod.linux_only", dist=dist), [], "high"
    if rule == "source":
        return t("structural.mod.source", dist=dist, repo=row["repo"]), [
            f"git clone {row['repo']}"] + ([row["build"]] if row.get("build") else []), "high"
    if rule == "needs-torch":
        return t("structural.mod.needs_torch", dist=dist), [
            "python -c \"import torch; print(torch.__version__, torch.version.cuda)\"",
            f"python -m pip install {dist} --no-build-isolation"], "high"
    if rule == "torch-pair":
        summary, commands = abi.pair_fix(row["dist"], facts, installed=False)
        return summary, commands, "high"
    if rule == "stdlib":
        return t("structural.mod.stdlib", mod=mod, dist=dist), [], "high"
    if rule == "torch":
        return t("structural.mod.torch", mod=mod), ["python -c \"import torch; print(torch.__version__)\""], "medium"
    return t("structural.mod.plain", dist=dist), [f"python -m pip install {dist}"], "high"


def module(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    mod = g.get("mod") or ("ninja" if g.get("tool") else name_before(seen.text, seen.start).replace("-", "_"))
    if not re.fullmatch(r"[A-Za-z_][\w.]{0,199}", mod or ""):
        return None
    if g.get("name"):
        return _import_name(seen, facts, mod, g["name"])
    row = tables.module_row(mod)
    summary, commands, confidence = _module_fix(mod, row, facts)
    importer = _importer(seen, facts, mod)
    sub = _submodule_fix(mod, row, importer, seen)
    if sub is not None:
        summary, commands = sub
    elif importer:
        summary += " " + t("structural.b.mod.importer", pkg=importer, mod=mod.split(".")[0])
    from . import m1  # tune-m1 (m1 imports this module): text-generation-webui run outside its installer's env
    env = m1.textgen_env(facts)
    if env is not None:
        summary, commands = env[0] + " " + summary, env[1] + commands
    return _answer("missing-module", mod, confidence, t("structural.title.module", mod=mod),
                   t("structural.cause.module", mod=mod), summary, commands, seen, facts, 30)


def _submodule_fix(mod: str, row: Optional[dict], importer: Optional[str], seen: Seen) -> Optional[tuple[str, list]]:
    """``No module named 'triton.common'``: Python names the dotted path only once its parent imported,
    so the parent is installed and lacks the submodule: the code importing it was written for another
    release of it. Not for torch (a missing torch._C is a broken install) or the standard library, nor
    where a row names the dotted module itself (flash_attn.cute is another distribution)."""
    parts = mod.split(".")
    top = parts[0]
    if len(parts) < 2 or not all(parts) or row is None or row["module"] != top or row["rule"] in ("torch", "stdlib"):
        return None
    if not SAFE.fullmatch(row["dist"]):
        return None
    dist = _dist_of(importer) if importer else None
    shown = importer if dist else t("structural.b3.word.importing_package")
    commands = ([f"python -m pip install --upgrade {dist}"] if dist else []) + [
        f"python -m pip show {row['dist']}", "python -m pip check"]
    return t("structural.b3.mod.submodule", pkg=shown, mod=mod, top=top, dist=row["dist"]), commands


def _importer(seen: Seen, facts: LogFacts, mod: str) -> Optional[str]:
    """The installed package whose code imported ``mod`` (the root error's last frame), when it is
    another known package: a release of it may import ``mod`` only where it is needed."""
    pkg = facts.package
    if not pkg or facts.root is None or facts.root[0] != seen.line or pkg == "torch":
        return None
    row, own = tables.module_row(pkg), tables.module_row(mod)
    if row is None or (own is not None and own["dist"] == row["dist"]) or pkg == mod.split(".")[0]:
        return None
    return _shown(pkg)


def _import_name(seen: Seen, facts: LogFacts, mod: str, name: str) -> Answer:
    from .m2 import example_import  # tune-m2: an examples/ script newer than the installed library
    ex = example_import(seen, facts, mod, name)
    if ex is not None:
        return ex
    dist = _dist_of(mod.split(".")[0])
    commands = [f"python -m pip show {dist}"] if dist else []
    return _answer("import-name", f"{mod}.{name}", "medium", t("structural.title.import_name", name=name, mod=mod),
                   t("structural.cause.import_name", name=name, mod=mod, dist=dist or mod),
                   t("structural.fix.import_name", dist=dist or mod), commands, seen, facts, 32)


# --- versions and pip -------------------------------------------------------------------------------

def version(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("pkg") and g.get("spec"):
        req = g["pkg"] + g["spec"].rstrip(",")
        if not SPEC.fullmatch(req):
            return None
        return _answer("version-constraint", g["pkg"].lower(), "high", t("structural.title.version", pkg=g["pkg"]),
                       t("structural.cause.version_pip", req=req, have=f"{g.get('have_pkg')} {g.get('have')}"),
                       t("structural.fix.version_pip", req=req), [f'python -m pip install "{req}"', "python -m pip check"],
                       seen, facts, 28)
    if g.get("built") and g.get("have"):
        what = g.get("what", "")
        return _answer("version-constraint", what.lower(), "medium", t("structural.title.version", pkg=what),
                       t("structural.cause.version_built", what=what, built=g["built"], have=g["have"]),
                       t("structural.fix.version_built", what=what, have=g["have"]), [], seen, facts, 28)
    pkg, op, ver = g.get("pkg2"), g.get("op"), g.get("ver")
    if not (pkg and op and ver):
        return None
    req = f"{pkg.lower().replace('pytorch', 'torch')}{op}{ver}"
    commands = [] if pkg.lower() == "python" else [f'python -m pip install "{req}"']
    return _answer("version-constraint", pkg.lower().replace("pytorch", "torch"), "medium",
                   t("structural.title.version", pkg=pkg), t("structural.cause.version_req", req=req),
                   t("structural.fix.version_req", req=req), commands, seen, facts, 29)


def _pip_build(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    name = g.get("build") or ""
    subject = re.sub(r"[-_.]+", "-", name.rstrip(".")).lower() if name else "msvc"
    key = "windows" if (facts.platform == "windows" or not name) else "other"
    commands = ["python -c \"import torch; print(torch.__version__, torch.version.cuda)\""] if name else []
    return _answer("pip-no-distribution", subject, "medium", t("structural.title.pip_build", req=name or "C++"),
                   t("structural.cause.pip_build", req=name or "C++"), t(f"structural.fix.pip_build_{key}"), commands,
                   seen, facts, 28)  # after a cause read in the build output (27); tune-e5's e5.build names the rest


def pip(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("build") or "Visual C++" in seen.text[seen.start:seen.end]:
        return _pip_build(seen, facts)
    if g.get("py"):
        subject = "python"
        cause = t("structural.cause.pip_python", py=g["py"], spec=g.get("spec", "?"))
    else:
        wheel = not g.get("req")
        raw = name_before(seen.text, seen.start) if wheel else g["req"]
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9_.-]*", raw)
        if not name:
            return None
        subject = re.sub(r"[-_.]+", "-", re.sub(r"-\d.*$", "", name.group(0)) if wheel else name.group(0))
        cause = t("structural.cause.pip", req=subject, python=facts.python or "?", platform=facts.platform or "?")
    read = pipdist.analyse(seen.text, g["req"], facts) if g.get("req") else None
    if read is not None:
        return _answer("pip-no-distribution", read[0], "high", t("structural.title.pip", req=read[0]), cause,
                       read[1], read[2], seen, facts, 27)
    commands = ["python -m pip debug --verbose"] + ([f"python -m pip index versions {subject}"] if _safe(subject) else [])
    return _answer("pip-no-distribution", subject.lower(), "medium", t("structural.title.pip", req=subject), cause,
                   t("structural.fix.pip"), commands, seen, facts, 27)


NVCC_REQUESTED = " was requested, but nvcc was not found"  # flash-attn's setup.py (units: cuda-build, nvcc)
_WORD_END = re.compile(r"[A-Za-z][\w-]{0,60}$")


def word_before(text: str, literal: str) -> str:
    """The name that ends right before ``literal`` in ``text`` ("flash_attn" in "flash_attn was requested,
    but nvcc was not found"): read here, from at most 61 characters, so that the unit's pattern starts
    with its literal and costs one scan of the line instead of an attempt at every position."""
    at = text.find(literal)
    m = _WORD_END.search(text[max(0, at - 61):at]) if at > 0 else None
    return m.group() if m else ""


_DRIVE = re.compile(r"[A-Za-z]:\\")


def on_windows(seen, facts, paths: bool = False) -> bool:
    """Whether the log is from Windows: the platform read from it, a drive letter on the matched line,
    or (``paths``) on the path of a traceback frame."""
    return facts.platform == "windows" or bool(_DRIVE.search(seen.text)) or \
        (paths and any(_DRIVE.match(p) for p in facts.paths))
