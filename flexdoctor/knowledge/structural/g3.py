"""The structural layer's readers of tune-g3 (issue 22, round 8): the training loop, numerics, wrappers and bare process
deaths, read by the error's shape with the remedy the threads establish (sources: g3_tables.toml).

- ``autograd``: a saved tensor changed in place (anomaly detection, then the op made out of place), backward through a
  freed graph (detach carried state; retain_graph only when the graph is needed twice), non-reentrant checkpointing that
  recomputes other tensors (use_cache=False; use_reentrant), the anomaly mode's "returned nan values".
- ``numeric``: torch.multinomial given inf/NaN probabilities (fp16 overflow: bf16 or fp32), DeepSpeed's fp16 loss scale at
  its floor (bf16), Lightning's and DETR-style "loss is nan" stops.
- ``wrap``: errors whose real error is inside them. The inner error is answered by the other readers (it is the log's root
  error, or, for ComfyUI's node report, a shape on its message line: ``wrapped`` lets ``_fatal`` take it); this reader answers
  only where nothing else does (rank above LAST_RESORT), naming the inner error and how to see it directly (num_workers=0).
  A process pool whose worker died and the DataLoader out of file descriptors are answered here.
- ``death``: glibc's heap checks, the shell's signal reports, faulthandler, exit status 137 and OOMKilled: what it means,
  how to get the real stack, what to attach.
"""

from __future__ import annotations

import re
from typing import Optional

from ...model import Fix
from ...text import t
from .collect import Seen
from .context import LogFacts
from .errors import env
from .model import Answer
from . import i1  # tune-i1
from .readers import _answer, catalogue, on_windows

_WRAPPED_RANK = 85  # above LAST_RESORT (70): shown only when no reader and no entry says more
_NODE = re.compile(r"custom_nodes[\\/](?P<node>[\w.-]{1,100})")
_SAFE_NODE = re.compile(r"[A-Za-z0-9][\w .()|-]{0,99}")
_ACTIVATIONS = ("Relu", "LeakyRelu", "Elu", "Hardtanh", "Silu", "Hardswish", "Threshold", "Mish", "Gelu")


_say = catalogue("g3")


# --- autograd ------------------------------------------------------------------------------------------------------

def autograd(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    case = next(k for k in ("inplace", "twice", "ckpt", "nan") if g.get(k))
    fn = g.get("fn") or ""
    fn = fn if re.fullmatch(r"\w{1,80}", fn) else ""
    if case == "inplace":
        extra = _say("autograd.activation") if fn.startswith(_ACTIVATIONS) else ""
        title = _say("autograd.title_inplace_fn", fn=fn) if fn else _say("autograd.title_inplace")
        return _answer("unsupported-op", "autograd", "high", title, _say("autograd.cause_inplace"),
                       _say("autograd.fix_inplace") + (" " + extra if extra else ""), [], seen, facts, 24)
    title = _say("autograd.title_nan", fn=fn) if case == "nan" and fn else _say(f"autograd.title_{case}")
    return _answer("unsupported-op", "autograd", "high", title, _say(f"autograd.cause_{case}"),
                   _say(f"autograd.fix_{case}"), [], seen, facts, 24)


# --- numerics ------------------------------------------------------------------------------------------------------

def numeric(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    case = "prob" if g.get("prob") else "minscale" if g.get("minscale") else "lightning" if g.get("pl") else "stopping"
    return _answer("unsupported-op", "dtype" if case in ("prob", "minscale") else "nan", "high",
                   _say(f"numeric.title_{case}"), _say(f"numeric.cause_{case}"), _say(f"numeric.fix_{case}"), [],
                   seen, facts, 24)


# --- wrappers ------------------------------------------------------------------------------------------------------

def wrapped(seen: Seen, shapes) -> bool:
    """Whether a shape lies in a ComfyUI node report: on the line that carries the node's message ("!!! Exception during
    processing !!! <message>", "**Exception Message:** <message>") or in the lines under "Error occurred when executing
    <Node>:" (the old dialog prints the message there without its exception type). Such a message is the failure even
    when it has no error word of its own."""
    if seen.uid.startswith("g3-"):
        return False
    for s in reversed(shapes):
        if s.uid != "g3-wrap" or s.line > seen.line:
            continue
        if seen.line - s.line > 4:
            return False
        g = s.groups
        if (g.get("comfy") or g.get("comfy_report")) and s.line == seen.line:
            return True
        if g.get("comfy_old") and s.line < seen.line:
            return True
    return False


def _inner(seen: Seen, facts: LogFacts) -> Optional[str]:
    """The root error's line when it comes after the wrapper's (the inner error), else None."""
    if facts.root is not None and facts.root[0] > seen.line:
        return facts.root[3][:200]
    return None


def _unknown_inner(seen: Seen, facts: LogFacts, case: str, subject: str, **kw) -> Answer:
    if _inner(seen, facts) is not None and (known := i1.root(facts)) is not None:
        return known  # tune-i1: the inner error is one of PyTorch's checks of the user's code or data
    inner = _inner(seen, facts) or (seen.groups.get("msg") or "").strip()[:200] or kw.get("node") or seen.text.strip()[:200]
    title = _say(f"wrap.title_{case}", error=inner, **{k: v for k, v in kw.items() if k != "error"})
    fix = _say(f"wrap.fix_{case}", **kw) + " " + t("structural.fix.unknown")
    return Answer("unknown", subject, "low", title, _say(f"wrap.cause_{case}", **kw),
                  Fix(fix, ("flexdoctor facts",)), seen.line, seen.text[:300], rank=_WRAPPED_RANK,
                  package=facts.package, facts=facts.to_dict())


def wrap(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("pool"):
        commands = [] if on_windows(seen, facts) else ["sudo dmesg -T | grep -i -E 'killed process|out of memory'"]
        return _answer("launcher", "process-pool", "medium", _say("wrap.title_pool"), _say("wrap.cause_pool"),
                       _say("wrap.fix_pool"), commands, seen, facts, 45)
    if g.get("fds"):
        commands = [] if on_windows(seen, facts) else ["ulimit -n", "ulimit -Hn", 'ulimit -n "$(ulimit -Hn)"']
        return _answer("out-of-memory", "file-descriptors", "high", t("structural.f2.fd.title"),
                       t("structural.f2.fd.cause"), t("structural.f2.fd.fd_torch"), commands, seen, facts, 30)
    if g.get("dl"):
        where = "pin" if g["dl"].startswith("pin") else "dl"
        return _unknown_inner(seen, facts, where, _word(g.get("inner")) or "DataLoader")
    if g.get("ray"):
        return _unknown_inner(seen, facts, "ray", _word(g.get("ray")) or "RayTaskError")
    node = g.get("node") or ""
    node = node.strip() if _SAFE_NODE.fullmatch(node.strip()) else ""
    custom = next((m.group("node") for p in reversed(facts.paths) for m in [_NODE.search(p)] if m), "")
    where = t("structural.g3.wrap.custom", node=custom) if custom else ""
    return _unknown_inner(seen, facts, "comfy", node or "ComfyUI", node=node or _say("wrap.a_node"), where=where)


def _word(value: Optional[str]) -> Optional[str]:
    return value if value and re.fullmatch(r"[A-Za-z_]\w{0,80}", value) else None


# --- bare process deaths ---------------------------------------------------------------------------------------------

_SIGNALS = {"segmentation fault": "SIGSEGV", "floating point exception": "SIGFPE", "aborted": "SIGABRT",
            "abort": "SIGABRT", "killed": "SIGKILL",
            "terminate called without an active exception": "SIGABRT"}
_CONTAINER = re.compile(r"OOMKilled|Exit Code:|kubectl|docker|[Cc]ontainer|pod")


def death(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    fault = [env("PYTHONFAULTHANDLER=1", facts)]
    if g.get("heap"):
        return _answer("launcher", "heap-corruption", "medium", _say("death.title_heap", what=g["heap"][:80]),
                       _say("death.cause_heap"), _say("death.fix_heap"), fault, seen, facts, 50)
    name = _SIGNALS.get((g.get("sig") or "").lower())
    if g.get("sure") or name == "SIGKILL":
        return _killed(seen, facts)
    if name == "SIGABRT" and facts.root is not None and "terminate called" not in seen.text:
        return None  # an exception or a what() line above names why it aborted: that error answers
    if name is None:
        return None
    case = {"SIGSEGV": "segv", "SIGFPE": "fpe"}.get(name, "abrt")
    return _answer("launcher", name, "medium", _say("death.title_sig", sig=name), _say(f"death.cause_{case}"),
                   _say(f"death.fix_{case}"), fault, seen, facts, 55)


def _killed(seen: Seen, facts: LogFacts) -> Answer:
    container = bool(_CONTAINER.search(seen.text))
    case = "container" if container else "host"
    commands = [] if container or on_windows(seen, facts) else ["sudo dmesg -T | grep -i -E 'killed process|out of memory'",
                                                               "free -h"]
    return _answer("out-of-memory", "cpu", "medium", _say(f"death.title_kill_{case}"), _say(f"death.cause_kill_{case}"),
                   _say("death.fix_kill") + " " + _say(f"death.fix_kill_{case}"), commands, seen, facts, 47)
