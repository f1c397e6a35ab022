import torch
from torch.nn.attention.flex_attention import flex_attention
q = torch.randn(1, 2, 256, 64, device="cuda", dtype=torch.float16)
out = torch.compile(flex_attention)(q, q, q)
torch.cuda.synchronize()
print("ok", out.shape)
