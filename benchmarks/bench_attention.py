"""GPU proof for issue 6: the deep tier's checks and the attention bench, saved for BENCHMARKS.md.

    python benchmarks/bench_attention.py deep OUTDIR    # deep probe -> deep_facts.json, deep_check.txt
    python benchmarks/bench_attention.py merge OUTDIR   # bench_*.json -> bench.md, bench.txt

Each step catches its own failure (written to OUTDIR/<step>_error.txt) so one bad step never
loses the others. Run with PYTHONPATH set to the repository root.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path


def deep_step(out: Path) -> None:
    from flexdoctor import checks, runner
    from flexdoctor.deep import deep
    from flexdoctor.facts import Facts, to_jsonable
    from flexdoctor.render import Format, renderer

    stages: list = []
    facts = deep.probe(sys.executable, timeout=float(sys.argv[3]) if len(sys.argv) > 3 else 110.0,
                       on_stage=lambda s: (stages.append(s), print("stage:", s, flush=True)))
    (out / "deep_facts.json").write_text(json.dumps(to_jsonable(facts), indent=2, sort_keys=True) + "\n")
    specs = [s for s in checks.builtin() if s.area == "deep"]
    report = runner.run(specs, Facts(deep=facts))
    text = renderer(Format.text)(report, verbose=True, quiet=False, color=False, width=110)
    (out / "deep_check.txt").write_text(text)
    print(text)


def merge_step(out: Path) -> None:
    from flexdoctor.deep import bench as b
    from flexdoctor.render import bench_view

    cases, results, env, started = [], [], {}, None
    for path in sorted(out.glob("bench_*.json"), key=lambda p: p.stat().st_mtime):
        data = json.loads(path.read_text())
        env = env or data.get("env") or {}
        started = started or data.get("started_at")
        remap = {}
        for c in data["cases"]:
            remap[c["index"]] = len(cases)
            cases.append(b.Case.from_dict({**c, "index": len(cases)}))
        for r in data["results"]:
            results.append(b.Measurement(**{**r, "case": remap[r["case"]]}))
    report = b.BenchReport(cases=cases, results=results, env=env, started_at=started, settings={"reps": 30})
    (out / "bench.md").write_text(bench_view.render_markdown(report))
    (out / "bench.txt").write_text(bench_view.render_text(report, color=False, width=130))
    print(bench_view.render_text(report, color=False, width=130))


def main() -> int:
    step, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    try:
        {"deep": deep_step, "merge": merge_step}[step](out)
    except BaseException:
        (out / f"{step}_error.txt").write_text(traceback.format_exc())
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
