"""The structural layer's round-5 readers of tune-e1 (issue 22): errors of the model-loading and fine-tuning
stacks read by their shape, with the remedy the threads establish.

- ``quant``: a bitsandbytes model moved with ``.to()`` after loading. Who moved it decides the fix: accelerate's
  ``dispatch_model`` (a single-device ``device_map``; accelerate 0.21.0 skips ``.to()`` for quantized models,
  commit a9d43cda / PR 1652), the Trainer (``_move_model_to_device``; the 4-bit check came after transformers 4.30,
  transformers issue 24540), or a bitsandbytes older than 0.43.2 (transformers' own message). Other callers are
  the user's code: tune-c3's reading answers them.
- ``dynamo``: a logger call or a ``torch.compiler.disable``d function inside a region compiled with
  ``fullgraph=True`` (torch/_dynamo/variables/misc.py, functions.py).
- ``mps``: Metal's limit of 4 GiB for one array (MPSNDArray.mm), whatever the unified memory.
- ``scaler``: GradScaler (fp16 mixed precision) given fp16 or bf16 trainable parameters.
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer


def _paths(facts: LogFacts, seen: Seen) -> str:
    """The traceback frames' paths of the failure, '/'-separated (Windows paths too)."""
    return "\n".join(facts.paths).replace("\\", "/")


# --- bitsandbytes models moved after loading -------------------------------------------------------------

def quant(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g, paths = seen.groups, _paths(facts, seen)
    if g.get("oldbnb"):
        case = "bnb"
        commands = ['python -m pip install -U "bitsandbytes>=0.43.2"']
    elif "accelerate/big_modeling.py" in paths:
        case = "dispatch"
        commands = ["python -m pip install -U accelerate transformers bitsandbytes"]
    elif "transformers/trainer.py" in paths:
        case = "trainer"
        commands = ["python -m pip install -U transformers" + (" trl" if "/trl/" in paths else "")]
    else:
        return None  # the user's own .to()/.cuda(): tune-c3's reading (c3.mismatch, quant_to) answers
    bits = g.get("bits", "4-bit")
    return _answer("unsupported-op", "device", "high", t(f"structural.e1.quant.title_{case}"),
                   t(f"structural.e1.quant.cause_{case}", bits=bits), t(f"structural.e1.quant.fix_{case}"),
                   commands, seen, facts, 25)


# --- Dynamo: logger calls and disabled functions under fullgraph=True ------------------------------------

_OWN = re.compile(r"\s{0,40}(?:\[rank\d{1,5}\]:\s{0,40})?(?:torch\._dynamo\.exc\.Unsupported:\s{0,4})?'?(?:inline )?")


def dynamo(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """Only the exception's own line (nothing before it but the exception name): a logged graph break
    (TORCH_LOGS=graph_breaks, a W-prefixed record) is the normal, survived case."""
    if not _OWN.fullmatch(seen.text[:seen.start]):
        return None
    g = seen.groups
    qual = g.get("qual", "")
    if qual and not qual.startswith("Logger."):
        case = "skipped"
    elif qual or "Logger" in seen.text[seen.start:seen.end]:
        case = "logger_hint" if g.get("hint") else "logger"  # the hint: torch has config.ignore_logger_methods
    else:
        case = "disabled"
    return _answer("unsupported-op", "dynamo", "high", t(f"structural.e1.dynamo.title_{case}", name=qual[:120]),
                   t(f"structural.e1.dynamo.cause_{case}"), t(f"structural.e1.dynamo.fix_{case}"), [], seen, facts, 25)


# --- MPS: one array over 4 GiB ---------------------------------------------------------------------------

def mps(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    return _answer("unsupported-op", "mps", "high", t("structural.e1.mps.title"), t("structural.e1.mps.cause"),
                   t("structural.e1.mps.fix"), [], seen, facts, 25)


# --- GradScaler on half-precision trainable parameters ---------------------------------------------------

def scaler(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    dtype = "float16" if seen.groups.get("fp16") or seen.groups.get("dtype") == "Half" else "bfloat16"
    return _answer("unsupported-op", "dtype", "high", t("structural.e1.scaler.title", dtype=dtype),
                   t("structural.e1.scaler.cause", dtype=dtype), t("structural.e1.scaler.fix"), [], seen, facts, 25)
