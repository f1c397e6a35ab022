"""One training step of a small decoder layer compiled whole (`torch.compile(model)`), the way
training scripts compile: projections, flex_attention (GQA, causal) and an MLP in one graph.
Prints one JSON line with the first step's forward and backward seconds (on CPU the forward
only: flex has no backward there).

    python3 benchmarks/model_step.py [--device cuda] [--seq-len 4096] [--layers 2]

The attention shape matches warm-cache's `llm-causal` preset (bf16, 32 query / 8 KV heads, d=128,
L=4096, causal), so the preset's kernels and this model's differ only in what surrounds them.
"""
import argparse
import json
import time

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


class Layer(torch.nn.Module):
    def __init__(self, heads: int, kv_heads: int, head_dim: int):
        super().__init__()
        dim = heads * head_dim
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.norm1 = torch.nn.RMSNorm(dim)
        self.q = torch.nn.Linear(dim, dim, bias=False)
        self.kv = torch.nn.Linear(dim, 2 * kv_heads * head_dim, bias=False)
        self.o = torch.nn.Linear(dim, dim, bias=False)
        self.norm2 = torch.nn.RMSNorm(dim)
        self.up = torch.nn.Linear(dim, 4 * dim, bias=False)
        self.down = torch.nn.Linear(4 * dim, dim, bias=False)

    def forward(self, x, block_mask):
        b, n, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.kv(h).view(b, n, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        a = flex_attention(q.contiguous(), k.contiguous(), v.contiguous(), block_mask=block_mask, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, n, -1))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


class Model(torch.nn.Module):
    def __init__(self, layers: int, heads: int, kv_heads: int, head_dim: int):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer(heads, kv_heads, head_dim) for _ in range(layers))

    def forward(self, x, block_mask):
        for layer in self.layers:
            x = layer(x, block_mask)
        return x


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    args = ap.parse_args()
    dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
    model = Model(args.layers, args.heads, args.kv_heads, args.head_dim).to(args.device, dtype)
    compiled = torch.compile(model)
    mask = create_block_mask(causal, None, None, args.seq_len, args.seq_len, device=args.device)
    x = torch.randn(1, args.seq_len, args.heads * args.head_dim, device=args.device, dtype=dtype)

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    train = args.device != "cpu"  # flex has no backward on CPU (inference only)
    t0 = time.perf_counter()
    with torch.set_grad_enabled(train):
        out = compiled(x, mask)
    sync()
    t1 = time.perf_counter()
    if train:
        out.float().square().mean().backward()
    sync()
    t2 = time.perf_counter()
    print(json.dumps({"fwd_s": round(t1 - t0, 3), "bwd_s": round(t2 - t1, 3) if train else None}), flush=True)


if __name__ == "__main__":
    main()
