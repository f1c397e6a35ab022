"""Compiled extensions that do not match the installed torch: which package owns the failing binary
(from its path: the site-packages folder, the folder holding the ``.so``/``.pyd``, the module file's own
name, e.g. apex's ``fused_layer_norm_cuda``), and how that package is made to match torch again,
by its install rule in ``modules.toml``: a torch companion pinned from torch's release history, a
source build (apex), the OpenMMLab or PyG wheel indexes that publish one build per torch and CUDA.
Also operators a companion package failed to register (``operator torchvision::nms does not exist``)."""

from __future__ import annotations

import re
from typing import Optional

from ...model import Fix
from ...text import t
from . import history, tables
from .collect import Seen, package_of
from .context import LogFacts
from .model import Answer

_PARENT = re.compile(r"[\\/]([A-Za-z_][\w.-]{0,60})[\\/][\w.-]{1,200}\.(?:so|pyd|dylib)\b")
_STEM = re.compile(r"(?:^|[\\/\s'\"`])([A-Za-z_]\w{0,80})(?:\.cpython-[\w-]{1,60}|\.abi3|\.cp\d{2,3}-[\w-]{1,40})?"
                   r"\.(?:so|pyd|dylib)\b")
TORCH_OWN = {"aten", "prim", "prims", "c10d", "_c10d_functional", "profiler", "quantized", "_quantized", "mkldnn",
             "_caffe2", "cuda", "inductor", "higher_order", "torch"}


def owner(text: str) -> Optional[str]:
    """The module (a key of modules.toml) owning the binary named in ``text``, or None."""
    candidates = [package_of(text)]
    candidates += [m.group(1) for m in _PARENT.finditer(text)][-1:]
    candidates += [m.group(1) for m in _STEM.finditer(text)][-1:]
    return next((c for c in candidates if c and tables.module_row(c)), None)


def _installed(facts: LogFacts) -> str:
    return facts.torch or t("structural.word.installed")


def pair_fix(dist: str, facts: LogFacts, installed: bool = True) -> tuple[str, list]:
    """torchvision / torchaudio: the release made for the installed torch, from torch's index.
    ``installed``: the package is there but does not match (reinstalled in place, without touching
    torch, when its exact release is known; else only the versions are shown)."""
    vision, audio = history.companions(facts.torch_release) if facts.torch_release else (None, None)
    pin = {"torchvision": vision, "torchaudio": audio}.get(dist)
    index = f" --index-url https://download.pytorch.org/whl/{facts.cuda_tag}" if facts.cuda_tag else ""
    spec = f"{dist}=={pin}" if pin else dist
    if not installed:
        return t("structural.mod.torch_pair", dist=dist, torch=_installed(facts)), [f"python -m pip install {spec}{index}"]
    commands = [f"python -m pip install --force-reinstall --no-deps {spec}{index}"] if pin else [
        f"python -m pip show torch {dist}"]
    return t("structural.b.abi.pair", dist=dist, torch=_installed(facts)), commands


def _pyg_fix(dist: str, facts: LogFacts) -> tuple[str, list]:
    rel = history.vkey(facts.torch_release or "")
    tag = facts.cuda_tag or ("cpu" if facts.torch and "+cpu" in facts.torch else None)
    if len(rel) >= 2 and tag:
        url = f"https://data.pyg.org/whl/torch-{rel[0]}.{rel[1]}.0+{tag}.html"
        return t("structural.b.abi.pyg", dist=dist, torch=_installed(facts)), [
            f"python -m pip uninstall -y {dist}", f"python -m pip install {dist} -f {url}"]
    return t("structural.b.abi.pyg", dist=dist, torch=_installed(facts)), [
        "python -c \"import torch; print(torch.__version__, torch.version.cuda)\""]


def pinned_fix(dist: str, facts: LogFacts) -> tuple[str, list]:
    """A package whose release is built against one exact torch (vllm, sglang/sgl-kernel, torchao):
    the torch its release requires, read from its own metadata, or its release made for this torch."""
    probe = ("python -c \"import importlib.metadata as m; "
             f"print(m.version('{dist}'), [r for r in m.requires('{dist}') or [] if r.startswith('torch')])\"")
    return t("structural.b3.fix.pinned", dist=dist, torch=_installed(facts)), [
        probe, "python -c \"import torch; print(torch.__version__, torch.version.cuda)\""]


def rebuild_fix(row: dict, facts: LogFacts) -> Optional[tuple[str, list]]:
    """How a package built for another torch is made to match the installed one, by its install rule;
    None where the generic reinstall stands."""
    rule, dist = row["rule"], row["dist"]
    name = row.get("name", dist)
    if row.get("pins_torch"):
        return pinned_fix(dist, facts)
    if rule == "torch-pair":
        return pair_fix(dist, facts)
    if rule == "source":
        return t("structural.b.abi.source", name=name, repo=row["repo"], torch=_installed(facts)), [
            f"python -m pip uninstall -y {name}", f"git clone {row['repo']}"] + ([row["build"]] if row.get("build") else [])
    if rule == "openmmlab":
        return t("structural.b.abi.openmmlab", dist=dist, torch=_installed(facts)), [
            f"python -m pip uninstall -y {dist}", "python -m pip install -U openmim", f"mim install {dist}"]
    if rule == "pyg":
        return _pyg_fix(dist, facts)
    return None


def operator(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """``operator torchvision::nms does not exist`` / ``No such operator torchvision::nms``: the package
    that should register the operator has compiled code that did not load for this torch."""
    ns, op = seen.groups.get("ns", ""), seen.groups.get("op", "")
    row = tables.module_row(ns) if ns not in TORCH_OWN else None
    if row is None:
        return None
    fixed = rebuild_fix(row, facts) or (t("structural.b.abi.generic", dist=row["dist"], torch=_installed(facts)), [])
    return Answer("undefined-symbol", "torch", "high", t("structural.b.title.operator", ns=ns, op=op[:80]),
                  t("structural.b.cause.operator", dist=row.get("name", row["dist"]), ns=ns),
                  Fix(fixed[0], tuple(fixed[1])), seen.line, seen.text, rank=20, package=ns)
