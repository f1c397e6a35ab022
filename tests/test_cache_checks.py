"""The FD5xx cache checks over recorded-style facts: each bad case and its good twin."""

from __future__ import annotations

import dataclasses
import json

import pytest

from flexdoctor import checks, runner
from flexdoctor.facts import (CacheFacts, CacheLocation, CacheManifest, Facts, GpuDevice, GpuFacts, PathStat,
                              ProbeError, TorchStaticFacts)
from flexdoctor.model import Status

GOOD_LOC = CacheLocation(kind="inductor", path="/home/me/.cache/torchinductor", source="TORCHINDUCTOR_CACHE_DIR",
                         exists=True, in_temp=False, fs_type="ext4", mount_point="/", noexec=False, writable=True,
                         owner_uid=1000, mode=0o700, free_bytes=100 << 30, size_bytes=300 << 20)
FP = {"torch": "2.11.0+cu130", "torch_git": "abc", "cuda": "13.0", "hip": None, "triton": "3.6.0",
      "gpu_name": "NVIDIA H100 80GB HBM3", "device": "cuda", "driver": "580.159.04"}


def facts(loc=GOOD_LOC, manifest=None, disabled=(), torch_version="2.11.0+cu130", triton="3.6.0") -> Facts:
    gpu = GpuFacts(nvml="ok", driver_version="580.159.04", cuda_driver_version="13.0",
                   devices=[GpuDevice(0, "NVIDIA H100 80GB HBM3", "9.0")])
    from flexdoctor.facts import PythonFacts

    py = PythonFacts(executable="/usr/bin/python3", version="3.11.7", implementation="CPython", platform="linux",
                     include_dir=None, python_h=True, packages={"triton": triton})
    return Facts(gpu=gpu, python=py, torch=TorchStaticFacts(version=torch_version, git_version="abc", cuda="13.0"),
                 cache=CacheFacts(uid=1000, inductor=loc, manifest=manifest, disabled_by=list(disabled)))


def run(check_id: str, f: Facts):
    spec = {s.id: s for s in checks.builtin()}[check_id]
    return runner.run_one(spec, f)


def test_every_cache_check_is_valid_and_skips_without_cache_facts():
    specs = [s for s in checks.builtin() if s.area == "cache"]
    assert [s.id for s in specs] == [f"FD50{i}" for i in range(1, 9)]
    for s in specs:
        assert not s.problems(), s.problems()
        assert runner.run_one(s, Facts()).status == Status.SKIP


@pytest.mark.parametrize("loc, status", [
    (GOOD_LOC, Status.PASS),
    (dataclasses.replace(GOOD_LOC, path="/tmp/torchinductor_me", in_temp=True, source="default"), Status.NOTE),
    (dataclasses.replace(GOOD_LOC, fs_type="tmpfs"), Status.NOTE),
])
def test_location(loc, status):
    """A cache on a temporary filesystem works (torch's own default): a note with its fix, which
    never fails --strict (issue 21.9)."""
    r = run("FD501", facts(loc))
    assert r.status == status
    if status == Status.NOTE:
        assert "TORCHINDUCTOR_CACHE_DIR" in " ".join(r.fix.commands) and r.fix.kb == "FDE950"


@pytest.mark.parametrize("change, status", [
    ({}, Status.PASS), ({"writable": False}, Status.FAIL), ({"noexec": True}, Status.FAIL)])
def test_writable(change, status):
    assert run("FD502", facts(dataclasses.replace(GOOD_LOC, **change))).status == status


@pytest.mark.parametrize("free, status", [(100 << 30, Status.PASS), (1 << 30, Status.WARN), (10 << 20, Status.FAIL)])
def test_disk_space(free, status):
    assert run("FD503", facts(dataclasses.replace(GOOD_LOC, free_bytes=free))).status == status


@pytest.mark.parametrize("change, status, words", [
    ({}, Status.PASS, "yours"),
    # root is trusted, as in OpenSSH's StrictModes (a root-owned dir it cannot write is FD502's)
    ({"owner_uid": 0}, Status.PASS, "yours"),
    ({"owner_uid": 1234}, Status.FAIL, "owned by uid 1234"),
    ({"mode": 0o777}, Status.FAIL, "world-writable"),
    ({"mode": 0o775}, Status.FAIL, "group-"),
    ({"mode": 0o1777}, Status.FAIL, "world-writable"),  # sticky does not help the cache dir itself
])
def test_permissions(change, status, words):
    r = run("FD504", facts(dataclasses.replace(GOOD_LOC, **change)))
    assert r.status == status and words in r.message


def _chain(*rows):
    return [PathStat(p, uid, mode, role) for p, uid, mode, role in rows]


HOME_CHAIN = [("/home", 0, 0o755, "parent"), ("/", 0, 0o755, "parent")]


@pytest.mark.parametrize("rows, status, words, kb", [
    ([("/home/me/.cache/torchinductor", 1000, 0o700, "target"), ("/home/me/.cache", 1000, 0o755, "parent"),
      ("/home/me", 1000, 0o750, "parent")] + HOME_CHAIN, Status.PASS, "yours", None),
    # a world-writable parent without the sticky bit: the cache can be renamed away and replaced
    ([("/data/cache", 1000, 0o700, "target"), ("/data", 0, 0o777, "parent"), ("/", 0, 0o755, "parent")],
     Status.FAIL, "/data (0o777)", "FDE960"),
    # /tmp (1777, sticky) is a fine parent
    ([("/tmp/torchinductor_me", 1000, 0o755, "target"), ("/tmp", 0, 0o1777, "parent"), ("/", 0, 0o755, "parent")],
     Status.PASS, "yours", None),
    # not created yet: judged by the directory it will be created in
    ([("/shared", 0, 0o777, "ancestor"), ("/", 0, 0o755, "parent")], Status.FAIL, "/shared", "FDE960"),
    ([("/tmp", 0, 0o1777, "ancestor"), ("/", 0, 0o755, "parent")], Status.PASS, "yours", None),
    # a parent another user owns
    ([("/home/bob/cache", 1000, 0o700, "target"), ("/home/bob", 1001, 0o755, "parent")] + HOME_CHAIN,
     Status.FAIL, "owned by uid 1001", "FDE960"),
    # a symbolic link another user owns, on the way
    ([("/tmp/link", 1001, 0o777, "link"), ("/home/me/c", 1000, 0o700, "target")] + HOME_CHAIN,
     Status.FAIL, "symbolic link /tmp/link", "FDE960"),
    # the user's own group-writable cache dir: chmod is the fix
    ([("/home/me/c", 1000, 0o770, "target")] + HOME_CHAIN, Status.FAIL, "group-", "FDE953"),
])
def test_permissions_walk_the_path_up_to_root(rows, status, words, kb):
    r = run("FD504", facts(dataclasses.replace(GOOD_LOC, chain=_chain(*rows))))
    assert r.status == status and words in r.message, r.message
    if kb:
        assert r.fix.kb == kb
    if kb == "FDE960":
        assert r.fix.commands == ("mkdir -p -m 700 $HOME/.cache/torchinductor",
                                  "export TORCHINDUCTOR_CACHE_DIR=$HOME/.cache/torchinductor")


def test_freshness_never_fresh_stale_unreadable():
    assert "never warmed" in run("FD505", facts()).message
    m = CacheManifest(path="/x/flexdoctor-manifest.json", written_at="2026-01-01", fingerprint=FP, configs=["a"])
    assert run("FD505", facts(manifest=m)).status == Status.PASS
    r = run("FD505", facts(manifest=m, torch_version="2.12.0+cu130", triton="3.7.1"))
    assert r.status == Status.WARN and "torch 2.11.0+cu130 -> 2.12.0+cu130" in r.message and "triton" in r.message
    # The driver is not in any cache key: a driver upgrade keeps the cache fresh.
    assert run("FD505", facts(manifest=dataclasses.replace(m, fingerprint={**FP, "driver": "570"}))).status == Status.PASS
    assert run("FD505", facts(manifest=ProbeError("bad json", kind="garbage"))).status == Status.WARN


def test_stale_bytes():
    old = {**FP, "torch": "2.10.0+cu128", "cuda": "12.8"}
    groups = [{"fingerprint": old, "bytes": 2 << 30, "count": 40}, {"fingerprint": FP, "bytes": 10 << 20, "count": 4}]
    m = CacheManifest(path="/x", fingerprint=FP, entry_groups=groups)
    r = run("FD506", facts(manifest=m))
    assert r.status == Status.WARN and "2.0 GiB" in r.message and r.fix.kb == "FDE955"
    m2 = dataclasses.replace(m, entry_groups=groups[1:])
    assert run("FD506", facts(manifest=m2)).status == Status.PASS


def test_enabled():
    assert run("FD507", facts()).status == Status.PASS
    r = run("FD507", facts(disabled=["TORCHINDUCTOR_FORCE_DISABLE_CACHES=1"]))
    assert r.status == Status.WARN and "unset TORCHINDUCTOR_FORCE_DISABLE_CACHES" in r.fix.commands


def test_cache_facts_round_trip_through_json():
    m = CacheManifest(path="/x", fingerprint=FP, configs=["a"], entry_groups=[{"fingerprint": FP, "bytes": 1}])
    f = facts(manifest=m)
    back = Facts.from_dict(json.loads(json.dumps(f.to_dict())))
    assert back.cache == f.cache


def test_same_torch_with_and_without_local_version_tag_is_fresh():
    """Seen on the H100: the worker records torch.__version__ '2.11.0+cu130', the wheel's
    metadata says '2.11.0'. Same release, same git hash: fresh, not stale."""
    from flexdoctor.cache import manifest as mf

    old = {"torch": "2.11.0+cu130", "torch_git": "70d99e99", "triton": "3.6.0", "cuda": "13.0"}
    assert mf.compare(old, dict(old, torch="2.11.0")) == []
    assert mf.compare(old, dict(old, torch="2.12.0"))[0][0] == "torch"
    assert mf.compare(old, dict(old, torch_git="deadbeef"))[0][0] == "torch build"


def test_permissions_skip_a_kernel_cache_aten_will_never_create():
    aten = dataclasses.replace(GOOD_LOC, kind="aten", path="/shared/k", source="PYTORCH_KERNEL_CACHE_PATH",
                               exists=False, chain=_chain(("/shared", 0, 0o777, "ancestor"), ("/", 0, 0o755, "parent")))
    f = facts()
    f = dataclasses.replace(f, cache=dataclasses.replace(f.cache, aten=aten))
    assert run("FD504", f).status == Status.PASS
    inductor = dataclasses.replace(aten, kind="inductor", source="TORCHINDUCTOR_CACHE_DIR")  # torch does create it
    assert run("FD504", facts(inductor)).status == Status.FAIL
