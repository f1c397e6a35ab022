"""Issue 20 item 3 (flexdoctor's own --output): the report is written to a new file made by
mkstemp in the target's folder and renamed over the target; a link at the target is refused; a
FIFO nobody reads is an error, not a wait; the mode is the umask's and never wider than the file
replaced; nothing is left behind on failure. As root, with a real second uid (setpriv) planting
the links in a folder it owns, as a prolog that writes its report into a user's folder would."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import typer

from flexdoctor import cliutil

FD = [sys.executable, "-m", "flexdoctor"]
FACTS = Path(__file__).parent / "fixtures" / "facts" / "cpu_only.json"
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                             reason="needs root and setpriv to act as a second user")


def run(*args: str, timeout: int = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env["FLEXDOCTOR_LANG"] = "en"
    return subprocess.run(FD + list(args), capture_output=True, text=True, timeout=timeout, env=env)


def as_nobody(*argv: str) -> None:
    subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv],
                   check=True, capture_output=True, timeout=30)


@pytest.fixture
def box():
    """A folder others can reach (0755), a root-owned 0600 secret in it, and a folder that
    belongs to nobody (the user's folder the report is written into)."""
    base = Path(tempfile.mkdtemp(prefix="fd-output-"))
    base.chmod(0o755)
    secret = base / "secret"
    secret.write_text("root's secret\n")
    secret.chmod(0o600)
    theirs = base / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY) if os.geteuid() == 0 else None
    yield base, secret, theirs
    shutil.rmtree(base, ignore_errors=True)


@as_root
def test_a_link_planted_at_the_target_is_refused_and_the_file_it_names_untouched(box):
    base, secret, theirs = box
    as_nobody("ln", "-s", str(secret), str(theirs / "report.json"))
    done = run("check", "--from-facts", str(FACTS), "--format", "json", "-o", str(theirs / "report.json"))
    assert done.returncode == 2, done.stderr
    assert "symbolic link" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert secret.read_text() == "root's secret\n" and stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert (theirs / "report.json").is_symlink()


@as_root
def test_a_link_planted_at_the_old_temporary_name_is_never_written_through(box):
    """The temporary file was `.<name>.<pid>.tmp`, opened following links: a user who planted
    that name had root overwrite any file. mkstemp makes a new name, O_EXCL."""
    base, secret, theirs = box
    target = theirs / "report.json"
    planted = theirs / f".report.json.{os.getpid()}.tmp"
    as_nobody("ln", "-s", str(secret), str(planted))
    cliutil.write('{"report": 1}\n', target)
    assert secret.read_text() == "root's secret\n"
    assert target.read_text() == '{"report": 1}\n' and not target.is_symlink()
    assert planted.is_symlink()  # theirs, left alone


def test_a_symlink_target_is_refused_even_our_own(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    done = run("check", "--from-facts", str(FACTS), "--format", "json", "-o", str(link))
    assert done.returncode == 2 and "symbolic link" in done.stderr
    assert real.read_text() == "old" and link.is_symlink()


def test_mode_is_the_umask_and_never_wider_than_the_file_replaced(tmp_path):
    old = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.json"
        cliutil.write("x\n", fresh)
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        private = tmp_path / "private.json"
        private.write_text("old")
        private.chmod(0o600)
        cliutil.write("new\n", private)
        assert private.read_text() == "new\n" and stat.S_IMODE(private.stat().st_mode) == 0o600
        os.umask(0o077)
        tight = tmp_path / "tight.json"
        cliutil.write("x\n", tight)
        assert stat.S_IMODE(tight.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_a_failed_replace_leaves_the_old_report_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("old report")

    def fail(*_a, **_k):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(typer.Exit) as exc:
        cliutil.write("new report", target)
    assert exc.value.exit_code == 2
    assert target.read_text() == "old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_fifo_nobody_reads_is_an_error_not_a_wait(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = run("check", "--from-facts", str(FACTS), "-q", "-o", str(fifo), timeout=60)
    assert done.returncode == 2 and "FIFO" in done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_devices_and_read_fifos_are_written_through(tmp_path):
    assert run("check", "--from-facts", str(FACTS), "-o", os.devnull).returncode == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    import threading

    got = {}
    reader = threading.Thread(target=lambda: got.setdefault("text", fifo.read_text()))
    reader.start()
    assert run("check", "--from-facts", str(FACTS), "-q", "-o", str(fifo)).returncode == 0
    reader.join(30)
    assert "passed" in got["text"] and stat.S_ISFIFO(fifo.stat().st_mode)
