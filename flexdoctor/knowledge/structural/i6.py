"""The structural layer's readers of builder i6 (issue 22, coverage cycle): a GPU out of memory answered with the
knobs of the program that ran out, where the program's own wording or frames say which one.

- ``ggml_lead``: llama.cpp's CUDA backend (ggml-cuda.cu "CUDA error 2 at ...: out of memory", "CUDA error: out of
  memory / current device: 0, in function ...", "ggml_backend_cuda_buffer_type_alloc_buffer: ... cudaMalloc failed:
  out of memory") inside ollama, text-generation-webui / llama-cpp-python, or llama.cpp's own tools: fewer layers on
  the GPU and a smaller context, in that program's words (ollama num_gpu / num_ctx; llama.cpp -ngl / -c;
  llama-cpp-python n_gpu_layers / n_ctx). errors.cuda puts it first for its memory category.
- ``ggml``: the cudaMalloc line itself (the shape i6-ggml), answered the same way.
- ``warmup``: TGI's router stopping because the warm-up batch ran out of memory ("Unable to warmup model:
  Generation(\"Allocation on device 0 would exceed allowed memory ...\")" or torch's "CUDA out of memory"): TGI's
  token budgets.
Sources: ggml-org/llama.cpp ggml/src/ggml-cuda (CUDA_CHECK / ggml_backend_cuda_buffer_type_alloc_buffer),
common/arg.cpp (-ngl, --n-gpu-layers, -c, --ctx-size); ollama api/types.go Options (num_gpu, num_ctx) and
docs/modelfile.md (PARAMETER); abetlen/llama-cpp-python llama_cpp/llama.py Llama(n_gpu_layers, n_ctx);
oobabooga/text-generation-webui modules/shared.py (--n-gpu-layers, --n_ctx / --ctx-size);
huggingface/text-generation-inference router/src/main.rs ("Unable to warmup model") and launcher/src/main.rs
(--max-batch-prefill-tokens, --max-total-tokens, --max-input-tokens, --cuda-memory-fraction, --num-shard, --quantize).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue

_say = catalogue("i6")

# llama.cpp's CUDA backend speaks in these words; the program around it in the others (first match wins).
_GGML = re.compile(r"ggml|llama\.cpp|llama_model_load|llm_load_|cudaMalloc failed")
_PROGRAMS = (
    ("ollama", re.compile(r"ollama|llama runner process", re.I)),
    ("textgen", re.compile(r"text-generation-webui|oobabooga|llama[-_]cpp[-_]python|llama_cpp")),
)


def ggml_program(text: str) -> Optional[str]:
    """Which program's llama.cpp ran out of GPU memory on this line: 'ollama', 'textgen' (text-generation-webui /
    llama-cpp-python), 'llamacpp' (its own tools), or None when the line is not llama.cpp's."""
    if not _GGML.search(text):
        return None
    return next((name for name, pat in _PROGRAMS if pat.search(text)), "llamacpp")


def ggml_lead(text: str) -> str:
    """The fix for llama.cpp's CUDA out of memory in the words of the program that runs it; '' when the line is not
    llama.cpp's (then the generic CUDA memory fix stands)."""
    program = ggml_program(text)
    return _say(f"ggml.fix_{program}") if program else ""


def ggml(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    fix = ggml_lead(seen.text) or _say("ggml.fix_llamacpp")
    return _answer("cuda-error", "cudaErrorMemoryAllocation", "high", _say("ggml.title"), t("structural.cuda.memory.cause"),
                   fix, ["nvidia-smi"], seen, facts, 44)


def warmup(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    return _answer("out-of-memory", "cuda", "high", _say("warmup.title"), _say("warmup.cause"), _say("warmup.fix"),
                   ["nvidia-smi"], seen, facts, 44, package="text-generation-inference")
