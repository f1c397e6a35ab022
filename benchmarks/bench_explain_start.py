"""How long `flexdoctor explain` takes on a short pasted log, start-up included: what a user waits for.

Runs `python -m flexdoctor explain LOG` as a fresh process for each engine in turn (alternating, so load
moves both alike), --repeat times, and reports the median wall time of each and their ratio:

    python3 benchmarks/bench_explain_start.py --engine /path/to/old/checkout [--engine /path/to/new] \
        [--log tests/data/corpus/cuda-oom/cylinder3d-t4-backward.log] [--repeat 9]

Without --engine it times this checkout alone. Each engine is put first on PYTHONPATH, so the checkouts
must be plain source trees (a git worktree of another commit will do).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LOG = ROOT / "tests" / "data" / "corpus" / "cuda-oom" / "cylinder3d-t4-backward.log"


def once(engine: Path, log: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(engine))
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "flexdoctor", "explain", str(log)], env=env, cwd=str(engine),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", action="append", help="a checkout to time (repeatable; default: this one)")
    ap.add_argument("--log", default=str(DEFAULT_LOG), help="the short log to explain")
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    engines = [Path(e).resolve() for e in (args.engine or [str(ROOT)])]
    log = Path(args.log).resolve()
    times: dict = {e: [] for e in engines}
    for _ in range(args.repeat):
        for e in engines:
            times[e].append(once(e, log))
    print(f"log: {log} ({log.stat().st_size} bytes); Python {platform.python_version()}; "
          f"load average {os.getloadavg()[0]:.2f}; {args.repeat} runs each, alternating")
    first = statistics.median(times[engines[0]])
    for e in engines:
        med = statistics.median(times[e])
        print(f"{e}: median {med:.2f} s (min {min(times[e]):.2f}, max {max(times[e]):.2f}); "
              f"{med / first:.2f}x the first")
    return 0


if __name__ == "__main__":
    sys.exit(main())
