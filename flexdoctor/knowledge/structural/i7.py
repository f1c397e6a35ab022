"""The structural layer's readers of builder i7 (issue 22, coverage by frequency: "CUDA is not usable").

- ``nocuda``: torch/cuda/__init__.py _lazy_init's ``AssertionError("Torch not compiled with CUDA enabled")`` (a CPU-only
  torch) answered with the program's OWN interpreter, read from the traceback's torch frames: ComfyUI/Fooocus portable
  (``python_embeded``, ComfyUI's own ``update\\update_comfyui_and_python_dependencies.bat``), a venv (AUTOMATIC1111,
  Forge, kohya_ss, ComfyUI manual/Desktop/StabilityMatrix: ``venv\\Scripts\\python.exe``), text-generation-webui's
  ``installer_files\\env``, a conda env (``conda run -n NAME``). Threads: LarryJane491/Lora-Training-in-Comfy #6/#7/#51
  (a node's requirements swapped the CUDA torch for PyPI's CPU one; "update_comfyui_and_python_dependencies ...
  redownload the pytorch version compatible with CUDA"), Comfy-Org/ComfyUI #2427/#4759 (``.\\python_embeded\\python.exe
  -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cuXY``), Comfy-Org/desktop #1647
  (the .venv), lllyasviel/stable-diffusion-webui-forge #2863 (venv, the cuXY index).
- ``cut``: a paste that stops inside that start-up, before any error line: the last frames are torch's
  ``_lazy_init``/``current_device`` or ComfyUI's/Fooocus' ``model_management.py`` import-time device probe
  (``total_vram = get_total_memory(get_torch_device())``, comfy/model_management.py; ldm_patched/modules/
  model_management.py in Fooocus). The usual cause there is the same CPU torch; the answer names the check first.
The index is the wheel table's (flexdoctor/wheels: the newest torch whose cuXY wheel runs on any CUDA 12 driver).
"""

from __future__ import annotations

import re
from typing import Optional

from ...wheels import newest_for_driver_cuda
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue

_say = catalogue("i7")

# The interpreter a frame's site-packages belongs to, most specific first: (pattern on the path, layout key).
_LAYOUTS = (
    (re.compile(r"[\\/]python_embed{1,2}ed[\\/]", re.IGNORECASE), "embedded"),
    (re.compile(r"[\\/]installer_files[\\/]env[\\/]", re.IGNORECASE), "textgen"),
    (re.compile(r"[\\/]envs[\\/](?P<env>[A-Za-z0-9][\w.-]{0,59})[\\/]lib[\\/]", re.IGNORECASE), "conda"),
    (re.compile(r"[\\/]\.venv[\\/]", re.IGNORECASE), "dotvenv"),
    (re.compile(r"[\\/]venv[\\/]", re.IGNORECASE), "venv"),
)
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_COMFY = re.compile(r"[\\/]ComfyUI[\\/]|ComfyUI_windows_portable", re.IGNORECASE)
_FOOOCUS = re.compile(r"Fooocus|[\\/]ldm_patched[\\/]", re.IGNORECASE)
_WEBUI = re.compile(r"stable-diffusion-webui|webui_forge|[\\/]webui[\\/]|sd-webui|kohya", re.IGNORECASE)
_FRAME_PATH = re.compile(r'File "(?P<path>[^"\n]{1,400})"')
_MAC = re.compile(r"^/(?:Users|Applications|opt/homebrew|Library)/")  # macOS paths: no torch build has CUDA there
_PORTABLE = re.compile(r"ComfyUI_windows_portable|[\\/]ComfyUI[\\/]ComfyUI[\\/]|Fooocus_win64|[\\/]python_embed{1,2}ed[\\/]",
                       re.IGNORECASE)


def _layout(paths) -> Optional[tuple[str, str, str]]:
    """(layout, env name or '', the path) of the first torch-owning frame whose interpreter is recognised."""
    for path in paths:
        for pattern, key in _LAYOUTS:
            m = pattern.search(path)
            if m:
                return key, (m.groupdict().get("env") or ""), path
    return None


def _python(key: str, env: str, win: bool) -> str:
    if key == "embedded":
        return r".\python_embeded\python.exe -s -m pip"
    if key == "textgen":
        return r"installer_files\env\python.exe -m pip" if win else "installer_files/env/bin/python -m pip"
    if key == "conda":
        return f"conda run -n {env} python -m pip"
    folder = ".venv" if key == "dotvenv" else "venv"
    return rf"{folder}\Scripts\python.exe -m pip" if win else f"{folder}/bin/python -m pip"


def _index(win: bool) -> tuple[str, str]:
    advice = newest_for_driver_cuda("12.0", "windows-x86_64" if win else "linux-x86_64")
    if advice is None:
        return "cu126", " --index-url https://download.pytorch.org/whl/cu126"
    return advice.variant.tag, advice.index_args()


def _program(path: str, key: str) -> str:
    if key == "textgen":
        return "textgen"
    if _COMFY.search(path):
        return "comfy"
    if _FOOOCUS.search(path):
        return "fooocus"
    if _WEBUI.search(path) and key in ("venv", "dotvenv"):
        return "webui"
    return "other"


def _fix(key: str, env: str, path: str, win: bool) -> tuple[str, list]:
    tag, index = _index(win)
    python = _python(key, env, win)
    install = f"{python} install --force-reinstall torch torchvision torchaudio{index}"
    program = _program(path, key)
    where = _say(f"where.{key}", env=env)
    text = _say("fix", where=where, tag=tag) + " " + _say(f"program.{program}")
    commands = [install]
    if program == "comfy" and key == "embedded":
        commands.append(r"update\update_comfyui_and_python_dependencies.bat")
    commands.append(python.replace(" -m pip", "").replace(" -s", "") +
                    ' -c "import torch; print(torch.__version__, torch.cuda.is_available())"')
    return text, commands


def nocuda(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.root is None or facts.root[0] != seen.line:
        return None  # only the error the run died of
    return _full(seen, facts)


def _full(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    found = _layout(facts.paths)
    if found is None:
        return None  # no program interpreter in the frames: the generic CPU-wheel entry answers
    key, env, path = found
    if facts.platform == "macos" or any(_MAC.match(p) for p in facts.paths):
        return None  # a Mac: no CUDA build exists, the generic entry's mps/cpu advice answers
    win = bool(_DRIVE.match(path)) or "\\" in path
    text, commands = _fix(key, env, path, win)
    return _answer("unsupported-op", "cuda", "high", _say("title"), _say("cause"), text, commands, seen, facts, 21,
                   package="torch")


def cut(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.root is not None:
        if facts.root[0] > seen.line and "Torch not compiled with CUDA enabled" in facts.root[2]:
            return _full(seen, facts)  # the error line follows these frames (that line is the entry's own)
        return None  # another error line is in the paste: its own reading answers
    m = _FRAME_PATH.search(seen.text)
    if not m or not seen.text.lstrip().startswith("File ") or facts.platform == "macos":
        return None  # a logger's prefixed frame (a worker's report) or a Mac: not a paste cut at start-up
    path = m.group("path")
    if _MAC.match(path):
        return None
    win = bool(_DRIVE.match(path)) or "\\" in path
    found = _layout([path])
    if found is None:
        portable = bool(_PORTABLE.search(path)) and win
        key, env = ("embedded" if portable else "venv"), ""
    else:
        key, env, _p = found
    text, commands = _fix(key, env, path, win)
    return _answer("unsupported-op", "cuda", "medium", _say("cut_title"), _say("cut_cause"), _say("cut_check") + " " + text,
                   commands, seen, facts, 21, package="torch")
