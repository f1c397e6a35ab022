"""Throughput of `flexdoctor explain` on a large, realistic training log.

Builds a log of --size MB (default 64) that looks like what people pipe into explain: mostly healthy
training output (HF-Trainer-style dict lines, tqdm progress bars with carriage returns, timestamped
logging records, `[rank0]:` prefixes, ANSI colours, harmless warnings and compile notices taken from
tests/data/logs/healthy/) with a few real error excerpts (tests/data/logs/FDE*.log) sprinkled in.
Then times the engine (knowledge.explain.scan on the file opened 'rb', the path the CLI takes) and
reports MB/s:

    PYTHONPATH=$PWD python3 benchmarks/bench_explain.py [--size 64] [--repeat 3] [--keep FILE]
    python3 benchmarks/bench_explain.py --log FILE --engine /path/to/other/checkout   # before/after

Each repeat is one full scan; the median is reported with min/max, machine load and Python version,
since on a shared machine the absolute number moves with load; MB per CPU second (the process's
own CPU time) is reported too, as the figure that load does not move much. The same log (seeded) is built every
time, so runs on different commits compare like with like.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "logs"


def _body(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    while lines and lines[0].startswith("# "):
        lines.pop(0)
    return lines


def healthy_line(rng: random.Random, step: int) -> str:
    kind = rng.random()
    loss = rng.uniform(0.05, 2.5)
    if kind < 0.30:
        return (f"{{'loss': {loss:.4f}, 'grad_norm': {rng.uniform(0.1, 9):.6f}, 'learning_rate': "
                f"{rng.uniform(1e-6, 1e-3):.3e}, 'epoch': {step / 1000:.2f}}}")
    if kind < 0.50:
        done = step % 1000
        bar = "█" * (done // 50) + " " * (20 - done // 50)
        return (f"\r{done * 100 // 1000:3d}%|{bar}| {done}/1000 [{done // 60:02d}:{done % 60:02d}<"
                f"{(1000 - done) // 60:02d}:{(1000 - done) % 60:02d}, {rng.uniform(1, 9):.2f}it/s, loss={loss:.3f}]")
    if kind < 0.70:
        return (f"2025-03-{1 + step % 28:02d} {step % 24:02d}:{step % 60:02d}:{(step * 7) % 60:02d},{step % 1000:03d} - "
                f"INFO - trainer - step {step}: loss {loss:.4f} lr {rng.uniform(1e-6, 1e-3):.2e} "
                f"tokens/s {rng.randint(20000, 90000)} mem {rng.uniform(10, 70):.1f} GiB")
    if kind < 0.82:
        return (f"[rank{step % 8}]: step={step} loss={loss:.4f} ppl={2.718 ** loss:.3f} "
                f"throughput={rng.uniform(100, 400):.1f} samples/s mfu={rng.uniform(0.2, 0.6):.3f}")
    if kind < 0.90:
        return (f"\x1b[32mINFO\x1b[0m [{step % 8}] Saving model checkpoint to "
                f"/home/user/runs/exp{step % 17}/checkpoint-{step}/model.safetensors")
    if kind < 0.96:
        return (f"Epoch {step // 1000}/10, Step {step}, Validation: val_loss={loss:.4f} "
                f"val_acc={rng.uniform(0.5, 0.99):.4f} best={rng.uniform(0.5, 0.99):.4f}")
    return f"wandb: \U0001f680 View run at https://wandb.ai/team/proj/runs/{rng.getrandbits(32):08x} ({step})"


def build_log(path: Path, size_mb: float, seed: int = 0) -> tuple[int, int]:
    """Write the log; returns (bytes, error excerpts inserted)."""
    rng = random.Random(seed)
    healthy = [line for p in sorted((LOGS / "healthy").glob("*.log")) for line in _body(p)]
    errors = [_body(p) for p in sorted(LOGS.glob("FDE*.log"))]
    target = int(size_mb * 1024 * 1024)
    written = inserted = step = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        while written < target:
            block = []
            for _ in range(2000):
                step += 1
                if rng.random() < 0.02 and healthy:
                    block.append(rng.choice(healthy))
                else:
                    block.append(healthy_line(rng, step))
            if rng.random() < 0.01 and errors:  # about one error excerpt per 10 MB
                block.extend(rng.choice(errors))
                inserted += 1
            text = "\n".join(block) + "\n"
            f.write(text)
            written += len(text.encode("utf-8"))
    return written, inserted


def time_scan(path: Path) -> tuple[float, float, int, list[str]]:
    """(wall seconds, CPU seconds of this process, lines, problem IDs) of one full scan."""
    from flexdoctor.knowledge import explain

    t0, c0 = time.perf_counter(), time.process_time()
    with open(path, "rb") as stream:
        result = explain.scan(stream)
    return time.perf_counter() - t0, time.process_time() - c0, result.lines, [p.entry.id for p in result.problems]


def time_grep(path: Path, repeat: int) -> Optional[float]:
    """Median seconds of `grep -c Error FILE` (one literal, C speed): the floor a log scanner is
    compared with (issue 22). None where grep is missing."""
    grep = shutil.which("grep")
    if grep is None:
        return None
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([grep, "-c", "Error", str(path)], stdout=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=float, default=64.0, help="log size in MB (default 64)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", help="write the log here and keep it (default: a temporary file)")
    ap.add_argument("--log", help="time this existing log instead of building one")
    ap.add_argument("--engine", help="import flexdoctor from this checkout (default: this one), to compare commits")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(args.engine).resolve() if args.engine else ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        if args.log:
            path, inserted = Path(args.log), "?"
            size = path.stat().st_size
        else:
            path = Path(args.keep) if args.keep else Path(tmp) / "train.log"
            size, inserted = build_log(path, args.size, args.seed)
        mb = size / 1e6
        time_scan(LOGS / "FDE102_no_driver.log")  # untimed warm-up: imports, regex compilation
        times, cpus = [], []
        for _ in range(args.repeat):
            sec, cpu, lines, ids = time_scan(path)
            times.append(sec)
            cpus.append(cpu)
        grep_s = time_grep(path, args.repeat)
    med = statistics.median(times)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    import flexdoctor

    print(f"engine: {Path(flexdoctor.__file__).parent}")
    print(f"log: {mb:.1f} MB, {lines} lines, {inserted} error excerpts; found: {' '.join(ids) or '-'}")
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load average {load:.2f}")
    print(f"scan: median {med:.2f} s (min {min(times):.2f}, max {max(times):.2f}, n={len(times)})")
    print(f"throughput: {mb / med:.1f} MB/s (median), {mb / min(times):.1f} MB/s (best)")
    # CPU time does not count the time other processes held the cores: the load-independent figure.
    print(f"per CPU second: {mb / statistics.median(cpus):.1f} MB/s (median CPU {statistics.median(cpus):.2f} s)")
    if grep_s:
        print(f"grep -c Error: median {grep_s:.2f} s, {mb / grep_s:.1f} MB/s (explain takes {med / grep_s:.1f}x grep's time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
