"""Third-party checks through the `flexdoctor.checks` entry-point group, as a real installed
distribution would declare them (a *.dist-info with entry_points.txt on the path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path


def make_plugin(root: Path, module_src: str, entry: str) -> Path:
    site = root / "site"
    site.mkdir()
    (site / "fdplug.py").write_text(textwrap.dedent(module_src))
    dist = site / "fdplug-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fdplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[flexdoctor.checks]\n{entry}\n")
    return site


def check_json(site: Path, *extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(site))
    done = subprocess.run([sys.executable, "-m", "flexdoctor", "check", "--static", "--format", "json", *extra],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


GOOD = '''
from flexdoctor.checks import check
from flexdoctor.facts import require
from flexdoctor.model import Finding, Fix, Status

@check("FD950", "cluster-python", area="plugin", title="Cluster Python pinned")
def cluster_python(facts):
    """What it checks: the interpreter version.

    Why it matters: the cluster image pins it.

    How to fix: use the image's Python.
    """
    py = require(facts.python)
    if py.version.startswith("2."):
        return Finding(Status.FAIL, "Python 2", Fix("use Python 3", ("uv venv",)))
    return Finding(Status.PASS, f"Python {py.version}")
'''


def test_valid_plugin_runs_like_a_builtin(tmp_path):
    site = make_plugin(tmp_path, GOOD, "cluster = fdplug:cluster_python")
    data = check_json(site)
    r = {x["id"]: x for x in data["results"]}["FD950"]
    assert r["status"] == "pass" and r["title"] == "Cluster Python pinned" and r["area"] == "plugin"
    assert not any(x["id"] == "FD000" for x in data["results"])
    assert "FD950" not in {x["id"] for x in check_json(site, "--no-plugins")["results"]}


def test_plugin_that_fails_to_import_is_an_error_result(tmp_path):
    site = make_plugin(tmp_path, "raise RuntimeError('boom at import')\n", "broken = fdplug:whatever")
    data = check_json(site)
    r = {x["id"]: x for x in data["results"]}["FD000"]
    assert r["status"] == "error" and "boom at import" in r["message"]
    assert data["exit_code"] == 1


def test_invalid_plugin_check_is_rejected(tmp_path):
    bad = GOOD.replace('"FD950", "cluster-python"', '"FD101", "Cluster_Python"').replace("What it checks:", "")
    site = make_plugin(tmp_path, bad, "bad = fdplug:cluster_python")
    data = check_json(site)
    errors = [x for x in data["results"] if x["id"] == "FD000"]
    assert errors and "already taken" in errors[0]["message"] and "kebab-case" in errors[0]["message"]
    gpu = [x for x in data["results"] if x["id"] == "FD101"]
    assert len(gpu) == 1 and gpu[0]["symbol"] == "gpu-present"  # the built-in wins


def test_plugin_check_that_crashes_is_an_error_not_a_crash(tmp_path):
    crashing = GOOD.replace('py = require(facts.python)', 'raise ZeroDivisionError("plugin bug")')
    site = make_plugin(tmp_path, crashing, "cluster = fdplug:cluster_python")
    r = {x["id"]: x for x in check_json(site)["results"]}["FD950"]
    assert r["status"] == "error" and "plugin bug" in r["message"]


# --------------------------------------------------------------------------- the pre-scan

def test_prescan_agrees_with_importlib_metadata_here():
    """No plugin installed on this machine: the pre-scan says so, and importlib.metadata agrees."""
    from importlib.metadata import entry_points

    from flexdoctor.checks import GROUP, _maybe_declared

    assert _maybe_declared() == bool(list(entry_points(group=GROUP)))
    assert _maybe_declared("console_scripts")  # a group that is declared (pytest's own)


def test_prescan_finds_a_declaring_distribution(tmp_path, monkeypatch):
    from flexdoctor.checks import _maybe_declared

    site = make_plugin(tmp_path, GOOD, "cluster = fdplug:cluster_python")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "nowhere"), str(site)])
    assert _maybe_declared()
    (site / "fdplug-1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nx = fdplug:main\n")
    assert not _maybe_declared()


def test_prescan_egg_and_odd_cases(tmp_path, monkeypatch):
    from flexdoctor.checks import _maybe_declared

    egg = tmp_path / "fdplug-1.0-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "entry_points.txt").write_text("[flexdoctor.checks]\nx = fdplug:check\n")
    monkeypatch.setattr(sys, "path", [str(egg)])
    assert _maybe_declared()  # importlib.metadata reads an .egg folder's EGG-INFO too
    upper = tmp_path / "site"
    (upper / "FdPlug-1.0.DIST-INFO").mkdir(parents=True)
    (upper / "FdPlug-1.0.DIST-INFO" / "entry_points.txt").write_text("[flexdoctor.checks]\n")
    monkeypatch.setattr(sys, "path", [str(upper)])
    assert _maybe_declared()  # names compared case-insensitively, as importlib.metadata does
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert _maybe_declared()  # a zip: unsure, importlib.metadata decides
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), ""])
    monkeypatch.chdir(tmp_path)
    assert not _maybe_declared()
