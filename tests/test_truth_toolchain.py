"""FD402 judges $CUDA_HOME/bin/nvcc, the nvcc torch.utils.cpp_extension runs, not the first one on
PATH (issue 12; torch/utils/cpp_extension.py _find_cuda_home and _check_cuda_version)."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from pathlib import Path

import pytest

from flexdoctor.checks.toolchain import nvcc_cuda_match
from flexdoctor.facts import Facts
from flexdoctor.model import Status
from flexdoctor.probes import toolchain

FIXTURES = Path(__file__).parent / "fixtures" / "facts"


def _toolkit(root: Path, release: str) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "include" / "cuda.h").write_text("")
    (root / "include" / "cuda_runtime.h").write_text("")
    exe = root / "bin" / "nvcc"
    exe.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {release}, V{release}.1'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


@pytest.fixture
def env(monkeypatch, tmp_path):
    for var in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def _judge(base: str = "h100.json"):  # torch 2.11.0, CUDA 13.0
    facts = Facts.from_dict(json.loads((FIXTURES / base).read_text()))
    return nvcc_cuda_match(dataclasses.replace(facts, toolchain=toolchain.probe()))


def test_cuda_home_nvcc_is_judged_not_the_path_one(env, tmp_path):
    old = _toolkit(tmp_path / "cuda-12.4", "12.4")
    new = _toolkit(tmp_path / "cuda-13.0", "13.0")
    env.setenv("PATH", f"{new.parent}{os.pathsep}/usr/bin:/bin")
    env.setenv("CUDA_HOME", str(tmp_path / "cuda-12.4"))
    r = _judge()
    assert r.status == Status.WARN, r.message
    assert str(old) in r.message and "12.4" in r.message
    assert any(str(new) in d for d in r.details)  # and says the PATH one is not what builds use


def test_matching_cuda_home_passes_though_path_nvcc_is_old(env, tmp_path):
    _toolkit(tmp_path / "cuda-13.0", "13.0")
    old = _toolkit(tmp_path / "cuda-12.4", "12.4")
    env.setenv("PATH", f"{old.parent}{os.pathsep}/usr/bin:/bin")
    env.setenv("CUDA_HOME", str(tmp_path / "cuda-13.0"))
    assert _judge().status == Status.PASS


def test_cuda_home_without_nvcc(env, tmp_path):
    (tmp_path / "cuda" / "include").mkdir(parents=True)
    new = _toolkit(tmp_path / "cuda-13.0", "13.0")
    env.setenv("PATH", f"{new.parent}{os.pathsep}/usr/bin:/bin")
    env.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    r = _judge()
    assert r.status == Status.WARN and "no bin/nvcc" in r.message


def test_without_cuda_home_the_path_nvcc_parent_is_used(env, tmp_path):
    new = _toolkit(tmp_path / "cuda-13.0", "13.0")
    env.setenv("PATH", f"{new.parent}{os.pathsep}/usr/bin:/bin")
    assert _judge().status == Status.PASS
