"""Compile cache checks (FD5xx): where the Inductor cache is, whether it is usable and safe,
and whether flexdoctor's warm-cache manifest still matches this environment. Pure over Facts."""

from __future__ import annotations

import dataclasses
import os
import shlex
from typing import Optional

from .. import knowledge as kb
from .. import safety
from ..cache import envflags
from ..cache import manifest as mf
from ..cache.fingerprint import Fingerprint
from ..facts import Facts, PathStat, ProbeError, ok, require
from ..model import Finding
from ..text import human_bytes as _size
from ..text import t
from . import _rewarm
from . import _util as u
from .base import check, fail, note, passed, skip, warn

GIB = 1 << 30
MIB = 1 << 20
LOW_SPACE = 2 * GIB  # a model's compiled graphs and kernels take hundreds of MB
NO_SPACE = 200 * MIB
DEAD_WEIGHT = 512 * MIB


def _cache(facts: Facts):
    return require(facts.cache, "cache")


# Where the fixes point TORCHINDUCTOR_CACHE_DIR: persistent, per user, outside /tmp.
PERSISTENT_DIR = "$HOME/.cache/torchinductor"


def _warm_fix(ref: str, facts: Facts, **kw):
    """A fix whose warm-up step fits this machine: the GPU preset where a GPU can compile, the same
    preset on the CPU where CPU Inductor can compile flex (torch 2.6+, Linux, AVX2), and no warm-up
    step where nothing can compile flex (warming would only fail)."""
    fix = kb.fix(ref, warm=_warm_command(facts) or "", **kw)
    return dataclasses.replace(fix, commands=tuple(c for c in fix.commands if c))


def _warm_command(facts: Facts) -> Optional[str]:
    gpu = u.has_nvidia_gpu(facts) or (ok(facts.torch) and bool(facts.torch.hip))
    if gpu:
        return "flexdoctor warm-cache --preset llm-causal"
    tv = u.base_version(facts.torch.version) if ok(facts.torch) else None
    linux = u.is_linux(facts)
    avx2 = facts.host.cpu_avx2 if ok(facts.host) else None
    if tv is not None and tv >= u.version("2.6") and linux and avx2 is not False:
        return "flexdoctor warm-cache --preset llm-causal --device cpu"
    return None


def _rewarm_fix(facts: Facts, manifest):
    """FD505's fix: warm again exactly the configs the manifest recorded (one warm-cache command
    each), else the preset that fits this machine. A bare `flexdoctor warm-cache` warms nothing."""
    fix = _warm_fix("cache-stale", facts)
    again = _rewarm.commands(manifest.configs) if _warm_command(facts) is not None else None
    if again is None:
        return fix
    rest = tuple(c for c in fix.commands if not c.startswith("flexdoctor warm-cache"))
    return dataclasses.replace(fix, commands=again + rest)


def current_fingerprint(facts: Facts) -> dict:
    """What this machine's cache keys depend on, as far as the facts tell (None: unknown)."""
    return Fingerprint.from_facts(facts).to_dict()


@check("FD501", "cache-location", area="cache")
def cache_location(facts: Facts) -> Finding:
    """What it checks: where the Inductor compile cache is (TORCHINDUCTOR_CACHE_DIR, else
    tempfile.gettempdir()/torchinductor_<user>, exactly as torch computes it) and whether it
    is on a temporary filesystem: /tmp, /var/tmp, /dev/shm or a tmpfs mount.

    Why it matters: compiled flex_attention costs 10-30 s before the first step whenever the
    cache is cold. The default cache lives in /tmp, which is often wiped on reboot, is private
    to each container, and is a tmpfs (RAM) on many systems: every new job compiles again.

    A note, not a warning: the cache works there (it is torch's own default), and nothing breaks;
    only the time to the first step grows after a reboot or in a new container. Make it a
    warning with `[tool.flexdoctor.severity] cache-location = "warn"`.

    How to fix: point TORCHINDUCTOR_CACHE_DIR at a persistent directory you own (in the job's
    environment, not only your shell) and pre-build it with `flexdoctor warm-cache`.
    """
    c = _cache(facts)
    loc = c.inductor
    if loc.in_temp or loc.fs_type == "tmpfs":
        where = t("cache-location.where_tmpfs") if loc.fs_type == "tmpfs" else t("cache-location.where_temp")
        return note("cache-location.temporary", _warm_fix("cache-in-tmp", facts, dir=PERSISTENT_DIR),
                    path=loc.path, where=where, source=loc.source)
    return passed("cache-location.pass", path=loc.path, source=loc.source, fs=loc.fs_type or "?")


@check("FD502", "cache-writable", area="cache")
def cache_writable(facts: Facts) -> Finding:
    """What it checks: that the Inductor cache dir (or the parent torch would create it in) is
    writable by this user, and that its filesystem is not mounted noexec.

    Why it matters: Inductor writes compiled graphs and kernels there and then imports
    generated Python modules and loads shared objects from it. A read-only dir fails the first
    compile with "Permission denied"; a noexec mount fails loading the compiled .so files
    ("failed to map segment from shared object", pytorch#91005).

    How to fix: set TORCHINDUCTOR_CACHE_DIR to a writable directory on a filesystem without
    noexec (e.g. under your home).
    """
    c = _cache(facts)
    loc = c.inductor
    fix = kb.fix("cache-not-usable", dir=PERSISTENT_DIR)
    if loc.writable is False:
        return fail("cache-writable.read_only", fix, path=loc.path)
    if loc.noexec:
        return fail("cache-writable.noexec", fix, path=loc.path, mount=loc.mount_point)
    return passed("cache-writable.pass", path=loc.path)


@check("FD503", "cache-disk-space", area="cache")
def cache_disk_space(facts: Facts) -> Finding:
    """What it checks: free space on the filesystem holding the Inductor cache.

    Why it matters: one flex_attention config takes about 5 MB of cache, a whole compiled model
    hundreds of MB. A full disk makes compiles fail with "No space left on device" or silently
    skip caching, so every run pays the full compile time.

    How to fix: free space there (`flexdoctor clear-cache` removes entries of old torch/Triton
    versions too) or move the cache with TORCHINDUCTOR_CACHE_DIR.
    """
    loc = _cache(facts).inductor
    if loc.free_bytes is None:
        return skip("cache-disk-space.unknown", path=loc.path)
    kw = dict(path=loc.path, free=_size(loc.free_bytes))
    if loc.free_bytes < NO_SPACE:
        return fail("cache-disk-space.full", kb.fix("cache-disk-full"), **kw)
    if loc.free_bytes < LOW_SPACE:
        return warn("cache-disk-space.low", kb.fix("cache-disk-full"), **kw)
    return passed("cache-disk-space.pass", **kw)


# Where a cache of each kind can move when its place is unsafe (the variable each writer reads).
SAFE_HOME = {"inductor": ("TORCHINDUCTOR_CACHE_DIR", "$HOME/.cache/torchinductor"),
             "triton": ("TRITON_CACHE_DIR", "$HOME/.triton/cache"),
             "aten": ("PYTORCH_KERNEL_CACHE_PATH", "$HOME/.cache/torch/kernels")}


def location_verdict(loc, uid: Optional[int]) -> Optional[safety.Verdict]:
    """safety.judge over the rows the probe recorded; facts recorded without them are judged
    by the cache dir's own owner and mode. None: nothing to judge."""
    if loc is None or not loc.path:
        return None
    if loc.kind == "aten" and loc.source == "PYTORCH_KERNEL_CACHE_PATH" and not loc.exists:
        return None  # jit_utils.cpp get_cache_dir never creates the directory named there: no cache
    if loc.chain is not None:
        return safety.judge(loc.chain, uid)
    if loc.exists and loc.owner_uid is not None and loc.mode is not None:
        return safety.judge([PathStat(loc.path, loc.owner_uid, loc.mode, role="target")], uid)
    return None


# Folders the machine shares: their mode is never flexdoctor's to change. As root every one of
# them is "yours", and `chmod go-w /tmp` (or /dev/shm, where NCCL keeps its shared memory) breaks
# every other user's programs (issue 21). The fix for a cache there is a private cache dir.
SHARED_DIRS = frozenset({"/tmp", "/var/tmp", "/dev/shm", "/run/shm", "/home", "/Users", "/private/tmp",
                         "/private/var/tmp", "/Volumes", "/mnt", "/media", "/srv", "/opt", "/scratch"})
SYSTEM_TREES = ("/dev/", "/proc/", "/sys/", "/run/", "/usr/", "/etc/", "/var/", "/bin/", "/sbin/", "/lib/",
                "/lib64/", "/boot/", "/System/", "/Library/", "/private/")
HOMES = ("/home", "/Users")


def may_chmod(path: str, mode: Optional[int]) -> bool:
    """Whether advising ``chmod`` on ``path`` is safe: a folder of the user's own, not one the
    machine shares (/, any folder right under it, /tmp, /dev/shm, a system tree, a home dir
    itself, anything with the sticky bit: the mark of a folder meant for everyone)."""
    p = os.path.normpath(path) if path else "/"
    if p in SHARED_DIRS or os.path.dirname(p) in ("/", *HOMES) or p == "/":
        return False
    if p.startswith(SYSTEM_TREES):
        return False
    return not (mode is not None and mode & 0o1000)


def unsafe_fix(kind: str, verdict: safety.Verdict, uid: Optional[int]):
    """chmod when the user owns the one offending dir (the cache itself) and it is not a folder
    the machine shares (:func:`may_chmod`); else a private cache dir of the user's own."""
    if verdict.reason == "writable-by-others" and verdict.uid == uid and may_chmod(verdict.path, verdict.mode):
        return kb.fix("cache-unsafe-permissions", path=shlex.quote(verdict.path))
    var, home = SAFE_HOME.get(kind, SAFE_HOME["inductor"])
    return kb.fix("cache-unsafe-path", var=var, dir=home)


def _key(v: safety.Verdict) -> str:
    name = "shared_writable" if v.reason == "writable-by-others" else v.reason.replace("-", "_")
    return f"cache-permissions.{name}"


def unsafe_message(kind: str, loc_path: str, v: safety.Verdict, uid: Optional[int]) -> str:
    return t(_key(v), kind=kind, path=loc_path, offender=v.path, owner=v.uid, uid=uid, mode=v.mode_text)


@check("FD504", "cache-permissions", area="cache")
def cache_permissions(facts: Facts) -> Finding:
    """What it checks: that each compile cache (Inductor, Triton, ATen kernels) is safe to
    compile into: the cache dir is owned by you (or root) and not group- or world-writable, and
    every directory above it up to / is owned by you or root and not writable by others unless
    it has the sticky bit (as /tmp has); symbolic links on the way are owned by you or root.
    A cache that does not exist yet is judged by the directory it will be created in. This is
    the walk OpenSSH's StrictModes makes for authorized_keys.

    Why it matters: Inductor unpickles cache entries and imports generated code from its cache
    dir; Triton and ATen load compiled kernels from theirs. A dir owned by someone else, one
    others can write to, or one others can rename away and replace lets them run code in your
    training job. The default dir /tmp/torchinductor_<user> is predictable, so on a shared
    machine another user can create it first.

    How to fix: chmod go-w a cache dir you own and created (never a folder the machine shares:
    /tmp, /dev/shm, /, a home dir, anything with the sticky bit); otherwise keep the cache under
    a directory only you can write (mkdir -m 700, then TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR
    / PYTORCH_KERNEL_CACHE_PATH). warm-cache refuses an unsafe cache with the same fix.
    """
    c = _cache(facts)
    problems = []
    for loc in (c.inductor, c.triton, c.aten):
        v = location_verdict(loc, c.uid)
        if v is not None and not v.safe:
            problems.append((loc, v))
    if not problems:
        return passed("cache-permissions.pass")
    loc, v = problems[0]
    details = [unsafe_message(l.kind, l.path, x, c.uid) for l, x in problems[1:]]
    return fail(_key(v), unsafe_fix(loc.kind, v, c.uid),
                details=details, kind=loc.kind, path=loc.path, offender=v.path, owner=v.uid, uid=c.uid,
                mode=v.mode_text)


@check("FD505", "cache-freshness", area="cache")
def cache_freshness(facts: Facts) -> Finding:
    """What it checks: flexdoctor's warm-cache manifest in the Inductor cache dir against this
    environment: never warmed, fresh, or stale, naming what changed (torch version or build,
    Triton, CUDA, GPU).

    Why it matters: Inductor's and Triton's cache keys include the torch version and source
    hash, the Triton version, the CUDA version and the GPU name. After any of them changes the
    warmed entries are never hit again: the first step compiles from scratch (10-30 s per flex
    configuration) even though the cache looks full.

    How to fix: run `flexdoctor warm-cache` again after upgrading torch, Triton or CUDA, or on
    the new GPU (in the image build, or as a CI step).
    """
    c = _cache(facts)
    m = c.manifest
    if isinstance(m, ProbeError):
        return warn("cache-freshness.unreadable", _warm_fix("cache-stale", facts), error=u.probe_error_text(m))
    if m is None:
        warm = _warm_command(facts)
        if warm is None:  # nothing can compile flex here: no warm-up to offer
            return passed("cache-freshness.never_nowarm", path=c.inductor.path)
        return passed("cache-freshness.never", path=c.inductor.path, warm=warm)
    changed = mf.compare(m.fingerprint, current_fingerprint(facts))
    if changed:
        what = "; ".join(f"{label} {old or '-'} -> {new}" for label, old, new in changed)
        return warn("cache-freshness.stale", _rewarm_fix(facts, m), what=what, when=m.written_at or "?")
    return passed("cache-freshness.fresh", count=len(m.configs), when=m.written_at or "?",
                  details=list(m.configs[:12]))


@check("FD506", "cache-stale-bytes", area="cache")
def cache_stale_bytes(facts: Facts) -> Finding:
    """What it checks: how many bytes of the Inductor cache belong to environments other than
    this one (other torch, Triton, CUDA or GPU), from the entries flexdoctor's manifests
    recorded, beside the total size of the cache.

    Why it matters: entries of another version are never wrong, only never used again: dead
    weight that grows with every upgrade and can fill a small disk or a tmpfs.

    How to fix: `flexdoctor clear-cache --inductor` (then `flexdoctor warm-cache` to rebuild
    what you need).
    """
    c = _cache(facts)
    m = c.manifest
    total = c.inductor.size_bytes
    if not ok(m) or not m.entry_groups:
        if not c.inductor.exists:
            return skip("cache-stale-bytes.no_cache", path=c.inductor.path)
        return passed("cache-stale-bytes.unknown", total=_size(total))
    current = current_fingerprint(facts)
    stale = [g for g in m.entry_groups if mf.compare(g.get("fingerprint") or {}, current)]
    dead = sum(int(g.get("bytes") or 0) for g in stale)
    if dead >= DEAD_WEIGHT:
        return warn("cache-stale-bytes.dead_weight", _warm_fix("cache-dead-weight", facts), dead=_size(dead),
                    total=_size(total), groups=len(stale))
    return passed("cache-stale-bytes.pass", dead=_size(dead), total=_size(total))


@check("FD507", "cache-enabled", area="cache")
def cache_enabled(facts: Facts) -> Finding:
    """What it checks: environment switches that turn compile caching off, parsed exactly as the
    installed torch and Triton parse them: TORCHINDUCTOR_FORCE_DISABLE_CACHES,
    TORCH_COMPILE_FORCE_DISABLE_CACHES (torch 2.9+), TORCHINDUCTOR_FX_GRAPH_CACHE,
    TORCHINDUCTOR_FX_GRAPH_CACHE_DEFAULT (2.10+), TORCHINDUCTOR_AUTOGRAD_CACHE, TRITON_ALWAYS_COMPILE.

    Why it matters: with any of them in effect every process compiles flex_attention from scratch,
    and a warmed cache is ignored. They are often left over from debugging. The parsing differs by
    release: torch <= 2.7 forces the caches off only for "1"; from 2.8 any value but "0" or empty
    does, so TORCHINDUCTOR_FORCE_DISABLE_CACHES=false turns caching OFF; from 2.7
    TORCHINDUCTOR_FX_GRAPH_CACHE=false leaves the FX graph cache ON (only "0" turns it off);
    triton <= 3.3 honours TRITON_ALWAYS_COMPILE=1 only, 3.4+ also true/yes/on/y. (Table and
    sources: flexdoctor/cache/envflags.py.)

    How to fix: unset them in the training job's environment.
    """
    c = _cache(facts)
    if not ok(facts.host):  # no environment recorded: the probe's judgement with the newest rules
        if c.disabled_by:
            names = [v.split("=", 1)[0] for v in c.disabled_by]
            return warn("cache-enabled.disabled", kb.fix("cache-disabled", unset=_unset(facts, names)),
                        what=", ".join(c.disabled_by))
        return passed("cache-enabled.pass")
    tv = facts.torch.version if ok(facts.torch) else None
    pk = facts.python.packages if ok(facts.python) else {}
    rt = facts.torch_runtime
    trv = (rt.triton_version if ok(rt) else None) or next(
        (pk[n] for n in ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-windows") if n in pk), None)
    found = envflags.switches(facts.host.env, tv, trv)
    off = [s for s in found if s.off]
    notes = [_switch_note(s) for s in found if s.surprising or (not s.read)]
    if off:
        return warn("cache-enabled.disabled", kb.fix("cache-disabled", unset=_unset(facts, [s.name for s in off])),
                    what=", ".join(f"{s.name}={s.value}" for s in off),
                    details=[_switch_note(s) for s in off]
                    + [_switch_note(s) for s in found if not s.off and (s.surprising or not s.read)])
    return passed("cache-enabled.pass", details=notes)


def _unset(facts: Facts, names: list) -> str:
    """Unsetting variables in the user's shell: PowerShell on Windows, POSIX elsewhere."""
    if ok(facts.python) and facts.python.platform.startswith("win"):
        return "Remove-Item " + ", ".join(f"Env:{n}" for n in names)
    return "unset " + " ".join(names)


def _switch_note(s) -> str:
    return t("cache-enabled.note", name=s.name, value=s.value,
             rule=t(f"cache-enabled.{s.rule}", other=envflags.FORCE, fx=envflags.FX,
                    release=s.release or t("cache-enabled.newest_rules", package=s.package)))


# Filesystem types (as /proc/self/mountinfo names them) whose files other machines can write at
# the same time: network, distributed and cluster filesystems, and host-shared ones.
NETWORK_FS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "fuse.ceph-fuse",
    "glusterfs", "fuse.glusterfs", "9p", "afs", "openafs", "gfs2", "ocfs2", "wekafs", "panfs", "pvfs2",
    "orangefs", "quobyte", "fuse.quobyte", "fuse.sshfs", "fuse.s3fs", "fuse.gcsfuse", "fuse.juicefs",
    "fuse.rclone", "fuse.blobfuse", "fuse.blobfuse2", "fuse.mountpoint-s3", "fuse.lizardfs",
    "fuse.mfs", "fuse.moosefs", "fuse.cvmfs2", "davfs", "fuse.davfs", "vboxsf",
})
NODE_LOCAL_DIR = '"/tmp/torchinductor_$USER"'


def _on_network(loc: Optional[object]) -> bool:
    fs = getattr(loc, "fs_type", None)
    return isinstance(fs, str) and fs.lower() in NETWORK_FS


@check("FD508", "cache-network-filesystem", area="cache")
def cache_network_filesystem(facts: Facts) -> Finding:
    """What it checks: whether the Inductor cache dir (and TRITON_CACHE_DIR, when it is set) is
    on a network or shared filesystem: NFS, Lustre, GPFS (Spectrum Scale), CIFS/SMB, BeeGFS,
    CephFS, GlusterFS, 9p, WekaFS, FUSE mounts of object stores and the like, read from the
    filesystem type of the mount that holds it (/proc/self/mountinfo; bind mounts included).

    Why it matters: every rank of a job compiles into the same cache at the same time. Inductor
    and Triton publish entries with rename and file locks that are only safe on one machine's
    local filesystem; on a network filesystem another node may see a half-published entry or
    none. Triton then crashes with "OSError: [Errno 16] Device or resource busy" from its cache
    put or a FileNotFoundError reading back files it just wrote (triton-lang/triton#11512), ranks
    die on "Stale file handle" while loading a kernel launcher (seen in multi-node jobs with
    ~/.triton on NFS), and two ranks compiling one kernel can each publish part of it, so a rank
    loads one compile's kernel binary with the other's metadata (pytorch/pytorch PR 92664, seen on
    one host; see also pytorch/pytorch#173679): symptoms range from crashes and hangs to silently
    wrong results.

    How to fix: give every node its own local cache dir, filled from one bundle instead of
    compiled by every rank: `flexdoctor warm-cache --export FILE` once (the bundle can live on
    the shared filesystem: it is one file, written once and only read after), then on each node
    before training `flexdoctor warm-cache --cache-dir LOCAL --import FILE`, and set
    TORCHINDUCTOR_CACHE_DIR=LOCAL (and unset TRITON_CACHE_DIR) in the training job.
    """
    c = _cache(facts)
    shared = [loc for loc in (c.inductor, c.triton) if loc is not None and _on_network(loc)
              and (loc.kind == "inductor" or loc.source == "TRITON_CACHE_DIR")]
    if not shared:
        fs = c.inductor.fs_type
        if fs is None:
            return skip("cache-network-filesystem.unknown", path=c.inductor.path)
        return passed("cache-network-filesystem.pass", path=c.inductor.path, fs=fs)
    loc = shared[0]
    # The bundle goes beside the shared cache: every node can read it, and it is written once.
    bundle = shlex.quote(os.path.join(os.path.dirname(loc.path.rstrip("/")) or "/", "flexdoctor-cache.zip"))
    fix = kb.fix("cache-on-network-fs", local=NODE_LOCAL_DIR, bundle=bundle)
    if any(l.kind == "triton" for l in shared) or (c.triton is not None and c.triton.source == "TRITON_CACHE_DIR"):
        fix = dataclasses.replace(fix, commands=fix.commands + ("unset TRITON_CACHE_DIR",))
    details = [f"{l.kind}: {l.path} on {l.fs_type} (mount {l.mount_point})" for l in shared]
    return warn("cache-network-filesystem.shared", fix, details=details, kind=loc.kind, path=loc.path,
                fs=loc.fs_type, mount=loc.mount_point or "?")
