# Eager (uncompiled) flex_attention materialises the B*H*L*S score matrix.
import torch
from torch.nn.attention.flex_attention import flex_attention
q = torch.randn(1, 24, 65536, 128, device="cuda", dtype=torch.bfloat16)
out = flex_attention(q, q, q)
