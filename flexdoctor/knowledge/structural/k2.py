"""The structural readers of tuner k2 (issue 22, round 13 train).

- ``vsint``: CMake's Visual Studio generator finds nvcc but not CUDA's MSBuild integration ("No CUDA toolset found.",
  "cannot detect Visual Studio integration files in path", MSBuild's "The imported project ...\\BuildCustomizations\\CUDA
  12.4.props was not found"): the remedy the threads apply is copying CUDA\\vX.Y\\extras\\visual_studio_integration\\
  MSBuildExtensions into Visual Studio's BuildCustomizations folder, or (re)installing CUDA with its Visual Studio
  Integration component after Visual Studio (a CI network installer: the visual_studio_integration_X.Y component).
- ``virtual``: conda/mamba cannot solve because of a virtual package (__cuda from the NVIDIA driver, __glibc, __osx):
  absent (no driver visible at solve time: docker build, CI, CPU node) -> CONDA_OVERRIDE_CUDA for the solve; lower than
  the package needs (__cuda-10.2 vs cudatoolkit's __cuda >=11.6) -> update the driver (the one CUDA X.Y needs, h4's
  table) or take the build for the driver's CUDA.
- ``chat``: transformers' apply_chat_template on a tokenizer/processor without a chat_template (a base checkpoint):
  the -Instruct variant, or an explicit template (the serving tool's --chat-template, tokenizer.chat_template, the
  eval harness's base-model class).
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue
from .tables import _load

_say = catalogue("k2")
_VER = re.compile(r"\d{1,2}\.\d{1,2}")


def _table() -> dict:
    return _load("k2_tables.toml")  # _load caches each file


# --- CUDA's Visual Studio (MSBuild) integration ----------------------------------------------------------------------

def vsint(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    ver = g.get("ver") or facts.cuda or ""
    ver = ver if _VER.fullmatch(ver) else "X.Y"
    vs = ", ".join(f"{r['vcdir']} ({r['generator']})" for r in _table()["vs"])
    kw = dict(ver=ver, vs=vs)
    fix = _say("vsint.fix", **kw)
    if facts.conda:
        fix += " " + _say("vsint.conda", **kw)
    return _answer("shared-library", f"CUDA {ver}.props", "high", _say("vsint.title", **kw), _say("vsint.cause", **kw),
                   fix, [], seen, facts, 22, package="cmake")


# --- conda's virtual packages ----------------------------------------------------------------------------------------

def _version(v: str) -> Optional[tuple]:
    m = re.match(r"(\d{1,2})(?:\.(\d{1,2}))?", v or "")  # a bare major (">=12") is X.0
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


def _need_of(g: dict) -> str:
    """The version the package needs: its constraint (">=11.6.0"), else the CUDA of its build string (cuda112py310)."""
    v = _version(g.get("need") or "")
    if v:
        return f"{v[0]}.{v[1]}"
    m = re.search(r"[-_]cuda(1[0-3]|[89])(\d)(?:py|_|\b)", g.get("pkg") or "")
    return f"{m.group(1)}.{m.group(2)}" if m else ""


def virtual(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    name = g.get("vp") or ""
    row = next((r for r in _table()["virtual"] if r["name"] == name), None)
    if row is None:
        return None
    need, have = _need_of(g), _version(g.get("have") or "")
    pkg = g.get("pkg") or ""
    pkg = pkg if re.fullmatch(r"[\w.+-]{1,120}", pkg) else "the package"
    kw = dict(vp=name, env=row["env"], need=need or "X.Y", pkg=pkg)
    if have is None:
        form = "missing"
    else:
        kw["have"] = f"{have[0]}.{have[1]}"
        form = "low"
    key = f"virtual.{row['from']}_{form}"
    if row["from"] == "driver" and form == "low":
        kw["driver"] = _driver(need)
    return _answer("version-constraint", name, "high", _say(f"{key}_title", **kw), _say(f"{key}_cause", **kw),
                   _say(f"{key}_fix", **kw), [], seen, facts, 23, package="conda")


def _driver(need: str) -> str:
    """The oldest NVIDIA driver that reports CUDA ``need`` (h4's table of toolkit releases), as words."""
    from . import h4

    v = _version(need)
    row = h4.driver_for(*v) if v else None
    if row is None:
        return _say("virtual.driver_any", need=need or "X.Y")
    _cuda, linux, windows = row
    return _say("virtual.driver", need=need, linux=linux, windows=windows or linux)


# --- chat templates --------------------------------------------------------------------------------------------------

def chat(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    paths = " ".join(p.replace("\\", "/") for p in facts.paths) + " " + seen.text
    form = "generic"
    for row in _table()["chat_tool"]:
        if f"/{row['frame']}/" in paths or f"{row['frame']}." in seen.text:
            form = row["form"]
            break
    if "As of transformers v4.44" in seen.text:
        form = "serve"  # vLLM's own wording (chat_utils.py), answered to its OpenAI-compatible server's request
    what = "processor" if "processor" in seen.text else "tokenizer"
    fix = _say(f"chat.fix_{form}", what=what)
    if form != "generic":
        fix += " " + _say("chat.fix_generic", what=what)
    return _answer("unsupported-op", "chat_template", "high", _say("chat.title", what=what),
                   _say("chat.cause", what=what), fix, [], seen, facts, 24, package="transformers")
