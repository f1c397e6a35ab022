"""No process outlives flexdoctor: real commands, a fake torch whose import leaves processes behind.

The fake ``torch`` package (first on PYTHONPATH, so every worker and ``--run`` command imports it)
starts a child that calls ``setsid()`` (leaving the worker's process group, as daemons do) and a
grandchild of that child, writes their pids and the importer's to a file, and sleeps. The child
also holds the worker's stdout pipe, so a reader that waits for end-of-file would hang. Each test
stops flexdoctor (a signal, a time box, or a normal end) and asserts that none of them survives.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import flexdoctor
from flexdoctor.worker import lifetime
from flexdoctor.worker import run as worker_run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

REPO = Path(flexdoctor.__file__).resolve().parent.parent
FAKE_TORCH = textwrap.dedent('''
    import os, subprocess, sys, time

    _code = (
        "import os, subprocess, sys, time\\n"
        "os.setsid()\\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\\n"
        "with open(sys.argv[1], 'a') as fh: fh.write('%d\\\\n%d\\\\n' % (os.getpid(), g.pid))\\n"
        "time.sleep(600)\\n"
    )
    subprocess.Popen([sys.executable, "-c", _code, os.environ["FD_TEST_PIDS"]])
    with open(os.environ["FD_TEST_PIDS"], "a") as fh:
        fh.write("%d\\n" % os.getpid())
    if os.environ.get("FD_TEST_MODE") != "return":
        time.sleep(600)
    else:  # return once the setsid'd child and its child run (the probe may exit right after: os._exit)
        _deadline = time.time() + 30
        while len(open(os.environ["FD_TEST_PIDS"]).read().split()) < 3 and time.time() < _deadline:
            time.sleep(0.01)
''')


class Sandbox:
    def __init__(self, root: Path):
        self.root = root
        site = root / "site" / "torch"
        site.mkdir(parents=True)
        (site / "__init__.py").write_text(FAKE_TORCH)
        self.pid_file = root / "pids"
        self.pid_file.write_text("")
        self.cache = root / "cache"
        self.seen: set = set()

    def env(self, mode: str = "sleep") -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
        env.update(PYTHONPATH=f"{self.root / 'site'}{os.pathsep}{REPO}", FD_TEST_PIDS=str(self.pid_file),
                   FD_TEST_MODE=mode, CI="1", FLEXDOCTOR_LANG="en")
        return env

    def start(self, *args: str, mode: str = "sleep", nohup: bool = False) -> subprocess.Popen:
        """flexdoctor with SIGINT, SIGTERM and SIGHUP at their defaults (``nohup``: SIGHUP ignored,
        as nohup(1) starts it), whatever this test process inherited: under nohup or a CI agent
        that ignores SIGHUP, an ignored signal would stay ignored across exec (POSIX)."""
        return subprocess.Popen([sys.executable, "-m", "flexdoctor", *args], cwd=self.root, env=self.env(mode),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=functools.partial(_signals_as_started, nohup))

    def pids(self) -> list:
        found = [int(x) for x in self.pid_file.read_text().split()]
        self.seen.update(found)
        return found

    def wait_for(self, count: int, proc: subprocess.Popen, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while len(self.pids()) < count:
            assert proc.poll() is None, f"flexdoctor ended first: {proc.communicate()}"
            assert time.monotonic() < deadline, f"only {self.pids()} started"
            time.sleep(0.05)

    def survivors(self) -> list:
        self.pids()
        return [pid for pid in sorted(self.seen) if _alive(pid)]

    def cleanup(self) -> None:
        for pid in self.survivors():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _signals_as_started(nohup: bool) -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_IGN if nohup else signal.SIG_DFL)


def _alive(pid: int) -> bool:
    """Running, not a zombie (a killed process waits for its reaper as a zombie: it is dead)."""
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


def _ended(pid: int, within: float = 10.0) -> bool:
    """Dead within a few seconds: a SIGKILL'd process still has to be scheduled to exit, which on a
    loaded 2-core runner is not instant (the sleepers here would live 300 s if never killed)."""
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def sandbox(tmp_path):
    box = Sandbox(tmp_path)
    yield box
    box.cleanup()


def _settle(box: Sandbox) -> list:
    """Survivors, allowing the kernel a moment to deliver the last SIGKILLs."""
    deadline = time.monotonic() + 5
    while box.survivors() and time.monotonic() < deadline:
        time.sleep(0.05)
    return box.survivors()


WARM = ("warm-cache", "--device", "cpu", "--dtype", "fp32", "--head-dim", "16", "--seq-len", "128",
        "--heads", "2", "--no-verify")
COMMANDS = {
    "check": (("check", "--format", "json"), 3),
    "check-deep": (("check", "--deep", "--format", "json"), 6),  # the torch probe and the deep probe
    "warm-cache": (WARM, 3),
    "warm-cache-run": (("warm-cache", "--run", f"{sys.executable} -c 'import torch'"), 3),
    "bench": (("bench", "--device", "cpu", "-L", "128", "-d", "16", "--impl", "sdpa-math"), 3),
}
CASES = [(cmd, sig) for cmd in ("check", "warm-cache", "warm-cache-run") for sig in ("SIGTERM", "SIGINT", "SIGHUP")]
CASES += [("bench", "SIGTERM"), ("check-deep", "SIGHUP")]


@pytest.mark.parametrize("command, signame", CASES)
def test_a_signal_leaves_no_process_behind(sandbox, command, signame):
    args, count = COMMANDS[command]
    if command.startswith("warm-cache"):
        args = (*args, "--cache-dir", str(sandbox.cache))
    proc = sandbox.start(*args)
    sandbox.wait_for(count, proc)
    signum = getattr(signal, signame)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)  # never hangs on a pipe a setsid'd grandchild holds
    assert _settle(sandbox) == [], f"survived {signame}: {err}"
    assert proc.returncode == 128 + signum
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("flexdoctor: interrupted" if signum == signal.SIGINT else f"flexdoctor: stopped by {signame}")


def test_under_nohup_a_hangup_does_not_stop_flexdoctor(sandbox):
    """nohup(1) ignores SIGHUP so that the command outlives its terminal; flexdoctor keeps that
    choice (worker.lifetime.own_signals leaves an ignored signal ignored) and still ends everything
    it started on SIGTERM."""
    proc = sandbox.start("check", "--format", "json", nohup=True)
    sandbox.wait_for(3, proc)
    proc.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert _settle(sandbox) == [] and proc.returncode == 128 + signal.SIGTERM, err


def test_a_time_box_leaves_no_process_behind(sandbox):
    proc = sandbox.start(*WARM, "--cache-dir", str(sandbox.cache), "--timeout", "3")
    out, err = proc.communicate(timeout=120)
    assert len(sandbox.pids()) >= 3  # the compile, then the fingerprint run, each time-boxed
    assert _settle(sandbox) == []
    assert proc.returncode == 1 and "did not finish in 3 s" in out, (out, err)


def test_a_normal_end_leaves_no_process_behind(sandbox):
    """torch imports and returns, leaving its setsid'd child holding the probe's stdout."""
    proc = sandbox.start("check", "--format", "json", mode="return")
    out, err = proc.communicate(timeout=120)
    assert len(sandbox.pids()) == 3
    assert _settle(sandbox) == []
    assert proc.returncode in (0, 1) and "Traceback" not in err, err


# ------------------------------------------------------------------------ the runner, in process


def test_run_ends_what_a_finished_process_left_behind(tmp_path):
    pid_file = tmp_path / "pid"
    script = f"setsid sleep 300 & echo $! > {pid_file}; echo hello"
    done = worker_run.run(["bash", "-c", script], timeout=30)
    assert done.returncode == 0 and done.stdout == "hello\n"  # not held up by the sleeper's pipe
    assert _ended(int(pid_file.read_text()))


def test_run_time_box_kills_setsid_grandchildren(tmp_path):
    pid_file = tmp_path / "pid"
    script = f"setsid bash -c 'sleep 300 & echo $! > {pid_file}; wait' & echo started; sleep 300"
    done = worker_run.run(["bash", "-c", script], timeout=2)
    assert done.timed_out and done.returncode is None and done.stdout == "started\n"
    assert _ended(int(pid_file.read_text()))
    assert lifetime._LIVE == {}


def test_idle_time_box_and_lines_as_they_come():
    lines: list = []
    done = worker_run.stream([sys.executable, "-c", "print('one', flush=True); import time; time.sleep(60)"],
                             lines.append, idle_timeout=1.5)
    assert done.timed_out and lines == ["one"]


def test_start_errors_are_data():
    done = worker_run.run(["/nonexistent/program"], timeout=5)
    assert done.returncode is None and done.start_error and done.start_errno == 2
    done = worker_run.run(["bad\0arg"], timeout=5)
    assert done.start_error


def test_shutdown_ends_a_prefetched_process(tmp_path):
    child = worker_run.start(["bash", "-c", "sleep 300"])
    pid = child.proc.pid
    assert _alive(pid)
    lifetime.shutdown()
    assert not _alive(pid) and lifetime._LIVE == {}


def test_a_signal_inside_the_import_machinery_is_delivered_again_later(monkeypatch):
    """Raising inside importlib's module-lock code leaves the lock held and every importing thread
    hangs (check hung on Ctrl-C while its probe threads imported): such a signal is re-sent."""
    import types

    from flexdoctor.worker import lifetime

    sent = []
    monkeypatch.setattr(lifetime, "_redeliver", lambda signum, delay=0.02: sent.append(signum))
    monkeypatch.setitem(lifetime._STATE, "signal", None)
    importing = types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename="<frozen importlib._bootstrap>"))
    lifetime._on_signal(signal.SIGINT, importing)  # no exception: deferred
    assert sent == [signal.SIGINT] and lifetime.received() is None
    ordinary = types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename=__file__))
    with pytest.raises(lifetime.Interrupted):
        lifetime._on_signal(signal.SIGINT, ordinary)
    assert lifetime.received() == signal.SIGINT
