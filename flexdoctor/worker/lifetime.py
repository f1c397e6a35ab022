"""Process lifetime: nothing flexdoctor starts outlives it.

Every process starts in a session of its own (``spawn``), so its process group is its own and
one ``killpg`` ends it with everything in that group. A descendant can still leave the group by
calling ``setsid()``; on Linux flexdoctor is therefore also a child subreaper
(``PR_SET_CHILD_SUBREAPER``): a descendant whose parent dies is reparented to flexdoctor rather
than to init, so it stays findable under ``/proc`` and is killed too. Each process's environment
carries ``FLEXDOCTOR_WORKER=<token>``, which tells whose leftover such an orphan is.

When: a process's tree is ended as soon as it exits or runs out of time (``end``, called by
worker/run.py); whatever still runs is ended when flexdoctor exits (``shutdown``) or when a
signal arrives (``own_signals``: SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` in the main
thread; the CLI turns it into exit status 128 + n with one line).
"""

from __future__ import annotations

import atexit
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Iterable, Optional

ENV_KEY = "FLEXDOCTOR_WORKER"
LINUX = sys.platform.startswith("linux")
_PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
_PASSES = 50  # kill passes: each one catches what the previous one's victims forked or orphaned

_LOCK = threading.RLock()
_LIVE: dict = {}  # pid -> (Popen, token), from spawn until reaped
_COUNT = itertools.count(1)
_STATE: dict = {"subreaper": None, "signal": None, "note": None, "owned": False}


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived (a KeyboardInterrupt, so every Ctrl-C path applies)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


# --------------------------------------------------------------------------- starting


def spawn(argv: list, env: Optional[dict], **popen_kw) -> tuple:
    """Start ``argv`` in a new session, registered until ``end`` reaps it: (Popen, token).

    Raises what Popen raises (OSError, ValueError). The registry lock is held from fork to
    registration, so a sweep never mistakes a process being started for an orphan.
    """
    token = f"{os.getpid()}.{next(_COUNT)}"
    env = dict(os.environ if env is None else env)
    env[ENV_KEY] = token
    with _LOCK:
        _first_spawn()
        proc = subprocess.Popen(list(argv), env=env, start_new_session=os.name == "posix", **popen_kw)
        _LIVE[proc.pid] = (proc, token)
    return proc, token


def _first_spawn() -> None:
    """Become a subreaper, and end everything at exit: before non-daemon threads are joined
    (they may be waiting on a child), or else with the other exit handlers."""
    if _STATE["subreaper"] is not None:
        return
    _STATE["subreaper"] = False
    try:
        getattr(threading, "_register_atexit", atexit.register)(shutdown)
    except RuntimeError:  # the interpreter is already shutting down
        pass
    if not LINUX:
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        _STATE["subreaper"] = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc prctl (musl without it, seccomp): groups only
        pass


def exited(proc: subprocess.Popen) -> bool:
    """Has ``proc`` exited? Without reaping it: its pid (and process group id) stay reserved until
    ``end`` has killed the rest of its group, so a signal can never reach a recycled pid."""
    if proc.returncode is not None:
        return True
    if LINUX:
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:  # reaped already
            return True
    return proc.poll() is not None


# --------------------------------------------------------------------------- ending


def end(proc: subprocess.Popen, token: str) -> None:
    """Kill whatever is left of ``proc``'s tree (all of it, if it still runs), then reap it."""
    _kill_all([proc], {token})
    _reap(proc, patience=5.0)


def shutdown() -> None:
    """End every process flexdoctor started and every orphan they left. Safe to call often."""
    with _LOCK:
        procs = [proc for proc, _ in _LIVE.values()]
    _kill_all(procs, None)
    for proc in procs:
        _reap(proc, patience=1.0)


def _reap(proc: subprocess.Popen, patience: float) -> None:
    """Reap ``proc`` once it has died; one stuck in the kernel (a GPU driver call) stays
    registered after ``patience`` seconds, for the next shutdown to try again."""
    deadline = time.monotonic() + patience
    while not exited(proc):
        if time.monotonic() > deadline:
            return
        time.sleep(0.005)
    with _LOCK:  # reaping frees the pid: never while a pass may still signal its group
        proc.wait()
        _LIVE.pop(proc.pid, None)


def _kill_all(procs: list, tokens: Optional[set]) -> None:
    """SIGKILL the groups and trees of ``procs`` and the orphans they left (``tokens``: whose
    orphans; None: every orphan), pass after pass until nothing of them is alive."""
    for attempt in range(_PASSES):
        with _LOCK:
            running = [proc for proc in procs if proc.returncode is None]  # not reaped: pid still ours
            for proc in running:
                _kill(proc.pid, group=True)
            victims = _victims(running, tokens)
            for pid in victims:
                _kill(pid, group=False)
            _reap_orphans()
        if not victims:
            return
        time.sleep(min(0.002 * (attempt + 1), 0.05))


def _kill(pid: int, group: bool) -> None:
    try:
        if os.name != "posix":
            os.kill(pid, signal.SIGTERM)
        elif group:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:  # gone already, or not ours to kill
        pass


def _victims(procs: list, tokens: Optional[set]) -> set:
    """Living processes in the trees of ``procs`` and of their orphans (Linux; elsewhere the
    process groups are all there is)."""
    if not LINUX:
        return set()
    roots = {proc.pid for proc in procs} | set(_orphans(tokens))
    found: set = set()
    for root in roots:
        found |= _descendants(root) | {root}
    return {pid for pid in found if _alive(pid)}


def _orphans(tokens: Optional[set]) -> Iterable[int]:
    """flexdoctor's own children that it did not start: reparented to it (the subreaper) when
    their parent died. Children in flexdoctor's own session are a library's, not orphans."""
    own_session = os.getsid(0)
    for pid in _children(os.getpid()):
        if pid in _LIVE:
            continue
        try:
            if os.getsid(pid) == own_session:
                continue
        except OSError:
            continue
        if tokens is None or _token(pid) in tokens:
            yield pid


def _reap_orphans() -> None:
    """Collect the exit status of dead orphans (as their subreaper, flexdoctor must)."""
    for pid in list(_orphans(None)):
        try:
            os.waitpid(pid, os.WNOHANG)
        except OSError:
            pass


# --------------------------------------------------------------------------- /proc


def _descendants(root: int) -> set:
    found: set = set()
    todo = [root]
    while todo:
        for kid in _children(todo.pop()):
            if kid not in found:
                found.add(kid)
                todo.append(kid)
    return found


def _children(pid: int) -> list:
    """Direct children of ``pid``: /proc/PID/task/*/children, or a scan of all of /proc when
    the kernel lacks that file (built without CONFIG_PROC_CHILDREN)."""
    if not _children_files():
        return [p for p, (ppid, _) in _stat_table().items() if ppid == pid]
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    kids: list = []
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                kids += [int(x) for x in fh.read().split()]
        except (OSError, ValueError):  # the thread or the process ended meanwhile
            pass
    return kids


def _children_files() -> bool:
    if "children_files" not in _STATE:
        _STATE["children_files"] = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
    return _STATE["children_files"]


def _stat_table() -> dict:
    """pid -> (ppid, state) for every process in /proc."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat(int(name))
            if fields is not None:
                table[int(name)] = fields
    return table


def proc_stat(pid: int) -> Optional[list]:
    """The fields of /proc/PID/stat after the name (state first, then ppid, ...: proc(5) numbers
    them from 3), None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].split()  # the name in parentheses may hold spaces


def _stat(pid: int) -> Optional[tuple]:
    rest = proc_stat(pid)
    return None if rest is None else (int(rest[1]), rest[0].decode("ascii", "replace"))


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[1] not in ("Z", "X")


def _token(pid: int) -> Optional[str]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read().split(b"\0")
    except OSError:
        return None
    key = ENV_KEY.encode() + b"="
    for item in env:
        if item.startswith(key):
            return item[len(key):].decode("ascii", "replace")
    return None


# --------------------------------------------------------------------------- signals


def own_signals() -> None:
    """Installed once, by the CLI entry point: SIGINT, SIGTERM and SIGHUP raise ``Interrupted``
    in the main thread (so ``finally`` blocks run and children are ended); a second signal ends
    everything at once. Signals ignored when flexdoctor started (nohup) stay ignored."""
    if _STATE["owned"] or threading.current_thread() is not threading.main_thread():
        return
    _STATE["owned"] = True
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is None or signal.getsignal(signum) is signal.SIG_IGN:
            continue
        try:
            signal.signal(signum, _on_signal)
        except (OSError, ValueError):
            pass


def _on_signal(signum: int, frame) -> None:
    if _STATE["signal"] is not None:  # a second signal while stopping: stop now
        shutdown()
        os._exit(exit_status(signum))
    if _in_import_machinery(frame):
        # Raising inside importlib's own module-lock code leaves that lock held: every thread that
        # imports afterwards (probe threads, the preloader, then the main thread) waits on it
        # forever (seen: `check` hung on Ctrl-C). Deliver the signal again a moment later, once the
        # main thread is back in ordinary code.
        _redeliver(signum)
        return
    _STATE["signal"] = signum
    raise Interrupted(signum)


def _in_import_machinery(frame) -> bool:
    return frame is not None and frame.f_code.co_filename.startswith("<frozen importlib._bootstrap")


def _redeliver(signum: int, delay: float = 0.02) -> None:
    timer = threading.Timer(delay, os.kill, (os.getpid(), signum))
    timer.daemon = True
    timer.start()


def received() -> Optional[int]:
    """The signal that is stopping flexdoctor, if any."""
    return _STATE["signal"]


def note(text: str) -> None:
    """What the interrupted command wants said on its one line (e.g. what was not written)."""
    _STATE["note"] = text


def noted() -> Optional[str]:
    return _STATE["note"]


def exit_status(signum: int) -> int:
    """The shell's convention: 128 + the signal number (130 for SIGINT)."""
    return 128 + int(signum)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
