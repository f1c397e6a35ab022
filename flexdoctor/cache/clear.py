"""``flexdoctor clear-cache``: delete what torch, Inductor, Triton and ATen wrote, and nothing else.

``plan`` surveys each chosen cache with the rules of ``identify`` (name AND content, from the
writers' sources) and returns a typed :class:`Plan`; ``execute`` deletes exactly the files and
directories of the plan's units and returns an :class:`Outcome`. Words live in the renderer
(render/clear_view.py, locale/en.clear.toml).

Safety rules, each one tested (tests/test_cache_clear.py, tests/test_fault_matrix_clear.py):
- only identified entries are deleted; hidden files, unknown names, symbolic links, sockets and
  a folder holding anything unidentified are kept and listed;
- never ``/``, the home directory or a directory holding it, a system directory, the temporary
  directory itself; never the current directory because a variable is set but empty;
- the cache dir is resolved once and checked again by device and inode before deleting;
  deletion works relative to directory descriptors opened without following symlinks, and
  removes only the files the plan lists (a file that appeared since is left, with its folder);
- each file is checked again just before its unlink (fstatat without following links): the
  device, inode, size and mtime the plan listed, else it is left and reported as changed (a
  file replaced or rewritten since the listing is not the file that was identified);
- an exclusive ``flock`` on the cache dir itself (no lock file is ever created): a running
  ``warm-cache`` holds it shared, and clear-cache refuses instead of deleting under it; the
  refusal names the holder (a shared lock is a warm-cache's, an exclusive one another
  clear-cache's; the pid and command line from /proc/locks where Linux shows them);
- nothing is created anywhere: a refused or absent directory is left exactly as it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Iterator, Optional

from . import identify, locations
from .survey import Survey, Unit, identity, walk

KINDS = ("inductor", "triton", "aten", "manifest")
# Set but empty, these make the writer use the job's current directory (see locations.py).
CWD_VARS = {"TORCHINDUCTOR_CACHE_DIR", "TRITON_HOME"}
_SYSTEM = ("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
           "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var", "/var/tmp", "/var/cache", "/mnt", "/media")


@dataclass(frozen=True)
class Holder:
    """Who holds the cache dir's lock: ``kind`` warm-cache (a shared lock) or clear-cache (an
    exclusive one); ``pid`` and ``command`` from /proc/locks and /proc/<pid>/cmdline when Linux
    shows them (None elsewhere, or for a process in another pid namespace)."""

    kind: str
    pid: Optional[int] = None
    command: Optional[str] = None


class Refused(Exception):
    """clear-cache will not delete now: ``holder`` (a warm-cache or another clear-cache) holds
    the cache."""

    def __init__(self, holder: Holder):
        super().__init__(holder.kind)
        self.holder = holder


class _Changed(OSError):
    """A planned entry is no longer what the plan saw (a link or a new directory in its place)."""


@dataclass
class CachePlan:
    """One cache: where it is, and what clear-cache would delete and keep there.

    ``state``: ready (units to delete), empty (nothing of the writer's there), absent (no such
    directory), off (the writer keeps no cache), refused (see ``why``), with-inductor (the
    manifest goes with the Inductor cache).
    """

    kind: str
    path: str
    source: str
    state: str = "absent"
    why: Optional[str] = None  # a reason word for refused/off (render/clear_view words it)
    why_args: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)  # (word, args) shown under the cache
    root: Optional[str] = None  # the resolved directory the survey walked
    root_id: Optional[tuple] = None  # its (st_dev, st_ino), checked again before deleting
    survey: Survey = field(default_factory=Survey)

    @property
    def units(self) -> list:
        return self.survey.units

    @property
    def kept(self) -> list:
        return self.survey.kept

    @property
    def bytes(self) -> int:
        return self.survey.bytes


@dataclass
class Plan:
    caches: list
    lock_root: Optional[str] = None  # the Inductor cache dir a warm-cache would hold

    @property
    def count(self) -> int:
        """How many units (files or folders) the plan deletes, over all caches."""
        return sum(len(c.units) for c in self.caches)

    @property
    def bytes(self) -> int:
        return sum(c.bytes for c in self.caches)

    @property
    def refused(self) -> list:
        return [c for c in self.caches if c.state == "refused"]


@dataclass
class CacheOutcome:
    kind: str
    freed: int = 0
    deleted: int = 0  # units removed completely
    errors: list = field(default_factory=list)  # (rel, word, detail): word "os" (detail: strerror) or "changed"
    left: list = field(default_factory=list)  # rel of directories that gained entries since the plan


@dataclass
class Outcome:
    plan: Plan
    caches: list = field(default_factory=list)

    @property
    def freed(self) -> int:
        return sum(c.freed for c in self.caches)

    @property
    def deleted(self) -> int:
        return sum(c.deleted for c in self.caches)

    @property
    def errors(self) -> list:
        return [e for c in self.caches for e in c.errors]


# --------------------------------------------------------------------------- planning

def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def dangerous(path: str) -> Optional[str]:
    """Why ``path`` must never be cleared (a reason word), or None."""
    real = _real(path)
    home = _real("~")
    if real == "/" or real in {_real(p) for p in _SYSTEM}:
        return "system"
    if real == home:
        return "home"
    if home.startswith(real.rstrip("/") + "/"):
        return "holds-home"
    if real in {_real(tempfile.gettempdir()), _real(os.path.join(home, ".cache"))}:
        return "shared"
    if real.count("/") < 2:
        return "top-level"
    return None


def _refuse(cp: CachePlan, why: str, **args: object) -> CachePlan:
    cp.state, cp.why, cp.why_args = "refused", why, args
    return cp


def _open_root(cp: CachePlan) -> Optional[str]:
    """Resolve and vet the cache dir; sets a refusal on ``cp`` and returns None when unusable."""
    why = dangerous(cp.path)
    if why:
        _refuse(cp, why, path=cp.path)
        return None
    if not os.path.lexists(cp.path):
        return None  # absent: nothing to do, nothing created
    real = _real(cp.path)
    why = dangerous(real)
    if why:
        _refuse(cp, why, path=real)
        return None
    try:
        st = os.stat(real)
    except OSError as exc:
        _refuse(cp, "unreadable", path=real, error=exc.strerror or str(exc))
        return None
    if not stat.S_ISDIR(st.st_mode):
        _refuse(cp, "not-a-directory", path=real)
        return None
    cp.root, cp.root_id = real, (st.st_dev, st.st_ino)
    return real


def plan_one(kind: str, loc: locations.Location) -> CachePlan:
    """Survey one cache of ``kind`` at ``loc``."""
    cp = CachePlan(kind, loc.path, loc.source)
    if loc.blank in CWD_VARS:
        return _refuse(cp, "blank-cwd", var=loc.blank, path=loc.path)
    if not loc.path:
        cp.state, cp.why = "off", "blank-off"
        return cp
    if loc.blank:
        cp.notes.append(("blank", {"var": loc.blank}))
    root = _open_root(cp)
    if root is None:
        return cp
    cp.survey = walk(root, identify.ROOT_RULES[kind])
    cp.state = "ready" if cp.units else "empty"
    if kind != "manifest" and not cp.units and cp.kept and loc.source != "default":
        cp.notes.append(("nothing-of-torch", {"var": loc.source}))
    return cp


def _drop_overlaps(caches: list) -> None:
    """A cache dir inside another one chosen too (TRITON_CACHE_DIR under the Inductor dir): its
    entries are deleted once, by the outer cache, and counted once."""
    claimed: list = []
    for cp in caches:
        if cp.root is None:
            continue
        inside = [c for c in claimed if cp.root == c or cp.root.startswith(c.rstrip("/") + "/")]
        if inside:
            cp.survey, cp.state = Survey(), "inside"
            cp.why_args = {"outer": inside[0]}
            continue
        claimed.append(cp.root)


def _manifest_row(ind: locations.Location, inductor: Optional[CachePlan]) -> CachePlan:
    """The manifest's row when the Inductor cache is cleared too: it goes with it only when the
    Inductor plan really lists it; otherwise there is none to remove."""
    path = locations.manifest_path(ind.path)
    listed = inductor is not None and any(u.rel == locations.MANIFEST_NAME for u in inductor.units)
    return CachePlan("manifest", path, ind.source, "with-inductor" if listed else "no-manifest")


def plan(kinds: list, env: Optional[dict] = None, cache_dir: Optional[str] = None) -> Plan:
    """What each chosen cache would lose. Refusals are recorded on the cache, not raised.
    ``cache_dir``: the Inductor cache dir named on the command line (labelled --cache-dir)."""
    env = dict(os.environ if env is None else env)
    if cache_dir is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    ind = locations.inductor(env)
    if cache_dir is not None:
        ind = dataclasses.replace(ind, source="--cache-dir")
    locs = {"inductor": ind, "triton": locations.triton(env), "aten": locations.aten(env), "manifest": ind}
    caches = []
    for kind in [k for k in KINDS if k in kinds]:
        if kind == "manifest" and "inductor" in kinds:
            caches.append(_manifest_row(ind, next((c for c in caches if c.kind == "inductor"), None)))
            continue
        cp = plan_one(kind, locs[kind])
        if kind == "triton" and cp.source == "default" and "inductor" in kinds:
            cp.notes.append(("triton-under-inductor", {}))
        caches.append(cp)
    _drop_overlaps(caches)
    return Plan(caches, lock_root=ind.path if not ind.blank else None)


# --------------------------------------------------------------------------- locking

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


@contextlib.contextmanager
def _flock(path: str, exclusive: bool, wait: bool) -> Iterator[bool]:
    """flock on the directory itself: no lock file is ever created. Yields whether it is held
    (False where the filesystem or platform cannot lock: the safety rules still apply)."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks
        yield False
        return
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        yield False
        return
    try:
        mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
        try:
            fcntl.flock(fd, mode)
        except BlockingIOError:
            raise Refused(lock_holder(path)) from None
        except OSError:  # e.g. ENOLCK on a filesystem without locks
            yield False
            return
        yield True
    finally:
        os.close(fd)


def lock_holder(path: str) -> Holder:
    """Who holds ``path`` locked, asked without creating anything: a shared flock can still be
    taken next to warm-caches' shared locks, not next to a clear-cache's exclusive one."""
    import fcntl

    kind = "clear-cache"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return Holder("warm-cache")
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            kind = "warm-cache"  # (closing fd drops this probe's own shared lock)
        except OSError:
            pass
        pid, command = _proc_holder(os.fstat(fd), "WRITE" if kind == "clear-cache" else "READ")
    finally:
        os.close(fd)
    return Holder(kind, pid, command)


def _proc_holder(st: os.stat_result, kind: str) -> tuple:
    """(pid, command line) of a process holding a FLOCK of ``kind`` (READ/WRITE) on the file
    ``st`` describes, from /proc/locks (Linux); (None, None) when it cannot be told."""
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None, None
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue  # a waiter, or a POSIX/OFD lock
        if fields[3] == kind and fields[5] == dev and fields[4].isdigit() and int(fields[4]) not in (0, os.getpid()):
            pid = int(fields[4])
            return pid, _cmdline(pid)
    return None, None


def _cmdline(pid: int) -> Optional[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(4096)
    except OSError:
        return None
    words = [w.decode("utf-8", "backslashreplace") for w in raw.split(b"\0") if w]
    return " ".join(words)[:200] or None


@contextlib.contextmanager
def _legacy_lock(root: str) -> Iterator[None]:
    """flexdoctor releases before this one locked <root>/.flexdoctor.lock: respect a running
    one, without ever creating the file."""
    try:
        import fcntl

        fd = os.open(os.path.join(root, locations.LOCK_NAME), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except (ImportError, OSError):
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Refused(lock_holder(os.path.join(root, locations.LOCK_NAME))) from None
        except OSError:
            pass
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def exclusive(root: str) -> Iterator[None]:
    """Held by clear-cache while it deletes; raises Refused when a warm-cache holds ``root``.
    A directory that does not exist is not created (nothing to protect)."""
    if not os.path.isdir(root):
        yield
        return
    with _flock(root, exclusive=True, wait=False), _legacy_lock(root):
        yield


@contextlib.contextmanager
def shared(root: str) -> Iterator[None]:
    """Held by warm-cache for its whole run (several warm-caches may share it). The caller
    creates ``root`` first (warm-cache makes a missing --cache-dir with mode 0700)."""
    with _flock(root, exclusive=False, wait=True):
        yield


# --------------------------------------------------------------------------- deleting

_HAS_DIR_FD = {os.open, os.unlink, os.rmdir, os.stat} <= os.supports_dir_fd


def _open_parent(root_fd: int, rel: str) -> tuple:
    """(fd of rel's parent directory, rel's last name), walking without following symlinks."""
    parts = rel.split("/")
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _same(st: os.stat_result, ident: Optional[tuple]) -> bool:
    """Still the regular file the plan listed (device, inode, size, mtime): a link swapped in, a
    file replaced by another, or one rewritten since is not."""
    return stat.S_ISREG(st.st_mode) and ident is not None and identity(st) == tuple(ident)


def _unlink(root: str, root_fd: Optional[int], rel: str, ident: Optional[tuple]) -> None:
    """Remove one planned file, checked again just before the unlink (fstatat, no link followed)."""
    if root_fd is None or not _HAS_DIR_FD:
        path = os.path.join(root, rel)
        if not _same(os.lstat(path), ident):
            raise _Changed()
        os.unlink(path)
        return
    fd, name = _open_parent(root_fd, rel)
    try:
        if not _same(os.stat(name, dir_fd=fd, follow_symlinks=False), ident):
            raise _Changed()
        os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def _rmdir(root: str, root_fd: Optional[int], rel: str) -> None:
    if root_fd is None or not _HAS_DIR_FD:
        os.rmdir(os.path.join(root, rel))
        return
    fd, name = _open_parent(root_fd, rel)
    try:
        os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)


def _error(exc: OSError) -> tuple:
    if isinstance(exc, _Changed) or exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return ("changed", "")  # O_NOFOLLOW met a link where the plan saw a directory
    return ("os", exc.strerror or str(exc))


def _remove(cp: CachePlan, root_fd: Optional[int], unit: Unit, out: CacheOutcome) -> None:
    stats = unit.stats or (None,) * len(unit.files)
    for (rel, size), ident in zip(unit.files, stats):
        try:
            _unlink(cp.root, root_fd, rel, ident)
            out.freed += size
        except FileNotFoundError:
            pass
        except OSError as exc:
            out.errors.append((rel,) + _error(exc))
    for rel in unit.dirs:
        try:
            _rmdir(cp.root, root_fd, rel)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                out.left.append(rel)  # something appeared in it since the plan: it stays
            else:
                out.errors.append((rel,) + _error(exc))
    if not os.path.lexists(os.path.join(cp.root, unit.rel)):
        out.deleted += 1


def _execute_one(cp: CachePlan) -> CacheOutcome:
    out = CacheOutcome(cp.kind)
    if cp.state != "ready":
        return out
    try:
        root_fd = os.open(cp.root, _DIR_FLAGS)
    except OSError as exc:
        out.errors.append((".",) + _error(exc))
        return out
    try:
        st = os.fstat(root_fd)
        if (st.st_dev, st.st_ino) != cp.root_id:
            out.errors.append((".", "changed", ""))
            return out
        for unit in cp.units:
            _remove(cp, root_fd, unit, out)
    finally:
        os.close(root_fd)
    return out


def execute(p: Plan) -> Outcome:
    """Delete exactly the plan's units; raises Refused while a warm-cache holds the Inductor dir."""
    out = Outcome(p)
    with exclusive(p.lock_root) if p.lock_root else contextlib.nullcontext():
        for cp in p.caches:
            out.caches.append(_execute_one(cp))
    return out
