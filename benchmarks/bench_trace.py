"""`flexdoctor trace` (issue 23): what tracing costs, and how close a warm step's whole process
comes to the bare import of torch and Inductor once flexdoctor's advice is followed.

Everything in fresh processes, on one warm compile cache (the step is run once first to fill it):

  overhead   the step plain and under `trace` (trace.run in-process: the bootstrap, TORCH_TRACE,
             the watcher), interleaved, --runs times each; the command's wall time under trace
             (start to exit) over its plain wall time, median of the pairs; and flexdoctor's whole
             trace call (reading the trace and judging included) over the plain wall time
  baseline   `python -c "import torch, torch._inductor.compile_fx"` (+ `torch.zeros(1, device="cuda")`
             on a GPU) against the warm step as it is and with the settings trace advised
             (e.g. TORCHINDUCTOR_COMPILE_THREADS=1), interleaved, --runs times each; medians

    PYTHONPATH=$PWD python3 benchmarks/bench_trace.py --device cuda --runs 5 --markdown-out $OUT/trace.md
    PYTHONPATH=$PWD python3 benchmarks/bench_trace.py --device cpu --runs 5 \
        --step-args "--device cpu --seq-len 128 --layers 1 --heads 2 --kv-heads 1 --head-dim 16"   # CPU
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

from flexdoctor import trace  # noqa: E402

STEP = Path(__file__).parent / "model_step.py"


def plain(argv: list, env: dict) -> float:
    """The command's wall time, started in a session of its own as flexdoctor starts it: with the
    kernel's autogroup scheduling (sched_autogroup_enabled=1) a new session is a new CPU group, so
    both sides must get one, or on a busy machine the plain runs share a group with the rest."""
    t = time.monotonic()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800,
                          start_new_session=True)
    wall = time.monotonic() - t
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {shlex.join(argv)}")
    return wall


def traced(argv: list, env: dict, cache: str) -> tuple:
    """(the command's wall under trace, flexdoctor's whole trace call, the TraceResult)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        t = time.monotonic()
        result = trace.run(argv, cache, cache_source="--cache-dir", env=env, stdout=devnull)
        whole = time.monotonic() - t
    finally:
        os.close(devnull)
    return result.measurement.wall, whole, result


def overhead(step: list, env: dict, cache: str, runs: int) -> tuple:
    """Pairs, the order alternating (plain first, then traced first) so a drift in the machine's
    load falls on both sides."""
    rows, last = [], None
    for i in range(runs):
        if i % 2 == 0:
            p = plain(step, env)
            wall, whole, last = traced(step, env, cache)
        else:
            wall, whole, last = traced(step, env, cache)
            p = plain(step, env)
        rows.append({"plain": p, "traced": wall, "trace_call": whole})
    return rows, last


def baseline(step: list, env: dict, advised: dict, runs: int, device: str) -> list:
    code = "import torch, torch._inductor.compile_fx" + ("; torch.zeros(1, device='cuda')" if device == "cuda" else "")
    rows = []
    for i in range(runs):
        order = [("baseline", [sys.executable, "-c", code], env), ("step", step, env),
                 ("step_advised", step, {**env, **advised})]
        rows.append({name: plain(argv, e) for name, argv, e in (order if i % 2 == 0 else order[::-1])})
    return rows


def med(rows: list, key: str) -> float:
    return statistics.median(r[key] for r in rows)


def report(over: list, base: list, advised: dict, result, args) -> str:
    ratio = statistics.median(r["traced"] / r["plain"] for r in over)
    call = statistics.median(r["trace_call"] / r["plain"] for r in over)
    m = result.measurement
    top = m.workers()[0]
    phases = ", ".join(f"{p.name} {p.seconds:.2f}" for p in top.phases)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"command: `{shlex.join(args.step)}` ({args.runs} runs each, interleaved, order alternating, medians;"
        f" warm cache; load average {load:.1f} on {os.cpu_count()} CPUs at the end)",
        "",
        "| measure | seconds / ratio |", "| --- | --- |",
        f"| step, plain | {med(over, 'plain'):.2f} s |",
        f"| step under trace (start to exit) | {med(over, 'traced'):.2f} s |",
        f"| **trace overhead** (traced / plain, median of pairs) | **{(ratio - 1) * 100:+.1f} %** |",
        f"| flexdoctor's whole trace call / plain | {call:.3f}x |",
        f"| baseline `import torch, torch._inductor.compile_fx` | {med(base, 'baseline'):.2f} s |",
        f"| warm step as it is | {med(base, 'step'):.2f} s = **{med(base, 'step') / med(base, 'baseline'):.2f}x** |",
        f"| warm step with trace's advice ({' '.join(f'{k}={v}' for k, v in advised.items()) or 'none advised'})"
        f" | {med(base, 'step_advised'):.2f} s = **{med(base, 'step_advised') / med(base, 'baseline'):.2f}x** |",
        "",
        f"last traced run's phases ({top.role}): {phases}",
        f"findings: {[f.code for f in result.findings] or 'none'}; advice: {[a.code for a in result.advice] or 'none'}",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--step-args", default="", help="arguments for benchmarks/model_step.py")
    ap.add_argument("--cache", default=None, help="TORCHINDUCTOR_CACHE_DIR (default: a fresh temp dir)")
    ap.add_argument("--markdown-out", default=None)
    args = ap.parse_args()
    cache = args.cache or tempfile.mkdtemp(prefix="bench-trace-")
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_TRACE", "TORCHINDUCTOR_COMPILE_THREADS")}
    env["TORCHINDUCTOR_CACHE_DIR"] = cache
    args.step = [sys.executable, str(STEP), "--device", args.device] + shlex.split(args.step_args)
    plain(args.step, env)  # fill the cache: everything after this is a warm start
    over, result = overhead(args.step, env, cache, args.runs)
    advised = {k: v for a in result.advice for k, v in a.env.items()}
    base = baseline(args.step, env, advised, args.runs, args.device)
    text = report(over, base, advised, result, args)
    print(text)
    print(json.dumps({"overhead": over, "baseline": base, "advised": advised}))
    if args.markdown_out:
        Path(args.markdown_out).write_text(text)


if __name__ == "__main__":
    main()
