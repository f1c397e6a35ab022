"""warm-cache on a GPU: cold vs warm first-call times, parallel vs sequential warm-up, and the
mega-cache export/import round trip. Writes a Markdown section (--markdown-out) and raw JSON.

    PYTHONPATH=$PWD python3 benchmarks/bench_warm.py --markdown-out $OUT/warm.md --work $OUT/warm

Runs flexdoctor itself (python -m flexdoctor warm-cache) so the numbers are what users get.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

CONFIG4 = ["--dtype", "bf16,fp16", "--head-dim", "64,128", "--mask", "causal",
           "--heads", "16", "--seq-len", "2048", "--batch", "2", "--device", "cuda"]
CONFIG8 = ["--preset", "sweep"]  # bf16/fp16 x d64/d128 x causal/none, fwd+bwd


def fd(args: list, cache: Path, log: Path) -> tuple[int, float, dict]:
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env["CI"] = "1"  # plain progress lines in the log
    t = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "flexdoctor", "warm-cache", "--cache-dir", str(cache)] + args,
                          capture_output=True, text=True, env=env, timeout=3000)
    wall = time.monotonic() - t
    log.write_text(f"$ flexdoctor warm-cache {' '.join(args)}\n{done.stdout}\n--- stderr\n{done.stderr}")
    try:
        manifest = json.loads((cache / "flexdoctor-manifest.json").read_text())
    except (OSError, ValueError):
        manifest = {}
    return done.returncode, wall, manifest


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--markdown-out", required=True)
    ap.add_argument("--work", default="bench-warm")
    ap.add_argument("--quick", action="store_true", help="4 configs only (skip the 8-config sweep)")
    a = ap.parse_args()
    work = Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    raw: dict = {}

    # 1. 4 configs in parallel (4 jobs), each with a fresh-process cache-hit proof.
    rc, wall, par = fd(CONFIG4 + ["--jobs", "4", "--export", str(work / "bundle.zip")], work / "par", work / "par.log")
    raw["parallel"] = {"rc": rc, "wall_s": wall, "manifest": par}
    # 2. The same 4 configs one after another, into another empty cache (no verify: compile only).
    rc2, wall2, seq = fd(CONFIG4 + ["--jobs", "1", "--no-verify"], work / "seq", work / "seq.log")
    raw["sequential"] = {"rc": rc2, "wall_s": wall2, "manifest": seq}
    # 3. Import the bundle into an empty cache and verify (fresh processes) there.
    rc3, wall3, imp = fd(["--import", str(work / "bundle.zip"), "--jobs", "4"], work / "imp", work / "imp.log")
    raw["import"] = {"rc": rc3, "wall_s": wall3, "manifest": imp}
    if not a.quick:
        rc4, wall4, sweep = fd(CONFIG8 + ["--jobs", "8"], work / "sweep", work / "sweep.log")
        raw["sweep"] = {"rc": rc4, "wall_s": wall4, "manifest": sweep}
    (work / "bench_warm.json").write_text(json.dumps(raw, indent=2, default=str))

    fp = par.get("fingerprint", {})
    lines = ["## warm-cache (flexdoctor warm-cache on the GPU)", "",
             f"torch {fp.get('torch')} (git {str(fp.get('torch_git'))[:10]}), triton {fp.get('triton')}, "
             f"CUDA {fp.get('cuda')}, {fp.get('gpu_name')} (sm {fp.get('gpu_capability')}), driver "
             f"{fp.get('driver')}, Python {fp.get('python')}. B=2 H=16 L=2048, fwd+bwd. Each row: a cold "
             "compile in its own process, then a fresh process on the warm cache.", "",
             "| config | cold fwd s | cold bwd s | warm fwd s | warm bwd s | fresh-process hits (fx / aot) |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    hits = total = 0
    for m in [par] + ([raw["sweep"]["manifest"]] if "sweep" in raw else []):
        for c in m.get("configs", []):
            wc = c.get("warm_counters") or {}
            total += 1
            hits += int(wc.get("fxgraph_cache_miss", 1) == 0 and wc.get("fxgraph_cache_hit", 0) > 0)
            f = lambda v: "—" if v is None else f"{v:.2f}"  # noqa: E731
            lines.append(f"| {c['name']} | {f(c.get('fwd_s'))} | {f(c.get('bwd_s'))} | {f(c.get('warm_fwd_s'))} | "
                         f"{f(c.get('warm_bwd_s'))} | {wc.get('fxgraph_cache_hit')}/{wc.get('fxgraph_cache_miss')} hit/miss, "
                         f"aot {wc.get('autograd_cache_hit')}/{wc.get('autograd_cache_miss')} |")
    pl, sl = par.get("last_run", {}), seq.get("last_run", {})
    pc, sc = pl.get("compile_wall_s"), sl.get("compile_wall_s")
    speed = f"{sc / pc:.2f}x" if pc and sc else "?"
    lines += ["", f"Cache hits in fresh processes: {hits}/{total} configs.", "",
              "| warm-up of 4 configs (compile phase, wall) | seconds |", "| --- | ---: |",
              f"| sequential (--jobs 1) | {sc} |", f"| parallel (--jobs 4) | {pc} |", f"| speed-up | {speed} |", ""]
    exp = pl.get("export", {})
    ic = imp.get("configs", [])
    lines += [f"Export/import round trip: bundle {exp.get('bytes')} bytes for {len(par.get('configs', []))} configs; "
              f"after `--import` into an empty cache dir, fresh processes hit "
              f"{sum(1 for c in ic if (c.get('warm_counters') or {}).get('fxgraph_cache_miss', 1) == 0)}/{len(ic)}; "
              "warm first call (fwd+bwd) after import: "
              + ", ".join(f"{c['warm_first_call_s']:.2f} s" for c in ic if c.get("warm_first_call_s") is not None)
              + f" (exit codes: parallel {rc}, sequential {rc2}, import {rc3}).", ""]
    Path(a.markdown_out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.markdown_out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if rc == rc2 == rc3 == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
