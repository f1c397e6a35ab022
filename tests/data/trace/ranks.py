"""Two CPU ranks under torchrun (gloo), for tests/test_trace.py: each rank compiles a tiny function
(backend="eager", so no C++ compile on CPU), runs it, and all-reduces the result.

    torchrun --standalone --nproc-per-node 2 ranks.py
"""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
step = torch.compile(lambda x: (x * 2).sum(), backend="eager")
out = step(torch.ones(4) * (dist.get_rank() + 1))
dist.all_reduce(out)
print("rank", dist.get_rank(), "of", dist.get_world_size(), float(out), flush=True)
dist.destroy_process_group()
