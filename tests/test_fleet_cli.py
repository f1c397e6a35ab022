"""`flexdoctor fleet merge` and `fleet gather` as users run them: exit codes, files, usage errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import _fleet_nodes as fn
from flexdoctor.cli import app

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "flexdoctor" / "schema" / "fleet.schema.json").read_text())
runner = CliRunner()


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("reports")
    reports = {f"gpu{i:03d}": fn.report_for(f"gpu{i:03d}", change=fn.two_gpus) for i in range(1, 4)}
    reports["gpu004"] = fn.report_for("gpu004", change=fn.both(fn.two_gpus, fn.python_patch("3.12.11")))
    return fn.write(d, reports)


def _run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_merge_exit_1_and_the_exclude_file(fleet_dir, tmp_path):
    ex = tmp_path / "exclude.txt"
    res = _run("fleet", "merge", str(fleet_dir), "--exclude-file", str(ex))
    assert res.exit_code == 1
    assert "gpu004: Python 3.12.11 (majority 3.12.3)" in res.output
    assert ex.read_text() == "gpu004\n"


def test_merge_ignore_from_the_command_line_and_from_settings(fleet_dir, tmp_path):
    ex = tmp_path / "exclude.txt"
    res = _run("fleet", "merge", str(fleet_dir), "--ignore", "python.patch", "--exclude-file", str(ex))
    assert res.exit_code == 0, res.output
    assert ex.read_text() == ""  # written on every run: a stale list must never survive
    settings = tmp_path / "pyproject.toml"
    settings.write_text('[tool.flexdoctor.fleet]\nignore = ["python.patch"]\n')
    assert _run("fleet", "merge", str(fleet_dir), "--settings", str(settings)).exit_code == 0
    # The same file still works for `check` (the fleet table is not an unknown key there).
    from flexdoctor import policy

    policy.load(settings)
    settings.write_text('[tool.flexdoctor.fleet]\nignore = ["pyton"]\n')
    res = _run("fleet", "merge", str(fleet_dir), "--settings", str(settings))
    assert res.exit_code == 2 and "unknown field 'pyton'" in res.output


def test_merge_json_output_validates(fleet_dir, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    out = tmp_path / "fleet.json"
    res = _run("fleet", "merge", str(fleet_dir), "--format", "json", "-o", str(out))
    assert res.exit_code == 1 and res.output == ""
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["exclude"] == ["gpu004"] and doc["counts"]["nodes"] == 4


def test_merge_expect_names_silent_nodes(fleet_dir, tmp_path):
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("# scontrol show hostnames\ngpu001\ngpu002\ngpu003\ngpu004\ngpu005\n")
    res = _run("fleet", "merge", str(fleet_dir), "--expect", str(hosts), "--ignore", "python.patch")
    assert res.exit_code == 1 and "gpu005: no report from this node" in res.output


@pytest.mark.parametrize("args,message", [
    (["fleet", "merge", "/nonexistent/dir"], "no such file or directory"),
    (["fleet", "merge", "{dir}", "--format", "xml"], "--format xml"),
    (["fleet", "merge", "{dir}", "--ignore", "driver.major"], "--ignore"),
    (["fleet", "merge", "{dir}", "--bundle", "/nonexistent.zip"], "--bundle /nonexistent.zip: no such file"),
    (["fleet", "merge", "{dir}", "--expect", "/nonexistent.txt"], "--expect"),
    (["fleet", "merge", "{dir}", "-o", "/nonexistent/dir/x.json"], "--output"),
])
def test_merge_usage_errors_exit_2(fleet_dir, args, message):
    res = _run(*[a.replace("{dir}", str(fleet_dir)) for a in args])
    assert res.exit_code == 2 and message in res.output


def test_merge_of_an_empty_directory_is_a_usage_error(tmp_path):
    res = _run("fleet", "merge", str(tmp_path))
    assert res.exit_code == 2 and "no node report found" in res.output


def test_gather_outside_torchrun_is_a_usage_error(monkeypatch):
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(var, raising=False)
    res = _run("fleet", "gather", "--static")
    assert res.exit_code == 2 and "torchrun" in res.output


@pytest.mark.slow
def test_torchrun_standalone_two_processes(tmp_path):
    """The documented command, for real: torchrun -m flexdoctor fleet gather (gloo on CPU)."""
    pytest.importorskip("torch")
    out, ex = tmp_path / "fleet.json", tmp_path / "exclude.txt"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         "-m", "flexdoctor", "fleet", "gather", "--backend", "gloo", "--static", "--profile", "default",
         "--format", "json", "-o", str(out), "--exclude-file", str(ex), "--reports-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(out.read_text())
    # Two ranks on one node: only LOCAL_RANK 0 checks it; one node report reaches rank 0.
    assert doc["counts"]["reports"] == 1 and doc["source"] == "gather over 2 ranks (gloo)"
    assert doc["ok"] and ex.read_text() == ""
    node = doc["nodes"][0]["node"]
    assert json.loads((tmp_path / f"{node}.json").read_text())["schema_version"] == 1
    assert shutil.which(sys.executable)
