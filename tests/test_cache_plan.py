"""warm-cache's plan: configs from presets, flags and settings with compile options; what is
already warm (pure over a recorded manifest and a WarmEnv; no torch, no GPU)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from flexdoctor import workload as wl
from flexdoctor.cache import manifest as mf
from flexdoctor.cache import plan as planner
from flexdoctor.cache.fingerprint import Fingerprint

FORMAT1 = Path(__file__).parent / "data" / "manifests" / "format1_cpu_smoke.json"
SMOKE = wl.make(dtype="fp32", batch=1, heads=2, seq_len=128, head_dim=16, mask="causal", device="cpu",
                backward=False)


def manifest_in(root: Path, compile_env=None, entries=True) -> mf.Manifest:
    """The recorded format-1 manifest, re-written as this flexdoctor writes it, its entries present."""
    old = mf.Manifest.from_dict(json.loads(FORMAT1.read_text()))
    (group,) = old.entry_groups.values()
    if entries:
        for e in group.entries:
            (root / e).parent.mkdir(parents=True, exist_ok=True)
            (root / e).write_text("x")
    return mf.merge(old, old.fingerprint, [], [], str(root), "test",
                    compile_env=compile_env if compile_env is not None else {})


def env_for(root: Path, m, fingerprint=None, **kw) -> planner.WarmEnv:
    fp = fingerprint if fingerprint is not None else (m.fingerprint if m else None)
    return planner.WarmEnv(cache_dir=str(root), cache_source="--cache-dir", manifest=m, fingerprint=fp, **kw)


def decide(req, configs, env):
    return planner.decide(req, configs, env, {})


def actions(plan):
    return [(s.action, s.reason) for s in plan.steps]


def test_a_config_warm_for_this_environment_is_skipped(tmp_path):
    m = manifest_in(tmp_path)
    plan = decide(planner.WarmRequest(python="py"), [SMOKE], env_for(tmp_path, m))
    assert actions(plan) == [("already warm", "warm")] and plan.to_compile == []


def test_what_makes_a_config_compile_again(tmp_path):
    m = manifest_in(tmp_path)
    req = planner.WarmRequest(python="py")
    other_mode = SMOKE.replace(mode="max-autotune")
    assert actions(decide(req, [other_mode], env_for(tmp_path, m))) == [("compile", "new")]
    assert actions(decide(dataclasses.replace(req, force=True), [SMOKE], env_for(tmp_path, m))) == \
        [("compile", "forced")]
    assert actions(decide(dataclasses.replace(req, export=tmp_path / "b.zip"), [SMOKE], env_for(tmp_path, m))) \
        == [("compile", "export")]
    newer = dataclasses.replace(m.fingerprint, torch="2.14.0+cpu")
    (step,) = decide(req, [SMOKE], env_for(tmp_path, m, fingerprint=newer)).steps
    assert (step.action, step.reason) == ("compile", "environment-changed") and "2.14.0+cpu" in step.detail
    unknown = dataclasses.replace(m.fingerprint, torch_git=None)  # could not read: never "warm"
    assert actions(decide(req, [SMOKE], env_for(tmp_path, m, fingerprint=unknown)))[0][0] == "compile"
    assert actions(decide(req, [SMOKE], env_for(tmp_path, m, compile_env={"TORCHINDUCTOR_MAX_AUTOTUNE": "1"}))) \
        == [("compile", "compile-env-changed")]
    assert actions(decide(req, [SMOKE], env_for(tmp_path, None))) == [("compile", "new")]
    assert actions(decide(req, [SMOKE], env_for(tmp_path, None, manifest_error="bad json"))) == \
        [("compile", "manifest-unreadable")]


def test_deleted_cache_entries_mean_compile(tmp_path):
    m = manifest_in(tmp_path)
    (tmp_path / "fxgraph").rename(tmp_path / "gone")
    assert actions(decide(planner.WarmRequest(python="py"), [SMOKE], env_for(tmp_path, m))) == \
        [("compile", "entries-missing")]


def test_a_format_1_manifest_is_not_trusted_for_skipping(tmp_path):
    """Format 1 did not record the compile environment: the first run after an upgrade compiles."""
    old = mf.Manifest.from_dict(json.loads(FORMAT1.read_text()))
    m = dataclasses.replace(old, cache_dir=str(tmp_path))
    assert actions(decide(planner.WarmRequest(python="py"), [SMOKE], env_for(tmp_path, m))) == \
        [("compile", "compile-env-changed")]


def test_a_failed_or_missed_config_is_not_warm(tmp_path):
    m = manifest_in(tmp_path)
    (rec,) = m.configs
    m = dataclasses.replace(m, configs=(dataclasses.replace(rec, status="missed"),))
    assert actions(decide(planner.WarmRequest(python="py"), [SMOKE], env_for(tmp_path, m))) == \
        [("compile", "not-warm")]


def test_compile_options_apply_to_presets_and_multiply_by_mode():
    req = planner.WarmRequest(presets=("llm-causal",), python="py", compile=planner.CompileOptions(
        modes=("default", "max-autotune-no-cudagraphs"), fullgraph=True, kernel_options=(("BLOCK_M", 64),)))
    got = planner.configs_from_request(req, {}, None)
    assert [(w.mode, w.fullgraph, w.kernel_options) for w in got] == [
        ("default", True, (("BLOCK_M", 64),)), ("max-autotune-no-cudagraphs", True, (("BLOCK_M", 64),))]
    assert all((w.heads, w.kv_heads, w.seq_len, w.mask) == (32, 8, 4096, "causal") for w in got)


def test_settings_table_compile_options(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flexdoctor.warm]\npresets = ["cpu-smoke"]\nmode = ["default", "max-autotune"]\ndynamic = true\n'
        'kernel_options = { BLOCK_M = 64, BLOCK_N = 32 }\n'
        '[[tool.flexdoctor.warm.configs]]\ndtype = "fp32"\ndevice = "cpu"\nhead_dim = 16\nmode = "reduce-overhead"\n')
    src, table = planner.settings_table(cwd=tmp_path)
    got = planner.configs_from_table(table, str(src))
    assert [(w.mode, w.dynamic) for w in got] == [("default", True), ("max-autotune", True), ("reduce-overhead", True)]
    assert all(w.kernel_options == (("BLOCK_M", 64), ("BLOCK_N", 32)) for w in got)
    # A mode on the command line wins over the table's.
    flags = planner.CompileOptions(modes=("max-autotune-no-cudagraphs",))
    assert {w.mode for w in planner.configs_from_table(table, str(src), flags)} == {"max-autotune-no-cudagraphs"}


@pytest.mark.parametrize("text, error", [
    ('mode = "fastest"', "choose default"),
    ('fullgraph = "yes"', "fullgraph must be true or false"),
    ('kernel_options = ["BLOCK_M=64"]', "kernel_options must be a table"),
    ('modes = ["default"]', "unknown setting 'modes'"),
])
def test_bad_settings_are_one_line_errors(tmp_path, text, error):
    f = tmp_path / "warm.toml"
    f.write_text(f'[warm]\npresets = ["cpu-smoke"]\n{text}\n')
    src, table = planner.settings_table(f)
    with pytest.raises(planner.PlanError, match=error):
        planner.configs_from_table(table, str(src))


def test_old_shapes_setting_still_reads(tmp_path):
    got = planner.configs_from_table({"dtype": "fp32", "device": "cpu", "shapes": "dynamic"}, "t")
    assert [w.dynamic for w in got] == [True]


def test_nothing_to_warm_and_caches_off_are_usage_errors(tmp_path):
    req = planner.WarmRequest(python="py")
    with pytest.raises(planner.PlanError, match="nothing to warm"):
        decide(req, [], env_for(tmp_path, None))
    with pytest.raises(planner.PlanError, match="TORCHINDUCTOR_FORCE_DISABLE_CACHES=1"):
        decide(req, [SMOKE], env_for(tmp_path, None, disabled_by=("TORCHINDUCTOR_FORCE_DISABLE_CACHES=1",)))
    with pytest.raises(planner.PlanError, match="no NVIDIA GPU"):
        decide(req, [SMOKE.replace(device="cuda")], env_for(tmp_path, None, has_gpu=False))


def test_gather_reads_the_machine_without_importing_torch(tmp_path):
    import subprocess
    import sys

    mf.write(str(tmp_path), manifest_in(tmp_path))
    code = ("import sys, json; from pathlib import Path; from flexdoctor.cache import plan as p; "
            f"from flexdoctor import workload as wl; root = Path({str(tmp_path)!r}); "
            "req = p.WarmRequest(python=sys.executable, cache_dir=root); "
            "from flexdoctor.probes import gpu, interp; "
            "e = p.gather(req, [wl.make(device='cpu')], {}, interp.probe, gpu.probe); "
            "print(json.dumps([e.cache_dir, len(e.manifest.configs), e.fingerprint.torch is not None, "
            "'torch' in sys.modules]))")
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert json.loads(done.stdout) == [str(tmp_path), 1, True, False], done.stderr


def test_warm_config_flag_and_its_old_spelling(tmp_path):
    """warm-cache --config (the warm TOML) is now --warm-config: check's --config was another file."""
    import os
    import subprocess
    import sys

    f = tmp_path / "warm.toml"
    f.write_text('[warm]\npresets = ["cpu-smoke"]\nmode = "fastest"\n')  # read, then refused: no compile
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "flexdoctor", "warm-cache", "--cache-dir", str(tmp_path / "c"),
                               *args], capture_output=True, text=True, env=env, timeout=60)

    new, old = run("--warm-config", str(f)), run("--config", str(f))
    assert new.returncode == old.returncode == 2
    assert f"{f}: mode 'fastest'" in new.stderr and f"{f}: mode 'fastest'" in old.stderr
    assert "--config is now --warm-config" in old.stderr and "--config" not in new.stderr
    both = run("--warm-config", str(f), "--config", str(f))
    assert both.returncode == 2 and "give --warm-config only" in both.stderr


def test_gather_counts_the_gpus_nvml_sees(tmp_path):
    from flexdoctor.facts import GpuDevice, GpuFacts

    devices = [GpuDevice(index=i, name="NVIDIA H200", compute_capability="9.0", memory_total_bytes=(141 - i) << 30)
               for i in range(2)]
    req = planner.WarmRequest(python="py", cache_dir=tmp_path / "c")
    cuda = [SMOKE.replace(device="cuda")]
    env = planner.gather(req, cuda, {}, lambda py: (None, None),
                         lambda: GpuFacts(nvml="ok", driver_version="580.1", devices=devices), env={})
    assert env.gpu_count == 2 and env.has_gpu and env.gpu_memory == 140 << 30
    none = planner.gather(req, cuda, {}, lambda py: (None, None),
                          lambda: GpuFacts(nvml="no-library", device_nodes=False), env={})
    assert none.gpu_count is None and none.has_gpu is False
