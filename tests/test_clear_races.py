"""clear-cache between its plan and its unlinks (issue 20.9), who holds the lock, and what
`--cache-dir` and the manifest row say (issue 21.10). Real files, real flocks held by real
subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flexdoctor.cache import clear, locations
from test_cache_clear import _env, _inductor, fd

PY_FILE = Path("ab") / ("cab" + "c" * 49 + ".py")


def test_a_file_replaced_after_listing_survives(tmp_path):
    """Same name, same size, another inode: someone else's file now. It stays, and is reported."""
    root = _inductor(tmp_path / "torchinductor_me")
    plan = clear.plan(["inductor"], _env(root, tmp_path))
    victim = root / PY_FILE
    text = victim.read_text()
    victim.unlink()
    victim.write_text("X" * len(text))  # replaced between the plan and the unlink
    out = clear.execute(plan)
    assert victim.read_text() == "X" * len(text)
    assert (str(PY_FILE), "changed", "") in out.errors
    assert not (root / "fxgraph").exists()  # the rest of the plan still went


def test_a_file_rewritten_in_place_after_listing_survives(tmp_path):
    """Same inode, new content (size and mtime change): not the file that was identified."""
    root = _inductor(tmp_path / "torchinductor_me")
    plan = clear.plan(["inductor"], _env(root, tmp_path))
    victim = root / PY_FILE
    with open(victim, "a") as fh:
        fh.write("# appended after the listing\n")
    out = clear.execute(plan)
    assert victim.exists() and (str(PY_FILE), "changed", "") in out.errors


def test_same_size_rewrite_is_caught_by_mtime(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    plan = clear.plan(["inductor"], _env(root, tmp_path))
    victim = root / PY_FILE
    st = victim.stat()
    victim.write_text("Y" * st.st_size)
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    out = clear.execute(plan)
    assert victim.read_text() == "Y" * st.st_size and (str(PY_FILE), "changed", "") in out.errors


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX if sys.argv[2] == "ex" else fcntl.LOCK_SH)
print("held", flush=True)
time.sleep(60)
"""


def _holding(root: Path, mode: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(root), mode], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.mark.parametrize("mode, holder, words", [
    ("sh", "warm-cache", "warm-cache is running"),
    ("ex", "clear-cache", "another flexdoctor clear-cache"),
])
def test_refusal_names_the_real_lock_holder(tmp_path, mode, holder, words):
    """A warm-cache holds the cache dir shared, a clear-cache exclusive: the refusal says which,
    with the holder's pid (from /proc/locks), and creates nothing in the cache."""
    root = _inductor(tmp_path / "torchinductor_me")
    names = sorted(p.name for p in root.iterdir())
    proc = _holding(root, mode)
    try:
        with pytest.raises(clear.Refused) as info:
            with clear.exclusive(str(root)):
                pass
        assert info.value.holder.kind == holder
        if sys.platform.startswith("linux"):
            assert info.value.holder.pid == proc.pid
            assert "import fcntl" in (info.value.holder.command or "")
        res = fd("clear-cache", "--yes", env=_env(root, tmp_path))
        assert res.returncode == 1 and words in res.stderr, res.stderr
        if sys.platform.startswith("linux"):
            assert f"pid {proc.pid}" in res.stderr
    finally:
        proc.kill()
        proc.wait()
    assert sorted(p.name for p in root.iterdir()) == names


def test_a_second_clear_cache_is_named_as_one(tmp_path):
    """Two clear-caches at once: while one holds the lock (clear.exclusive, as execute takes it,
    in another process), the other names a clear-cache, not a warm-cache."""
    root = _inductor(tmp_path / "torchinductor_me")
    code = ("import sys, time; from flexdoctor.cache import clear\n"
            "with clear.exclusive(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "held"
        res = fd("clear-cache", "--yes", env=_env(root, tmp_path))
        assert res.returncode == 1
        assert "clear-cache" in res.stderr and "warm-cache" not in res.stderr, res.stderr
    finally:
        proc.kill()
        proc.wait()


def test_cache_dir_flag_is_labelled_as_such(tmp_path):
    root = _inductor(tmp_path / "mine")
    res = fd("clear-cache", "--dry-run", "--inductor", "--cache-dir", str(root), env=_env(tmp_path / "x", tmp_path))
    head = [ln for ln in res.stdout.splitlines() if ln.startswith("inductor:")]
    assert head == [f"inductor: {root} (--cache-dir)"], res.stdout
    assert "TORCHINDUCTOR_CACHE_DIR" not in res.stdout


def test_manifest_row_only_when_there_is_a_manifest(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    (root / locations.MANIFEST_NAME).unlink()
    res = fd("clear-cache", "--dry-run", env=_env(root, tmp_path))
    assert "removed with the Inductor cache" not in res.stdout, res.stdout
    with_manifest = _inductor(tmp_path / "other")
    res = fd("clear-cache", "--dry-run", env=_env(with_manifest, tmp_path))
    assert "removed with the Inductor cache" in res.stdout
