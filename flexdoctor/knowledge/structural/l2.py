"""The structural readers of tuner l2 (issue 22, round 14 train).

- ``comfy``: ComfyUI refuses a prompt because a loader's file is not among the options it lists ("Value not in list:
  ckpt_name: 'x.safetensors' not in [...]"): the folder the input reads (l2_tables.toml), and which of three things
  happened, read from the list itself: nothing there (place the file), the file listed under a subfolder prefix (select
  that entry), another name (place it, or reselect a listed file); then refresh the browser and reselect.
- ``tokconv``: transformers cannot build a fast tokenizer ("You need to have sentencepiece [or tiktoken] installed to
  convert a slow tokenizer to a fast one"): sentencepiece and protobuf (what transformers[sentencepiece] installs) in the
  Python that runs the app; with both present, the model folder lacks its tokenizer files.
- ``dlopen``: a library a binding opens at run time with dlopen ("Failed to dlopen libcuda.so"): the shared-library
  answer (libs.answer: the component that ships it, /usr/lib/wsl/lib on WSL 2 for the driver's libcuda.so.1).
- ``secboot``: the kernel refuses a module for its signature (Secure Boot): sign it with an enrolled Machine Owner Key
  (DKMS's or Ubuntu's key, mokutil --import, "Enroll MOK" at the next boot; nvidia-installer's module signing options;
  signed prebuilt modules), or turn Secure Boot off; nvidia-installer's generic load failure names the checks in order.
- ``bnbmac``: transformers' bitsandbytes quantizer refusing a Mac ("Using `bitsandbytes` 4-bit quantization requires the
  latest version of bitsandbytes"): no CUDA there, so no upgrade helps; load the model without bitsandbytes (the
  non-quantized checkpoint on mps) or run it on an NVIDIA GPU.
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue
from .tables import _load

_say = catalogue("l2")
_SAFE_FILE = re.compile(r"[\w .,()+@=~#&'\[\]-]{1,200}")  # a file name shown in a fix: no markup, no shell
_ENTRY = re.compile(r"'([^'\n]{1,300})'")
_FILE_LIKE = re.compile(r"\.(?:safetensors|ckpt|pt|pth|bin|sft|gguf|onnx|yaml|png|jpe?g|webp)$", re.I)


def _table() -> dict:
    return _load("l2_tables.toml")  # _load caches each file


# --- ComfyUI: a loader's value is not in the list it offers ----------------------------------------------------------

def _listed(seen: Seen) -> list[str]:
    """The options ComfyUI printed after "not in [" (repr of a list of str: backslashes doubled)."""
    rest = seen.text[seen.end - 1:seen.end + 20000]  # the shape ends on the list's "["
    if not rest.startswith("["):
        return []
    return [m.group(1).replace("\\\\", "\\") for m in _ENTRY.finditer(rest)]


def _form(val: str, listed: list[str], seen: Seen) -> tuple[str, str]:
    """(form, the listed entry to select): empty, subfolder, other."""
    if seen.groups.get("n") is None and not listed:
        return "empty", ""
    base = re.split(r"[\\/]", val)[-1]
    for entry in listed:
        if entry != val and re.split(r"[\\/]", entry)[-1] == base:
            return "subfolder", entry
    return "other", ""


def comfy(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    name, val = g.get("input") or "", g.get("val") or ""
    row = next((r for r in _table()["comfy_input"] if r["input"] == name), None)
    if row is None and not _FILE_LIKE.search(val):
        return _answer("unsupported-op", f"ComfyUI {name}", "medium", _say("comfy.title_option", input=name),
                       _say("comfy.cause_option", input=name), _say("comfy.fix_option", input=name), [], seen, facts, 24,
                       package="comfyui")
    listed = _listed(seen)
    form, entry = _form(val, listed, seen)
    if form == "subfolder" and not _SAFE_FILE.fullmatch(re.sub(r"[\\/]", "", entry)):
        form, entry = "other", ""
    shown = f"'{val}'" if _SAFE_FILE.fullmatch(val) and val != "None" else _say("comfy.the_file")
    folders = [f"ComfyUI/{f}" for f in (row["folders"] if row else [])]
    where = " " + _say("comfy.or") + " " if len(folders) > 1 else ""
    kw = dict(input=name, file=shown, folder=where.join(folders) if folders else _say("comfy.node_folder"),
              n=g.get("n") or str(len(listed)),
              entry=entry)
    if row is not None and row["folders"] == ["input"]:
        form = "image"
    fix = _say(f"comfy.fix_{form}", **kw)
    if form != "image":
        fix += " " + _say("comfy.fix_then", **kw)
    if row is not None and row.get("vision"):
        fix += " " + _say("comfy.vision")
    subject = f"ComfyUI {row['folders'][0]}" if row else f"ComfyUI {name}"
    return _answer("unsupported-op", subject, "high" if row else "medium", _say(f"comfy.title_{form}", **kw),
                   _say("comfy.cause", **kw), fix, [], seen, facts, 22, package="comfyui")


# --- transformers: no backend to convert a slow tokenizer to a fast one ---------------------------------------------

def tokconv(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    tik = "tiktoken" in seen.text
    fix = _say("tokconv.fix") + (" " + _say("tokconv.fix_tiktoken") if tik else "")
    return _answer("missing-module", "sentencepiece", "high", _say("tokconv.title"), _say("tokconv.cause"), fix,
                   ["python -m pip install sentencepiece protobuf"], seen, facts, 20, package="transformers")


# --- a library opened with dlopen ------------------------------------------------------------------------------------

def dlopen(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    from . import libs

    return libs.answer(seen, facts)


# --- a kernel module refused for its signature (Secure Boot) ---------------------------------------------------------

def secboot(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    mod = g.get("mod") or re.split(r"[\\/]", g.get("ko") or "")[-1].split(".")[0] or "nvidia"
    mod = mod if re.fullmatch(r"[\w-]{1,60}", mod) else "nvidia"
    why = g.get("why") or ""
    form = "eperm" if why == "Operation not permitted" else "generic" if "Unable to load" in seen.text else "signed"
    certs = {r["builder"]: r["certificate"] for r in _table()["mok"]}
    kw = dict(mod=mod, dkms=certs["dkms"], ubuntu=certs["ubuntu"])
    fix = _say(f"secboot.fix_{form}", **kw) + " " + _say("secboot.fix_sign", **kw)
    if mod.startswith("nvidia"):
        fix += " " + _say("secboot.fix_nvidia", **kw)
    return _answer("unsupported-op", "secure boot", "high" if form == "signed" else "medium",
                   _say(f"secboot.title_{form}", **kw), _say("secboot.cause", **kw), fix, ["mokutil --sb-state"],
                   seen, facts, 21, package="kernel")


# --- bitsandbytes quantization asked for on a Mac --------------------------------------------------------------------

def bnbmac(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.platform != "macos":
        return None  # with CUDA the message's own upgrade is the remedy (the "advice" shape answers)
    bits = seen.groups.get("bits") or "4"
    return _answer("unsupported-op", "mps", "high", _say("bnbmac.title", bits=bits), _say("bnbmac.cause", bits=bits),
                   _say("bnbmac.fix", bits=bits), [], seen, facts, 19, package="bitsandbytes")
