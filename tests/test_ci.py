"""flexdoctor as a CI step: formats CI systems read, profiles, project settings, the Action."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from flexdoctor import checks, policy, runner
from flexdoctor.facts import Facts
from flexdoctor.model import Status
from flexdoctor.render import Format, renderer

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "facts"


def facts(name: str) -> Facts:
    return Facts.from_dict(json.loads((FIXTURES / f"{name}.json").read_text()))


def cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    e["PYTHONPATH"] = str(ROOT)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=e, timeout=120)


def report(name: str, strict: bool = False, settings=None):
    return runner.run(checks.builtin(), facts(name), settings=settings or policy.Settings(strict=strict))


# ------------------------------------------------------------------ github


def test_github_annotations_escape_and_levels(tmp_path):
    out = renderer(Format.github)(report("driver_too_old"), step_summary="")
    lines = out.splitlines()
    errors = [ln for ln in lines if ln.startswith("::error ")]
    assert errors and all("\n" not in ln for ln in lines)
    assert any(ln.startswith("::error title=FD104 driver-cuda-version%3A") for ln in errors)
    assert any("%0AFix: " in ln for ln in errors)  # newlines escaped, fix carried
    assert lines[-1].endswith("errors")  # the one-line summary closes the output


def test_github_strict_promotes_warnings():
    r = report("t4")
    assert any(x.status == Status.WARN for x in r.results)
    plain = renderer(Format.github)(r, step_summary="")
    strict = renderer(Format.github)(report("t4", strict=True), step_summary="")
    assert "::warning " in plain and "::warning " not in strict


def test_step_summary_is_appended_never_overwritten(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("# Earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"}
    raw = tmp_path / "facts.json"
    raw.write_text((FIXTURES / "h100.json").read_text())
    for _ in range(2):
        cli("check", "--from-facts", str(raw), "--format", "github", env=env)
    text = summary.read_text()
    assert text.startswith("# Earlier step\n")
    assert text.count("## flexdoctor") == 2


# ------------------------------------------------------------------ junit


@pytest.mark.parametrize("name", ["driver_too_old", "cpu_only", "h100", "t4"])
def test_junit_parses_and_counts(name):
    r = report(name)
    root = ET.fromstring(renderer(Format.junit)(r))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    c = r.counts()
    assert len(cases) == int(suite.get("tests")) == len(r.results)
    assert int(suite.get("failures")) == c["fail"] == len([x for x in cases if x.find("failure") is not None])
    assert int(suite.get("errors")) == c["error"]
    assert int(suite.get("skipped")) == c["skip"] == len([x for x in cases if x.find("skipped") is not None])
    assert root.get("tests") == suite.get("tests")
    for case in cases:
        assert case.get("classname").startswith("flexdoctor.") and case.get("name")[:2] == "FD"


def test_junit_strict_warnings_are_failures():
    r = report("t4", strict=True)
    suite = ET.fromstring(renderer(Format.junit)(r)).find("testsuite")
    assert int(suite.get("failures")) == r.counts()["fail"] + r.counts()["warn"]


# ------------------------------------------------------------------ profiles


def test_profiles_exit_codes_on_recorded_machines(tmp_path):
    def code(fixture: str, *args: str) -> int:
        p = tmp_path / f"{fixture}.json"
        p.write_text((FIXTURES / f"{fixture}.json").read_text())
        return cli("check", "--from-facts", str(p), "--format", "json", *args).returncode

    assert code("cpu_only") == 0  # no GPU is a note by default...
    assert code("cpu_only", "--profile", "gpu") == 1  # ...and a failure on a GPU runner
    assert code("cpu_only", "--profile", "image") == 1  # a GPU image with a CPU-only torch
    assert code("image_builder", "--profile", "image") == 0  # an image build needs no GPU
    assert code("cpu_only", "--strict") == 0  # a note never fails --strict
    assert code("h100") == 0


def test_image_profile_skips_gpu_checks_not_fails():
    r = report("cpu_only", settings=policy.Settings(profile=policy.PROFILES["image"]))
    by = {x.id: x for x in r.results}
    assert by["FD101"].status == Status.SKIP and "image" in by["FD101"].message
    assert by["FD201"].status == Status.PASS


def test_extensions_profile_makes_toolkit_problems_fail():
    base = report("no_compiler_slim")
    ext = report("no_compiler_slim", settings=policy.Settings(profile=policy.PROFILES["extensions"]))
    b, e = {x.id: x for x in base.results}, {x.id: x for x in ext.results}
    assert b["FD401"].status == Status.NOTE and e["FD401"].status == Status.FAIL
    assert ext.exit_code == 1


# ------------------------------------------------------------------ settings


def test_pyproject_settings_found_and_applied(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.flexdoctor]\nprofile = "gpu"\nignore = ["FD601"]\n'
        '[tool.flexdoctor.severity]\ngpu-present = "ignore"\n'
    )
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    raw = tmp_path / "facts.json"
    raw.write_text((FIXTURES / "cpu_only.json").read_text())
    done = cli("check", "--from-facts", str(raw), "--format", "json", cwd=sub)
    data = json.loads(done.stdout)
    ids = {r["id"] for r in data["results"]}
    assert data["profile"] == "gpu"
    assert "FD601" not in ids and "FD101" not in ids  # ignored by the settings
    assert done.returncode == 0


@pytest.mark.parametrize(
    "content, words",
    [
        ('[tool.flexdoctor]\nprofle = "gpu"\n', "unknown key 'profle'"),
        ('[tool.flexdoctor]\nprofile = "laptop"\n', "unknown profile 'laptop'"),
        ('[tool.flexdoctor]\nselect = "FD1"\nignore = [1]\n', "'ignore' must be a list"),
        ('[tool.flexdoctor]\nstrict = "yes"\n', "'strict' must be true or false"),
        ('[tool.flexdoctor.severity]\nFD101 = "error"\n', "severity.FD101"),
        ('[tool.flexdoctor]\nignore = ["FD999"]\n', "unknown check 'FD999'"),
        ("[tool.flexdoctor\n", "invalid TOML"),
        ('[tool.flexdoctor]\nprofile = "gpu"\n[tool.flexdoctor.sevrity]\nFD101 = "ignore"\n', "unknown key 'sevrity'"),
    ],
)
def test_bad_settings_exit_2_naming_the_key(tmp_path, content, words):
    (tmp_path / "pyproject.toml").write_text(content)
    done = cli("check", "--static", cwd=tmp_path)
    assert done.returncode == 2, done.stdout
    assert words in done.stderr and "pyproject.toml" in done.stderr
    assert "Traceback" not in done.stderr


def test_flexdoctor_toml_and_explicit_settings(tmp_path):
    own = tmp_path / "flexdoctor.toml"
    own.write_text('profile = "image"\n')
    done = cli("check", "--static", "--format", "json", "--settings", str(own))
    assert json.loads(done.stdout)["profile"] == "image"
    assert cli("check", "--static", "--settings", str(tmp_path / "missing.toml")).returncode == 2


def test_ci_environment_means_plain_output():
    done = cli("check", "--static", env={"GITLAB_CI": "true", "TERM": "xterm-256color"})
    assert "\x1b[" not in done.stdout + done.stderr


def test_from_facts_rejects_junk(tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2]")
    done = cli("check", "--from-facts", str(junk))
    assert done.returncode == 2 and "not a flexdoctor facts document" in done.stderr


# ------------------------------------------------------------------ the Action


def _checkout_python(tmp_path: Path) -> Path:
    """An interpreter whose ``python -I -m flexdoctor`` runs THIS checkout.

    The Action runs every Python with -I (isolated: -E -s -P), which ignores PYTHONPATH (the
    old test set it, so it ran whatever flexdoctor the interpreter had installed, and from the
    repository root, where a regression to running the workspace ran this checkout anyway and
    passed). What -I keeps is the interpreter's own site-packages and their .pth files (CPython's
    site.py still runs; -I drops only the user site, PYTHON* variables and the script's or the
    current folder on sys.path: docs.python.org/3/using/cmdline.html#cmdoption-I). So: a venv
    seeing this machine's packages (torch) whose site-packages holds a .pth naming this checkout
    first, as an editable install of it would; no network, no build (tests/test_action.py's venv)."""
    from test_action import _venv

    python = _venv(tmp_path / "venv")
    where = subprocess.run([str(python), "-I", "-c", "import flexdoctor; print(flexdoctor.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert where.stdout.strip() == str(ROOT / "flexdoctor" / "__init__.py"), where.stdout + where.stderr
    return python


def test_action_runs_as_github_would(tmp_path):
    """Execute action.yml's check step with bash, inputs mapped to env as the runner does, in a
    workspace that is not this checkout: its own ``flexdoctor`` package (what a pull request could
    add) must not be what runs. If the step ran the workspace (``python -m flexdoctor`` without
    -I, or a cd into it with the folder on the path), the planted package writes MARKER."""
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = {s.get("id") or s["name"]: s for s in action["runs"]["steps"]}
    install = steps["Install flexdoctor"]["run"]
    assert "pip install" in install and "FD_ACTION_PATH" in install and "torch" not in install
    step = steps["check"]
    workspace, marker = tmp_path / "workspace", tmp_path / "MARKER"
    (workspace / "flexdoctor").mkdir(parents=True)
    planted = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\nprint('0 failed, passed')\n"
    for name in ("__init__.py", "__main__.py"):
        (workspace / "flexdoctor" / name).write_text(planted)
    inputs = {k: v.get("default", "") for k, v in action["inputs"].items()}
    inputs.update(profile="default", python=str(_checkout_python(tmp_path)), junit=str(tmp_path / "fd.xml"))
    env = {}
    for key, expr in step["env"].items():
        name = expr.strip("${} ").split(".", 1)[1]
        env[key] = str(inputs[name])
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTHONPATH")}
    e.update(env, RUNNER_TEMP=str(tmp_path), GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(workspace),
             GITHUB_STEP_SUMMARY=str(summary), GITHUB_OUTPUT=str(output))
    done = subprocess.run(["bash", "-c", step["run"]], capture_output=True, text=True, env=e, timeout=300,
                          cwd=workspace)
    assert not marker.exists(), f"the Action ran the workspace's flexdoctor: {marker.read_text()}"
    assert done.returncode in (0, 1), done.stderr
    assert output.read_text().strip() == f"exit-code={done.returncode}"
    assert "## flexdoctor" in summary.read_text()
    ET.parse(tmp_path / "fd.xml")
    assert "passed" in done.stdout.splitlines()[-1]


@pytest.mark.parametrize("content, words", [
    ('{"gpu": null}', "unsupported facts schema_version"),
    ('{"schema_version": 999, "gpu": null}', "unsupported facts schema_version 999"),
    ('{"schema_version": 1, "gpu": null}', "no host"),
    ('{"schema_version": 1, "host": null, "gpu": 1, "python": null, "torch": null, '
     '"torch_runtime": null, "toolchain": null}', "'gpu' is a int"),
    ('{"schema_version": 1, "host": null, "gpu": {}, "python": null, "torch": null, '
     '"torch_runtime": null, "toolchain": null}', "malformed facts"),
])
def test_from_facts_rejects_documents_that_are_not_facts(tmp_path, content, words):
    """CI must never pass on junk: an empty or foreign document is a usage error, not 45 skips."""
    f = tmp_path / "f.json"
    f.write_text(content)
    done = cli("check", "--from-facts", str(f))
    assert done.returncode == 2, done.stdout
    assert words in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("name, content", [
    ("my-ci.toml", '[tool.flexdoctor]\nprofile = "gpu"\n'),
    ("flexdoctor.toml", '[tool.flexdoctor]\nprofile = "gpu"\n'),
    ("flexdoctor.toml", 'profile = "gpu"\n'),
])
def test_settings_file_any_name_either_shape(tmp_path, name, content):
    f = tmp_path / name
    f.write_text(content)
    done = cli("check", "--static", "--format", "json", "--settings", str(f))
    assert json.loads(done.stdout)["profile"] == "gpu"


@pytest.mark.parametrize("name", ["t4", "driver_too_old", "h100"])
@pytest.mark.parametrize("strict", [False, True])
def test_one_strict_failure_rule_for_exit_code_github_and_junit(name, strict):
    """The exit code, the GitHub error annotations and the JUnit failures/errors all name the
    same checks: those Report.fails says make the run fail."""
    r = report(name, strict=strict)
    failing = {x.id for x in r.results if r.fails(x)}
    assert r.exit_code == (1 if failing else 0)
    gh = renderer(Format.github)(r, step_summary="")
    annotated = {ln.split("title=", 1)[1].split(" ", 1)[0] for ln in gh.splitlines() if ln.startswith("::error ")}
    assert annotated == failing
    suite = ET.fromstring(renderer(Format.junit)(r)).find("testsuite")
    bad = {c.get("name").split(" ", 1)[0] for c in suite.findall("testcase")
           if c.find("failure") is not None or c.find("error") is not None}
    assert bad == failing
    if strict:
        assert {x.id for x in r.results if x.status == Status.WARN} <= failing
