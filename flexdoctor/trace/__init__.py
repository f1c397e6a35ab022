"""`flexdoctor trace -- CMD`: where the time of a command went, phase by phase and per rank (the
timing floor), whether its compiled graphs hit the compile cache (cache/why.py, the section
`flexdoctor cache why` prints), what went wrong silently (uncompiled flex_attention, recompiles
and the recompile limit, graph breaks, cache misses) and what to change, measured where it can be.

``run(argv, cache_dir)`` -> ``TraceResult`` (model.py); findings.py is pure and judges a
``timing.Measurement``; render/trace_view.py shows the result.
"""

from __future__ import annotations

from .model import SCHEMA_VERSION, Advice, Finding, TraceResult
from .tracer import run

__all__ = ["SCHEMA_VERSION", "Advice", "Finding", "TraceResult", "run"]
