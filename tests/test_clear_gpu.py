"""On a CUDA GPU: the real writers fill the three caches, and clear-cache's rules identify every
entry they wrote (nothing kept as "not written by torch"), then delete them all.

- Inductor: compiled flex_attention forward and backward (Triton kernels under triton/<device>/,
  generated code, .best_config files, fxgraph/, aotautograd/, locks/, cache/).
- Triton alone: a @triton.jit kernel run with TRITON_CACHE_DIR set (kernel entries and the
  compiled launcher modules).
- ATen: a jiterator op (torch.special.bessel_j0 on CUDA) with PYTORCH_KERNEL_CACHE_PATH set.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flexdoctor.cache import clear
from conftest import needs_cuda


pytestmark = needs_cuda()

WRITE = r"""
import torch, triton, triton.language as tl
from torch.nn.attention.flex_attention import flex_attention, create_block_mask

q, k, v = (torch.randn(1, 4, 512, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
bm = create_block_mask(lambda b, h, qi, kv: qi >= kv, 1, 1, 512, 512, device="cuda")
torch.compile(flex_attention)(q, k, v, block_mask=bm).sum().backward()

@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) + 1, mask=i < n)

x = torch.randn(1000, device="cuda")
y = torch.empty_like(x)
add[(4,)](x, y, 1000, BLOCK=256)
torch.special.bessel_j0(x)  # a jiterator kernel: ATen's NVRTC cache
torch.cuda.synchronize()
print("wrote")
"""


def test_every_entry_the_real_writers_wrote_is_identified_and_deleted(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TRITON_", "PYTORCH_KERNEL"))}
    env.update(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"), PYTORCH_KERNEL_CACHE_PATH=str(tmp_path / "aten"))
    (tmp_path / "aten").mkdir()  # jit_utils.cpp get_cache_dir does not create a PYTORCH_KERNEL_CACHE_PATH itself
    # Inductor points Triton at <inductor>/triton/<device> unless TRITON_CACHE_DIR is set; the
    # standalone @triton.jit kernel then lands there too. Run it once more with its own dir.
    script = tmp_path / "write_caches.py"  # @triton.jit needs its source in a file (not python -c)
    script.write_text(WRITE)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    env2 = dict(env, TRITON_CACHE_DIR=str(tmp_path / "triton"), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "ind2"))
    done = subprocess.run([sys.executable, str(script)], env=env2, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]

    # kinds: never the machine's own ~/.triton/cache (Triton's default when TRITON_CACHE_DIR is unset)
    for cache_env, kinds in ((env, ["inductor", "aten"]), (env2, ["inductor", "triton"])):
        plan = clear.plan(kinds, cache_env)
        for cp in plan.caches:
            if cp.state == "absent":
                continue
            assert cp.kept == [], f"{cp.kind} {cp.path}: kept {cp.kept[:10]}"
        assert plan.count > 0
        if "aten" in kinds:
            aten = next(c for c in plan.caches if c.kind == "aten")
            assert aten.units, "the jiterator op wrote no ATen kernel file"
        out = clear.execute(plan)
        assert out.errors == []
    for top in ("inductor", "triton", "ind2"):
        left = [p for p in (tmp_path / top).rglob("*") if p.is_file()]
        assert left == [], left[:10]
    assert list((tmp_path / "aten").iterdir()) == []
