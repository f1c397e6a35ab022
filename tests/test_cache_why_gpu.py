"""On a CUDA GPU: warm-cache warms one bf16 config (forward and backward) and records its keys;
`flexdoctor cache why` then runs a step that compiles that config (hits, forward and backward),
the same in fp16, with a softcap score_mod, and a module compiled whole (misses, each named)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flexdoctor.cache import keys
from conftest import needs_cuda

STEP = Path(__file__).parent / "data" / "why" / "flex_step.py"
CONFIG = ["--dtype", "bf16", "--heads", "2", "--head-dim", "16", "--seq-len", "128", "--batch", "1",
          "--mask", "causal", "--device", "cuda", "--backward"]


pytestmark = needs_cuda()


def _flexdoctor(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_CACHE_DIR", "TORCH_TRACE")}
    env["PYTHONPATH"] = str(Path(__file__).parents[1]) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True, env=env,
                          timeout=1200)


def test_gpu_warm_then_why_forward_and_backward(tmp_path):
    root = tmp_path / "inductor"
    warm = _flexdoctor("warm-cache", *CONFIG, "--cache-dir", str(root), "--no-measure")
    assert warm.returncode == 0, warm.stdout[-3000:] + warm.stderr[-3000:]
    recorded = keys.load(str(root))
    assert {w.backward for w in recorded} == {False, True}  # the forward and the backward graph

    why = _flexdoctor("cache", "why", "--cache-dir", str(root), "--format", "json", "--",
                      sys.executable, str(STEP), "--device", "cuda", "--dtype", "bfloat16", "--backward",
                      "base", "dtype", "softcap", "model")
    doc = json.loads(why.stdout)
    graphs = doc["graphs"]
    assert [g["status"] for g in graphs] == ["hit", "miss", "miss", "miss"], why.stderr[-3000:]
    lookups = graphs[0]["lookups"]
    assert {(lk["cache"], lk["backward"], lk["state"]) for lk in lookups if lk["cache"] == "fx_graph"} >= {
        ("fx_graph", False, "hit"), ("fx_graph", True, "hit")}
    assert ("dtype", "torch.bfloat16", "torch.float16") in {(d["kind"], d["warmed"], d["now"])
                                                             for d in graphs[1]["differences"]}
    assert [d["kind"] for d in graphs[2]["differences"]] == ["mod_code"]
    assert graphs[3]["whole_model"] and "whole_model" in graphs[3]["reasons"]
