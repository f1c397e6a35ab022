# A successful CPU run with the harmless notices people paste along with real errors: the deprecated
# sdp_kernel context manager (FutureWarning), compile logs (TORCH_LOGS=recompiles,graph_breaks),
# a graph break, dynamic-shape recompiles below the limit, a tqdm progress bar, logging records.
# Output is tests/data/logs/healthy/cpu_train_compile_logs.log (run with TORCH_LOGS set, see header).
import logging, sys, torch, torch.nn as nn, torch.nn.functional as F
logging.basicConfig(level=logging.INFO, format="%(asctime)s - %(levelname)s - %(name)s - %(message)s")
log = logging.getLogger("trainer")
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64))
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)

def block(x):
    q = model(x)
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
        out = F.scaled_dot_product_attention(q, x, x, is_causal=True)
    print("inside", out.shape[-2])  # a print inside a compiled function: a graph break
    return out

step_fn = torch.compile(block)
for step in range(6):
    seq = 32 * (1 + step % 3)  # three lengths: recompiles, then dynamic shapes
    x = torch.randn(2, 4, seq, 64)
    y = step_fn(x)
    loss = y.pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    log.info("step %d: loss %.4f lr %.1e seq %d", step, loss.item(), 3e-4, seq)
    sys.stderr.write(f"\r{(step + 1) * 100 // 6:3d}%|{'█' * (step + 1)}{' ' * (5 - step)}| {step + 1}/6 [00:0{step}<00:05, 1.10it/s, loss={loss.item():.3f}]")
sys.stderr.write("\n")
log.info("Training complete. Saved checkpoint to ./out/checkpoint-6")
