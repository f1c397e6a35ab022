"""The structural readers of coverage builder i5 (issue 22, cov12): frequent Hugging Face training/generation stops.

- ``train`` reads two errors the stack raises only when it fails:
  - transformers' Trainer refuses a 4/8-bit model with no trainable adapter ("You cannot perform fine-tuning on purely
    quantized models", trainer.py): the threads settle on attaching LoRA adapters (peft's get_peft_model, unsloth's
    FastLanguageModel.get_peft_model when unsloth is in the frames), not calling merge_and_unload() before training,
    and, for an evaluation/prediction-only run, not going through train().
  - torch's multinomial sampler got inf/nan probabilities ("probability tensor contains either inf, nan or element
    < 0") in generate(do_sample=True): the threads settle on float16 overflow, fixed by loading the model in bfloat16
    (sm80+ GPUs) or float32; when it appears only after fine-tuning, the trained weights hold NaN (loss went nan).
"""

from __future__ import annotations

from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue

_say = catalogue("i5")


def train(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if seen.groups.get("nan"):
        return _answer("unsupported-op", "fp16-overflow", "high", _say("nan.title"), _say("nan.cause"),
                       _say("nan.fix"), ["python -c \"import torch; print(torch.cuda.is_bf16_supported())\""],
                       seen, facts, 20, package="torch")
    unsloth = any("unsloth" in p for p in facts.paths) or "unsloth" in (facts.package or "")
    return _answer("unsupported-op", "quantized-without-adapters", "high", _say("quant.title"), _say("quant.cause"),
                   _say("quant.fix_unsloth" if unsloth else "quant.fix"), ["python -m pip show peft transformers"],
                   seen, facts, 20, package="transformers")
