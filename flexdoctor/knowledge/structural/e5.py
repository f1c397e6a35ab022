"""The structural layer's round-5 readers of tune-e5 (issue 22): platform and installer failures read by their shape,
with the remedy the threads establish.

- ``jetson``: a Jetson (L4T) whose torch has no CUDA ("Torch not compiled with CUDA enabled": a PyPI wheel) or cannot
  load a JetPack library (libcudnn/libcublas/...): NVIDIA's wheels for the L4T release the log shows (e5_jetson.toml).
- ``sigill``: "Illegal instruction" on a Jetson: numpy's OpenBLAS core detection (OPENBLAS_CORETYPE=ARMV8).
- ``uv``: uv's resolver without the PyTorch index (a ``+cuXYZ`` local version PyPI does not have) or stopped by its
  first-index strategy: the index, ``--torch-backend``, ``--index-strategy unsafe-best-match``, ``[tool.uv.sources]``.
- ``build``: the cause a pip build printed above pip's summary (a Python-version guard; Rust: e2.rust), and the
  summary alone for a package no rule knows (name it, read the first error above, check for a wheel).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from ...wheels import table as wheel_table
from .b3 import _CUDA_EXTENSION_RULES
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import SAFE, _answer
from .tables import _load, module_row

# --- Jetson ----------------------------------------------------------------------------------------------

_JETPACK_L4T = (("4", 32, None), ("5.0.2", 35, 1), ("5.0", 34, None), ("5", 35, None), ("6.0", 36, 3),
                ("6.1", 36, 4), ("6.2", 36, 4), ("6", 36, None), ("7", 38, None))  # [forum] in e5_jetson.toml
_BOARD_L4T = {"Nano": 32, "TX1": 32, "TX2": 32, "AGX Thor": 38}  # boards that run one JetPack major only
_JETPACK_LIB = re.compile(r"lib(?:cudnn|cublas|cublasLt|cudart|cufft|curand|cusolver|cusparse|cusparseLt|nvinfer"
                          r"|nvToolsExt|cupti|nvrtc|cufile|nvJitLink)[\w.]{0,40}\.so")


def _l4t(jetson: tuple) -> tuple[Optional[int], Optional[int]]:
    """(L4T major, revision) from the e5-jetson shapes: the release file first, then JetPack, then the board."""
    for g in jetson:
        if g.get("l4t"):
            return int(g["l4t"]), int(g["rev"]) if g.get("rev") else None
    for g in jetson:
        jp = g.get("jp")
        for prefix, major, rev in (_JETPACK_L4T if jp else ()):
            if jp == prefix or jp.startswith(prefix + "."):
                return major, rev
    for g in jetson:
        if g.get("board") in _BOARD_L4T:
            return _BOARD_L4T[g["board"]], None
    return None, None


def _row(jetson: tuple) -> Optional[dict]:
    major, rev = _l4t(jetson)
    rows = [r for r in _load("e5_jetson.toml")["release"] if r["l4t"] == major]
    if len(rows) > 1:  # L4T R36: JetPack 6.0 (R36.2/36.3, CUDA 12.2) or 6.1/6.2 (R36.4, CUDA 12.6)
        rows = [r for r in rows if rev is not None and r["min_rev"] <= rev][-1:]
    return rows[0] if rows else None


def _jetson_torch(row: Optional[dict]) -> tuple[str, list]:
    """The words and commands that install the torch built for this JetPack."""
    if row is None:
        return t("structural.e5.jetson.where_unknown"), ["cat /etc/nv_tegra_release"]
    words = dict(jetpack=row["jetpack"], l4t=row["l4t"], cuda=row["cuda"], python=row["python"])
    if row["index"]:
        return (t("structural.e5.jetson.where_index", index=row["index"], **words),
                ["python3 -m pip uninstall -y torch torchvision",
                 f"python3 -m pip install torch torchvision --index-url {row['index']}"])
    if row["wheel"]:
        return (t("structural.e5.jetson.where_wheel", folder=row["folder"], **words),
                ["sudo apt-get install -y libopenblas-dev", "python3 -m pip uninstall -y torch",
                 f"python3 -m pip install --no-cache {row['wheel']}"])
    return t("structural.e5.jetson.where_folder", folder=row["folder"], **words), ["cat /etc/nv_tegra_release"]


def jetson(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A Jetson marker: answers for the root error a Jetson explains, on the root error's line."""
    if facts.root is None:
        return None
    line, _exc, msg, text = facts.root
    if "Torch not compiled with CUDA enabled" in msg:
        case = "wheel"
    elif _JETPACK_LIB.search(text) and ("cannot open shared object" in text or "not found" in text):
        case = "lib"
    else:
        return None
    row = _row(facts.jetson)
    where, commands = _jetson_torch(row)
    if case == "lib":
        commands = ["sudo apt-get install -y nvidia-jetpack"] + [c for c in commands if "nv_tegra" not in c]
    a = _answer("unsupported-op", "jetson", "high" if row else "medium", t(f"structural.e5.jetson.title_{case}"),
                t(f"structural.e5.jetson.cause_{case}"), t(f"structural.e5.jetson.fix_{case}", where=where),
                commands + ["cat /etc/nv_tegra_release"] * ("cat /etc/nv_tegra_release" not in commands), seen, facts, 15)
    return Answer(a.kind, a.subject, a.confidence, a.title, a.cause, a.fix, line, text[:300], rank=a.rank,
                  package="torch")


def sigill(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """SIGILL on a Jetson: numpy's OpenBLAS (0.3.13+) picks a core type the Jetson's CPU lacks (numpy issue 18131)."""
    if not facts.jetson:
        return None
    return _answer("unsupported-op", "cpu-instructions", "high", t("structural.e5.sigill.title"),
                   t("structural.e5.sigill.cause"), t("structural.e5.sigill.fix"),
                   ["export OPENBLAS_CORETYPE=ARMV8", "python3 -c \"import numpy; print(numpy.__version__)\""],
                   seen, facts, 20)


# --- uv and the PyTorch index ----------------------------------------------------------------------------

_PYTORCH_INDEX = "https://download.pytorch.org/whl/"
_TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
_LOCAL = re.compile(r"(?P<name>[A-Za-z][\w.-]{0,80})==(?P<release>[0-9]{1,4}(?:\.[0-9]{1,6}){0,3}"
                    r"(?:(?:a|b|rc|\.post|\.dev)[0-9]{1,8})?)\+(?P<tag>cu\d{2,3}|cpu|xpu|rocm\d(?:\.\d){1,2})")


def _tag_missing(name: str, release: str, tag: str) -> Optional[str]:
    """The +tags torch ``release`` has (flexdoctor/wheels/torch_wheels.toml), when ``tag`` is not one of them."""
    rel = wheel_table().release(release) if name == "torch" else None
    if rel is None:
        return None
    tags = sorted({tg for variants in rel.variants.values() for tg in variants})
    return None if tag in tags else ", ".join(tags)


def uv(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    env = "set" if facts.platform == "windows" else "export"
    if g.get("hpkg"):
        pkg = g["hpkg"]
        return _answer("pip-no-distribution", pkg.lower(), "high", t("structural.e5.uv.title_first", pkg=pkg),
                       t("structural.e5.uv.cause_first", pkg=pkg, index=g["index"]),
                       t("structural.e5.uv.fix_first", pkg=pkg), [f"{env} UV_INDEX_STRATEGY=unsafe-best-match",
                                                                   "uv --version"], seen, facts, 22)
    m = _LOCAL.fullmatch(g.get("req", ""))
    if m is None or m["name"].lower() not in _TORCH_FAMILY:
        return None
    name, release, tag = m["name"].lower(), m["release"], m["tag"]
    missing = _tag_missing(name, release, tag)
    if missing is not None:
        return _answer("pip-no-distribution", name, "high", t("structural.e5.uv.title_local", req=g["req"]),
                       t("structural.e5.uv.cause_notag", req=g["req"], release=release, tags=missing),
                       t("structural.e5.uv.fix_notag", release=release), ["uv --version"], seen, facts, 24)
    index = _PYTORCH_INDEX + tag
    return _answer("pip-no-distribution", name, "high", t("structural.e5.uv.title_local", req=g["req"]),
                   t("structural.e5.uv.cause_local", req=g["req"], index=index),
                   t("structural.e5.uv.fix_local", name=name, release=release, tag=tag, index=index) + " "
                   + t("structural.i4.uv.find_links", name=name, release=release, tag=tag),  # tune-i4
                   [f"uv pip install {name}=={release} --index-url {index}", "uv --version"], seen, facts, 24)


# --- pip builds: the cause above the summary -------------------------------------------------------------

def build(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("dist"):
        return _summary(seen, facts, g["dist"].rstrip("."))
    if g.get("pyver"):
        case = {None: "unsupported"}.get(g.get("dir"), "older" if g.get("dir") in ("older", "earlier", "lower")
                                         else "newer")
        return _answer("version-constraint", "python", "high", t(f"structural.e5.build.title_py_{case}", py=g["pyver"]),
                       t("structural.e5.build.cause_py", py=g["pyver"], have=facts.python or "?"),
                       t(f"structural.e5.build.fix_py_{case}", py=g["pyver"]), ["python --version"], seen, facts, 20,
                       facts.package)
    return None  # no Rust toolchain: tune-e2's reading (e2.rust) answers it


def _summary(seen: Seen, facts: LogFacts, dist: str) -> Optional[Answer]:
    """pip's "Failed building wheel for X" where no reading of the build output above says more: the package, where
    its cause is printed, and whether a wheel exists (CUDA extensions: b3.build_failed and readers.pip answer)."""
    row = module_row(dist.replace("-", "_")) or module_row(dist)
    if (row is not None and row["rule"] in _CUDA_EXTENSION_RULES) or not SAFE.fullmatch(dist):
        return None
    subject = re.sub(r"[-_.]+", "-", dist).lower()
    return _answer("pip-no-distribution", subject, "medium", t("structural.e5.build.title_summary", dist=dist),
                   t("structural.e5.build.cause_summary", dist=dist, python=facts.python or "?"),
                   t("structural.e5.build.fix_summary", dist=dist),
                   [f"python -m pip install --only-binary=:all: {dist}", "python -m pip install --upgrade pip setuptools wheel"],
                   seen, facts, 27)
