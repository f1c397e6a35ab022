"""What went wrong silently in a timed run, and what to change (pure: a Measurement and the cache
section in, Findings and Advice out).

Everything comes from torch's own records (timing/torchlog.py) and the bootstrap's; torch's
words (guard failures, graph-break reasons) are kept as data and shown escaped.
"""

from __future__ import annotations

import re
import shlex
from typing import Optional

from ..timing import Measurement, Process
from ..timing.model import Compile
from .model import FAIL, WARN, Advice, Finding

_LIMIT = re.compile(r"currently set to (\d+)")
_KNOB = re.compile(r"\b((?:accumulated_)?(?:recompile_limit|cache_size_limit))\b")
_SIZE = re.compile(r"tensor '([A-Za-z_]\w*)' size mismatch at index (\d+)")  # an argument's name only
_SOURCE = re.compile(r"^L\['([A-Za-z_]\w*)'\]\.size\(\)\[(\d+)\]$")
MAX_DETAILS = 6
AOT_MIN_S = 1.0  # Dynamo time (summed over the workers) worth naming AOT precompile for


def _who(p: Process) -> list:
    return [p.rank] if p.rank is not None else []


def _where(filename: Optional[str], line: Optional[int]) -> str:
    if not filename:
        return ""
    return f"{filename}:{line}" if line else filename


def _since(p: Process, t: Optional[float]) -> Optional[float]:
    return round(t - p.start, 3) if t is not None and p.start is not None else None


def _guard(reason: str) -> str:
    """A guard failure on one line: Dynamo pads it with spaces and adds the user's stack below."""
    first = next((ln for ln in reason.splitlines() if ln.strip()), "")
    return " ".join(first.split())


def _recompile_number(c: Compile) -> int:
    m = re.match(r"^\d+/(\d+)", c.compile_id or "")
    return int(m.group(1)) if m else 0


# --------------------------------------------------------------------------- findings, one process


def _flex_uncompiled(p: Process, compiles: list) -> list:
    eager = [c for c in compiles if c.flex_eager]
    if not eager:
        return []
    callers = list(dict.fromkeys(_where((c.caller or {}).get("filename"), (c.caller or {}).get("line"))
                                 for c in eager if c.caller))
    return [Finding("flex_uncompiled", FAIL, _who(p),
                    {"count": len(eager), "where": callers[0] if callers else "",
                     "at_s": _since(p, eager[0].start)}, callers[:MAX_DETAILS])]


def _steps_before(p: Process, t: Optional[float]) -> Optional[int]:
    if t is None or not p.steps:
        return None
    return sum(1 for s in p.steps if s <= t)


def _limit_hits(p: Process, compiles: list) -> list:
    out = []
    for c in compiles:
        if not c.limit_hit:
            continue
        limit = _LIMIT.search(c.fail_reason or "")
        knob = _KNOB.search(c.fail_reason or "")
        out.append(Finding("recompile_limit", FAIL, _who(p), {
            "frame": c.name or "?", "where": _where(c.filename, c.line), "compile_id": c.compile_id,
            "limit": int(limit.group(1)) if limit else None, "knob": knob.group(1) if knob else "recompile_limit",
            "at_s": _since(p, c.start), "steps": _steps_before(p, c.start)},
            list(dict.fromkeys(_guard(r) for r in c.recompile_reasons))[:MAX_DETAILS]))
    return out


def _dynamic_sources(group: list) -> list:
    """(name, dim) of the sizes that changed: Dynamo's symbols' sources, and its guard failures."""
    found = []
    for c in group:
        for sym in c.symbols:
            m = _SOURCE.match(sym.get("source") or "")
            if m:
                found.append((m.group(1), int(m.group(2))))
        for reason in c.recompile_reasons:
            found += [(name, int(dim)) for name, dim in _SIZE.findall(reason)]
    return list(dict.fromkeys(found))


def _recompiles(p: Process, compiles: list) -> list:
    frames: dict = {}
    for c in compiles:
        if not c.flex_eager and not c.limit_hit:
            frames.setdefault((c.frame_id, c.name), []).append(c)
    out = []
    for (_, name), group in frames.items():
        again = [c for c in group if _recompile_number(c) > 0]
        if not again:
            continue
        reasons = list(dict.fromkeys(_guard(r) for c in again for r in c.recompile_reasons))
        sizes = _dynamic_sources(again)
        first = group[0]
        out.append(Finding("dynamic_recompile" if sizes else "recompiles", WARN, _who(p), {
            "frame": name or "?", "where": _where(first.filename, first.line), "count": len(again),
            "sizes": [f"{n}[{d}]" for n, d in sizes]}, reasons[:MAX_DETAILS]))
    return out


def _break_lines(reason: str) -> list:
    """The lines of torch's graph-break reason worth showing: its headline ("Encountered graph
    break when attempting to trace CALL..." says nothing of its own) and the explanation."""
    lines = [ln.strip() for ln in reason.splitlines() if ln.strip()]
    return [ln for ln in lines if not ln.startswith("Encountered graph break")] or lines


def _graph_breaks(p: Process, compiles: list) -> list:
    seen: dict = {}
    for c in compiles:
        for gb in c.graph_breaks:
            lines = _break_lines(gb.get("reason") or "")
            key = (gb.get("where") or "", lines[0] if lines else "")
            if key not in seen:
                seen[key] = (c, gb, lines)
    out = []
    for (where, headline), (c, gb, lines) in seen.items():
        hints = [ln[len("Hint:"):].strip() for ln in lines if ln.startswith("Hint:")]
        out.append(Finding("graph_break", WARN, _who(p), {"frame": c.name or "?", "where": where, "reason": headline,
                                                          "hint": hints[0] if hints else ""},
                           [ln for ln in lines[1:] if ln.startswith("Explanation:")][:1]))
    return out


def process_findings(p: Process) -> list:
    compiles = p.log.compiles if p.log else []
    return (_flex_uncompiled(p, compiles) + _limit_hits(p, compiles) + _recompiles(p, compiles)
            + _graph_breaks(p, compiles))


# --------------------------------------------------------------------------- all of the run


def _merge(found: list) -> list:
    """One finding for the same thing seen on several ranks."""
    out: dict = {}
    for f in found:
        key = (f.code, repr(sorted((k, v) for k, v in f.args.items() if k not in ("at_s", "steps"))))
        if key in out:
            out[key].ranks = sorted(set(out[key].ranks) | set(f.ranks))
        else:
            out[key] = f
    return list(out.values())


def _cache(why) -> list:
    if why is None or not why.verdicts:
        return []
    c = why.counts()
    out = []
    if c["miss"]:
        out.append(Finding("cache_miss", WARN, [], {"count": c["miss"], "total": len(why.verdicts)}))
    if c["bypass"]:
        out.append(Finding("cache_bypass", WARN, [], {"count": c["bypass"], "total": len(why.verdicts)}))
    return out


def command_failure(m: Measurement, timeout: Optional[float]) -> Optional[Finding]:
    if not m.started:
        return Finding("command_failed", FAIL, [], {"how": "not_started", "error": m.start_error or ""})
    if m.timed_out:
        return Finding("command_failed", FAIL, [], {"how": "timeout", "seconds": timeout})
    if m.returncode:
        return Finding("command_failed", FAIL, [], {"how": "exit", "status": m.returncode})
    return None


def findings(m: Measurement, why, timeout: Optional[float] = None) -> list:
    found: list = []
    for p in m.workers():
        found += process_findings(p)
    out = _merge(found) + _cache(why)
    failed = command_failure(m, timeout)
    return ([failed] if failed else []) + out


# --------------------------------------------------------------------------- advice


def version_tuple(version: Optional[str]) -> Optional[tuple]:
    m = re.match(r"^(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _pool_advice(m: Measurement, why) -> list:
    workers = m.workers()
    pooled = [p for p in workers if any(s.kind == "pool_start" for s in p.pool) or p.seconds("exit_pool") > 0]
    if not pooled:
        return []
    c = why.counts() if why is not None else {"miss": 0, "bypass": 0}
    compiled = any(p.seconds("compile") > 1.0 for p in workers)
    line = "TORCHINDUCTOR_COMPILE_THREADS=1 " + " ".join(shlex.quote(str(a)) for a in m.command)
    return [Advice("compile_threads", {
        "exit_s": round(max(p.seconds("exit_pool") for p in pooled), 2),
        "start_s": round(max(p.seconds("pool_start") for p in pooled), 2),
        "ranks": len(pooled), "after_warm": bool(c["miss"] or c["bypass"] or compiled)},
        command=line, env={"TORCHINDUCTOR_COMPILE_THREADS": "1"})]


def _finding_advice(f: Finding, torch_version: Optional[tuple]) -> list:
    if f.code == "flex_uncompiled":
        return [Advice("compile_flex", {"where": f.args.get("where", "")},
                       command="flex_attention = torch.compile(flex_attention)", python=True)]
    if f.code == "dynamic_recompile":
        sizes = [s for s in f.args.get("sizes", [])]
        cmds = []
        for s in sizes[:3]:
            name, dim = s[:-1].split("[", 1)
            cmds.append(f"torch._dynamo.mark_dynamic({name}, {dim})")
        return [Advice("mark_dynamic", {"frame": f.args.get("frame"), "sizes": ", ".join(sizes),
                                        "flex": f.args.get("frame") == "flex_attention"},
                       command="; ".join(cmds) or None, python=True)]
    if f.code == "recompile_limit":
        knob = f.args.get("knob") or ("recompile_limit" if (torch_version or (2, 7)) >= (2, 7) else "cache_size_limit")
        return [Advice("recompile_limit", {"knob": knob, "limit": f.args.get("limit"), "frame": f.args.get("frame")})]
    if f.code == "graph_break":
        return [Advice("graph_break", {"where": f.args.get("where", ""), "hint": f.args.get("hint", "")})]
    return []


def _dynamo_seconds(p: Process) -> float:
    """Dynamo's time in this process, uncompiled flex_attention's own compiles left out."""
    compiles = p.log.compiles if p.log else []
    return sum(f.parts.get("dynamo", 0.0) for f in p.frames
               if not (f.index < len(compiles) and compiles[f.index].flex_eager))


def _newer_torch(m: Measurement) -> list:
    workers = m.workers()
    version = next((p.torch_version for p in workers if p.torch_version), None)
    vt = version_tuple(version)
    if vt is None:
        return []
    out = []
    compiling = [p for p in workers if sum(p.seconds(x) for x in ("dynamo", "compile")) > 1.0]
    if len([p for p in workers if p.role == "rank"]) > 1 and len(compiling) > 1:
        have = any(isinstance(p.facts.get("compile_on_one_rank"), bool) for p in workers)
        out.append(Advice("compile_on_one_rank", {
            "version": version, "available": have, "ranks": len(compiling),
            "seconds": round(max(p.seconds("dynamo") + p.seconds("compile") for p in compiling), 2)},
            command="torch.compiler.config.compile_on_one_rank = True" if have else None, python=True))
    dynamo = sum(_dynamo_seconds(p) for p in workers)
    if dynamo >= AOT_MIN_S:
        out.append(Advice("aot_precompile", {"version": version, "available": vt >= (2, 13),
                                             "seconds": round(dynamo, 2)}))
    return out


def advice(m: Measurement, why, found: list, warm_command: Optional[str]) -> list:
    workers = m.workers()
    vt = version_tuple(next((p.torch_version for p in workers if p.torch_version), None))
    out = _pool_advice(m, why)
    if why is not None and why.counts()["miss"] and warm_command:
        out.append(Advice("warm_cache", {"count": why.counts()["miss"]}, command=warm_command))
    seen = set()
    for f in found:
        for a in _finding_advice(f, vt):
            key = (a.code, a.command, repr(sorted(a.args.items())))
            if key not in seen:
                seen.add(key)
                out.append(a)
    return out + _newer_torch(m)
