"""`check --project PATH` from the command line: SimpleTuner configs judged, bad ones exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "simpletuner"


def check(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIFFUSERS_ATTN")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "flexdoctor", "check", *args], capture_output=True,
                          text=True, env=env, timeout=300)


@pytest.mark.parametrize("bad", sorted(p.name for p in (CONFIGS / "malformed").iterdir()))
def test_malformed_config_exits_2_with_one_line(bad):
    done = check("--static", "--project", str(CONFIGS / "malformed" / bad))
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith("flexdoctor: error: --project:") and bad in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_missing_config_exits_2():
    done = check("--static", "--project", str(CONFIGS / "does-not-exist"))
    assert done.returncode == 2 and "--project" in done.stderr


def test_sdxl_flex_config_says_it_has_no_effect(tmp_path):
    cfg = next((CONFIGS / "sdxl").glob("*/config.*"))
    done = check("--static", "--format", "json", "--only", "FD7", "--project", str(cfg))
    results = {r["id"]: r for r in json.loads(done.stdout)["results"]}
    assert results["FD702"]["status"] == "warn", results["FD702"]
    assert "SDPA" in results["FD702"]["message"]


def test_config_with_recorded_facts_of_another_machine(tmp_path):
    """--project works with --from-facts: judge a config against a recorded H100."""
    cfg = next((CONFIGS / "wan").glob("*/config.*"))
    facts = ROOT / "tests" / "fixtures" / "facts" / "h100.json"
    done = check("--from-facts", str(facts), "--format", "json", "--only", "FD7", "--project", str(cfg))
    results = {r["id"]: r for r in json.loads(done.stdout)["results"]}
    assert results["FD705"]["status"] == "pass", results["FD705"]  # the H100 has the CUDA device flex needs
    assert results["FD701"]["status"] == "pass"


def test_old_config_spelling_still_works_with_a_note():
    """check --config was renamed --project (warm-cache's --config is another file): the old
    spelling keeps working, says so on stderr, and giving both is a usage error."""
    cfg = next((CONFIGS / "sdxl").glob("*/config.*"))
    new = check("--static", "--format", "json", "--only", "FD7", "--project", str(cfg))
    old = check("--static", "--format", "json", "--only", "FD7", "--config", str(cfg))
    assert old.returncode == new.returncode
    strip = lambda out: [(r["id"], r["status"], r["message"]) for r in json.loads(out)["results"]]
    assert strip(old.stdout) == strip(new.stdout)
    assert "--config is now --project" in old.stderr and "deprecated" in old.stderr
    assert "--config" not in new.stderr
    both = check("--static", "--project", str(cfg), "--config", str(cfg))
    assert both.returncode == 2 and "give --project only" in both.stderr
    bad = check("--static", "--config", str(CONFIGS / "does-not-exist"))
    assert bad.returncode == 2 and "flexdoctor: error: --config:" in bad.stderr


def test_the_config_is_parsed_once(monkeypatch):
    from typer.testing import CliRunner

    import flexdoctor.project as project_pkg
    from flexdoctor.cli import app
    from flexdoctor.probes import diffusers as project_probe

    calls = []
    real = project_pkg.load_config

    def counting(path, *a, **kw):
        calls.append(str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(project_pkg, "load_config", counting)
    monkeypatch.setattr(project_probe, "load_config", counting)
    cfg = next((CONFIGS / "sdxl").glob("*/config.*"))
    done = CliRunner().invoke(app, ["check", "--static", "--format", "json", "--only", "FD7", "--project", str(cfg)])
    assert done.exit_code in (0, 1), done.output
    assert len(calls) == 1, calls
