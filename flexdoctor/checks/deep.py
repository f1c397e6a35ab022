"""Deep checks (FD8xx): what running the real kernels here showed (``check --deep``).

They judge ``facts.deep`` (flexdoctor.deep's probe) and skip cleanly when the deep tier was not
run. Errors captured from torch are matched against the whole knowledge base first, so a known
failure gets its specific fix; the FDE75x entries cover what only running the kernels finds.
"""

from __future__ import annotations

from typing import Optional

from .. import knowledge as kb
from .. import wheels
from ..facts import DeepFacts, Facts, ProbeError, Skip, ok
from ..model import Finding, Fix
from . import _util as u
from .base import check, fail, passed, skip, warn

HALF = ("float16", "bfloat16")


def _deep(facts: Facts) -> DeepFacts:
    d = facts.deep
    if d is None:
        raise Skip(u.t("deep.not_run"))
    if isinstance(d, ProbeError):
        raise Skip(u.t("deep.failed"))
    return d


def _last_line(text: Optional[str]) -> str:
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "?"


def _backend_error(b) -> str:
    """Why an SDPA backend did not run: flexdoctor's reason in the report's language, else torch's words."""
    if b.error_code and u.has(f"worker-reason.{b.error_code}") and isinstance(b.error_args, dict):
        return u.t(f"worker-reason.{b.error_code}", **b.error_args)
    return _last_line(b.error)


# FlashAttention-3 is not on PyPI (its flash_attn_3 0.0.0 there is a placeholder): it installs from
# the hopper/ directory of the repository, whose setup.py names the distribution flash_attn_3.
_FA3_SOURCE = '"flash_attn_3 @ git+https://github.com/Dao-AILab/flash-attention.git#subdirectory=hopper"'


def _reinstall(facts: Facts, package: str) -> tuple[str, str]:
    """(distribution name, pip install arguments) that reinstall an attention extension for the
    torch that is installed, without letting pip swap torch."""
    if package in ("flash_attn_3", "flash_attn_interface", "flash-attn-3"):
        return "flash_attn_3", f"--force-reinstall --no-deps --no-build-isolation {_FA3_SOURCE}"
    if package in ("flash-attn", "flash_attn"):
        return "flash-attn", "--force-reinstall --no-deps --no-build-isolation --no-cache-dir flash-attn"
    if package == "xformers" and ok(facts.torch):
        # xformers pins one torch release: pinning torch to the installed one makes pip pick the
        # xformers built for it, from the index of the installed build.
        current = u.base_version(facts.torch.version)
        tag = u.installed_tag(facts)
        index = "" if not tag or u.machine(facts).platform.startswith("macos") else f" --index-url {wheels.INDEX}/{tag}"
        return "xformers", f"--upgrade xformers torch=={current}{index}"
    return package, f"--force-reinstall --no-deps {package}"


def _fix_for(text: Optional[str], default: str, facts: Facts, **ctx) -> Fix:
    """The knowledge-base fix whose pattern matches ``text``, else ``default``."""
    if "package" in ctx:
        ctx["package"], ctx["reinstall"] = _reinstall(facts, ctx["package"])
    context = {"python": u.python_cmd(facts), **ctx}
    matched = kb.match_text(text or "") if text else []
    if matched:
        return matched[0].render(**context)
    if "package" in ctx:  # the check knows the package: its own fix names it best
        return kb.fix(default, **context)
    from ..knowledge import explain as kb_explain

    torch, cuda = (facts.torch.version, facts.torch.cuda) if facts.torch is not None else (None, None)
    shaped = kb_explain.error_fix(text, context["python"], torch, cuda) if text else None  # explain's words (issue 22)
    return shaped or kb.fix(default, **context)


def _err(x: Optional[float]) -> str:
    return "?" if x is None else f"{x:.1e}"


# --------------------------------------------------------------------------- FD801


@check("FD801", "deep-run", area="deep")
def deep_run(facts: Facts) -> Finding:
    """What it checks: that the deep tier (`flexdoctor check --deep`) ran to the end: a
    subprocess of the target interpreter that runs SDPA, compiled flex_attention and the
    installed attention extensions on this machine's GPU (or CPU), with a time limit.

    Why it matters: a static check says "should work"; this says "does work". When the
    process crashes (a segfault in a kernel or driver), hangs (a wedged GPU, a deadlocked
    compile worker) or is killed for memory, your training job will die the same way, at the
    same step. The stage it died in is named.

    How to fix: re-run with -v to see the stage and its log, run that step alone, and look at
    nvidia-smi (other processes holding memory) and dmesg (Xid errors, OOM kills).
    """
    d = facts.deep
    if d is None:
        return skip("deep.not_run")
    if isinstance(d, ProbeError):
        if d.kind == "import-error":
            return skip("deep-run.import_failed", message=_last_line(d.message))
        what = u.t({"timeout": "deep-run.hung", "crash": "deep-run.crashed"}.get(d.kind, "deep-run.stopped"))
        details = tuple((d.detail or "").strip().splitlines()[-6:])
        return fail("deep-run.failed", _fix_for(f"{d.message}\n{d.detail or ''}", "deep-probe-died", facts),
                    details=details, what=what, message=u.probe_error_text(d))
    if d.incomplete is not None:
        inc = d.incomplete
        details = tuple((inc.detail or "").strip().splitlines()[-6:])
        return fail("deep-run.incomplete", _fix_for(f"{inc.message}\n{inc.detail or ''}", "deep-probe-died", facts),
                    details=details, message=u.probe_error_text(inc))
    if d.section_errors:
        return warn("deep-run.section_error",
                    details=[u.t("deep.section_error", section=k, error=_last_line(v))
                             for k, v in sorted(d.section_errors.items())],
                    sections=", ".join(sorted(d.section_errors)))
    device = d.device_name or d.device
    if d.capability:
        device += f" (sm_{d.capability.replace('.', '')})"
    return passed("deep-run.pass", device=device, seconds=f"{d.seconds:.1f}" if d.seconds is not None else "?",
                  version=d.torch_version or "?", seed=d.seed if d.seed is not None else "?")


# --------------------------------------------------------------------------- FD802, FD803


def _sdpa_runs(facts: Facts):
    d = _deep(facts)
    if not d.sdpa:
        raise Skip(u.t("deep.not_reached"))
    return d, d.sdpa


@check("FD802", "deep-sdpa-backends", area="deep")
def deep_sdpa_backends(facts: Facts) -> Finding:
    """What it checks: for fp16, bf16 and fp32 at a typical shape (1x8x1024x64 on a GPU), which
    scaled_dot_product_attention backends torch accepts here (FlashAttention,
    memory-efficient, cuDNN, math), asking torch.backends.cuda.can_use_*(params, debug=True)
    and running SDPA with each backend alone; refusals are reported in torch's own words.

    Why it matters: the FlashAttention kernel needs sm80+ and fp16/bf16. On a T4 (sm75) torch
    refuses it ("Flash attention only supports gpu architectures in the range [sm80, sm121].
    Attempting to run on a sm 7.5 gpu."), so code that forces flash with
    sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False) stops with
    "RuntimeError: No available kernel. Aborting execution." When every fused kernel is
    refused, SDPA silently runs the math fallback: quadratic memory, several times slower.

    How to fix: allow the memory-efficient kernel (sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]))
    or let torch choose; on sm7x use fp16, not bf16; follow torch's reasons for the rest.
    """
    d, runs = _sdpa_runs(facts)
    items, refusals = [], []
    problems: list[Finding] = []
    for run in runs:
        ran = [b.backend for b in run.backends if b.ran]
        items.append(u.t("deep-sdpa-backends.summary_item", dtype=run.dtype,
                         backends=", ".join(ran) or u.t("deep-sdpa-backends.none")))
        by_name = {b.backend: b for b in run.backends}
        if d.device == "cuda":
            for b in run.backends:
                if not b.ran and b.backend != "math":
                    reason = (b.reasons or [_backend_error(b)])[0]
                    refusals.append(u.t("deep-sdpa-backends.refusal", dtype=run.dtype, backend=b.backend,
                                        reason=reason))
        if run.default_ok is False:
            problems.append(fail("deep-sdpa-backends.default_failed",
                                 _fix_for(run.default_error, "deep-sdpa-math-only", facts),
                                 dtype=run.dtype, error=_last_line(run.default_error)))
            continue
        if d.device != "cuda" or run.dtype not in HALF:
            continue
        fused = [n for n in ran if n != "math"]
        flash = by_name.get("flash")
        if not fused:
            reasons = [r for b in run.backends if b.backend != "math" for r in b.reasons]
            problems.append(warn("deep-sdpa-backends.math_only",
                                 _fix_for("\n".join(reasons), "deep-sdpa-math-only", facts),
                                 dtype=run.dtype, reason=reasons[0] if reasons else "?"))
        elif flash is not None and not flash.ran and run.dtype == "float16":
            reason = (flash.reasons or [_backend_error(flash)])[0]
            # The concrete fix for what was seen here (FDE107 explains sm7x in general).
            fix = kb.fix("deep-sdpa-flash-refused", python=u.python_cmd(facts))
            problems.append(warn("deep-sdpa-backends.flash_refused", fix, dtype=run.dtype, reason=reason,
                                 working=", ".join(fused)))
    if problems:
        worst = max(problems, key=lambda f: f.status.rank)
        extra = [p.message for p in problems if p is not worst]
        return Finding(worst.status, worst.message, worst.fix, tuple(extra) + tuple(refusals))
    summary = "; ".join(items)
    if d.device != "cuda":
        return passed("deep-sdpa-backends.cpu_pass", summary=summary)
    device = d.device_name or "GPU"
    return passed("deep-sdpa-backends.pass", device=device, summary=summary, details=refusals)


@check("FD803", "deep-sdpa-numerics", area="deep")
def deep_sdpa_numerics(facts: Facts) -> Finding:
    """What it checks: that every SDPA backend that ran (and SDPA with torch choosing) gives the
    same answer as attention computed in float64 from the same random inputs: relative error
    ||out - ref|| / ||ref|| below 1e-3 in fp32 and 1e-2 in fp16/bf16, and no NaN.

    Why it matters: a kernel that runs is not yet a kernel that is right. A broken driver, a
    faulty GPU or a kernel bug for this architecture shows up as NaN losses or a model that
    silently trains worse.

    How to fix: clear the compile cache, update the driver, check the GPU (nvidia-smi -q -d ECC),
    and avoid the failing backend for that dtype until it is fixed upstream.
    """
    _, runs = _sdpa_runs(facts)
    worst = None
    tolerance = {"float32": 1e-3, "float16": 1e-2, "bfloat16": 1e-2}
    for run in runs:
        tol = tolerance.get(run.dtype, 1e-2)
        checked = [(b.backend, b.rel_error, b.nan) for b in run.backends if b.ran]
        if run.default_ok:
            checked.append(("default", run.default_rel_error, run.default_rel_error is None))
        for name, err, nan in checked:
            if nan or err is None:
                return fail("deep-sdpa-numerics.nan", kb.fix("deep-wrong-result"), backend=name, dtype=run.dtype)
            if err > tol:
                return fail("deep-sdpa-numerics.inaccurate", kb.fix("deep-wrong-result"), backend=name,
                            dtype=run.dtype, error=_err(err), tolerance=f"{tol:g}")
            if worst is None or err > worst[0]:
                worst = (err, name, run.dtype)
    if worst is None:
        return skip("deep-sdpa-numerics.nothing")
    return passed("deep-sdpa-numerics.pass", backend=worst[1], dtype=worst[2], error=_err(worst[0]))


# --------------------------------------------------------------------------- FD804-FD806


def _flex(facts: Facts):
    d = _deep(facts)
    if not d.flex:
        if d.incomplete is not None or d.section_errors.get("flex"):
            raise Skip(u.t("deep.not_reached"))
        raise Skip(u.t("deep-flex-compiled.nothing"))
    return d, d.flex


@check("FD804", "deep-flex-compiled", area="deep")
def deep_flex_compiled(facts: Facts) -> Finding:
    """What it checks: that torch.compile(flex_attention) with a causal block mask compiles
    and runs here for each dtype the device supports (fp16, bf16 on sm80+, fp32 on a GPU;
    fp32 on the CPU, inference only), how long the first call took (compile or cache load),
    and that the compiled kernel really ran: the uncompiled-fallback warning ("flex_attention
    called without torch.compile()") or no Dynamo graph means it did not.

    Why it matters: the static checks say the pieces are there; only compiling shows that
    Dynamo, Inductor, Triton, the C compiler and the GPU work together. The uncompiled
    fallback materialises the whole score matrix: on an H100 at L=4096 it is about 18x slower
    and uses 30x the memory, and runs out of memory at L=16384.

    How to fix: the fix follows the error (a missing compiler, a Triton mismatch, shared
    memory on consumer GPUs: kernel_options={'BLOCK_M': 64, 'BLOCK_N': 64}); for the fallback,
    call torch.compile(flex_attention) once and reuse it.
    """
    d, runs = _flex(facts)
    for run in runs:
        if run.error:
            return fail("deep-flex-compiled.failed", _fix_for(run.error, "deep-flex-compile-failed", facts),
                        details=tuple(run.error.strip().splitlines()[-4:]), dtype=run.dtype,
                        stage=run.stage or "forward", error=_last_line(run.error))
    for run in runs:
        if run.compiled_path is False:
            if run.fallback_warning:
                return warn("deep-flex-compiled.not_compiled",
                            _not_compiled_fix(facts),
                            dtype=run.dtype, warning=_last_line(run.fallback_warning.split("\n")[0]))
            return warn("deep-flex-compiled.not_compiled_silent",
                        _not_compiled_fix(facts), dtype=run.dtype)
    details = []
    for run in runs:
        details.append(u.t("deep-flex-compiled.detail", dtype=run.dtype, first=_secs(run.compile_seconds),
                           cache=_cache_state(run.cache),
                           run=f"{run.run_seconds * 1000:.2f}" if run.run_seconds is not None else "?"))
    details += [u.t("deep-flex-compiled.skipped_dtype", dtype=k, why=_skip_reason(v, d))
                for k, v in sorted(d.flex_skipped.items())]
    first = runs[0]
    device = d.device_name or d.device
    return passed("deep-flex-compiled.pass", details=details, dtypes=", ".join(r.dtype for r in runs),
                  device=device, first=_secs(first.compile_seconds), cache=_cache_state(first.cache))


def _skip_reason(code: str, d: DeepFacts) -> str:
    """Why the deep probe did not try a dtype: the worker says it as a code, the report in words."""
    if code == "no-native-bf16":
        return u.t("deep-flex-compiled.no_native_bf16", sm=(d.capability or "?").replace(".", ""))
    return code  # facts recorded by an older flexdoctor: its words


def _secs(v: Optional[float]) -> str:
    return "?" if v is None else f"{v:.1f}"


def _cache_state(cache: dict) -> str:
    if not cache:
        return u.t("deep-flex-compiled.cache_unknown")
    if cache.get("fxgraph_cache_miss", 0) > 0:
        return u.t("deep-flex-compiled.cache_miss")
    if cache.get("fxgraph_cache_hit", 0) > 0:
        return u.t("deep-flex-compiled.cache_hit")
    return u.t("deep-flex-compiled.cache_unknown")


@check("FD805", "deep-flex-numerics", area="deep")
def deep_flex_numerics(facts: Facts) -> Finding:
    """What it checks: that compiled flex_attention's output matches causal attention computed
    in float64 from the same fresh random inputs: relative error ||out - ref|| / ||ref|| below
    1e-3 in fp32 and 1e-2 in fp16/bf16, and no NaN.

    Why it matters: a stale or foreign compile cache, a torch/Triton pair that does not match
    or a kernel bug for this GPU can produce a kernel that runs but computes the wrong thing:
    NaN losses or silently worse models.

    How to fix: clear the compile cache and re-run; make torch and Triton match; report the
    shape, dtype and versions upstream if it persists.
    """
    _, runs = _flex(facts)
    ok_runs = [r for r in runs if not r.error]
    if not ok_runs:
        return skip("deep-flex-numerics.nothing")
    worst = None
    for run in ok_runs:
        tol = run.tolerance or (1e-3 if run.dtype == "float32" else 1e-2)
        if run.nan or run.rel_error is None:
            return fail("deep-flex-numerics.nan", kb.fix("deep-wrong-result"), dtype=run.dtype)
        if run.rel_error > tol:
            return fail("deep-flex-numerics.inaccurate", kb.fix("deep-wrong-result"), dtype=run.dtype,
                        error=_err(run.rel_error), tolerance=f"{tol:g}")
        if worst is None or run.rel_error > worst.rel_error:
            worst = run
    tol = worst.tolerance or (1e-3 if worst.dtype == "float32" else 1e-2)
    return passed("deep-flex-numerics.pass", dtype=worst.dtype, error=_err(worst.rel_error), tolerance=f"{tol:g}",
                  details=[f"{r.dtype}: {_err(r.rel_error)}" for r in ok_runs])


@check("FD806", "deep-flex-backward", area="deep")
def deep_flex_backward(facts: Facts) -> Finding:
    """What it checks: on a GPU, that the compiled backward of flex_attention runs for each
    dtype and its gradients match float64 autograd (relative error below 2e-3 in fp32, 2e-2 in
    fp16 and 3e-2 in bf16, no NaN). On the CPU flex_attention is inference-only, so this is
    not tried there.

    Why it matters: the backward is a second compiled kernel with its own block sizes and
    shared-memory needs; it can fail where the forward works, and training stops at the first
    loss.backward().

    How to fix: on GPUs with ~100 KB shared memory pass smaller backward blocks in
    kernel_options (BLOCK_M1/N1/M2/N2); otherwise upgrade torch.
    """
    d, runs = _flex(facts)
    if d.device != "cuda":
        return skip("deep-flex-backward.cpu")
    tried = [r for r in runs if not r.error and r.backward is not None]
    if not tried:
        return skip("deep-flex-backward.nothing")
    worst = None
    for run in tried:
        b = run.backward
        if b.get("error"):
            return fail("deep-flex-backward.failed", _fix_for(b["error"], "deep-flex-backward-failed", facts),
                        details=tuple(str(b["error"]).strip().splitlines()[-4:]), dtype=run.dtype,
                        error=_last_line(b["error"]))
        err, tol = b.get("rel_error"), b.get("tolerance") or 3e-2
        if b.get("nan") or err is None:
            return fail("deep-flex-backward.nan", kb.fix("deep-wrong-result"), dtype=run.dtype)
        if err > tol:
            return fail("deep-flex-backward.inaccurate", kb.fix("deep-wrong-result"), dtype=run.dtype,
                        error=_err(err), tolerance=f"{tol:g}")
        if worst is None or err > worst[0]:
            worst = (err, run.dtype)
    return passed("deep-flex-backward.pass", dtypes=", ".join(r.dtype for r in tried), dtype=worst[1],
                  error=_err(worst[0]))


# --------------------------------------------------------------------------- FD807, FD808


def _fa_version(fa: dict) -> str:
    return str(fa.get("version") or fa.get("dist_version") or "?")


def recompile_knob(facts) -> "str | None":
    """The name this torch reads for Dynamo's recompile limit: recompile_limit from torch 2.7,
    cache_size_limit in 2.5 and 2.6 (FACTS §2; torch/_dynamo/config.py). None: version unknown."""
    v = u.base_version(facts.torch.version) if ok(facts.torch) else None
    if v is None:
        return None
    return "recompile_limit" if v >= u.version("2.7") else "cache_size_limit"


def _not_compiled_fix(facts):
    return kb.fix("deep-flex-not-compiled", python=u.python_cmd(facts), knob=recompile_knob(facts))


def _fa34_details(d: DeepFacts, fa: dict) -> list[str]:
    cc = d.capability or ""
    fa3_note = u.t("deep-flash-attn.hopper_note") if cc.startswith("9.") else ""
    fa4_note = u.t("deep-flash-attn.fa4_note") if cc.split(".")[0] in ("8", "9", "10", "11", "12") else ""
    return [
        _fa_line(fa.get("fa3") or {}, "fa3", u.t("deep-flash-attn.needs_fa3"), fa3_note,
                 module=(fa.get("fa3") or {}).get("module", "flash_attn_3")),
        _fa_line(fa.get("fa4") or {}, "fa4", u.t("deep-flash-attn.needs_fa4"), fa4_note),
    ]


def _fa_line(info: dict, key: str, need: str, absent_note: str, **extra: object) -> str:
    """One detail line for FlashAttention-3 or -4: absent, broken, wrong GPU, or usable."""
    if not info.get("installed"):
        return u.t(f"deep-flash-attn.{key}_absent", note=absent_note)
    ver = f" {info['version']}" if info.get("version") else ""
    if not info.get("importable"):
        state = u.t("deep-flash-attn.state_broken", error=_last_line(info.get("import_error")))
    elif info.get("gpu_ok"):
        state = u.t("deep-flash-attn.state_ok")
    else:
        state = u.t("deep-flash-attn.state_wrong_gpu", need=need)
    return u.t(f"deep-flash-attn.{key}", version=ver, state=state, **extra)


@check("FD807", "deep-flash-attn", area="deep")
def deep_flash_attn(facts: Facts) -> Finding:
    """What it checks: whether the flash-attn package is installed and imports (an "undefined
    symbol" at import is a wheel built for another torch), its version, whether FlashAttention-2
    can run on this GPU (sm80+, fp16/bf16, head dim <= 256 and a multiple of 8) and, if so, that
    flash_attn_func matches a float64 reference; also whether FlashAttention-3 (flash_attn_3,
    Hopper) and FlashAttention-4 (flash_attn.cute, 8.x-12.x) are installed and import.

    Why it matters: flash-attn wheels are compiled against one exact torch ABI, so a torch
    upgrade breaks them at import; on older GPUs every call raises "FlashAttention only supports
    Ampere GPUs or newer." Libraries that try flash-attn first then crash or fall back.

    How to fix: reinstall flash-attn for the torch you have (matching wheel, or build with
    --no-build-isolation); on GPUs below sm80 use SDPA instead.
    """
    d = _deep(facts)
    fa = d.flash_attn
    if not fa:
        raise Skip(u.t("deep.not_reached"))
    extra = _fa34_details(d, fa)
    fa3 = fa.get("fa3") or {}
    if not fa.get("installed"):
        if fa3.get("installed") and not fa3.get("importable"):
            return fail("deep-flash-attn.fa3_broken",
                        _fix_for(fa3.get("import_error"), "deep-extension-broken", facts,
                                 package=fa3.get("module", "flash_attn_3")),
                        module=fa3.get("module", "flash_attn_3"), error=_last_line(fa3.get("import_error")))
        if fa3.get("installed") or (fa.get("fa4") or {}).get("installed"):
            return passed("deep-flash-attn.installed_no_run", details=extra, version="—",
                          why=u.t("deep-flash-attn.no_fa2"))
        return skip("deep-flash-attn.not_installed")
    version = _fa_version(fa)
    if not fa.get("importable"):
        error = fa.get("import_error") or ""
        if "undefined symbol" in error:
            return fail("deep-flash-attn.abi", kb.fix("deep-flash-attn-abi-mismatch", python=u.python_cmd(facts)),
                        details=extra, version=version, error=_last_line(error))
        return fail("deep-flash-attn.import_failed",
                    _fix_for(error, "deep-extension-broken", facts, package="flash-attn"),
                    details=extra, version=version, error=_last_line(error))
    if d.device != "cuda":
        return skip("deep-flash-attn.cpu")
    if not fa.get("fa2_gpu_ok"):
        return warn("deep-flash-attn.gpu", kb.fix("deep-flash-attn-unsupported-gpu"), details=extra,
                    version=version, cc=(d.capability or "?").replace(".", ""))
    if fa.get("run_error"):
        return fail("deep-flash-attn.run_failed",
                    _fix_for(fa["run_error"], "deep-extension-broken", facts, package="flash-attn"),
                    dtype="import", error=_last_line(fa["run_error"]))
    runs = fa.get("runs") or []
    for run in runs:
        dt = run.get("dtype", "?")
        if run.get("error"):
            return fail("deep-flash-attn.run_failed",
                        _fix_for(run["error"], "deep-extension-broken", facts, package="flash-attn"),
                        details=extra, dtype=dt, error=_last_line(run["error"]))
        err, tol = run.get("rel_error"), run.get("tolerance") or 1e-2
        if run.get("nan") or err is None:
            return fail("deep-flash-attn.nan", kb.fix("deep-wrong-result"), dtype=dt)
        if err > tol:
            return fail("deep-flash-attn.inaccurate", kb.fix("deep-wrong-result"), dtype=dt, error=_err(err),
                        tolerance=f"{tol:g}")
    fa3_broken = fa3.get("installed") and not fa3.get("importable")
    if fa3_broken:
        return fail("deep-flash-attn.fa3_broken",
                    _fix_for(fa3.get("import_error"), "deep-extension-broken", facts,
                             package=fa3.get("module", "flash_attn_3")),
                    details=extra, module=fa3.get("module", "flash_attn_3"),
                    error=_last_line(fa3.get("import_error")))
    dtypes = ", ".join(f"{r.get('dtype')} {_err(r.get('rel_error'))}" for r in runs) or "—"
    return passed("deep-flash-attn.pass", details=extra, version=version, dtypes=dtypes)


@check("FD808", "deep-xformers", area="deep")
def deep_xformers(facts: Facts) -> Finding:
    """What it checks: whether xformers is installed, which version, and that xformers.ops
    imports in the target interpreter.

    Why it matters: xformers wheels are built for one torch version; after a torch upgrade
    the import fails or warns that its C++/CUDA extensions are not loaded, and libraries that
    prefer xformers (diffusers' xformers backend, SimpleTuner's attention_mechanism=xformers)
    break or fall back.

    How to fix: install the xformers release built for your torch (pip picks it when you
    install both together), or uninstall it and use SDPA.
    """
    d = _deep(facts)
    xf = d.xformers
    if not xf:
        raise Skip(u.t("deep.not_reached"))
    if not xf.get("installed"):
        return skip("deep-xformers.not_installed")
    version = _fa_version(xf)
    if not xf.get("importable"):
        return fail("deep-xformers.import_failed",
                    _fix_for(xf.get("import_error"), "deep-extension-broken", facts, package="xformers"),
                    version=version, error=_last_line(xf.get("import_error")))
    return passed("deep-xformers.pass", version=version)
