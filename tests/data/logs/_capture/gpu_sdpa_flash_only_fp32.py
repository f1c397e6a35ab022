# The seed-004 snippet with fp32 inputs: sdp_kernel (deprecated) + flash only -> No available kernel.
import torch
import torch.nn.functional as F
q = torch.randn(1, 8, 1024, 64).cuda()
with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
    output = F.scaled_dot_product_attention(q, q, q)
