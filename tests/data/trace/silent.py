"""A tiny script with the failures `flexdoctor trace` must report, each one chosen on the command
line (tests/test_trace.py; tests/fixtures/trace/silent_cpu/ was recorded from it):

    python silent.py [eager_flex] [limit] [graph_break] [dynamic] [train]

eager_flex   flex_attention called without torch.compile (twice, two sequence lengths)
limit        torch._dynamo.config.recompile_limit = 2, then one function called with 4 dtypes: the
             third dtype hits the limit and the frame runs uncompiled from then on
graph_break  print() inside a compiled function
dynamic      one compiled function called with 3 sequence lengths: Dynamo recompiles it with a
             dynamic size (automatic dynamic shapes)
train        3 optimizer steps of a compiled linear layer (backward calls, optimizer steps)

Compiles use backend="eager" except where Inductor is the point, so the test stays fast on CPU.
"""
import sys

import torch

wanted = set(sys.argv[1:])

if "eager_flex" in wanted:
    from torch.nn.attention.flex_attention import flex_attention

    for L in (64, 128):
        q = torch.randn(1, 2, L, 16)
        flex_attention(q, q, q)

if "limit" in wanted:
    torch._dynamo.config.recompile_limit = 2

    @torch.compile(backend="eager")
    def scaled(x):
        return (x * 2).sum()

    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        scaled(torch.ones(4, dtype=dtype))

if "graph_break" in wanted:
    @torch.compile(backend="eager")
    def noisy(x):
        y = x + 1
        print("inside the compiled function")
        return y * 2

    noisy(torch.ones(3))

if "dynamic" in wanted:
    @torch.compile(backend="eager")
    def pooled(x):
        return x.mean(dim=1)

    for L in (8, 16, 32):
        pooled(torch.ones(2, L))

if "train" in wanted:
    layer = torch.nn.Linear(4, 4)
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    step = torch.compile(lambda x: layer(x).relu().sum(), backend="eager")
    for _ in range(3):
        loss = step(torch.randn(2, 4))
        loss.backward()
        opt.step()
        opt.zero_grad()
print("silent: done", sorted(wanted), flush=True)
