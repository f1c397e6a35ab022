#!/usr/bin/env bash
# explain on errors a real GPU machine produces (issue 22): each case runs a few lines of torch that fail
# the way users' runs fail, keeps the log exactly as the process printed it, and shows what
# `flexdoctor explain` answers first (text and JSON). Also `check --strict` and `check --deep`, whose
# error path uses the same reading. Outputs under $OUT (at most 8 files).
#   bash benchmarks/gpu/explain_real.sh      (from the repository root, on the GPU machine)
set -u
export PYTHONPATH=$PWD
O=${OUT:-/tmp/fd-out}; mkdir -p "$O"
L=$(mktemp -d /tmp/fdx.XXXX)
fail() {  # name, python code: run it, keep its log
  python3 -c "$2" > "$L/$1.log" 2>&1; echo "exit $?" >> "$L/$1.log"
}
fail oom 'import torch; x = torch.empty(int(1.5 * torch.cuda.get_device_properties(0).total_memory), dtype=torch.uint8, device="cuda")'
fail assert 'import torch; e = torch.nn.Embedding(10, 4).cuda(); y = e(torch.tensor([12], device="cuda")); torch.cuda.synchronize(); print(y)'
fail nll 'import torch, torch.nn.functional as F; x = torch.randn(4, 3, device="cuda"); print(F.cross_entropy(x, torch.tensor([0, 1, 7, 2], device="cuda")).item())'
fail inplace 'import torch; w = torch.randn(4, 4, device="cuda", requires_grad=True); y = torch.sigmoid(w); y += 1; y.sum().backward()'
fail twice 'import torch; w = torch.randn(4, device="cuda", requires_grad=True); l = (w.exp() * 2).sum(); l.backward(); l.backward()'
fail device 'import torch; a = torch.randn(2, 2, device="cuda"); b = torch.randn(2, 2); print(a @ b)'
fail kwarg 'import torch, torch.nn.functional as F; q = torch.randn(1, 2, 8, 16, device="cuda"); F.scaled_dot_product_attention(q, q, q, scal=0.5)'
fail flexmask 'import torch; from torch.nn.attention.flex_attention import flex_attention, create_block_mask; m = create_block_mask(lambda b, h, q, k: q >= k, None, None, 128, 128); q = torch.randn(1, 2, 256, 64, device="cuda"); flex_attention(q, q, q, block_mask=m)'
python3 -c "import io; s = open('$L/oom.log', encoding='utf-8').read(); open('$L/oom-utf16.log', 'wb').write(s.encode('utf-16'))"
{
  date -u; nvidia-smi -L; python3 -c "import torch, triton; print(torch.__version__, torch.version.cuda, triton.__version__)"
  for f in "$L"/*.log; do
    echo "=================== $(basename "$f")"; head -c 3000 "$f" | tail -n 12
    echo "------------------- explain"; python3 -m flexdoctor explain "$f"; echo "explain exit $?"
    python3 -m flexdoctor explain --format json "$f" > "$f.json"
    python3 -c "import json, sys; d = json.load(open(sys.argv[1])); p = d['problems']; print('FIRST:', (p[0]['id'], p[0]['kind'], p[0].get('subject')) if p else None)" "$f.json"
  done
} > "$O/explain_real.txt" 2>&1
{
  echo "== check --strict"; python3 -m flexdoctor check --strict; echo "exit $?"
  echo "== check --deep -v"; python3 -m flexdoctor check --deep -v; echo "exit $?"
} > "$O/check.txt" 2>&1
tar -C "$L" -czf "$O/logs.tgz" .
