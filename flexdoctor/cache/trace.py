"""Read torch's structured trace (``TORCH_TRACE=DIR``) for its compile-cache lookups.

The trace is one file per process (``dedicated_log_torch_trace_[rank_N_]*.log``), written by
``torch/_logging/_internal.py``: a glog-style header line ``V1123 10:51:04.82 20448 file.py:12]``
followed by one JSON object of metadata (``frame_id``, ``frame_compile_id``, ``attempt``, ``rank``
and one record-type key), then the record's payload as lines that start with a tab.

What each torch release records per cache lookup (read in the released wheels' sources):

- FX graph cache (Inductor): 2.5 an artifact ``fx_graph_cache_hash`` whose payload's
  ``cache_state`` is hit, miss or bypass (torch/_inductor/codecache.py ``FxGraphCache.load``);
  2.6+ artifacts ``fx_graph_cache_hit|miss|bypass`` (compile_fx.py). The payload holds ``key``,
  ``components`` (one ``[<hash>] <name>: <value>`` line per part of the key) and, for a bypass,
  ``cache_bypass_reason``; 2.8+ adds ``cache_status_detailed`` (``full_miss``, ``guard_miss``, ``hit``).
  Nothing is recorded while the FX graph cache is off.
- AOT autograd cache: 2.5-2.6 artifact ``aotautograd_cache_hash`` (``cache_state`` in the payload),
  2.7+ ``aotautograd_cache_hit|miss|bypass``; ``components`` is empty from 2.12 unless debug
  logging is on, so the FX graph's components are what explain a miss.
- ``dynamo_start`` (the frame being compiled, 2.5+), ``dynamo_output_graph`` (the traced graph
  with the score_mod/mask_mod sub-graphs as code, 2.5+), ``torch_version`` (2.12+).

Reading is streaming and bounded: only the records used here keep their payload.
"""

from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import dataclass, field
from typing import Optional

from ..timing import torchlog

LOG_GLOB = "dedicated_log_torch_trace_*.log"
_CACHE_ARTIFACT = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass|hash)$")
_RANK_FILE = re.compile(r"dedicated_log_torch_trace_rank_(\d+)_")
_COMPONENT = re.compile(r"^\[([A-Za-z0-9]+)\] (.*?): ?(.*)$", re.S)
MAX_VALUE = 2000  # characters kept of one key component's value (the graph's code: MAX_CODE)
MAX_CODE = 40000
MAX_PAYLOAD_LINES = 200_000  # a payload longer than this is cut (a huge model's graph code)


@dataclass
class Lookup:
    """One cache lookup torch recorded."""

    cache: str  # fx_graph | aotautograd
    state: str  # hit | miss | bypass (or what torch wrote)
    key: Optional[str] = None
    detail: Optional[str] = None  # cache_status_detailed (torch 2.8+)
    bypass_reason: Optional[str] = None
    components: dict = field(default_factory=dict)  # name -> (hash, value)

    @property
    def backward(self) -> Optional[bool]:
        value = self.components.get("fx_kwargs[is_backward]")
        return None if value is None else value[1].strip() == "True"


@dataclass
class Graph:
    """What one Dynamo compile (``frame_id/frame_compile_id``) looked up."""

    compile_id: Optional[str]  # "0/0"; None for lookups outside any compile
    rank: Optional[int] = None
    frame: Optional[str] = None  # the compiled function's name
    filename: Optional[str] = None
    line: Optional[int] = None
    code: Optional[str] = None  # dynamo_output_graph: the traced graph, sub-graphs included
    lookups: list = field(default_factory=list)


@dataclass
class Trace:
    files: int = 0
    records: int = 0
    compiles: int = 0  # dynamo_start records
    torch_version: Optional[str] = None  # from the torch_version artifact (torch 2.12+)
    graphs: list = field(default_factory=list)

    @property
    def lookups(self) -> list:
        return [lk for g in self.graphs for lk in g.lookups]


def parse_components(lines: object) -> dict:
    """``["[hash] name: value", ...]`` -> {name: (hash, value)}; values cut to MAX_VALUE (code: MAX_CODE)."""
    out: dict = {}
    if not isinstance(lines, list):
        return out
    for item in lines:
        if not isinstance(item, str):
            continue
        m = _COMPONENT.match(item)
        if not m:
            continue
        name, value = m.group(2), m.group(3)
        out[name] = (m.group(1), value[:MAX_CODE if name == "gm" else MAX_VALUE])
    return out


def _lookup(name: str, payload: dict) -> Optional[Lookup]:
    m = _CACHE_ARTIFACT.match(name)
    if not m:
        return None
    state = m.group(2)
    if state == "hash":  # torch 2.5 / 2.6: the state is in the payload
        state = str(payload.get("cache_state") or "unknown")
    return Lookup(cache=m.group(1), state=state, key=payload.get("key") or None,
                  detail=payload.get("cache_status_detailed"),
                  bypass_reason=payload.get("cache_bypass_reason"),
                  components=parse_components(payload.get("components")))


class _Reader:
    """Streams one trace file; keeps payloads only of the records it uses."""

    def __init__(self, trace: Trace, rank: Optional[int]) -> None:
        self.trace, self.rank = trace, rank
        self.strings: dict = {}
        self.graphs: dict = {}

    def graph(self, meta: dict, new: bool = False) -> Graph:
        """The graph a record belongs to; ``new`` (a dynamo_start) opens another one, since
        torch._dynamo.reset() starts the compile ids at 0/0 again."""
        fid, cid = meta.get("frame_id"), meta.get("frame_compile_id")
        rank = meta.get("rank", self.rank)
        key = (rank, fid, cid) if fid is not None else (rank, None, None)
        g = self.graphs.get(key)
        if g is None or (new and (g.frame is not None or g.lookups)):
            g = Graph(compile_id=f"{fid}/{cid}" if fid is not None else None, rank=rank)
            self.graphs[key] = g
            self.trace.graphs.append(g)
        return g

    def record(self, meta: dict, payload: Optional[str]) -> None:
        self.trace.records += 1
        if "str" in meta and isinstance(meta["str"], list) and len(meta["str"]) == 2:
            self.strings[meta["str"][1]] = meta["str"][0]
        elif "dynamo_start" in meta:
            self.trace.compiles += 1
            stack = (meta["dynamo_start"] or {}).get("stack") or []
            g = self.graph(meta, new=True)
            if stack and isinstance(stack[-1], dict):
                top = stack[-1]
                g.frame, g.line = top.get("name"), top.get("line")
                fn = top.get("filename")
                g.filename = self.strings.get(fn, fn if isinstance(fn, str) else None)
        elif "dynamo_output_graph" in meta and payload is not None:
            self.graph(meta).code = payload[:MAX_CODE]
        elif "artifact" in meta:
            name = str((meta["artifact"] or {}).get("name") or "")
            if name == "torch_version" and payload:
                try:
                    self.trace.torch_version = json.loads(payload).get("pytorch_version")
                except (ValueError, AttributeError):
                    pass
                return
            if payload is None or not _CACHE_ARTIFACT.match(name):
                return
            try:
                data = json.loads(payload)
            except ValueError:
                return
            lk = _lookup(name, data if isinstance(data, dict) else {})
            if lk is not None:
                self.graph(meta).lookups.append(lk)


def _wants_payload(meta: dict) -> bool:
    if "dynamo_output_graph" in meta:
        return True
    name = str(((meta.get("artifact") or {}) if isinstance(meta.get("artifact"), dict) else {}).get("name") or "")
    return name == "torch_version" or bool(_CACHE_ARTIFACT.match(name))


def read_file(path: str, trace: Trace) -> None:
    m = _RANK_FILE.search(os.path.basename(path))
    reader = _Reader(trace, int(m.group(1)) if m else None)
    for _pid, meta, payload in torchlog.records(path, _wants_payload, MAX_PAYLOAD_LINES):
        reader.record(meta, payload)


def read(directory: str) -> Trace:
    """Everything torch wrote under ``directory`` (one file per process or rank)."""
    trace = Trace()
    for path in sorted(glob.glob(os.path.join(directory, "**", LOG_GLOB), recursive=True)):
        trace.files += 1
        try:
            read_file(path, trace)
        except OSError:
            continue
    return trace
