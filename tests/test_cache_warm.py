"""warm-cache for real: one small CPU flex_attention compile, a fresh process that must hit the
cache, the manifest written and read back, freshness going stale when the fingerprint changes,
and the mega-cache export/import round trip into an empty cache dir."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flexdoctor import checks, runner
from flexdoctor import workload as wl
from flexdoctor.cache import locations, warm
from flexdoctor.cache import manifest as mf
from flexdoctor.cache import plan as planner
from flexdoctor.facts import Facts, TorchStaticFacts
from flexdoctor.model import Status
from flexdoctor.probes import cache as cache_probe

torch_spec = pytest.importorskip("torch", reason="warm-cache compiles with torch")

FD = [sys.executable, "-m", "flexdoctor"]


def fd(*args: str, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    e.update(env or {})
    return subprocess.run(FD + list(args), capture_output=True, text=True, timeout=timeout, env=e)


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """One real cold compile of the smallest CPU config, then the fresh-process proof."""
    root = tmp_path_factory.mktemp("inductor")
    bundle = root.parent / "bundle.zip"
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", str(root), "--export", str(bundle))
    return root, bundle, done


def test_warm_compiles_and_a_fresh_process_hits(warmed):
    root, _, done = warmed
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "1/1 configs (100%)" in done.stdout
    assert f"export TORCHINDUCTOR_CACHE_DIR={root}" in done.stdout
    data = mf.read(str(root))
    (cfg,) = data["configs"]
    assert cfg["name"] == "fp32 B1 H2 L128 D16 causal fwd cpu"
    # The cold run compiled (a miss), the fresh process hit Inductor's FX graph cache.
    assert cfg["counters"]["fxgraph_cache_miss"] >= 1
    assert cfg["warm_counters"]["fxgraph_cache_hit"] >= 1
    assert cfg["warm_counters"]["fxgraph_cache_miss"] == 0
    assert cfg["status"] == "warm (verified)"
    assert cfg["compile_s"] > 0 and cfg["warm_first_call_s"] > 0
    print(f"\nCPU cold first call {cfg['compile_s']:.2f} s, warm {cfg['warm_first_call_s']:.2f} s")


def test_manifest_round_trip_and_fingerprint(warmed):
    root, _, _ = warmed
    data = mf.read(str(root))
    import torch

    fp = data["fingerprint"]
    assert fp["torch"] == torch.__version__
    assert fp["torch_git"] == torch.version.git_version
    assert fp["device"] == "cpu" and fp["python"].startswith(f"{sys.version_info[0]}.")
    assert data["fingerprint_id"] == mf.fingerprint_id(fp)
    # No temporary files left beside it; the lock file is the only other flexdoctor file.
    assert not [p for p in os.listdir(root) if p.startswith(".flexdoctor-manifest")]
    group = data["entry_groups"][data["fingerprint_id"]]
    assert any(e.startswith("fxgraph/") for e in group["entries"])


def _facts(root: Path, torch_version: str, git: str | None) -> Facts:
    c = cache_probe.probe({"TORCHINDUCTOR_CACHE_DIR": str(root), "HOME": os.environ.get("HOME", "/root")})
    return Facts(torch=TorchStaticFacts(version=torch_version, git_version=git), cache=c)


def _result(check_id: str, facts: Facts):
    specs = {s.id: s for s in checks.builtin()}
    return runner.run_one(specs[check_id], facts)


def test_freshness_fresh_then_stale_when_the_fingerprint_changes(warmed):
    root, _, _ = warmed
    import torch

    fresh = _result("FD505", _facts(root, torch.__version__, torch.version.git_version))
    assert fresh.status == Status.PASS and "warmed for this environment" in fresh.message
    stale = _result("FD505", _facts(root, "2.99.0", "deadbeef"))
    assert stale.status == Status.WARN
    assert "torch" in stale.message and "2.99.0" in stale.message
    assert stale.fix and stale.fix.kb == "FDE954"
    # The entries this run wrote now belong to "another version".
    dead = _result("FD506", _facts(root, "2.99.0", "deadbeef"))
    assert dead.status == Status.PASS and "0 B of other" not in dead.message


def test_export_import_round_trip_into_an_empty_cache(warmed, tmp_path):
    """Issue 21 item 5: on the CPU the imported cache hits, but its first call pays the C++ compile
    the mega-cache cannot carry; the import is then "imported (slow)" with both times, exit 1,
    never "warm (verified)". The export printed the sha256 the import is pinned to."""
    import hashlib

    _, bundle, done = warmed
    assert done.returncode == 0
    assert bundle.is_file() and bundle.stat().st_size > 1000
    digest = hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert f"sha256 {digest}" in done.stdout and f"--sha256 {digest}" in done.stdout
    fresh_root = tmp_path / "fresh"
    res = fd("warm-cache", "--import", str(bundle), "--sha256", digest, "--cache-dir", str(fresh_root))
    assert "Traceback" not in res.stderr
    assert "imported 1 artifact blob(s)" in res.stderr
    data = mf.read(str(fresh_root))
    (cfg,) = data["configs"]
    assert cfg["warm_counters"]["fxgraph_cache_hit"] >= 1 and cfg["warm_counters"]["fxgraph_cache_miss"] == 0
    exported = json.loads(__import__("zipfile").ZipFile(bundle).read("flexdoctor-bundle.json"))["first_call_s"]
    (ref,) = exported.values()
    imported = cfg["warm_first_call_s"]
    verdict = warm.import_speed(ref, imported)
    print(f"\nCPU first call: exported {ref:.2f} s, after import {imported:.2f} s -> {verdict}")
    if verdict == "slow":  # the measured CPU gap (FACTS §11)
        assert res.returncode == 1 and cfg["status"] == "imported (slow)"
        assert f"{imported:.1f} s against {ref:.1f} s" in res.stdout and ".so" in res.stdout
        assert "warm (verified)" not in res.stdout
    else:
        assert res.returncode == 0 and cfg["status"] == "warm (verified)"


def test_a_second_identical_run_starts_no_torch_process(warmed, tmp_path):
    """Issue 14: configs already warm for this environment are skipped, shown as already warm, and
    no worker (no `import torch`) starts; the manifest is left as it is."""
    root, _, first = warmed
    assert first.returncode == 0
    log = tmp_path / "started.log"
    wrapper = tmp_path / "python"  # the same interpreter, logging what it is asked to run
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    before = (root / "flexdoctor-manifest.json").read_bytes()
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", str(root), "--python", str(wrapper),
              env={"CI": "1"}, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "already warm: 1 config(s)" in done.stdout and "fp32 B1 H2 L128 D16 causal fwd cpu" in done.stdout
    assert "compiling" not in done.stderr and "manifest: unchanged" in done.stdout
    started = log.read_text() if log.exists() else ""
    assert "_warm_worker" not in started and "_interp_probe" in started  # torch read, never imported
    assert (root / "flexdoctor-manifest.json").read_bytes() == before


def test_usage_errors_are_one_line_exit_2(tmp_path):
    cases = [
        ("warm-cache", "--cache-dir", str(tmp_path)),  # nothing to warm
        ("warm-cache", "--preset", "nope", "--cache-dir", str(tmp_path)),
        ("warm-cache", "--dtype", "int8", "--device", "cpu", "--cache-dir", str(tmp_path)),
        ("warm-cache", "--mask", "sliding", "--device", "cpu", "--cache-dir", str(tmp_path)),
        ("warm-cache", "--import", str(tmp_path / "missing.zip"), "--cache-dir", str(tmp_path)),
    ]
    for args in cases:
        res = fd(*args, timeout=120)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert res.stderr.startswith("flexdoctor: error: ") and "Traceback" not in res.stderr


def test_caches_turned_off_is_refused(tmp_path):
    res = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", str(tmp_path),
             env={"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}, timeout=120)
    assert res.returncode == 2 and "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1" in res.stderr


def test_a_failing_config_reports_and_exits_1(tmp_path):
    """A worker that dies becomes a failed row with its error; no traceback, exit 1."""
    outcomes = [warm.Outcome(wl.make(device="cpu", dtype="fp32", heads=2, seq_len=128, head_dim=16))]
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho '@@flexdoctor-stage import torch'\n"
                    "echo 'triton.runtime.errors.OutOfResources: out of resource: shared memory, "
                    "Required: 262144, Hardware limit: 101376.' >&2\nexit 1\n")
    fake.chmod(0o755)
    r = warm.Runner(str(fake), str(tmp_path / "c"), 1, timeout=30)
    r.compile(outcomes)
    (o,) = outcomes
    assert o.failed and o.error_stage == "import torch"
    assert "exited with status 1" in o.error


def test_config_model_and_sources(tmp_path):
    cfgs = planner.product({"dtype": ["bf16", "fp16"], "head_dim": [64, 128], "mask": ["causal", "none"]})
    assert len(cfgs) == 8 and len(set(c.name for c in cfgs)) == 8
    c = wl.make(device="cpu", heads=32, kv_heads=8, mask="sliding_window:256", score_mod="softcap")
    assert c.mask == "sliding:256" and c.score_mod == "softcap:30" and c.backward is False
    assert wl.Workload.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    with pytest.raises(wl.WorkloadError):
        wl.make(heads=6, kv_heads=4)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flexdoctor.warm]\npresets = ["diffusers"]\ndtype = ["bf16", "fp16"]\nhead_dim = 64\n'
        'mask = ["causal"]\ncache_dir = "/data/cache"\n')
    src, table = planner.settings_table(cwd=tmp_path)
    got = planner.configs_from_table(table, str(src))
    assert len(got) == 3 and table["cache_dir"] == "/data/cache"
    assert planner.default_jobs(cfgs, gpu_memory=80 << 30) >= 1


def test_locations_mirror_torch(monkeypatch, tmp_path):
    from torch._inductor.runtime import cache_dir_utils

    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    assert locations.inductor().path == cache_dir_utils.default_cache_dir()
    env = {"TORCHINDUCTOR_CACHE_DIR": "rel/dir", "TRITON_HOME": str(tmp_path), "XDG_CACHE_HOME": "/x"}
    assert locations.inductor(env).path == os.path.abspath("rel/dir")
    assert locations.triton(env).path == os.path.join(str(tmp_path), ".triton", "cache")
    assert locations.aten(env).path == "/x/torch/kernels"
    assert locations.aten({"PYTORCH_KERNEL_CACHE_PATH": "/k"}).path == "/k"
    assert locations.disabled_by({"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TRITON_ALWAYS_COMPILE": "0"}) == [
        "TORCHINDUCTOR_FX_GRAPH_CACHE=0"]


def test_manifest_write_is_atomic_under_interrupt(tmp_path, monkeypatch):
    mf.write(str(tmp_path), {"fingerprint": {"torch": "old"}})

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(json, "dump", boom)
    with pytest.raises(KeyboardInterrupt):
        mf.write(str(tmp_path), {"fingerprint": {"torch": "new"}})
    assert mf.read(str(tmp_path))["fingerprint"]["torch"] == "old"
    assert [p.name for p in tmp_path.iterdir()] == [locations.MANIFEST_NAME]
