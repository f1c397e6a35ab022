"""`flexdoctor fleet merge` at fleet scale: N synthetic node reports made from the real H100 recording.

The reports are the real `check --format json` of tests/fixtures/facts/h100.json, renamed per node
and drifted the way fleets drift (1 % another driver, 0.5 % a GPU short, 0.5 % a cold cache, 0.5 %
failing a check, 0.2 % truncated files), written to a temporary directory. Then the merge is timed
in-process (read + merge + every renderer) and as the real command, median of --repeat runs:

    python benchmarks/bench_fleet.py --nodes 2000 --repeat 5 [--markdown-out FILE]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def base_report() -> dict:
    from flexdoctor import checks, runner
    from flexdoctor.facts import Facts
    from flexdoctor.render import json_

    data = json.loads((ROOT / "tests" / "fixtures" / "facts" / "h100.json").read_text())
    specs, _ = checks.all_checks(with_plugins=False)
    return json_.to_dict(runner.run(specs, Facts.load(data)))


def write_fleet(dest: Path, nodes: int) -> dict:
    base = base_report()
    counts = {"driver": 0, "gpu": 0, "cold": 0, "failing": 0, "truncated": 0}
    for i in range(nodes):
        name = f"gpu{i:04d}"
        rep = copy.deepcopy(base)
        facts = rep["facts"]
        facts["host"]["hostname"] = name
        facts["host"]["scheduler"] = {"SLURMD_NODENAME": name, "SLURM_JOB_ID": "777", "SLURM_NODEID": str(i)}
        text = None
        if i % 100 == 17:
            facts["gpu"]["driver_version"] = "580.126.09"
            counts["driver"] += 1
        elif i % 200 == 33:
            facts["gpu"]["devices"] = []
            counts["gpu"] += 1
        elif i % 200 == 71:
            facts["cache"]["manifest"] = None
            counts["cold"] += 1
        elif i % 200 == 99:
            r = rep["results"][0]
            r["status"], r["message"] = "fail", "synthetic failure for the benchmark"
            rep["ok"], rep["exit_code"] = False, 1
            counts["failing"] += 1
        elif i % 500 == 250:
            text = json.dumps(rep)[:4000]
            counts["truncated"] += 1
        (dest / f"{name}.json").write_text(text if text is not None else json.dumps(rep), encoding="utf-8")
    return counts


def in_process(dest: Path) -> tuple[float, dict]:
    from flexdoctor.fleet import merge_paths
    from flexdoctor.render import fleet_json, fleet_markdown, fleet_text

    t0 = time.perf_counter()
    report = merge_paths([str(dest)])
    t1 = time.perf_counter()
    for render in (fleet_text.render, fleet_json.render, fleet_markdown.render):
        render(report)
    t2 = time.perf_counter()
    return t2 - t0, {"merge_s": t1 - t0, "render_s": t2 - t1, "counts": report.counts()}


def command(dest: Path) -> tuple[float, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "flexdoctor", "fleet", "merge", str(dest), "--format", "json",
                           "--output", os.devnull], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    return time.perf_counter() - t0, done.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--markdown-out", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="flexdoctor-fleet-bench-") as tmp:
        dest = Path(tmp)
        drift = write_fleet(dest, args.nodes)
        size = sum(p.stat().st_size for p in dest.iterdir())
        in_proc, merges, renders, cmd = [], [], [], []
        counts, codes = None, set()
        in_process(dest)  # untimed warm-up: imports, page cache
        for _ in range(args.repeat):
            seconds, info = in_process(dest)
            in_proc.append(seconds)
            merges.append(info["merge_s"])
            renders.append(info["render_s"])
            counts = info["counts"]
            seconds, rc = command(dest)
            cmd.append(seconds)
            codes.add(rc)
    rows = [
        ("read + merge (in process)", merges),
        ("text + json + markdown views", renders),
        ("merge + views (in process)", in_proc),
        ("`flexdoctor fleet merge DIR --format json` (command)", cmd),
    ]
    lines = [
        f"{args.nodes} node reports, {size / 1e6:.1f} MB; drift written: {drift}; merge counted: {counts}; "
        f"command exit codes {sorted(codes)}",
        f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "",
        "| step | median s | min s | max s | per node |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, values in rows:
        med = statistics.median(values)
        lines.append(f"| {label} | {med:.3f} | {min(values):.3f} | {max(values):.3f} | "
                     f"{med / args.nodes * 1e3:.2f} ms |")
    out = "\n".join(lines) + "\n"
    sys.stdout.write(out)
    if args.markdown_out:
        args.markdown_out.write_text(out, encoding="utf-8")


if __name__ == "__main__":
    main()
