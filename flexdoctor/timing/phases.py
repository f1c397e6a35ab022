"""Cut one process's life into phases (pure: records in, phases out).

Every moment from the process's start to its end goes to exactly one phase, so the phases add
up to the wall time by construction. Three kinds of interval compete for each moment:

- measured spans: the bootstrap's imports and compile-worker pool (level 3: they win over torch's
  events, so an import inside a compile counts as the import, and the cache key torch computes
  while starting the pool counts as the pool's start), then torch's own compile events (level 2:
  Dynamo, cache, compile, kernel loading), the innermost one winning (the latest to start, then
  the shortest);
- the first backward call (level 1): what is not a measured span inside it is "first backward";
- positions (level 0), for everything else: before the bootstrap ran (interpreter start), before
  the first compile (the script), up to the first backward call, or without one the first
  optimizer step, or without one the end of the last compile (first forward), up to the script's
  last line (later steps), then the other atexit handlers and the interpreter's teardown.
"""

from __future__ import annotations

import heapq
from typing import Optional

from .model import PHASES, FrameTime, Phase, Process, Span

_LEVEL = {"positions": 0, "backward": 1, "torch": 2, "bootstrap": 3}


def _script_end(p: Process) -> float:
    for t in (p.end, p.atexit, p.exit):
        if t is not None:
            return t
    return p.start or 0.0


def _first_forward_end(p: Process, compile_spans: list) -> tuple:
    """(time, what cut it) where the first forward stops counting."""
    if p.backward:
        return p.backward[0].t0, "backward"
    if p.steps:
        return p.steps[0], "step"
    if compile_spans:
        return max(s.t1 for s in compile_spans), "last_compile"
    return None, None


def _positions(p: Process, compile_spans: list) -> list:
    """Level-0 intervals: where a moment no measured span covers belongs."""
    start, exit_ = p.start, p.exit
    if p.boot is None:
        return [Span("other", start, exit_)]
    end = _script_end(p)
    first = min((s.t0 for s in compile_spans), default=None)
    ff_end, p.first_forward_end = _first_forward_end(p, compile_spans)
    out = [Span("interpreter", start, p.boot)]
    if first is None or ff_end is None:
        out.append(Span("script", p.boot, end))
    else:
        first = min(max(first, p.boot), end)
        ff_end = min(max(ff_end, first), end)
        out += [Span("script", p.boot, first), Span("first_forward", first, ff_end),
                Span("later_steps", ff_end, end)]
    atexit = p.atexit if p.atexit is not None and p.atexit >= end else None
    if atexit is not None:
        out += [Span("exit_atexit", end, atexit), Span("exit_teardown", atexit, exit_)]
    else:
        out.append(Span("exit_atexit", end, exit_))
    return out


def compile_spans(p: Process) -> list:
    """torch's events that belong to a compile (not, say, a cache key torch computed elsewhere)."""
    return [s for s in (p.log.spans if p.log else []) if s.compile is not None]


def _candidates(p: Process) -> list:
    """(level, Span) for every interval that may own a moment."""
    torch_spans = list(p.log.spans) if p.log else []
    out = [(_LEVEL["torch"], s) for s in torch_spans] + [(_LEVEL["bootstrap"], s) for s in p.imports + p.pool]
    if p.backward:
        b = p.backward[0]
        out.append((_LEVEL["backward"], Span("first_backward", b.t0, b.t1)))
    out += [(_LEVEL["positions"], s) for s in _positions(p, compile_spans(p))]
    return out


def sweep(candidates: list, start: float, stop: float, segments: Optional[list] = None) -> dict:
    """(phase, compile index) -> seconds: each moment in [start, stop) to its winning interval;
    ``segments`` (if given) gets the time line: [phase, t0, t1], neighbours of one phase merged."""
    spans = []
    for level, s in candidates:
        t0, t1 = max(s.t0, start), min(s.t1, stop)
        if t1 > t0:
            spans.append((level, t0, t1, s))
    bounds = sorted([(t0, 1, i) for i, (_, t0, _, _) in enumerate(spans)]
                    + [(t1, 0, i) for i, (_, _, t1, _) in enumerate(spans)])
    active: list = []
    gone: set = set()
    out: dict = {}
    prev = start
    for t, opening, i in bounds:
        while active and active[0][-1] in gone:
            heapq.heappop(active)
        if active and t > prev:
            s = spans[active[0][-1]][3]
            key = (s.kind, s.compile)
            out[key] = out.get(key, 0.0) + (t - prev)
            if segments is not None:
                if segments and segments[-1][0] == s.kind and segments[-1][2] >= prev:
                    segments[-1][2] = t
                else:
                    segments.append([s.kind, prev, t])
        prev = max(prev, t)
        if opening:
            level, t0, t1, _ = spans[i]
            heapq.heappush(active, (-level, -t0, t1 - t0, i))
        else:
            gone.add(i)
    return out


def _milestones(p: Process, compile_spans: list) -> dict:
    if p.start is None:
        return {}
    marks = {"bootstrap": p.boot,
             "torch_imported": max((s.t1 for s in p.imports if s.kind == "import_torch"), default=None),
             "first_compile": min((s.t0 for s in compile_spans), default=None),
             "first_backward_done": p.backward[0].t1 if p.backward else None,
             "first_step": p.steps[0] if p.steps else None,
             "script_end": p.end, "exit": p.exit}
    return {k: round(v - p.start, 4) for k, v in marks.items() if v is not None}


def analyse(p: Process) -> None:
    """Fill ``p.phases``, ``p.frames`` and ``p.milestones`` from its records."""
    if p.start is None:
        p.start = p.boot
    if p.exit is None:
        p.exit = max((t for t in (p.atexit, p.end, p.boot) if t is not None), default=None)
    if p.start is None or p.exit is None or p.exit < p.start:
        return
    p.segments = []
    owned = sweep(_candidates(p), p.start, p.exit, p.segments)
    totals: dict = {}
    frames: dict = {}
    for (phase, index), seconds in owned.items():
        totals[phase] = totals.get(phase, 0.0) + seconds
        if index is not None:
            parts = frames.setdefault(index, {})
            parts[phase] = parts.get(phase, 0.0) + seconds
    inferred_cut = p.first_forward_end == "last_compile"
    inferred = {"other"} | ({"first_forward", "later_steps"} if inferred_cut else set())
    p.phases = [Phase(name, round(totals.get(name, 0.0), 6), measured=name not in inferred)
                for name in PHASES if totals.get(name, 0.0) > 0.0]
    p.frames = [FrameTime(i, round(sum(parts.values()), 6), {k: round(v, 6) for k, v in parts.items()})
                for i, parts in sorted(frames.items())]
    p.milestones = _milestones(p, compile_spans(p))


def phase_seconds(processes: list, name: str) -> float:
    return sum(p.seconds(name) for p in processes)


def total(p: Process) -> float:
    return sum(ph.seconds for ph in p.phases)


def other_share(p: Process) -> Optional[float]:
    """The share of the wall time no record explains (the "other" phase)."""
    if not p.wall:
        return None
    return p.seconds("other") / p.wall
