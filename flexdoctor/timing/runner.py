"""Run a command under the bootstrap and torch's structured trace, and time every process of it.

``measure(argv)`` is the one entry: it makes the private folders (boot.py), starts the command
through the one runner (worker/run.py: time-boxed, its whole tree ended afterwards), watches
``/proc`` for when each of the command's Python processes is gone, reads back the bootstrap's and
torch's records, and cuts each process's life into phases (phases.py). ``compare`` runs the same
command with and without some settings (e.g. ``TORCHINDUCTOR_COMPILE_THREADS=1``), interleaved.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable, Optional

from ..worker import lifetime as worker_lifetime
from ..worker import run as worker_run
from . import boot, phases, torchlog
from .model import Measurement, Process

POLL_S = 0.01  # how often the watcher looks at /proc: an exit is seen at most this late


def _stat(pid: int) -> Optional[tuple]:
    """(state, start ticks) of a process from /proc/PID/stat, None when it is gone."""
    rest = worker_lifetime.proc_stat(pid)
    try:
        return None if rest is None else (rest[0].decode("ascii", "replace"), int(rest[19]))
    except (IndexError, ValueError):
        return None


class Watcher:
    """Notes when each process of the run is gone: the command itself, and every process whose
    bootstrap wrote a records file (a zombie counts as gone: it has exited)."""

    def __init__(self, folder: str, interval: float = POLL_S) -> None:
        self.folder, self.interval = folder, interval
        self.exits: dict = {}  # pid -> time.time() it was seen gone
        self.watched: dict = {}  # pid -> its start ticks (None: unknown)
        self.seen: set = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flexdoctor-watcher", daemon=True)

    def follow(self, pid: int) -> None:
        st = _stat(pid)
        self.watched[pid] = st[1] if st else None
        self.seen.add(pid)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()

    def poll(self) -> None:
        now = time.time()
        try:
            names = os.listdir(self.folder)
        except OSError:
            names = []
        for name in names:
            digits = name[1:].split(".")[0].split("-")[0]
            if name.startswith("p") and digits.isdigit() and int(digits) not in self.seen:
                self.follow(int(digits))
        for pid, ticks in list(self.watched.items()):
            st = _stat(pid)
            if st is None or st[0] in ("Z", "X") or (ticks is not None and st[1] != ticks):
                self.exits[pid] = now
                del self.watched[pid]

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(1.0)
        self.poll()


def _roles(procs: list, top: Process) -> None:
    """launcher / rank / main / helper (see Process.role)."""
    ranks = [p for p in procs if p is not top and p.boot is not None and p.rank is not None]
    for p in procs:
        p.role = "helper"
    if ranks:
        top.role = "launcher"
        for p in ranks:
            p.role = "rank"
        return
    with_torch = [p for p in procs if any(s.kind == "import_torch" for s in p.imports) or p.log is not None]
    if top.boot is not None and (top in with_torch or not with_torch):
        top.role = "main"
        return
    main = min(with_torch, key=lambda p: p.start or 0.0) if with_torch else top
    main.role = "main"
    if main is not top:
        top.role = "launcher"


def assemble(top_pid: int, spawn: float, records: dict, logs: dict, exits: dict) -> list:
    """The processes of one run, the command's own first, each cut into phases."""
    procs = dict(records)
    for pid, log in logs.items():
        if pid is not None and pid not in procs:
            procs[pid] = Process(pid=pid)
    top = procs.setdefault(top_pid, Process(pid=top_pid))
    top.start = spawn  # more exact than /proc's ticks, and known without a bootstrap
    for pid, p in procs.items():
        p.log = logs.get(pid)
        if p.rank is None and p.log is not None and p.log.rank is not None:
            p.rank = p.log.rank
        p.exit = exits.get(pid, p.exit)
        phases.analyse(p)
    ordered = [top] + sorted((p for p in procs.values() if p is not top), key=lambda p: (p.start or 0.0, p.pid))
    _roles(ordered, top)
    return ordered


def measure(argv: list, env: Optional[dict] = None, timeout: Optional[float] = None,
            stdout: Optional[int] = None, keep_trace: Optional[str] = None,
            inspect: Optional[Callable[[str], object]] = None, settings: Optional[dict] = None,
            on_line: Optional[Callable[[str], None]] = None, procs: Optional[set] = None) -> Measurement:
    """Run ``argv`` with ``settings`` added to ``env``: its output on the terminal, or its stdout to
    the descriptor ``stdout``, or (``on_line``) each line of its stdout and stderr fed to
    ``on_line`` as it comes (a worker script's wire: ``worker.run.Reader.feed``).
    ``inspect(trace_dir)`` is called before the trace is removed (its value lands in
    ``Measurement.inspected``). ``procs``: a set the started ``worker.run.Child`` is kept in while
    it runs, so another thread can end it (``worker.run.kill``: warm-cache's Ctrl-C). Never raises
    for the command's sake."""
    base = dict(os.environ if env is None else env)
    base.update(settings or {})
    result = Measurement(command=list(argv), env_changes=dict(settings or {}))
    folders = boot.Folders(keep_trace)
    try:
        watcher = Watcher(folders.records)
        result.spawn = time.time()
        if on_line is not None:
            child = worker_run.start(argv, folders.env(base), on_line=on_line, merge_stderr=True)
        else:
            child = worker_run.start(argv, folders.env(base), terminal=True, stdout=stdout)
        if isinstance(child, worker_run.Completed):
            result.started, result.start_error, result.start_errno = False, child.start_error, child.start_errno
            return result
        if procs is not None:
            procs.add(child)
        watcher.follow(child.proc.pid)
        watcher.start()
        try:
            done = worker_run.wait(child, timeout)
        finally:
            watcher.stop()
            if procs is not None:
                procs.discard(child)
        result.returncode, result.timed_out = done.returncode, done.timed_out
        logs = torchlog.read(folders.trace)
        result.inspected = inspect(folders.trace) if inspect is not None else None
        result.processes = assemble(child.proc.pid, result.spawn, boot.read(folders.records), logs, watcher.exits)
        top = result.processes[0]
        result.wall = top.wall
        result.trace_dir = keep_trace
    finally:
        folders.close()
    return result


def compare(argv: list, settings: dict, runs: int = 1, **kw) -> list:
    """[(without, with)] * runs: the same command without and with ``settings``, interleaved
    (so a cache warmed by one run helps both sides alike)."""
    out = []
    for _ in range(max(1, runs)):
        out.append((measure(argv, **kw), measure(argv, settings=settings, **kw)))
    return out
