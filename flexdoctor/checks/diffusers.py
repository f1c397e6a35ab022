"""Diffusers / SimpleTuner project checks (FD7xx): what a training config's attention settings
really do, judged before a 12-hour run. Facts come from ``check --project`` (the parsed config)
and from importing diffusers' dispatcher in the target interpreter; every table is in
flexdoctor.project.tables with the SimpleTuner and diffusers source paths it was read from.
"""

from __future__ import annotations

import difflib
from typing import Optional

from .. import knowledge as kb
from ..facts import Facts, ProbeError, Skip, ok
from ..model import Finding, Status
from ..project import tables as tb
from ..project.model import DiffusersFacts, ProjectConfig
from ..text import has, t
from . import _util as u
from .base import check, fail, passed, skip, warn

ENV_KEYS = ("DIFFUSERS_ATTN_BACKEND", "DIFFUSERS_ATTN_CHECKS")


# --------------------------------------------------------------------------- shared questions


def _config(facts: Facts) -> ProjectConfig:
    """The parsed config, or Skip (no --project; a config that could not be read)."""
    project = facts.project
    if project is None or (ok(project) and project.config is None):
        raise Skip(t("project.no_config"))
    if isinstance(project, ProbeError):
        raise Skip(t("project.unreadable", reason=u.probe_error_text(project)))
    if isinstance(project.config, ProbeError):
        raise Skip(t("project.unreadable", reason=u.probe_error_text(project.config)))
    return project.config


def _mechanism(cfg: ProjectConfig) -> str:
    return cfg.text("attention_mechanism") or tb.DEFAULT_MECHANISM


def _where(cfg: ProjectConfig, key: str) -> str:
    return cfg.sources.get(key) or t("diffusers-where.default")


def _env(facts: Facts, cfg: Optional[ProjectConfig] = None) -> dict:
    """DIFFUSERS_ATTN_* as the training process sees them -> (value, where)."""
    out = {}
    if ok(facts.host):
        out.update({k: (v, t("diffusers-where.environment")) for k, v in facts.host.env.items() if k in ENV_KEYS})
    if cfg is not None:
        for k in ENV_KEYS:
            if k in cfg.env:
                out[k] = (cfg.env[k], cfg.env_files[-1] if cfg.env_files else cfg.path)
    return out


def _maybe_config(facts: Facts) -> Optional[ProjectConfig]:
    try:
        return _config(facts)
    except Skip:
        return None


def _backend(facts: Facts, cfg: Optional[ProjectConfig]) -> Optional[str]:
    """The AttentionBackendName the run uses through the dispatcher (None: not a dispatcher one)."""
    if cfg is not None:
        mech = _mechanism(cfg)
        if mech in tb.DISPATCHER_BACKENDS:
            return tb.DISPATCHER_BACKENDS[mech]
        if mech != tb.DEFAULT_MECHANISM:
            return None
    value = _env(facts, cfg).get("DIFFUSERS_ATTN_BACKEND", (None,))[0]
    if value:
        return value
    return "native" if cfg is not None else None


def _family_path(cfg: ProjectConfig) -> tuple[Optional[str], Optional[str]]:
    family = cfg.text("model_family")
    return family, tb.FAMILIES.get(family) if family else None


def _diffusers(facts: Facts) -> Optional[DiffusersFacts]:
    project = facts.project
    if ok(project) and ok(project.diffusers):
        return project.diffusers
    return None


def _diffusers_version(facts: Facts) -> Optional[str]:
    d = _diffusers(facts)
    if d is not None:
        return d.version
    if ok(facts.python):
        return facts.python.packages.get("diffusers")
    return None


def _setting(cfg: ProjectConfig, key: str, value: str) -> str:
    """How to write ``key = value`` in this config's own format."""
    if cfg.format == "json":
        return f'"{key}": "{value}"'
    if cfg.format == "toml":
        return f'{key} = "{value}"'
    # config.env: TRAINER_EXTRA_ARGS reaches the trainer's options (load_env_config). For
    # dynamo_backend that is also the one place that works whatever the launcher does:
    # TRAINING_DYNAMO_BACKEND is ignored as soon as an accelerate config file exists.
    return f'TRAINER_EXTRA_ARGS="${{TRAINER_EXTRA_ARGS}} --{key}={value}"'


def _dynamo_norm(value: Optional[str]) -> str:
    """SimpleTuner's (trainer.py) and accelerate's reading of a backend name, lower case."""
    text = (value or "").strip().replace("-", "_").upper()
    return "no" if text in ("", "NO", "NONE", "DISABLED") else text.lower()


def _launch_error(launch: dict) -> str:
    """The unreadable accelerate config, in the report's language (English in older recordings)."""
    reason, args = launch.get("accelerate_config_error_reason"), launch.get("accelerate_config_error_args")
    if reason and isinstance(args, dict) and has(f"probe-error.{reason}"):
        return t(f"probe-error.{reason}", **args)
    return str(launch["accelerate_config_error"])


def _dynamo(cfg: ProjectConfig) -> tuple[Optional[str], str, list]:
    """(backend, where it comes from, notes) of torch.compile for a SimpleTuner run launched with
    train.sh (project/simpletuner.py docstring): the config's dynamo_backend when it is not "no";
    else the accelerate config file train.sh finds, whose dynamo_config decides; else
    TRAINING_DYNAMO_BACKEND. backend None: the accelerate config could not be read."""
    launch = cfg.launch or {}
    notes = []
    trainer_var = launch.get("trainer_dynamo_backend")
    if trainer_var:
        notes.append(t("flex-compiled.trainer_var_unread", value=trainer_var,
                       source=launch.get("trainer_dynamo_backend_source") or "?"))
    if launch.get("accelerate_dynamo_env"):
        notes.append(t("flex-compiled.accelerate_env_overwritten", value=launch["accelerate_dynamo_env"]))
    option = cfg.text("dynamo_backend")
    if _dynamo_norm(option) != "no":
        return _dynamo_norm(option), _where(cfg, "dynamo_backend"), notes
    yaml_path = launch.get("accelerate_config")
    training_var = launch.get("training_dynamo_backend")
    if yaml_path:
        if training_var and _dynamo_norm(training_var) != "no":
            notes.append(t("flex-compiled.training_var_ignored", value=training_var, yaml=yaml_path,
                           source=launch.get("training_dynamo_backend_source") or "?"))
        if launch.get("accelerate_config_error"):
            notes.append(_launch_error(launch))
            return None, yaml_path, notes
        return (_dynamo_norm(launch.get("accelerate_config_dynamo")),
                t("flex-compiled.from_yaml", yaml=yaml_path), notes)
    if training_var:
        return (_dynamo_norm(training_var),
                t("flex-compiled.from_training_var", source=launch.get("training_dynamo_backend_source") or "?"),
                notes)
    return "no", t("flex-compiled.from_default"), notes


def _flex_device(facts: Facts) -> Optional[str]:
    """Where flex_attention would run: cuda | rocm | mps | cpu (None: cannot tell)."""
    rt = facts.torch_runtime
    if ok(rt):
        if rt.cuda_available:
            return "rocm" if rt.hip else "cuda"
        return "mps" if rt.mps_available else "cpu"
    if not ok(facts.torch):
        return None
    if facts.torch.hip:
        return "rocm"
    if facts.torch.cuda and u.has_nvidia_gpu(facts):
        return "cuda"
    if ok(facts.python) and facts.python.platform == "darwin":
        return "mps"
    return "cpu"


def _torch_at_least(facts: Facts, version: str) -> Optional[bool]:
    tv = u.base_version(facts.torch.version) if ok(facts.torch) else None
    return None if tv is None else tv >= u.version(version)


def _path_text(family: str, path: Optional[str]) -> str:
    return t(f"project.path_{path or 'unknown'}", family=family)


# --------------------------------------------------------------------------- checks


def _norm_name(text: str) -> str:
    return text.strip().lower().replace("_", "-").strip("-")


def closest_mechanisms(value: str, n: int = 2) -> list:
    """SimpleTuner mechanisms closest to a misspelling, matched against every name a user may mean:
    the mechanisms themselves, attention_backend.py's aliases and diffusers' backend names
    (flash -> flash-attn, _native_cudnn -> cudnn ...). "flsh" -> flash-attn, flex."""
    names: dict = {}
    for m in tb.MECHANISMS:
        names.setdefault(_norm_name(m), m)
    for alias, m in tb.ALIASES.items():
        names.setdefault(_norm_name(alias), m)
    for m, backend in tb.DISPATCHER_BACKENDS.items():
        names.setdefault(_norm_name(backend), m)
    key = _norm_name(value)
    if key in names:
        return [names[key]]
    out: list = []
    bases: set = set()  # one per kind (flash-attn*, flex, native*, ...): distinct alternatives
    scored = sorted(((difflib.SequenceMatcher(None, key, name).ratio(), name) for name in names),
                    key=lambda x: (-x[0], len(x[1]), x[1]))  # ties: the shorter, plainer name
    for ratio, hit in scored:
        if ratio < 0.5:
            break
        m = names[hit]
        base = m.split("-")[0]
        if m not in out and base not in bases:
            out.append(m)
            bases.add(base)
    return out[:n]


@check("FD701", "attention-mechanism", area="diffusers")
def attention_mechanism(facts: Facts) -> Finding:
    """What it checks: that the config's attention_mechanism is a value SimpleTuner accepts, and
    what it turns into: a diffusers AttentionBackendName (flex, flash, _flash_3, _native_cudnn ...),
    a replacement of torch's SDPA (sageattention*, metal-flash-attention*, sla), xformers, or
    "diffusers" (the default: whatever diffusers' default backend is, native SDPA unless
    DIFFUSERS_ATTN_BACKEND says otherwise).

    Why it matters: SimpleTuner's argument parser only takes its exact spellings, so "flex-attn" or
    "flash_attn" stops the run at start-up. And "flex" in SimpleTuner is diffusers' flex backend,
    which runs flex_attention uncompiled (see FD703).

    How to fix: use one of the listed values; the fix names the closest one.
    """
    cfg = _config(facts)
    mech = _mechanism(cfg)
    where = _where(cfg, "attention_mechanism")
    if mech not in tb.MECHANISMS:
        close = closest_mechanisms(mech)
        suggestion = close[0] if close else tb.DEFAULT_MECHANISM
        details = [t("attention-mechanism.closest", names=", ".join(close))] if len(close) > 1 else []
        return fail("attention-mechanism.invalid",
                    kb.fix("simpletuner-attention-mechanism-invalid",
                           setting=_setting(cfg, "attention_mechanism", suggestion)),
                    details=details + [t("attention-mechanism.choices", choices=", ".join(tb.MECHANISMS))],
                    mechanism=mech, where=where, suggestion=suggestion)
    kind = tb.mechanism_kind(mech)
    if kind == "default":
        default = _backend(facts, cfg)
        return passed("attention-mechanism.default", backend=default, where=where)
    if kind == "dispatcher":
        backend = tb.DISPATCHER_BACKENDS[mech]
        details = [t("attention-mechanism.hub_note")] if tb.is_hub_backend(backend) else []
        return passed("attention-mechanism.dispatcher", mechanism=mech, backend=backend, where=where,
                      details=details)
    if kind == "sdpa-patch":
        usage = cfg.text("sageattention_usage") or "inference"
        details = [t("attention-mechanism.sage_usage", usage=usage)] if mech.startswith("sageattention") else []
        return passed("attention-mechanism.sdpa_patch", mechanism=mech, where=where, details=details)
    return passed("attention-mechanism.xformers", where=where)


@check("FD702", "attention-routing", area="diffusers")
def attention_routing(facts: Facts) -> Finding:
    """What it checks: whether the configured model family's denoiser calls diffusers'
    dispatch_attention_fn, the only place a diffusers attention backend (flex, flash-attn,
    cudnn, native-*) takes effect, and which path it takes otherwise.

    Why it matters: SD 1.x/SDXL/Kolors UNets, SD3, PixArt, Sana, AuraFlow, HiDream, Lumina2 and
    SimpleTuner's own FLUX.1 transformer call torch SDPA directly: selecting flex or flash there
    changes nothing, and a benchmark or a bug report about "flex" measures SDPA. Families that do
    reach the dispatcher in SimpleTuner include Flux.2, Chroma, Wan, LTXVideo, Qwen-Image,
    HunyuanVideo, Z-Image and Kandinsky 5.

    How to fix: keep attention_mechanism at "diffusers" for families that do not dispatch, or use
    a mechanism that replaces SDPA itself (sageattention, for inference); the fix says which.
    """
    cfg = _config(facts)
    family, path = _family_path(cfg)
    if family is None:
        return skip("attention-routing.no_family", file=cfg.path)
    if path is None:
        return skip("attention-routing.unknown_family", family=family)
    mech = _mechanism(cfg)
    if mech not in tb.MECHANISMS:
        return skip("attention-routing.invalid_mechanism", mechanism=mech)
    kind = tb.mechanism_kind(mech)
    how = _path_text(family, path)
    if kind == "dispatcher":
        if path == "dispatcher":
            return passed("attention-routing.dispatched", family=family, mechanism=mech,
                          backend=tb.DISPATCHER_BACKENDS[mech], how=how)
        if (family in tb.FUSED_FLASH_FAMILIES and mech.startswith("flash")
                and cfg.flag("fuse_qkv_projections")):
            return passed("attention-routing.fused_flash", family=family, mechanism=mech)
        return warn("attention-routing.no_effect",
                    kb.fix("simpletuner-backend-no-effect", family=family,
                           setting=_setting(cfg, "attention_mechanism", tb.DEFAULT_MECHANISM)),
                    family=family, mechanism=mech, how=how)
    if kind == "sdpa-patch":
        return passed("attention-routing.patched", family=family, mechanism=mech)
    if kind == "xformers":
        return passed("attention-routing.xformers", family=family, how=how)
    return passed("attention-routing.default", family=family, how=how, backend=_backend(facts, cfg))


@check("FD703", "flex-compiled", area="diffusers")
def flex_compiled(facts: Facts) -> Finding:
    """What it checks: when the run uses diffusers' flex backend (attention_mechanism "flex", or
    DIFFUSERS_ATTN_BACKEND=flex) on a family that reaches it, that SimpleTuner really compiles the
    model with Inductor, following its launch path: the config's dynamo_backend (config.json /
    config.toml / TRAINER_EXTRA_ARGS --dynamo_backend) wins when it is not "no"; otherwise
    `accelerate launch` decides: with an accelerate config file (ACCELERATE_CONFIG_PATH, else
    $HF_HOME/accelerate/default_config.yaml, else ~/.cache/huggingface/accelerate/
    default_config.yaml) its dynamo_config.dynamo_backend, and TRAINING_DYNAMO_BACKEND is ignored;
    without one, TRAINING_DYNAMO_BACKEND from config.env. TRAINER_DYNAMO_BACKEND is read by no
    launch path.

    Why it matters: diffusers calls flex_attention eagerly. Uncompiled, flex materialises the whole
    score matrix: measured on an H100 (bf16, 24 heads, d=128, L=4096, forward+backward) 46.2 ms and
    10.1 GiB against SDPA's 1.5 ms / 0.31 GiB and compiled flex's 2.5 ms / 0.32 GiB; at L=16384
    eager flex runs out of memory. Qwen-Image then silently falls back to tiled SDPA. Only Inductor
    fuses flex (a Triton kernel on GPUs, C++ on the CPU); the other Dynamo backends (eager,
    aot_eager, cudagraphs ...) keep the slow path. diffusers' flex backend also ignores
    is_causal=True when no mask is passed.

    How to fix: set dynamo_backend to inductor in the config itself (the fix shows the line for
    your config format; it works whatever accelerate config exists), or go back to
    attention_mechanism "diffusers" (SDPA), which is faster than eager flex.
    """
    cfg = _config(facts)
    backend = _backend(facts, cfg)
    if backend != "flex":
        return skip("flex-compiled.not_flex", backend=backend or _mechanism(cfg))
    family, path = _family_path(cfg)
    if path is not None and path != "dispatcher":
        return skip("flex-compiled.not_reached", family=family)
    dynamo, where, notes = _dynamo(cfg)
    details = [t("flex-compiled.is_causal")] + notes
    if family in tb.OOM_FALLBACK_FAMILIES:
        details.insert(0, t("flex-compiled.oom_fallback", family=family))
    if dynamo is None:
        return Finding(Status.SKIP, t("flex-compiled.unknown", where=where), None, tuple(details))
    if dynamo in tb.FLEX_FUSING_DYNAMO:
        device = _flex_device(facts)
        kernel = {"cuda": "kernel_triton", "rocm": "kernel_triton", "cpu": "kernel_cpp",
                  "mps": "kernel_metal"}.get(device or "", "kernel_unknown")
        if device == "mps" and not _torch_at_least(facts, "2.13"):
            kernel = "kernel_unknown"
        return passed("flex-compiled.pass", dynamo=dynamo, where=where, kernel=t(f"flex-compiled.{kernel}"),
                      details=details)
    fix = kb.fix("flex-uncompiled-in-diffusers", setting=_setting(cfg, "dynamo_backend", "inductor"))
    if dynamo == "no":
        return warn("flex-compiled.eager", fix, where=where, details=details)
    return warn("flex-compiled.not_inductor", fix, dynamo=dynamo, where=where, details=details)


@check("FD704", "attention-precision", area="diffusers")
def attention_precision(facts: Facts) -> Finding:
    """What it checks: that mixed_precision gives the chosen attention backend a dtype it accepts.
    flash-attn (2/3/4), cuDNN and flash SDPA, NPU and SageAttention need fp16 or bf16; flex, native
    SDPA, efficient/math SDPA and xformers also take fp32. Also SimpleTuner's own refusal of
    SageAttention with an nf4 base model (safety_check.py).

    Why it matters: mixed_precision "no" runs attention in fp32 and the half-only kernels raise
    "Query, key, and value must be either bfloat16 or float16." (diffusers' check) or the kernel's
    own error at the first step. base_model_precision (int8, fp8 ...) quantises weights only: it
    does not make attention inputs fp8, contrary to guides that say flex rejects "FP8 weights".

    How to fix: set mixed_precision to bf16 (fp16 on GPUs without bf16), or use a backend that
    takes fp32 (flex, diffusers/native).
    """
    cfg = _config(facts)
    mech = _mechanism(cfg)
    if mech not in tb.MECHANISMS:
        return skip("attention-precision.invalid_mechanism", mechanism=mech)
    mp = (cfg.text("mixed_precision") or tb.DEFAULT_MIXED_PRECISION).lower()
    dtype = tb.MIXED_PRECISION.get(mp)
    if dtype is None:
        return skip("attention-precision.unknown", value=mp)
    base = cfg.text("base_model_precision") or "no_change"
    if mech.startswith("sageattention") and "nf4" in base:
        return fail("attention-precision.sage_nf4",
                    kb.fix("sageattention-nf4", setting=_setting(cfg, "base_model_precision", "int8-quanto")),
                    mechanism=mech, base=base)
    backend = _backend(facts, cfg)
    half_only = backend in tb.HALF_ONLY_BACKENDS or mech.startswith("sageattention")
    details = [t("attention-precision.weights_only", base=base)] if base != "no_change" else []
    if dtype == "fp32" and half_only:
        return fail("attention-precision.fp32",
                    kb.fix("attention-backend-needs-half", setting=_setting(cfg, "mixed_precision", "bf16")),
                    mechanism=mech, where=_where(cfg, "mixed_precision"), details=details)
    if dtype == "fp16" and backend in tb.BF16_ONLY_BACKENDS:
        return fail("attention-precision.bf16_only",
                    kb.fix("attention-backend-needs-half", setting=_setting(cfg, "mixed_precision", "bf16")),
                    backend=backend, where=_where(cfg, "mixed_precision"), details=details)
    if dtype == "fp32" and backend == "flex":
        return passed("attention-precision.flex_fp32", details=details)
    return passed("attention-precision.pass", mechanism=mech, mp=mp, dtype=dtype, details=details)


@check("FD705", "attention-device", area="diffusers")
def attention_device(facts: Facts) -> Finding:
    """What it checks: that this machine has the device the configured attention backend runs on
    for training: an NVIDIA GPU torch can use for flash-attn, SageAttention, cuDNN/flash SDPA and
    xformers; Apple MPS for metal-flash-attention; and for flex, a CUDA or ROCm GPU: flex's
    backward runs nowhere else (torch 2.11+ rejects it on the CPU; on MPS, torch 2.13+ compiles
    the forward only and 2.6-2.12 reject MPS tensors). A backend the model family never reaches
    (FD702) needs no device.

    Why it matters: a CPU wheel, a container without the GPU, or a Mac turns the first training
    step into "Query, key, and value must be on a CUDA device", "FlexAttention does not support
    backward on CPU" or "... on MPS", after the data and models have loaded.

    How to fix: run on a machine where torch.cuda.is_available() is True (see FD204/FD205), or set
    attention_mechanism to "diffusers" there.
    """
    cfg = _config(facts)
    mech = _mechanism(cfg)
    if mech not in tb.MECHANISMS:
        return skip("attention-device.invalid_mechanism", mechanism=mech)
    backend = _backend(facts, cfg)
    family, path = _family_path(cfg)
    if (tb.mechanism_kind(mech) == "dispatcher" and path is not None and path != "dispatcher"
            and not (family in tb.FUSED_FLASH_FAMILIES and mech.startswith("flash")
                     and cfg.flag("fuse_qkv_projections"))):
        return passed("attention-device.not_reached", mechanism=mech, family=family)
    if mech.startswith("metal-flash-attention"):
        need = "mps"
    elif backend == "flex":
        need = "flex"
    elif backend in tb.CUDA_ONLY_BACKENDS or mech.startswith(("sageattention", "flash")) or mech == "xformers":
        need = "cuda"
    else:
        return passed("attention-device.any", mechanism=mech)
    if facts.torch is None:
        return skip("common.torch_not_installed")
    device = _flex_device(facts)
    if device is None:
        return skip("attention-device.unknown")
    fix = kb.fix("attention-backend-needs-device", setting=_setting(cfg, "attention_mechanism", tb.DEFAULT_MECHANISM))
    if need == "mps":
        if device == "mps":
            return passed("attention-device.pass", mechanism=mech, device="MPS")
        return fail("attention-device.no_mps", fix, mechanism=mech)
    if device in ("cuda", "rocm"):
        return passed("attention-device.pass", mechanism=mech, device="CUDA" if device == "cuda" else "ROCm")
    if need != "flex":
        return fail("attention-device.no_cuda", fix, mechanism=mech, device="MPS" if device == "mps" else "CPU")
    version = facts.torch.version if ok(facts.torch) else "?"
    if device == "mps":
        if _torch_at_least(facts, "2.13"):
            return fail("attention-device.flex_mps_no_backward", fix, mechanism=mech, version=version)
        if _torch_at_least(facts, "2.6"):
            return fail("attention-device.flex_mps_rejected", fix, mechanism=mech, version=version)
        return warn("attention-device.flex_eager_only", fix, mechanism=mech, version=version, device="MPS")
    if _torch_at_least(facts, "2.11"):
        return fail("attention-device.flex_cpu_no_backward", fix, mechanism=mech, version=version)
    dynamo, _, _ = _dynamo(cfg)
    if dynamo in tb.FLEX_FUSING_DYNAMO:
        return fail("attention-device.flex_cpu_compiled_inference", fix, mechanism=mech, version=version)
    return warn("attention-device.flex_eager_only", fix, mechanism=mech, version=version, device="CPU")


@check("FD706", "diffusers-dispatcher", area="diffusers")
def diffusers_dispatcher(facts: Facts) -> Finding:
    """What it checks: that the installed diffusers has the attention dispatcher
    (diffusers.models.attention_dispatch, diffusers >= 0.35) and, with --project, the release
    SimpleTuner requires (diffusers >= 0.36).

    Why it matters: without the dispatcher there are no attention backends: SimpleTuner stops with
    "Attention backend '...' requires a newer diffusers release". Without diffusers installed,
    flexdoctor checks the config statically and says so.

    How to fix: upgrade diffusers in the training environment.
    """
    cfg = _maybe_config(facts)
    version = _diffusers_version(facts)
    if version is None:
        if cfg is not None:
            return skip("diffusers-dispatcher.static", python=u.python_cmd(facts))
        return skip("diffusers-dispatcher.not_installed")
    mm = u.major_minor(version)
    d = _diffusers(facts)
    has = d.has_dispatcher if d is not None and d.has_dispatcher is not None else (
        mm is not None and mm >= tb.DISPATCHER_SINCE)
    fix = kb.fix("diffusers-too-old-for-dispatcher", python=u.python_cmd(facts))
    if not has:
        if cfg is None:
            return skip("diffusers-dispatcher.old_unused", version=version)
        if tb.mechanism_kind(_mechanism(cfg)) == "dispatcher" or _env(facts, cfg).get("DIFFUSERS_ATTN_BACKEND"):
            return fail("diffusers-dispatcher.missing", fix, version=version, mechanism=_mechanism(cfg))
        return warn("diffusers-dispatcher.simpletuner_min", fix, version=version)
    if cfg is not None and mm is not None and mm < tb.SIMPLETUNER_MIN_DIFFUSERS:
        return warn("diffusers-dispatcher.simpletuner_min", fix, version=version)
    return passed("diffusers-dispatcher.pass", version=version)


@check("FD707", "diffusers-backend", area="diffusers")
def diffusers_backend(facts: Facts) -> Finding:
    """What it checks: for the backend the run will use (from attention_mechanism, or
    DIFFUSERS_ATTN_BACKEND), that the installed diffusers' AttentionBackendName has it and that
    diffusers' own _check_attention_backend_requirements(backend) passes, both asked of the real
    package in the target interpreter. Hub backends (*_hub) are never probed: enabling one
    downloads a kernel.

    Why it matters: SimpleTuner maps flash-attn-4-hub to flash_4_hub, which older diffusers lack;
    "flash" needs flash-attn >= 2.6.3, "sage" sageattention, "xformers" xformers, "flex" torch >=
    2.5. Each fails only when training starts, with "... is not usable because of missing package".

    How to fix: install what diffusers' message names, or upgrade diffusers, or pick a backend
    that is installed.
    """
    cfg = _maybe_config(facts)
    backend = _backend(facts, cfg)
    if backend is None:
        if cfg is None:
            return skip("diffusers-backend.none")
        return skip("diffusers-backend.not_dispatcher", mechanism=_mechanism(cfg))
    if _diffusers_version(facts) is None:
        return skip("diffusers-backend.static", backend=backend)
    if tb.is_hub_backend(backend):
        return skip("diffusers-backend.hub", backend=backend)
    project = facts.project
    d = _diffusers(facts)
    if d is None:
        reason = (u.probe_error_text(project.diffusers) if ok(project) and isinstance(project.diffusers, ProbeError)
                  else "-")
        return skip("diffusers-backend.not_probed", reason=reason.splitlines()[0] if reason else "-")
    if d.backends is None:
        return skip("diffusers-backend.no_enum", error=(d.import_error or "-").splitlines()[-1])
    env_value = _env(facts, cfg).get("DIFFUSERS_ATTN_BACKEND", (None,))[0]
    if backend not in d.backends and backend == env_value:
        return skip("diffusers-backend.env_invalid", backend=backend)  # FD708 reports it
    if backend not in d.backends:
        return fail("diffusers-backend.missing",
                    kb.fix("diffusers-backend-missing", python=u.python_cmd(facts)),
                    details=[t("diffusers-backend.available", names=", ".join(d.backends))],
                    version=d.version, backend=backend)
    if d.requirement_checked and d.requirement_error:
        return fail("diffusers-backend.requirement",
                    kb.fix("diffusers-backend-requirement", python=u.python_cmd(facts)),
                    backend=backend, error=d.requirement_error.splitlines()[0])
    if not d.requirement_checked:
        return skip("diffusers-backend.not_checked", backend=backend)
    return passed("diffusers-backend.pass", version=d.version, backend=backend)


@check("FD708", "diffusers-env", area="diffusers")
def diffusers_env(facts: Facts) -> Finding:
    """What it checks: DIFFUSERS_ATTN_BACKEND (the default backend) names a backend of the
    installed diffusers, and DIFFUSERS_ATTN_CHECKS is spelled so that version honours it (0.35.x
    compares the raw value with 1/ON/YES/TRUE, so "yes" or "true" is ignored; 0.36+ ignores case).
    Both as the environment and the config's config.env export them.

    Why it matters: diffusers turns DIFFUSERS_ATTN_BACKEND into AttentionBackendName(...) when its
    dispatcher is imported, so an invalid value makes the first model import raise "'x' is not a
    valid AttentionBackendName". A misspelled DIFFUSERS_ATTN_CHECKS silently leaves the input
    checks off that would have named a dtype or device problem.

    How to fix: unset DIFFUSERS_ATTN_BACKEND or set it to a listed value; set
    DIFFUSERS_ATTN_CHECKS=1.
    """
    cfg = _maybe_config(facts)
    env = _env(facts, cfg)
    if not env:
        if facts.project is None:
            return skip("diffusers-env.not_set")
        return passed("diffusers-env.unset")
    d = _diffusers(facts)
    version = _diffusers_version(facts)
    findings = []
    if "DIFFUSERS_ATTN_BACKEND" in env:
        value, where = env["DIFFUSERS_ATTN_BACKEND"]
        valid = d.backends if d is not None and d.backends else sorted(tb.KNOWN_BACKENDS)
        broke = d is not None and d.import_error and "AttentionBackendName" in d.import_error
        if broke or value not in valid:
            return fail("diffusers-env.backend_invalid",
                        kb.fix("diffusers-attn-backend-invalid", where=where),
                        details=[t("diffusers-backend.available", names=", ".join(valid))],
                        value=value, where=where)
        findings.append(t("diffusers-env.backend_ok", value=value, where=where))
    if "DIFFUSERS_ATTN_CHECKS" in env:
        value, where = env["DIFFUSERS_ATTN_CHECKS"]
        mm = u.major_minor(version)
        case_insensitive = mm is None or mm >= tb.CHECKS_CASE_INSENSITIVE_SINCE
        honoured = (value.upper() if case_insensitive else value) in tb.ENV_TRUE_VALUES
        if d is not None and d.checks_enabled is not None:
            honoured = d.checks_enabled
        if not honoured and value.strip().upper() not in tb.ENV_FALSE_VALUES:
            return warn("diffusers-env.checks_ignored", kb.fix("diffusers-attn-checks-ignored", where=where),
                        value=value, where=where, version=version or "?")
        findings.append(t("diffusers-env.checks_on" if honoured else "diffusers-env.checks_off",
                          value=value, where=where))
    return passed("diffusers-env.pass", summary="; ".join(findings))
