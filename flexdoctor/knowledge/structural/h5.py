"""The structural layer's readers of tune-h5 (issue 22, cycle 3: round 10 train): the error read where a paste or an
older wording hides it from the other readers, with the remedy the sources and threads establish.

- ``remote``: transformers' trust_remote_code refusal in the wordings e4-remote does not read: a local folder on Windows
  ("Loading models\\X requires you to execute the configuration file in that repo", transformers <= 4.3x
  configuration_auto.py/dynamic_module_utils.py) and the newer "Loading this model requires you to execute custom code
  contained in the model repository" (dynamic_module_utils.py resolve_trust_remote_code). Answered as e4.remote, plus the
  flag of the web UI that loads it: text-generation-webui passes trust_remote_code only when started with
  --trust-remote-code (oobabooga/text-generation-webui modules/shared.py; the one-click installer reads CMD_FLAGS.txt).
- ``raised``: a paste that stops at the raising frame, so the message is only in that frame's source line:
  torch/cuda/__init__.py _lazy_init's ``raise AssertionError("Torch not compiled with CUDA enabled")`` (a torch without
  CUDA: the CUDA build from download.pytorch.org/whl/cuXYZ) and AUTOMATIC1111's older launch.py
  ``run_python("import torch; assert torch.cuda.is_available(), 'Torch is not able to use GPU; ...'")`` (e4.webui).
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Optional

from . import e4
from .collect import Seen
from .context import LogFacts
from .history import companions
from .model import Answer
from .readers import _answer, catalogue, on_windows, torch_pair_fix
from .tables import _load

_TEXTGEN = re.compile(r"text-generation-webui|[\\/]modules[\\/](?:ui_model_menu|models)\.py$", re.IGNORECASE)
_MODELS_DIR = re.compile(r"models[\\/]")  # text-generation-webui loads from its models folder ("models\\X")
_HUB_ID = re.compile(r"[\w.-]{1,100}/[\w.-]{1,100}")


_say = catalogue("h5")


# --- trust_remote_code in the wordings e4-remote does not read ---------------------------------------------------------

def remote(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    repo = (seen.groups.get("wrepo") or "").strip().strip("'\"`")
    hub = repo if _HUB_ID.fullmatch(repo) else None  # a local folder (models\X, C:\...) is no Hub id
    a = e4.remote(replace(seen, groups={"repo": hub} if hub else {}), facts)
    webui = any(_TEXTGEN.search(p) for p in facts.paths) or _MODELS_DIR.match(repo)
    if a is None or not webui:
        return a
    return replace(a, fix=replace(a.fix, summary=_say("remote.textgen") + " " + a.fix.summary))


# --- a paste that stops at the raising frame ---------------------------------------------------------------------------

def raised(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.root is not None and facts.root[0] < seen.line:
        return None  # an earlier error is the root: this frame belongs to another traceback
    if seen.groups.get("webui"):
        return e4.webui(replace(seen, groups={}), facts)
    if facts.root is not None:
        return None  # the full "Torch not compiled with CUDA enabled" line follows: its entry answers
    commands = ["nvidia-smi", 'python -c "import torch; print(torch.__version__, torch.version.cuda)"']
    return _answer("unsupported-op", "cuda", "high", _say("nocuda.title"), _say("nocuda.cause"), _say("nocuda.fix"),
                   commands, seen, facts, 22, package="torch")


# --- unsloth against another release of what it patches ----------------------------------------------------------------
# The remedy: https://unsloth.ai/docs/get-started/install/updating ("pip install --upgrade unsloth unsloth_zoo"; an older
# release: "pip install --force-reinstall --no-cache-dir --no-deps unsloth==2025.1.5", releases on its GitHub); threads
# unslothai/unsloth#2148 (get_batch_samples, fixed in a new unsloth), #1925 (dynamic compiled modules, a new release).

def unsloth(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if facts.root is None or facts.root[0] != seen.line:
        return None  # only the error the run died of (unsloth prints "Unsloth: Failed to patch X" as a notice)
    commands = ["python -m pip install --upgrade unsloth unsloth_zoo"]
    if g.get("fn"):
        fn = f"_unsloth_{g['fn']}"
        return _answer("version-constraint", "unsloth", "high", _say("unsloth.sig_title", fn=fn),
                       _say("unsloth.sig_cause", fn=fn), _say("unsloth.fix"), commands, seen, facts, 24,
                       package="unsloth")
    step = g.get("step") or ""
    return _answer("version-constraint", "unsloth", "high", _say("unsloth.step_title", step=step),
                   _say("unsloth.step_cause"), _say("unsloth.fix") + " " + _say("unsloth.previous"), commands, seen,
                   facts, 24, package="unsloth")


# --- kohya-ss/sd-scripts' optional packages ----------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _kohya() -> dict:
    return {r["name"]: r for r in _load("h5_tables.toml")["kohya"]}


def kohya(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = _kohya().get((seen.groups.get("kpkg") or "").strip().lower())
    if row is None:
        return None
    dist, win = row["dist"], on_windows(seen, facts, paths=True)
    venv = _say("kohya.venv_win") if win else _say("kohya.venv_posix")
    fix = _say("kohya.fix", dist=dist, venv=venv) + " " + _say(f"kohya.instead_{row['instead']}")
    if dist == "bitsandbytes" and win:
        fix += " " + _say("kohya.bnb_windows")
    return _answer("missing-module", dist, "high", _say("kohya.title", dist=dist), _say("kohya.cause", dist=dist), fix,
                   [f"python -m pip install {dist}"], seen, facts, 22)


# --- a companion of torch preinstalled for another torch (pip's post-install conflict report) --------------------------

_VER = re.compile(r"\d{1,3}(?:\.\d{1,4}){1,3}")


def companion(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    comp, cv, made, have = "torch" + g["comp"], g["cv"], g["tv"].split("+")[0], g["have"].split("+")[0]
    if not (_VER.fullmatch(made) and _VER.fullmatch(have)) or made == have:
        return None
    vision, audio = companions(have)
    pins = [f"{d}=={v}" for d, v in (("torchvision", vision), ("torchaudio", audio)) if v]
    commands = [f"python -m pip install torch=={have} " + " ".join(pins)] if pins else []
    named = ", ".join(pins) or _say("companion.unknown", have=have)
    return _answer("version-constraint", "torch", "high", _say("companion.title", comp=comp, cv=cv, made=made, have=have),
                   _say("companion.cause", comp=comp, made=made, have=have),
                   _say("companion.fix", comp=comp, made=made, have=have, named=named), commands, seen, facts, 24)


# --- sgl-kernel's compiled ops found but not loadable -------------------------------------------------------------------

def sgl_ops(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    fix, commands = torch_pair_fix("sgl-kernel", facts)
    return _answer("undefined-symbol", "torch", "medium", _say("sglops.title"), _say("sglops.cause"), fix, commands,
                   seen, facts, 30, package="sgl_kernel")
