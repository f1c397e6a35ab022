#!/bin/bash
# Run on the H100 device machine: captures real GPU error output into $OUT.
cd "$(dirname "$0")"; export PYTHONUNBUFFERED=1
PY=$(command -v python3 || command -v python)
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv; $PY -c "import torch,triton;print(torch.__version__,torch.version.cuda,triton.__version__)"; } > $OUT/env.txt 2>&1
run() { name=$1; shift; echo "# cmd: $*" > $OUT/$name.log; timeout 240 "$@" >> $OUT/$name.log 2>&1; echo "# rc=$?" >> $OUT/$name.log; }
export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) 
run sdpa_flash_only_fp32 $PY gpu_sdpa_flash_only_fp32.py
run flex_eager_oom $PY gpu_flex_eager_oom.py
run flex_smem $PY gpu_flex_smem.py
run flex_headdim8 $PY gpu_flex_headdim8.py
export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d)
run healthy_flex_compiled $PY gpu_flex_compile.py
export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d)
run no_c_compiler env PATH=/nonexistent $PY gpu_flex_compile.py
export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d)
$PY -m pip uninstall -y triton >> $OUT/env.txt 2>&1
run triton_missing $PY gpu_flex_compile.py
