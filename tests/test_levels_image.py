"""The levels of a result (issue 21.9) and the image profile (issue 21.4).

- A note is worth knowing and never fails, not even under --strict: a healthy machine as it comes
  (torch's default /tmp cache, no CUDA toolkit, a CPU box) passes `check --strict`.
- `--profile image` exists to catch a GPU image built with a CPU-only torch wheel: it fails one,
  and checks Triton (installed, at torch's pin) from package metadata without a GPU.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import load_facts_dict
from flexdoctor import checks, policy, runner
from flexdoctor.facts import Facts
from flexdoctor.model import Status
from flexdoctor.render import Format, renderer

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "facts"
# Machines that are healthy as they come: everything they need works, nothing is misconfigured.
HEALTHY = ["h100", "a100_torch25", "rtx4090", "rocm", "cpu_only", "image_builder"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def report(data: dict, profile: str = "default", strict: bool = False):
    settings = policy.Settings(profile=policy.PROFILES[profile], strict=strict)
    return runner.run(checks.builtin(), Facts.from_dict(data), settings=settings)


def by_id(r) -> dict:
    return {x.id: x for x in r.results}


# ------------------------------------------------------------------ levels


@pytest.mark.parametrize("name", HEALTHY)
def test_strict_passes_on_a_healthy_default_machine(name, tmp_path):
    done = cli("check", "--from-facts", str(FIXTURES / f"{name}.json"), "--strict", "--format", "json", cwd=tmp_path)
    data = json.loads(done.stdout)
    assert done.returncode == 0, [(r["id"], r["status"], r["message"]) for r in data["results"]
                                  if r["status"] in ("warn", "fail", "error")]


def test_torch_default_tmp_cache_is_a_note_with_its_fix():
    r = by_id(report(load_facts_dict("h100"), strict=True))["FD501"]
    assert r.status == Status.NOTE and r.fix is not None and "TORCHINDUCTOR_CACHE_DIR" in " ".join(r.fix.commands)


def test_a_note_shows_in_every_format_and_fails_none():
    rep = report(load_facts_dict("h100"), strict=True)
    assert rep.exit_code == 0 and rep.counts()["note"] == 1
    text = renderer(Format.text)(rep, width=100)
    assert "i FD501" in text and "$ export TORCHINDUCTOR_CACHE_DIR" in text and "notes: 1" in text
    doc = json.loads(renderer(Format.json)(rep))
    assert doc["summary"]["note"] == 1 and doc["ok"] is True
    gh = renderer(Format.github)(rep, step_summary="")
    assert any(ln.startswith("::notice title=FD501") for ln in gh.splitlines()) and "::error" not in gh
    suite = ET.fromstring(renderer(Format.junit)(rep)).find("testsuite")
    assert suite.get("failures") == "0" and suite.get("errors") == "0"
    assert "NOTE: " in "".join(e.text or "" for e in suite.iter("system-out"))


def test_a_profile_or_the_settings_can_raise_a_note(tmp_path):
    """extensions makes 'no nvcc' fail; `severity` can make any note a warning (then --strict fails)."""
    data = load_facts_dict("no_compiler_slim")
    assert by_id(report(data))["FD401"].status == Status.NOTE
    assert by_id(report(data, "extensions"))["FD401"].status == Status.FAIL
    (tmp_path / "flexdoctor.toml").write_text('[severity]\ncache-location = "warn"\n')
    done = cli("check", "--from-facts", str(FIXTURES / "h100.json"), "--strict", cwd=tmp_path)
    assert done.returncode == 1 and "! FD501" in done.stdout


def test_a_warning_still_fails_strict():
    rep = report(load_facts_dict("t4"), strict=True)
    assert rep.exit_code == 1 and {x.id for x in rep.results if rep.fails(x)} >= {"FD102", "FD105"}


# ------------------------------------------------------------------ the image profile


@pytest.mark.parametrize("name", ["image_cpu_wheel", "cpu_only"])
def test_image_profile_fails_a_cpu_wheel(name, tmp_path):
    data = load_facts_dict(name)
    r = by_id(report(data, "image"))["FD204"]
    assert r.status == Status.FAIL and "CPU-only" in r.message
    cmd = " ".join(r.fix.commands)
    assert "--index-url https://download.pytorch.org/whl/cu" in cmd and "+cpu" not in cmd
    done = cli("check", "--from-facts", str(FIXTURES / f"{name}.json"), "--profile", "image", cwd=tmp_path)
    assert done.returncode == 1 and "✗ FD204" in done.stdout


def test_image_profile_passes_a_cuda_image_built_without_a_gpu():
    rep = report(load_facts_dict("image_builder"), "image", strict=True)
    assert rep.exit_code == 0
    got = by_id(rep)
    assert got["FD204"].status == got["FD301"].status == got["FD302"].status == Status.PASS


def test_image_profile_checks_triton_from_metadata():
    data = load_facts_dict("image_builder")
    missing = copy.deepcopy(data)
    del missing["python"]["packages"]["triton"]
    missing["torch_runtime"]["triton_version"] = None
    assert by_id(report(missing, "image"))["FD301"].status == Status.FAIL
    off_pin = copy.deepcopy(data)
    off_pin["python"]["packages"]["triton"] = "3.5.1"
    got = by_id(report(off_pin, "image"))["FD302"]
    assert got.status == Status.FAIL and "triton==3.6.0" in " ".join(got.fix.commands)


def test_a_plus_cpu_version_is_a_cpu_build_even_if_cuda_were_set():
    data = load_facts_dict("image_cpu_wheel")
    data["torch"]["cuda"] = "13.0"  # an inconsistent version.py: the local tag still says cpu
    assert by_id(report(data, "image"))["FD204"].status == Status.FAIL
