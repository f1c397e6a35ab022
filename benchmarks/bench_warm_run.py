"""A model compiled whole (`torch.compile(model)`): what a preset warms for it, and what `--run` warms.
Three fresh cache dirs, one after the other, each step in a fresh process:

  cold    the model's first step on an empty cache;
  preset  `warm-cache --preset llm-causal` (the same attention shape), then the model's first step,
          and `cache why` on it (expected: a miss, "compiled whole: needs --run");
  run     `warm-cache --run "python3 model_step.py"`, then the model's first step, and `cache why`
          on it (expected: hits).

    PYTHONPATH=$PWD python3 benchmarks/bench_warm_run.py --markdown-out $OUT/run.md --work /tmp/bwr
    PYTHONPATH=$PWD python3 benchmarks/bench_warm_run.py --preset cpu-smoke \
        --step-args "--device cpu --seq-len 128 --layers 1 --heads 2 --kv-heads 1 --head-dim 16"   # CPU

Runs flexdoctor itself (python -m flexdoctor) so the numbers are what users get.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

STEP = Path(__file__).parent / "model_step.py"


def env_for(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_CACHE_DIR", "TORCH_TRACE")}
    env["CI"] = "1"  # plain progress lines
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
    return env


def call(argv: list, cache: Path, log: Path) -> tuple[int, float, str]:
    t = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env_for(cache), timeout=1500)
    wall = time.monotonic() - t
    with log.open("a") as f:
        f.write(f"$ {shlex.join(argv)}\n{done.stdout}\n--- stderr\n{done.stderr[-4000:]}\n")
    return done.returncode, wall, done.stdout


def step(cache: Path, log: Path, step_args: list) -> dict:
    code, wall, out = call([sys.executable, str(STEP), *step_args], cache, log)
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    timing = json.loads(lines[-1]) if code == 0 and lines else {}
    return {"code": code, "wall": round(wall, 2), **timing}


def why(cache: Path, log: Path, step_args: list) -> str:
    argv = [sys.executable, "-m", "flexdoctor", "cache", "why", "--cache-dir", str(cache), "--format", "json",
            "--", sys.executable, str(STEP), *step_args]
    code, _, out = call(argv, cache, log)
    try:
        graphs = json.loads(out)["graphs"]
    except (ValueError, KeyError):
        return f"exit {code}, no JSON"
    return "; ".join(f"{g['status']}" + (" (compiled whole)" if g.get("whole_model") else "")
                     + (": " + ", ".join(g.get("reasons") or []) if g["status"] != "hit" else "")
                     for g in graphs) + f" (exit {code})"


def measure(cache: Path, log: Path, step_args: list) -> tuple[dict, str]:
    """The first step in a fresh process, and `cache why` on a copy of the cache as it was before
    that step (the step itself fills the cache, so `cache why` after it would always hit)."""
    twin = cache.with_name(cache.name + "-why")
    shutil.copytree(cache, twin, symlinks=True)
    return step(cache, log, step_args), why(twin, log, step_args)


def warm(cache: Path, log: Path, args: list) -> tuple[int, float]:
    code, wall, _ = call([sys.executable, "-m", "flexdoctor", "warm-cache", "--cache-dir", str(cache), *args],
                         cache, log)
    return code, round(wall, 1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/fd-bench-run")
    ap.add_argument("--markdown-out")
    ap.add_argument("--step-args", default="", help="extra arguments for model_step.py")
    ap.add_argument("--preset", default="llm-causal", help="the preset to compare with (cpu-smoke on CPU)")
    a = ap.parse_args()
    work = Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log = work / "log.txt"
    step_args = shlex.split(a.step_args)
    rows = []

    cold = step(work / "cold", log, step_args)
    rows.append(("empty cache (cold)", "—", cold, "—"))

    code, wall = warm(work / "preset", log, ["--preset", a.preset])
    rows.append((f"after `warm-cache --preset {a.preset}`", f"{wall} s (exit {code})",
                 *measure(work / "preset", log, step_args)))

    command = shlex.join([sys.executable, str(STEP), *step_args])
    code, wall = warm(work / "run", log, ["--run", command])
    rows.append(("after `warm-cache --run \"python3 model_step.py\"`", f"{wall} s (exit {code})",
                 *measure(work / "run", log, step_args)))

    table = ["| first step of the whole-model compile | warm-cache wall | fwd s | bwd s | step exit | `cache why` per graph |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for name, wall, s, verdict in rows:
        table.append(f"| {name} | {wall} | {s.get('fwd_s') or '—'} | {s.get('bwd_s') or '—'} | {s['code']} | {verdict} |")
    text = "\n".join(table) + "\n"
    print(text)
    if a.markdown_out:
        Path(a.markdown_out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
