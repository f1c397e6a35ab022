"""Which interpreter a command inspects: the one the user's training runs with.

``--python`` names it (an interpreter, or a venv folder: ``VENV/bin/python``, on Windows
``VENV\\Scripts\\python.exe``). Without it, flexdoctor's own interpreter is the target when it
has torch. When it has none (flexdoctor installed in its own venv, the pipx/uvx habit, and run
from an activated training environment), the target is where the user is: ``$VIRTUAL_ENV``,
then ``$CONDA_PREFIX``, then ``python`` and ``python3`` on PATH, the first whose files show torch
installed (decided from site-packages without running it; an interpreter whose files cannot
tell, such as a pyenv shim, is asked with the stdlib-only interp probe). An interpreter another
user could change is never picked on its own (safety.verdict, the walk FD504 makes).

Kept apart from the rest of the command line on purpose: one function, :func:`choose`, that
the commands call where they used ``cliutil.resolve_python``.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..cliutil import resolve_python, usage_error, which_python
from ..text import t


@dataclass(frozen=True)
class Target:
    """The interpreter to inspect. ``why``: "flag" (--python), "self" (flexdoctor's own, which
    has torch or nothing better was found), or the place it was found: "VIRTUAL_ENV",
    "CONDA_PREFIX", "python" / "python3" (on PATH). ``looked``: the places tried that had no
    torch (words for the report when none had)."""

    path: str
    why: str = "self"
    looked: tuple = field(default_factory=tuple)

    @property
    def found_elsewhere(self) -> bool:
        return self.why not in ("flag", "self")


def venv_python(folder: str, windows: bool = os.name == "nt") -> Optional[str]:
    """The interpreter of a venv (or conda env) folder, or None when it has none."""
    names = (("Scripts", "python.exe"), ("python.exe",)) if windows else (("bin", "python"), ("bin", "python3"))
    for parts in names:
        candidate = os.path.join(folder, *parts)
        if os.path.isfile(candidate):
            return candidate
    return None


def from_flag(python: str, quiet: bool = False) -> Optional[str]:
    """--python's interpreter: a path, a name on PATH, or a venv folder. When there is none: exit
    2 with one line, or None when ``quiet`` (the entry point's early start prints nothing)."""
    expanded = os.path.expanduser(python)
    if os.path.isdir(expanded):
        found = venv_python(expanded)
        if found is None:
            if quiet:
                return None
            raise usage_error(t("interp.no_python_in_folder", python=python))
        python = found
    return which_python(python) if quiet else resolve_python(python)


def _python_version(exe: str) -> Optional[str]:
    m = re.search(r"python(\d+\.\d+)", os.path.basename(os.path.realpath(exe)))
    return m.group(1) if m else None


def _venv_root(exe: str) -> Optional[str]:
    """The venv ``exe`` starts in (a pyvenv.cfg beside it or one level up: CPython's site.venv())."""
    bin_dir = os.path.dirname(os.path.abspath(exe))
    for d in (bin_dir, os.path.dirname(bin_dir)):
        if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
            return os.path.dirname(bin_dir)
    return None


def _prefix_sites(prefix: str, version: Optional[str]) -> list:
    pattern = f"python{version}" if version else "python3*"
    found = []
    for tail in (f"lib/{pattern}/site-packages", f"lib/{pattern}/dist-packages",
                 f"local/lib/{pattern}/dist-packages", "lib/python3/dist-packages", "Lib/site-packages"):
        found += sorted(glob.glob(os.path.join(glob.escape(prefix), tail)))
    return found


def site_dirs(exe: str) -> Optional[list]:
    """The site-packages folders ``exe`` would read, from its files alone; None when its files
    cannot tell (a shell-script shim, a layout not known here)."""
    version = _python_version(exe)
    venv = _venv_root(exe)
    if venv is not None:
        dirs = _prefix_sites(venv, version)
        cfg = _read_cfg(os.path.join(venv, "pyvenv.cfg"))
        if cfg.get("include-system-site-packages", "false").lower() == "true" and cfg.get("home"):
            dirs += _prefix_sites(os.path.dirname(cfg["home"]), version)
        return dirs or None
    real = os.path.realpath(exe)
    if version is None:  # not a python binary by name: a shim or a wrapper script
        return None
    dirs = _prefix_sites(os.path.dirname(os.path.dirname(real)), version)
    user = os.path.expanduser(f"~/.local/lib/python{version}/site-packages")
    return (dirs + ([user] if os.path.isdir(user) else [])) or None


def _read_cfg(path: str) -> dict:
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, sep, value = line.partition("=")
                if sep:
                    out[key.strip().lower()] = value.strip()
    except (OSError, UnicodeDecodeError):
        pass
    return out


def files_show_torch(exe: str) -> Optional[bool]:
    """Whether ``exe``'s site-packages hold an installed torch (its dist-info, or the package
    with its version.py), read from files; None when the files cannot tell."""
    dirs = site_dirs(exe)
    if dirs is None:
        return None
    for d in dirs:
        if glob.glob(os.path.join(glob.escape(d), "torch-*.dist-info")) or \
                os.path.isfile(os.path.join(d, "torch", "version.py")):
            return True
    return False


def _asked_torch(exe: str) -> bool:
    """Ask the interpreter itself (stdlib-only probe, time-boxed, never imports torch)."""
    from ..facts import ok
    from ..probes import interp

    py, torch = interp.probe(exe, timeout=10.0)
    return ok(py) and torch is not None and ok(torch)


def own_has_torch() -> bool:
    """flexdoctor's own interpreter has a torch package (found on sys.path, not imported: 0.1 ms)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is not None  # a namespace dir named torch is not torch


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b) and _venv_root(a) == _venv_root(b)
    except OSError:
        return False


def candidates(environ) -> list:
    """(why, interpreter) where the user is, in the order tried."""
    import shutil

    out = []
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        folder = environ.get(var)
        exe = venv_python(folder) if folder and os.path.isdir(folder) else None
        if exe:
            out.append((var, os.path.abspath(exe)))
    for name in ("python", "python3"):
        exe = shutil.which(name, path=environ.get("PATH"))
        if exe:
            out.append((name, os.path.abspath(exe)))
    return out


def _trusted(exe: str) -> bool:
    """No other user can change ``exe``: the file it runs and the folders on the way to the path
    as given (a venv's bin/python is a link: the folder holding the link counts too)."""
    from .. import safety

    return safety.verdict(exe).safe and safety.verdict(os.path.dirname(exe)).safe


_CHOSEN: dict = {}  # (VIRTUAL_ENV, CONDA_PREFIX, PATH) -> Target: the early start and the command agree


def choose(python: Optional[str], environ=None, has_torch: Optional[Callable[[], bool]] = None,
           quiet: bool = False) -> Optional[Target]:
    """The interpreter to inspect, and why (see the module docstring). ``quiet``: None instead of
    a usage error when --python names nothing."""
    if python:
        path = from_flag(python, quiet=quiet)
        return Target(path, "flag") if path else None
    key = tuple(os.environ.get(v) for v in ("VIRTUAL_ENV", "CONDA_PREFIX", "PATH")) if environ is None else None
    if key is not None and key in _CHOSEN:
        return _CHOSEN[key]
    if (has_torch or own_has_torch)():
        chosen = Target(sys.executable, "self")
    else:
        chosen = _look_around(os.environ if environ is None else environ)
    if key is not None:
        _CHOSEN[key] = chosen
    return chosen


def _look_around(environ) -> Target:
    looked, seen = [], [sys.executable]
    for why, exe in candidates(environ):
        if any(_same(exe, s) for s in seen):
            continue
        seen.append(exe)
        if not _trusted(exe):
            continue
        found = files_show_torch(exe)
        if found is None:
            found = _asked_torch(exe)
        if found:
            return Target(exe, why, tuple(looked))
        looked.append((why, exe))
    return Target(sys.executable, "self", tuple(looked))


def note(target: Target) -> Optional[str]:
    """The line at the top of the report saying which interpreter is inspected and why, when it
    is not the obvious one; None otherwise."""
    if target.found_elsewhere:
        where = t(f"interp.why.{'PATH' if target.why in ('python', 'python3') else target.why}", name=target.why)
        return t("interp.chosen", python=target.path, where=where, own=sys.executable)
    if target.why == "self" and target.looked:
        places = "; ".join(f"{p} ({w})" for w, p in target.looked)
        return t("interp.none_found", own=sys.executable, looked=places)
    return None


def with_note(report: str, target: Optional[Target], fmt: str) -> str:
    """``report`` with :func:`note` as its first line where the format is read by people (text,
    markdown, the GitHub log); on stderr for the formats tools parse (json, junit)."""
    line = note(target) if target is not None else None
    if line is None:
        return report
    # Paths are data: no terminal control, no GitHub log command (`##[` anywhere, `::` first).
    line = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in line).replace("##[", "#\\#[")
    if fmt in ("json", "junit"):
        import typer

        typer.echo(line, err=True)
        return report
    if fmt == "text":
        import shutil
        import textwrap

        width = max(shutil.get_terminal_size((100, 24)).columns, 60)
        line = textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False)
    return line + "\n\n" + report


def choose_for_worker(python: Optional[str]) -> str:
    """The interpreter a command that runs torch work uses (warm-cache, bench): :func:`choose`,
    with its note on stderr when it is not the obvious one."""
    target = choose(python)
    line = note(target)
    if line is not None:
        import typer

        from ..render._escape import terminal_line

        typer.echo(terminal_line(line), err=True)  # paths are data (render/_escape.py)
    return target.path
