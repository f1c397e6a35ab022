"""``flexdoctor clear-cache``: delete compile caches, safely.

Safety rules, each one tested:
- never ``/``, the home directory, a directory that holds the home directory, a system
  directory, or the temporary directory itself;
- only a directory that looks like the cache it claims to be (Inductor: ``torchinductor_*`` or
  its own sub-directories; Triton: hash-named kernel directories; ATen: a ``kernels`` directory
  of files), and nothing that looks like a project or a home (``.git``, ``.ssh``, ...);
- the cache's own root path is resolved once; inside it symlinks are removed as links, never
  followed (``rmtree`` on Python 3 uses the fd-based, symlink-safe walk);
- an exclusive lock on the Inductor root: a running ``warm-cache`` (shared lock) makes
  clear-cache refuse instead of deleting under it;
- entries that cannot be read or removed are reported and skipped; a second run is a no-op.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Iterator, Optional

from . import locations
from .manifest import size_of

# Anything like this inside a "cache" means it is somebody's project or home: refuse.
RED_FLAGS = {".git", ".hg", ".svn", ".ssh", ".gnupg", ".bashrc", ".profile", ".zshrc", ".config",
             ".local", "pyproject.toml", "setup.py", "setup.cfg", "Makefile", "package.json",
             "Documents", "Desktop", "Downloads", "node_modules", ".venv", "venv", "bin", "etc", "usr"}
# Every top-level name Inductor itself creates under its cache dir (torch/_inductor codecache,
# cpp_builder, aoti, cutlass; torch/_functorch autograd cache; torch/_dynamo), besides the
# two-character hash directories that hold generated code.
INDUCTOR_NAMES = {"fxgraph", "aotautograd", "triton", "locks", "cache", "dynamo", "gcc", "torch_cutlass",
                  "unhashed_kernel_inputs", "precompiled_headers", "aoti_eager", "cudagraph", "kernel",
                  locations.MANIFEST_NAME, locations.KEYS_NAME}
# Names that prove it: "cache" or "locks" alone are too common to mean Inductor.
INDUCTOR_PROOF = {"fxgraph", "aotautograd", "triton", "precompiled_headers", locations.MANIFEST_NAME}
_HASH_DIR = re.compile(r"^[a-z0-9]{2}$")
_HASHY = re.compile(r"^[A-Za-z0-9_=-]{20,}$")
_SYSTEM = ("/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
           "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var", "/var/tmp", "/var/cache", "/mnt", "/media")


class Refused(Exception):
    """clear-cache will not touch this target; the message says why."""


@dataclass
class Target:
    kind: str  # inductor | triton | aten | manifest
    path: str
    source: str
    items: list = field(default_factory=list)  # absolute paths to delete
    bytes: int = 0
    refused: Optional[str] = None
    note: Optional[str] = None


@dataclass
class Outcome:
    freed: int = 0
    deleted: int = 0
    errors: list = field(default_factory=list)  # "path: reason"


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def dangerous(path: str) -> Optional[str]:
    """Why ``path`` must never be cleared, or None."""
    real = _real(path)
    home = _real("~")
    if real == "/" or real in {_real(p) for p in _SYSTEM}:
        return "a system directory"
    if real == home:
        return "the home directory"
    if home.startswith(real.rstrip("/") + "/"):
        return "it contains the home directory"
    if real in {_real(tempfile.gettempdir()), _real(os.path.join(home, ".cache"))}:
        return "a shared temporary or cache directory, not a compile cache"
    if real.count("/") < 2:
        return "a top-level directory"
    return None


def _children(path: str) -> list[os.DirEntry]:
    with os.scandir(path) as it:
        return list(it)


def looks_like(kind: str, path: str, children: list[os.DirEntry]) -> Optional[str]:
    """Why ``path`` does not look like a ``kind`` cache, or None when it does."""
    names = {c.name for c in children}
    flags = sorted(names & RED_FLAGS)
    if flags:
        return f"it holds {', '.join(flags[:3])}, which no compile cache does"
    if kind in ("inductor", "manifest"):
        # Everything in it must be Inductor's: one foreign entry (data/, models/, a README) means
        # this is not (only) a cache, and clearing it would delete the user's files.
        foreign = sorted(c.name for c in children
                         if c.name not in INDUCTOR_NAMES and not c.name.startswith(".")
                         and not _HASH_DIR.match(c.name))
        if foreign:
            return f"it holds {', '.join(foreign[:3])}, which Inductor does not create"
        hash_dirs = any(c.is_dir(follow_symlinks=False) and _HASH_DIR.match(c.name) for c in children)
        if not children or names & INDUCTOR_PROOF or hash_dirs or \
                os.path.basename(path.rstrip("/")).startswith("torchinductor"):
            return None
        return "it has none of Inductor's directories (fxgraph, aotautograd, triton, hash-named code dirs)"
    if kind == "triton":
        dirs = [c for c in children if c.is_dir(follow_symlinks=False)]
        if dirs and all(_HASHY.match(c.name) for c in dirs) and not any(
                c.is_file(follow_symlinks=False) and not c.name.startswith(".") for c in children
                if c.name != locations.LOCK_NAME):
            return None
        return "its entries are not Triton's hash-named kernel directories"
    if kind == "aten":
        if all(not c.is_dir(follow_symlinks=False) for c in children):
            return None
        return "it holds directories; ATen's kernel cache holds only files"
    return "unknown cache kind"


def plan(kinds: list[str], env: Optional[dict] = None) -> list[Target]:
    """What each chosen cache would lose. Refusals are recorded on the target, not raised."""
    env = dict(os.environ if env is None else env)
    ind = locations.inductor(env)
    locs = {"inductor": ind, "triton": locations.triton(env), "aten": locations.aten(env)}
    out: list[Target] = []
    for kind in kinds:
        if kind == "manifest":
            mpath = locations.manifest_path(ind.path)
            t = Target("manifest", mpath, ind.source)
            if "inductor" in kinds:
                t.note = "removed with the Inductor cache"
            elif os.path.lexists(mpath):
                why = dangerous(ind.path)
                if why:
                    t.refused = f"{ind.path} is {why}"
                elif not os.path.isfile(mpath) or os.path.islink(mpath):
                    t.refused = "the manifest is not a regular file"
                else:
                    t.items, t.bytes = [mpath], size_of(mpath)
            out.append(t)
            continue
        loc = locs[kind]
        t = Target(kind, loc.path, loc.source)
        out.append(t)
        if kind == "triton" and loc.source == "default" and "inductor" in kinds:
            t.note = "Triton kernels compiled under Inductor live in the Inductor cache's triton/ directory"
        why = dangerous(loc.path)
        if why:
            t.refused = f"{loc.path} is {why}"
            continue
        if not os.path.lexists(loc.path):
            continue
        if not os.path.isdir(loc.path):
            t.refused = f"{loc.path} is not a directory"
            continue
        real = _real(loc.path)
        why = dangerous(real)
        if why:
            t.refused = f"{loc.path} resolves to {real}, which is {why}"
            continue
        try:
            children = _children(real)
        except OSError as exc:
            t.refused = f"cannot read {real}: {exc.strerror or exc}"
            continue
        why = looks_like(kind, real, children)
        if why and children:
            t.refused = f"{real} does not look like the {kind} cache: {why}"
            continue
        for c in children:
            if c.name == locations.LOCK_NAME:
                continue
            t.items.append(c.path)
            t.bytes += size_of(c.path)
    return out


@contextlib.contextmanager
def exclusive(root: str) -> Iterator[None]:
    """Hold the cache's flexdoctor lock exclusively, or raise Refused when a warm-cache holds it."""
    with _lock(root, exclusive=True, wait=False):
        yield


@contextlib.contextmanager
def shared(root: str) -> Iterator[None]:
    """Held by warm-cache for its whole run (several warm-caches may share it)."""
    with _lock(root, exclusive=False, wait=True):
        yield


@contextlib.contextmanager
def _lock(root: str, exclusive: bool, wait: bool) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; the safety checks still apply
        yield
        return
    path = os.path.join(root, locations.LOCK_NAME)
    try:
        if not exclusive:
            os.makedirs(root, exist_ok=True)
        elif not os.path.isdir(root):
            yield  # nothing there: nothing to protect
            return
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        if exclusive:
            raise Refused(f"cannot take the lock {path}: {exc.strerror or exc}")
        yield  # warm-cache still works without the lock (read-only parent?): it just cannot be protected
        return
    try:
        flags = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(fd, flags | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise Refused("a flexdoctor warm-cache is running on this cache (it holds "
                          f"{path}); wait for it to finish")
        yield
    finally:
        os.close(fd)


def delete(targets: list[Target]) -> Outcome:
    """Delete the planned items. Symlinks are unlinked, never followed; errors are collected."""
    out = Outcome()

    def onerror(func, path, exc_info) -> None:  # noqa: ANN001 - shutil's callback signature
        exc = exc_info[1]
        out.errors.append(f"{path}: {getattr(exc, 'strerror', None) or exc}")

    for t in targets:
        if t.refused:
            continue
        for item in t.items:
            size = size_of(item)
            try:
                st = os.lstat(item)
            except FileNotFoundError:
                continue
            except OSError as exc:
                out.errors.append(f"{item}: {exc.strerror or exc}")
                continue
            errors_before = len(out.errors)
            try:
                if stat.S_ISDIR(st.st_mode):
                    if sys.version_info >= (3, 12):
                        shutil.rmtree(item, onexc=lambda f, p, e: onerror(f, p, (type(e), e, None)))
                    else:
                        shutil.rmtree(item, onerror=onerror)
                else:
                    os.unlink(item)  # a file or a symlink (the link itself)
            except OSError as exc:
                out.errors.append(f"{item}: {exc.strerror or exc}")
            if not os.path.lexists(item):
                out.freed += size
                out.deleted += 1
            elif len(out.errors) > errors_before:
                out.freed += max(size - size_of(item), 0)
    return out
