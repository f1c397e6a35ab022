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
- a symbolic link the path goes through (named in it, or met in another link's target) is
  judged by its own owner, and the folder holding it, with everything above, by a parent's
  rules: its owner, or whoever can rename or create entries in that folder, can re-point it
  (OpenSSH resolves links away first). Links are followed one component at a time, as the
  kernel does, so a ``..`` after a link leads above the link's target.

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
import re
import shutil
import stat
from dataclasses import dataclass
from typing import Mapping, Optional

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


_MAX_LINKS = 40  # what the kernel follows in one path (MAXSYMLINKS) before ELOOP


def _absolute(path: str) -> str:
    """``path`` made absolute as the kernel sees it: ``..`` is kept (after a link it leads above
    the link's target, not back to the link's folder, so it cannot be folded away first)."""
    path = os.path.expanduser(path)
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _links(path: str) -> list:
    """The symbolic links the kernel follows to reach ``path`` (named in it, or met inside a link's
    target), each a "link" row judged by its owner."""
    return [row for row, _folder in _followed_links(path)]


def _followed_links(path: str) -> list:
    """(link row, the real folder holding the link) for each symbolic link the kernel follows to
    reach ``path``, resolved one component at a time as the kernel does; stops where the path does
    not exist yet. Raises OSError (ELOOP) past the kernel's limit."""
    found, folder, count = [], os.sep, 0
    parts = [p for p in path.split(os.sep) if p]
    while parts:
        part = parts.pop(0)
        if part == ".":
            continue
        if part == "..":
            folder = os.path.dirname(folder)
            continue
        here = os.path.join(folder, part)
        try:
            st = os.lstat(here)
        except OSError:
            break
        if not stat.S_ISLNK(st.st_mode):
            folder = here  # ``folder`` stays a real path: every link before it was resolved
            continue
        count += 1
        if count > _MAX_LINKS:
            raise OSError(40, "Too many levels of symbolic links", here)  # ELOOP: cannot-inspect
        found.append((PathStat(here, st.st_uid, stat.S_IMODE(st.st_mode), role="link"), folder))
        target = os.readlink(here)
        if target.startswith(os.sep):
            folder = os.sep
        parts[:0] = [p for p in target.split(os.sep) if p]
    return found


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
    given = _absolute(path)
    real = os.path.realpath(given)  # links resolved before the ".." after them, as the kernel does
    judged = nearest_existing(real)
    role = "target" if judged == real else "ancestor"
    walk = _walk_up(judged, role, holder and judged == real)
    links = _followed_links(given)
    # The links first (their owners), then the real path, then the folders holding a link, with
    # everything above them, that the real path does not pass through: whoever can rename or
    # create entries there can replace the link (a parent's rules: the sticky bit protects it).
    seen, held = {r.path for r in walk}, []
    for _row, folder in links:
        for row in _walk_up(folder, "parent"):
            if row.path not in seen:
                seen.add(row.path)
                held.append(row)
    return [row for row, _folder in links] + walk + held


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


# --------------------------------------------------------------------------- what a program runs as it starts
#
# Running as root, flexdoctor never starts what a non-root user can change (docs/SECURITY.md,
# "The target interpreter and root"). For a Python interpreter that is more than its binary:
# CPython reads pyvenv.cfg, loads libpython, imports the standard library and site.py, which runs
# the ``import`` lines of every .pth file in the site folders and imports sitecustomize and
# usercustomize from anywhere on the path. ``interpreter_layout`` derives all of that from the
# files, as CPython's getpath and site.py find them (a pyvenv.cfg beside the executable or one
# folder up makes a venv; the standard library is the first ``lib/pythonX.Y/os.py`` found walking
# up from the real executable, or from the venv's ``home``), without running anything.
# ``program_verdict`` judges each of those paths, and each entry directly inside the folders on
# the start-up path, with the same walk as a cache: owned by root (or the judged uid), not
# writable by others, no folder above that others can rename, no link another user owns.

_PY_NAME = re.compile(r"^python(\d+(\.\d+)?t?)?(\.exe)?$")
_PY_VERSION = re.compile(r"python(\d+\.\d+t?)")
_READ_CAP = 1 << 20  # pyvenv.cfg and .pth files read for the layout: at most 1 MiB each
_SHEBANG_DEPTH = 4


@dataclass(frozen=True)
class Layout:
    """What ``executable`` reads and runs when it starts (paths that exist, in import order)."""

    executable: str
    version: str  # "3.11" (the lib/pythonX.Y folder of its standard library)
    full_version: Optional[str]  # "3.11.7" when a file says it (patchlevel.h, pyvenv.cfg)
    prefix: str  # sys.prefix: the venv when there is one
    base_prefix: str
    venv_cfg: Optional[str]
    path: tuple  # the folders of sys.path at start-up: PYTHONPATH, stdlib, site folders, .pth lines
    site_dirs: tuple  # the site folders among them (where .pth files run)
    files: tuple  # files it reads or loads by name: pyvenv.cfg, libpython, .pth files
    include_dir: Optional[str]


def read_small(path: str, cap: int = _READ_CAP) -> Optional[str]:
    """The text of a regular file, or None: opened without blocking (a FIFO never hangs the
    reader) and without a controlling terminal, at most ``cap`` bytes."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, cap).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _pyvenv(exe: str) -> tuple:
    """(pyvenv.cfg path, its key = value pairs) when ``exe`` starts as a venv (site.venv())."""
    exe_dir = os.path.dirname(exe)
    for d in (exe_dir, os.path.dirname(exe_dir)):
        cfg = os.path.join(d, "pyvenv.cfg")
        text = read_small(cfg) if os.path.isfile(cfg) else None
        if text is not None:
            pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
            return cfg, {k.strip().lower(): v.strip() for k, _, v in pairs}
    return None, {}


def _stdlib_version(prefix: str, wanted: Optional[str]) -> Optional[str]:
    """The X.Y of ``prefix/lib/pythonX.Y/os.py`` (CPython's landmark), preferring ``wanted``."""
    found = []
    for lib in ("lib", "lib64"):
        try:
            names = os.listdir(os.path.join(prefix, lib))
        except OSError:
            continue
        for name in names:
            m = _PY_VERSION.fullmatch(name)
            if m and os.path.isfile(os.path.join(prefix, lib, name, "os.py")):
                found.append(m.group(1))
    if wanted:  # the executable's name (python3.11) or pyvenv.cfg says which: only that one
        return wanted if wanted in found else None
    return found[0] if len(set(found)) == 1 else None


def _find_base(start: str, wanted: Optional[str]) -> tuple:
    """(base prefix, X.Y): the first folder from ``start`` up holding the standard library."""
    p = os.path.abspath(start)
    while True:
        version = _stdlib_version(p, wanted)
        if version:
            return p, version
        parent = os.path.dirname(p)
        if parent == p:
            return None, None
        p = parent


def _full_version(base: str, version: str, cfg: dict) -> Optional[str]:
    text = read_small(os.path.join(base, "include", f"python{version}", "patchlevel.h")) or ""
    m = re.search(r'#define\s+PY_VERSION\s+"(\d+\.\d+\.\d+)', text)
    if m:
        return m.group(1)
    v = cfg.get("version") or cfg.get("version_info") or ""
    return v if re.fullmatch(r"\d+\.\d+\.\d+", v) and v.startswith(version.rstrip("t") + ".") else None


def _existing(paths) -> list:
    """The paths that exist, each once (two names of one folder count once: lib64 -> lib)."""
    out, seen = [], set()
    for p in paths:
        if not p or not os.path.exists(p):
            continue
        real = os.path.realpath(p)
        if real not in seen:
            seen.add(real)
            out.append(os.path.normpath(p))
    return out


def _site_dirs(prefix: str, version: str, venv: bool) -> list:
    """site.getsitepackages() for one prefix, with the dist-packages folders Debian adds."""
    names = [f"lib/python{version}/site-packages", f"lib64/python{version}/site-packages"]
    if not venv:
        names += [f"local/lib/python{version}/dist-packages", "lib/python3/dist-packages",
                  f"lib/python{version}/dist-packages"]
    return _existing(os.path.join(prefix, n) for n in names)


def _user_site(env: Mapping, version: str) -> list:
    """site.py's user site folder, for a process started with ``env``."""
    if env.get("PYTHONNOUSERSITE"):
        return []
    base = env.get("PYTHONUSERBASE")
    if not base:
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".local")
    return _existing([os.path.join(base, "lib", f"python{version}", "site-packages")])


def _pth_dirs(site: str) -> tuple:
    """(.pth files, the folders their lines add), as site.addsitedir reads them; with the
    package folders setuptools' editable finders (``__editable___*_finder.py``) map names to."""
    try:
        names = sorted(n for n in os.listdir(site) if not n.startswith("."))
    except OSError:
        return [], []
    files, dirs = [], []
    for name in names:
        path = os.path.join(site, name)
        if name.startswith("__editable__") and name.endswith("_finder.py"):
            dirs += _editable_mapping(read_small(path) or "")
        if not name.endswith(".pth"):
            continue
        files.append(path)
        for line in (read_small(path) or "").splitlines():
            if not line.strip() or line.startswith(("#", "import ", "import\t")):
                continue
            dirs.append(os.path.join(site, line.rstrip()))
    return files, _existing(dirs)


def _editable_mapping(source: str) -> list:
    """The folders of ``MAPPING = {...}`` in a setuptools editable finder (a literal, never run)."""
    import ast

    m = re.search(r"^MAPPING\s*(?::[^=]*)?=\s*(\{.*?\})\s*$", source, re.M | re.S)
    try:
        mapping = ast.literal_eval(m.group(1)) if m else {}
    except (ValueError, SyntaxError, RecursionError):
        return []
    return [v for v in mapping.values() if isinstance(v, str)] if isinstance(mapping, dict) else []


def _libpython(base: str, version: str) -> list:
    """The shared libpython a build with --enable-shared loads from its own prefix (pyenv, conda)."""
    out = []
    for lib in ("lib", "lib64"):
        try:
            names = sorted(os.listdir(os.path.join(base, lib)))
        except OSError:
            continue
        out += [os.path.join(base, lib, n) for n in names if n.startswith(f"libpython{version}")]
    return out


def interpreter_layout(python: str, env: Optional[Mapping] = None) -> Optional[Layout]:
    """What the Python at ``python`` runs at start-up with ``env``, from its files; None when no
    standard library is found for it (then what it runs cannot be told)."""
    env = os.environ if env is None else env
    exe = os.path.abspath(os.path.expanduser(python))
    cfg_path, cfg = _pyvenv(exe)
    name = _PY_VERSION.search(os.path.basename(os.path.realpath(exe)))
    wanted = name.group(1) if name else ".".join(cfg.get("version", "").split(".")[:2]) or None
    home_env = env.get("PYTHONHOME", "").split(os.pathsep)[0]
    start = home_env or (cfg.get("home") if cfg_path else None) or os.path.dirname(os.path.realpath(exe))
    base, version = (home_env, _stdlib_version(home_env, wanted)) if home_env else _find_base(start, wanted)
    if not base or not version:
        return None
    venv = cfg_path is not None
    prefix = os.path.dirname(os.path.dirname(exe)) if venv else base
    stdlib = _existing([os.path.join(base, lib, f"python{version.replace('.', '')}.zip") for lib in ("lib", "lib64")]
                       + [os.path.join(base, lib, f"python{version}", sub) for lib in ("lib", "lib64")
                          for sub in ("", "lib-dynload")])
    system_site = not venv or cfg.get("include-system-site-packages", "").lower() == "true"
    user = _user_site(env, version) if system_site else []
    sites = _existing((_site_dirs(prefix, version, True) if venv else []) + user
                      + (_site_dirs(base, version, False) if system_site else []))
    pythonpath = _existing(os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)
    files, added = [], []
    for site in sites:
        pth, dirs = _pth_dirs(site)
        files += pth
        added += dirs
    libs = _libpython(base, version)
    include = os.path.join(base, "include", f"python{version}")
    return Layout(executable=exe, version=version, full_version=_full_version(base, version, cfg), prefix=prefix,
                  base_prefix=base, venv_cfg=cfg_path, path=tuple(_existing(pythonpath + stdlib + sites + added)),
                  site_dirs=tuple(sites), files=tuple(_existing(([cfg_path] if cfg_path else []) + libs + files)),
                  include_dir=include)


def _entry_rows(folder: str) -> list:
    """A row for each entry directly inside ``folder`` (lstat: a link is judged by its owner)."""
    rows = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                st = entry.stat(follow_symlinks=False)
                role = "link" if stat.S_ISLNK(st.st_mode) else "target"
                rows.append(PathStat(entry.path, st.st_uid, stat.S_IMODE(st.st_mode), role=role))
    except OSError:
        pass  # a folder that cannot be listed was already judged as a whole
    return rows


def _first_unsafe(paths, uid: int) -> Optional[Verdict]:
    """The first unsafe verdict over ``paths``; for what runs as root also the folder holding each
    link on the way (its owner can replace a link it does not own)."""
    for path in paths:
        v = verdict(path, uid)
        if not v.safe:
            return v
        for link in _links(os.path.abspath(os.path.expanduser(path))):
            v = verdict(os.path.dirname(link.path), uid)
            if not v.safe:
                return v
    return None


def interpreter_verdict(python: str, uid: Optional[int] = None, env: Optional[Mapping] = None) -> Verdict:
    """May ``uid`` (default: this process's) start the Python at ``python`` with ``env``? Judges
    the executable (links on the way, the file it resolves to, the folders above), pyvenv.cfg,
    libpython, the .pth files, every folder on its start-up path and each entry directly in one
    (sitecustomize, usercustomize, packages, links: a link's target is judged too). Reason
    ``unknown-layout`` when its standard library cannot be found from its files."""
    uid = current_uid() if uid is None else uid
    if uid is None:
        return Verdict(True, "not-checked", python)
    found = _first_unsafe([python], uid)
    if found:
        return found
    layout = interpreter_layout(python, env)
    if layout is None:
        return Verdict(False, "unknown-layout", os.path.abspath(python))
    found = _first_unsafe(layout.files + layout.path, uid)
    if found:
        return found
    for folder in layout.path:
        rows = _entry_rows(folder)
        bad = judge(rows, uid) if rows else None
        if bad is not None and not bad.safe:
            return bad
        found = _first_unsafe([r.path for r in rows if r.role == "link"], uid)
        if found:
            return found
    return Verdict(True, "ok", layout.executable)


def is_python(path: str) -> bool:
    """Is ``path`` a Python interpreter? By its name or its real name (python, python3,
    python3.11), or by a pyvenv.cfg beside it or one folder up (a venv's executable)."""
    names = {os.path.basename(path), os.path.basename(os.path.realpath(path))}
    return any(_PY_NAME.match(n) for n in names) or _pyvenv(os.path.abspath(path))[0] is not None


def _resolve(program: str, env: Mapping) -> Optional[str]:
    """Where ``program`` is found as exec*p would find it with ``env``'s PATH."""
    if os.sep in program:
        return os.path.abspath(program)
    return shutil.which(program, path=env.get("PATH", os.defpath))


def _shebang(path: str) -> list:
    """The interpreter and argument of a ``#!`` line (``/usr/bin/env python3`` -> both words)."""
    head = (read_small(path, 256) or "").splitlines()[:1]
    if not head or not head[0].startswith("#!"):
        return []
    return head[0][2:].split()


def _skip_env(argv: list) -> list:
    """``env [-i] [NAME=VALUE]... PROGRAM ...`` -> ``PROGRAM ...``."""
    rest = list(argv[1:])
    while rest and ("=" in rest[0] or rest[0].startswith("-")):
        rest.pop(0)
    return rest


def program_verdict(argv: list, env: Optional[Mapping] = None, uid: Optional[int] = None,
                    depth: int = 0) -> Verdict:
    """May ``uid`` start ``argv`` with ``env``? Judges the program argv[0] names (through PATH,
    links, an ``env`` wrapper and its ``#!`` line) and, for a Python, everything it runs at
    start-up (``interpreter_verdict``). The arguments (a script named on the command line) are
    the caller's choice and are not judged. A program that is not found is left to fail."""
    env = os.environ if env is None else env
    uid = current_uid() if uid is None else uid
    found = _resolve(argv[0], env) if argv and argv[0] else None
    if uid is None or found is None or not os.path.exists(found):
        return Verdict(True, "not-checked", argv[0] if argv else "")
    inner = _shebang(found)
    if not inner and is_python(found):  # a script named python* is judged as the script it is
        return interpreter_verdict(found, uid, env)
    v = _first_unsafe([found], uid) or verdict(found, uid)
    if not v.safe or depth >= _SHEBANG_DEPTH:
        return v
    if inner and os.path.basename(inner[0]) == "env":
        inner = _skip_env(inner)
    elif not inner and os.path.basename(found) == "env":
        inner = _skip_env(argv)
    return program_verdict(inner, env, uid, depth + 1) if inner else v


def root_refusal(argv: list, env: Optional[Mapping] = None) -> Optional[Verdict]:
    """The reason not to start ``argv`` when running as root, or None: the one question every
    process start asks (worker/run.py's gate) and the CLI asks before a command's work."""
    if current_uid() != ROOT_UID:
        return None
    v = program_verdict(list(argv), env, ROOT_UID)
    return None if v.safe else v


def describe(v: Verdict, english: bool = False) -> str:
    """An unsafe Verdict of ``program_verdict`` in words (``english``: for facts and the gate's
    refusal, which are data): which path a non-root user can change, and how."""
    from . import text

    word = text.english if english else text.t
    return word(f"root-guard.{v.reason}", offender=v.path, owner=v.uid, mode=v.mode_text)


def module_verdict(module: str, extra: tuple = (), uid: Optional[int] = None) -> Verdict:
    """May ``uid`` import ``module`` (a plugin's entry point)? Judges where the import system
    would find its top-level package (found, never imported), every file and folder in it, and
    ``extra`` paths (its dist-info). A module that is not found is left to fail on import."""
    import importlib.util

    uid = current_uid() if uid is None else uid
    if uid is None:
        return Verdict(True, "not-checked", module)
    try:
        spec = importlib.util.find_spec(module.split(".")[0])
    except (ImportError, ValueError, AttributeError):
        return Verdict(False, "cannot-inspect", module)
    places = list(extra)
    if spec is not None:
        places += list(spec.submodule_search_locations or []) or [spec.origin]
    for place in places:
        if not place or not os.path.isabs(place):  # built-in, frozen
            continue
        bad = _first_unsafe([place], uid) or (_tree_verdict(place, uid) if os.path.isdir(place) else None)
        if bad:
            return bad
    return Verdict(True, "ok", module)


def _tree_verdict(folder: str, uid: int) -> Optional[Verdict]:
    """The first unsafe entry anywhere below ``folder`` (links are judged, never followed down)."""
    for root, dirs, _files in os.walk(folder):
        rows = _entry_rows(root)
        bad = judge(rows, uid) if rows else None
        if bad is not None and not bad.safe:
            return bad
        found = _first_unsafe([r.path for r in rows if r.role == "link"], uid)
        if found:
            return found
    return None
