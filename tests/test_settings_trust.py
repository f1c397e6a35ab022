"""Settings are trusted like code (issue 20.6): a flexdoctor.toml or pyproject.toml counts only if
the user or root owns it and no one else can write it; the upward search stops at a folder
someone else owns or can write; every output names the settings file used.

Real files and modes; a real second owner (uid 65534) where root can chown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from flexdoctor import policy


def _schema() -> dict:
    from importlib import resources

    return json.loads(resources.files("flexdoctor.schema").joinpath("report.schema.json").read_text())

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "facts"
NOBODY = 65534
# The attack of issue 20.6: a file that turns `check --profile gpu` on a machine without a GPU
# from exit 1 (FD101 fails) to exit 0.
EVIL = 'ignore = ["FD101"]\n'
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def cpu_facts(tmp_path: Path) -> str:
    p = tmp_path / "facts.json"
    p.write_text((FIXTURES / "cpu_only.json").read_text())
    return str(p)


def shared_dir(tmp_path: Path) -> Path:
    """A folder like /tmp: world-writable with the sticky bit."""
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o1777)
    return d


def test_file_in_world_writable_parent_is_not_used_and_the_search_stops_there(tmp_path):
    shared = shared_dir(tmp_path)
    (shared / "flexdoctor.toml").write_text(EVIL)
    (tmp_path / "flexdoctor.toml").write_text('profile = "image"\n')  # above the stop: never read
    job = shared / "job"
    job.mkdir(mode=0o755)
    facts = cpu_facts(tmp_path)
    done = cli("check", "--from-facts", facts, "--profile", "gpu", "--format", "json", cwd=job)
    assert done.returncode == 1, done.stdout  # FD101 fails: the dropped file did not ignore it
    data = json.loads(done.stdout)
    assert data["profile"] == "gpu"
    used = data["settings"]
    assert used["path"] is None and used["source"] == "none"
    notes = {(n["kind"], n["path"]) for n in used["notes"]}
    assert ("stopped", str(shared)) in notes
    assert ("not-used", str(shared / "flexdoctor.toml")) in notes
    jsonschema.Draft202012Validator(_schema()).validate(data)  # the settings field is in the contract
    text = cli("check", "--from-facts", facts, "--profile", "gpu", cwd=job)
    assert f"{shared / 'flexdoctor.toml'}" in text.stdout and "not used" in text.stdout
    assert "other users can write" in text.stdout


def test_world_writable_file_in_own_folder_is_not_used(tmp_path):
    own = tmp_path / "proj"
    own.mkdir(mode=0o755)
    f = own / "flexdoctor.toml"
    f.write_text(EVIL)
    os.chmod(f, 0o666)
    done = cli("check", "--from-facts", cpu_facts(tmp_path), "--profile", "gpu", "--format", "json", cwd=own)
    assert done.returncode == 1
    notes = json.loads(done.stdout)["settings"]["notes"]
    assert [(n["kind"], n["path"], n["reason"]) for n in notes] == [("not-used", str(f), "writable-by-others")]


@needs_root
def test_file_owned_by_another_user_is_not_used(tmp_path):
    own = tmp_path / "proj"
    own.mkdir(mode=0o755)
    f = own / "pyproject.toml"
    f.write_text("[tool.flexdoctor]\n" + EVIL)
    os.chown(f, NOBODY, NOBODY)
    done = cli("check", "--from-facts", cpu_facts(tmp_path), "--profile", "gpu", "--format", "json", cwd=own)
    assert done.returncode == 1
    notes = json.loads(done.stdout)["settings"]["notes"]
    assert [(n["kind"], n["path"], n["reason"]) for n in notes] == [("not-used", str(f), "foreign-owner")]
    text = cli("check", "--from-facts", cpu_facts(tmp_path), "--profile", "gpu", cwd=own)
    assert str(f) in text.stdout and f"uid {NOBODY}" in text.stdout


@needs_root
def test_search_stops_at_a_folder_another_user_owns(tmp_path):
    (tmp_path / "flexdoctor.toml").write_text(EVIL)  # ours, but above the other user's folder
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, NOBODY, NOBODY)
    job = theirs / "job"
    job.mkdir(mode=0o755)  # ours again: the search still stops above it
    done = cli("check", "--from-facts", cpu_facts(tmp_path), "--profile", "gpu", "--format", "json", cwd=job)
    assert done.returncode == 1
    used = json.loads(done.stdout)["settings"]
    assert used["path"] is None
    assert [(n["kind"], n["path"], n["reason"]) for n in used["notes"]] == [("stopped", str(theirs), "foreign-owner")]


def test_the_file_used_is_named_in_every_format(tmp_path):
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    f = proj / "pyproject.toml"
    f.write_text('[tool.flexdoctor]\nprofile = "image"\n')
    facts = cpu_facts(tmp_path)
    data = json.loads(cli("check", "--from-facts", facts, "--format", "json", cwd=proj / "sub").stdout)
    assert data["settings"] == {"path": str(f), "source": "search", "notes": []}
    text = cli("check", "--from-facts", facts, cwd=proj / "sub").stdout
    assert text.splitlines()[0] == f"settings: {f}"
    md = cli("check", "--from-facts", facts, "--format", "markdown", cwd=proj / "sub").stdout
    assert str(f) in md
    gh = cli("check", "--from-facts", facts, "--format", "github", cwd=proj / "sub").stdout
    assert f"settings: {f}" in gh
    junit = ET.fromstring(cli("check", "--from-facts", facts, "--format", "junit", cwd=proj / "sub").stdout)
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["settings"] == str(f)
    given = json.loads(cli("check", "--from-facts", facts, "--format", "json", "--settings", str(f),
                           cwd=tmp_path).stdout)["settings"]
    assert given == {"path": str(f), "source": "--settings", "notes": []}
    none = json.loads(cli("check", "--from-facts", facts, "--format", "json", cwd=tmp_path).stdout)["settings"]
    assert none["path"] is None and none["source"] == "none"


def test_explicit_unsafe_settings_file_exits_2_in_one_line(tmp_path):
    shared = shared_dir(tmp_path)
    f = shared / "ci.toml"
    f.write_text('profile = "gpu"\n')
    os.chmod(f, 0o666)
    done = cli("check", "--from-facts", cpu_facts(tmp_path), "--settings", str(f), cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(f) in lines[0] and "other users can write" in lines[0]


def test_search_unit(tmp_path):
    """policy.search over real folders: the verdicts, without a subprocess."""
    shared = shared_dir(tmp_path)
    job = shared / "a" / "b"
    job.mkdir(parents=True)
    os.chmod(shared / "a", 0o755)
    os.chmod(job, 0o755)
    found = policy.search(job)
    assert found.path is None and found.notes[0].kind == "stopped" and found.notes[0].path == str(shared)
    (shared / "a" / "flexdoctor.toml").write_text('profile = "gpu"\n')
    os.chmod(shared / "a" / "flexdoctor.toml", 0o644)
    found = policy.search(job)
    assert found.path == shared / "a" / "flexdoctor.toml" and found.notes == ()
    assert policy.find_config(job) == shared / "a" / "flexdoctor.toml"


# ------------------------------------------------------------------ warm-cache: `run =` from settings


def _warm_table(tmp_path: Path) -> tuple[Path, Path]:
    proj = tmp_path / "clone"
    proj.mkdir(mode=0o755)
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')"
    (proj / "pyproject.toml").write_text(
        "[tool.flexdoctor.warm]\nrun = " + json.dumps(f"{sys.executable} -c \"{code}\"") + "\n")
    return proj, marker


def test_run_from_settings_does_not_run_unasked(tmp_path):
    """A `run =` in a cloned repo's [tool.flexdoctor.warm] is a command: a plain warm-cache (not at
    a terminal) runs nothing, exits 2 and says how to allow it."""
    proj, marker = _warm_table(tmp_path)
    done = cli("warm-cache", "--cache-dir", str(tmp_path / "cache"), "--no-verify", cwd=proj)
    assert done.returncode == 2, done.stdout + done.stderr
    assert not marker.exists()
    assert "--run-from-settings" in done.stderr and "pyproject.toml" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_run_from_settings_runs_when_asked(tmp_path):
    proj, marker = _warm_table(tmp_path)
    done = cli("warm-cache", "--cache-dir", str(tmp_path / "cache"), "--no-verify", "--run-from-settings", cwd=proj)
    assert marker.exists(), done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr


def test_warm_settings_file_must_be_trusted(tmp_path):
    """The warm table is settings too: a world-writable one is refused before anything runs."""
    proj, marker = _warm_table(tmp_path)
    os.chmod(proj / "pyproject.toml", 0o666)
    done = cli("warm-cache", "--cache-dir", str(tmp_path / "cache"), "--run-from-settings", cwd=proj)
    assert done.returncode == 2 and not marker.exists()
    assert "other users can write" in done.stderr


# ------------------------------------------------------------------ --only / --skip with an unknown ID


@pytest.mark.parametrize("lang", ["en", "ja", "pt-BR", "hi"])
def test_only_unknown_id_is_one_clean_usage_line(tmp_path, lang):
    """issue 21.10: `--only FD999` named the settings' internal key ('select'). Now: the flag,
    the unknown name and the nearest real IDs, in one line, in every language."""
    done = cli("check", "--lang", lang, "--from-facts", cpu_facts(tmp_path), "--only", "FD999", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "--only" in lines[0] and "FD999" in lines[0] and "FD90" in lines[0]
    assert "select" not in lines[0] and "Traceback" not in done.stderr
    skip = cli("check", "--lang", lang, "--from-facts", cpu_facts(tmp_path), "--skip", "gpu-presnt", cwd=tmp_path)
    assert skip.returncode == 2 and "--skip" in skip.stderr and "gpu-present" in skip.stderr
    assert "ignore" not in skip.stderr
