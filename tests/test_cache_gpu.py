"""On a CUDA GPU: warm one bf16 flex_attention config (forward and backward) into an empty cache,
then a fresh process must hit Inductor's FX graph and AOT-autograd caches."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flexdoctor.cache import manifest as mf
from conftest import needs_cuda


pytestmark = needs_cuda()


def test_gpu_warm_fwd_bwd_then_fresh_process_hits(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    root = tmp_path / "inductor"
    done = subprocess.run([sys.executable, "-m", "flexdoctor", "warm-cache", "--dtype", "bf16", "--head-dim", "128",
                           "--heads", "16", "--seq-len", "2048", "--batch", "2", "--mask", "causal",
                           "--device", "cuda", "--cache-dir", str(root), "--no-measure"],
                          capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (cfg,) = mf.read(str(root))["configs"]
    assert cfg["config"]["backward"] is True and cfg["bwd_s"] is not None
    assert cfg["warm_counters"]["fxgraph_cache_miss"] == 0 and cfg["warm_counters"]["fxgraph_cache_hit"] >= 1
    assert cfg["warm_counters"]["autograd_cache_hit"] >= 1
    assert cfg["warm_first_call_s"] < cfg["compile_s"]
    fp = mf.read(str(root))["fingerprint"]
    assert fp["gpu_name"] and fp["triton"] and fp["cuda"]


SMALL = ["--dtype", "bf16", "--head-dim", "64", "--heads", "8", "--kv-heads", "2", "--seq-len", "1024",
         "--mask", "causal", "--device", "cuda"]


def _warm(root, *args, timeout=1800):
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env["CI"] = "1"
    return subprocess.run([sys.executable, "-m", "flexdoctor", "warm-cache", *SMALL, "--cache-dir", str(root),
                           "--no-measure", *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_gpu_each_compile_mode_warms_forward_and_backward_then_skips(tmp_path):
    """Issue 14: every torch.compile mode compiles fwd+bwd on the GPU, is its own cache entry that a
    fresh process hits, and a second identical run starts no torch process."""
    root = tmp_path / "inductor"
    modes = ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]
    done = _warm(root, "--mode", ",".join(modes), "--jobs", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    cfgs = {c["config"]["mode"]: c for c in mf.read(str(root))["configs"]}
    assert sorted(cfgs) == sorted(modes)
    for mode, c in cfgs.items():
        assert c["status"] == "warm (verified)", (mode, c)
        assert c["counters"]["fxgraph_cache_miss"] >= 1, mode  # each mode compiled its own entry
        assert c["bwd_s"] is not None and c["warm_counters"]["autograd_cache_hit"] >= 1, mode
        assert c["warm_counters"]["fxgraph_cache_miss"] == 0, mode
    again = _warm(root, "--mode", ",".join(modes), timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already warm: 4 config(s)" in again.stdout and ": compiling" not in again.stderr


def test_gpu_kernel_options_and_fullgraph_are_part_of_the_identity(tmp_path):
    root = tmp_path / "inductor"
    done = _warm(root, "--kernel-option", "BLOCK_M=64", "--kernel-option", "BLOCK_N=64", "--fullgraph")
    assert done.returncode == 0, done.stdout + done.stderr
    (c,) = mf.read(str(root))["configs"]
    assert c["config"]["kernel_options"] == {"BLOCK_M": 64, "BLOCK_N": 64} and c["config"]["fullgraph"] is True
    assert "BLOCK_M=64,BLOCK_N=64" in c["name"] and "fullgraph" in c["name"]
    assert c["status"] == "warm (verified)"
    plain = _warm(root, timeout=900)  # the same shape without the options is another config: compiled
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "already warm:" not in plain.stdout and len(mf.read(str(root))["configs"]) == 2
