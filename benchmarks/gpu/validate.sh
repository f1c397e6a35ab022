#!/usr/bin/env bash
# GPU validation of one tree, in one device call (see BENCHMARKS.md): flexdoctor's GPU tests, check
# levels, bundles (export -> pinned import, two modes). Outputs under $OUT (at most 8 files).
#   bash benchmarks/gpu/validate.sh            (from the repository root, on the GPU machine)
set -u
export PYTHONPATH=$PWD
O=${OUT:-/tmp/fd-out}; mkdir -p "$O"
fd() { python3 -m flexdoctor "$@"; }
{
  date -u; nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"
  echo "== check --strict"; fd check --strict; echo "exit $?"
  echo "== check --profile image --strict"; fd check --profile image --strict; echo "exit $?"
  echo "== check --deep -v"; fd check --deep -v; echo "exit $?"
} > "$O/check.txt" 2>&1
timeout 400 python3 -m pytest -q -m gpu -p no:cacheprovider -rs tests/test_trace_gpu.py tests/test_cache_gpu.py \
  tests/test_clear_gpu.py tests/test_cache_why_gpu.py tests/test_bench.py tests/test_deep.py tests/test_wheels.py \
  > "$O/pytest_gpu.txt" 2>&1; echo "pytest exit $?" >> "$O/pytest_gpu.txt"
{
  B=$(mktemp -d /tmp/fdb.XXXX); chmod 700 "$B"
  for mode in default max-autotune-no-cudagraphs; do
    echo "== mode $mode: export"
    rm -rf /tmp/fdA /tmp/fdB
    fd warm-cache --preset llm-causal --mode $mode --cache-dir /tmp/fdA --export "$B/flex-$mode.zip"; echo "exit $?"
    H=$(sha256sum "$B/flex-$mode.zip" | cut -d' ' -f1); echo "sha256 $H"
    echo "== import pinned"
    fd warm-cache --import "$B/flex-$mode.zip" --sha256 "$H" --cache-dir /tmp/fdB; echo "exit $?"
    echo "== import wrong pin"
    fd warm-cache --import "$B/flex-$mode.zip" --sha256 "$(printf 0%.0s {1..64})" --cache-dir /tmp/fdC; echo "exit $?"
  done
} > "$O/bundle.txt" 2>&1
