"""Side-by-side wall-clock of `flexdoctor check` against the tools and imports it competes with.

Runs every command N times, interleaved (round-robin, so drifts in machine load hit all of
them alike), and prints a Markdown table of medians and ratios:

    python benchmarks/bench_check.py --repeat 5 [--python PATH] [--markdown-out FILE] [--baseline DIR]

``--baseline DIR``: another flexdoctor tree (e.g. ``git archive main``) timed in the same rounds,
so a change is measured against what it replaces under the same load.

The ratios, not the absolute seconds, are what BENCHMARKS.md compares across machines.
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
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]


def commands(python: str, baseline: Optional[Path] = None) -> dict[str, list[str]]:
    fd = [sys.executable, "-m", "flexdoctor"]
    out = {
        "flexdoctor --help": fd + ["--help"],
        "flexdoctor check --static": fd + ["check", "--static", "--python", python, "--format", "json"],
        "flexdoctor check": fd + ["check", "--python", python, "--format", "json"],
    }
    if baseline is not None:  # the same commands from another tree (its path first on sys.path)
        run = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(baseline)!r}); sys.argv[0] = "
               "'flexdoctor'; import runpy; runpy.run_module('flexdoctor', run_name='__main__')"]
        out["baseline: flexdoctor check --static"] = run + ["check", "--static", "--python", python, "--format",
                                                           "json"]
        out["baseline: flexdoctor check"] = run + ["check", "--python", python, "--format", "json"]
    return {
        **out,
        "import torch": [python, "-c", "import torch"],
        "import torch + CUDA init": [python, "-c", "import torch; torch.cuda.is_available() and torch.cuda.init()"],
        "python -m torch.utils.collect_env": [python, "-m", "torch.utils.collect_env"],
    }


def time_once(argv: list[str]) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # An installed flexdoctor has its bytecode compiled at install time (pip does), as torch has.
    # Run from a checkout with PYTHONDONTWRITEBYTECODE=1 (set on the CPU test machine), every run
    # would compile every flexdoctor module again: 0.1-0.3 s that no user pays.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0, done.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="interpreter with torch (the target)")
    ap.add_argument("--markdown-out", type=Path)
    ap.add_argument("--baseline", type=Path, help="another flexdoctor tree to time in the same rounds")
    args = ap.parse_args()
    cmds = commands(args.python, args.baseline.resolve() if args.baseline else None)
    times: dict[str, list[float]] = {k: [] for k in cmds}
    codes: dict[str, set[int]] = {k: set() for k in cmds}
    for name, argv in cmds.items():  # one untimed warm-up each: page cache, .pyc files
        time_once(argv)
    for _ in range(args.repeat):
        for name, argv in cmds.items():
            seconds, rc = time_once(argv)
            times[name].append(seconds)
            codes[name].add(rc)
    med = {k: statistics.median(v) for k, v in times.items()}
    base_import = med["import torch + CUDA init"]
    base_env = med["python -m torch.utils.collect_env"]

    def paired(name: str, base: str) -> float:
        """Median over rounds of this round's ratio: on a shared machine, load drifts between
        rounds but hits the commands of one round alike."""
        return statistics.median(a / b for a, b in zip(times[name], times[base]))

    lines = [
        f"Machine: {platform.node()} ({platform.machine()}, {os.cpu_count()} cores), "
        f"Python {platform.python_version()}, repeat {args.repeat}, "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}",
        "",
        "| command | median s | min s | max s | ÷ import torch + CUDA init | ÷ collect_env "
        "| paired ÷ import torch | paired ÷ collect_env | exit codes |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name in cmds:
        v = times[name]
        lines.append(
            f"| `{name}` | {med[name]:.3f} | {min(v):.2f} | {max(v):.2f} | "
            f"{med[name] / base_import:.3f}× | {med[name] / base_env:.3f}× | "
            f"{paired(name, 'import torch'):.3f}× | {paired(name, 'python -m torch.utils.collect_env'):.3f}× | "
            f"{sorted(codes[name])} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown_out:
        args.markdown_out.write_text(text)


if __name__ == "__main__":
    main()
