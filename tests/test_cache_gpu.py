"""On a CUDA GPU: warm one bf16 flex_attention config (forward and backward) into an empty cache,
then a fresh process must hit Inductor's FX graph and AOT-autograd caches."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flexdoctor.cache import manifest as mf


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU")]


def test_gpu_warm_fwd_bwd_then_fresh_process_hits(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    root = tmp_path / "inductor"
    done = subprocess.run([sys.executable, "-m", "flexdoctor", "warm-cache", "--dtype", "bf16", "--head-dim", "128",
                           "--heads", "16", "--seq-len", "2048", "--batch", "2", "--mask", "causal",
                           "--device", "cuda", "--cache-dir", str(root)],
                          capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (cfg,) = mf.read(str(root))["configs"]
    assert cfg["config"]["backward"] is True and cfg["bwd_s"] is not None
    assert cfg["warm_counters"]["fxgraph_cache_miss"] == 0 and cfg["warm_counters"]["fxgraph_cache_hit"] >= 1
    assert cfg["warm_counters"]["autograd_cache_hit"] >= 1
    assert cfg["warm_first_call_s"] < cfg["compile_s"]
    fp = mf.read(str(root))["fingerprint"]
    assert fp["gpu_name"] and fp["triton"] and fp["cuda"]
