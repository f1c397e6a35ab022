"""The structural layer's round-4 readers of tune-c3 for attention libraries: transformers' choice of
attention implementation, and flash-attn's own run-time checks.

- transformers (``hf``): ``<Model> does not support Flash Attention 2.0 yet`` -> attn_implementation="sdpa";
  ``... does not support an attention implementation through torch.nn.functional.scaled_dot_product_attention
  yet`` -> "eager"; ``... through torch's flex_attention`` -> "sdpa"/"eager"; ``Specified
  `attn_implementation="..."` is not supported``; ``FlashAttention{n} has been toggled on, but it cannot be
  used due to the following error: ...`` (package missing, too old, no GPU, compute capability too low) in
  the wording of 4.48+ (the 4.36-4.47 wording is answered by entries FDE722/FDE723); the fp16/bf16 dtype
  check; "PyTorch SDPA requirements in Transformers are not met". Cases from c3_tables.toml [[hf]].
- flash-attn (``flash``): the backward's head-dim limit on consumer GPUs, the bare ``is_sm80 || is_sm90``
  checks (flash-attn 1.x and torch 2.0.0's own FlashAttention copy), varlen ``cu_seqlens`` checks, the
  (batch, seqlen, nheads, headdim) layout, GQA head counts, FlashAttention-3 on a GPU that is not Hopper.
  Cases from c3_tables.toml [[flash]].
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer
from .tables import _load

_VERSIONS = 'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"'


def _case(table: str, text: str) -> Optional[str]:
    return next((r["case"] for r in _load("c3_tables.toml")[table] if r["literal"] in text), None)


# --- transformers ----------------------------------------------------------------------------------

_IMPL = re.compile(r"[A-Za-z0-9_|/.-]{1,80}")


def hf(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """transformers refused the attention implementation asked for: the one to ask for instead."""
    case = _case("hf", seen.text)
    if case is None:
        return None
    g = seen.groups
    fa = g.get("fa") or "2"
    named = re.search(r"([A-Za-z_]\w{0,119})$", seen.text[max(0, seen.start - 120):seen.start])
    model = named.group(1) if named and not g.get("arch") else t("structural.c3.hf.word.this_model")
    kind, subject, commands = "unsupported-op", "attn_implementation", []
    if case == "fa_missing":
        kind, subject = "missing-module", "flash_attn_3" if fa == "3" else "flash_attn"
        commands = [_VERSIONS] + (["python -m pip install flash-attn --no-build-isolation"] if fa == "2" else [])
    elif case == "fa_old":
        kind, subject = "version-constraint", "flash-attn"
        commands = ["python -m pip install --upgrade flash-attn --no-build-isolation"]
    elif case in ("fa_cpu", "fa_cc", "torch_old"):
        commands = [_VERSIONS]
    impl = (g.get("impl") or "").strip('"')
    words = {"model": model, "fa": fa, "impl": impl if _IMPL.fullmatch(impl) else impl[:80], "need": g.get("cc") or "?",
             "spec": g.get("spec") or "torch"}
    if case == "unknown_impl" and not _IMPL.fullmatch(impl):
        case = "quoted_impl"  # attn_implementation="'eager'": quotes or spaces inside the value
    return _answer(kind, subject, "high", t(f"structural.c3.hf.title.{case}", **words),
                   t(f"structural.c3.hf.cause.{case}", **words), t(f"structural.c3.hf.fix.{case}", **words),
                   commands, seen, facts, 28, "transformers")


# --- flash-attn ------------------------------------------------------------------------------------

def flash(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """flash-attn's (or torch's FlashAttention's) own check refused the call: what to change."""
    case = _case("flash", seen.text)
    if case is None:
        return None
    g = seen.groups
    if case == "sm80_check":
        # "is_sm8x" in the check: any Ampere+ GPU passes, so the GPU is older; "is_sm80" alone: the
        # backward of a large head dim on sm86/sm89 (flash-attn 1.x, torch 2.0.0's FlashAttention copy)
        older = "sm8x" in seen.text
        in_torch = not older and (facts.package in (None, "torch") and "flash_attn" not in " ".join(facts.paths))
        case = "pre_ampere" if older else "sm80_torch" if in_torch else "sm80_flash"
    elif case == "bwd_headdim" and "> 192" in seen.text:
        case = "bwd_headdim_old"  # flash-attn <= 2.5.4: every head dim > 192 (2.5.5 allows 256 without dropout)
    arg = "cu_seqlens_" + g["qk"] if g.get("qk") else _shape_arg(seen) if case == "shape" else "q"
    subject = {"fa3_hopper": "flash-attn-3", "cutlass": "memory-efficient"}.get(case, "flash-attn")
    commands = ["python -m pip install --upgrade flash-attn --no-build-isolation"] if case in (
        "bwd_headdim_old", "sm80_flash") else []
    if case in _ARCH_CASES:
        commands.append('python -c "import torch; print(torch.cuda.get_device_name(), torch.cuda.get_device_capability())"')
    return _answer("unsupported-op", subject, "high", t(f"structural.c3.flash.title.{case}", arg=arg),
                   t(f"structural.c3.flash.cause.{case}", arg=arg), t(f"structural.c3.flash.fix.{case}", arg=arg),
                   commands, seen, facts, 28)


def _shape_arg(seen: Seen) -> str:
    """The tensor CHECK_SHAPE named: the word before " must have shape (" (q, k, v, out, dout, ...)."""
    m = re.search(r"\b(q|k|v|query|key|value|out|dout|qkv|kv|softmax_lse)$", seen.text[max(0, seen.start - 20):seen.start])
    return m.group(1) if m else "q"


# the cases decided by the GPU's architecture: the command prints it
_ARCH_CASES = {"bwd_headdim", "bwd_headdim_old", "pre_ampere", "sm80_torch", "sm80_flash", "fa3_hopper", "cutlass"}


# --- diffusers' attention backends -----------------------------------------------------------------

_REQ = re.compile(r"[A-Za-z][\w.-]{0,40}(?:[<>=!~]=?[\w.*+-]{1,20}){0,2}")


def diffusers(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """diffusers' backend check: the package (and version) it names, or the native backend."""
    g = seen.groups
    backend, req = g.get("backend", ""), g.get("req") or ""
    if backend == "flex" or not re.fullmatch(r"[\w-]{1,40}", backend):
        return None  # flex: entry FDE's (torch older than 2.5)
    case = "fa3" if g.get("fa3") else "install" if _REQ.fullmatch(req) else None
    if case is None:
        return None
    commands = []
    if case == "install":
        extra = " --no-build-isolation" if req.startswith("flash-attn") else ""
        commands = [f'python -m pip install "{req}"{extra}']
    return _answer("missing-module", backend, "high", t("structural.c3.diffusers.title", backend=backend),
                   t(f"structural.c3.diffusers.cause_{case}", backend=backend, req=req),
                   t(f"structural.c3.diffusers.fix_{case}", backend=backend, req=req), commands + [_VERSIONS],
                   seen, facts, 28, "diffusers")
