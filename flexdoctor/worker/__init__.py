"""The bottom floor: the processes flexdoctor runs, and nothing else (see docs/ARCHITECTURE.md).

- ``run.py``: the one subprocess runner (time box, live output, the wire's parent side).
- ``lifetime.py``: nothing flexdoctor starts outlives it (process groups, subreaper, signals).
- ``_wire.py``: the stage/part/result line protocol, shared by both sides.
- ``_*.py`` scripts: run BY THE TARGET INTERPRETER (``--python``), stdlib (+ torch) only; each
  imports ``_wire`` as a sibling, never flexdoctor.

This package imports nothing from the rest of flexdoctor.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
MIN_PYTHON = (3, 8)  # what the worker scripts' syntax and stdlib use (tests/test_worker.py)


def script(name: str) -> Path:
    """The path of a worker script in this folder, e.g. ``script("_torch_probe.py")``."""
    path = _HERE / name
    if not path.is_file():
        raise FileNotFoundError(f"no worker script {name} in {_HERE}")
    return path
