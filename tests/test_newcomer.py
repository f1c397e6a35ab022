"""The newcomer test (issue 21): the README's quickstart, run the way a new user runs it.

A fresh venv under /tmp gets flexdoctor from a copy of this checkout with the README's own
command; a second venv holds torch (the pin of the README's test command), as a training venv
would. The commands come from README.md itself, so the README and this test cannot drift, and
`.ci/run` must run exactly the README's test command. No PYTHONPATH, no system site-packages:
only what `pip install` put in each venv (from pip's configured indexes; on CI, the local ones).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bash and bin/ venvs: Linux only")]


def quickstart() -> dict:
    """The Quickstart section's fenced blocks: bash commands and the text the README says a new
    user sees."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)
    bash = [body.strip() for kind, body in blocks if kind == "bash"]
    shown = [body for kind, body in blocks if kind == "text"]
    assert len(bash) == 3 and len(shown) == 1, blocks
    return {"install_check": bash[0], "python_flag": bash[1], "tests": bash[2], "shown": shown[0]}


def test_ci_runs_exactly_the_readmes_test_command():
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert run[-1].strip() == quickstart()["tests"]


def _copy_checkout(dest: Path) -> Path:
    """What a fresh clone holds: the tracked files (no build outputs, caches or .git)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if files.returncode == 0 and files.stdout:
        for rel in files.stdout.decode().split("\0"):
            if rel and (ROOT / rel).is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, dest / rel)
    else:  # not a git checkout: copy the tree without what git would ignore
        shutil.copytree(ROOT, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".git", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache", ".hypothesis", ".venv"))
    return dest


def _venv(path: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "venv", str(path)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"cannot create a venv here: {done.stderr.strip()[-200:]}")
    return path


def _env(active: Path, extra_path: list, **more: str) -> dict:
    """An activated venv, as `source bin/activate` leaves it; nothing of this test's own Python."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHOME", "CI", "COLUMNS")
           and not k.startswith(("TORCHINDUCTOR_", "TRITON_", "FLEXDOCTOR_", "PYTHONIOENCODING"))}
    env["PATH"] = os.pathsep.join([str(active / "bin")] + [str(p) for p in extra_path] + ["/usr/bin", "/bin"])
    env["VIRTUAL_ENV"] = str(active)
    env["FLEXDOCTOR_LANG"] = "en"
    env.update(more)
    return env


def _bash(command: str, env: dict, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def newcomer():
    """venv A: flexdoctor alone, installed with the README's command; venv B: torch alone."""
    q = quickstart()
    base = Path(tempfile.mkdtemp(prefix="flexdoctor-newcomer-", dir="/tmp"))
    try:
        clone = _copy_checkout(base / "clone")
        a, b = _venv(base / "a"), _venv(base / "b")
        first = _bash(q["install_check"], _env(a, []), clone)
        pin = re.search(r"torch==[\w.+]+", q["tests"]).group(0)
        got_torch = _bash(f"python -m pip install -q {pin}", _env(b, []), base)
        if got_torch.returncode != 0:
            pytest.fail(f"pip install {pin} into a fresh venv failed:\n{got_torch.stderr[-2000:]}")
        yield {"q": q, "base": base, "a": a, "b": b, "first": first}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_readme_quickstart_shows_what_a_new_user_sees(newcomer):
    first, a, q = newcomer["first"], newcomer["a"], newcomer["q"]
    out = first.stdout + first.stderr
    assert "Traceback" not in out
    assert first.returncode == 1, out[-3000:]  # the README says: a red FD201, exit 1
    shown = q["shown"].replace("/home/me/flexdoctor/.venv", str(a))
    fd201 = _flat(shown.split("✗", 1)[1])
    assert _flat("✗ " + fd201) in _flat(first.stdout), first.stdout[-3000:]


def test_activated_training_venv_is_inspected_and_said_first(newcomer):
    a, b = newcomer["a"], newcomer["b"]
    done = _bash("flexdoctor check", _env(b, [a / "bin"], COLUMNS="300"), newcomer["base"])
    assert "Traceback" not in done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"Inspecting {b}/bin/python, found in the active virtual environment ($VIRTUAL_ENV)")
    assert f"flexdoctor's own interpreter ({a}/bin/python) has no torch" in first
    assert re.search(r"✓ FD201 torch installed: torch 2\.13\.0", done.stdout), done.stdout[-3000:]
    assert "✗ FD201" not in done.stdout


def test_readme_python_flag_takes_the_venv_folder(newcomer):
    a, b, q = newcomer["a"], newcomer["b"], newcomer["q"]
    command = q["python_flag"].split("#", 1)[0].strip().replace("~/venvs/train", str(b))
    done = _bash(command, _env(a, []), newcomer["base"])
    assert "Traceback" not in done.stdout + done.stderr
    assert "✓ FD201 torch installed: torch 2.13.0" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert done.returncode in (0, 1)


def test_ascii_output_encoding_still_prints_the_whole_report(newcomer):
    a, b = newcomer["a"], newcomer["b"]
    done = _bash("flexdoctor check --static", _env(b, [a / "bin"], PYTHONIOENCODING="ascii"), newcomer["base"])
    assert "Traceback" not in done.stderr
    assert "FD201" in done.stdout and "Inspecting" in done.stdout
