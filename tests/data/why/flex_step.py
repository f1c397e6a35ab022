"""A tiny "training step" for `flexdoctor cache why` tests: torch.compile(flex_attention) called the
way warm-cache's worker calls it for one config (B1, H2, L128, D16, causal; --dtype, --device,
--backward as given), then variants that change one thing each.

    python flex_step.py [--device cpu|cuda] [--dtype float32|bfloat16|float16] [--backward] VARIANT...

Variants: base (the warmed config), dtype (the other float type: float32 <-> bfloat16 on CPU,
bfloat16 <-> float16 on GPU), bf16 (alias of dtype on CPU), L256 (sequence length 256), softcap (a
score_mod), model (a module compiled whole: a projection before flex_attention), bypass (a custom
post-grad pass, which Inductor cannot put in a cache key: the cache is bypassed).
"""
import argparse

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def softcap(score, b, h, q_idx, kv_idx):
    return 20.0 * torch.tanh(score / 20.0)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x, block_mask):
        y = self.proj(x)
        return flex_attention(y, y, y, block_mask=block_mask)


OTHER = {"float32": "bfloat16", "bfloat16": "float16", "float16": "bfloat16"}

ap = argparse.ArgumentParser()
ap.add_argument("--device", default="cpu")
ap.add_argument("--dtype", default="float32")
ap.add_argument("--backward", action="store_true")
ap.add_argument("variants", nargs="+")
args = ap.parse_args()
compiled = torch.compile(flex_attention, dynamic=False)  # what warm-cache compiles for static shapes

for variant in args.variants:
    name = OTHER[args.dtype] if variant in ("dtype", "bf16") else args.dtype
    dtype = getattr(torch, name)
    L = 256 if variant == "L256" else 128
    block_mask = create_block_mask(causal, None, None, L, L, device=args.device)
    q, k, v = (torch.randn(1, 2, L, 16, device=args.device, dtype=dtype, requires_grad=args.backward)
               for _ in range(3))
    with torch.set_grad_enabled(args.backward):
        if variant == "model":
            block = Block().to(device=args.device, dtype=dtype)
            out = torch.compile(block)(q, block_mask)  # the whole module, projection included
        elif variant == "bypass":
            torch._dynamo.reset()  # compile afresh: the inductor config is no Dynamo guard
            with torch._inductor.config.patch(post_grad_custom_post_pass=lambda graph: None):
                out = compiled(q, k, v, block_mask=block_mask)
        else:
            kw = {"score_mod": softcap} if variant == "softcap" else {}
            out = compiled(q, k, v, block_mask=block_mask, **kw)
        if args.backward:
            out.backward(torch.ones_like(out))
    if args.device == "cuda":
        torch.cuda.synchronize()
    print(variant, tuple(out.shape), flush=True)
