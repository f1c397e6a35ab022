# Run BY THE TARGET INTERPRETER in a subprocess (`flexdoctor bench`). stdlib + torch only,
# Python 3.8+: flexdoctor itself is not importable there.
#
#   python _bench_worker.py '<json: {"cases": [...], "start": N, "reps": N, ...}>'
#
# Times every attention path for each case, one after the other (never concurrently: they
# would disturb each other's timings): compiled flex, eager flex, SDPA with each backend alone,
# flash-attn if installed; forward and forward+backward. GPU timing: warm-up, CUDA events around
# each call, median of many calls; fresh random inputs per case (never zeros). Peak memory from
# torch.cuda.max_memory_allocated. An out-of-memory is a result, not a failure.
# Protocol (stdout): the lines of _wire.py: a stage as each item starts, a part per finished item
# (so a crash keeps the finished ones; the parent restarts after the item that died), then the
# result with the environment.
import json
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _wire, even under -P / PYTHONSAFEPATH
import _wire  # noqa: E402  (and drops this folder from sys.path again)
from _wire import stage  # noqa: E402

SDPA = {"sdpa-flash": ("FLASH_ATTENTION", "can_use_flash_attention"),
        "sdpa-efficient": ("EFFICIENT_ATTENTION", "can_use_efficient_attention"),
        "sdpa-cudnn": ("CUDNN_ATTENTION", "can_use_cudnn_attention"),
        "sdpa-math": ("MATH", None)}
IMPLS = ("flex-compiled", "flex-eager", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn", "sdpa-math", "flash-attn")


def short_error(exc):
    return _wire.short_error(exc, 1500)


class Unavailable(Exception):
    """This implementation cannot run here. ``text``: torch's (or flash-attn's) own words; or
    ``code`` and its values, which the parent words in the user's language (the catalogue's
    ``worker-reason.<code>``: this script cannot import flexdoctor)."""

    def __init__(self, text=None, code=None, **values):
        Exception.__init__(self, text or code)
        self.text, self.code, self.values = text, code, values


def is_oom(exc):
    text = str(exc)
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in text.lower() or (
        "CUDA error: out of memory" in text)


def attention_flops(case, mode):
    B, H, L, D = case["batch"], case["heads"], case["seq_len"], case["head_dim"]
    S = case.get("kv_len") or L
    fwd = 4.0 * B * H * L * S * D
    if case["mask"] == "causal":
        fwd /= 2
    return fwd * (3.5 if mode == "fwdbwd" else 1.0)  # backward = 2.5 forward matmul work


class Timer:
    def __init__(self, torch, device):
        self.torch, self.device = torch, device

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def once(self, fn):
        self.sync()
        t = time.perf_counter()
        fn()
        self.sync()
        return time.perf_counter() - t

    def median_ms(self, fn, reps, warmup, budget_s):
        for _ in range(warmup):
            fn()
        est = self.once(fn)
        n = max(3 if self.device == "cpu" else 5, min(reps, int(budget_s / max(est, 1e-6))))
        if self.device == "cuda":
            torch = self.torch
            pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
            for start, end in pairs:
                start.record()
                fn()
                end.record()
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) for s, e in pairs]
        else:
            times = [self.once(fn) * 1000.0 for _ in range(n)]
        return statistics.median(times), n, min(times), max(times)


def make_impl(torch, name, case, device, state):
    """A function (q, k, v) -> out for ``name``, plus the input layout it wants."""
    import torch.nn.functional as F

    causal = case["mask"] == "causal"
    gqa = case["kv_heads"] != case["heads"]
    if name.startswith("flex"):
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        block_mask = None
        if causal:
            L = case["seq_len"]
            block_mask = create_block_mask(lambda b, h, q_idx, kv_idx: q_idx >= kv_idx, None, None, L, L,
                                           device=device)
        if name == "flex-compiled":
            fn = state.setdefault("compiled", torch.compile(flex_attention, dynamic=False))
        else:
            fn = flex_attention

        def run(q, k, v):
            return fn(q, k, v, block_mask=block_mask, enable_gqa=gqa)
        return run, "bhld"
    if name in SDPA:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        enum_name, can_use = SDPA[name]
        backend = getattr(SDPBackend, enum_name, None)
        if backend is None:
            raise Unavailable(code="no_sdp_backend", backend=enum_name, torch=str(torch.__version__))
        if device == "cpu" and name in ("sdpa-efficient", "sdpa-cudnn"):
            raise Unavailable(code="cuda_only")
        if device == "cuda" and can_use is not None and getattr(torch.backends.cuda, can_use, None):
            from torch.backends.cuda import SDPAParams

            shape_q = (case["batch"], case["heads"], case["seq_len"], case["head_dim"])
            shape_kv = (case["batch"], case["kv_heads"], case["seq_len"], case["head_dim"])
            dt = getattr(torch, case["dtype"])
            probe = [torch.empty(s, device=device, dtype=dt) for s in (shape_q, shape_kv, shape_kv)]
            try:
                params = SDPAParams(probe[0], probe[1], probe[2], None, 0.0, causal, gqa)
            except TypeError:
                params = SDPAParams(probe[0], probe[1], probe[2], None, 0.0, causal)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                usable = getattr(torch.backends.cuda, can_use)(params, True)
            del probe
            if not usable:
                reasons = [str(w.message).split(" (Triggered internally")[0] for w in caught]
                reasons = [r for r in reasons if r and not r.endswith("because:")]
                if reasons:
                    raise Unavailable(reasons[0])
                raise Unavailable(code="refused")
        kwargs = {"is_causal": causal}
        if gqa:
            kwargs["enable_gqa"] = True

        def run(q, k, v):
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(q, k, v, **kwargs)
        return run, "bhld"
    if name == "flash-attn":
        if device != "cuda":
            raise Unavailable(code="cuda_only")
        try:
            from flash_attn import flash_attn_func
        except ImportError as exc:
            if "No module named" in str(exc):
                raise Unavailable(code="not_installed")
            raise Unavailable(short_error(exc))

        def run(q, k, v):
            return flash_attn_func(q, k, v, causal=causal)
        return run, "blhd"
    raise Unavailable(code="unknown_impl", name=name)


def bench_one(torch, case, impl, mode, device, gen, cfg, state):
    res = {"case": case["index"], "impl": impl, "mode": mode, "status": "ok"}
    dt = getattr(torch, case["dtype"])
    B, H, KV, L, D = case["batch"], case["heads"], case["kv_heads"], case["seq_len"], case["head_dim"]
    timer = Timer(torch, device)
    tensors = []
    try:
        run, layout = make_impl(torch, impl, case, device, state)
        shape = (lambda h: (B, h, L, D)) if layout == "bhld" else (lambda h: (B, L, h, D))
        need_grad = mode == "fwdbwd"

        def fresh(h, grad=False):
            x = torch.randn(*shape(h), generator=gen, device=device, dtype=torch.float32).to(dt)
            return x.requires_grad_(grad)

        q, k, v = fresh(H, need_grad), fresh(KV, need_grad), fresh(KV, need_grad)
        grad_out = fresh(H) if need_grad else None
        tensors = [q, k, v, grad_out]
        if need_grad:
            def step():
                out = run(q, k, v)
                torch.autograd.grad(out, (q, k, v), grad_out)
        else:
            def step():
                with torch.no_grad():
                    run(q, k, v)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                from torch._dynamo.utils import counters
                frames_before = int(counters["frames"].get("ok", 0))
            except Exception:
                counters, frames_before = None, 0
            res["first_call_s"] = round(timer.once(step), 4)
            if impl == "flex-compiled":
                fell_back = any("without torch.compile" in str(w.message) for w in caught)
                grew = counters is None or int(counters["frames"].get("ok", 0)) > frames_before
                res["compiled"] = (not fell_back) and grew
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            step()
            torch.cuda.synchronize()
            res["peak_bytes"] = int(torch.cuda.max_memory_allocated())
            res["extra_bytes"] = int(res["peak_bytes"] - base)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ms, n, lo, hi = timer.median_ms(step, cfg["reps"], cfg["warmup"], cfg["budget_s"])
        res.update(ms=round(ms, 4), reps=n, min_ms=round(lo, 4), max_ms=round(hi, 4))
        flops = attention_flops(case, mode)
        res["tflops"] = float("%.4g" % (flops / (ms * 1e-3) / 1e12)) if ms > 0 else None
    except Unavailable as exc:
        res["status"] = "unavailable"
        if exc.code:
            res["reason_code"], res["reason_args"] = exc.code, exc.values
        else:
            res["reason"] = exc.text
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        text = short_error(exc)
        if is_oom(exc):
            res["status"] = "oom"
            res["reason"] = text.splitlines()[0][:300]
        elif "does not support backward on CPU" in text or ("No available kernel" in text):
            res["status"] = "unavailable"
            res["reason"] = text.splitlines()[-1][:300]
        else:
            res["status"] = "error"
            res["reason"] = text
    finally:
        del tensors
        if device == "cuda":
            try:
                torch.cuda.empty_cache()
            except BaseException:
                pass
    return res


def environment(torch, device):
    env = {"torch": str(torch.__version__), "cuda": getattr(torch.version, "cuda", None), "device": device,
           "python": "%d.%d.%d" % sys.version_info[:3]}
    try:
        import triton

        env["triton"] = getattr(triton, "__version__", None)
    except BaseException:
        env["triton"] = None
    try:
        from importlib import metadata

        env["flash_attn"] = metadata.version("flash-attn")
    except Exception:
        env["flash_attn"] = None
    if device == "cuda":
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        env["device_name"] = p.name
        env["capability"] = "%d.%d" % (p.major, p.minor)
        env["total_memory"] = int(p.total_memory)
    else:
        env["device_name"] = "CPU (%s threads)" % torch.get_num_threads()
    return env


def main():
    cfg = json.loads(sys.argv[1])
    stage("import torch")
    import torch

    want = cfg.get("device") or "auto"
    has_cuda = False
    try:
        has_cuda = bool(torch.cuda.is_available())
    except Exception:
        pass
    if want == "cuda" and not has_cuda:
        _wire.emit({"error": "no-cuda"})
        return
    device = "cuda" if has_cuda and want in ("auto", "cuda") else "cpu"
    env = environment(torch, device)
    _wire.part({"env": env})
    try:
        import torch._dynamo

        torch._dynamo.config.cache_size_limit = max(getattr(torch._dynamo.config, "cache_size_limit", 8), 64)
    except Exception:
        pass
    seed = int(cfg.get("seed") or int.from_bytes(os.urandom(4), "little"))
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    items = cfg["items"]
    for i in range(int(cfg.get("start", 0)), len(items)):
        case, impl, mode = items[i]
        state = cfg.setdefault("_state", {}).setdefault(case["index"], {})
        stage("item %d %s %s" % (i, impl, mode))
        if impl == "flex-compiled" and not state.get("reset"):
            try:
                torch._dynamo.reset()  # a fresh compile per case: never the recompile-limit fallback
            except Exception:
                pass
            state["reset"] = True
        res = bench_one(torch, case, impl, mode, device, gen, cfg, state)
        res["item"] = i
        _wire.part(res)
    _wire.emit({"env": env, "seed": seed})


if __name__ == "__main__":
    main()
