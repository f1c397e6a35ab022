"""FD507 parses the cache switches exactly as each torch / Triton release does (issue 12).

Sources: torch/_inductor/config.py, torch/compiler/config.py, torch/_functorch/config.py and
torch/utils/_config_module.py of the torch 2.5.1 ... 2.14.1 wheels; triton's compiler.py (<= 3.3),
knobs.py (3.4) and libtriton getenv_bool (3.5+). The table is in flexdoctor/cache/envflags.py; the
last test asks the installed torch itself.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flexdoctor.cache import envflags
from flexdoctor.checks.cache import cache_enabled
from flexdoctor.facts import Facts
from flexdoctor.model import Status

FIXTURE = Path(__file__).parent / "fixtures" / "facts" / "h100.json"  # has a cache section


def _off(env, torch=None, triton=None):
    return sorted(envflags.disabled_by(env, torch, triton))


@pytest.mark.parametrize("torch, value, off", [
    ("2.5.1", "1", True), ("2.5.1", "true", False), ("2.7.1", "TRUE", False), ("2.7.1", "false", False),
    ("2.8.0", "true", True), ("2.8.0", "false", True), ("2.8.0", "no", True), ("2.8.0", "0", False),
    ("2.8.0", "", False), ("2.13.0", "false", True), ("2.13.0", " 1", True), ("2.7.1", " 1", False),
])
def test_force_disable(torch, value, off):
    name = "TORCHINDUCTOR_FORCE_DISABLE_CACHES"
    assert _off({name: value}, torch) == ([f"{name}={value}"] if off else [])


def test_second_force_variable_only_from_29_and_only_when_first_unset():
    name = "TORCH_COMPILE_FORCE_DISABLE_CACHES"
    assert _off({name: "1"}, "2.8.0") == []
    assert _off({name: "1"}, "2.9.1") == [f"{name}=1"]
    # the first variable, set (even to "0" or empty), shadows the second one
    assert _off({"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "0", name: "1"}, "2.11.0") == []
    assert _off({"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "", name: "1"}, "2.11.0") == []


@pytest.mark.parametrize("torch, value, off", [
    ("2.5.1", "0", True), ("2.6.0", "false", True), ("2.6.0", "true", True), ("2.6.0", "1", False),
    ("2.7.1", "false", False), ("2.11.0", "false", False), ("2.11.0", "0", True), ("2.11.0", "", True),
    ("2.11.0", "no", False),
])
def test_fx_graph_cache(torch, value, off):
    name = "TORCHINDUCTOR_FX_GRAPH_CACHE"
    assert _off({name: value}, torch) == ([f"{name}={value}"] if off else [])


def test_fx_graph_cache_default_from_210_unless_forced():
    name = "TORCHINDUCTOR_FX_GRAPH_CACHE_DEFAULT"
    assert _off({name: "0"}, "2.9.1") == []
    assert _off({name: "0"}, "2.10.0") == [f"{name}=0"]
    assert _off({name: "0", "TORCHINDUCTOR_FX_GRAPH_CACHE": "1"}, "2.10.0") == []


@pytest.mark.parametrize("torch, value, off", [
    ("2.5.1", "0", False), ("2.6.0", "0", False), ("2.7.1", "0", True), ("2.7.1", "false", False),
])
def test_autograd_cache(torch, value, off):
    name = "TORCHINDUCTOR_AUTOGRAD_CACHE"
    assert _off({name: value}, torch) == ([f"{name}={value}"] if off else [])


@pytest.mark.parametrize("triton, value, on", [
    ("3.1.0", "1", True), ("3.3.1", "true", False), ("3.4.0", "TRUE", True), ("3.6.0", "y", True),
    ("3.8.0", "yes", True), ("3.8.0", "2", False), ("3.8.0", "0", False),
])
def test_triton_always_compile(triton, value, on):
    assert _off({"TRITON_ALWAYS_COMPILE": value}, None, triton) == ([f"TRITON_ALWAYS_COMPILE={value}"] if on else [])


def _facts(env: dict, torch_version: str) -> Facts:
    f = Facts.load(json.loads(FIXTURE.read_text()))
    return dataclasses.replace(f, host=dataclasses.replace(f.host, env=env),
                               torch=dataclasses.replace(f.torch, version=torch_version))


def test_fd507_false_keeps_fx_cache_on_for_modern_torch():
    r = cache_enabled(_facts({"TORCHINDUCTOR_FX_GRAPH_CACHE": "false"}, "2.11.0"))
    assert r.status == Status.PASS
    assert any("TORCHINDUCTOR_FX_GRAPH_CACHE='false'" in d for d in r.details)  # says why it is not off


def test_fd507_force_disable_false_turns_caching_off_from_28():
    r = cache_enabled(_facts({"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "false"}, "2.11.0"))
    assert r.status == Status.WARN and "TORCHINDUCTOR_FORCE_DISABLE_CACHES=false" in r.message
    assert r.fix.commands == ("unset TORCHINDUCTOR_FORCE_DISABLE_CACHES",)


def test_fd507_force_disable_true_is_ignored_by_old_torch():
    assert cache_enabled(_facts({"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "true"}, "2.5.1")).status == Status.PASS


def test_fd507_windows_fix_is_powershell():
    f = _facts({"TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}, "2.11.0")
    f = dataclasses.replace(f, python=dataclasses.replace(f.python, platform="win32"))
    assert cache_enabled(f).fix.commands == ("Remove-Item Env:TORCHINDUCTOR_FX_GRAPH_CACHE",)


_ASK_TORCH = (
    "import json, torch, torch._inductor.config as ic, torch._functorch.config as fc\n"
    "import torch.compiler.config as cc\n"
    "print(json.dumps({'force': bool(cc.force_disable_caches), 'fx': bool(ic.fx_graph_cache),"
    " 'autograd': bool(fc.enable_autograd_cache), 'version': torch.__version__}))"
)


@pytest.mark.parametrize("env", [
    {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "false"},
    {"TORCHINDUCTOR_FX_GRAPH_CACHE": "false", "TORCHINDUCTOR_AUTOGRAD_CACHE": ""},
    {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "", "TORCH_COMPILE_FORCE_DISABLE_CACHES": "1",
     "TORCHINDUCTOR_FX_GRAPH_CACHE_DEFAULT": "0"},
], ids=["force-false", "fx-false-autograd-empty", "shadowed-and-default"])
def test_table_agrees_with_the_installed_torch(env):
    """Ask the real torch in this environment what it made of each variable."""
    torch = pytest.importorskip("torch")
    from packaging.version import Version

    if Version(Version(torch.__version__).base_version) < Version("2.9"):
        pytest.skip("the probe script reads torch.compiler.config (2.9+)")
    clean = {k: v for k, v in os.environ.items() if k not in envflags.NAMES}
    done = subprocess.run([sys.executable, "-c", _ASK_TORCH], env={**clean, **env}, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    real = json.loads(done.stdout.strip().splitlines()[-1])
    found = {s.name: s for s in envflags.switches(env, real["version"])}
    predicted_force = any(s.off and s.what == "all" for s in found.values())
    predicted_fx_off = any(s.off and s.what == "fxgraph" for s in found.values())
    predicted_autograd_off = any(s.off and s.what == "autograd" for s in found.values())
    assert real["force"] == predicted_force
    assert real["fx"] == (not predicted_fx_off)
    assert real["autograd"] == (not predicted_autograd_off)
