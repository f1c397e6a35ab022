"""Start ``import torch`` in the target interpreter before anything else is imported.

``import torch`` (seconds) is the slowest thing `flexdoctor check` and `flexdoctor facts` do, and
it needs nothing from argument parsing but ``--python``. So the entry point
(``flexdoctor.__main__:main``) calls :func:`early` first, importing only the standard library and
the subprocess runner; the torch runtime probe (probes/torch_runtime.py) collects the process
later. Everything else (typer, the probes, the checks) is imported while torch imports.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import time
from typing import Optional

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes", "_torch_probe.py")
COMMANDS = ("check", "facts")
NO_TORCH = ("--static", "-h", "--help", "--version")

# python -> (process, monotonic start time): started here, collected by torch_runtime.probe.
STARTED: dict = {}


def which_python(python: Optional[str]) -> Optional[str]:
    """The absolute path of the interpreter named by --python (default: this one), or None."""
    if not python:
        return sys.executable
    found = shutil.which(python) if os.sep not in python else os.path.expanduser(python)
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return None
    return os.path.abspath(found)


def start(python: str) -> None:
    """Start the torch probe in ``python`` unless it runs already."""
    if python in STARTED:
        return
    from .probes import _subprocess

    proc = _subprocess.start([python, SCRIPT])
    if isinstance(proc, _subprocess.Completed):
        return  # could not start: the probe starts it again and reports why
    STARTED[python] = (proc, time.monotonic())
    atexit.register(_subprocess.kill, proc)  # never leave it behind (usage errors, Ctrl-C)


def early(argv: list) -> None:
    """Start the torch probe when ``argv`` is a `check` or `facts` that will import torch."""
    words = [a for a in argv if not a.startswith("-")]
    if not words or words[0] not in COMMANDS:
        return
    if any(a in NO_TORCH or a.startswith("--from-facts") for a in argv):
        return
    python = None
    for i, a in enumerate(argv):
        if a == "--python" and i + 1 < len(argv):
            python = argv[i + 1]
        elif a.startswith("--python="):
            python = a.split("=", 1)[1]
    target = which_python(python)
    if target is not None:
        start(target)
