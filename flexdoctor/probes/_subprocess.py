"""Run a command with a hard timeout; its failure modes come back as data, never raise."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence


@dataclass(frozen=True)
class Completed:
    returncode: Optional[int]  # None: timed out or could not start
    stdout: str
    stderr: str
    timed_out: bool = False
    start_error: Optional[str] = None

    @property
    def signal_name(self) -> Optional[str]:
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None


def start(argv: Sequence[str], env: Optional[dict] = None) -> "subprocess.Popen | Completed":
    """Start ``argv``; a Completed with ``start_error`` when it cannot start."""
    try:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=os.name == "posix",  # so a timeout kills the whole group
        )
    except OSError as exc:
        return Completed(None, "", "", start_error=f"{exc.strerror or exc}: {argv[0]}")


def run(argv: Sequence[str], timeout: float, env: Optional[dict] = None) -> Completed:
    proc = start(argv, env)
    return proc if isinstance(proc, Completed) else wait(proc, timeout)


def wait(proc: subprocess.Popen, timeout: float) -> Completed:
    """Collect a started process, killing its whole group after ``timeout`` seconds."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a grandchild escaped the group and holds the pipes
            out, err = b"", b""
        return Completed(None, _decode(out), _decode(err), timed_out=True)
    return Completed(proc.returncode, _decode(out), _decode(err))


def kill(proc: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def stream(argv: Sequence[str], on_line: Callable[[str], None], timeout: Optional[float] = None,
           idle_timeout: Optional[float] = None) -> Completed:
    """Run ``argv`` feeding each stdout line (without its newline) to ``on_line`` as it arrives.

    The process group is killed after ``timeout`` seconds in all, or after ``idle_timeout``
    seconds without a new line (a hung item in a long run). ``on_line`` raising never loses output.
    """
    proc = start(argv)
    if isinstance(proc, Completed):
        return proc
    out: list = []
    err: list = []
    last = [time.monotonic()]

    def read_out() -> None:
        for raw in iter(proc.stdout.readline, b""):
            last[0] = time.monotonic()
            line = raw.decode("utf-8", errors="replace")
            out.append(line)
            try:
                on_line(line.rstrip("\n"))
            except Exception:  # a display problem must not lose the output
                pass

    def read_err() -> None:
        err.append(proc.stderr.read() or b"")

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for r in readers:
        r.start()
    started, timed_out = time.monotonic(), False
    while True:
        try:
            proc.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if (timeout is not None and now - started > timeout) or (
                    idle_timeout is not None and now - last[0] > idle_timeout):
                timed_out = True
                kill(proc)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
                break
    for r in readers:
        r.join(5)
    return Completed(None if timed_out else proc.returncode, "".join(out),
                     b"".join(err).decode("utf-8", errors="replace"), timed_out=timed_out)
