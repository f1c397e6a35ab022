"""The typed results of timing a command: spans, phases, compiled frames, processes.

Every time is ``time.time()`` seconds (the clock torch's structured trace writes too), so the
records of the bootstrap, of torch and of flexdoctor's own watcher line up across processes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

# The phases of one process, in the order they are shown. Every moment between the process's
# start and its end belongs to exactly one of them (phases.py), so they add up to its wall time.
PHASES = (
    "interpreter",      # the process started -> Python's start-up is over (the bootstrap runs)
    "script",           # the user's code outside the phases below, before the first compile
    "import_torch",     # import torch
    "import_compiler",  # import torch._dynamo, torch._inductor (compile_fx), triton
    "pool_start",       # Inductor's compile-worker pool starting (in this process)
    "dynamo",           # Dynamo: tracing bytecode, building guards (torch's own events)
    "cache",            # compile-cache lookups: computing keys, reading entries
    "compile",          # AOT autograd, Inductor lowering and code generation, autotuning
    "kernel_load",      # loading compiled kernels (a cache hit's code, Triton binaries)
    "first_forward",    # running, from the first compile to the first backward (or the last compile)
    "first_backward",   # running the first backward call
    "later_steps",      # running after that, until the script's last line
    "exit_pool",        # after the last line: shutting the compile-worker pool down
    "exit_atexit",      # after the last line: the other atexit handlers
    "exit_teardown",    # after the last atexit handler until the process is gone
    "other",            # not measured (no bootstrap in this process)
)
# A phase is "measured" when its boundaries come from records (the bootstrap's, torch's, the
# watcher's); "first_forward" and "later_steps" are inferred when nothing marked the end of the
# first step (no backward call, no optimizer step): they are cut at the end of the last compile.
COMPILE_PHASES = ("dynamo", "cache", "compile", "kernel_load")
FLEX_FILE = "torch/nn/attention/flex_attention.py"
_LIMIT = re.compile(r"(recompile|cache[_ ]size)[_ ]limit", re.I)
FLEX_EAGER_FRAME = "_flex_attention_hop_wrapper"


@dataclass
class Span:
    """One timed interval: a torch event, an import, the pool, a backward call."""

    kind: str  # a phase of PHASES, or "backward" (a region the phases are cut by)
    t0: float
    t1: float
    name: str = ""  # torch's event name, the module imported...
    compile: Optional[int] = None  # index into TorchLog.compiles (torch's events only)


@dataclass
class Compile:
    """One Dynamo compile of a frame (``compile_id``), from torch's structured trace."""

    compile_id: str
    frame_id: Optional[int] = None
    name: Optional[str] = None  # the compiled function
    filename: Optional[str] = None
    line: Optional[int] = None
    caller: Optional[dict] = None  # the user's frame that called it: {"name", "filename", "line"}
    start: Optional[float] = None
    seconds: Optional[float] = None  # entire_frame_compile_time_s
    backward_start: Optional[float] = None  # the lazily compiled backward (bwd_compilation_metrics)
    fail_type: Optional[str] = None
    fail_reason: Optional[str] = None
    recompile_reasons: list = field(default_factory=list)  # guard failures that caused this compile
    graph_breaks: list = field(default_factory=list)  # {"where", "reason"}
    restart_reasons: list = field(default_factory=list)
    symbols: list = field(default_factory=list)  # dynamic sizes created: {"symbol", "source"}
    cache_size: Optional[int] = None  # compiles of this frame before this one
    metrics: bool = False  # its compilation_metrics record was seen

    @property
    def flex_eager(self) -> bool:
        """flex_attention called without torch.compile: it compiles its inner wrapper with the
        eager backend (torch/nn/attention/flex_attention.py, 2.5-2.13) and runs the unfused path."""
        return self.name == FLEX_EAGER_FRAME and (self.filename or "").replace("\\", "/").endswith(FLEX_FILE)

    @property
    def limit_hit(self) -> bool:
        """Dynamo gave up on this frame: "Dynamo recompile limit exceeded" (2.13), "recompile_limit
        reached" / "cache_size_limit reached" (older; also the accumulated_* limits)."""
        return bool(_LIMIT.search(self.fail_reason or ""))


@dataclass
class TorchLog:
    """What torch's structured trace says about one process."""

    pid: Optional[int]
    rank: Optional[int] = None  # from the trace file's name (rank_N_), when dist was up
    files: int = 0
    torch_version: Optional[str] = None
    spans: list = field(default_factory=list)  # Span, phases dynamo/cache/compile/kernel_load
    compiles: list = field(default_factory=list)  # Compile, in the order they started


@dataclass
class Phase:
    name: str  # one of PHASES
    seconds: float
    measured: bool = True


@dataclass
class FrameTime:
    """Where one compile's time went."""

    index: int  # into TorchLog.compiles
    seconds: float  # the compile's own wall time (its outermost torch events)
    parts: dict = field(default_factory=dict)  # phase -> seconds (innermost event wins)


@dataclass
class Process:
    """One Python process of the command (or the command itself, when it is no Python)."""

    pid: int
    ppid: Optional[int] = None
    role: str = "main"  # main | launcher | rank | helper
    rank: Optional[int] = None
    local_rank: Optional[int] = None
    world_size: Optional[int] = None
    start: Optional[float] = None  # the process started (spawn time for the command itself)
    boot: Optional[float] = None  # the bootstrap ran (None: no bootstrap in this process)
    end: Optional[float] = None  # the script's last line ran
    atexit: Optional[float] = None  # the last atexit handler ran
    exit: Optional[float] = None  # the process was gone (flexdoctor's watcher)
    imports: list = field(default_factory=list)  # Span, kind import_torch | import_compiler
    pool: list = field(default_factory=list)  # Span, kind pool_start | exit_pool
    backward: list = field(default_factory=list)  # Span, kind backward (first calls)
    steps: list = field(default_factory=list)  # times of the first optimizer steps
    facts: dict = field(default_factory=dict)  # read at exit: torch, compile_threads, backward, steps...
    log: Optional[TorchLog] = None
    phases: list = field(default_factory=list)  # Phase
    frames: list = field(default_factory=list)  # FrameTime
    segments: list = field(default_factory=list)  # the time line: [phase, t0, t1], in order
    milestones: dict = field(default_factory=dict)  # name -> seconds since start
    first_forward_end: Optional[str] = None  # what cut first_forward: backward | step | last_compile

    @property
    def wall(self) -> Optional[float]:
        if self.start is None or self.exit is None:
            return None
        return max(self.exit - self.start, 0.0)

    def seconds(self, phase: str) -> float:
        return sum(p.seconds for p in self.phases if p.name == phase)

    @property
    def torch_version(self) -> Optional[str]:
        return self.facts.get("torch") or (self.log.torch_version if self.log else None)


@dataclass
class Measurement:
    """One run of a command under the bootstrap and torch's structured trace."""

    command: list
    env_changes: dict = field(default_factory=dict)  # settings this run added (e.g. COMPILE_THREADS)
    returncode: Optional[int] = None
    started: bool = True
    start_error: Optional[str] = None
    start_errno: Optional[int] = None
    timed_out: bool = False
    spawn: Optional[float] = None
    wall: Optional[float] = None  # spawn -> the command's own process was gone
    processes: list = field(default_factory=list)  # Process: the command first
    inspected: object = None  # what ``inspect`` returned for the trace dir (cache/why reads it)
    trace_dir: Optional[str] = None  # kept only when asked to

    @property
    def top(self) -> Optional[Process]:
        return self.processes[0] if self.processes else None

    def workers(self) -> list:
        """The processes that ran the user's step: the ranks, else the main process."""
        ranks = [p for p in self.processes if p.role == "rank"]
        if ranks:
            return sorted(ranks, key=lambda p: (p.rank if p.rank is not None else 1 << 30, p.pid))
        return [p for p in self.processes if p.role == "main"][:1] or self.processes[:1]

    @property
    def booted(self) -> bool:
        return any(p.boot is not None for p in self.processes)
