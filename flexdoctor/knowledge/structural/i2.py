"""The structural readers of cov-i2 (issue 22, coverage by frequency: the Hugging Face stack and the UIs people run it
in), with the remedy the threads of each class settle on.

- ``accelerate``: transformers' ImportError for an accelerate that is missing OR older than this transformers' minimum
  (utils/import_utils.py is_accelerate_available(min_version=ACCELERATE_MIN_VERSION): "0.21.0" in 4.3x, "0.26.0" in
  4.4x, "1.1.0" in 5.x, so an installed but old accelerate reads as missing): modeling_utils.py "Using
  `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: `pip install 'accelerate>=0.26.0'`", the quantizers'
  "Using `bitsandbytes` 8-bit quantization requires accelerate: ..." / "Using `spqr` quantization requires Accelerate"
  (training_args.py's Trainer wording is b2.advice's). The threads' remedy
  (QwenLM/Qwen3#173: accelerate 0.20.3 under transformers 4.37; ComfyUI custom nodes, googlecolab/colabtools#4136):
  upgrade accelerate in the Python that ran the traceback (ComfyUI portable: its python_embeded) and restart it.
- ``webui_torch``: AUTOMATIC1111 / Forge's installer could not pip-install torch ("Couldn't install torch"); ``webui_half``
  adds the webui's flags to the half-precision-on-CPU answer when the frames are the webui's (its README: Python 3.10.6; webui-user.bat PYTHON=, webui-user.sh python_cmd=,
  TORCH_COMMAND; --precision full --no-half for the CPU: AUTOMATIC1111/stable-diffusion-webui#1349, #887, #13519).
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue, on_windows

_say = catalogue("i2")
_VER = re.compile(r"[0-9]{1,2}\.[0-9]{1,3}(?:\.[0-9]{1,3})?")  # ASCII digits only (\d takes any script's)
_EMBEDDED = re.compile(r"[\\/]python_embed{1,2}ed[\\/]", re.IGNORECASE)  # ComfyUI portable ("python_embeded")
_WEBUI = re.compile(r"stable-diffusion-webui|[\\/]modules[\\/](?:launch_utils|processing|txt2img|img2img|call_queue)"
                    r"\.py$", re.IGNORECASE)


# --- an accelerate missing or older than transformers' minimum --------------------------------------------------------

def accelerate(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    low = seen.groups.get("min") or ""
    spec = f'"accelerate>={low}"' if _VER.fullmatch(low) else "accelerate"
    command = f"python -m pip install -U {spec}"
    if any(_EMBEDDED.search(p) for p in facts.paths):
        where = _say("acc.where_comfy", spec=spec)
    elif on_windows(seen, facts, paths=True):
        where = _say("acc.where_win")
    else:
        where = _say("acc.where")
    fix = _say("acc.fix", command=command) + " " + where + " " + _say("acc.restart")
    return _answer("version-constraint", "accelerate", "high", _say("acc.title"), _say("acc.cause"), fix,
                   [command, "python -m pip show accelerate transformers"], seen, facts, 22, package="transformers")


# --- AUTOMATIC1111 / Forge: the webui's own options --------------------------------------------------------------------

def _webui(facts: LogFacts) -> bool:
    return any(_WEBUI.search(p) for p in facts.paths)


def webui_torch(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """The webui's installer failed to pip-install torch (launch_utils.py prepare_environment: run(..., "Installing torch
    and torchvision", "Couldn't install torch")): its supported Python and knobs. pip's own analysis answers next."""
    seen_py = _say("webui.seen_py", python=facts.python) if facts.python and facts.python != "3.10" else ""
    return _answer("version-constraint", "python", "high", _say("webui.pip_title"), _say("webui.pip_cause"),
                   (seen_py + " " + _say("webui.pip")).strip(), ["python --version", 'python -c "import struct; '
                   'print(struct.calcsize(\'P\') * 8)"'], seen, facts, 26, package="stable-diffusion-webui")


def webui_half(facts: LogFacts) -> str:
    """Half precision reached the CPU inside the webui: its flags first, or ""."""
    return _say("webui.half") + " " if _webui(facts) else ""
