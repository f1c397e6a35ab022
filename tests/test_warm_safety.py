"""warm-cache and warm-cache --import compile into, and load from, only a cache that passes the
FD504 verdict (flexdoctor/safety.py): an unsafe one is refused with exit 2 and FD504's fix,
before anything is created or compiled; a missing --cache-dir is created private (0700)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners and modes")


def warm(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TRITON_"))}
    e.update(PYTHONPATH=str(ROOT), CI="1", HOME=str(tmp_path / "home"))
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "flexdoctor", "warm-cache", *args], capture_output=True,
                          text=True, env=e, timeout=300, cwd=tmp_path)


def _bundle(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("flexdoctor-bundle.json", json.dumps({"format": 1, "fingerprint": {}, "configs": []}))
    return path


@pytest.fixture
def shared(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)  # writable by everyone, no sticky bit
    return d


@pytest.mark.parametrize("mode", ["compile", "import"])
def test_cache_under_a_world_writable_dir_is_refused_before_anything_happens(tmp_path, shared, mode):
    cache = shared / "cache"
    args = ["--device", "cpu", "--preset", "cpu-smoke"] if mode == "compile" else \
        ["--import", str(_bundle(tmp_path / "b.zip"))]
    done = warm(tmp_path, *args, "--cache-dir", str(cache))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "unsafe cache (FD504)" in done.stderr and str(shared) in done.stderr
    assert "FDE960" in done.stderr and "$ mkdir -p -m 700" in done.stderr
    assert "Traceback" not in done.stderr
    assert not cache.exists()  # nothing created in a refused place


def test_cache_dir_writable_by_others_is_refused_with_chmod(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    done = warm(tmp_path, "--device", "cpu", "--preset", "cpu-smoke", "--cache-dir", str(cache))
    assert done.returncode == 2 and f"$ chmod go-w {cache}" in done.stderr
    assert list(cache.iterdir()) == []


def test_unsafe_triton_cache_dir_is_refused(tmp_path, shared):
    done = warm(tmp_path, "--device", "cpu", "--preset", "cpu-smoke", "--cache-dir", str(tmp_path / "ok"),
                env={"TRITON_CACHE_DIR": str(shared / "triton")})
    assert done.returncode == 2 and "the triton cache" in done.stderr
    assert "export TRITON_CACHE_DIR=$HOME/.triton/cache" in done.stderr
    assert not (tmp_path / "ok").exists()


def test_empty_inductor_variable_is_a_usage_error_not_the_cwd(tmp_path):
    (tmp_path / "mine.txt").write_text("m")
    done = warm(tmp_path, "--device", "cpu", "--preset", "cpu-smoke", env={"TORCHINDUCTOR_CACHE_DIR": ""})
    assert done.returncode == 2 and "TORCHINDUCTOR_CACHE_DIR is set but empty" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_missing_cache_dir_and_its_parents_are_created_private(tmp_path):
    from flexdoctor import safety

    base = tmp_path / "base"
    base.mkdir()
    old = os.umask(0o002)  # a loose umask must not make the new parents group-writable
    try:
        created = safety.make_private_dirs(str(base / "a" / "b" / "cache"))
    finally:
        os.umask(old)
    assert [Path(p).name for p in created] == ["a", "b", "cache"]
    assert {oct(Path(p).stat().st_mode & 0o777) for p in created} == {"0o700"}
    assert safety.make_private_dirs(str(base / "a")) == []
