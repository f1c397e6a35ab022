"""`flexdoctor trace` on a CUDA GPU (issue 23; run on the GPU machine, skipped elsewhere): a warm
compiled flex step under trace, where Inductor's compile-worker pool (Triton) starts and is shut
down after the script's last line; the pool's shutdown is its own exit phase, the advice names
TORCHINDUCTOR_COMPILE_THREADS=1, and --measure times the command with it.

    PYTHONPATH=$PWD python3 -m pytest -q tests/test_trace_gpu.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import needs_cuda

pytestmark = needs_cuda()

HERE = Path(__file__).parent
STEP = HERE / "data" / "why" / "flex_step.py"


def _cli(*args, timeout=1200):
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TORCHINDUCTOR_COMPILE_THREADS", None)
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def test_warm_gpu_step_times_the_pool_and_measures_the_advice(tmp_path):
    cache = str(tmp_path / "cache")
    step = ["--", sys.executable, str(STEP), "--device", "cuda", "--dtype", "bfloat16", "--backward", "base"]
    first = _cli("trace", "--cache-dir", cache, "--format", "json", *step)  # cold: fills the cache
    assert json.loads(first.stdout)["returncode"] == 0, first.stderr[-3000:]
    done = _cli("trace", "--cache-dir", cache, "--format", "json", "--measure", *step)
    doc = json.loads(done.stdout)
    assert doc["returncode"] == 0, done.stderr[-3000:]
    assert [g["status"] for g in doc["cache"]["graphs"]] == ["hit"]
    main = doc["processes"][0]
    names = {ph["name"]: ph["seconds"] for ph in main["phases"]}
    assert names.get("exit_pool", 0) > 0 and names.get("first_backward", 0) >= 0
    assert main["first_forward_end"] == "backward"
    assert sum(names.values()) == __import__("pytest").approx(doc["wall_s"], rel=1e-3)
    advice = {a["code"]: a for a in doc["advice"]}
    pool = advice["compile_threads"]
    assert pool["env"] == {"TORCHINDUCTOR_COMPILE_THREADS": "1"} and pool["measured"]["with"] is not None
    assert doc["reruns"][-1]["env_changes"] == {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
    rerun = {ph["name"]: ph["seconds"] for ph in doc["reruns"][-1]["processes"][0]["phases"]}
    assert rerun.get("exit_pool", 0) == 0  # no pool started with one compile thread
