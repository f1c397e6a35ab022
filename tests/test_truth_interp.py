"""--python into an ordinary venv inspects the venv, not flexdoctor's own interpreter (issue 12)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flexdoctor.probes import interp


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory):
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True,
                   capture_output=True, timeout=120)
    exe = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    assert exe.exists()
    return exe


def test_venv_python_is_a_link_to_this_interpreter(venv_python):
    # The situation the bug needs: the same file as sys.executable (a symlink), another prefix.
    if not os.path.samefile(venv_python, sys.executable):
        pytest.skip("venv made a copy of the interpreter, not a link")
    assert not interp._same_interpreter(str(venv_python))


def test_probe_reports_the_venv_and_its_packages(venv_python):
    py, torch = interp.probe(str(venv_python))
    assert not isinstance(py, interp.ProbeError), py
    # The venv's own interpreter answered: its executable, and none of flexdoctor's packages
    # (a --without-pip venv without system site-packages has no torch, no jsonschema).
    assert py.executable == str(venv_python)
    assert "torch" not in py.packages
    assert torch is None


def test_own_interpreter_still_runs_in_process():
    assert interp._same_interpreter(sys.executable)
