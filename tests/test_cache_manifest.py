"""The typed manifest and fingerprint: today's manifests (format 1) still read, the new format
round-trips, the cheap fingerprint agrees with what a worker records."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flexdoctor import workload as wl
from flexdoctor.cache import fingerprint as fpm
from flexdoctor.cache import manifest as mf
from flexdoctor.facts import GpuDevice

DATA = Path(__file__).parent / "data" / "manifests"
FORMAT1 = DATA / "format1_cpu_smoke.json"  # written by `warm-cache --preset cpu-smoke` before compile options


def test_reads_a_format_1_manifest():
    m = mf.Manifest.from_dict(json.loads(FORMAT1.read_text()))
    assert m.format == 1 and m.compile_env is None and m.unreadable_configs == 0
    (c,) = m.configs
    assert c.workload == wl.make(dtype="fp32", batch=1, heads=2, seq_len=128, head_dim=16, mask="causal",
                                 device="cpu", backward=False)
    assert (c.workload.mode, c.workload.dynamic, c.workload.fullgraph) == ("default", False, False)
    assert c.name == "fp32 B1 H2 L128 D16 causal fwd cpu" and c.warm
    assert m.fingerprint.torch == "2.13.0+cpu" and m.fingerprint_id == "beb144ef55125b42"
    (group,) = m.entry_groups.values()
    assert group.fingerprint == m.fingerprint and len(group.entries) == 25


def test_format_1_fingerprint_id_is_unchanged():
    data = json.loads(FORMAT1.read_text())
    assert mf.fingerprint_id(data["fingerprint"]) == data["fingerprint_id"]


def test_new_format_round_trips(tmp_path):
    old = mf.Manifest.from_dict(json.loads(FORMAT1.read_text()))
    w = wl.make(dtype="bf16", mode="max-autotune-no-cudagraphs", kernel_options={"BLOCK_M": 64}, device="cpu")
    rec = mf.ConfigRecord(workload=w, status="warm (verified)", compile_s=1.5, kb=("FDE608",))
    new = mf.merge(old, old.fingerprint, [rec], ["fxgraph/ab/new"], str(tmp_path), "9.9", compile_env={})
    path = mf.write(str(tmp_path), new)
    back = mf.load(str(tmp_path))
    assert Path(path).name == "flexdoctor-manifest.json"
    assert back.format == mf.FORMAT == 2
    assert back.configs == new.configs and back.config(w) == rec
    assert {c.name for c in back.configs} == {"fp32 B1 H2 L128 D16 causal fwd cpu", w.name}
    assert "fxgraph/ab/new" in back.entry_groups[old.fingerprint_id].entries
    assert json.loads(Path(path).read_text())["configs"][0]["config"].get("shapes") is None


def test_another_environment_drops_the_configs_but_keeps_the_entry_groups(tmp_path):
    old = mf.Manifest.from_dict(json.loads(FORMAT1.read_text()))
    other = fpm.Fingerprint(torch="2.14.0+cpu", device="cpu")
    new = mf.merge(old, other, [], [], str(tmp_path), "9.9", compile_env={})
    assert new.configs == () and set(new.entry_groups) == {old.fingerprint_id, other.id}


@pytest.mark.parametrize("data", [[], {"configs": []}, {"fingerprint": "x"}])
def test_not_a_manifest(data):
    with pytest.raises(ValueError, match="not a flexdoctor manifest"):
        mf.Manifest.from_dict(data)


def test_a_newer_format_is_refused_not_misread():
    data = dict(json.loads(FORMAT1.read_text()), format=99)
    with pytest.raises(ValueError, match="newer than this flexdoctor reads"):
        mf.Manifest.from_dict(data)


def test_a_foreign_config_entry_is_never_warm():
    data = json.loads(FORMAT1.read_text())
    data["configs"].append({"name": "x", "config": {"dtype": "fp8"}, "status": "warm (verified)"})
    m = mf.Manifest.from_dict(data)
    assert m.unreadable_configs == 1 and len(m.configs) == 1


def test_entry_group_present(tmp_path):
    root = tmp_path / "c"
    shutil.copytree(Path(__file__).parent / "data" / "manifests", root)
    g = mf.EntryGroup(fpm.Fingerprint(), ("format1_cpu_smoke.json",))
    assert g.present(str(root))
    assert not mf.EntryGroup(fpm.Fingerprint(), ("format1_cpu_smoke.json", "fxgraph/gone")).present(str(root))


# ------------------------------------------------------------------ fingerprint


def test_same_keys_is_strict_about_unknowns():
    a = fpm.Fingerprint(torch="2.11.0+cu130", torch_git="abc", cuda="13.0", triton="3.6.0", gpu_name="NVIDIA H100")
    assert a.same_keys(a)
    assert a.same_keys(fpm.Fingerprint(torch="2.11.0", torch_git="abc", cuda="13.0", triton="3.6.0",
                                       gpu_name="NVIDIA H100", driver="580"))
    assert not a.same_keys(fpm.Fingerprint(torch="2.11.0", torch_git="abc", cuda="13.0", triton="3.6.0"))
    assert a.changes(fpm.Fingerprint(torch="2.11.0", torch_git="abc", cuda="13.0", triton="3.6.0")) == []
    assert not a.same_keys(fpm.Fingerprint(**{**a.to_dict(), "triton": "3.7.1"}))


def _gpu(i, name, uuid):
    return GpuDevice(index=i, name=name, compute_capability="9.0", uuid=uuid)


def test_visible_gpu_follows_cuda_visible_devices():
    gpus = [_gpu(0, "NVIDIA A10G", "GPU-aaaa"), _gpu(1, "NVIDIA H100 80GB HBM3", "GPU-bbbb")]
    assert fpm.visible_gpu(gpus, {"CUDA_VISIBLE_DEVICES": "1"})[1].name == "NVIDIA H100 80GB HBM3"
    assert fpm.visible_gpu(gpus, {"CUDA_VISIBLE_DEVICES": "GPU-bbbb,0"})[1].index == 1
    assert fpm.visible_gpu(gpus, {"CUDA_VISIBLE_DEVICES": ""}) == (False, None)
    assert fpm.visible_gpu(gpus, {"CUDA_VISIBLE_DEVICES": "-1"}) == (False, None)
    # Mixed models in CUDA's default (fastest-first) order: NVML cannot tell which is device 0.
    assert fpm.visible_gpu(gpus, {}) == (True, None)
    assert fpm.visible_gpu(gpus, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})[1].index == 0
    same = [_gpu(0, "NVIDIA H100 80GB HBM3", "GPU-a"), _gpu(1, "NVIDIA H100 80GB HBM3", "GPU-b")]
    assert fpm.visible_gpu(same, {})[1].index == 0
    assert fpm.visible_gpu([], {}) == (False, None)


def test_compile_env_ignores_cache_locations():
    env = {"TORCHINDUCTOR_CACHE_DIR": "/c", "TRITON_CACHE_DIR": "/t", "TORCHINDUCTOR_MAX_AUTOTUNE": "1",
           "PATH": "/bin", "TORCH_COMPILE_DEBUG": "1"}
    assert fpm.compile_env(env) == {"TORCHINDUCTOR_MAX_AUTOTUNE": "1", "TORCH_COMPILE_DEBUG": "1"}


def test_cheap_fingerprint_matches_the_format_1_manifest_written_here():
    """The manifest above was written on this test machine (CPU torch 2.13.0) by a real worker:
    the fingerprint read without importing torch agrees with it, so warm-cache can skip."""
    from flexdoctor.probes import gpu, interp

    recorded = mf.Manifest.from_dict(json.loads(FORMAT1.read_text())).fingerprint
    py, torch = interp.probe(sys.executable)
    now = fpm.Fingerprint.from_probes(py, torch, gpu.probe())
    if now.torch != recorded.torch or now.torch_git != recorded.torch_git:
        pytest.skip(f"this machine has torch {now.torch}, the fixture was recorded with {recorded.torch}")
    assert recorded.same_keys(now)


def test_cheap_fingerprint_does_not_import_torch():
    code = ("import sys; from flexdoctor.cache import fingerprint as f; from flexdoctor.probes import gpu, interp; "
            "fp = f.Fingerprint.from_probes(*interp.probe(sys.executable), gpu.probe()); "
            "print(fp.torch, 'torch' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    version, imported = done.stdout.split()
    assert imported == "False" and version != "None", done.stderr


def test_clear_cache_knows_both_formats_as_flexdoctor_files(tmp_path):
    from flexdoctor.cache import identify

    old = mf.Manifest.from_dict(json.loads(FORMAT1.read_text()))
    path = mf.write(str(tmp_path), mf.merge(old, old.fingerprint, [], [], str(tmp_path), "9.9", compile_env={}))
    assert identify._manifest_ok(path)  # format 2
    assert identify._manifest_ok(str(FORMAT1))  # format 1
