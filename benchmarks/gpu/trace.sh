#!/usr/bin/env bash
# `flexdoctor trace` on the GPU machine, one device call: the benchmark (overhead and the warm step
# against the import-torch-and-Inductor baseline) and two real traces with a time line.
#   bash benchmarks/gpu/trace.sh   (repository root, GPU machine; outputs under $OUT)
set -u
export PYTHONPATH=$PWD
O=${OUT:-/tmp/fd-out}; mkdir -p "$O"
timeout 420 python3 benchmarks/bench_trace.py --device cuda --runs ${RUNS:-5} --markdown-out "$O/trace.md" \
  > "$O/bench_trace.txt" 2>&1; echo "bench exit $?" >> "$O/bench_trace.txt"
for i in 1 2; do
  python3 -m flexdoctor trace --measure --timeline "$O/trace$i.html" -- python3 benchmarks/model_step.py --device cuda
  echo "exit $?"
done > "$O/trace_runs.txt" 2>&1
