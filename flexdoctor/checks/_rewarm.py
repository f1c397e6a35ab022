"""The `flexdoctor warm-cache` commands that warm again what a manifest recorded (FD505).

A bare `flexdoctor warm-cache` warms nothing (exit 2, "nothing to warm"): a printed fix must
name the configs. The manifest in the facts keeps each warmed config's name
(:attr:`flexdoctor.workload.Workload.name`, e.g. ``bf16 B1 H32/8 L4096 D128 causal fwd+bwd cuda``);
this reads the name back into warm-cache's flags, and keeps a command only when the workload
those flags make has exactly that name (anything it cannot read back is left out).
"""

from __future__ import annotations

import re
import shlex
from typing import Optional

from .. import workload as wl

_SIZES = re.compile(r"^(?P<key>[BHLD])(?P<a>\d+)(?:/(?P<b>\d+))?$")
MAX_COMMANDS = 8  # more configs than this: the fix names a preset instead of a wall of commands


def _flags(name: str) -> Optional[dict]:
    """warm-cache's options for one config name, or None when the name does not read back."""
    words = name.split(" ")
    if len(words) < 8:
        return None
    kw: dict = {"dtype": words[0], "device": words[-1], "backward": {"fwd": False, "fwd+bwd": True}.get(words[-2])}
    if kw["backward"] is None:
        return None
    sizes = {"B": ("batch", None), "H": ("heads", "kv_heads"), "L": ("seq_len", "kv_len"), "D": ("head_dim", None)}
    for word in words[1:5]:
        m = _SIZES.match(word)
        if not m:
            return None
        one, two = sizes[m["key"]]
        kw[one] = int(m["a"])
        if m["b"] is not None:
            if two is None:
                return None
            kw[two] = int(m["b"])
    kw["mask"] = words[5]
    for word in words[6:-2]:
        if word == "dynamic":
            kw["dynamic"] = True
        elif word == "fullgraph":
            kw["fullgraph"] = True
        elif word in wl.MODES:
            kw["mode"] = word
        elif "=" in word:
            kw["kernel_options"] = word
        else:
            kw["score_mod"] = word
    return kw


def _argv(kw: dict) -> list:
    argv = ["--dtype", kw["dtype"], "--batch", str(kw["batch"]), "--heads", str(kw["heads"])]
    if kw.get("kv_heads"):
        argv += ["--kv-heads", str(kw["kv_heads"])]
    argv += ["--seq-len", str(kw["seq_len"])]
    if kw.get("kv_len"):
        argv += ["--kv-len", str(kw["kv_len"])]
    argv += ["--head-dim", str(kw["head_dim"]), "--mask", kw["mask"]]
    if kw.get("score_mod"):
        argv += ["--score-mod", kw["score_mod"]]
    if kw.get("dynamic"):
        argv.append("--dynamic")
    if kw.get("mode"):
        argv += ["--mode", kw["mode"]]
    if kw.get("fullgraph"):
        argv.append("--fullgraph")
    if kw.get("kernel_options"):
        argv += ["--kernel-option", kw["kernel_options"]]
    argv += ["--backward" if kw["backward"] else "--no-backward", "--device", kw["device"]]
    return argv


def command(name: str) -> Optional[str]:
    """`flexdoctor warm-cache ...` warming exactly the config ``name``; None when unreadable."""
    kw = _flags(str(name))
    if kw is None:
        return None
    try:
        again = wl.make(**{**kw, "kernel_options": wl.parse_kernel_options(kw.get("kernel_options", ()))})
    except (wl.WorkloadError, TypeError, ValueError):
        return None
    if again.name != name:
        return None
    return " ".join(["flexdoctor", "warm-cache", *(shlex.quote(a) for a in _argv(kw))])


def commands(names) -> Optional[tuple]:
    """One command per recorded config; None when there are none, too many, or one does not read back."""
    names = list(names or ())
    if not names or len(names) > MAX_COMMANDS:
        return None
    out = tuple(command(n) for n in names)
    return None if any(c is None for c in out) else out
