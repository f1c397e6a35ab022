"""warm-cache run twice with the same arguments: the second finds every config already warm for
this environment and must not start a torch process (issue 14: at most 10% of the first's time,
a skipped already-warm preset in under 2 s). A third run with --force compiles again (control).

    PYTHONPATH=$PWD python3 benchmarks/bench_warm_skip.py                       # CPU: --preset cpu-smoke
    PYTHONPATH=$PWD python3 benchmarks/bench_warm_skip.py --markdown-out $OUT/skip.md -- \
        --preset llm-causal --mode default,max-autotune-no-cudagraphs           # GPU

Runs flexdoctor itself (python -m flexdoctor warm-cache) into a fresh cache dir, so the numbers
are what users get. Prints a Markdown table (and writes it to --markdown-out).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def warm(args: list, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env["CI"] = "1"  # plain progress lines
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "flexdoctor", "warm-cache", "--cache-dir", str(cache)] + args,
                          capture_output=True, text=True, env=env, timeout=3600)
    wall = time.monotonic() - t
    # Progress lines name each worker as it starts ("[1/2] <config>: compiling", then ": verifying"
    # for the fresh-process proof); none means no torch process ran.
    workers = sum(1 for ln in done.stderr.splitlines()
                  if ln.startswith("[") and ln.rstrip().endswith((": compiling", ": verifying")))
    return {"rc": done.returncode, "wall_s": round(wall, 2), "workers_started": workers,
            "already_warm": "already warm:" in done.stdout, "stdout": done.stdout, "stderr": done.stderr}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown-out")
    ap.add_argument("--work", help="keep the cache dir and logs here (default: a temporary dir)")
    ap.add_argument("args", nargs="*", help="warm-cache arguments (after --); default: --preset cpu-smoke")
    a = ap.parse_args()
    args = a.args or ["--preset", "cpu-smoke"]
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="flexdoctor-skip-"))
    shutil.rmtree(work / "cache", ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    runs = {"first": warm(args, work / "cache"), "second": warm(args, work / "cache"),
            "force": warm(args + ["--force"], work / "cache")}
    (work / "bench_warm_skip.json").write_text(json.dumps(runs, indent=2))
    first, second, force = runs["first"], runs["second"], runs["force"]
    ratio = second["wall_s"] / first["wall_s"] if first["wall_s"] else float("nan")
    manifest = json.loads((work / "cache" / "flexdoctor-manifest.json").read_text())
    fp = manifest.get("fingerprint", {})
    lines = [f"## warm-cache skips configs already warm (`warm-cache {' '.join(args)}`)", "",
             f"torch {fp.get('torch')}, triton {fp.get('triton')}, GPU {fp.get('gpu_name') or 'none'}; "
             f"{len(manifest.get('configs', []))} config(s): "
             + ", ".join(c["name"] for c in manifest.get("configs", [])), "",
             "| run | wall s | exit | torch workers started | says already warm |",
             "| --- | ---: | ---: | ---: | --- |"]
    for name, r in runs.items():
        lines.append(f"| {name} | {r['wall_s']:.2f} | {r['rc']} | {r['workers_started']} | "
                     f"{'yes' if r['already_warm'] else 'no'} |")
    ok = (second["rc"] == 0 and second["workers_started"] == 0 and second["already_warm"] and ratio <= 0.10
          and second["wall_s"] < 2.0 and force["workers_started"] > 0)
    lines += ["", f"second / first = **{ratio:.3f}** (target ≤ 0.10; second run {second['wall_s']:.2f} s, target "
              f"< 2 s): {'met' if ok else 'NOT met'}", ""]
    text = "\n".join(lines)
    print(text)
    if a.markdown_out:
        Path(a.markdown_out).write_text(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
