"""The structural readers of tuner l1 (issue 22, round 14 train).

- ``ctx``: a request longer than the context a serving engine was started with (vLLM's OpenAI server and engine,
  text-generation-inference / text-embeddings-inference, SGLang, llama.cpp's server, the OpenAI API): the prompt's
  tokens plus the tokens asked for (max_tokens / max_new_tokens) exceed max_model_len / --max-total-tokens /
  --context-length / -c, and the server refuses the request. The remedy: make the request fit (truncate the prompt,
  lower max_tokens to the room the numbers leave), or restart the server with a larger context the model supports
  (the engine's flag from l1_tables.toml [engine]).
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, _dist_of, catalogue
from .tables import _load
from .history import vkey

_say = catalogue("l1")
# the tail of "This model's maximum context length is N tokens..." in its forms (vllm serving_engine.py, OpenAI)
_SPLIT = re.compile(r"requested (\d{1,9}) tokens \((\d{1,9}) in the messages, (\d{1,9}) in the completion\)")
_OUT_IN = re.compile(r"requested (\d{1,9}) output tokens and your prompt contains at least (\d{1,9}) input tokens")
_PROMPT = re.compile(r"(?:requested|prompt contains at least|messages resulted in|request has) (\d{1,9})(?: input)? "
                     r"tokens")
_TOO_LARGE = re.compile(r"max_(?:completion_)?tokens'? is too large: (\d{1,9})")
_OPENAI = ("context_length_exceeded", "messages resulted in")  # the OpenAI API's own code and wording


def _engine(name: str) -> dict:
    return next(r for r in _load("l1_tables.toml")["engine"] if r["name"] == name)


def _numbers(g: dict, text: str) -> tuple:
    """(prompt tokens, completion tokens asked for, total asked) as far as the message says them."""
    if g.get("prompt"):
        return int(g["prompt"]), int(g["comp"]), int(g["prompt"]) + int(g["comp"])
    tail = g.get("tail") or ""
    m = _SPLIT.search(tail)
    if m:
        return int(m.group(2)), int(m.group(3)), int(m.group(1))
    m = _OUT_IN.search(tail)
    if m:
        return int(m.group(2)), int(m.group(1)), int(m.group(1)) + int(m.group(2))
    m = _PROMPT.search(tail)
    big = _TOO_LARGE.search(text)
    if m and big:
        return int(m.group(1)), int(big.group(1)), int(m.group(1)) + int(big.group(1))
    if m:
        return int(m.group(1)), None, int(m.group(1))
    asked = int(g["asked"]) if g.get("asked") else None
    return asked, None, asked


def _which(g: dict, text: str) -> str:
    for name in ("vllm", "tgi", "sglang", "llamacpp"):
        if g.get(name) is not None:
            return name
    return "openai" if any(k in text for k in _OPENAI) else "vllm"


def _first(limit: Optional[int], prompt: Optional[int], comp: Optional[int]) -> str:
    """The sentence the numbers allow: the room max_tokens has, or the prompt alone over the limit."""
    if limit is None or prompt is None:
        return _say("ctx.fit_any")
    if prompt >= limit:
        return _say("ctx.fit_prompt", prompt=prompt, limit=limit)
    if comp:
        return _say("ctx.fit_room", prompt=prompt, comp=comp, limit=limit, room=limit - prompt)
    return _say("ctx.fit_any")


def ctx(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    name = _which(g, seen.text)
    row = _engine(name)
    limit = int(g["limit"]) if g.get("limit") else None
    prompt, comp, asked = _numbers(g, seen.text)
    fix = _first(limit, prompt, comp) + " " + _say(f"ctx.fix_{name}", server=row["server"])
    title = (_say("ctx.title", asked=asked, limit=limit, engine=row["label"]) if asked and limit else
             _say("ctx.title_any", engine=row["label"]))
    return _answer("version-constraint", "context-length", "high", title, _say("ctx.cause", engine=row["label"]),
                   fix, [], seen, facts, 20, package=row["package"] or None)


# --- c1's removed names: what its answer leaves out (c1.name_answer asks) ----------------------------------------------

def removed_more(row: dict, frames: bool, own: bool, summary: str, commands: list,
                 facts: LogFacts) -> tuple[str, list]:
    """c1's answer for a name a library removed, completed: when no traceback frame shows the code that uses it
    (transformers' "Failed to import ... because of the following error", a bare paste), the row's known importers
    (c1_names.toml, commonest first) are as likely as the user's code; and where the row knows the release that
    first had the module (``since``) and the log's version does not rule it out, the reverse case: a library older
    than that lacks it too (torch 0.1/0.3 has no torch._six), said where no installed package is the caller (``own``)."""
    if "removed" not in row:
        return summary, commands
    if not frames and row.get("importers"):
        names = list(row["importers"])
        dist = next((d for d in map(_dist_of, names) if d), None)  # NVIDIA apex has no pip name: never "pip ... apex"
        how = f" (python -m pip install --upgrade {dist})" if dist else ""
        summary += " " + _say("six.unseen", what=row["module"], dists=", ".join(names), how=how)
        commands = ([f"python -m pip install --upgrade {dist}"] if dist else []) + list(commands)
    have = facts.torch_release if row["dist"] == "torch" else None
    if row.get("since") and own and (have is None or vkey(have) < vkey(row["since"])):
        summary += " " + _say("six.older", what=row["module"], dist=row["dist"], since=row["since"])
    return summary, commands


# --- torch's determinism switch and an op without a deterministic kernel ---------------------------------------------

_OP = re.compile(r"([A-Za-z_][\w.:]{0,119}) does not have a deterministic implementation")
_WARN_ONLY = "1.11"  # torch.use_deterministic_algorithms(mode, *, warn_only=False): pytorch/pytorch#66233, torch 1.11.0


def determinism(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """torch.use_deterministic_algorithms(True) is on and an op has no deterministic CUDA kernel (or a cuBLAS GEMM runs
    without CUBLAS_WORKSPACE_CONFIG): the remedies torch's message and the threads give, true for the log's torch."""
    if "Warning" in seen.text[:seen.start]:
        return None  # warn_only=True: torch warned and went on
    have = facts.torch_release
    if seen.groups.get("cublas"):
        env = "set" if facts.platform == "windows" else "export"
        return _answer("unsupported-op", "deterministic", "high", _say("det.title_cublas"), _say("det.cause_cublas"),
                       _say("det.fix_cublas"), [f"{env} CUBLAS_WORKSPACE_CONFIG=:4096:8"], seen, facts, 20,
                       package="torch")
    m = _OP.search(seen.text)
    op = m.group(1) if m else "?"
    # the message itself dates the torch: 1.7's set_deterministic, and before 1.11 no word of warn_only
    dated = seen.groups.get("api") == "set_deterministic" or "just for this operation if" in seen.text
    old = (bool(have) and vkey(have) < vkey(_WARN_ONLY)) or (not have and dated)
    warn = _say("det.warn_old", have=have or "< " + _WARN_ONLY) if old else _say("det.warn")
    back = " " + _say("det.backward") if "backward" in op else ""
    return _answer("unsupported-op", "deterministic", "high", _say("det.title", op=op), _say("det.cause", op=op),
                   warn + back + " " + _say("det.helpers"), [], seen, facts, 20, package="torch")


# --- tokenizer.json that the tokenizers library cannot read ----------------------------------------------------------

def tokjson(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """The Rust tokenizers library's JSON error on tokenizer.json: not JSON (a Git LFS pointer, an HTML page, an empty
    or cut download: fetch the file again), or JSON of a newer tokenizers than the installed one (upgrade it)."""
    if seen.groups.get("enum"):
        return _answer("version-constraint", "tokenizers", "high", _say("tok.title_new"), _say("tok.cause_new"),
                       _say("tok.fix_new"), ['python -m pip install --upgrade tokenizers transformers'], seen, facts,
                       25, package="tokenizers")
    return _answer("unsupported-op", "tokenizer.json", "high", _say("tok.title"), _say("tok.cause"), _say("tok.fix"),
                   ["git lfs install", "git lfs pull"], seen, facts, 25, package="tokenizers")
