"""What warm-cache compiled, key by key: ``flexdoctor-keys/`` beside the manifest in the cache dir.

warm-cache runs each compile with torch's structured trace on (``TORCH_TRACE``, see trace.py)
and stores, per FX graph it compiled or hit, the cache key torch computed and the key's
components (``name -> (hash, value)``; values cut short). ``flexdoctor cache why`` compares a
missed lookup's components with these to name what differs from the closest warmed graph.

One small JSON file per FX graph key (``fx-<key>.json``), written atomically; a later warm of
the same graph replaces it. Nothing here is executable or unpickled: JSON only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional

from . import locations
from . import manifest as mf
from . import trace as trace_mod
from .trace import Graph, Trace

DIR_NAME = locations.KEYS_NAME
FORMAT = 1
_KEY = re.compile(r"^f[a-z2-7]{51}$")  # an FX graph key (identify.FX_KEY): also names the file
MAX_FILES = 2000  # reading more than this many warmed graphs is not worth the wait


@dataclass
class Warmed:
    """One FX graph warm-cache compiled (or found already cached) into this cache dir."""

    key: str
    components: dict  # name -> (hash, value)
    source: dict = field(default_factory=dict)  # {"kind": "config"|"run", "label": ...}
    backward: Optional[bool] = None
    frame: Optional[str] = None
    filename: Optional[str] = None
    code: Optional[str] = None  # the traced graph (score_mod / mask_mod as code)
    torch_version: Optional[str] = None
    fingerprint: dict = field(default_factory=dict)
    written_at: Optional[str] = None

    @property
    def label(self) -> str:
        return str(self.source.get("label") or self.key)


def directory(root: str) -> str:
    return os.path.join(root, DIR_NAME)


def entries_of(trace: Trace) -> list[tuple[Graph, object]]:
    """(graph, FX lookup) for every FX graph lookup that carries a key and its components."""
    return [(g, lk) for g in trace.graphs for lk in g.lookups
            if lk.cache == "fx_graph" and lk.key and lk.components and _KEY.match(lk.key)]


def _write_json(path: str, data: dict) -> None:
    with locations.replacing(path, ".flexdoctor-key.") as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, sort_keys=True)


def record(root: str, trace: Trace, source: dict, fingerprint: Optional[dict] = None) -> int:
    """Store the FX graph keys ``trace`` saw; returns how many. Errors writing are not fatal to
    warming (the cache itself is fine): they return what was written so far."""
    found = entries_of(trace)
    if not found:
        return 0
    where = directory(root)
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
    except OSError:
        return 0
    written = 0
    for g, lk in found:
        data = {
            "format": FORMAT,
            "key": lk.key,
            "cache": "fx_graph",
            "backward": lk.backward,
            "source": dict(source),
            "frame": g.frame,
            "filename": g.filename,
            "code": g.code,
            "torch_version": trace.torch_version,
            "fingerprint": dict(fingerprint or {}),
            "written_at": mf.now(),
            "components": {name: list(v) for name, v in lk.components.items()},
        }
        try:
            _write_json(os.path.join(where, f"fx-{lk.key}.json"), data)
            written += 1
        except OSError:
            break
    return written


class Recording:
    """The environment to run a compile with (TORCH_TRACE set), and what to store with its keys."""

    def __init__(self, env: dict) -> None:
        self.env = env
        self.fingerprint: Optional[dict] = None  # set by the caller once the run reported it


@contextlib.contextmanager
def recording(root: str, source: dict, env: dict, enabled: bool = True) -> Iterator[Recording]:
    """Run a compile with torch's structured trace on (``TORCH_TRACE`` = a fresh private dir),
    then store the keys of the FX graphs it compiled or hit (``record``) and drop the trace.
    Interrupted (Ctrl-C), it records nothing. Never fails the compile: the cache is written."""
    if not enabled:
        yield Recording(env)
        return
    trace_dir = tempfile.mkdtemp(prefix="flexdoctor-trace-")
    rec = Recording(dict(env, TORCH_TRACE=trace_dir))
    try:
        yield rec
    except BaseException:
        shutil.rmtree(trace_dir, ignore_errors=True)
        raise
    try:
        record(root, trace_mod.read(trace_dir), source, rec.fingerprint)
    except (OSError, ValueError):
        pass
    finally:
        shutil.rmtree(trace_dir, ignore_errors=True)


def _warmed(data: object) -> Optional[Warmed]:
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("key"), str):
        return None
    comps = data.get("components")
    if not isinstance(comps, dict):
        return None
    components = {str(k): (str(v[0]), str(v[1])) for k, v in comps.items()
                  if isinstance(v, list) and len(v) == 2}
    src = data.get("source") if isinstance(data.get("source"), dict) else {}
    fp = data.get("fingerprint") if isinstance(data.get("fingerprint"), dict) else {}
    text = lambda k: data.get(k) if isinstance(data.get(k), str) else None  # noqa: E731
    back = data.get("backward")
    return Warmed(key=data["key"], components=components, source=src,
                  backward=back if isinstance(back, bool) else None, frame=text("frame"),
                  filename=text("filename"), code=text("code"), torch_version=text("torch_version"),
                  fingerprint=fp, written_at=text("written_at"))


def load(root: str) -> list[Warmed]:
    """Every warmed graph recorded in ``root`` (unreadable or foreign files are skipped)."""
    out: list[Warmed] = []
    try:
        names = sorted(n for n in os.listdir(directory(root)) if n.startswith("fx-") and n.endswith(".json"))
    except OSError:
        return out
    for name in names[:MAX_FILES]:
        path = os.path.join(directory(root), name)
        if os.path.islink(path):
            continue
        try:
            with open(path, encoding="utf-8") as fh:
                w = _warmed(json.load(fh))
        except (OSError, ValueError, RecursionError):
            continue
        if w is not None:
            out.append(w)
    return out


def present(root: str, key: str) -> bool:
    """Is an FX graph entry with this key in the cache dir (``fxgraph/<2 chars>/<key>``)?"""
    return os.path.isdir(os.path.join(root, "fxgraph", key[1:3], key))


def sources(items: Iterable[Warmed]) -> list[str]:
    return sorted({w.label for w in items})
