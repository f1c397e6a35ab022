#!/bin/bash
# Second batch on the H100 device machine (torch 2.11.0+cu130, triton 3.6.0): toolchain failures
# reproduced by hiding one piece in a private mount namespace.
cd "$(dirname "$0")"; export PYTHONUNBUFFERED=1
PY=$(command -v python3 || command -v python)
$PY -m pip install -q triton==3.6.0 >/dev/null 2>&1 || true   # the first batch uninstalled it
{ echo "CC=$CC"; $PY -c "import triton;print(triton.__version__)"; $PY -c "import sysconfig;print(sysconfig.get_paths()['include'])"; ldconfig -p | grep libcuda; } > $OUT/env2.txt 2>&1
fresh() { export TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) TRITON_CACHE_DIR=$(mktemp -d); }
run() { name=$1; shift; echo "# cmd: $*" > $OUT/$name.log; timeout 150 "$@" >> $OUT/$name.log 2>&1; echo "# rc=$?" >> $OUT/$name.log; }
fresh; run flex_smem $PY gpu_flex_smem.py
fresh; run no_c_compiler2 env -u CC PATH=/nonexistent $PY gpu_flex_compile.py
INC=$($PY -c "import sysconfig;print(sysconfig.get_paths()['include'])")
fresh; run python_h unshare -m sh -c "mount -t tmpfs tmpfs $INC && exec $PY gpu_flex_compile.py"
fresh; run libcuda unshare -m sh -c "mount --bind /bin/false /sbin/ldconfig && exec env -u LD_LIBRARY_PATH $PY gpu_flex_compile.py"
