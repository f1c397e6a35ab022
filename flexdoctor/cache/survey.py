"""Walk a cache dir with the rules of ``identify`` and say what may go and what stays.

A directory becomes one deletion unit only when every file under it is identified and it holds
at least one; a directory the rules recognise but that holds something unidentified is looked
into, so its identified files can go while the rest stays; a directory the rules do not
recognise is kept whole, unread. Symbolic links are never followed and never deleted; neither
are sockets, FIFOs and devices. Each unit carries the exact files and directories it removes,
so ``--dry-run`` and ``--yes`` cannot disagree.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Optional

from .identify import FILE


@dataclass(frozen=True)
class Unit:
    """One thing clear-cache deletes: a file, or a directory with everything in it."""

    rel: str  # relative to the cache dir, "/"-separated
    is_dir: bool
    files: tuple = ()  # (rel, bytes) of every file it removes
    dirs: tuple = ()  # rel of every directory it removes, deepest first (itself last)
    # (st_dev, st_ino, st_size, st_mtime_ns) of each file in ``files``, as listed: clear-cache
    # deletes a file only while it is still that file (a replaced or rewritten one stays)
    stats: tuple = ()

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.files)


@dataclass(frozen=True)
class Kept:
    """Something clear-cache leaves alone, and why (a reason word the renderer words)."""

    rel: str
    reason: str  # hidden | unknown | content | symlink | special | unreadable | empty | mixed | unchecked


@dataclass
class Survey:
    units: list = field(default_factory=list)
    kept: list = field(default_factory=list)

    @property
    def bytes(self) -> int:
        return sum(u.bytes for u in self.units)


def _join(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def _kind(entry: os.DirEntry) -> Optional[str]:
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return None  # vanished or unreadable
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "special"


def identity(st: os.stat_result) -> tuple:
    """What must not have changed between the listing and the unlink."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _file_unit(entry: os.DirEntry, rel: str) -> Unit:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return Unit(rel, False, files=((rel, 0),), stats=(None,))  # vanished: the unlink finds nothing
    return Unit(rel, False, files=((rel, st.st_size),), stats=(identity(st),))


def _dir_unit(rel: str, inner: list) -> Unit:
    files = tuple(f for u in inner for f in u.files)
    stats = tuple(s for u in inner for s in u.stats)
    dirs = tuple(d for u in inner for d in u.dirs) + (rel,)
    return Unit(rel, True, files=files, dirs=dirs, stats=stats)


def _sub(path: str, rel: str, rule, out: Survey) -> None:
    """Look into a directory the rules recognise, and fold the result into ``out``."""
    inner = walk(path, rule, rel)
    if inner.units and not inner.kept:
        out.units.append(_dir_unit(rel, inner.units))
    elif not inner.units:
        # nothing in it is the writer's (or it is empty): keep it whole, as one line
        out.kept.append(Kept(rel, "empty" if not inner.kept else "mixed"))
    else:
        out.units.extend(inner.units)
        out.kept.extend(inner.kept)


def walk(path: str, rule, rel: str = "") -> Survey:
    """Survey the directory ``path`` (``rel`` below the cache dir) with ``rule``."""
    out = Survey()
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        out.kept.append(Kept(rel or ".", "unreadable"))
        return out
    kinds = {e.name: _kind(e) for e in entries}
    verdicts = rule(path, [e for e in entries if kinds[e.name] in ("dir", "file")])
    for e in entries:
        crel, kind = _join(rel, e.name), kinds[e.name]
        if kind in (None, "link", "special"):
            out.kept.append(Kept(crel, {None: "unreadable", "link": "symlink"}.get(kind, "special")))
            continue
        if e.name not in verdicts:
            continue  # a rule that only looks for some names (clear-cache --manifest)
        verdict = verdicts[e.name]
        if verdict == FILE and kind == "file":
            out.units.append(_file_unit(e, crel))
        elif callable(verdict) and kind == "dir":
            _sub(e.path, crel, verdict, out)
        else:
            out.kept.append(Kept(crel, verdict if isinstance(verdict, str) and verdict != FILE else "unknown"))
    return out
