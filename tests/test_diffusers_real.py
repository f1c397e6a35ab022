"""Against the real diffusers package from PyPI (in the `test` extra): the probe script reads its
AttentionBackendName and calls its own requirement check in a subprocess; flexdoctor's tables are
checked against what the installed release registers. Skipped when diffusers (or torch, which
its dispatcher imports) is not installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from flexdoctor import checks, runner
from flexdoctor.facts import ProbeError
from flexdoctor.probes import diffusers as probe_mod
from flexdoctor.project import DiffusersFacts
from flexdoctor.project import tables as tb

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("diffusers") is None or importlib.util.find_spec("torch") is None,
    reason="diffusers and torch are not installed (pip install -e '.[test]')",
)
DATA = Path(__file__).parent / "data" / "simpletuner"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for k in ("DIFFUSERS_ATTN_BACKEND", "DIFFUSERS_ATTN_CHECKS"):
        monkeypatch.delenv(k, raising=False)


def probe(backend=None, **env) -> DiffusersFacts:
    out = probe_mod.run_script(sys.executable, backend, env, timeout=120)
    assert isinstance(out, DiffusersFacts), out
    return out


def test_reads_the_enum_and_runs_the_requirement_check():
    d = probe("flex")
    assert d.imported and d.has_dispatcher and d.import_error is None
    from importlib.metadata import version

    assert d.version == version("diffusers")
    assert {"flex", "native", "flash", "_flash_3", "_native_cudnn", "sage", "xformers"} <= set(d.backends)
    assert d.default_backend == "native" and d.checks_enabled is False
    # torch >= 2.5 is installed: diffusers' own check passes for flex.
    assert d.requirement_backend == "flex" and d.requirement_checked and d.requirement_error is None


def test_requirement_failure_is_diffusers_own_message():
    if importlib.util.find_spec("flash_attn") is not None:
        pytest.skip("flash-attn is installed here")
    d = probe("flash")
    assert d.requirement_checked
    assert "Flash Attention backend 'flash' is not usable because of missing package" in d.requirement_error


def test_hub_backends_are_never_asked():
    d = probe("flash_hub")
    assert d.requirement_backend is None and not d.requirement_checked


def test_invalid_diffusers_attn_backend_becomes_data():
    d = probe("flex", DIFFUSERS_ATTN_BACKEND="flex-attention")
    assert not d.imported
    assert d.import_error == "ValueError: 'flex-attention' is not a valid AttentionBackendName"
    assert d.import_stage == "import attention_dispatch"
    assert d.backends and "flex" in d.backends  # read again without the variable
    # and the check says so
    from flexdoctor.facts import ProjectFacts
    from conftest import load_facts
    import dataclasses

    f = dataclasses.replace(load_facts("h100"), project=ProjectFacts(config=None, diffusers=d))
    f = dataclasses.replace(f, host=dataclasses.replace(f.host, env={**f.host.env,
                                                                     "DIFFUSERS_ATTN_BACKEND": "flex-attention"}))
    spec = {s.id: s for s in checks.builtin()}["FD708"]
    assert runner.run_one(spec, f).status.value == "fail"


@pytest.mark.parametrize("value,expected", [("1", True), ("yes", True), ("enabled", False)])
def test_diffusers_attn_checks_spelling(value, expected):
    d = probe(None, DIFFUSERS_ATTN_CHECKS=value)
    major_minor = tuple(int(x) for x in d.version.split(".")[:2])
    if major_minor < tb.CHECKS_CASE_INSENSITIVE_SINCE and value != value.upper():
        expected = False
    assert d.checks_enabled is expected


def test_tables_agree_with_the_installed_release():
    code = r"""
import json, diffusers.models.attention_dispatch as ad
reg = ad._AttentionBackendRegistry
half = sorted(b.value for b, cs in reg._constraints.items()
              if any(getattr(c, "__name__", "") in ("_check_qkv_dtype_bf16_or_fp16", "_check_qkv_dtype_bf16") for c in cs))
print(json.dumps({"enum": [b.value for b in ad.AttentionBackendName], "half": half}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    import json

    data = json.loads(out.stdout.strip().splitlines()[-1])
    enum = set(data["enum"])
    assert enum <= tb.KNOWN_BACKENDS, enum - tb.KNOWN_BACKENDS  # our static fallback list is complete
    # Every SimpleTuner mechanism maps to a backend this release has (SimpleTuner needs >= 0.36).
    assert set(tb.DISPATCHER_BACKENDS.values()) <= enum
    # Backends diffusers constrains to half precision are the ones FD704 treats as half-only.
    assert set(data["half"]) <= tb.HALF_ONLY_BACKENDS | {"aiter_fa2_hub"}
    assert "flex" not in data["half"] and "native" not in data["half"]


def test_gather_with_a_config_static_tier(tmp_path):
    from flexdoctor.probes import gather

    facts = gather(sys.executable, runtime=False, config=str(DATA / "wan" / "toml"))
    assert facts.project.config.text("attention_mechanism") == "flex"
    assert isinstance(facts.project.diffusers, ProbeError) and facts.project.diffusers.kind == "skipped"
    assert "project" in facts.timings
    plain = gather(sys.executable, runtime=False)
    assert plain.project is None
