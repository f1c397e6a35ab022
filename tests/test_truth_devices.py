"""Statements about where flex runs, per torch release and device (issue 12).

torch 2.13+ lowers compiled flex_attention on MPS to a Metal shader, forward only
(torch/_inductor/kernel/flex/flex_mps.py; _validate_device rejects MPS backward); torch 2.6-2.12
reject MPS tensors ("FlexAttention is only supported on CUDA or CPU devices" / "... CUDA, CPU or
HPU devices"). FD705 must not contradict FD702/FD703 and must not talk about MPS on Linux.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conftest import load_facts
from flexdoctor.checks.diffusers import attention_device, flex_compiled
from flexdoctor.checks.platform import platform
from flexdoctor.facts import ProjectFacts
from flexdoctor.model import Status
from flexdoctor.project import load_config

DATA = Path(__file__).parent / "data" / "simpletuner"


def _torch(machine: str, version: str):
    f = load_facts(machine)
    rt = dataclasses.replace(f.torch_runtime, version=version)
    return dataclasses.replace(f, torch=dataclasses.replace(f.torch, version=version), torch_runtime=rt)


def _with(f, config: Path):
    return dataclasses.replace(f, project=ProjectFacts(config=load_config(config, environ={"HOME": "/nonexistent"}),
                                                       diffusers=None))


def test_platform_on_a_mac_with_torch_213_says_flex_compiles_for_mps():
    r = platform(_torch("macos_m2", "2.13.0"))
    assert r.status == Status.WARN
    assert "Metal" in r.message and "inference only" in r.message and "cannot be compiled" not in r.message


def test_platform_on_a_mac_with_torch_28_says_mps_is_rejected():
    r = platform(load_facts("macos_m2"))  # torch 2.8.0
    assert "rejects MPS tensors" in r.message and "2.13" in r.message


def test_fd705_flex_on_mps_names_the_missing_backward_or_the_rejection():
    r = attention_device(_with(_torch("macos_m2", "2.13.0"), DATA / "wan" / "json"))
    assert r.status == Status.FAIL and "forward only" in r.message and "backward on MPS" in r.message
    r = attention_device(_with(load_facts("macos_m2"), DATA / "wan" / "json"))
    assert r.status == Status.FAIL and "rejects MPS tensors" in r.message


def test_fd705_on_linux_cpu_does_not_mention_mps():
    r = attention_device(_with(load_facts("cpu_only"), DATA / "wan" / "json"))  # torch 2.13 CPU
    assert r.status == Status.FAIL and "MPS" not in r.message and "backward on CPU" in r.message


def test_fd705_agrees_with_fd702_and_fd703_when_the_family_never_reaches_flex(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text('{"model_family": "flux", "attention_mechanism": "flex"}')
    f = _with(load_facts("cpu_only"), cfg)
    assert flex_compiled(f).status == Status.SKIP  # FD703: flex is not used at all
    r = attention_device(f)
    assert r.status == Status.PASS and "never used" in r.message
