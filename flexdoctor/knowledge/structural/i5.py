"""The structural readers of coverage builder i5 (issue 22, cov12): a frequent Hugging Face training stop.
(torch's multinomial inf/nan is g3-dtype's reading; i5 widened its wording to the one without backticks.)

- ``train``: transformers' Trainer refuses a 4/8-bit model with no trainable adapter ("You cannot perform
  fine-tuning on purely quantized models", trainer.py): the threads settle on attaching LoRA adapters (peft's get_peft_model, unsloth's
    FastLanguageModel.get_peft_model when unsloth is in the frames), not calling merge_and_unload() before training,
    and, for an evaluation/prediction-only run, not going through train().
"""

from __future__ import annotations

from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue

_say = catalogue("i5")


def train(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    unsloth = any("unsloth" in p for p in facts.paths) or "unsloth" in (facts.package or "")
    return _answer("unsupported-op", "quantized-without-adapters", "high", _say("quant.title"), _say("quant.cause"),
                   _say("quant.fix_unsloth" if unsloth else "quant.fix"), ["python -m pip show peft transformers"],
                   seen, facts, 20, package="transformers")
