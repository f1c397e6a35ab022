"""`fleet gather` chooses the interpreter it checks the way `check` does (cli/_interp.py ``choose``:
``--python`` may name a venv folder) and, running as root, starts none that a non-root user can
change (cli/_root.py ``require_safe_python``): exit 2 with the reason, or with ``--static`` judged
from its files only. A real second uid (65534, through setpriv) owns the venv and plants a ``.pth``
whose marker proves what ran. One rank (WORLD_SIZE=1, gloo) is a whole gather.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys

import pytest

from test_root_guard import NOBODY, _flexdoctor, _nobody, _plant_pth, _site, _venv, box  # noqa: F401 (fixture)

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="needs root and setpriv (a real second uid owns the venv)")


def _one_rank() -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}


def _gather(*args: str, env: dict | None = None):
    return _flexdoctor("fleet", "gather", "--backend", "gloo", "--format", "json", *args,
                       env={**_one_rank(), **(env or {})}, timeout=300)


def _users_venv(box):
    """A venv whose folders uid 65534 owns, with its .pth planted: (venv, marker)."""
    venv = _venv(box / "v")
    marker = box / "pth-ran"
    _plant_pth(_site(venv), marker)
    for path in (venv, venv / "bin"):
        os.chown(path, NOBODY, NOBODY)
    return venv, marker


@needs_root
@pytest.mark.parametrize("how", ["folder", "interpreter"])
def test_gather_as_root_refuses_a_venv_a_user_can_change(box, how):
    """--python VENV (a folder, as check takes it) or VENV/bin/python: refused for what it is (it
    was "no such executable interpreter" for the folder), nothing started."""
    venv, marker = _users_venv(box)
    done = _gather("--python", str(venv if how == "folder" else venv / "bin" / "python"))
    assert not marker.exists(), "the .pth file ran as root"
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to start" in lines[0] and f"uid {NOBODY}, not root" in lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""


@needs_root
def test_gather_as_root_refuses_a_python_linked_or_copied_into_a_users_folder(box):
    folder = box / "users"
    folder.mkdir()
    os.chown(folder, NOBODY, NOBODY)
    _nobody("ln", "-s", sys.executable, str(folder / "python3"))
    shutil.copy2(sys.executable, folder / "python")  # (uid 65534 cannot read root's pyenv to copy it)
    os.chown(folder / "python", NOBODY, NOBODY)
    for python in ("python3", "python"):
        done = _gather("--python", str(folder / python))
        assert done.returncode == 2, (python, done.stderr)
        assert "refusing to start" in done.stderr and f"uid {NOBODY}" in done.stderr


@needs_root
def test_gather_static_as_root_judges_a_users_venv_from_its_files_only(box):
    venv, marker = _users_venv(box)
    done = _gather("--static", "--python", str(venv))
    assert not marker.exists(), "the .pth file ran as root"
    assert done.returncode in (0, 1), done.stderr
    assert "judged from its files only and not started" in done.stderr
    assert json.loads(done.stdout)["counts"]["reports"] == 1


def test_gather_takes_a_venv_folder_like_check(tmp_path):
    """The folder of a venv nobody else can write: the same interpreter check would inspect."""
    tmp_path.chmod(0o755)
    venv = _venv(tmp_path / "v")
    done = _gather("--static", "--python", str(venv))
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["counts"]["reports"] == 1
