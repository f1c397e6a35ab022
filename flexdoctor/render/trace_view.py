"""Output of `flexdoctor trace`: text with a bar chart for people, JSON (sorted keys, versioned,
flexdoctor/schema/trace.schema.json) for tools, and a self-contained HTML time line
(trace_timeline.py). Text from outside (paths, frame names, torch's reasons, the command) is shown
with control characters escaped."""

from __future__ import annotations

import json
import shlex
import statistics

from .. import __version__
from ..timing import PHASES, Process
from ..trace import SCHEMA_VERSION, TraceResult
from ..trace.model import FAIL
from . import why_view
from ._escape import no_commands
from .clear_view import show

BAR = 28  # cells of the longest bar
EIGHTHS = " ▏▎▍▌▋▊▉"
MAX_FRAMES = 12
MAX_COLUMNS = 8  # processes side by side; more ranks are summed up as min / median / max
MAX_DETAIL_LINES = 4


def t(key: str, /, **kw) -> str:
    from ..text import t as text

    return text(key, **kw)


def _s(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def bar(fraction: float, cells: int = BAR) -> str:
    eighths = max(0, round(fraction * cells * 8))
    full, part = divmod(eighths, 8)
    return "█" * full + (EIGHTHS[part] if part else "")


def command_line(argv: list) -> str:
    return show(" ".join(shlex.quote(str(a)) for a in argv))


def who(p: Process) -> str:
    if p.role == "rank" and p.rank is not None:
        return t("trace.who.rank", rank=p.rank, pid=p.pid)
    return t(f"trace.who.{p.role if p.role in ('launcher', 'helper') else 'main'}", pid=p.pid)


def _phase_word(name: str, p: Process = None) -> str:
    word = t(f"trace.phase.{name}")
    inferred = p is not None and any(ph.name == name and not ph.measured for ph in p.phases)
    return word + (" (~)" if inferred else "")


# --------------------------------------------------------------------------- phases


def _one_process(p: Process) -> list:
    wall = p.wall or 0.0
    out = [t("trace.title.phases", who=who(p), seconds=_s(wall))]
    width = max((len(_phase_word(ph.name, p)) for ph in p.phases), default=10)
    for ph in p.phases:
        share = ph.seconds / wall if wall else 0.0
        out.append(f"  {_phase_word(ph.name, p):<{width}}  {ph.seconds:8.2f} s {share * 100:4.0f}%  {bar(share)}")
    total = sum(ph.seconds for ph in p.phases)
    out.append("  " + t("trace.total", total=_s(total), wall=_s(wall)))
    return out + _notes(p)


def _notes(p: Process) -> list:
    out = []
    if any(not ph.measured and ph.name != "other" for ph in p.phases):
        out.append("  " + t("trace.inferred"))
    if p.boot is None:
        out.append("  " + t("trace.no_bootstrap"))
    marks = [f"{t('trace.milestone.' + k)} {v:.2f}" for k, v in p.milestones.items() if k != "bootstrap"]
    if marks:
        out.append("  " + t("trace.milestones", marks=" · ".join(marks)))
    return out


def _columns(procs: list) -> tuple:
    """(headers, per-phase values) for side-by-side processes; many ranks become min/median/max."""
    if len(procs) <= MAX_COLUMNS:
        heads = [(f"r{p.rank}" if p.rank is not None else str(p.pid)) for p in procs]
        return heads, {ph: [p.seconds(ph) for p in procs] for ph in PHASES}, [p.wall or 0.0 for p in procs]
    heads = ["min", "median", "max"]

    def three(values):
        return [min(values), statistics.median(values), max(values)]

    walls = [p.wall or 0.0 for p in procs]
    return heads, {ph: three([p.seconds(ph) for p in procs]) for ph in PHASES}, three(walls)


def _many_processes(procs: list) -> list:
    heads, values, walls = _columns(procs)
    present = [ph for ph in PHASES if any(v > 0 for v in values[ph])]
    width = max((len(_phase_word(ph)) for ph in present), default=10)
    slowest = max(procs, key=lambda p: p.wall or 0.0)
    out = [t("trace.title.phases_many", count=len(procs)),
           "  " + " " * width + "".join(f"{h:>9}" for h in heads)]
    for ph in present:
        share = slowest.seconds(ph) / slowest.wall if slowest.wall else 0.0
        out.append(f"  {_phase_word(ph):<{width}}" + "".join(f"{v:9.2f}" for v in values[ph]) + f"  {bar(share, 20)}")
    out.append(f"  {t('trace.wall'):<{width}}" + "".join(f"{v:9.2f}" for v in walls))
    out.append("  " + t("trace.bar_of", who=who(slowest)))
    return out + _notes(slowest)


def phase_lines(result: TraceResult) -> list:
    m = result.measurement
    workers = m.workers()
    out = []
    launcher = [p for p in m.processes if p.role == "launcher"]
    for p in launcher:
        out.append(t("trace.launcher", who=who(p), seconds=_s(p.wall)))
    if len(workers) == 1:
        out += _one_process(workers[0])
    elif workers:
        out += _many_processes(workers)
    return out


# --------------------------------------------------------------------------- frames


def _frame_line(p: Process, f) -> str:
    c = p.log.compiles[f.index]
    where = show(f"{c.filename}:{c.line}" if c.filename and c.line else (c.filename or ""))
    parts = ", ".join(f"{t('trace.part.' + k)} {v:.2f}" for k, v in sorted(f.parts.items(), key=lambda kv: -kv[1])
                      if v >= 0.005)
    name = show(c.name or "?") + (" " + t("trace.eager_flex") if c.flex_eager else "")
    return t("trace.frame", id=show(c.compile_id), frame=name, where=f" ({where})" if where else "",
             seconds=_s(f.seconds), parts=parts or "-")


def frame_lines(result: TraceResult) -> list:
    out = []
    for p in result.measurement.workers()[:1]:  # several ranks compile the same frames: the first
        if not p.frames or p.log is None:
            continue
        out += ["", t("trace.title.frames", who=who(p))]
        slowest = sorted(p.frames, key=lambda f: -f.seconds)
        out += ["  " + _frame_line(p, f) for f in slowest[:MAX_FRAMES]]
        if len(slowest) > MAX_FRAMES:
            out.append("  " + t("trace.frame_more", count=len(slowest) - MAX_FRAMES))
    return out


# --------------------------------------------------------------------------- findings, advice


def _finding_args(f) -> dict:
    a = {k: (show(str(v)) if v is not None else "?") for k, v in f.args.items() if not isinstance(v, list)}
    a.update({k: show(", ".join(str(x) for x in v)) for k, v in f.args.items() if isinstance(v, list)})
    for k in ("at_s", "seconds"):
        if isinstance(f.args.get(k), (int, float)):
            a["at" if k == "at_s" else k] = f"{f.args[k]:.1f}"
    return a


def finding_text(f) -> str:
    args = _finding_args(f)
    key = f.code
    if f.code == "command_failed":
        key = f"command_failed_{f.args.get('how')}"
    elif f.code == "recompile_limit" and f.args.get("steps") is not None:
        key = "recompile_limit_steps"
    text = t(f"trace.finding.{key}", **args)
    if f.ranks:
        text += t("trace.on_ranks", ranks=", ".join(str(r) for r in f.ranks))
    return text


def finding_lines(result: TraceResult, wrap) -> list:
    out = ["", t("trace.title.findings")]
    if not result.findings:
        return out + wrap(t("trace.title.findings_none"), "  ", "    ")
    for f in result.findings:
        out += wrap(("✗ " if f.severity == FAIL else "! ") + finding_text(f), "  ", "    ")
        for d in f.details[:MAX_DETAIL_LINES]:
            first = [ln for ln in str(d).splitlines() if ln.strip()][:2]
            out += ["      " + show(ln.strip())[:200] for ln in first]
        if len(f.details) > MAX_DETAIL_LINES:
            out.append("      " + t("why.more", count=len(f.details) - MAX_DETAIL_LINES))
    return out


def advice_text(a) -> str:
    key = a.code
    if a.code == "compile_threads" and a.args.get("after_warm"):
        key = "compile_threads_after_warm"
    elif a.code in ("compile_on_one_rank", "aot_precompile") and not a.args.get("available"):
        key = f"{a.code}_newer"
    elif a.code == "mark_dynamic" and a.args.get("flex"):
        key = "mark_dynamic_flex"
    elif a.code == "graph_break" and not a.args.get("hint"):
        key = "graph_break_nohint"
    args = {k: show(str(v)) for k, v in a.args.items() if k not in ("after_warm", "available", "flex")}
    for k in ("exit_s", "start_s", "seconds"):
        if isinstance(a.args.get(k), (int, float)):
            args[k] = f"{a.args[k]:.1f}"
    return t(f"trace.advice.{key}", **args)


def _measured(a) -> str:
    if not a.env:
        return ""
    if a.measured is None:
        return t("trace.advice.not_measured")
    settings = " ".join(f"{k}={v}" for k, v in a.env.items())
    return t("trace.advice.measured", without=_s(a.measured.get("without")), after=_s(a.measured.get("with")),
             settings=settings, runs=a.measured.get("runs", 1))


def advice_lines(result: TraceResult, wrap) -> list:
    if not result.advice:
        return []
    out = ["", t("trace.title.advice")]
    for a in result.advice:
        out += wrap("→ " + advice_text(a), "  ", "    ")
        note = _measured(a)
        if note:
            out += wrap(note, "    ", "      ")
        if a.command:  # never wrapped: it is copied as it is
            out.append(f"    {'>>>' if a.python else '$'} {show(a.command)}")
    return out


# --------------------------------------------------------------------------- the whole report


def _head(result: TraceResult) -> list:
    m = result.measurement
    out = [t("trace.header", command=command_line(result.command))]
    if m.started and not m.timed_out and m.wall is not None:
        out.append(t("trace.ran", seconds=_s(m.wall), code=m.returncode))
    version = next((p.torch_version for p in m.workers() if p.torch_version), None)
    if version:
        out.append(t("trace.torch", version=show(version)))
    out.append(t("why.cache_dir", path=show(result.cache_dir), source=result.cache_source))
    if not m.booted:
        out.append(t("trace.no_bootstrap_any"))
    return out


def _cache_lines(result: TraceResult, wrap) -> list:
    why = result.why
    if why is None:
        return []
    out = ["", t("trace.title.cache")]
    if not why.verdicts and why.problem in ("no_trace", "no_compile"):
        return out + wrap(t("trace.cache_nothing"), "  ", "    ")
    if not why.verdicts and why.problem == "no_lookups":
        return out + wrap(t("trace.cache_no_lookups", count=why.compiles), "  ", "    ")
    return out + why_view.section_lines(why, wrap)


def _rerun_lines(result: TraceResult) -> list:
    out = []
    for r in result.reruns:
        settings = " ".join(f"{k}={v}" for k, v in r.env_changes.items()) or t("trace.as_is")
        out.append(t("trace.rerun", settings=show(settings), wall=_s(r.wall), code=r.returncode))
    return ([""] + out) if out else []


def render_text(result: TraceResult, width: int = 100, timeline: str = None) -> str:
    wrap = why_view.wrapper(width)
    out = _head(result)
    if result.measurement.started:
        out += [""] + phase_lines(result) + frame_lines(result) + _cache_lines(result, wrap)
    out += finding_lines(result, wrap) + advice_lines(result, wrap) + _rerun_lines(result)
    if timeline:
        out += ["", t("trace.timeline", path=show(timeline))]
    if result.measurement.trace_dir:
        out.append(t("why.trace_kept", path=show(result.measurement.trace_dir)))
    return no_commands("\n".join(out) + "\n")  # a path may hold ``##[`` anywhere in a line


def _r(x, n: int = 4):
    return round(x, n) if isinstance(x, float) else x


def _frame_dict(p: Process, f) -> dict:
    c = p.log.compiles[f.index]
    return {"compile_id": c.compile_id, "frame": c.name, "filename": c.filename, "line": c.line,
            "caller": c.caller, "start_s": _r(c.start - p.start) if c.start is not None and p.start else None,
            "seconds": _r(f.seconds), "parts": {k: _r(v) for k, v in f.parts.items()}, "flex_eager": c.flex_eager,
            "recompile_reasons": list(c.recompile_reasons), "graph_breaks": list(c.graph_breaks),
            "fail_type": c.fail_type, "fail_reason": c.fail_reason}


def process_dict(p: Process, spawn) -> dict:
    return {
        "pid": p.pid, "ppid": p.ppid, "role": p.role, "rank": p.rank, "local_rank": p.local_rank,
        "world_size": p.world_size, "bootstrap": p.boot is not None,
        "start_s": _r(p.start - spawn) if p.start is not None and spawn is not None else None,
        "wall_s": _r(p.wall), "torch_version": p.torch_version,
        "phases": [{"name": ph.name, "seconds": _r(ph.seconds), "measured": ph.measured} for ph in p.phases],
        "milestones": dict(p.milestones), "first_forward_end": p.first_forward_end,
        "backward_calls": p.facts.get("backward"), "optimizer_steps": p.facts.get("steps"),
        "compile_threads": p.facts.get("compile_threads"),
        "frames": [_frame_dict(p, f) for f in p.frames if p.log is not None],
    }


def _advice_dict(a) -> dict:
    return {"code": a.code, "args": dict(a.args), "command": a.command, "python": a.python, "env": dict(a.env),
            "measured": a.measured}


def to_dict(result: TraceResult) -> dict:
    m = result.measurement
    return {
        "schema_version": SCHEMA_VERSION, "kind": "flexdoctor-trace", "flexdoctor_version": __version__,
        "command": list(result.command), "returncode": m.returncode, "timed_out": m.timed_out,
        "started": m.started, "wall_s": _r(m.wall), "exit_code": result.exit_code,
        "torch_version": next((p.torch_version for p in m.workers() if p.torch_version), None),
        "bootstrap": m.booted, "processes": [process_dict(p, m.spawn) for p in m.processes],
        "findings": [{"code": f.code, "severity": f.severity, "ranks": list(f.ranks), "args": dict(f.args),
                      "details": list(f.details)} for f in result.findings],
        "advice": [_advice_dict(a) for a in result.advice],
        "cache": why_view.section_dict(result.why) if result.why is not None else None,
        "reruns": [{"env_changes": dict(r.env_changes), "wall_s": _r(r.wall), "returncode": r.returncode,
                    "processes": [process_dict(p, r.spawn) for p in r.workers()]} for r in result.reruns],
        "trace_dir": m.trace_dir,
    }


def render_json(result: TraceResult) -> str:
    return json.dumps(to_dict(result), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render(result: TraceResult, fmt: str = "text", width: int = 100, timeline: str = None) -> str:
    if fmt == "json":
        return render_json(result)
    return render_text(result, width, timeline)
