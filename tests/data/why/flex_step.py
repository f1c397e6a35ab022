"""A tiny CPU "training step" for `flexdoctor cache why` tests: torch.compile(flex_attention) on
the config warm-cache warms (fp32, B1, H2, L128, D16, causal, forward only), then variants that
change one thing each. Usage: python flex_step.py VARIANT... (base, bf16, L256, softcap, model,
bypass: a custom post-grad pass that Inductor cannot put in a cache key, so it bypasses the cache)."""
import sys

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def softcap(score, b, h, q_idx, kv_idx):
    return 20.0 * torch.tanh(score / 20.0)


compiled = torch.compile(flex_attention, dynamic=False)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)

    def forward(self, x, block_mask):
        y = self.proj(x)
        return flex_attention(y, y, y, block_mask=block_mask)


for variant in sys.argv[1:]:
    dtype = torch.bfloat16 if variant == "bf16" else torch.float32
    L = 256 if variant == "L256" else 128
    block_mask = create_block_mask(causal, None, None, L, L, device="cpu")
    q, k, v = (torch.randn(1, 2, L, 16, dtype=dtype) for _ in range(3))
    with torch.no_grad():
        if variant == "model":
            out = torch.compile(Block())(q, block_mask)  # the whole module, projection included
        elif variant == "bypass":
            torch._dynamo.reset()  # compile afresh: the inductor config is no Dynamo guard
            with torch._inductor.config.patch(post_grad_custom_post_pass=lambda graph: None):
                out = compiled(q, k, v, block_mask=block_mask)
        else:
            kw = {"score_mod": softcap} if variant == "softcap" else {}
            out = compiled(q, k, v, block_mask=block_mask, **kw)
    print(variant, tuple(out.shape), flush=True)
