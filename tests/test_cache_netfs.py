"""FD508 cache-network-filesystem: the mount table parser (recorded mountinfo fixtures: bind
mounts, stacked mounts, escaped spaces) and the check over facts, bad and good."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from flexdoctor import checks, runner
from flexdoctor.cache import locations
from flexdoctor.facts import CacheFacts, CacheLocation, Facts
from flexdoctor.model import Status
from flexdoctor.probes import cache as cache_probe

FIX = Path(__file__).parent / "fixtures" / "mountinfo"


def table(name: str) -> list:
    return locations.parse_mountinfo((FIX / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name, path, fs, point", [
    # bind mount of a subdirectory: the type is the underlying filesystem's
    ("local_vm_bind_space.txt", "/tmp/team cache/fxgraph", "ext4", "/tmp/team cache"),
    # a later mount stacked on the same point wins (noexec tmpfs over the bind source)
    ("local_vm_bind_space.txt", "/tmp/bindsrc/inductor/x", "tmpfs", "/tmp/bindsrc/inductor"),
    ("local_vm_bind_space.txt", "/dev/shm/torchinductor_me", "tmpfs", "/dev/shm"),
    ("local_vm_bind_space.txt", "/root/.cache/torchinductor", "ext4", "/"),
    ("k8s_nfs_pvc.txt", "/workspace/.cache/torchinductor", "nfs4", "/workspace/.cache"),
    ("k8s_nfs_pvc.txt", "/workspace/.cacheX", "overlay", "/"),  # a prefix of a name is not a parent
    ("k8s_nfs_pvc.txt", "/workspace/scratch/inductor", "tmpfs", "/workspace/scratch"),
    ("hpc_node.txt", "/home/me/.triton/cache", "nfs", "/home"),
    ("hpc_node.txt", "/home/me/.cache/torchinductor/fxgraph", "xfs", "/home/me/.cache/torchinductor"),
    ("hpc_node.txt", "/scratch/me/inductor", "lustre", "/scratch"),
    ("hpc_node.txt", "/workspace/cache/inductor", "lustre", "/workspace/cache"),
    ("hpc_node.txt", "/gpfs/projects/ml/cache", "gpfs", "/gpfs/projects"),
    ("hpc_node.txt", "/mnt/beegfs/inductor", "beegfs", "/mnt/beegfs"),
    ("hpc_node.txt", "/mnt/cephfs/inductor", "ceph", "/mnt/cephfs"),
    ("hpc_node.txt", "/mnt/team share/inductor", "cifs", "/mnt/team share"),
    ("hpc_node.txt", "/mnt/c/Users/me/cache", "9p", "/mnt/c"),
    ("hpc_node.txt", "/local/me/inductor", "xfs", "/local"),
    ("hpc_node.txt", "/tmp/torchinductor_me", "xfs", "/tmp"),
])
def test_mount_of_recorded_tables(name, path, fs, point):
    mnt, fs_type, _ = locations.mount_of(path, table(name))
    assert (fs_type, mnt) == (fs, point)


def test_mountinfo_fields_unescaped_and_bad_lines_skipped():
    rows = table("hpc_node.txt")
    share = [m for m in rows if m.fs_type == "cifs"][0]
    assert share.source == "//fileserver/team share" and "vers=3.1.1" in share.options
    bind = [m for m in rows if m.mount_point == "/workspace/cache"][0]
    assert bind.root == "/me/cache" and bind.fs_type == "lustre"
    assert [m for m in rows if m.fs_type == "9p"][0].source == "C:\\"
    assert locations.parse_mountinfo("no separator here\n1 2 3\n12 1 0:7 / /x rw - \n") == []
    noexec = [m for m in table("local_vm_bind_space.txt") if m.mount_point == "/tmp/bindsrc/inductor"][0]
    assert "noexec" in noexec.options


def test_proc_mounts_fallback_format():
    rows = locations.parse_mounts("server:/export /mnt/a\\040b nfs4 rw,vers=4.2 0 0\n")
    assert rows[0].mount_point == "/mnt/a b" and rows[0].fs_type == "nfs4"


def test_probe_reads_the_type_through_the_mount_table(monkeypatch, tmp_path):
    """The cache probe asks the mount table about the nearest existing parent of the cache dir."""
    cache = tmp_path / "inductor"
    text = f"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 0:50 / {tmp_path} rw - nfs4 nas:/x rw,vers=4.2\n"
    monkeypatch.setattr(locations, "mounts", lambda: locations.parse_mountinfo(text))
    loc = cache_probe.location(locations.Location("inductor", str(cache), "TORCHINDUCTOR_CACHE_DIR"), 1e18)
    assert (loc.fs_type, loc.mount_point, loc.exists) == ("nfs4", str(tmp_path), False)


# --------------------------------------------------------------------------- the check

LOCAL = CacheLocation(kind="inductor", path="/home/me/.cache/torchinductor", source="TORCHINDUCTOR_CACHE_DIR",
                      exists=True, fs_type="ext4", mount_point="/")
TRITON_DEFAULT = CacheLocation(kind="triton", path="/home/me/.triton/cache", source="default", exists=False,
                               fs_type="ext4", mount_point="/")


def run(inductor=LOCAL, triton=TRITON_DEFAULT):
    spec = {s.id: s for s in checks.builtin()}["FD508"]
    return runner.run_one(spec, Facts(cache=CacheFacts(uid=1000, inductor=inductor, triton=triton)))


@pytest.mark.parametrize("fs", ["nfs", "nfs4", "lustre", "gpfs", "cifs", "smb3", "beegfs", "ceph", "9p",
                                "fuse.sshfs", "fuse.glusterfs", "wekafs"])
def test_network_inductor_cache_warns_with_the_node_local_recipe(fs):
    loc = dataclasses.replace(LOCAL, path="/scratch/me/cache/torchinductor", fs_type=fs, mount_point="/scratch")
    r = run(loc)
    assert r.status == Status.WARN and fs in r.message and "/scratch" in r.message
    cmds = r.fix.commands
    assert r.fix.kb == "FDE957"
    assert cmds[0] == ('flexdoctor warm-cache --preset llm-causal --cache-dir "/tmp/torchinductor_$USER" '
                       "--export /scratch/me/cache/flexdoctor-cache.zip")
    assert cmds[1] == ('flexdoctor warm-cache --cache-dir "/tmp/torchinductor_$USER" '
                       "--import /scratch/me/cache/flexdoctor-cache.zip")
    assert cmds[2] == 'export TORCHINDUCTOR_CACHE_DIR="/tmp/torchinductor_$USER"'
    assert "unset TRITON_CACHE_DIR" not in cmds


def test_bundle_path_with_spaces_is_quoted():
    loc = dataclasses.replace(LOCAL, path="/mnt/team share/inductor", fs_type="cifs", mount_point="/mnt/team share")
    assert "--import '/mnt/team share/flexdoctor-cache.zip'" in run(loc).fix.commands[1]


def test_triton_cache_dir_on_nfs_warns_and_unsets_it():
    tri = dataclasses.replace(TRITON_DEFAULT, path="/home/me/triton", source="TRITON_CACHE_DIR", fs_type="nfs4",
                              mount_point="/home")
    r = run(triton=tri)
    assert r.status == Status.WARN and "triton" in r.message
    assert r.fix.commands[-1] == "unset TRITON_CACHE_DIR"


@pytest.mark.parametrize("fs", ["ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs"])
def test_local_filesystems_pass(fs):
    assert run(dataclasses.replace(LOCAL, fs_type=fs)).status == Status.PASS


def test_tritons_own_default_on_nfs_home_is_not_flagged():
    """Under Inductor, Triton writes into <inductor cache>/triton unless TRITON_CACHE_DIR is set."""
    tri = dataclasses.replace(TRITON_DEFAULT, fs_type="nfs", mount_point="/home")
    assert run(triton=tri).status == Status.PASS


def test_unknown_filesystem_skips():
    assert run(dataclasses.replace(LOCAL, fs_type=None, mount_point=None)).status == Status.SKIP
