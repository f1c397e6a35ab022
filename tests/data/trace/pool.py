"""Start Inductor's compile-worker pool the way a compile on a GPU does (AsyncCompile.wakeup(),
which compile_fx calls for CUDA inputs even when every graph comes from the cache), wait until it
is up, and end: after the last line, Python's atexit shuts the pool down (tests/test_trace.py).
With TORCHINDUCTOR_COMPILE_THREADS=1 no pool starts."""
import torch  # noqa: F401
from torch._inductor.async_compile import AsyncCompile

AsyncCompile.wakeup()
AsyncCompile.wait_pool_ready()
print("pool: done", flush=True)
