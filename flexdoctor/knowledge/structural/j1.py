"""The structural readers of tuner j1 (issue 22, round 12 train).

- ``contig``: a tensor whose memory layout the op cannot use: ``.view`` on a non-contiguous tensor (ATen's view_impl,
  "Use .reshape(...) instead"), an argument that must be contiguous (checkContiguous, the CHECK_CONTIGUOUS of C++/CUDA
  extensions), a numpy array with negative or non-C strides (torch.from_numpy, Cython buffers). The remedy the
  threads apply: ``.reshape(...)`` for ``.view(...)``, ``.contiguous()`` before the call, ``np.ascontiguousarray`` /
  ``.copy()`` for arrays.
- ``capability``: vLLM refuses a quantization whose kernels need a newer GPU ("Minimum capability: 80. Current
  capability: 70", compressed-tensors' "Min capability: 80"): the fix names both GPUs' compute capability and
  architecture (j1_tables.toml [arch]) and the formats that vLLM can serve on this GPU (j1_tables.toml [quant]).
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue
from .tables import _load

_say = catalogue("j1")
_ARG = re.compile(r"(?:\b|^)([A-Za-z_][\w.]{0,40}) must be contiguous")


def _table() -> dict:
    return _load("j1_tables.toml")  # _load caches each file


def contig(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("np") is not None:
        form = "np"
    elif "view size" in seen.text:
        form = "view"
    else:
        form = "arg"
    arg = g.get("arg")
    if form == "arg" and not arg:
        m = _ARG.search(seen.text)
        if not m:
            return None  # "must be contiguous" with no argument named: prose, not a check
        arg = m.group(1)
    arg = arg if arg and re.fullmatch(r"[A-Za-z_][\w.]{0,40}", arg) else "x"
    return _answer("unsupported-op", "non-contiguous", "high", _say(f"contig.title_{form}", arg=arg),
                   _say(f"contig.cause_{form}", arg=arg), _say(f"contig.fix_{form}", arg=arg), [], seen, facts, 20,
                   package="torch")


def _cc(n: int) -> str:
    return f"{n // 10}.{n % 10}"


def _arch(n: int) -> str:
    for row in _table()["arch"]:
        if row["min"] <= n <= row["max"]:
            return row["name"]
    return "?"


def capability(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """vLLM's quantization refused on this GPU (j1-qcap, and g2-quant's vLLM form)."""
    g = seen.groups
    need, have = g.get("need") or "", g.get("have") or ""
    if not (re.fullmatch(r"\d{2,3}", need) and re.fullmatch(r"\d{2,3}", have)):
        return None
    n, h = int(need), int(have)
    method = g.get("qm") or ""
    method = method if re.fullmatch(r"[\w-]{1,40}", method) else "compressed-tensors"
    alts = [f"{r['name']} ({_cc(r['min'])}+)" for r in _table()["quant"]
            if r["min"] <= h and r["name"].lower() != method.lower()]
    alts.append(_say("qcap.fp16"))
    kw = dict(method=method, need=_cc(n), have=_cc(h), sm_need=need, sm_have=have, arch_need=_arch(n),
              arch_have=_arch(h), alts=", ".join(alts))
    return _answer("unsupported-op", "quantization capability", "high", _say("qcap.title", **kw),
                   _say("qcap.cause", **kw), _say("qcap.fix", **kw), [], seen, facts, 21, package="vllm")


def vllm_oom(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """vLLM V1's warm-up out of memory: h3's vLLM reading (its memory flags), also when the frames are cut off (the
    wording is vLLM's own)."""
    from . import h3
    from ...text import t

    return h3.oom(seen, facts) or _answer(
        "out-of-memory", "cuda", "medium", t("structural.title.oom", dev="cuda"), t("structural.oom.cuda.cause"),
        catalogue("h3")("oom.fix_vllm"), [], seen, facts, 46, package="vllm")
