"""The command line as users and CI scripts meet it: exit codes, formats, errors, speed hygiene."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

FD = [sys.executable, "-m", "flexdoctor"]


def run(*args: str, env: dict | None = None, timeout: int = 180) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.pop("CI", None)
    e.update(env or {})
    return subprocess.run(FD + list(args), capture_output=True, text=True, timeout=timeout, env=e)


def schema() -> dict:
    return json.loads(resources.files("flexdoctor.schema").joinpath("report.schema.json").read_text())


@pytest.fixture(scope="module")
def json_report() -> dict:
    """One real full check of this machine (no GPU, CPU torch in CI)."""
    done = run("check", "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def test_installed_console_script_end_to_end(tmp_path):
    """The installed `flexdoctor` entry point, as a user runs it after the README's install."""
    exe = shutil.which("flexdoctor")
    if exe is None:
        pytest.skip("flexdoctor is not installed as a console script (pip install -e .)")
    out = tmp_path / "report.json"
    done = subprocess.run([exe, "check", "--format", "json", "--output", str(out)],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(out.read_text())
    jsonschema.validate(data, schema())
    assert data["exit_code"] == done.returncode


def test_json_report_validates_and_is_consistent(json_report):
    jsonschema.validate(json_report, schema())
    ids = [r["id"] for r in json_report["results"]]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    counts = {s: sum(r["status"] == s for r in json_report["results"]) for s in ("pass", "warn", "fail", "skip", "error")}
    assert {k: json_report["summary"][k] for k in counts} == counts
    assert json_report["summary"]["error"] == 0
    for r in json_report["results"]:
        if r["status"] in ("fail", "warn"):
            assert r["fix"] and r["fix"]["summary"], r["id"]


def test_this_machine_is_described_truthfully(json_report):
    """CI has no GPU and a CPU torch: the report must say so, and what still works."""
    facts = json_report["facts"]
    results = {r["id"]: r for r in json_report["results"]}
    if facts["gpu"].get("nvml") == "ok" and facts["gpu"]["devices"]:
        pytest.skip("this machine has a GPU")
    assert results["FD101"]["status"] == "note"  # a CPU machine: nothing broken (--profile gpu fails it)
    assert "No NVIDIA GPU" in results["FD101"]["message"]
    if facts["torch"] and facts["torch"]["cuda"] is None:
        assert results["FD202"]["status"] == "pass"
        assert "CPU" in results["FD601"]["message"] and "inference" in results["FD601"]["message"]
        assert results["FD301"]["status"] == "skip"  # no Triton needed on a CPU build
    assert json_report["exit_code"] == 0


def test_text_report_plain_when_piped():
    done = run("check", "--static")
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout  # no colour codes in a pipe
    assert "passed" in done.stdout and "GPU and driver" in done.stdout


def test_no_color_env_respected():
    done = run("check", "--static", env={"NO_COLOR": "1", "TERM": "xterm"})
    assert "\x1b[" not in done.stdout


def test_strict_turns_warnings_into_exit_1(json_report):
    if json_report["summary"]["warn"] == 0:
        pytest.skip("no warnings on this machine")
    assert run("check", "--static", "--strict").returncode == 1


def test_only_and_skip_select_by_id_and_symbol():
    done = run("check", "--static", "--format", "json", "--only", "FD201,python-headers")
    ids = [r["id"] for r in json.loads(done.stdout)["results"]]
    assert ids == ["FD201", "FD306"]
    done = run("check", "--static", "--format", "json", "--skip", "gpu-present", "--skip", "FD601")
    ids = [r["id"] for r in json.loads(done.stdout)["results"]]
    assert "FD101" not in ids and "FD601" not in ids and "FD201" in ids


@pytest.mark.parametrize(
    "args, words",
    [
        (["check", "--only", "FD999"], "--only 'FD999': no such check"),
        (["check", "--format", "yaml"], "--format"),
        (["check", "--python", "/nonexistent/python3"], "no such executable"),
        (["facts", "--format", "xml"], "--format"),
        (["rules", "FD999"], "no check or knowledge-base entry"),
        (["check", "--output", "/nonexistent-dir/x.json", "--static"], "--output"),
        (["check", "--bogus"], "No such option"),
        (["check", "--python", "/bin/false"], "not a working Python interpreter"),
        (["facts", "--python", "/bin/false", "--static"], "not a working Python interpreter"),
    ],
)
def test_usage_errors_exit_2_without_traceback(args, words):
    done = run(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert words in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_output_file_written(tmp_path):
    out = tmp_path / "r.md"
    done = run("check", "--static", "--format", "markdown", "--output", str(out))
    assert done.returncode == 0 and done.stdout == ""
    assert out.read_text().startswith("## flexdoctor")


def test_facts_json_hides_home(tmp_path):
    done = run("facts", "--format", "json", "--static", env={"HOME": str(Path(sys.executable).parents[2])})
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["python"]["executable"].startswith("~")
    assert data["torch_runtime"]["probe_error"]["kind"] == "skipped"


def test_facts_text_lists_sections():
    done = run("facts", "--static")
    for section in ("host:", "gpu:", "python:", "torch:", "toolchain:"):
        assert section in done.stdout


def test_rules_list_and_one():
    listing = run("rules").stdout
    assert "FD101" in listing and "FDE105" in listing
    one = run("rules", "FD401").stdout
    for heading in ("What it checks:", "Why it matters:", "How to fix:"):
        assert heading in one
    assert "does NOT need nvcc" in one
    assert "NVIDIA driver" in run("rules", "nvidia-driver-too-old").stdout


def test_version_and_help_do_not_import_torch_or_pynvml():
    code = (
        "import sys, runpy\n"
        "sys.argv = ['flexdoctor', '--help']\n"
        "try:\n    runpy.run_module('flexdoctor', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "bad = [m for m in ('torch', 'pynvml', 'flexdoctor.probes.gpu') if m in sys.modules]\n"
        "print('IMPORTED', bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "IMPORTED []" in done.stdout, done.stdout + done.stderr
    assert "check" in done.stdout
    v = run("--version")
    assert v.returncode == 0 and v.stdout.startswith("flexdoctor ")


def test_static_tier_does_not_import_torch(tmp_path):
    """--static must answer without `import torch` anywhere: a torch that would hang is never touched."""
    site = tmp_path / "site" / "torch"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("import time; time.sleep(120)\n")
    done = run("check", "--static", "--format", "json", env={"PYTHONPATH": str(tmp_path / "site")}, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    results = {r["id"]: r for r in json.loads(done.stdout)["results"]}
    assert results["FD202"]["status"] == "skip"


def test_output_never_replaces_a_device_and_refuses_links(tmp_path):
    """--output must never replace a symlink or a device node (as root, -o /dev/null once turned
    /dev/null into a regular file); a link is refused rather than written through (issue 20:
    tests/test_render_output_file.py)."""
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run("check", "--static", "--format", "json", "-o", str(link)).returncode == 2
    assert link.is_symlink() and target.read_text() == "old"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    import threading
    got = {}
    reader = threading.Thread(target=lambda: got.setdefault("text", fifo.read_text()))
    reader.start()
    assert run("check", "--static", "-q", "-o", str(fifo)).returncode == 0
    reader.join(30)
    assert fifo.exists() and not fifo.is_file() and "passed" in got["text"]


@pytest.mark.parametrize("out, words", [("", "not a file name"), (".", "not a file name"),
                                        ("/nonexistent-dir/r.json", "no such directory")])
def test_bad_output_path_is_a_usage_error_before_probing(out, words):
    done = run("check", "--static", "-o", out)
    assert done.returncode == 2 and words in done.stderr and "internal error" not in done.stderr
