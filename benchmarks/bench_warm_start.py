"""warm-cache's advice, measured against the bare import of torch and Inductor (issue 23).

One run, on one machine, side by side:

  1. `flexdoctor warm-cache CONFIG --format json --measure` into a fresh cache dir: it compiles the
     config, times the fresh verification process phase by phase, and measures whether
     TORCHINDUCTOR_COMPILE_THREADS=1 makes the warm start faster here (its advice says so only then);
  2. then, interleaved (order alternating), --runs fresh processes each:
       baseline       python -c "import torch, torch._inductor.compile_fx; torch.zeros(1, device=DEV)"
       warm, advised  warm-cache's worker for the config, run as the advice says (advice.env)
       warm, as is    the same with TORCHINDUCTOR_CACHE_DIR only
     and the medians with their ratios to the baseline (target: advised <= 1.2x).

    PYTHONPATH=$PWD python3 benchmarks/bench_warm_start.py --device cuda --runs 5 --markdown-out $OUT/warm_start.md
    PYTHONPATH=$PWD python3 benchmarks/bench_warm_start.py --device cpu --runs 2 --measure-runs 1   # CPU smoke
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_trace import plain  # noqa: E402  (benchmarks/ is the script's folder: on sys.path)
from flexdoctor.cache import warm  # noqa: E402
from flexdoctor.workload import Workload  # noqa: E402

CONFIG = {  # FACTS §11's H100 step: bf16 GQA 32/8, d128, L4096, causal, fwd+bwd
    "cuda": "--dtype bf16 --heads 32 --kv-heads 8 --head-dim 128 --seq-len 4096 --mask causal",
    "cpu": "--preset cpu-smoke",
}
DROP = ("TORCH_TRACE", "TORCHINDUCTOR_COMPILE_THREADS", "TORCHINDUCTOR_CACHE_DIR")


def warm_cache(args, cache: str, env: dict) -> dict:
    argv = [sys.executable, "-m", "flexdoctor", "warm-cache", *shlex.split(args.warm_args), "--cache-dir", cache,
            "--format", "json", "--measure", "--measure-runs", str(args.measure_runs)]
    t = time.monotonic()
    done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"warm-cache failed ({done.returncode}): {shlex.join(argv)}")
    doc = json.loads(done.stdout)
    doc["_seconds"] = time.monotonic() - t
    return doc


def side_by_side(doc: dict, env: dict, runs: int, device: str) -> list:
    code = f"import torch, torch._inductor.compile_fx; torch.zeros(1, device={device!r})"
    cfg = doc["configs"][0]
    step = [sys.executable, str(warm.WORKER), "compile", json.dumps(warm.payload(Workload.from_dict(cfg["workload"])))]
    advised = {**env, **doc["advice"]["env"]}
    as_is = {**env, "TORCHINDUCTOR_CACHE_DIR": doc["advice"]["env"]["TORCHINDUCTOR_CACHE_DIR"]}
    order = [("baseline", [sys.executable, "-c", code], env), ("advised", step, advised), ("as_is", step, as_is)]
    rows = []
    for i in range(runs):
        rows.append({name: plain(argv, e) for name, argv, e in (order if i % 2 == 0 else order[::-1])})
    return rows


def report(doc: dict, rows: list, args) -> str:
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    mes = doc["advice"]["measured"] or {}
    cfg = doc["configs"][0]
    phases = ", ".join(f"{p['name']} {p['seconds']:.2f}" for p in (cfg.get("verify") or {}).get("phases", []))
    advised = " ".join(f"{k}={v}" for k, v in doc["advice"]["env"].items() if k != "TORCHINDUCTOR_CACHE_DIR")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"config `{cfg['name']}` (`warm-cache {args.warm_args}`); {args.runs} runs each, interleaved, order"
        f" alternating, medians; load average {load:.1f} on {os.cpu_count()} CPUs at the end",
        "",
        f"warm-cache's own measurement ({mes.get('runs', 0)} run(s) per side): {mes.get('without_s')} s as it is,"
        f" {mes.get('with_s')} s with {' '.join(f'{k}={v}' for k, v in (mes.get('settings') or {}).items())}"
        f" -> {mes.get('reason')}; advice: `{doc['advice']['command']}`",
        "",
        "| fresh process | median s | / baseline |", "| --- | ---: | ---: |",
        f"| baseline `import torch, torch._inductor.compile_fx; torch.zeros(1, device='{args.device}')` |"
        f" {med['baseline']:.2f} | 1.00x |",
        f"| warm flex step, as warm-cache advises ({advised or 'cache dir only'}) | {med['advised']:.2f} |"
        f" **{med['advised'] / med['baseline']:.2f}x** |",
        f"| warm flex step, cache dir only | {med['as_is']:.2f} | {med['as_is'] / med['baseline']:.2f}x |",
        "",
        f"advised / as is: {med['advised'] / med['as_is']:.2f}x; warm-cache itself took {doc['_seconds']:.1f} s",
        f"verification process ({cfg['verify']['wall_s']} s; compile-worker pool started: {cfg['verify']['pool']},"
        f" {cfg['verify']['pool_s']} s, so a plain warm-cache measures by itself: {bool(cfg['verify']['pool'])}):"
        f" {phases}",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--measure-runs", type=int, default=2, help="warm-cache --measure-runs")
    ap.add_argument("--warm-args", default=None, help="warm-cache's config flags (default: per --device)")
    ap.add_argument("--cache", default=None, help="TORCHINDUCTOR_CACHE_DIR (default: a fresh temp dir)")
    ap.add_argument("--markdown-out", default=None)
    args = ap.parse_args()
    args.warm_args = args.warm_args or CONFIG.get(args.device, CONFIG["cpu"])
    cache = args.cache or tempfile.mkdtemp(prefix="bench-warm-start-")
    env = {k: v for k, v in os.environ.items() if k not in DROP}
    doc = warm_cache(args, cache, env)
    rows = side_by_side(doc, env, args.runs, args.device)
    text = report(doc, rows, args)
    print(text)
    print(json.dumps({"rows": rows, "advice": doc["advice"]}))
    if args.markdown_out:
        Path(args.markdown_out).write_text(text)


if __name__ == "__main__":
    main()
