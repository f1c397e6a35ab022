"""clear-cache: the command end to end (exit codes, prompts, the lock) and the plan/execute
layer (dangerous roots, races between the listing and the deletion). The folder-shape fault
matrix is tests/test_fault_matrix_clear.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import _caches as C
from flexdoctor.cache import clear, locations

FD = [sys.executable, "-m", "flexdoctor"]
ROOT = Path(__file__).resolve().parents[1]


def fd(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TRITON_", "PYTORCH_KERNEL"))}
    e.update(PYTHONPATH=str(ROOT))
    e.update(env or {})
    return subprocess.run(FD + list(args), capture_output=True, text=True, timeout=120, env=e, input="", cwd=cwd)


def _inductor(root: Path) -> Path:
    """An Inductor cache as torch 2.13 lays it out (names and contents; see identify.py)."""
    shard = root / "ab"
    shard.mkdir(parents=True)
    (shard / ("cab" + "c" * 49 + ".py")).write_text("# AOT ID: ['0_inference']\nimport torch\n")
    (shard / ("cab" + "d" * 49 + ".so")).write_bytes(C.ELF)
    data = b"\x80\x04\x95torch._inductor.output_code" + b"x" * 1000
    key = root / "fxgraph" / "ab" / ("fab" + "e" * 49)
    key.mkdir(parents=True)
    (key / clear.identify._digest(data)).write_bytes(data)
    (root / "locks").mkdir()
    (root / "locks" / ("cab" + "c" * 49 + ".lock")).write_text("")
    (root / locations.MANIFEST_NAME).write_text('{"format": 1, "flexdoctor_version": "0.1"}')
    return root


def _env(root: Path, tmp: Path) -> dict:
    return {"TORCHINDUCTOR_CACHE_DIR": str(root), "TRITON_CACHE_DIR": str(tmp / "no-triton"),
            "PYTORCH_KERNEL_CACHE_PATH": str(tmp / "no-aten")}


# --------------------------------------------------------------------------- the command

def test_deletes_reports_bytes_and_second_run_is_nothing_to_clear(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    res = fd("clear-cache", "--yes", env=_env(root, tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "freed" in res.stdout and "bytes" in res.stdout
    assert root.is_dir() and list(root.iterdir()) == []  # no lock file left either
    again = fd("clear-cache", "--yes", env=_env(root, tmp_path))
    assert again.returncode == 0 and "nothing to clear" in again.stdout
    assert list(root.iterdir()) == []


def test_dry_run_deletes_nothing_and_lists_every_entry(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    before = C.snapshot(tmp_path)
    res = fd("clear-cache", "--dry-run", env=_env(root, tmp_path))
    assert res.returncode == 0 and "would free" in res.stdout
    for unit in ("ab/", "fxgraph/", "locks/", locations.MANIFEST_NAME):
        assert f"  delete {unit}" in res.stdout.splitlines()
    assert C.snapshot(tmp_path) == before


def test_not_interactive_without_yes_is_a_usage_error(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    res = fd("clear-cache", env=_env(root, tmp_path))
    assert res.returncode == 2
    assert "refusing to delete without --yes" in res.stderr and "Traceback" not in res.stderr
    assert (root / "fxgraph").exists()


@pytest.mark.parametrize("value, words", [("", "empty path"), ("   ", "empty path"), ("typo", "no such directory")])
def test_bad_cache_dir_is_a_usage_error(tmp_path, value, words):
    res = fd("clear-cache", "--dry-run", "--cache-dir", value, cwd=tmp_path)
    assert res.returncode == 2 and words in res.stderr and "Traceback" not in res.stderr


def test_refuses_while_warm_cache_holds_the_cache_and_creates_no_lock_file(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    names = sorted(p.name for p in root.iterdir())
    with clear.shared(str(root)):  # what a running warm-cache holds
        res = fd("clear-cache", "--yes", env=_env(root, tmp_path))
        assert res.returncode == 1 and "warm-cache is running" in res.stderr
        assert (root / "fxgraph").exists()
        with pytest.raises(clear.Refused):
            with clear.exclusive(str(root)):
                pass
    assert sorted(p.name for p in root.iterdir()) == names


def test_an_older_flexdoctors_lock_file_is_respected(tmp_path):
    import fcntl

    root = _inductor(tmp_path / "torchinductor_me")
    lock = root / locations.LOCK_NAME
    lock.write_text("")
    with open(lock) as fh:
        fcntl.flock(fh, fcntl.LOCK_SH)  # an older warm-cache
        with pytest.raises(clear.Refused):
            with clear.exclusive(str(root)):
                pass
    with clear.exclusive(str(root)):
        pass


def test_exclusive_creates_nothing_where_there_is_no_cache(tmp_path):
    with clear.exclusive(str(tmp_path / "absent")):
        pass
    assert not (tmp_path / "absent").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can delete anything")
def test_entries_that_cannot_be_removed_are_reported_not_fatal(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    locked = root / "fxgraph" / "ab"
    locked.chmod(0o500)
    try:
        res = fd("clear-cache", "--inductor", "--yes", env=_env(root, tmp_path))
        assert res.returncode == 1 and "could not delete" in res.stdout
        assert not (root / "ab").exists()
    finally:
        locked.chmod(0o700)


def test_a_failing_remover_is_reported(tmp_path, monkeypatch):
    """Same as above for root (which can delete anything): the remover fails on one entry."""
    root = _inductor(tmp_path / "torchinductor_me")
    plan = clear.plan(["inductor"], _env(root, tmp_path))
    real_unlink = os.unlink

    def unlink(path, *a, **k):
        if str(path).endswith(locations.MANIFEST_NAME):
            raise PermissionError(13, "Permission denied")
        return real_unlink(path, *a, **k)

    monkeypatch.setattr(os, "unlink", unlink)
    out = clear.execute(plan)
    assert (locations.MANIFEST_NAME, "os", "Permission denied") in out.errors
    assert out.deleted == plan.count - 1 and out.freed > 0


# --------------------------------------------------------------------------- plan and execute

@pytest.mark.parametrize("path", ["/", "~", "/tmp", "/usr", "/home", "~/.cache"])
def test_dangerous_roots_are_refused(path, tmp_path):
    env = _env(Path(os.path.expanduser(path)), tmp_path)
    cp = clear.plan(["inductor"], env).caches[0]
    assert cp.state == "refused" and not cp.units


def test_parent_of_home_is_refused():
    assert clear.dangerous(os.path.dirname(os.path.expanduser("~"))) is not None


def test_a_project_dir_with_a_cache_subfolder_loses_nothing(tmp_path):
    """Found in review: a directory holding cache/ next to the user's data/ and models/ was
    emptied. Now nothing in it is torch's, so nothing goes."""
    proj = tmp_path / "proj"
    (proj / "cache").mkdir(parents=True)
    (proj / "data").mkdir()
    (proj / "data" / "train.csv").write_text("important")
    (proj / "models").mkdir()
    (proj / "models" / "ckpt.pt").write_text("weights")
    res = fd("clear-cache", "--inductor", "--yes", env=_env(proj, tmp_path))
    assert res.returncode == 0 and "nothing to clear" in res.stdout
    assert (proj / "data" / "train.csv").read_text() == "important" and (proj / "models" / "ckpt.pt").exists()
    assert "kept: not written by torch: data" in res.stdout


def test_a_unit_swapped_for_a_link_after_listing_is_not_followed(tmp_path):
    precious = tmp_path / "precious"
    (precious / "ab").mkdir(parents=True)
    (precious / "ab" / ("cab" + "c" * 49 + ".py")).write_text("same name, not the cache")
    root = _inductor(tmp_path / "torchinductor_me")
    plan = clear.plan(["inductor"], _env(root, tmp_path))
    import shutil

    shutil.rmtree(root / "ab")
    os.symlink(precious / "ab", root / "ab")  # swapped between the listing and the deletion
    out = clear.execute(plan)
    assert (precious / "ab" / ("cab" + "c" * 49 + ".py")).exists()
    assert any(word == "changed" for _, word, _ in out.errors)


def test_a_file_added_to_a_unit_after_listing_stays(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    plan = clear.plan(["inductor"], _env(root, tmp_path))
    (root / "ab" / "new-notes.txt").write_text("written after the listing")
    out = clear.execute(plan)
    assert (root / "ab" / "new-notes.txt").read_text() == "written after the listing"
    assert "ab" in out.caches[0].left and not list((root / "ab").glob("c*"))


def test_cache_dir_replaced_after_listing_is_not_touched(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    plan = clear.plan(["inductor"], _env(root, tmp_path))
    root.rename(tmp_path / "moved")
    _inductor(root)  # a different directory now has the name
    out = clear.execute(plan)
    assert out.errors == [(".", "changed", "")] and (root / "fxgraph").exists()


def test_empty_variables_as_their_writers_read_them(tmp_path):
    plan = clear.plan(list(clear.KINDS), {"TORCHINDUCTOR_CACHE_DIR": "", "TRITON_CACHE_DIR": "",
                                          "PYTORCH_KERNEL_CACHE_PATH": "", "HOME": str(tmp_path)})
    by = {c.kind: c for c in plan.caches}
    assert (by["inductor"].state, by["inductor"].why) == ("refused", "blank-cwd")
    assert by["triton"].path.endswith(os.path.join(".triton", "cache"))  # Triton's default, not the cwd
    assert (by["aten"].state, by["aten"].why) == ("off", "blank-off")
    assert plan.lock_root is None
