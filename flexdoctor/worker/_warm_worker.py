# Run BY THE TARGET INTERPRETER (flexdoctor warm-cache --python) in a subprocess, Python 3.8+,
# stdlib + torch only: flexdoctor itself is not importable there.
#
#   python _warm_worker.py compile '<config json>' [--export FILE]
#   python _warm_worker.py import FOLDER   (artifact blobs flexdoctor has checked)
#   python _warm_worker.py fingerprint
#
# Compiles torch.compile(flex_attention) for one configuration (forward, and backward when
# asked), timing the first calls and reading Inductor's cache counters, so the parent can tell a
# cold compile from a cache hit. TORCHINDUCTOR_CACHE_DIR is set by the parent.
# Protocol (stdout): the stage and result lines of _wire.py; a crash or hang is judged by the
# parent from the last stage line.
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _wire, even under -P / PYTHONSAFEPATH
import _wire  # noqa: E402  (and drops this folder from sys.path again)
from _wire import emit, short_error, stage  # noqa: E402


def fingerprint(torch, device):
    fp = {
        "torch": str(torch.__version__),
        "torch_git": getattr(torch.version, "git_version", None),
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "device": device,
        "triton": None,
        "gpu_name": None,
        "gpu_capability": None,
    }
    try:
        import triton

        fp["triton"] = getattr(triton, "__version__", None)
    except BaseException:
        pass
    # Inductor keys the current GPU's name whenever CUDA works, also for graphs compiled for the
    # CPU (torch/_inductor/codecache.py CacheBase.get_system), so record it whenever CUDA works.
    if device == "cuda" or _cuda_works(torch):
        try:
            p = torch.cuda.get_device_properties(torch.cuda.current_device())
            fp["gpu_name"] = p.name
            fp["gpu_capability"] = "%d.%d" % (p.major, p.minor)
        except BaseException:
            pass
    return fp


def _cuda_works(torch):
    try:
        return bool(torch.cuda.is_available())
    except BaseException:
        return False


def counters_snapshot():
    from torch._dynamo.utils import counters

    ind, aot = counters["inductor"], counters["aot_autograd"]
    return {
        "fxgraph_cache_hit": int(ind.get("fxgraph_cache_hit", 0)),
        "fxgraph_cache_miss": int(ind.get("fxgraph_cache_miss", 0)),
        "fxgraph_cache_bypass": int(ind.get("fxgraph_cache_bypass", 0)),
        "autograd_cache_hit": int(aot.get("autograd_cache_hit", 0)),
        "autograd_cache_miss": int(aot.get("autograd_cache_miss", 0)),
        "autograd_cache_bypass": int(aot.get("autograd_cache_bypass", 0)),
    }


# ---------------------------------------------------------------- masks and score mods


def mask_and_score(cfg, torch):
    """(mask_mod or None, score_mod or None) for the config's named mask and score mod."""
    kind, _, arg = (cfg.get("mask") or "none").partition(":")
    L = int(cfg["seq_len"])
    S = int(cfg.get("kv_len") or L)
    device = cfg["device"]
    mask_mod = None
    if kind == "causal":
        def mask_mod(b, h, q_idx, kv_idx):
            return q_idx >= kv_idx
    elif kind == "sliding":
        window = int(arg)

        def mask_mod(b, h, q_idx, kv_idx):
            return (q_idx >= kv_idx) & (q_idx - kv_idx <= window)
    elif kind == "prefix":
        prefix = int(arg)

        def mask_mod(b, h, q_idx, kv_idx):
            return (kv_idx < prefix) | (q_idx >= kv_idx)
    elif kind == "document":
        docs = max(int(arg or 1), 1)
        # Packed sequences: `docs` documents of (nearly) equal length, causal inside each.
        ids = (torch.arange(max(L, S), device=device) * docs) // max(L, S)
        doc_ids = ids.to(torch.int32)

        def mask_mod(b, h, q_idx, kv_idx):
            return (doc_ids[q_idx] == doc_ids[kv_idx]) & (q_idx >= kv_idx)
    elif kind != "none":
        raise ValueError("unknown mask %r" % kind)

    score_mod = None
    skind, _, sarg = (cfg.get("score_mod") or "none").partition(":")
    heads = int(cfg["heads"])
    if skind == "softcap":
        cap = float(sarg or 30.0)

        def score_mod(score, b, h, q_idx, kv_idx):
            return cap * torch.tanh(score / cap)
    elif skind == "alibi":
        slopes = torch.exp2(-8.0 * (torch.arange(heads, device=device, dtype=torch.float32) + 1) / heads)

        def score_mod(score, b, h, q_idx, kv_idx):
            return score + slopes[h] * (kv_idx - q_idx)
    elif skind == "relative":
        def score_mod(score, b, h, q_idx, kv_idx):
            return score + (q_idx - kv_idx)
    elif skind != "none":
        raise ValueError("unknown score mod %r" % skind)
    return mask_mod, score_mod


def sync(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def compile_options(cfg):
    """torch.compile's arguments for the config: they are part of the cache key, so compile
    exactly as the config says."""
    dynamic = cfg.get("dynamic")
    if dynamic is None:  # a parent older than the dynamic field
        dynamic = (cfg.get("shapes") or "static") == "dynamic"
    options = {"dynamic": bool(dynamic)}
    if cfg.get("fullgraph"):
        options["fullgraph"] = True
    if (cfg.get("mode") or "default") != "default":
        options["mode"] = cfg["mode"]
    return options


def compile_one(cfg, export=None):
    out = {"ok": False}
    device = cfg["device"]
    stage("import torch")
    import torch

    out["fingerprint"] = fingerprint(torch, device)
    if export and not hasattr(torch.compiler, "save_cache_artifacts"):
        out["error_kind"] = "no-mega-cache"  # worded by the parent: worker-reason.<error_code>
        out["error_code"], out["error_args"] = "no_mega_cache", {"function": "save_cache_artifacts",
                                                                 "torch": str(torch.__version__)}
        return out
    stage("import flex_attention")
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    dtype = getattr(torch, cfg["dtype"])
    B, Hq = int(cfg["batch"]), int(cfg["heads"])
    Hkv = int(cfg.get("kv_heads") or Hq)
    L = int(cfg["seq_len"])
    S = int(cfg.get("kv_len") or L)
    D = int(cfg["head_dim"])
    backward = bool(cfg.get("backward"))
    if device == "cuda" and not torch.cuda.is_available():
        out["error_kind"] = "no-cuda"
        out["error_code"], out["error_args"] = "no_cuda", {"python": sys.executable}
        return out
    stage("create_block_mask")
    mask_mod, score_mod = mask_and_score(cfg, torch)
    block_mask = None
    if mask_mod is not None:
        block_mask = create_block_mask(mask_mod, None, None, L, S, device=device)
    torch.manual_seed(0)
    q = torch.randn(B, Hq, L, D, device=device, dtype=dtype, requires_grad=backward)
    k = torch.randn(B, Hkv, S, D, device=device, dtype=dtype, requires_grad=backward)
    v = torch.randn(B, Hkv, S, D, device=device, dtype=dtype, requires_grad=backward)
    kwargs = {}
    if block_mask is not None:
        kwargs["block_mask"] = block_mask
    if score_mod is not None:
        kwargs["score_mod"] = score_mod
    if Hkv != Hq:
        kwargs["enable_gqa"] = True
    if cfg.get("kernel_options"):
        kwargs["kernel_options"] = dict(cfg["kernel_options"])
    options = compile_options(cfg)
    out["compile_options"] = dict(options)
    stage("import dynamo")
    import torch._dynamo  # noqa: F401  (a fixed cost no cache removes: timed on its own)
    import torch._inductor.config  # noqa: F401

    compiled = torch.compile(flex_attention, **options)
    stage("first forward")
    t = time.time()
    o = compiled(q, k, v, **kwargs)
    sync(torch, device)
    out["fwd_s"] = round(time.time() - t, 3)
    if backward:
        stage("first backward")
        t = time.time()
        o.backward(torch.ones_like(o))
        sync(torch, device)
        out["bwd_s"] = round(time.time() - t, 3)
    out["first_call_s"] = round(out["fwd_s"] + out.get("bwd_s", 0.0), 3)
    out["counters"] = counters_snapshot()
    if export:
        stage("save_cache_artifacts")
        saved = torch.compiler.save_cache_artifacts()
        if saved is None:
            out["export_bytes"] = 0
        else:
            data = saved[0]
            tmp = export + ".tmp%d" % os.getpid()
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, export)
            out["export_bytes"] = len(data)
    out["ok"] = True
    return out


def _no_unpickling_while_loading(torch):
    """torch 2.8+ unpickles each Inductor entry while loading it, only to write out the Triton
    kernels bundled in it (codecache.InductorCacheArtifact.populate_cache ->
    FxGraphCache._emit_triton_bundle -> pickle.loads). Turned off here: the first cache hit
    writes them out anyway (FxGraphCache.cache_hit_post_compile -> TritonBundler.read_and_emit),
    so loading a bundle only writes files and runs nothing from it."""
    try:
        import torch._inductor.config as inductor_config

        if hasattr(inductor_config, "bundle_triton_into_fx_graph_cache"):
            inductor_config.bundle_triton_into_fx_graph_cache = False
    except BaseException:
        pass


def import_artifacts(folder):
    """Load the artifact blobs flexdoctor has checked and written to ``folder`` (a private
    directory: the parent validated every artifact's type, key and content first)."""
    out = {"ok": False}
    stage("import torch")
    import torch

    out["fingerprint"] = fingerprint(torch, "cuda" if torch.cuda.is_available() else "cpu")
    if not hasattr(torch.compiler, "load_cache_artifacts"):
        out["error_kind"] = "no-mega-cache"
        out["error_code"], out["error_args"] = "no_mega_cache", {"function": "load_cache_artifacts",
                                                                 "torch": str(torch.__version__)}
        return out
    _no_unpickling_while_loading(torch)
    stage("load_cache_artifacts")
    loaded = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".bin"):
            continue
        with open(os.path.join(folder, name), "rb") as fh:
            data = fh.read()
        info = torch.compiler.load_cache_artifacts(data)
        count = 0
        if info is not None:
            count = sum(len(v) for v in getattr(info, "artifacts", {}).values()) if hasattr(info, "artifacts") \
                else sum(len(getattr(info, a, ())) for a in dir(info) if a.endswith("_artifacts"))
        loaded.append({"name": name, "bytes": len(data), "artifacts": count, "refused": info is None})
    out["loaded"] = loaded
    out["ok"] = True
    return out


def main(argv):
    mode = argv[0] if argv else "fingerprint"
    try:
        if mode == "compile":
            export = None
            if "--export" in argv:
                export = argv[argv.index("--export") + 1]
            out = compile_one(json.loads(argv[1]), export=export)
        elif mode == "import":
            out = import_artifacts(argv[1])
        else:
            stage("import torch")
            import torch

            device = "cuda" if torch.cuda.is_available() else "cpu"
            out = {"ok": True, "fingerprint": fingerprint(torch, device)}
    except BaseException as exc:  # noqa: B902 - every failure becomes a result line
        out = {"ok": False, "error": short_error(exc), "traceback": traceback.format_exc()[-8000:],
               "stage": _wire.last_stage()}
        try:
            out["counters"] = counters_snapshot()
        except BaseException:
            pass
    emit(out)


if __name__ == "__main__":
    main(sys.argv[1:])
