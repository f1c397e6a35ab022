"""Small pieces every command shares: usage errors (exit 2), interpreter lookup, list options,
atomic output files, CI detection. Imports nothing heavy."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import List, Optional

import typer

EXIT_USAGE = 2

CI_VARS = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD", "CIRCLECI",
           "TEAMCITY_VERSION", "BITBUCKET_BUILD_NUMBER", "DRONE")


def in_ci() -> bool:
    """Any common CI system: no colour, no spinners, no prompts."""
    return any(os.environ.get(v) for v in CI_VARS)


def t(key: str, /, **kwargs: object) -> str:
    from .text import t as text

    return text(key, **kwargs)


def usage_error(message: str) -> "typer.Exit":
    """Print one clear line (``message`` in the report language) and return the exit-2 exception
    for the caller to raise. The message often holds a path or a value from outside: shown as
    one line of visible text that holds no workflow command (render/_escape.py)."""
    from .render._escape import for_terminal, no_commands

    typer.echo(no_commands(for_terminal(t("cli.usage_error", message=message))), err=True)
    return typer.Exit(EXIT_USAGE)


def which_python(python: Optional[str]) -> Optional[str]:
    """The absolute path of the interpreter named by --python (default: this one), or None."""
    if not python:
        return sys.executable
    found = shutil.which(python) if os.sep not in python else os.path.expanduser(python)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return None
    return os.path.abspath(found)


def resolve_python(python: Optional[str]) -> str:
    found = which_python(python)
    if found is None:
        raise usage_error(t("cli.no_interpreter", python=python))
    return found


def split(values: Optional[List[str]]) -> list:
    """Repeatable, comma-separated option values as one flat list."""
    out: list = []
    for v in values or ():
        out += [x.strip() for x in str(v).split(",") if x.strip()]
    return out


def check_output(output: Optional[Path]) -> None:
    """Fail fast (exit 2) on an --output that cannot be written, before any long work."""
    if output is None:
        return
    if not str(output) or output.name in ("", ".", ".."):
        raise usage_error(t("cli.output_not_file", output=repr(str(output))))
    if output.is_symlink():
        raise usage_error(t("render-output.symlink", output=_shown(output)))
    if output.is_dir():
        raise usage_error(t("cli.is_directory", what=f"--output {_shown(output)}"))
    parent = output.parent if str(output.parent) else Path(".")
    if not output.exists() and not parent.is_dir():
        raise usage_error(t("cli.output_no_dir", output=_shown(output), parent=_shown(parent)))


def _shown(path: object) -> str:
    from .render._escape import for_terminal

    return for_terminal(os.fspath(path) if isinstance(path, os.PathLike) else path)


def write(text: str, output: Optional[Path]) -> None:
    """To stdout, or to --output FILE.

    A new or regular FILE is replaced atomically (a crash never leaves half a report, and an
    existing file is never truncated): the report goes to a new file that ``tempfile.mkstemp``
    makes in FILE's folder (O_CREAT|O_EXCL, never through a link that someone planted there),
    then ``os.replace``. Its mode is what the umask allows (0666 & ~umask), never more than the
    file it replaces had. A symbolic link at FILE is refused (exit 2): the link is someone's, and
    writing through it would write where the link's owner chose. A FIFO or a character device
    (/dev/null) is written through, opened without following links; anything else is refused.
    The report is written UTF-8; what UTF-8 cannot carry (an undecodable byte of a file name) as
    ``\\xNN``.
    """
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    check_output(output)
    from .render._escape import register

    data = text.encode("utf-8", register())
    try:
        st = os.lstat(output)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise usage_error(t("cli.file_error", what=f"--output {_shown(output)}", error=exc.strerror or exc))
    try:
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise usage_error(t("render-output.symlink", output=_shown(output)))
        if st is not None and (stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
            _write_through(output, data)
        elif st is not None and not stat.S_ISREG(st.st_mode):
            raise usage_error(t("render-output.not_regular", output=_shown(output)))
        else:
            _replace(output, data, None if st is None else stat.S_IMODE(st.st_mode))
    except OSError as exc:
        raise usage_error(t("cli.file_error", what=f"--output {_shown(output)}", error=exc.strerror or exc))


def _write_through(output: Path, data: bytes) -> None:
    """A FIFO or a device: opened as it is (no O_CREAT, no O_TRUNC, no link followed); a FIFO that
    no program reads is an error at once rather than a wait forever (O_NONBLOCK: ENXIO)."""
    flags = os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(output, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise usage_error(t("render-output.no_reader", output=_shown(output)))
        raise
    try:
        if not (stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISCHR(os.fstat(fd).st_mode)):
            raise usage_error(t("render-output.not_regular", output=_shown(output)))  # swapped meanwhile
        if hasattr(os, "set_blocking"):  # a reader is there: from now on, wait for it as usual
            os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _umask() -> int:
    """The process umask, read without changing it where Linux shows it (/proc/self/status)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _replace(output: Path, data: bytes, old_mode: Optional[int]) -> None:
    """``data`` into a new file beside ``output``, then renamed over it; the new file is removed
    if anything fails on the way."""
    import tempfile

    folder = str(output.parent) if str(output.parent) else "."
    fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=folder)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            mode = 0o666 & ~_umask()
            if hasattr(os, "fchmod"):  # (not on Windows, where mkstemp's file is the user's anyway)
                os.fchmod(fd, mode if old_mode is None else mode & old_mode)
        finally:
            os.close(fd)
        os.replace(tmp, output)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
