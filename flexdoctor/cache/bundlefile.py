"""A ``warm-cache --export`` bundle file, read as what it is: code (torch unpickles its entries and
runs the Python source they carry on every cache hit, like a wheel's modules on import).

- **Who wrote it** (``--import`` only; :func:`open_trusted`): the one walk of flexdoctor/safety.py
  over the path, with the bundle's own folder judged strictly (``holder``: not writable by others,
  even with the sticky bit); then the file is opened without following a link at its name
  (``O_NOFOLLOW``; a link named in the path is judged by its owner in the walk and resolved first)
  and the *opened* descriptor is checked (``fstat``): a regular file owned by you or root and not
  writable by group or others.
- **What it is**: the bytes are copied once from that descriptor into a private spool while their
  sha256 is computed; everything after (the ``--sha256`` pin, the zip, each member) reads that
  copy, so what was hashed and judged is what is loaded.
- **How big**: the zip's directory is judged before anything is inflated (member count, each
  member's and the total uncompressed size, the compression ratio), and members are read in
  chunks with a hard limit, so a zip bomb (or a directory that lies about sizes) costs at most the
  limit. ``fleet merge --bundle`` reads only the metadata, with the same limits.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from typing import Iterator, Optional

from .. import safety

META = "flexdoctor-bundle.json"
ARTIFACT = re.compile(r"artifacts/[0-9]{3,6}\.bin")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Caps applied before inflating. A flex config's mega-cache blob is ~5.5 MB on an H100 and
    ~0.2 MB on the CPU (FACTS §3); these leave room for hundreds of large configs."""

    file_bytes: int = 4 << 30  # the bundle file itself
    members: int = 1024
    member_bytes: int = 512 << 20  # one artifact blob, uncompressed
    total_bytes: int = 4 << 30  # all members, uncompressed
    meta_bytes: int = 1 << 20  # flexdoctor-bundle.json
    ratio: int = 100  # uncompressed / compressed, per member (deflate of real blobs: ~3x)


LIMITS = Limits()


class Refused(Exception):
    """Not loaded. ``reason``: a stable word (words: ``bundle-refused.<reason>`` in
    locale/en.bundle-security.toml); ``args`` its values. ``str()`` is English."""

    def __init__(self, reason: str, **args: object):
        super().__init__(reason)
        self.reason, self.args_ = reason, dict(args)

    def text(self) -> str:
        from ..text import t

        return t(f"bundle-refused.{self.reason}", **self.args_)


# --------------------------------------------------------------------------- who wrote it

def _check_walk(path: str, uid: Optional[int]) -> str:
    """The safety walk; returns the real path to open."""
    verdict = safety.verdict(path, uid, holder=True)
    if not verdict.safe and verdict.reason != "not-checked":
        raise Refused(verdict.reason.replace("-", "_"), path=path, offender=verdict.path,
                      owner=verdict.uid, mode=verdict.mode_text)
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


def _check_fd(fd: int, path: str, uid: Optional[int]) -> os.stat_result:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise Refused("not_regular", path=path)
    if uid is not None and st.st_uid not in (uid, safety.ROOT_UID):
        raise Refused("foreign_owner", path=path, offender=path, owner=st.st_uid, mode=oct(stat.S_IMODE(st.st_mode)))
    if uid is not None and st.st_mode & safety.OTHERS_WRITE:
        raise Refused("writable_by_others", path=path, offender=path, owner=st.st_uid,
                      mode=oct(stat.S_IMODE(st.st_mode)))
    return st


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_checked(real: str, path: str, uid: Optional[int]) -> int:
    """A read-only descriptor of ``real`` (no link followed at the name), judged by ``_check_fd``."""
    try:
        fd = os.open(real, _READ_FLAGS)
    except FileNotFoundError:
        raise Refused("missing", path=path) from None
    except OSError as exc:
        raise Refused("unreadable", path=path, error=exc.strerror or str(exc)) from None
    try:
        _check_fd(fd, path, uid)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_trusted(path: str, uid: Optional[int] = None) -> int:
    """A read-only descriptor of the bundle at ``path``, or Refused (nothing read yet)."""
    uid = safety.current_uid() if uid is None else uid
    return _open_checked(_check_walk(path, uid), path, uid)


def open_plain(path: str) -> int:
    """A descriptor for reading only the metadata (``fleet merge --bundle``): no link followed at
    the name, a regular file; owners are not judged (nothing in it runs there)."""
    return _open_checked(os.path.realpath(os.path.abspath(os.path.expanduser(path))), path, None)


# --------------------------------------------------------------------------- what it is

def snapshot(fd: int, path: str, limits: Limits = LIMITS) -> tuple:
    """(spooled private copy, sha256 hex, size) of everything ``fd`` holds; closes ``fd``."""
    spool = tempfile.SpooledTemporaryFile(max_size=64 << 20)
    digest, size = hashlib.sha256(), 0
    try:
        with os.fdopen(fd, "rb", buffering=0) as src:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > limits.file_bytes:
                    raise Refused("too_big", path=path, limit=limits.file_bytes)
                digest.update(chunk)
                spool.write(chunk)
    except OSError as exc:
        spool.close()
        raise Refused("unreadable", path=path, error=exc.strerror or str(exc)) from None
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool, digest.hexdigest(), size


# --------------------------------------------------------------------------- how big

def _judge_directory(zf: zipfile.ZipFile, path: str, limits: Limits) -> list:
    infos = zf.infolist()
    if len(infos) > limits.members:
        raise Refused("too_many_members", path=path, count=len(infos), limit=limits.members)
    names, total = set(), 0
    for info in infos:
        name = info.filename
        if name in names or not (name == META or ARTIFACT.fullmatch(name)):
            raise Refused("unexpected_member", path=path, name=_shown(name))
        names.add(name)
        cap = limits.meta_bytes if name == META else limits.member_bytes
        if info.file_size > cap:
            raise Refused("member_too_big", path=path, name=name, size=info.file_size, limit=cap)
        if info.file_size > limits.ratio * max(info.compress_size, 1) and info.file_size > CHUNK:
            raise Refused("ratio", path=path, name=name, ratio=info.file_size // max(info.compress_size, 1),
                          limit=limits.ratio)
        total += info.file_size
        if total > limits.total_bytes:
            raise Refused("total_too_big", path=path, limit=limits.total_bytes)
    if META not in names:
        raise Refused("not_bundle", path=path)
    return infos


def _shown(name: str) -> str:
    return "".join(c if 32 < ord(c) < 127 else "?" for c in name[:80])


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> bytes:
    """The member's bytes, read in chunks and never more than its declared size (a directory
    that understates a member is caught here, or by zipfile's CRC check at the end)."""
    out = io.BytesIO()
    try:
        with zf.open(info) as src:
            while True:
                chunk = src.read(CHUNK)
                if not chunk:
                    break
                if out.tell() + len(chunk) > info.file_size:
                    raise Refused("member_too_big", path=path, name=info.filename, size=out.tell() + len(chunk),
                                  limit=info.file_size)
                out.write(chunk)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise Refused("not_bundle_detail", path=path, detail=_shown(str(exc))) from None
    return out.getvalue()


@dataclass
class Bundle:
    """An opened, hashed, size-judged bundle; ``artifacts()`` yields (name, bytes) one at a time."""

    path: str
    sha256: str
    size: int
    meta: dict
    _spool: object
    _zip: zipfile.ZipFile
    _infos: list

    def artifacts(self) -> Iterator[tuple]:
        for info in sorted(self._infos, key=lambda i: i.filename):
            if info.filename != META:
                yield info.filename, read_member(self._zip, info, self.path)

    def close(self) -> None:
        self._zip.close()
        self._spool.close()  # type: ignore[attr-defined]

    def __enter__(self) -> "Bundle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _meta(zf: zipfile.ZipFile, infos: list, path: str) -> dict:
    import json

    info = next(i for i in infos if i.filename == META)
    try:
        meta = json.loads(read_member(zf, info, path))
    except (ValueError, RecursionError):
        meta = None
    if not isinstance(meta, dict) or not isinstance(meta.get("fingerprint"), dict):
        raise Refused("not_bundle", path=path)
    return meta


def load(fd: int, path: str, sha256: Optional[str] = None, limits: Limits = LIMITS) -> Bundle:
    """Snapshot ``fd`` (closed here), check the pin, judge the zip's directory, read the metadata."""
    spool, digest, size = snapshot(fd, path, limits)
    try:
        if sha256 is not None and digest != sha256.lower():
            raise Refused("sha256_mismatch", path=path, expected=sha256.lower(), actual=digest)
        try:
            zf = zipfile.ZipFile(spool)  # type: ignore[arg-type]
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise Refused("not_bundle_detail", path=path, detail=_shown(str(exc))) from None
        try:
            infos = _judge_directory(zf, path, limits)
            return Bundle(path, digest, size, _meta(zf, infos, path), spool, zf, infos)
        except BaseException:
            zf.close()
            raise
    except BaseException:
        spool.close()
        raise


def open_bundle(path: str, sha256: Optional[str] = None, trusted: bool = True, limits: Limits = LIMITS) -> Bundle:
    """``trusted``: the --import rules (who wrote it); else only a regular file (metadata readers)."""
    fd = open_trusted(path) if trusted else open_plain(path)
    return load(fd, path, sha256, limits)
