"""The typed result of `flexdoctor trace`: the measurement, the cache section, what went wrong
silently and what to change. Words are catalogue keys with their values (en.trace.toml); the
views word them (render/trace_view.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..cache.why import WhyResult
from ..timing import Measurement

SCHEMA_VERSION = 1
FAIL, WARN = "fail", "warn"


@dataclass
class Finding:
    """Something that went wrong silently (``code``: en.trace.toml ``trace.finding.<code>``)."""

    code: str  # flex_uncompiled | recompile_limit | recompiles | dynamic_recompile | graph_break
    #            | cache_miss | cache_bypass | command_failed
    severity: str = WARN
    ranks: list = field(default_factory=list)  # ranks (or pids without a rank) it was seen on
    args: dict = field(default_factory=dict)  # values for the words (English data)
    details: list = field(default_factory=list)  # torch's own words (guard failures, reasons), as data


@dataclass
class Advice:
    """What to change (``code``: ``trace.advice.<code>``), measured where it can be."""

    code: str  # compile_threads | warm_cache | mark_dynamic | pad | recompile_limit | compile_flex
    #            | graph_break | compile_on_one_rank | aot_precompile
    args: dict = field(default_factory=dict)
    command: Optional[str] = None  # a line to run or to put in the script, exactly as printed
    python: bool = False  # ``command`` is a line of Python for the user's script, not a shell line
    env: dict = field(default_factory=dict)  # settings it means (for --measure)
    measured: Optional[dict] = None  # {"without": s, "with": s, "runs": n} when --measure timed it


@dataclass
class TraceResult:
    command: list
    cache_dir: str
    cache_source: str = "default"
    measurement: Optional[Measurement] = None
    why: Optional[WhyResult] = None  # the cache section (what `cache why` prints)
    findings: list = field(default_factory=list)
    advice: list = field(default_factory=list)
    error: Optional[str] = None  # the command failed, timed out, or could not start
    reruns: list = field(default_factory=list)  # --measure: the Measurements with the advice applied

    @property
    def exit_code(self) -> int:
        """0 nothing went wrong; 1 a finding (a failed command is one)."""
        return 1 if self.findings or self.error else 0
