"""The structural layer's readers of tune-i1 (issue 22, coverage by frequency): PyTorch's own checks of the user's code
and data, the errors people paste most often from plain training loops (i1_tables.toml [[usercode]], each row sourced).

- ``root``: where no rule named the error, the root exception's message read against the table (no trigger: the
  exception line is read by the context layer already): a Linear fed the wrong number of features, a batch of samples
  of different sizes, a class label outside 0..C-1, logits and targets of different batch sizes, an RGBA/grayscale
  image into a 3-channel conv, ``view`` on a non-contiguous tensor, a reshape that does not divide, an image without
  its batch dimension, an in-place update of a parameter, a tensor used as a bool, and an empty checkpoint file.
- ``line``: the same checks pasted without their exception name ("Error processing x.jpg :Given groups=1, ...",
  "**RuntimeError: view size ...**"), read by the line itself.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from ...model import Fix
from .model import Answer
from .readers import catalogue
from .tables import _load

_say = catalogue("i1")

_SUBJECT = {"target": "labels", "leaf": "autograd", "ambiguous": "autograd", "eof": "checkpoint-file"}


@functools.lru_cache(maxsize=1)
def _rows() -> tuple:
    return tuple((r["id"], frozenset(r["exc"]), re.compile(r["msg"])) for r in _load("i1_tables.toml")["usercode"])


def _dims(text: str) -> list:
    return [int(x) for x in re.findall(r"\d{1,12}", text or "")]


def _channels(g: dict) -> tuple:
    want, got = int(g["want"]), int(g["got"])
    dims = _dims(g.get("input"))
    if want == 3 and got == 4:
        return "channels_rgba", {}
    if want == 3 and got == 1:
        return "channels_gray", {}
    if want == 1 and got in (3, 4):
        return "channels_to_gray", {}
    if len(dims) == 4 and dims[-1] == want:
        return "channels_nhwc", {"want": want, "got": got}
    return "channels_other", {"want": want, "got": got}


def _eof(log: LogFacts) -> tuple:
    paths = " ".join(log.paths).replace("\\", "/")
    if "multiprocessing/" in paths and ("spawn.py" in paths or "reduction.py" in paths):
        return "eof_spawn", {}
    return "eof_file", {}


def _words(rid: str, g: dict, log: LogFacts) -> tuple:
    """The fix's catalogue key and its fields for one table row, from the numbers the message carries."""
    if rid == "linear":
        return "linear", {"b": g["b"], "c": g["c"], "d": g["d"]}
    if rid == "stack":
        a, b = _dims(g.get("a")), _dims(g.get("b"))
        rgb = len(a) == len(b) == 3 and a[1:] == b[1:] and {a[0], b[0]} <= {1, 3, 4}
        return ("stack_channels" if rgb else "stack"), {"a": g.get("a") or "", "b": g.get("b") or ""}
    if rid == "target":
        return ("target_negative" if g["t"].startswith("-") else "target"), {"t": g["t"]}
    if rid == "batch":
        i, t = int(g["i"]), int(g["t"])
        ratio = i // t if t and i % t == 0 and i > t else None
        return ("batch_ratio" if ratio else "batch"), {"i": i, "t": t, "ratio": ratio}
    if rid == "channels":
        return _channels(g)
    if rid == "invalid_shape":
        return "invalid_shape", {"shape": g["shape"], "size": g["size"]}
    if rid == "eof":
        return _eof(log)
    return rid, {}


def _build(rid: str, g: dict, line: int, text: str, log: LogFacts) -> Answer:
    key, kw = _words(rid, g, log)
    return Answer("unsupported-op", _SUBJECT.get(rid, "shape"), "medium", _say(f"{rid}.title"), _say("cause"),
                  Fix(_say(f"fix.{key}", **kw), ()), line, text[:300], rank=40, package=log.package,
                  facts=log.to_dict())


def root(log: LogFacts) -> Optional[Answer]:
    """The reading of the root exception when it is one of PyTorch's checks of the user's code or data, else None."""
    if log.root is None:
        return None
    line, exc, msg, text = log.root
    short = exc.split(".")[-1]
    for rid, types, pattern in _rows():
        m = pattern.search(msg or "") if short in types else None
        if m is not None:
            return _build(rid, m.groupdict(), line, text, log)
    return None


_CONV = re.compile(r"weight of size \[[\d, ]{1,60}\], expected input\[(?P<input>[\d, ]{1,60})\] to have "
                   r"(?P<want>\d{1,6}) channels, but got (?P<got>\d{1,6}) channels instead")


def line(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    m = _CONV.match(g.get("conv") or "")
    if m is not None:
        return _build("channels", m.groupdict(), seen.line, seen.text, facts)
    if g.get("view"):
        return _build("view", g, seen.line, seen.text, facts)
    return None
