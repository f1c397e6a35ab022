"""The structural readers of tuner m1 (issue 22, last wave: leftovers of rounds 12-14 by class).

- ``unsloth``: unsloth's own ``raise RuntimeError(f"Unsloth: Please file a bug report! Error patching {trainer_name}")``
  (tokenizer_utils.py patch_sft_trainer_tokenizer, which exec()s TRL's trainer source rewritten). The class is version
  skew: an unsloth and an unsloth_zoo of different releases (unslothai/unsloth#2015, #3293), or a TRL newer than the
  unsloth release (TRL 0.15.0's SFTTrainer: unslothai/unsloth#1700, #1829, where "trl<0.15.0" was the workaround until
  a new unsloth). Remedy (unsloth.ai/docs/get-started/install/updating): upgrade both together, --no-deps so pip keeps
  torch; for a trainer, the TRL pin. (A reading of unsloth's frames without that message was left out at merge: its
  trigger cost explain ~5 % of its throughput.)
- ``comfy_dist``: the module a ComfyUI custom node lacks (e4._comfy) -> its distribution from modules.toml
  (cv2 -> opencv-python ...), installed with ComfyUI's own Python (python_embeded\\python.exe -s -m pip on the portable
  build: ComfyUI's README, "run_nvidia_gpu.bat" uses .\\python_embeded\\python.exe -s).
- ``textgen_env``: "No module named X" from text-generation-webui's own files run outside its one-click installer's
  environment (installer_files/env, oobabooga/text-generation-webui README "One-click installer": start_windows.bat /
  start_linux.sh / start_macos.sh start it, cmd_windows.bat / cmd_linux.sh / cmd_macos.sh open a shell in that env).
"""

from __future__ import annotations

import re
from typing import Optional

from . import tables
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue

_say = catalogue("m1")

# --- unsloth / unsloth_zoo against each other or against TRL -------------------------------------------------------

_UPGRADE = "python -m pip install --upgrade --force-reinstall --no-cache-dir --no-deps unsloth unsloth_zoo"


def unsloth(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    trainer = seen.groups["trainer"]  # m1-unsloth's one pattern: "Error patching {trainer}"
    fix = _say("unsloth.fix") + " " + _say("unsloth.trl")
    commands = [_UPGRADE, "python -m pip show unsloth unsloth_zoo trl"]
    return _answer("version-constraint", "trl", "high", _say("unsloth.title_trainer", trainer=trainer),
                   _say("unsloth.cause"), fix, commands, seen, facts, 23, package="unsloth")


# --- a ComfyUI custom node's missing module -> its distribution, in ComfyUI's Python -------------------------------

def comfy_dist(mod: Optional[str], portable: bool) -> Optional[tuple[str, str]]:
    """(a sentence, the command) installing the distribution of ``mod`` into ComfyUI's Python, or None."""
    row = tables.module_row(mod) if mod else None
    if row is None or row.get("rule") != "plain":
        return None
    dist = row["dist"]
    py = r"python_embeded\python.exe -s" if portable else "python"
    return _say("comfy.dist", mod=mod, dist=dist), f"{py} -m pip install {dist}"


# --- text-generation-webui outside its one-click installer's environment ----------------------------------------------

_TEXTGEN = re.compile(r"text-generation-webui|oobabooga|[\\/]textgen[\\/]", re.IGNORECASE)  # renamed oobabooga/textgen
_INSTALLER_ENV = re.compile(r"installer_files[\\/]env", re.IGNORECASE)


def textgen_env(facts: LogFacts) -> Optional[tuple[str, list]]:
    """(the fix, its commands) when the missing module was imported by text-generation-webui's files from a Python
    that is not its installer env; None otherwise."""
    if not facts.paths or not any(_TEXTGEN.search(p) for p in facts.paths):
        return None
    osname = {"windows": "windows", "macos": "macos"}.get(facts.platform or "", None)
    if osname is None:
        osname = "windows" if any(re.match(r"[A-Za-z]:\\", p) for p in facts.paths) else "linux"
    ext = "bat" if osname == "windows" else "sh"
    start, cmd = f"start_{osname}.{ext}", f"cmd_{osname}.{ext}"
    if any(_INSTALLER_ENV.search(p) for p in facts.paths):
        return _say("textgen.inside", start=start, cmd=cmd), [cmd]
    return _say("textgen.outside", start=start, cmd=cmd), [start]
