"""The worker floor: scripts the target interpreter runs, and the one wire both sides speak."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import flexdoctor
from flexdoctor.worker import _wire
from flexdoctor.worker import run as worker_run

WORKER_DIR = Path(_wire.__file__).parent
SCRIPTS = sorted(p.name for p in WORKER_DIR.glob("_*.py") if p.name != "__init__.py")
ALLOWED = set(sys.stdlib_module_names) | {"_wire", "torch", "triton", "flash_attn", "xformers", "diffusers"}


@pytest.mark.parametrize("name", SCRIPTS)
def test_scripts_are_stdlib_py38_and_never_import_flexdoctor(name):
    src = (WORKER_DIR / name).read_text(encoding="utf-8")
    tree = ast.parse(src, feature_version=(3, 8))
    top = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module.split(".")[0] for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    assert "flexdoctor" not in top
    assert top <= ALLOWED, top - ALLOWED
    if name != "_wire.py":
        assert "_wire" in top, f"{name} must speak the protocol through _wire"
        # The script's folder is not on sys.path under -P / PYTHONSAFEPATH=1: each one puts it there.
        assert "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))" in src


def test_the_protocol_is_spelled_in_one_module():
    spelled = [p for p in Path(flexdoctor.__file__).parent.rglob("*.py")
               if "@@flexdoctor-" in p.read_text(encoding="utf-8")]
    assert spelled == [WORKER_DIR / "_wire.py"]


def test_a_script_run_as_a_file_finds_its_sibling_and_leaves_the_path(tmp_path):
    """As the target interpreter runs them: a file beside _wire.py, with no flexdoctor importable."""
    folder = tmp_path / "worker"
    folder.mkdir()
    (folder / "_wire.py").write_text((WORKER_DIR / "_wire.py").read_text())
    probe = folder / "_probe.py"
    head = (WORKER_DIR / "_torch_probe.py").read_text().split("\n")
    insert = next(line for line in head if line.startswith("sys.path.insert"))  # as every script does
    probe.write_text("import os, sys\n" + insert + "\nimport _wire\n_wire.stage('one')\n_wire.part({'x': 1}, 'sec')\n"
                     "_wire.part([2])\n_wire.emit({'path': sys.path})\n")
    # -I: no PYTHONPATH, no user site, and (3.11+) not even the script's folder on sys.path
    done = subprocess.run([sys.executable, "-I", str(probe)], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    wire = worker_run.read(done.stdout)
    assert done.returncode == 0, done.stderr
    assert wire.stage == "done" and wire.parts == [("sec", {"x": 1}), (None, [2])]
    result = wire.result()
    assert str(folder) not in result["path"]  # nothing torch imports later can come from worker/
    assert set(result["stage_seconds"]) == {"one"} and result["seconds"] >= 0


def test_reader_live_callbacks_and_garbage():
    stages, parts = [], []
    reader = worker_run.Reader(on_stage=stages.append, on_part=lambda n, v: parts.append((n, v)))
    for line in ["hello", _wire.STAGE + "import torch", _wire.PART + "flex float16 " + json.dumps({"a": 1}),
                 _wire.PART + "broken {", _wire.RESULT + "{not json"]:
        reader.feed(line)
    assert stages == ["import torch"] and parts == [("flex float16", {"a": 1})]
    assert list(reader.other) == ["hello"]
    assert reader.result() is None and reader.garbage
    assert not worker_run.read("").garbage and worker_run.read("").result() is None


def test_script_paths_are_checked():
    from flexdoctor.worker import script

    assert script("_torch_probe.py").is_file()
    with pytest.raises(FileNotFoundError):
        script("_no_such_worker.py")
