"""Where each compile cache really is, mirroring the code that writes it.

- Inductor (torch/_inductor/runtime/cache_dir_utils.py): ``$TORCHINDUCTOR_CACHE_DIR`` made
  absolute, else ``tempfile.gettempdir()/torchinductor_<user>`` with the user name from
  ``getpass.getuser()`` (falling back to ``uid_<uid>``) and ``\\/:*?"<>|`` replaced by ``_``.
  Under Inductor, Triton writes to ``$TRITON_CACHE_DIR`` or ``<inductor root>/triton/<device>``.
- Triton on its own (triton/knobs.py ``cache_knobs``): ``$TRITON_CACHE_DIR``, else
  ``$TRITON_HOME/.triton/cache`` with ``TRITON_HOME`` defaulting to ``~/``.
- ATen's NVRTC/jiterator kernel cache (aten/src/ATen/native/cuda/jit_utils.cpp):
  ``$PYTORCH_KERNEL_CACHE_PATH``, else ``$XDG_CACHE_HOME/torch/kernels``, else
  ``~/.cache/torch/kernels``. Unrelated to flex_attention, listed so users can find it.

A variable that is set but empty is not the same as an unset one, and each writer differs
(read in torch 2.13, triton 3.6/3.8, jit_utils.cpp; ``blank`` marks these locations):
- ``TORCHINDUCTOR_CACHE_DIR=``: torch takes ``os.path.abspath("")``, the current directory of
  the job (verified on torch 2.13: ``cache_dir()`` returns the cwd).
- ``TRITON_CACHE_DIR=``: triton <= 3.3 (runtime/cache.py ``os.getenv(...).strip() or
  default_cache_dir()``) falls back to the default; triton 3.4+ (knobs ``cache.dir`` is "")
  raises "Could not create or locate cache dir" and writes nothing. Either way not the cwd:
  the default location is the one that can hold entries.
- ``TRITON_HOME=``: ``os.path.join("", ".triton", "cache")``, relative to the job's cwd.
- ``PYTORCH_KERNEL_CACHE_PATH=``: ATen's ``get_cache_dir`` gets "" and cannot create it: the
  kernel cache is off (``path`` is "").
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Iterator, Mapping, Optional

MANIFEST_NAME = "flexdoctor-manifest.json"
KEYS_NAME = "flexdoctor-keys"  # the warmed graphs' cache keys, for `flexdoctor cache why`
LOCK_NAME = ".flexdoctor.lock"

@dataclass(frozen=True)
class Location:
    kind: str  # inductor | triton | aten
    path: str  # "" when the writer keeps no cache at all (PYTORCH_KERNEL_CACHE_PATH=)
    source: str  # the environment variable that set it, or "default"
    blank: Optional[str] = None  # a variable set but empty that decided (or was passed over for) this path


def _user() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        getuid = getattr(os, "getuid", None)
        name = f"uid_{getuid()}" if callable(getuid) else "unknown_user"
    return re.sub(r'[\\/:*?"<>|]', "_", name)


def _blank(value: Optional[str]) -> bool:
    return value is not None and not value.strip()


def inductor(env: Optional[Mapping[str, str]] = None) -> Location:
    env = os.environ if env is None else env
    value = env.get("TORCHINDUCTOR_CACHE_DIR")
    if value is not None:
        # cache_dir_utils.cache_dir: os.path.abspath(value) -- "" is the current directory
        return Location("inductor", os.path.abspath(os.path.expanduser(value)), "TORCHINDUCTOR_CACHE_DIR",
                        blank="TORCHINDUCTOR_CACHE_DIR" if _blank(value) else None)
    # tempfile.gettempdir() honours TMPDIR/TEMP/TMP of *this* process; the caller passes the
    # same environment the training job gets, so both agree.
    return Location("inductor", os.path.join(tempfile.gettempdir(), "torchinductor_" + _user()), "default")


def triton(env: Optional[Mapping[str, str]] = None) -> Location:
    """Triton's own cache (used when Triton runs outside Inductor, or TRITON_CACHE_DIR is set)."""
    env = os.environ if env is None else env
    value = env.get("TRITON_CACHE_DIR")
    passed_over = "TRITON_CACHE_DIR" if _blank(value) else None
    if value is not None and not passed_over:
        return Location("triton", os.path.abspath(os.path.expanduser(value)), "TRITON_CACHE_DIR")
    home = env.get("TRITON_HOME")
    if home is not None:
        blank = "TRITON_HOME" if _blank(home) else passed_over
        path = os.path.abspath(os.path.join(os.path.expanduser(home), ".triton", "cache"))
        return Location("triton", path, "TRITON_HOME", blank=blank)
    return Location("triton", os.path.join(os.path.expanduser("~/"), ".triton", "cache"), "default",
                    blank=passed_over)


def aten(env: Optional[Mapping[str, str]] = None) -> Location:
    env = os.environ if env is None else env
    value = env.get("PYTORCH_KERNEL_CACHE_PATH")
    if value is not None:
        if not value:  # get_cache_dir: access("") fails, the directory cannot be made: no cache
            return Location("aten", "", "PYTORCH_KERNEL_CACHE_PATH", blank="PYTORCH_KERNEL_CACHE_PATH")
        return Location("aten", os.path.abspath(os.path.expanduser(value)), "PYTORCH_KERNEL_CACHE_PATH")
    xdg = env.get("XDG_CACHE_HOME")
    if xdg is not None:  # get_cache_dir: std::string(XDG_CACHE_HOME) + "/torch/kernels"
        return Location("aten", os.path.abspath(os.path.expanduser(xdg) + "/torch/kernels"), "XDG_CACHE_HOME",
                        blank="XDG_CACHE_HOME" if not xdg else None)
    return Location("aten", os.path.join(os.path.expanduser("~"), ".cache", "torch", "kernels"), "default")


def manifest_path(root: str) -> str:
    return os.path.join(root, MANIFEST_NAME)


def disabled_by(env: Optional[Mapping[str, str]] = None, torch_version: object = None,
                triton_version: object = None) -> list[str]:
    """``NAME=value`` for each environment switch that turns compile caching off, parsed as the
    given torch / Triton release parses it (None: the newest rules; see cache/envflags.py)."""
    from . import envflags

    return envflags.disabled_by(os.environ if env is None else env, torch_version, triton_version)


# --------------------------------------------------------------------------- filesystem facts


@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo (proc(5)), unescaped."""

    mount_point: str
    fs_type: str  # "nfs4", "lustre", "fuse.sshfs", ... (type.subtype for FUSE)
    source: str  # "server:/export", "/dev/sda1", ...
    options: tuple[str, ...]  # per-mount options, then the superblock's
    root: str = "/"  # the directory of the filesystem mounted here ("/" unless a bind mount)


_OCTAL = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    """The kernel writes space, tab, newline and backslash in mount fields as \\040 \\011 \\012 \\134."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[Mount]:
    """/proc/self/mountinfo: ``ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS``.
    Malformed lines are skipped."""
    out = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        a, b = left.split(" "), right.split(" ")
        if len(a) < 6 or len(b) < 2:
            continue
        opts = tuple(a[5].split(",")) + (tuple(b[2].split(",")) if len(b) > 2 else ())
        out.append(Mount(_unescape(a[4]), _unescape(b[0]), _unescape(b[1]), opts, _unescape(a[3])))
    return out


def parse_mounts(text: str) -> list[Mount]:
    """/proc/self/mounts (fstab format), the fallback where mountinfo is missing."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.append(Mount(_unescape(parts[1]), _unescape(parts[2]), _unescape(parts[0]),
                             tuple(parts[3].split(","))))
    return out


def mounts() -> list[Mount]:
    """This process's mount table (Linux); [] where there is none."""
    for path, parse in (("/proc/self/mountinfo", parse_mountinfo), ("/proc/self/mounts", parse_mounts)):
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                return parse(fh.read())
        except OSError:
            continue
    return []


def mount_for(path: str, table: list[Mount]) -> Optional[Mount]:
    """The mount holding ``path`` (already resolved): the longest mount point that is ``path`` or
    one of its parents; of several mounts on one point the last (it is stacked on top)."""
    best: Optional[Mount] = None
    for m in table:
        mnt = m.mount_point
        if path == mnt or mnt == "/" or path.startswith(mnt.rstrip("/") + "/"):
            if best is None or len(mnt) >= len(best.mount_point):
                best = m
    return best


def mount_of(path: str, table: Optional[list[Mount]] = None) -> tuple[Optional[str], Optional[str], tuple[str, ...]]:
    """(mount point, filesystem type, options) of the mount holding ``path``."""
    m = mount_for(os.path.realpath(path), mounts() if table is None else table)
    return (m.mount_point, m.fs_type, m.options) if m else (None, None, ())


def existing_ancestor(path: str) -> str:
    p = os.path.abspath(path)
    while not os.path.exists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return p


def in_temp(path: str) -> bool:
    """True for paths under the system temporary directory, /tmp, /var/tmp or /dev/shm."""
    real = os.path.realpath(path)
    roots = {os.path.realpath(r) for r in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm")}
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


@contextlib.contextmanager
def replacing(dest: str, prefix: str) -> Iterator[str]:
    """A temporary path beside ``dest`` to write; it replaces ``dest`` atomically when the block
    ends, and is removed if the block fails or is interrupted (KeyboardInterrupt included). The
    ``prefix`` (``.flexdoctor-…``) is what clear-cache recognises a leftover by (cache/identify.py)."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=os.path.dirname(dest) or ".")
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
