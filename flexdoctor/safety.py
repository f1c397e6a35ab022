"""One verdict on whether a compile cache location is safe to compile into and load from.

Compiled kernels are executable code: Inductor imports the ``.py`` files and unpickles the
graphs in its cache, Triton and ATen load the binaries in theirs. Whoever can write the cache
dir, or rename or re-point a directory on the way to it, can run code in the user's jobs.

The walk is OpenSSH's StrictModes (``safe_path()`` in misc.c, which sshd runs over
authorized_keys): resolve the path, then it and every directory above it up to ``/`` must be
owned by root or the user and not writable by group or others. Three deliberate differences,
each because a cache is not a key file:

- a parent with the sticky bit (``/tmp``, mode 1777) is fine: others can add entries beside
  ours but cannot rename or delete ours (OpenSSH stops at the home dir and never meets /tmp);
- the cache dir itself must not be writable by others even with the sticky bit: they could
  create the hash-named entries torch loads later;
- a symbolic link named in the path is judged by its own owner (its owner can re-point it;
  OpenSSH resolves links away first).

A path that does not exist yet is judged by its nearest existing ancestor, with the rules of
a parent: torch (``os.makedirs``), warm-cache and Triton will create the cache inside it.

A *file* flexdoctor loads code from (a ``warm-cache --import`` bundle) is judged by the same walk
with ``holder=True``: the folder that holds it must not be writable by others even with the
sticky bit (in ``/tmp`` anyone may have created the name first or may swap it between runs).

``judge`` is pure over recorded :class:`~flexdoctor.facts.PathStat` rows (FD504 runs it over
facts); ``inspect`` gathers the rows from the filesystem; ``verdict`` does both.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Optional

from .facts import PathStat

ROOT_UID = 0
OTHERS_WRITE = 0o022  # group- or world-writable, as OpenSSH tests it


@dataclass(frozen=True)
class Verdict:
    """Whether a cache location is safe. ``reason`` is a stable word (ok, not-checked,
    foreign-owner, writable-by-others, parent-foreign-owner, parent-writable,
    holder-writable, link-foreign-owner, cannot-inspect; words in locale/en.safety.toml); ``path`` is the
    offending directory or link (the judged path itself when safe)."""

    safe: bool
    reason: str
    path: str
    uid: Optional[int] = None  # owner of the offending path
    mode: Optional[int] = None  # its permission bits

    @property
    def mode_text(self) -> str:
        return "" if self.mode is None else oct(self.mode)




def _trusted(owner: int, uid: int) -> bool:
    return owner in (uid, ROOT_UID)


def _judge_one(row: PathStat, uid: int) -> Optional[str]:
    if row.role == "link":
        return None if _trusted(row.uid, uid) else "link-foreign-owner"
    if row.role == "target":
        if not _trusted(row.uid, uid):
            return "foreign-owner"
        return "writable-by-others" if row.mode & OTHERS_WRITE else None
    if not _trusted(row.uid, uid):
        return "parent-foreign-owner"
    if row.role == "holder" and row.mode & OTHERS_WRITE:
        return "holder-writable"  # the sticky bit does not help a file: see the module docstring
    if row.mode & OTHERS_WRITE and not row.mode & stat.S_ISVTX:
        return "parent-writable"
    return None


def judge(chain: list, uid: Optional[int]) -> Verdict:
    """The verdict over recorded rows: the first offending row, in path order, decides."""
    if uid is None:
        return Verdict(True, "not-checked", chain[0].path if chain else "")
    if not chain:
        return Verdict(False, "cannot-inspect", "")
    for row in chain:
        reason = _judge_one(row, uid)
        if reason:
            return Verdict(False, reason, row.path, row.uid, row.mode)
    return Verdict(True, "ok", chain[0].path)


def _exists(path: str) -> bool:
    """Like os.path.exists, but a directory we may not search raises instead of reading as absent."""
    try:
        os.stat(path)
        return True
    except (FileNotFoundError, NotADirectoryError):
        return False


def nearest_existing(path: str) -> str:
    """``path`` itself when it exists (a dangling link does not), else its nearest existing
    ancestor. Raises OSError when a directory on the way cannot be searched."""
    p = os.path.abspath(path)
    while not _exists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return p


def _links(path: str) -> list:
    """The symbolic links named in ``path`` (each prefix that is one), owner from lstat."""
    rows, prefix = [], os.sep
    for part in [p for p in path.split(os.sep) if p]:
        prefix = os.path.join(prefix, part)
        try:
            st = os.lstat(prefix)
        except OSError:
            break
        if stat.S_ISLNK(st.st_mode):
            rows.append(PathStat(prefix, st.st_uid, stat.S_IMODE(st.st_mode), role="link"))
    return rows


def _walk_up(real: str, first_role: str, holder: bool = False) -> list:
    rows, p, role = [], real, first_role
    while True:
        st = os.stat(p)
        rows.append(PathStat(p, st.st_uid, stat.S_IMODE(st.st_mode), role=role))
        parent = os.path.dirname(p)
        if parent == p:
            return rows
        role = "holder" if holder and p == real else "parent"  # the file's own folder, or above
        p = parent


def inspect(path: str, holder: bool = False) -> list:
    """The rows ``judge`` needs for ``path`` (``holder``: its folder is judged as a file's, see the
    module docstring). Raises OSError when a directory cannot be stat'ed."""
    given = os.path.abspath(os.path.expanduser(path))
    judged = nearest_existing(given)
    role = "target" if judged == given else "ancestor"
    return _links(given) + _walk_up(os.path.realpath(judged), role, holder and judged == given)


def current_uid() -> Optional[int]:
    getuid = getattr(os, "geteuid", None)
    return getuid() if callable(getuid) else None


def verdict(path: str, uid: Optional[int] = None, holder: bool = False) -> Verdict:
    """Is ``path`` (existing or to be created) a safe place for compiled code? One answer for
    FD504, warm-cache and ``warm-cache --import`` (its bundle file with ``holder=True``)."""
    uid = current_uid() if uid is None else uid
    if uid is None:
        return Verdict(True, "not-checked", path)
    try:
        chain = inspect(path, holder)
    except OSError as exc:
        return Verdict(False, "cannot-inspect", getattr(exc, "filename", None) or path)
    return judge(chain, uid)


def folder_verdict(path: str, uid: Optional[int] = None) -> Verdict:
    """May only the user or root create entries in the folder ``path``? Stricter than a cache
    parent: a sticky bit does not help, since whoever can add an entry could have put a settings
    file there (the settings search stops at such a folder, like git's safe.directory). Reasons:
    ok, not-checked, foreign-owner, writable-by-others, cannot-inspect."""
    uid = current_uid() if uid is None else uid
    if uid is None:
        return Verdict(True, "not-checked", path)
    try:
        st = os.stat(path)
    except OSError:
        return Verdict(False, "cannot-inspect", path)
    mode = stat.S_IMODE(st.st_mode)
    if not _trusted(st.st_uid, uid):
        return Verdict(False, "foreign-owner", path, st.st_uid, mode)
    if mode & OTHERS_WRITE:
        return Verdict(False, "writable-by-others", path, st.st_uid, mode)
    return Verdict(True, "ok", path)


def make_private_dirs(path: str) -> list:
    """Create ``path`` and any missing parent with mode 0700 (os.makedirs gives only the leaf
    its mode; a parent made with a loose umask would fail the walk). Returns what it created."""
    created, p = [], os.path.abspath(os.path.expanduser(path))
    missing = []
    while not os.path.lexists(p):
        missing.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    for d in reversed(missing):
        os.mkdir(d, 0o700)
        os.chmod(d, 0o700)  # mkdir's mode is masked by the umask; 0700 must hold whatever it is
        created.append(d)
    return created
