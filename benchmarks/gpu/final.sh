#!/usr/bin/env bash
# Last GPU call of a session: a pinned bundle import proven fast, the trace benchmark, one timeline.
set -u
export PYTHONPATH=$PWD
fd() { python3 -m flexdoctor "$@"; }
B=$(mktemp -d /tmp/fdb.XXXX); chmod 700 "$B"
{
  timeout 120 python3 -m flexdoctor warm-cache --preset llm-causal --cache-dir /tmp/fdA --no-measure --export "$B/flex.zip"; echo "export exit $?"
  H=$(sha256sum "$B/flex.zip" | cut -d' ' -f1)
  timeout 100 python3 -m flexdoctor warm-cache --import "$B/flex.zip" --sha256 "$H" --cache-dir /tmp/fdB --no-measure; echo "import exit $?"
} > "$OUT/bundle_import.txt" 2>&1
timeout 300 python3 benchmarks/bench_trace.py --device cuda --runs ${RUNS:-2} --markdown-out "$OUT/trace.md" > "$OUT/bench_trace.txt" 2>&1
echo "bench exit $?" >> "$OUT/bench_trace.txt"
timeout 60 python3 -m flexdoctor trace --timeline "$OUT/trace.html" -- python3 benchmarks/model_step.py --device cuda > "$OUT/trace_run.txt" 2>&1
echo "trace exit $?" >> "$OUT/trace_run.txt"
