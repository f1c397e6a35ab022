"""The structural layer's readers of tune-h3 (issue 22, round 9 train): what a model's files ask of the code that loads
them, and what a UI's graph asks of its parts (sources: h3_tables.toml).

- ``config``: a model's config.json written for a newer transformers than the one installed: the RoPE scaling schema
  (rope_type 'llama3', 'yarn', 'longrope') refused by the old two-field validation. In transformers' own configuration
  file: upgrade transformers to the release that reads the value; in a trust_remote_code file (transformers_modules):
  the repository's own code is older than its config.
- ``sdmix``: "mat1 and mat2 shapes cannot be multiplied (N x W1 and W2 x OUT)" where W1 is a known text-conditioning
  width of one diffusion family and (W2, OUT) a known layer of another: parts of two architectures in one graph (an
  SD1.5 ControlNet with an SDXL checkpoint; SDXL text encoders feeding Flux). Only when both widths are in the table.
- ``oom``: a GPU out of memory inside ComfyUI (its frames, its error report): ComfyUI's own memory flags and lighter
  weights, ranked above the generic reading.
- ``nogpu``: a library that refuses to start because torch sees no GPU (unsloth): the CPU-only torch wheel.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue
from .tables import _load

_ROPE_TYPE = re.compile(r"'(?:rope_)?type': '(?P<rt>[\w-]{1,40})'")
_CONFIG_FILE = re.compile(r"models[\\/](?P<model>\w{1,60})[\\/]configuration_\w{1,60}\.py$")


_say = catalogue("h3")


def _table() -> dict:
    return _load("h3_tables.toml")  # _load caches each file


# --- a config newer than the library -------------------------------------------------------------------------------

def _remote(facts: LogFacts) -> bool:
    return any("transformers_modules" in p for p in facts.paths)


def config(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    m = _ROPE_TYPE.search(g.get("got") or "")
    rtype = g.get("rtype") or (m.group("rt") if m else "")
    rtype = rtype if re.fullmatch(r"[\w-]{1,40}", rtype or "") else ""
    row = next((r for r in _table()["rope"] if r["rope_type"] == rtype), None)
    what = rtype or "rope_scaling"
    if _remote(facts):
        return _answer("version-constraint", "model code", "medium", _say("config.title", what=what),
                       _say("config.cause_remote", what=what), _say("config.fix_remote", what=what),
                       ["python -m pip show transformers"], seen, facts, 18, package="transformers")
    llama = any((mm := _CONFIG_FILE.search(p.replace("\\", "/"))) and mm.group("model") == "llama" for p in facts.paths)
    first = row["first"] if row else ("4.43.0" if llama else "")
    spec = f'"transformers>={first}"' if first else "transformers"
    commands = [_pip(f"install --upgrade {spec}", seen, facts), _pip("show transformers", seen, facts)]
    if row:
        fix = _say("config.fix_known", what=what, first=first, models=row["models"])
    elif first:
        fix = _say("config.fix_llama", what=what, first=first)
    else:
        fix = _say("config.fix_any", what=what)
    return _answer("version-constraint", "transformers", "high" if first else "medium", _say("config.title", what=what),
                   _say("config.cause", what=what), fix + " " + _say("config.keep"), commands, seen, facts, 18,
                   package="transformers")


def _pip(args: str, seen: Seen, facts: LogFacts) -> str:
    """A pip command for the interpreter the log ran: ComfyUI's portable build has its own (python_embeded)."""
    if any("python_embeded" in p for p in facts.paths) or "python_embeded" in seen.text:
        return rf"python_embeded\python.exe -s -m pip {args}"
    return f"python -m pip {args}"


# --- parts of two diffusion architectures in one graph ---------------------------------------------------------------

def sdmix(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    w1, w2, out = (int(g.get(k) or 0) for k in ("w1", "w2", "out"))
    if w1 == w2:
        return None
    have = next((r for r in _table()["width"] if r["width"] == w1), None)
    layer = next((r for r in _table()["layer"] if r["width_in"] == w2 and out in r["out"]), None)
    if have is None or layer is None:
        return None  # widths of no known family: a shape error of the model's own code
    v = {"w1": w1, "w2": w2, "have": have["family"], "encoder": have["encoder"], "want": layer["family"],
         "expects": layer.get("expects", "")}
    if layer["kind"] == "flux":
        return _answer("version-constraint", "model family", "high", _say("sdmix.title", **v), _say("sdmix.cause_flux", **v),
                       _say("sdmix.fix_flux", **v), [], seen, facts, 22)
    if have["family"] == layer["family"]:
        return None
    return _answer("version-constraint", "model family", "high", _say("sdmix.title", **v), _say("sdmix.cause_unet", **v),
                   _say("sdmix.fix_unet", **v), [], seen, facts, 22)


# --- out of memory in ComfyUI ----------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _oom_stacks() -> tuple:
    """(frame-path regex, row) of the programs whose own memory knobs answer a GPU out of memory, in the
    order they are tried (h3_tables.toml [[oom_stack]]: a program that runs inside another comes first)."""
    return tuple((re.compile(row["paths"]), row) for row in _table()["oom_stack"])


def oom_stack(seen: Seen, facts: LogFacts) -> Optional[dict]:
    """The table row of the program a GPU out of memory happened in, read from the traceback's frames
    (ComfyUI also from its error report), or None."""
    for paths, row in _oom_stacks():
        if (row["name"] == "comfy" and seen.groups.get("report")) or any(paths.search(p) for p in facts.paths):
            return row
    return None


def oom(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = oom_stack(seen, facts)
    if row is None:
        return None  # the generic reading (errors.oom) answers for a program without known knobs
    cause = _say(row["cause"]) if "cause" in row else t("structural.oom.cuda.cause")
    commands = list(row.get("commands", ()))
    return _answer("out-of-memory", "cuda", "medium", t("structural.title.oom", dev="cuda"), cause,
                   t(row["fix"]) if "fix" in row else _say(f"oom.fix_{row['name']}"), commands, seen, facts, 46)


# --- a library that needs a GPU torch does not see -------------------------------------------------------------------

def nogpu(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    pkg = seen.groups.get("pkg") or "unsloth"
    tag = facts.cuda_tag  # the CUDA tag the log names (torch's +cuXYZ); none is invented
    probe = 'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"'
    commands = [probe, "nvidia-smi"]
    if tag:
        commands.append(f"python -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/{tag}")
    return _answer("version-constraint", "torch", "medium", _say("nogpu.title", pkg=pkg), _say("nogpu.cause", pkg=pkg),
                   _say("nogpu.fix", pkg=pkg), commands, seen, facts, 30, package="torch")
