# Block sizes / stages too large for shared memory (what consumer GPUs hit with the defaults).
import torch
from torch.nn.attention.flex_attention import flex_attention
q = torch.randn(1, 8, 2048, 128, device="cuda", dtype=torch.float16)
f = torch.compile(flex_attention)
out = f(q, q, q, kernel_options={"BLOCK_M": 128, "BLOCK_N": 128, "num_stages": 6})
torch.cuda.synchronize()
print("ok")
