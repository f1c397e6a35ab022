"""`warm-cache --run CMD`: the user's own one-step command, compiled under the cache dir, twice.

Real: the command compiles a small function with torch.compile on the CPU; the second run must
add nothing to the cache (everything it needs was written by the first)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

STEP = """
import os, torch
assert os.environ["TORCHINDUCTOR_CACHE_DIR"], "flexdoctor must point the command at the cache dir"
f = torch.compile(lambda x: torch.sin(x) * 2 + x)
print("step ok", float(f(torch.arange(8.0)).sum()))
"""


def warm(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env.update(PYTHONPATH=str(ROOT), CI="1")
    return subprocess.run([sys.executable, "-m", "flexdoctor", "warm-cache", *args], capture_output=True,
                          text=True, env=env, timeout=600, cwd=tmp_path)


def test_run_command_warms_its_own_graph(tmp_path):
    pytest.importorskip("torch")
    step = tmp_path / "step.py"
    step.write_text(STEP)
    cache = tmp_path / "cache"
    done = warm(tmp_path, "--run", f"{sys.executable} {step}", "--cache-dir", str(cache))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.count("step ok") == 2  # the user's output reaches the terminal, both runs
    assert "all from the cache" in done.stdout
    assert str(cache) in done.stdout  # the report names the dir to use at training time
    assert any(cache.rglob("*")), "the first run wrote compiled artifacts into the chosen cache dir"


def test_run_command_that_fails_is_reported(tmp_path):
    done = warm(tmp_path, "--run", f"{sys.executable} -c \"raise SystemExit(3)\"", "--cache-dir",
                str(tmp_path / "c"))
    assert done.returncode == 1
    assert "exited with status 3" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    # Nothing was warmed, so no manifest may tell `check` (FD505) that the cache is warm.
    assert not (tmp_path / "c" / "flexdoctor-manifest.json").exists()


def test_run_command_not_found_is_clear(tmp_path):
    done = warm(tmp_path, "--run", "no-such-program-xyz --step", "--cache-dir", str(tmp_path / "c"))
    assert done.returncode in (1, 2)
    assert "no-such-program-xyz" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
