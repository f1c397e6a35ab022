"""The one subprocess runner: every process flexdoctor starts goes through here.

``start`` a process (its stdout lines fed live to ``on_line``), then ``wait`` for it with a time
box in all (``timeout``) and without output (``idle_timeout``); ``run``, ``stream`` and
``attached`` do both in one call. When the process exits or runs out of time its whole tree is
ended (worker/lifetime.py), and reading its pipes stops within ``DRAIN_S`` even if something
out of reach still holds them. Every failure (could not start, timed out, crashed, exited
non-zero) comes back as data in ``Completed``: nothing here raises.

``Reader`` is the parent's side of the worker wire protocol (_wire.py): the last stage, the
finished parts and the one result of a worker script.
"""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from . import lifetime
from ._wire import PART, RESULT, STAGE

DRAIN_S = 2.0  # after the process ended: how long its output may still take to arrive

# The question every start asks first: ``gate(argv, env)`` -> None (start it) or one line saying
# why not. worker/ imports nothing of flexdoctor, so the answer comes from above: the CLI entry
# installs flexdoctor.safety's root guard (as root, nothing a non-root user can change is started).
_GATE: dict = {"gate": None}


def set_gate(gate: Optional[Callable[[list, dict], Optional[str]]]) -> None:
    """Install (or with None remove) the question every ``start`` asks before starting."""
    _GATE["gate"] = gate


@dataclass(frozen=True)
class Completed:
    returncode: Optional[int]  # None: timed out or could not start
    stdout: str
    stderr: str
    timed_out: bool = False
    start_error: Optional[str] = None
    start_errno: Optional[int] = None  # errno.ENOENT: no such program
    refused: bool = False  # the gate refused to start it (start_error says why)

    @property
    def signal_name(self) -> Optional[str]:
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None


class Child:
    """A started process and what its readers have collected so far."""

    def __init__(self, proc: subprocess.Popen, token: str, on_line: Optional[Callable[[str], None]]):
        self.proc, self.token, self.on_line = proc, token, on_line
        self.started = self.last_output = time.monotonic()
        self.out: list = []
        self.err: list = []
        self.readers = []
        if proc.stdout is not None:
            self.readers.append(threading.Thread(target=self._read_lines, daemon=True))
        if proc.stderr is not None:
            self.readers.append(threading.Thread(target=self._read_all, daemon=True))
        for reader in self.readers:
            reader.start()

    def _read_lines(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            self.last_output = time.monotonic()
            line = raw.decode("utf-8", errors="replace")
            self.out.append(line)
            if self.on_line is not None:
                try:
                    self.on_line(line.rstrip("\n"))
                except Exception:  # a display problem must not lose the output
                    pass

    def _read_all(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self.err.append(chunk)

    def pause(self, delay: float) -> float:
        """Wait up to ``delay`` s, less when the output ends (the process is about to exit);
        returns the next delay (backing off to 50 ms while nothing happens)."""
        reading = [r for r in self.readers if r.is_alive()]
        if not reading:
            time.sleep(delay)
            return min(delay * 2, 0.05)
        reading[0].join(delay)
        return 0.001 if not reading[0].is_alive() else min(delay * 2, 0.05)

    def drain(self) -> None:
        """Let the readers finish; a pipe still held after ``DRAIN_S`` (by a process out of
        reach) is left to its daemon thread, never waited on forever."""
        deadline = time.monotonic() + DRAIN_S
        for reader in self.readers:
            reader.join(max(deadline - time.monotonic(), 0.0))

    def completed(self, timed_out: bool) -> Completed:
        code = None if timed_out else self.proc.returncode
        return Completed(code, "".join(self.out), b"".join(self.err).decode("utf-8", errors="replace"),
                         timed_out=timed_out)


def _ask_gate(argv: Sequence[str], env: Optional[dict]) -> Optional[str]:
    gate = _GATE["gate"]
    if gate is None:
        return None
    try:
        return gate(list(argv), dict(os.environ if env is None else env))
    except Exception as exc:  # a gate that cannot answer refuses
        return f"{type(exc).__name__}: {exc}"


def start(argv: Sequence[str], env: Optional[dict] = None, on_line: Optional[Callable[[str], None]] = None,
          merge_stderr: bool = False, terminal: bool = False, stdout: Optional[int] = None) -> "Child | Completed":
    """Start ``argv`` (stdin closed; ``terminal``: its output goes to flexdoctor's own stdout and
    stderr, or its stdout to the file descriptor ``stdout``). A Completed with ``start_error`` when
    it cannot start."""
    refusal = _ask_gate(argv, env)
    if refusal:
        return Completed(None, "", "", start_error=refusal, refused=True)
    kw: dict = {"stdin": None if terminal else subprocess.DEVNULL}
    if terminal and stdout is not None:
        kw["stdout"] = stdout
    if not terminal:
        kw.update(stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE)
    try:
        proc, token = lifetime.spawn(list(argv), env, **kw)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
        why = getattr(exc, "strerror", None) or exc
        return Completed(None, "", "", start_error=f"{why}: {argv[0] if argv else '(empty command)'}",
                         start_errno=getattr(exc, "errno", None))
    return Child(proc, token, on_line)


def wait(child: "Child | Completed", timeout: Optional[float] = None,
         idle_timeout: Optional[float] = None) -> Completed:
    """Collect a started process. Its tree is killed after ``timeout`` seconds from now, or after
    ``idle_timeout`` seconds without a stdout line (a hung item in a long run)."""
    if isinstance(child, Completed):
        return child
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    delay = 0.001
    try:
        while not lifetime.exited(child.proc):
            now = time.monotonic()
            if (deadline is not None and now >= deadline) or (
                    idle_timeout is not None and now - child.last_output > idle_timeout):
                timed_out = True
                break
            delay = child.pause(delay)
    finally:  # also on Ctrl-C or a signal: the process tree never outlives its wait
        lifetime.end(child.proc, child.token)
    child.drain()
    return child.completed(timed_out)


def run(argv: Sequence[str], timeout: float, env: Optional[dict] = None) -> Completed:
    return wait(start(argv, env), timeout)


def stream(argv: Sequence[str], on_line: Callable[[str], None], timeout: Optional[float] = None,
           idle_timeout: Optional[float] = None, env: Optional[dict] = None,
           merge_stderr: bool = False) -> Completed:
    """Run ``argv`` feeding each stdout line (without its newline) to ``on_line`` as it arrives."""
    return wait(start(argv, env, on_line=on_line, merge_stderr=merge_stderr), timeout, idle_timeout)


def attached(argv: Sequence[str], env: Optional[dict] = None, timeout: Optional[float] = None,
             stdout: Optional[int] = None) -> Completed:
    """Run the user's own command with its output on the terminal (``warm-cache --run``, ``cache
    why``; ``stdout``: a file descriptor for its standard output instead, e.g. stderr's)."""
    return wait(start(argv, env, terminal=True, stdout=stdout), timeout)


def kill(child: "Child | Completed") -> None:
    """End a started process's whole tree now (its ``wait`` then returns)."""
    if isinstance(child, Child):
        lifetime.end(child.proc, child.token)


def tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


# --------------------------------------------------------------------------- the wire, parent side


class Reader:
    """Reads a worker's stdout (the _wire.py protocol), live through ``feed`` or afterwards.

    ``stage``: the last stage announced (where a crash or hang happened); ``parts``: finished
    sections as (name or None, value); ``result()``: the result line's JSON (None when there is
    none, or it is not JSON: ``garbage``); ``other``: the last lines outside the protocol.
    """

    def __init__(self, on_stage: Optional[Callable[[str], None]] = None,
                 on_part: Optional[Callable[[Optional[str], object], None]] = None, keep: int = 40):
        self.on_stage, self.on_part = on_stage, on_part
        self.stage: Optional[str] = None
        self.parts: list = []
        self.result_text: Optional[str] = None
        self.other: collections.deque = collections.deque(maxlen=keep)

    def feed(self, line: str) -> None:
        if line.startswith(STAGE):
            self.stage = line[len(STAGE):].strip()
            if self.on_stage is not None:
                self.on_stage(self.stage)
        elif line.startswith(PART):
            part = _part(line[len(PART):])
            if part is not None:
                self.parts.append(part)
                if self.on_part is not None:
                    self.on_part(*part)
        elif line.startswith(RESULT):
            self.result_text = line[len(RESULT):]
        elif line.strip():
            self.other.append(line)

    def result(self) -> Optional[dict]:
        if self.result_text is None:
            return None
        try:
            data = json.loads(self.result_text)
        except (ValueError, RecursionError):
            return None
        return data if isinstance(data, dict) else None

    @property
    def garbage(self) -> bool:
        return self.result_text is not None and self.result() is None


def read(stdout: str, **kw) -> Reader:
    """A Reader fed with a whole output at once."""
    reader = Reader(**kw)
    for line in stdout.splitlines():
        reader.feed(line)
    return reader


def _part(body: str) -> Optional[tuple]:
    """``NAME JSON`` or ``JSON`` -> (name or None, value); None when the JSON is broken."""
    if body[:1] in ("{", "["):
        name, payload = None, body
    else:
        cut = min((i for i in (body.find(" {"), body.find(" [")) if i >= 0), default=-1)
        if cut < 0:
            return None
        name, payload = body[:cut], body[cut + 1:]
    try:
        return name, json.loads(payload)
    except (ValueError, RecursionError):
        return None
