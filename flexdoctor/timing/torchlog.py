"""Read torch's structured trace (``TORCH_TRACE=DIR``) for the times and the silent failures of
each process: its compile events, and per compiled frame what went wrong.

Read in torch 2.13's sources (torch/_logging/_internal.py, torch/_dynamo/utils.py,
torch/_dynamo/convert_frame.py) and checked against real CPU runs:

- One file per process (``dedicated_log_torch_trace_[rank_N_]*.log``); each record is a glog
  header ``V1124 16:34:56.481000 <pid> <file>:<line>]`` then one JSON object of metadata
  (``frame_id``, ``frame_compile_id``, ``attempt`` and one record-type key), then its payload as
  lines starting with a tab.
- ``chromium_event`` (2.5+, ``dynamo_timed`` / ``CompileEventLogger``): payload
  ``{"name", "ph": "B"|"E"|"i"|"X", "ts": µs since the epoch (time.time()), "args":
  {"compile_id"}}``. B/E pairs nest: ``dynamo`` > ``entire_frame_compile`` > ``compile_attempt_N``
  > ``bytecode_tracing``, ``backend_compile`` > ``create_aot_dispatcher_function`` >
  ``inductor_compile`` > ``fx_codegen_and_compile`` > ``code_gen`` / ``GraphLowering.*`` >
  ``PyCodeCache.load_by_key_path`` > ``async_compile.wait``; a cache hit is
  ``AOTAutogradCache.inductor_load`` > ``TritonBundler.read_and_emit``,
  ``PyCodeCache.load_by_key_path``; the lazily compiled backward is
  ``compile_fx.<locals>.bw_compiler``; ``build_guards`` after tracing.
- ``compilation_metrics`` per compile: ``co_name``, ``co_filename``, ``co_firstlineno``,
  ``start_time``, ``entire_frame_compile_time_s``, ``fail_type``/``fail_reason`` (hitting the
  recompile limit is ``Unsupported`` with "Dynamo recompile limit exceeded"; torch 2.5/2.6 name the
  knob ``cache_size_limit``), ``recompile_reason``, ``restart_reasons``, ``cache_size``;
  ``bwd_compilation_metrics`` for the backward.
- ``dynamo_start`` (the stack: the compiled frame last, the user's calling frame before it),
  artifacts ``recompile_reasons`` (the guard failures, JSON list or text) and
  ``dynamo_graph_break_reason`` (text: "Graph break in user code at FILE:LINE" then the reason),
  ``create_symbol`` (a size made dynamic: ``symbol``, ``source``), ``str`` (the file-name table).
- Uncompiled flex_attention still goes through Dynamo: torch.nn.attention.flex_attention compiles
  its inner ``_flex_attention_hop_wrapper`` with the ``eager`` backend (2.5-2.13), so an eager call
  shows up as a compile of that frame.

Reading is streaming and bounded: payloads are kept only for the records used here.
"""

from __future__ import annotations

import glob
import json
import os
import re
from typing import Callable, Iterator, Optional

from .model import Compile, Span, TorchLog

LOG_GLOB = "dedicated_log_torch_trace_*.log"
_RANK_FILE = re.compile(r"dedicated_log_torch_trace_rank_(\d+)_")
_HEADER_PID = re.compile(r"^\S+ \S+ (\d+) ")
MAX_PAYLOAD_LINES = 20_000
MAX_TEXT = 4000  # characters kept of a reason torch wrote
_PAYLOAD = ("chromium_event", "artifact")
_ARTIFACTS = ("recompile_reasons", "dynamo_graph_break_reason", "torch_version")

# Which phase a torch event's time counts to. Events not named here count to the phase of the
# event they are nested in (the innermost event decides, phases.py).
_DYNAMO = {"dynamo", "entire_frame_compile", "bytecode_tracing", "build_guards", "gc",
           "insert_deferred_runtime_asserts", "_compile.compile_inner", "compile_inner"}
_COMPILE = {"backend_compile", "create_aot_dispatcher_function", "aot_collect_metadata", "inductor_compile",
            "fx_codegen_and_compile", "code_gen", "compile_fx_inner", "compile_fx.<locals>.fw_compiler_base",
            "compile_fx.<locals>.bw_compiler", "additional_fake_tensor_prop", "TritonBundler.collect"}
_COMPILE_PREFIX = ("GraphLowering.", "Scheduler.", "PythonWrapperCodegen.", "pass.", "_recursive_", "aot_",
                   "autotune", "select_algorithm", "benchmark", "CachingAutotuner.benchmark", "precompile")
_CACHE = {"inductor_codecache_torch_key"}
_CACHE_PREFIX = ("CacheBase.", "FxGraphCache.", "AOTAutogradCache.", "AutotuneCache.", "LocalAutotuneCache.")
_LOAD = {"PyCodeCache.load_by_key_path", "TritonBundler.read_and_emit"}
# Inductor's code generation (a cache miss): loading the module it generated compiles its kernels.
# ``fx_codegen_and_compile`` is not one: in 2.13 it also wraps the FX-graph-cache lookup and, on a
# hit, the loading of the cached module; its ``fx_graph_cache_hit`` instant event (logged before
# it ends) turns its own remainder into cache time.
_CODEGEN = {"code_gen", "GraphLowering.compile_to_fn", "GraphLowering.codegen", "GraphLowering.compile_to_module"}


def phase_of(name: str, parent: Optional[str], codegen: bool) -> str:
    """The phase of a torch event ``name`` nested in an event of phase ``parent`` (None: outermost);
    ``codegen``: it runs inside Inductor's code generation (a cache miss), where loading the
    freshly generated module is what compiles its kernels."""
    if name in _LOAD:
        return "compile" if codegen else "kernel_load"
    if name in _DYNAMO or name.startswith("compile_attempt_"):
        return "dynamo"
    if name in _CACHE or name.startswith(_CACHE_PREFIX):
        return "cache"
    if name in _COMPILE or name.startswith(_COMPILE_PREFIX):
        return "compile"
    return parent or "compile"


# --------------------------------------------------------------------------- records


def records(path: str, wants: Optional[Callable[[dict], bool]] = None,
            max_lines: int = MAX_PAYLOAD_LINES) -> Iterator[tuple]:
    """(pid from the header, metadata dict, payload text or None) for each record of one file of
    torch's structured trace; ``wants(meta)`` says whose payload to keep (at most ``max_lines``)."""
    wants = _wants if wants is None else wants
    meta: Optional[dict] = None
    pid: Optional[int] = None
    payload: Optional[list] = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("\t"):
                if payload is not None and len(payload) < max_lines:
                    payload.append(line[1:].rstrip("\n"))
                continue
            at = line.find("] {")
            if at < 0:
                continue
            if meta is not None:
                yield pid, meta, ("\n".join(payload) if payload is not None else None)
            m = _HEADER_PID.match(line)
            pid = int(m.group(1)) if m else None
            try:
                meta = json.loads(line[at + 2:])
            except ValueError:
                meta = None
            if not isinstance(meta, dict):
                meta = None
                continue
            payload = [] if wants(meta) else None
    if meta is not None:
        yield pid, meta, ("\n".join(payload) if payload is not None else None)


def _wants(meta: dict) -> bool:
    if "chromium_event" in meta:
        return True
    art = meta.get("artifact")
    return isinstance(art, dict) and art.get("name") in _ARTIFACTS


# --------------------------------------------------------------------------- one process


class _Reader:
    """Builds one process's TorchLog from its records."""

    def __init__(self, log: TorchLog) -> None:
        self.log = log
        self.strings: dict = {}
        self.open: dict = {}  # compile_id -> index of the compile that id means now
        self.stack: list = []  # open B events: [name, t0, phase, compile index, codegen]
        self.last_ts: Optional[float] = None

    def compile(self, cid: Optional[str], new: bool = False) -> Optional[Compile]:
        """The compile ``cid`` means now; ``new`` starts another one when the last of that id is
        finished (torch._dynamo.reset() starts the ids again at 0/0)."""
        if cid is None or cid == "None":
            return None
        i = self.open.get(cid)
        if i is None or (new and self.log.compiles[i].metrics):
            fid = re.match(r"^(\d+)/", cid)
            c = Compile(compile_id=cid, frame_id=int(fid.group(1)) if fid else None)
            self.log.compiles.append(c)
            i = self.open[cid] = len(self.log.compiles) - 1
            self._name_from_frame(c)
        return self.log.compiles[i]

    def _name_from_frame(self, c: Compile) -> None:
        """A compile that failed before tracing (the recompile limit) names no frame: take the
        name of an earlier compile of the same frame."""
        for other in self.log.compiles:
            if other is not c and other.frame_id == c.frame_id and other.frame_id is not None and other.name:
                c.name, c.filename, c.line = other.name, other.filename, other.line
                return

    def record(self, meta: dict, payload: Optional[str]) -> None:
        cid = _compile_id(meta)
        if "str" in meta and isinstance(meta["str"], list) and len(meta["str"]) == 2:
            self.strings[meta["str"][1]] = meta["str"][0]
        elif "chromium_event" in meta and payload:
            self.chromium(payload)
        elif "dynamo_start" in meta:
            self.start(self.compile(cid, new=True), meta["dynamo_start"])
        elif "compilation_metrics" in meta:
            self.metrics(self.compile(cid), meta["compilation_metrics"])
        elif "bwd_compilation_metrics" in meta:
            c = self.compile(str((meta["bwd_compilation_metrics"] or {}).get("compile_id") or cid))
            if c is not None:
                c.backward_start = _float((meta["bwd_compilation_metrics"] or {}).get("start_time"))
        elif "create_symbol" in meta:
            c, data = self.compile(cid), meta["create_symbol"] or {}
            if c is not None and isinstance(data, dict) and len(c.symbols) < 20:
                c.symbols.append({"symbol": str(data.get("symbol") or ""), "source": str(data.get("source") or "")})
        elif "artifact" in meta and payload is not None:
            self.artifact(cid, meta, payload)

    def start(self, c: Optional[Compile], data: object) -> None:
        stack = (data or {}).get("stack") if isinstance(data, dict) else None
        if c is None or not isinstance(stack, list) or not stack:
            return
        frames = [f for f in stack if isinstance(f, dict)]
        if frames:
            c.name, c.line = str(frames[-1].get("name") or "") or None, _int(frames[-1].get("line"))
            c.filename = self.file(frames[-1].get("filename"))
        if len(frames) > 1:
            f = frames[-2]
            c.caller = {"name": str(f.get("name") or ""), "filename": self.file(f.get("filename")),
                        "line": _int(f.get("line"))}

    def file(self, value: object) -> Optional[str]:
        if isinstance(value, int):
            return self.strings.get(value)
        return value if isinstance(value, str) else None

    def metrics(self, c: Optional[Compile], m: object) -> None:
        if c is None or not isinstance(m, dict):
            return
        c.metrics = True
        c.name = c.name or m.get("co_name")
        c.filename = c.filename or m.get("co_filename")
        c.line = c.line or _int(m.get("co_firstlineno"))
        c.start = _float(m.get("start_time"))
        c.seconds = _float(m.get("entire_frame_compile_time_s"))
        c.fail_type = m.get("fail_type")
        c.fail_reason = _text(m.get("fail_reason"))
        c.cache_size = _int(m.get("cache_size"))
        c.restart_reasons = [_text(r) for r in (m.get("restart_reasons") or []) if r][:10]
        if m.get("recompile_reason") and not c.recompile_reasons:
            c.recompile_reasons = [_text(m["recompile_reason"])]

    def artifact(self, cid: Optional[str], meta: dict, payload: str) -> None:
        name = meta["artifact"].get("name")
        if name == "torch_version":
            try:
                self.log.torch_version = json.loads(payload).get("pytorch_version")
            except (ValueError, AttributeError):
                pass
            return
        c = self.compile(cid)
        if c is None:
            return
        if name == "recompile_reasons":
            c.recompile_reasons = _reasons(payload)
        elif name == "dynamo_graph_break_reason" and len(c.graph_breaks) < 20:
            c.graph_breaks.append(_graph_break(payload))

    def chromium(self, payload: str) -> None:
        try:
            ev = json.loads(payload)
        except ValueError:
            return
        if not isinstance(ev, dict) or not isinstance(ev.get("name"), str):
            return
        ts = _float(ev.get("ts"))
        if ts is None:
            return
        t = ts / 1e6
        self.last_ts = t
        name, ph = ev["name"], ev.get("ph")
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if ph == "B":
            self.begin(name, t, args)
        elif ph == "E":
            self.finish(name, t)
        elif ph == "X" and _float(ev.get("dur")) is not None:
            self.begin(name, t, args)
            self.finish(name, t + _float(ev.get("dur")) / 1e6)
        elif ph == "i" and name == "fx_graph_cache_hit":
            for open_ in reversed(self.stack):
                if open_[0] == "fx_codegen_and_compile":
                    open_[2] = "cache"
                    break

    def begin(self, name: str, t: float, args: dict) -> None:
        parent = self.stack[-1] if self.stack else None
        cid = args.get("compile_id")
        index = parent[3] if parent else None
        if isinstance(cid, str) and cid not in ("", "None"):  # compile threads write "None"
            c = self.compile(cid, new=(name == "dynamo"))
            index = self.log.compiles.index(c) if c is not None else index
        codegen = bool(parent and parent[4]) or name in _CODEGEN
        self.stack.append([name, t, phase_of(name, parent[2] if parent else None, bool(parent and parent[4])),
                           index, codegen])

    def finish(self, name: str, t: float) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == name:
                for open_ in self.stack[i + 1:]:  # events never ended inside it end with it
                    self.close(open_, t)
                self.close(self.stack[i], t)
                del self.stack[i:]
                return

    def close(self, ev: list, t: float) -> None:
        name, t0, phase, index, _ = ev
        if t >= t0:
            self.log.spans.append(Span(phase, t0, t, name=name, compile=index))

    def done(self) -> None:
        """Events a crash left open end at the last time seen; a compile no event covers (a torch
        that writes no chromium events) counts as Dynamo time from its own metrics."""
        while self.stack:
            ev = self.stack.pop()
            self.close(ev, self.last_ts if self.last_ts is not None else ev[1])
        covered = {s.compile for s in self.log.spans}
        for i, c in enumerate(self.log.compiles):
            if i not in covered and c.start is not None and c.seconds:
                self.log.spans.append(Span("dynamo", c.start, c.start + c.seconds, name="compilation_metrics",
                                           compile=i))


def _compile_id(meta: dict) -> Optional[str]:
    fid, cid = meta.get("frame_id"), meta.get("frame_compile_id")
    if fid is None or cid is None:
        return None
    return f"{fid}/{cid}"


def _float(value: object) -> Optional[float]:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def _int(value: object) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str:
    return str(value)[:MAX_TEXT]


def _reasons(payload: str) -> list:
    try:
        data = json.loads(payload)
    except ValueError:
        data = payload
    items = data if isinstance(data, list) else [data]
    return [_text(x).strip() for x in items if str(x).strip()][:10]


def _graph_break(payload: str) -> dict:
    """``Graph break in user code at FILE:LINE`` / ``Graph Break Reason: ...`` -> where and why."""
    lines = [ln for ln in payload.splitlines()]
    where = ""
    if lines and lines[0].startswith("Graph break in user code at "):
        where = lines[0][len("Graph break in user code at "):].strip()
    reason = []
    for ln in lines[1:]:
        if ln.startswith("User code traceback:") or ln.startswith("Traceback"):
            break
        if ln.strip():
            reason.append(ln.strip())
    text = "\n".join(reason)
    if text.startswith("Graph Break Reason:"):
        text = text[len("Graph Break Reason:"):].strip()
    return {"where": where[:500], "reason": text[:MAX_TEXT]}


def read_file(path: str, into: dict) -> None:
    """Add one trace file's records to ``into`` (pid -> TorchLog)."""
    m = _RANK_FILE.search(os.path.basename(path))
    reader: Optional[_Reader] = None
    for pid, meta, payload in records(path):
        if reader is None:
            log = into.get(pid)
            if log is None:
                log = into[pid] = TorchLog(pid=pid, rank=int(m.group(1)) if m else None)
            log.files += 1
            reader = _Reader(log)
        reader.record(meta, payload)
    if reader is not None:
        reader.done()
        reader.log.spans.sort(key=lambda s: (s.t0, -s.t1))


def read(directory: str) -> dict:
    """pid -> TorchLog for every trace file under ``directory``."""
    out: dict = {}
    for path in sorted(glob.glob(os.path.join(directory, "**", LOG_GLOB), recursive=True)):
        try:
            read_file(path, out)
        except OSError:
            continue
    return out
