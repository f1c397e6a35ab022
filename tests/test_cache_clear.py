"""clear-cache safety: dangerous roots, look-alikes, symlinks out of the cache, a running
warm-cache, non-interactive use without --yes, unreadable entries, and the harmless second run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flexdoctor.cache import clear, locations

FD = [sys.executable, "-m", "flexdoctor"]


def fd(*args: str, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(FD + list(args), capture_output=True, text=True, timeout=120, env=e,
                          input=stdin if stdin is not None else "")


def _inductor(root: Path) -> Path:
    (root / "fxgraph" / "ab" / "fabkey").mkdir(parents=True)
    (root / "fxgraph" / "ab" / "fabkey" / "entry").write_bytes(b"x" * 1000)
    (root / "aotautograd").mkdir()
    (root / "locks").mkdir()
    (root / "ab").mkdir()
    (root / "ab" / "cabxyz.py").write_text("print(1)\n")
    (root / locations.MANIFEST_NAME).write_text('{"fingerprint": {}}')
    return root


def _env(root: Path, tmp: Path) -> dict:
    return {"TORCHINDUCTOR_CACHE_DIR": str(root), "TRITON_CACHE_DIR": str(tmp / "no-triton"),
            "PYTORCH_KERNEL_CACHE_PATH": str(tmp / "no-aten")}


def test_deletes_reports_bytes_and_second_run_is_a_no_op(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    res = fd("clear-cache", "--yes", env=_env(root, tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "freed" in res.stdout and "bytes" in res.stdout
    assert root.is_dir() and [p.name for p in root.iterdir()] in ([], [locations.LOCK_NAME])
    again = fd("clear-cache", "--yes", env=_env(root, tmp_path))
    assert again.returncode == 0 and "nothing to delete" in again.stdout


def test_dry_run_deletes_nothing(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    before = sorted(p for p in root.rglob("*"))
    res = fd("clear-cache", "--dry-run", env=_env(root, tmp_path))
    assert res.returncode == 0 and "would free" in res.stdout
    assert sorted(p for p in root.rglob("*")) == before


def test_not_interactive_without_yes_refuses(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    res = fd("clear-cache", env=_env(root, tmp_path))
    assert res.returncode == 2
    assert "refusing to delete without --yes" in res.stderr and "Traceback" not in res.stderr
    assert (root / "fxgraph").exists()


@pytest.mark.parametrize("path", ["/", "~", "/tmp", "/usr", "/home"])
def test_dangerous_roots_are_refused(path, tmp_path):
    env = _env(Path(os.path.expanduser(path)), tmp_path)
    targets = clear.plan(["inductor"], env)
    assert targets[0].refused and not targets[0].items


def test_parent_of_home_is_refused():
    assert clear.dangerous(os.path.dirname(os.path.expanduser("~"))) is not None


def test_a_dir_that_is_not_a_cache_is_refused(tmp_path):
    project = tmp_path / "myproject"
    (project / ".git").mkdir(parents=True)
    (project / "train.py").write_text("...")
    (project / "fxgraph").mkdir()  # even with a marker, .git says it is a project
    targets = clear.plan(["inductor"], _env(project, tmp_path))
    assert "does not look like" in targets[0].refused
    plain = tmp_path / "data"
    (plain / "images").mkdir(parents=True)
    targets = clear.plan(["inductor"], _env(plain, tmp_path))
    assert "does not look like" in targets[0].refused
    res = fd("clear-cache", "--inductor", "--yes", env=_env(plain, tmp_path))
    assert res.returncode == 1 and (plain / "images").is_dir()


def test_symlinks_pointing_outside_are_unlinked_not_followed(tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    root = _inductor(tmp_path / "torchinductor_me")
    os.symlink(outside, root / "ab" / "link_dir")
    os.symlink(outside / "keep.txt", root / "zz")
    os.symlink(outside, root / "fxgraph" / "cd")
    res = fd("clear-cache", "--inductor", "--yes", env=_env(root, tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert (outside / "keep.txt").read_text() == "keep"
    assert not os.path.lexists(root / "zz") and not os.path.lexists(root / "ab")


def test_cache_root_that_is_a_symlink_is_resolved_and_checked(tmp_path):
    real = _inductor(tmp_path / "torchinductor_real")
    link = tmp_path / "link"
    os.symlink(real, link)
    targets = clear.plan(["inductor"], _env(link, tmp_path))
    assert not targets[0].refused and all(str(real) in i for i in targets[0].items)
    home_link = tmp_path / "homelink"
    os.symlink(os.path.expanduser("~"), home_link)
    assert clear.plan(["inductor"], _env(home_link, tmp_path))[0].refused


def test_refuses_while_warm_cache_holds_the_lock(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    with clear.shared(str(root)):  # what a running warm-cache holds
        res = fd("clear-cache", "--yes", env=_env(root, tmp_path))
        assert res.returncode == 1 and "warm-cache is running" in res.stderr
        assert (root / "fxgraph").exists()
        with pytest.raises(clear.Refused):
            with clear.exclusive(str(root)):
                pass


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can delete anything")
def test_unreadable_entries_are_reported_not_fatal(tmp_path):
    root = _inductor(tmp_path / "torchinductor_me")
    locked = root / "fxgraph" / "ab"
    locked.chmod(0o500)
    try:
        res = fd("clear-cache", "--inductor", "--yes", env=_env(root, tmp_path))
        assert res.returncode == 1 and "could not delete" in res.stdout
        assert not (root / "aotautograd").exists()
    finally:
        locked.chmod(0o700)


def test_unreadable_entries_with_a_failing_remover(tmp_path, monkeypatch):
    """Same as above for root (which can delete anything): the remover fails on one entry."""
    root = _inductor(tmp_path / "torchinductor_me")
    targets = clear.plan(["inductor"], _env(root, tmp_path))
    real_unlink = os.unlink

    def unlink(path, *a, **k):
        if str(path).endswith(locations.MANIFEST_NAME):
            raise PermissionError(13, "Permission denied")
        return real_unlink(path, *a, **k)

    monkeypatch.setattr(os, "unlink", unlink)
    out = clear.delete(targets)
    assert any("Permission denied" in e for e in out.errors)
    assert out.deleted == len(targets[0].items) - 1 and out.freed > 0


def test_triton_and_aten_look_alikes(tmp_path):
    tri = tmp_path / "triton"
    (tri / ("A" * 52)).mkdir(parents=True)
    (tri / ("A" * 52) / "k.json").write_text("{}")
    aten = tmp_path / "kernels"
    aten.mkdir()
    (aten / "kernel_abc.cubin").write_bytes(b"1")
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "none"), "TRITON_CACHE_DIR": str(tri),
           "PYTORCH_KERNEL_CACHE_PATH": str(aten)}
    t = {x.kind: x for x in clear.plan(["triton", "aten"], env)}
    assert not t["triton"].refused and len(t["triton"].items) == 1
    assert not t["aten"].refused and len(t["aten"].items) == 1
    (tri / "notes.txt").write_text("mine")
    (aten / "subdir").mkdir()
    t = {x.kind: x for x in clear.plan(["triton", "aten"], env)}
    assert t["triton"].refused and t["aten"].refused


def test_a_project_dir_with_a_cache_subfolder_is_not_an_inductor_cache(tmp_path):
    """Found in review: a directory holding cache/ next to the user's data/ and models/ was
    accepted and emptied. Everything in it must be Inductor's, or nothing is deleted."""
    import os
    import subprocess
    import sys

    proj = tmp_path / "proj"
    (proj / "cache").mkdir(parents=True)
    (proj / "data").mkdir()
    (proj / "data" / "train.csv").write_text("important")
    (proj / "models").mkdir()
    (proj / "models" / "ckpt.pt").write_text("weights")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(proj), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    done = subprocess.run([sys.executable, "-m", "flexdoctor", "clear-cache", "--inductor", "--yes"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert (proj / "data" / "train.csv").read_text() == "important"
    assert (proj / "models" / "ckpt.pt").exists()
    assert "refused" in done.stdout + done.stderr


def test_cache_dir_typo_is_a_usage_error(tmp_path):
    res = fd("clear-cache", "--dry-run", "--cache-dir", str(tmp_path / "typo"), env=dict(os.environ))
    assert res.returncode == 2 and "no such directory" in res.stderr
