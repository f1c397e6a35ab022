"""The structural layer's round-4 readers of tune-c3: tensors that do not fit together, and compile at run time.

- dtype and device mismatches (``mismatch``): every way ATen says two tensors of one op differ in dtype
  ("expected scalar type Half but found Float", "expected mat1 and mat2 to have the same dtype, but got:
  float != c10::BFloat16", "Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor)
  should be the same", "Found dtype Long but expected Float", ...) or in device ("Expected all tensors to
  be on the same device, but found at least two devices, cuda:0 and cpu!", "... but got index is on cpu,
  different from other tensors on cuda:0", "Input and parameter tensors are not at the same device",
  "Placeholder storage has not been allocated on MPS device!"). The two dtypes are read from the message
  and classed from ``c3_tables.toml`` [[dtype]] (a float precision mix, a float64 from NumPy, integer
  where float is expected or the reverse); the devices name the remedy (inputs to the model's device, a
  model spread over GPUs, weights left on the meta device).
- Dynamo at run time (``dynamo``): ``torch._dynamo.exc.Unsupported`` (a graph break made fatal by
  fullgraph=True, torch.export or a higher-order op such as flex_attention's score_mod), FX tracing a
  compiled function, a CUDA-graph output read after the next replay.
- Triton's fp8 types by GPU (``fp8``): which fp8 format the kernel asked for and which the GPU has.
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from . import b3
from .readers import _answer
from .tables import _load


def _rows(table: str) -> list[dict]:
    return _load("c3_tables.toml")[table]


# --- dtypes and devices -----------------------------------------------------------------------------

_TYPE_PREFIX = re.compile(r"^(?:torch\.(?:cuda\.)?|c10::|CPU|CUDA|MPS|XPU)")


def dtype_of(word: Optional[str]) -> Optional[dict]:
    """The [[dtype]] row of a dtype as a message spells it (``c10::Half``, ``torch.cuda.HalfTensor``,
    ``CPUBFloat16Type``, ``long int``, ``torch.float16``)."""
    if not word:
        return None
    low = word.strip().lower()
    bare = _TYPE_PREFIX.sub("", word.strip())
    bare = re.sub(r"(?:Tensor|Type)$", "", bare).lower()
    for row in _rows("dtype"):
        if low in row["words"] or bare in row["words"] or low.startswith("c10::") and low[5:] in row["words"]:
            return row
    return None


def device_of(word: Optional[str]) -> Optional[str]:
    """The device a message names: ``cuda:0``, ``cpu``, ``mps``; a legacy type names it too
    (``torch.cuda.FloatTensor`` is on CUDA, ``torch.FloatTensor`` on the CPU, ``MPSFloatType`` on MPS)."""
    if not word:
        return None
    w = word.strip()
    low = w.lower()
    if re.fullmatch(r"(?:cuda|cpu|mps|xpu|meta|hpu|npu)(?::\d{1,3})?", low):
        return low
    if re.fullmatch(r"\d{1,3}", low):  # "but device 1 does not equal 0" (torch 1.x): GPU indices
        return f"cuda:{low}"
    if low in ("gpu",):
        return "cuda"
    if low.startswith("torch.cuda.") or w.startswith("CUDA"):
        return "cuda"
    if w.startswith("MPS"):
        return "mps"
    if w.startswith("XPU"):
        return "xpu"
    if low.startswith("torch.") and low.endswith("tensor") or w.startswith("CPU"):
        return "cpu"
    return None


def _kind_of(dev: Optional[str]) -> str:
    return (dev or "").split(":")[0]


def mismatch(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """Two tensors of one op differ in device or dtype (a legacy type such as torch.cuda.HalfTensor names both)."""
    g = seen.groups
    host = next((case for case in _HOST_CASES if g.get(case)), None)
    if host:
        return _answer("unsupported-op", "device", "high", t(f"structural.c3.title.{host}"),
                       t(f"structural.c3.cause.{host}", dev=g.get(host, "")), t(f"structural.c3.fix.{host}"), [],
                       seen, facts, 30)
    if g.get("mps"):
        return _device_answer(seen, facts, "cpu", "mps")  # "Placeholder storage has not been allocated on MPS device!"
    if g.get("idx_dev"):  # "indices should be either on cpu or on the same device as the indexed tensor (cpu)"
        idx = device_of(g["idx_dev"]) or "cpu"
        return _device_answer(seen, facts, "cuda" if idx == "cpu" else "cpu", idx)
    if g.get("dev1"):
        return _device_answer(seen, facts, device_of(g["dev1"]) or "cpu", device_of(g.get("dev2")) or "cuda")
    if g.get("got_dev") or g.get("want_dev"):
        return _device_answer(seen, facts, device_of(g.get("got_dev")) or "cpu", device_of(g.get("want_dev")) or "cuda")
    if g.get("conv"):
        a, b = device_of(g.get("got")), device_of(g.get("want"))
        if a and b and a != b:
            return _device_answer(seen, facts, a, b)
    return _dtype_answer(seen, facts)


# Device errors that name one tensor's place, not a pair: NumPy conversion of a GPU tensor or of one that
# requires grad (torch/csrc/utils/tensor_numpy.cpp), torch.load of CUDA storages where no (such) GPU is
# (torch/serialization.py validate_cuda_device), copying a module out of the meta device
# (aten/src/ATen/native/TensorConversions.cpp / torch/nn/modules/module.py to_empty advice), moving a model that
# transformers/accelerate placed at load time (a bitsandbytes/HQQ-quantized one, one with offloaded modules).
_HOST_CASES = ("numpy_dev", "numpy_grad", "load_nocuda", "load_count", "meta_copy", "quant_to", "offloaded",
               "generator")


def _device_answer(seen: Seen, facts: LogFacts, a: str, b: str) -> Answer:
    kinds = {_kind_of(a), _kind_of(b)}
    if "meta" in kinds:
        case = "meta"
    elif kinds == {"cuda"} or kinds == {"xpu"}:
        case = "gpus"
    else:
        case = "host"
    accel = next((d for d in (a, b) if _kind_of(d) not in ("cpu", "meta")), "cuda")
    pair = f"{a} / {b}"
    return _answer("unsupported-op", "device", "high", t("structural.c3.title.device", pair=pair),
                   t(f"structural.c3.cause.device_{case}", pair=pair),
                   t(f"structural.c3.fix.device_{case}", dev=_kind_of(accel)), [], seen, facts, 30)


def _dtype_pair(g: dict) -> tuple[Optional[dict], Optional[dict]]:
    return dtype_of(g.get("got")), dtype_of(g.get("want"))


def _dtype_case(got: dict, want: dict, g: dict) -> str:
    fam = {got["family"], want["family"]}
    if g.get("mask"):
        return "mask"
    if want["family"] == "int" and got["family"] != "int":
        return "want_int"
    if got["family"] in ("int", "byte", "bool") and want["family"] in ("float", "double"):
        return "want_float"
    if "double" in fam:
        return "double"
    if fam == {"float"}:
        return "precision"
    return "other"


def _dtype_answer(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    hint = {"dev_hint": "mps" if facts.platform == "macos" else "cuda"}
    if g.get("ovf"):  # "value cannot be converted to type at::Half without overflow": a fill value too big
        row = dtype_of(g["ovf"])
        shown = row["torch"] if row else g["ovf"]
        return _answer("unsupported-op", "dtype", "high", t("structural.c3.title.overflow", dtype=shown),
                       t("structural.c3.cause.overflow", dtype=shown), t("structural.c3.fix.overflow", **hint), [],
                       seen, facts, 30)
    got, want = _dtype_pair(g)
    if got is None or want is None:
        if not g.get("nodtypes"):
            return None
        # the message names no dtypes ("mat1 and mat2 must have the same dtype", "query and key must have the same
        # dtype"): the remedy of a precision mix, without claiming which two
        return _answer("unsupported-op", "dtype", "high", t("structural.c3.title.dtype_unnamed"),
                       t("structural.c3.cause.dtype_unnamed"), t("structural.c3.fix.dtype_unnamed", **hint), [],
                       seen, facts, 30)
    case = _dtype_case(got, want, g)
    names = {"got": got["torch"], "want": want["torch"], "cast": want["cast"], **hint}
    return _answer("unsupported-op", "dtype", "high", t("structural.c3.title.dtype", **names),
                   t(f"structural.c3.cause.dtype_{case}", **names), t(f"structural.c3.fix.dtype_{case}", **names),
                   [], seen, facts, 30)


# --- Dynamo at run time -----------------------------------------------------------------------------

_LINE_START = re.compile(r"\s{0,40}(?:\[rank\d{1,5}\]:\s{0,40})?")


def own_exception(seen: Seen) -> bool:
    """The match starts the line (after spaces or a ``[rankN]:`` prefix): the line is that exception, not a
    logger's record quoting it (``W1120 ... torch._dynamo.exc.Unsupported: ...``)."""
    return bool(_LINE_START.fullmatch(seen.text[:seen.start]))


def lowering(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A bare ``LoweringException: AssertionError: ...`` line: Inductor's error, read as b3 reads it."""
    return b3.inductor_internal(seen, facts) if own_exception(seen) else None


def dynamo(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("dexc") and not own_exception(seen):
        return None
    if g.get("fx"):
        return _answer("unsupported-op", "dynamo", "high", t("structural.c3.title.fx"), t("structural.c3.cause.fx"),
                       t("structural.c3.fix.fx"), [], seen, facts, 30)
    if g.get("cg"):
        return _answer("unsupported-op", "cudagraphs", "high", t("structural.c3.title.cudagraphs"),
                       t("structural.c3.cause.cudagraphs"), t("structural.c3.fix.cudagraphs"), [], seen, facts, 30)
    msg = g.get("dmsg", "")
    case = next((r["case"] for r in _rows("dynamo") if r["literal"] in msg), None)
    if case is None and g.get("dexc") == "UserError":
        return None  # another UserError (torch.export's own checks): not a graph break
    shown = msg[:160]
    # a higher-order op (torch.cond, flex_attention's score_mod, associative_scan) must capture its function whole
    which = "dynamo_hop" if g.get("dexc") == "UncapturedHigherOrderOpError" else "dynamo"
    hint = "" if which == "dynamo_hop" and case is None else t(f"structural.c3.dynamo.{case or 'generic'}")
    return _answer("unsupported-op", "dynamo", "high", t("structural.c3.title.dynamo", msg=shown),
                   t(f"structural.c3.cause.{which}"), t(f"structural.c3.fix.{which}", hint=hint), [], seen, facts, 30)


# --- Triton's fp8 formats ---------------------------------------------------------------------------

def fp8(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    name = seen.groups.get("fp8", "")
    row = next((r for r in _rows("fp8") if r["name"] == name), None)
    if row is None:
        return None
    ok = seen.groups.get("ok") or ""
    amd = "fp8e4b8" in ok or "fp8e5b16" in ok  # MI300's Triton lists the fnuz formats
    nvidia = "fp8e4b15" in ok or not (ok or facts.rocm)  # NVIDIA's Triton lists fp8e4b15 below sm90
    case = "amd" if amd else "hopper" if name == "fp8e4b15" else "old_gpu" if name == "fp8e4nv" and nvidia else "other"
    return _answer("unsupported-op", name, "high", t("structural.c3.title.fp8", fp8=name, torch=row["torch"]),
                   t("structural.c3.cause.fp8", fp8=name, torch=row["torch"], needs=row["needs"], ok=ok or "?"),
                   t(f"structural.c3.fix.fp8_{case}", fp8=name, torch=row["torch"], ok=ok or "?"),
                   ['python -c "import torch; print(torch.cuda.get_device_name(), torch.cuda.get_device_capability())"'],
                   seen, facts, 30)


# --- torch APIs by release --------------------------------------------------------------------------

def torch_api(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """An attribute of torch that the installed release does not have yet: the release that added it."""
    mod, attr = "torch." + seen.groups.get("mod", ""), seen.groups.get("attr", "")
    row = next((r for r in _rows("torch_api") if r["module"] == mod and r["name"] == attr), None)
    if row is None:
        return None
    words = {"api": f"{mod}.{attr}", "since": row["since"], "alt": row["alt"], "torch": facts.torch or "?"}
    fix = t("structural.c3.api.fix_alt" if row["alt"] else "structural.c3.api.fix", **words)
    return _answer("version-constraint", "torch", "high", t("structural.c3.api.title", **words),
                   t("structural.c3.api.cause", **words), fix,
                   ['python -c "import torch; print(torch.__version__, torch.version.cuda)"'], seen, facts, 20)
