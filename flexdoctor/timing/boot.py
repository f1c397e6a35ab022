"""The bootstrap's side of a timed run: the private folders, the environment that puts
worker/_trace_boot/sitecustomize.py into the command's Python processes, and reading back what
it wrote (one ``p<pid>.jsonl`` file per process)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from typing import Optional

from .. import worker
from .model import Process, Span

ENV_KEY = "FLEXDOCTOR_TRACE_BOOT"  # the folder the bootstrap writes to (sitecustomize.py: _KEY)
BOOT = worker.script(os.path.join("_trace_boot", "sitecustomize.py"))
MAX_FILES = 4096  # processes read back (a command that starts more is cut)
MAX_BYTES = 1 << 20  # of one process's records
_IMPORT_PHASE = {"torch": "import_torch"}
_POOL_PHASE = {"pool_start": "pool_start", "pool_shutdown": "exit_pool"}


class Folders:
    """Three private folders (mkdtemp: 0700, this user's): the bootstrap's code, its records and
    torch's trace. ``close()`` removes them (the trace unless kept)."""

    def __init__(self, keep_trace: Optional[str] = None) -> None:
        self.code = tempfile.mkdtemp(prefix="flexdoctor-boot-")
        self.records = tempfile.mkdtemp(prefix="flexdoctor-times-")
        self.keep = keep_trace
        if keep_trace:
            os.makedirs(keep_trace, mode=0o700, exist_ok=True)
            self.trace = keep_trace
        else:
            self.trace = tempfile.mkdtemp(prefix="flexdoctor-trace-")
        target = os.path.join(self.code, "sitecustomize.py")
        shutil.copyfile(BOOT, target)
        os.chmod(target, stat.S_IRUSR)

    def env(self, base: dict) -> dict:
        """``base`` with the bootstrap first on PYTHONPATH, its records folder and TORCH_TRACE."""
        env = dict(base)
        old = env.get("PYTHONPATH")
        env["PYTHONPATH"] = self.code + (os.pathsep + old if old else "")
        env[ENV_KEY] = self.records
        env["TORCH_TRACE"] = self.trace
        return env

    def close(self) -> None:
        for path in (self.code, self.records) + (() if self.keep else (self.trace,)):
            shutil.rmtree(path, ignore_errors=True)


def _lines(path: str) -> list:
    """The JSON objects of one records file (a regular file of this user's, opened without
    following a link; a broken line is skipped)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return []
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return []
        data = fh.read(MAX_BYTES)
    out = []
    for raw in data.splitlines():
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def _num(item: dict, key: str) -> Optional[float]:
    v = item.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _span(item: dict, kind: str, name: str) -> Optional[Span]:
    t0, t1 = _num(item, "t0"), _num(item, "t1")
    if t0 is None or t1 is None or t1 < t0:
        return None
    return Span(kind, t0, t1, name=name)


def _apply(p: Process, item: dict) -> None:
    """One record into the process it describes."""
    kind = item.get("k")
    if kind == "boot":
        p.boot, p.start = _num(item, "t"), _num(item, "start")
        p.ppid = item.get("ppid") if isinstance(item.get("ppid"), int) else None
        for key in ("rank", "local_rank", "world_size"):
            if isinstance(item.get(key), int):
                setattr(p, key, item[key])
    elif kind == "import" and isinstance(item.get("m"), str):
        s = _span(item, _IMPORT_PHASE.get(item["m"], "import_compiler"), item["m"])
        if s:
            p.imports.append(s)
    elif kind == "pool" and item.get("what") in _POOL_PHASE:
        s = _span(item, _POOL_PHASE[item["what"]], item["what"])
        if s:
            p.pool.append(s)
    elif kind == "backward":
        s = _span(item, "backward", str(item.get("n", "")))
        if s:
            p.backward.append(s)
    elif kind == "step" and _num(item, "t") is not None:
        p.steps.append(_num(item, "t"))
    elif kind == "end":
        p.end = _num(item, "t")
    elif kind == "atexit":
        p.atexit = _num(item, "t")
        p.facts = {k: v for k, v in item.items() if k not in ("k", "t") and isinstance(v, (str, int, float, bool))
                   or v is None}


def read(folder: str) -> dict:
    """pid -> Process for every records file the bootstrap wrote."""
    out: dict = {}
    try:
        names = sorted(os.listdir(folder))[:MAX_FILES]
    except OSError:
        return out
    for name in names:
        if not (name.startswith("p") and name.endswith(".jsonl")):
            continue
        items = _lines(os.path.join(folder, name))
        boot = next((i for i in items if i.get("k") == "boot" and isinstance(i.get("pid"), int)), None)
        if boot is None:
            continue
        p = out.setdefault(boot["pid"], Process(pid=boot["pid"]))
        for item in items:
            _apply(p, item)
    return out
