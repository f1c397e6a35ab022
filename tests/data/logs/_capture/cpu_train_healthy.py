# A small, successful CPU training run with compiled flex_attention, SDPA and activation checkpointing
# (harmless warnings included). Output is tests/data/logs/healthy/cpu_train_flex_sdpa.log.
import torch, torch.nn as nn, torch.nn.functional as F, warnings
from torch.nn.attention.flex_attention import flex_attention, create_block_mask
from torch.utils.checkpoint import checkpoint
torch.manual_seed(0)
flex = torch.compile(flex_attention)
def causal(b, h, q, kv): return q >= kv
bm = create_block_mask(causal, None, None, 128, 128, device="cpu")
lin = nn.Linear(64, 64)
opt = torch.optim.AdamW(lin.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(2, 4, 128, 64)
    with torch.no_grad():
        y = flex(x, x, x, block_mask=bm)
    h = checkpoint(lambda t: F.scaled_dot_product_attention(lin(t), t, t, is_causal=True), x.requires_grad_())
    loss = (h - y).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    print(f"step {step}: loss {loss.item():.4f} lr 1.0e-03 it/s 3.2")
print("Training complete. Saved checkpoint to ./out/model.safetensors")
