# Run BY THE TARGET INTERPRETER in a subprocess with a timeout (`flexdoctor check --deep`).
# stdlib + torch only, Python 3.8+: flexdoctor itself is not importable there.
#
#   python _deep_probe.py '<config json>'
#
# Runs the real attention kernels on this machine: SDPA with each backend torch offers (asking
# torch.backends.cuda.can_use_* with debug on, so refusals come back in torch's own words),
# compiled flex_attention per dtype against a float64 reference, and flash-attn / xformers if
# installed. Inputs are fresh random tensors (never zeros); the seed is reported.
# Protocol (stdout): the lines of _wire.py: stages as work starts, a named part after each
# finished section (so a crash or hang later keeps what was already measured), then the result.
# The parent judges crashes from the last stage.
import importlib
import importlib.util
import json
import math
import os
import re
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _wire, even under -P / PYTHONSAFEPATH
import _wire  # noqa: E402  (and drops this folder from sys.path again)
from _wire import emit, stage  # noqa: E402

# Relative error ||out - ref|| / ||ref|| allowed against a float64 reference.
TOLERANCE = {"float32": 1e-3, "float16": 1e-2, "bfloat16": 1e-2}
# Gradients go through two more matmuls and a softmax backward: a little more room.
GRAD_TOLERANCE = {"float32": 2e-3, "float16": 2e-2, "bfloat16": 3e-2}
SDPA_BACKENDS = (
    ("flash", "FLASH_ATTENTION", "can_use_flash_attention"),
    ("efficient", "EFFICIENT_ATTENTION", "can_use_efficient_attention"),
    ("cudnn", "CUDNN_ATTENTION", "can_use_cudnn_attention"),
    ("math", "MATH", None),
)
FALLBACK_WARNING = "flex_attention called without torch.compile()"


def short_error(exc):
    return _wire.short_error(exc, 3000)


_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?\s*$", re.S)


def clean_warning(w):
    text = _TRIGGERED.sub("", str(w.message)).strip()
    return text


def reasons_from(caught):
    """torch's own words from captured warnings, without the headers and duplicates.

    "<backend> has been runtime disabled." lines are dropped: this fresh process never disables
    a backend globally, so they only echo sdpa_kernel([one backend]) switching the others off
    and would be misread as the reason the backend under test was refused.
    """
    out = []
    for w in caught:
        text = clean_warning(w)
        if not text or text.endswith("kernel not used because:") or text in out:
            continue
        if text.endswith("has been runtime disabled."):
            continue
        out.append(text[:600])
    return out


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def rel_error(torch, out, ref):
    """||out - ref|| / ||ref|| in float64; None for NaN/inf (reported separately)."""
    out64 = out.detach().to(torch.float64)
    if not bool(torch.isfinite(out64).all()):
        return None
    den = float(torch.linalg.vector_norm(ref))
    return float(torch.linalg.vector_norm(out64 - ref)) / (den if den > 0 else 1.0)


def reference(torch, q, k, v, causal, keep_grad=False):
    """Plain attention in float64 from the very inputs the kernel saw (B, H, L, D layout).

    ``keep_grad``: the inputs are float64 leaves whose gradients the backward check compares, so
    they must stay in the graph (detaching them made the reference backward itself fail)."""
    if keep_grad:
        q64, k64, v64 = q, k, v
    else:
        q64, k64, v64 = q.detach().double(), k.detach().double(), v.detach().double()
    if k64.shape[1] != q64.shape[1]:  # GQA
        rep = q64.shape[1] // k64.shape[1]
        k64 = k64.repeat_interleave(rep, dim=1)
        v64 = v64.repeat_interleave(rep, dim=1)
    scores = q64 @ k64.transpose(-2, -1) / math.sqrt(q64.shape[-1])
    if causal:
        L, S = scores.shape[-2], scores.shape[-1]
        keep = torch.ones(L, S, dtype=torch.bool, device=scores.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v64


def fresh(torch, shape, dtype, device, gen, requires_grad=False):
    """Standard-normal data (never zeros): sampled in float32, then cast."""
    x = torch.randn(*shape, generator=gen, device=device, dtype=torch.float32).to(dtype)
    return x.requires_grad_(requires_grad)


def dtype_of(torch, name):
    return getattr(torch, name)


# ---------------------------------------------------------------- SDPA


def probe_sdpa(torch, device, cfg, gen):
    import torch.nn.functional as F

    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as exc:  # torch < 2.3
        return [{"error": short_error(exc)}]
    B, H, L, D = cfg["sdpa_shape"]
    runs = []
    for dname in cfg["sdpa_dtypes"]:
        stage("sdpa " + dname)
        dtype = dtype_of(torch, dname)
        run = {"dtype": dname, "shape": [B, H, L, D], "is_causal": False, "backends": []}
        try:
            q, k, v = (fresh(torch, (B, H, L, D), dtype, device, gen) for _ in range(3))
        except Exception as exc:
            run["default_error"] = short_error(exc)
            runs.append(run)
            continue
        ref = reference(torch, q, k, v, False)
        params = None
        if device == "cuda":
            try:
                from torch.backends.cuda import SDPAParams

                try:
                    params = SDPAParams(q, k, v, None, 0.0, False, False)
                except TypeError:  # torch 2.4: no enable_gqa
                    params = SDPAParams(q, k, v, None, 0.0, False)
            except Exception as exc:
                run["params_error"] = short_error(exc)
        for name, enum_name, can_use in SDPA_BACKENDS:
            res = {"backend": name, "usable": None, "reasons": []}
            if params is not None and can_use is not None:
                fn = getattr(torch.backends.cuda, can_use, None)
                if fn is not None:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            res["usable"] = bool(fn(params, True))
                        except Exception as exc:
                            res["usable"] = False
                            res["reasons"].append(short_error(exc))
                    res["reasons"] += reasons_from(caught)
            backend = getattr(SDPBackend, enum_name, None)
            if backend is None:
                res["ran"] = False
                res["error_code"] = "no_sdp_backend"  # worded by the parent: worker-reason.<code>
                res["error_args"] = {"backend": enum_name, "torch": str(torch.__version__)}
                run["backends"].append(res)
                continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    with sdpa_kernel([backend]):
                        out = F.scaled_dot_product_attention(q, k, v)
                    sync(torch, device)
                    res["ran"] = True
                    err = rel_error(torch, out, ref)
                    res["nan"] = err is None
                    res["rel_error"] = err
                except Exception as exc:
                    res["ran"] = False
                    res["error"] = short_error(exc)
            for text in reasons_from(caught):
                if text not in res["reasons"]:
                    res["reasons"].append(text)
            run["backends"].append(res)
        # What a user gets without choosing: torch picks.
        try:
            out = F.scaled_dot_product_attention(q, k, v)
            sync(torch, device)
            err = rel_error(torch, out, ref)
            run["default_ok"] = True
            run["default_rel_error"] = err
        except Exception as exc:
            run["default_ok"] = False
            run["default_error"] = short_error(exc)
        runs.append(run)
    return runs


# ---------------------------------------------------------------- flex_attention


def counters_snapshot():
    try:
        from torch._dynamo.utils import counters
    except Exception:
        return {}
    return {
        "frames_ok": int(counters["frames"].get("ok", 0)),
        "unique_graphs": int(counters["stats"].get("unique_graphs", 0)),
        "fxgraph_cache_hit": int(counters["inductor"].get("fxgraph_cache_hit", 0)),
        "fxgraph_cache_miss": int(counters["inductor"].get("fxgraph_cache_miss", 0)),
    }


def probe_flex(torch, device, cfg, gen):
    stage("flex import")
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except BaseException as exc:
        return [{"dtype": d, "error": short_error(exc), "stage": "import"} for d in cfg["flex_dtypes"]]
    B, H, L, D = cfg["flex_shape"]
    runs = []
    stage("flex create_block_mask")
    try:
        block_mask = create_block_mask(lambda b, h, q_idx, kv_idx: q_idx >= kv_idx, None, None, L, L, device=device)
    except BaseException as exc:
        err = short_error(exc)
        return [{"dtype": d, "shape": [B, H, L, D], "error": err, "stage": "create_block_mask"}
                for d in cfg["flex_dtypes"]]
    compiled = torch.compile(flex_attention, dynamic=False)
    backward = device == "cuda" and cfg.get("flex_backward", True)
    for dname in cfg["flex_dtypes"]:
        dtype = dtype_of(torch, dname)
        run = {"dtype": dname, "shape": [B, H, L, D], "mask": "causal", "backward": None}
        q, k, v = (fresh(torch, (B, H, L, D), dtype, device, gen, requires_grad=backward) for _ in range(3))
        before = counters_snapshot()
        stage("flex compile " + dname)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                t = time.time()
                out = compiled(q, k, v, block_mask=block_mask)
                sync(torch, device)
                run["compile_seconds"] = round(time.time() - t, 3)
                stage("flex run " + dname)
                t = time.time()
                out = compiled(q, k, v, block_mask=block_mask)
                sync(torch, device)
                run["run_seconds"] = round(time.time() - t, 4)
            except BaseException as exc:
                run["error"] = short_error(exc)
                run["stage"] = "forward"
        after = counters_snapshot()
        texts = reasons_from(caught)
        run["fallback_warning"] = next((x for x in texts if FALLBACK_WARNING in x), None)
        run["warnings"] = [x for x in texts if FALLBACK_WARNING not in x][:5]
        run["cache"] = {k: after.get(k, 0) - before.get(k, 0) for k in after}
        if "error" in run:
            runs.append(run)
            _wire.part(run, "flex " + dname)
            continue
        if after:
            run["compiled_path"] = run["fallback_warning"] is None and after["frames_ok"] > before.get("frames_ok", 0)
        else:
            run["compiled_path"] = run["fallback_warning"] is None
        ref = reference(torch, q, k, v, True)
        err = rel_error(torch, out, ref)
        run["nan"] = err is None
        run["rel_error"] = err
        run["tolerance"] = TOLERANCE[dname]
        if backward:
            stage("flex backward " + dname)
            try:
                grad = fresh(torch, out.shape, dtype, device, gen)
                t = time.time()
                gq, gk, gv = torch.autograd.grad(out, (q, k, v), grad)
                sync(torch, device)
                q64, k64, v64 = (x.detach().double().requires_grad_(True) for x in (q, k, v))
                r = reference(torch, q64, k64, v64, True, keep_grad=True)
                rq, rk, rv = torch.autograd.grad(r, (q64, k64, v64), grad.double())
                errs = [rel_error(torch, a, b) for a, b in ((gq, rq), (gk, rk), (gv, rv))]
                run["backward"] = {
                    "seconds": round(time.time() - t, 3),
                    "nan": any(e is None for e in errs),
                    "rel_error": None if any(e is None for e in errs) else max(errs),
                    "tolerance": GRAD_TOLERANCE[dname],
                }
            except BaseException as exc:
                run["backward"] = {"error": short_error(exc)}
        runs.append(run)
        _wire.part(run, "flex " + dname)
    return runs


# ---------------------------------------------------------------- flash-attn, xformers


def dist_version(*names):
    try:
        from importlib import metadata
    except ImportError:
        return None
    for name in names:
        try:
            return metadata.version(name)
        except Exception:
            continue
    return None


def try_import(name):
    """(imported module or None, error text or None). A missing module is (None, None)."""
    try:
        if importlib.util.find_spec(name) is None:
            return None, None
    except BaseException as exc:  # the parent package itself fails to import
        return None, short_error(exc)
    try:
        return importlib.import_module(name), None
    except BaseException as exc:
        return None, short_error(exc)


def probe_flash_attn(torch, device, cfg, gen):
    stage("flash-attn")
    out = {"installed": False}
    version = dist_version("flash-attn", "flash_attn")
    spec = None
    try:
        spec = importlib.util.find_spec("flash_attn")
    except BaseException:
        pass
    out["installed"] = spec is not None or version is not None
    out["dist_version"] = version
    if out["installed"]:
        mod, err = try_import("flash_attn")
        out["importable"] = mod is not None
        out["import_error"] = err
        if mod is not None:
            out["version"] = str(getattr(mod, "__version__", version))
    cap = None
    if device == "cuda":
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        cap = (p.major, p.minor)
    out["fa2_gpu_ok"] = cap is not None and cap >= (8, 0)
    if out.get("importable") and out["fa2_gpu_ok"]:
        out["runs"] = []
        try:
            from flash_attn import flash_attn_func
        except BaseException as exc:
            out["run_error"] = short_error(exc)
            flash_attn_func = None
        B, H, L, D = cfg["flash_shape"]
        for dname in ("float16", "bfloat16"):
            if flash_attn_func is None:
                break
            stage("flash-attn run " + dname)
            dtype = dtype_of(torch, dname)
            run = {"dtype": dname, "shape": [B, H, L, D]}
            try:
                # flash-attn takes (batch, seqlen, heads, head_dim).
                q, k, v = (fresh(torch, (B, L, H, D), dtype, device, gen) for _ in range(3))
                o = flash_attn_func(q, k, v, causal=True)
                sync(torch, device)
                ref = reference(torch, q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), True)
                err = rel_error(torch, o.transpose(1, 2), ref)
                run.update(nan=err is None, rel_error=err, tolerance=TOLERANCE[dname])
            except BaseException as exc:
                run["error"] = short_error(exc)
            out["runs"].append(run)
    stage("flash-attn 3/4")
    fa3 = {"installed": False}
    for name in ("flash_attn_3", "flash_attn_interface"):
        try:
            found = importlib.util.find_spec(name) is not None
        except BaseException:
            found = False
        if found:
            mod, err = try_import(name)
            fa3 = {"installed": True, "module": name, "importable": mod is not None, "import_error": err,
                   "version": dist_version("flash-attn-3", "flash_attn_3", "flashattn-hopper")}
            break
    fa3["gpu_ok"] = cap is not None and cap[0] == 9
    out["fa3"] = fa3
    fa4 = {"installed": False}
    if dist_version("flash-attn-4", "flash_attn_4") is not None or out.get("importable"):
        try:
            found = importlib.util.find_spec("flash_attn.cute") is not None
        except BaseException:
            found = False
        if found:
            mod, err = try_import("flash_attn.cute")
            fa4 = {"installed": True, "importable": mod is not None, "import_error": err,
                   "version": dist_version("flash-attn-4", "flash_attn_4")}
    fa4["gpu_ok"] = cap is not None and cap[0] in (9, 10)
    out["fa4"] = fa4
    return out


def probe_xformers(torch, device, cfg, gen):
    stage("xformers")
    version = dist_version("xformers")
    try:
        found = importlib.util.find_spec("xformers") is not None
    except BaseException:
        found = False
    out = {"installed": found or version is not None, "dist_version": version}
    if out["installed"]:
        mod, err = try_import("xformers.ops")
        out["importable"] = mod is not None
        out["import_error"] = err
        if mod is not None:
            try:
                import xformers

                out["version"] = str(getattr(xformers, "__version__", version))
            except BaseException:
                out["version"] = version
    return out


# ---------------------------------------------------------------- main


def main():
    cfg = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    out = {}
    stage("import torch")
    try:
        import torch
    except BaseException as exc:
        out["import_error"] = short_error(exc)
        emit(out)
        return
    out["torch_version"] = str(torch.__version__)
    stage("device")
    want = cfg.get("device") or "auto"
    try:
        has_cuda = bool(torch.cuda.is_available())
    except Exception:
        has_cuda = False
    device = "cuda" if (want == "auto" and has_cuda) or want == "cuda" else "cpu"
    if device == "cuda" and not has_cuda:
        out["device"] = "cuda"
        out["device_error"] = "torch.cuda.is_available() is False"
        emit(out)
        return
    out["device"] = device
    cap = None
    if device == "cuda":
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        cap = (p.major, p.minor)
        out["device_name"] = p.name
        out["capability"] = "%d.%d" % cap
    else:
        out["device_name"] = "CPU"
    seed = int(cfg.get("seed") or int.from_bytes(os.urandom(4), "little"))
    out["seed"] = seed
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)

    cfg.setdefault("sdpa_dtypes", ["float16", "bfloat16", "float32"])
    # Shapes [B, H, L, D] per section and device come from the parent (flexdoctor.deep.deep.WORKLOADS);
    # the literals are for running this script on its own.
    shapes = cfg.get("shapes") or {}
    cfg.setdefault("sdpa_shape", (shapes.get("sdpa") or {}).get(device)
                   or ([1, 8, 1024, 64] if device == "cuda" else [1, 8, 256, 64]))
    if "flex_dtypes" not in cfg or not cfg["flex_dtypes"]:
        if device == "cuda":
            # bf16 needs sm80+ (is_bf16_supported() can say yes through emulation on older GPUs).
            cfg["flex_dtypes"] = ["float16", "bfloat16", "float32"] if cap >= (8, 0) else ["float16", "float32"]
        else:
            cfg["flex_dtypes"] = ["float32"]
    if device == "cuda" and cap < (8, 0) and "bfloat16" in cfg["flex_dtypes"]:
        out["flex_skipped"] = {"bfloat16": "no-native-bf16"}  # a reason code: the report words it
        cfg["flex_dtypes"] = [d for d in cfg["flex_dtypes"] if d != "bfloat16"]
    cfg.setdefault("flex_shape", (shapes.get("flex") or {}).get(device)
                   or ([2, 4, 256, 64] if device == "cuda" else [1, 2, 128, 16]))
    cfg.setdefault("flash_shape", (shapes.get("flash_attn") or {}).get(device) or [2, 4, 256, 64])
    out["flex_dtypes"] = list(cfg["flex_dtypes"])
    _wire.part({k: out[k] for k in ("torch_version", "device", "device_name", "capability", "seed",
                                     "flex_dtypes", "flex_skipped") if k in out}, "meta")

    sections = [s for s in cfg.get("sections") or ["sdpa", "flex", "flash_attn", "xformers"]]
    for name, fn in (("sdpa", probe_sdpa), ("flex", probe_flex), ("flash_attn", probe_flash_attn),
                     ("xformers", probe_xformers)):
        if name not in sections:
            continue
        try:
            out[name] = fn(torch, device, cfg, gen)
        except BaseException as exc:  # a probe bug must not lose the other sections
            out.setdefault("section_errors", {})[name] = short_error(exc)
        if name in out:
            _wire.part(out[name], name)
    emit(out)


if __name__ == "__main__":
    main()
