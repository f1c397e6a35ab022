"""Issue 21, what a new user hits: each item pinned by a test of the real behaviour.

Item 2 (a harmful fix), item 3 (the wrong interpreter), item 6 (commands that fail or
contradict) and the smaller items of 10 that are not another helper's.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import load_facts
from flexdoctor import checks, runner
from flexdoctor.facts import CacheFacts, CacheLocation, PathStat

ROOT = Path(__file__).resolve().parents[1]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def run_check(check_id: str, facts):
    spec = {s.id: s for s in checks.builtin()}[check_id]
    return runner.run_one(spec, facts)


def flexdoctor(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: int = 300):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TRITON_"))}
    e.update(PYTHONPATH=str(ROOT), CI="1")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True,
                          env=e, timeout=timeout, cwd=cwd or ROOT)


# ------------------------------------------------------------------ item 2: never chmod a shared folder


def _cache_at(rows, uid: int, kind: str = "inductor"):
    f = load_facts("h100")
    chain = [PathStat(p, owner, mode, role) for p, owner, mode, role in rows]
    loc = CacheLocation(kind=kind, path=rows[0][0], source="TORCHINDUCTOR_CACHE_DIR", exists=True,
                        in_temp=True, owner_uid=rows[0][1], mode=rows[0][2], chain=chain)
    return dataclasses.replace(f, cache=CacheFacts(uid=uid, inductor=loc))


ROOT_DIR = ("/", 0, 0o755, "parent")


@pytest.mark.parametrize("rows", [
    [("/tmp", 0, 0o1777, "target"), ROOT_DIR],
    [("/dev/shm", 0, 0o1777, "target"), ("/dev", 0, 0o755, "parent"), ROOT_DIR],
    [("/var/tmp", 0, 0o1777, "target"), ("/var", 0, 0o755, "parent"), ROOT_DIR],
    [("/scratch", 0, 0o777, "target"), ROOT_DIR],  # any folder right under /: shared by the machine
    [("/home", 0, 0o775, "target"), ROOT_DIR],
    [("/data/shared", 0, 0o1777, "target"), ("/data", 0, 0o755, "parent"), ROOT_DIR],  # sticky: shared
])
def test_fd504_as_root_never_advises_chmod_on_a_shared_folder(rows):
    r = run_check("FD504", _cache_at(rows, uid=0))
    assert r.status.value == "fail"
    assert not any("chmod" in c or "chown" in c for c in r.fix.commands), r.fix.commands
    assert r.fix.kb == "FDE960"
    assert "mkdir -p -m 700 $HOME/.cache/torchinductor" in r.fix.commands
    assert "export TORCHINDUCTOR_CACHE_DIR=$HOME/.cache/torchinductor" in r.fix.commands


def test_fd504_chmod_stays_for_the_users_own_cache_dir():
    rows = [("/home/me/cache", 1000, 0o775, "target"), ("/home/me", 1000, 0o755, "parent"),
            ("/home", 0, 0o755, "parent"), ROOT_DIR]
    r = run_check("FD504", _cache_at(rows, uid=1000))
    assert r.fix.kb == "FDE953" and r.fix.commands == ("chmod go-w /home/me/cache",)


def test_fd504_triton_cache_moves_with_its_own_variable():
    rows = [("/dev/shm", 0, 0o1777, "target"), ("/dev", 0, 0o755, "parent"), ROOT_DIR]
    f = _cache_at(rows, uid=0)
    f = dataclasses.replace(f, cache=CacheFacts(uid=0, inductor=None, triton=dataclasses.replace(
        f.cache.inductor, kind="triton", source="TRITON_CACHE_DIR")))
    r = run_check("FD504", f)
    assert "export TRITON_CACHE_DIR=$HOME/.triton/cache" in r.fix.commands
    assert not any("chmod" in c for c in r.fix.commands)


@pytest.mark.skipif(not IS_ROOT, reason="the harm is root's: as root /tmp is 'yours'")
@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
def test_warm_cache_refusal_as_root_never_prints_chmod_of_a_system_folder(tmp_path, folder):
    if not os.path.isdir(folder):
        pytest.skip(f"no {folder} here")
    before = os.stat(folder).st_mode
    done = flexdoctor("warm-cache", "--device", "cpu", "--preset", "cpu-smoke", "--cache-dir", folder,
                      env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "chmod" not in done.stderr and "FDE960" in done.stderr
    assert "$ mkdir -p -m 700 $HOME/.cache/torchinductor" in done.stderr
    assert os.stat(folder).st_mode == before
