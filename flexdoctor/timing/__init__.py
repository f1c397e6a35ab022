"""Time a command's processes phase by phase: interpreter start, imports, Dynamo, the compile
cache, compiling, loading kernels, the first forward and backward, later steps and exit.

``measure(argv, env=..., timeout=...)`` runs the user's own command once with a stdlib-only
bootstrap in its Python processes (worker/_trace_boot/sitecustomize.py) and torch's structured
trace (``TORCH_TRACE``), and returns a typed ``Measurement``: per process (the command, each
torchrun rank) its phases, which add up to its wall time, its compiled frames and what torch
recorded about them. ``compare(argv, settings)`` times it with and without some settings.
`flexdoctor trace` (trace/) and warm-cache's verification use it. It knows nothing of the cache,
of checks or of words: those are the floors above.
"""

from __future__ import annotations

from .runner import compare, measure
from .model import COMPILE_PHASES, PHASES, Compile, Measurement, Phase, Process

__all__ = ["COMPILE_PHASES", "PHASES", "Compile", "Measurement", "Phase", "Process", "compare", "measure"]
