"""The GitHub Action cannot be made to run code from the checked-out workspace (issue 20, item 7).

action.yml's run scripts are executed the way the runner does: read with pyyaml, ``${{ inputs.* }}``
and ``${{ github.action_path }}`` put into the step's env, the script written to a file and run with
``bash --noprofile --norc -eo pipefail FILE`` in the workspace. The workspace holds what an attacker's
pull request would: modules that shadow what ``python -m ...`` imports (``typer.py``, a
``flexdoctor/`` package, stdlib names pip imports) and a ``*.dist-info`` declaring a check plugin.
Each writes a marker when imported; the Action must still run its check, and no marker may appear.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import site as sitelib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
STEPS = {s.get("id") or s["name"]: s for s in ACTION["runs"]["steps"]}
EXPR = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def _planted(workspace: Path, marker: Path, vector: str) -> None:
    code = f"open({str(marker)!r}, 'a').write(__name__ + ' ran\\n')\n"
    if vector == "shadowing modules":
        for name in ("typer", "rich", "json", "logging", "optparse", "packaging"):
            (workspace / f"{name}.py").write_text(code)
    elif vector == "a flexdoctor package":
        (workspace / "flexdoctor").mkdir()
        (workspace / "flexdoctor" / "__init__.py").write_text(code)
        (workspace / "flexdoctor" / "__main__.py").write_text(code)
    else:  # a check plugin declared by a distribution in the workspace
        (workspace / "fdevil.py").write_text(code)
        info = workspace / "fdevil-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fdevil\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text("[flexdoctor.checks]\nevil = fdevil:check\n")


def _venv(where: Path, pip: bool = False) -> Path:
    """A venv seeing this machine's packages (torch) and this checkout first (a .pth line, as an
    editable install makes): the interpreter the Action is given."""
    args = [sys.executable, "-m", "venv", "--system-site-packages", str(where)]
    if not pip:
        args.insert(3, "--without-pip")
    subprocess.run(args, check=True, timeout=300, capture_output=True)
    site = next(where.glob("lib/python3*/site-packages"))
    # this checkout, then the packages of the Python running the tests (a venv of a venv sees only
    # the base's): .pth lines, as an editable install and a layered environment make them
    (site / "aaa-flexdoctor-checkout.pth").write_text("\n".join([str(ROOT), *sitelib.getsitepackages()]) + "\n")
    return where / "bin" / "python"


def _run_step(name: str, workspace: Path, tmp: Path, inputs: dict, action_path: Path = ROOT):
    step = STEPS[name]
    values = {f"inputs.{k}": str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    values.update({f"inputs.{k}": str(v) for k, v in inputs.items()}, **{"github.action_path": str(action_path)})
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH")}
    env.update({k: EXPR.sub(lambda m: values[m.group(1)], v) for k, v in step.get("env", {}).items()})
    env.update(RUNNER_TEMP=str(tmp), GITHUB_WORKSPACE=str(workspace), GITHUB_ACTIONS="true", CI="true",
               GITHUB_STEP_SUMMARY=str(tmp / "summary.md"), GITHUB_OUTPUT=str(tmp / "output"))
    script = tmp / f"{name.replace(' ', '-')}.sh"
    script.write_text(step["run"])
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                          env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def sandbox(tmp_path):
    workspace, tmp = tmp_path / "workspace", tmp_path / "runner-temp"
    workspace.mkdir()
    tmp.mkdir()
    return workspace, tmp, tmp_path / "MARKER"


@pytest.mark.parametrize("plugins", ["false", "true"])
@pytest.mark.parametrize("vector", ["shadowing modules", "a flexdoctor package", "a plugin's dist-info"])
def test_the_check_step_runs_nothing_from_the_workspace(sandbox, vector, plugins):
    workspace, tmp, marker = sandbox
    _planted(workspace, marker, vector)
    python = _venv(tmp.parent / "venv")
    done = _run_step("check", workspace, tmp, {"python": python, "profile": "default", "plugins": plugins,
                                               "junit": str(tmp / "fd.xml")})
    assert not marker.exists(), f"the workspace ran code: {marker.read_text()}"
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert (tmp / "output").read_text().strip() == f"exit-code={done.returncode}"
    assert "## flexdoctor" in (tmp / "summary.md").read_text() and (tmp / "fd.xml").is_file()
    assert "passed" in done.stdout.splitlines()[-1]


def test_plugins_run_only_when_asked(sandbox):
    """A plugin installed in the interpreter's own site-packages: off by default, on with plugins: 'true'."""
    workspace, tmp, marker = sandbox
    python = _venv(tmp.parent / "venv")
    site = next((tmp.parent / "venv").glob("lib/python3*/site-packages"))
    _planted(site, marker, "a plugin's dist-info")
    _run_step("check", workspace, tmp, {"python": python, "profile": "default"})
    assert not marker.exists()
    _run_step("check", workspace, tmp, {"python": python, "profile": "default", "plugins": "true"})
    assert marker.read_text() == "fdevil ran\n"


def _wheel(where: Path) -> Path:
    """The smallest valid wheel (fdtiny 1.0): what the install step installs in this test, in
    place of flexdoctor itself (building that needs setuptools from an index)."""
    files = {"fdtiny.py": b"X = 1\n",
             "fdtiny-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: fdtiny\nVersion: 1.0\n",
             "fdtiny-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()},{len(b)}\n"
                     for n, b in files.items()) + "fdtiny-1.0.dist-info/RECORD,,\n"
    path = where / "fdtiny-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in {**files, "fdtiny-1.0.dist-info/RECORD": record.encode()}.items():
            zf.writestr(name, data)
    return path


def test_the_install_step_runs_nothing_from_the_workspace(sandbox):
    """pip's own __main__.py drops the current folder from sys.path (pip/__main__.py, "Remove ''
    and current working directory from the first entry of sys.path"), so the old step was not
    open; with -I the step does not depend on that (a wrapper or a pip without it)."""
    workspace, tmp, marker = sandbox
    _planted(workspace, marker, "shadowing modules")
    python = _venv(tmp.parent / "venv", pip=True)
    done = _run_step("Install flexdoctor", workspace, tmp, {"python": python}, action_path=_wheel(tmp.parent))
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), f"the workspace ran code: {marker.read_text()}"
    assert subprocess.run([str(python), "-I", "-c", "import fdtiny"]).returncode == 0


def test_every_python_the_action_starts_is_isolated():
    """Each step's python runs with -I (no workspace on the path, no PYTHON* variables)."""
    for step in ACTION["runs"]["steps"]:
        calls = re.findall(r'"\$FD_PYTHON"\s+(\S+)', step["run"])
        assert calls and all(flag == "-I" for flag in calls), (step["name"], calls)
