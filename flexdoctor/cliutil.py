"""Small pieces every command shares: usage errors (exit 2), interpreter lookup, list options,
atomic output files, CI detection. Imports nothing heavy."""

from __future__ import annotations

import os
import shutil
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
    for the caller to raise."""
    typer.echo(t("cli.usage_error", message=message), err=True)
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
    if output.is_dir():
        raise usage_error(t("cli.is_directory", what=f"--output {output}"))
    parent = output.parent if str(output.parent) else Path(".")
    if not output.exists() and not parent.is_dir():
        raise usage_error(t("cli.output_no_dir", output=output, parent=parent))


def write(text: str, output: Optional[Path]) -> None:
    """To stdout, or to --output.

    A regular file (or a new one) is replaced atomically, so a crash never leaves half a report.
    Anything else (a symlink, /dev/null, /dev/stdout, a FIFO) is written through as it is:
    renaming over it would replace the link or the device node itself.
    """
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    check_output(output)
    try:
        if os.path.lexists(output) and (output.is_symlink() or not output.is_file()):
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
            return
        tmp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, output)
        finally:
            if tmp.exists():
                tmp.unlink()
    except OSError as exc:
        raise usage_error(t("cli.file_error", what=f"--output {output}", error=exc.strerror or exc))
