"""The remaining false statements of issue 12, each pinned by a test of the real behaviour."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conftest import load_facts
from flexdoctor import checks, knowledge, runner
from flexdoctor.checks.cache import cache_location
from flexdoctor.checks.diffusers import attention_mechanism, attention_precision, diffusers_env
from flexdoctor.facts import CacheFacts, CacheLocation, ProjectFacts
from flexdoctor.model import Status
from flexdoctor.policy import PROFILES, Settings
from flexdoctor.project import load_config
from flexdoctor.project import tables as tb

NOHOME = {"HOME": "/nonexistent"}


def _cfg(tmp_path: Path, text: str, name: str = "config.json"):
    (tmp_path / name).write_text(text)
    return load_config(tmp_path / name, environ=NOHOME)


def _with(machine: str, cfg, env: dict = None):
    f = load_facts(machine)
    if env:
        f = dataclasses.replace(f, host=dataclasses.replace(f.host, env={**f.host.env, **env}))
    return dataclasses.replace(f, project=ProjectFacts(config=cfg, diffusers=None))


# FD701: "flsh" suggested "diffusers"; the closest real names are flash-attn and flex.
def test_fd701_typo_suggests_the_closest_real_backends(tmp_path):
    r = attention_mechanism(_with("h100", _cfg(tmp_path, '{"model_family": "wan", "attention_mechanism": "flsh"}')))
    assert r.status == Status.FAIL and "did you mean 'flash-attn'" in r.message
    assert any("flash-attn, flex" in d for d in r.details)
    assert '"attention_mechanism": "flash-attn"' in r.fix.summary


# diffusers 0.36-0.39 have AttentionBackendName "aiter"; a static check must not call it invalid.
def test_aiter_is_a_known_backend_for_static_judgement(tmp_path):
    assert "aiter" in tb.KNOWN_BACKENDS
    cfg = _cfg(tmp_path, '{"model_family": "wan"}')
    r = diffusers_env(_with("h100", cfg, env={"DIFFUSERS_ATTN_BACKEND": "aiter"}))
    assert r.status == Status.PASS, r.message


# aiter_fa2_hub registers _check_qkv_dtype_bf16 (diffusers 0.40-0.42): fp16 is refused.
def test_aiter_fa2_hub_is_bf16_only(tmp_path):
    cfg = _cfg(tmp_path, '{"model_family": "wan", "mixed_precision": "fp16"}')
    r = attention_precision(_with("h100", cfg, env={"DIFFUSERS_ATTN_BACKEND": "aiter_fa2_hub"}))
    assert r.status == Status.FAIL and "bf16 only" in r.message
    cfg = _cfg(tmp_path, '{"model_family": "wan", "mixed_precision": "bf16"}')
    assert attention_precision(_with("h100", cfg, env={"DIFFUSERS_ATTN_BACKEND": "aiter_fa2_hub"})).status == Status.PASS


# FD501 on a machine without a GPU: the warm-up command must not be the GPU preset.
def _tmp_cache(machine: str):
    f = load_facts(machine)
    loc = CacheLocation(kind="inductor", path="/tmp/torchinductor_me", source="default", exists=True, in_temp=True)
    return dataclasses.replace(f, cache=CacheFacts(uid=1000, inductor=loc))


def test_fd501_warm_command_fits_the_machine():
    gpu = cache_location(_tmp_cache("h100")).fix.commands
    cpu = cache_location(_tmp_cache("cpu_only")).fix.commands  # torch 2.13 CPU, Linux x86
    mac = cache_location(_tmp_cache("macos_m2")).fix.commands  # no CPU compile on macOS
    assert "flexdoctor warm-cache --preset llm-causal" in gpu
    assert "flexdoctor warm-cache --preset llm-causal --device cpu" in cpu
    assert not any("warm-cache" in c for c in mac)


# --profile extensions with a '+cpu' torch: nothing can be built, so it must fail.
def test_extensions_profile_fails_with_a_cpu_torch():
    specs = [s for s in checks.builtin() if s.id.startswith("FD4")]
    report = runner.run(specs, load_facts("cpu_only"), settings=Settings(profile=PROFILES["extensions"]))
    fd401 = next(r for r in report.results if r.id == "FD401")
    assert fd401.status == Status.FAIL and report.exit_code == 1
    assert fd401.fix is not None and fd401.fix.kb == "FDE409"
    default = runner.run(specs, load_facts("cpu_only"))
    assert default.exit_code == 0  # an interactive look at a CPU box stays quiet


# Knowledge-base statements verified against the real sources.
def test_fde304_describes_the_launcher_per_triton_release():
    cause = knowledge.get("FDE304").cause
    assert "triton 3.7" in cause and "cuda_utils" in cause and "every kernel with" not in cause


def test_fde706_head_dim_256_backward_runs_on_consumer_gpus_without_dropout():
    cause = knowledge.get("FDE706").cause
    assert "2.5.5" in cause and "dropout" in cause and "A100/H100-class" not in cause
    assert knowledge.match_text("RuntimeError: head_size should be a multiple of 8")[0].id == "FDE706"


def test_fde105_default_wheel_list_reaches_the_newest_releases():
    cause = knowledge.get("FDE105").cause
    assert "2.11-2.14 CUDA 13.0" in cause and "2.15 CUDA 13.2" in cause
