#!/usr/bin/env bash
# One device call: export a bundle in two compile modes and list every global their pickles name
# (benchmarks/gpu/bundle_globals.py: what the import screen must take), then bench_warm_start.
#   bash benchmarks/gpu/globals_and_warm_start.sh   (repository root, GPU machine; outputs under $OUT)
set -u
export PYTHONPATH=$PWD
B=$(mktemp -d /tmp/fdb.XXXX); chmod 700 $B
for mode in default max-autotune-no-cudagraphs; do
  timeout 150 python3 -m flexdoctor warm-cache --preset llm-causal --mode $mode --cache-dir /tmp/fdG-$mode --no-measure --export $B/$mode.zip > $OUT/export_$mode.txt 2>&1
  echo "export $mode exit $?"
done
python3 benchmarks/gpu/bundle_globals.py $B/*.zip > $OUT/globals.txt 2>&1; echo "globals exit $?"
cp $B/*.zip $OUT/ 2>/dev/null
timeout 330 python3 benchmarks/bench_warm_start.py --device cuda --runs 2 --measure-runs 2 --markdown-out $OUT/warm_start.md > $OUT/bench_warm_start.txt 2>&1; echo "bench exit $?"
grep -c "^NO" $OUT/globals.txt; grep -v measuring $OUT/bench_warm_start.txt | tail -15
