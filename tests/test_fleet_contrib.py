"""contrib/: the Kubernetes manifests validate, the node-problem-detector plugin keeps NPD's protocol,
and the Slurm node check drains, resumes and leaves alone as it says (scontrol replaced by a
recorder; tests/test_slurm.py runs it against a real Slurm).

Run as root (CI does), the scripts run the check as nobody (uid 65534): the tests that need the
check to really run then need a Python that user can run (not one under a private /root), and skip
with that reason otherwise. Recorded on the CPU machine, root, with /opt/fd-e2e/bin/python (Debian's
python3.11 venv, torch 2.13.0+cpu): `python -m pytest tests/test_fleet_contrib.py` 26 passed.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "contrib" / "k8s"
SLURM = ROOT / "contrib" / "slurm"
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           FLEXDOCTOR=f"{sys.executable} -m flexdoctor")
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


@functools.lru_cache(maxsize=None)
def _why_the_check_cannot_run() -> str:
    """Why the scripts' check cannot run here ("" when it can): as root they run it as nobody."""
    if not AS_ROOT:
        return ""
    if not shutil.which("setpriv"):
        return "as root the scripts run the check through setpriv, which is not installed"
    done = subprocess.run(AS_NOBODY + [sys.executable, "-c", "import flexdoctor, typer"], env=ENV, cwd="/",
                          capture_output=True, timeout=60)
    if done.returncode:
        return (f"as root the scripts run the check as nobody (uid {NOBODY}), who cannot run {sys.executable} "
                "with this checkout: run the tests with a Python every user can read")
    return ""


@pytest.fixture
def runnable():
    if _why_the_check_cannot_run():
        pytest.skip(_why_the_check_cannot_run())


@pytest.fixture
def public():
    """A folder every user can read (a fake flexdoctor there runs as nobody too); root's own."""
    path = Path(tempfile.mkdtemp(prefix="fd-contrib-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _docs(path: Path) -> list:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


# ------------------------------------------------------------------------- Kubernetes


@pytest.mark.parametrize("path", sorted(K8S.glob("*.yaml")), ids=lambda p: p.name)
def test_manifests_parse_and_validate_against_the_kubernetes_schema(path):
    docs = _docs(path)
    assert docs and all(d.get("apiVersion") and d.get("kind") for d in docs)
    kv = pytest.importorskip("kubernetes_validate")
    for doc in docs:
        kv.validate(doc, kv.latest_version(), strict=True)  # raises on an unknown or mistyped field


def test_the_job_is_indexed_one_pod_per_gpu_node_and_names_the_node():
    (job,) = _docs(K8S / "flexdoctor-fleet-job.yaml")
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"]
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["topologyKey"] == "kubernetes.io/hostname"
    assert anti["labelSelector"]["matchLabels"] == spec["template"]["metadata"]["labels"]
    (c,) = pod["containers"]
    env = {e["name"]: e for e in c["env"]}
    assert env["FLEXDOCTOR_NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert "nvidia.com/gpu" in c["resources"]["limits"]
    script = c["args"][0]
    assert "flexdoctor check --profile gpu --format json >" in script
    assert "/tmp" not in script and "mktemp -d" in script  # a private folder, no fixed name
    sc = c["securityContext"]
    assert sc["runAsNonRoot"] and sc["runAsUser"] != 0 and sc["allowPrivilegeEscalation"] is False


def test_the_job_script_prints_a_report_fleet_merge_reads(tmp_path):
    """The container's script, run here with this flexdoctor: its stdout is a node report. Its
    files go where mktemp puts them (TMPDIR): nothing in the script is rewritten but the command,
    so an interpreter under /tmp (a venv there) stays as it is (issue 21, item 8)."""
    (job,) = _docs(K8S / "flexdoctor-fleet-job.yaml")
    script = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
    script = script.replace("flexdoctor check", f"{sys.executable} -m flexdoctor check --static")
    done = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**ENV, "FLEXDOCTOR_NODE_NAME": "gpu-node-7", "TMPDIR": str(tmp_path)})
    assert done.returncode == 0
    assert os.listdir(tmp_path) == []  # its private folder is gone
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "gpu-node-7.json").write_text(done.stdout)
    from flexdoctor.fleet import merge_paths

    report = merge_paths([str(tmp_path / "r")])
    assert [n.name for n in report.nodes] == ["gpu-node-7"]


def _duration(text: str) -> float:
    """Go's time.ParseDuration for the forms NPD configs use (300s, 1m30s, 500ms)."""
    parts = re.fullmatch(r"((\d+(\.\d+)?)(ms|s|m|h))+", text)
    assert parts, f"not a Go duration: {text!r}"
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * unit[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)(ms|s|m|h)", text))


def test_npd_config_passes_npds_own_validation():
    """What node-problem-detector's CustomPluginConfig.Validate checks (pkg/custompluginmonitor/types)."""
    cfg = json.loads((K8S / "node-problem-detector-flexdoctor.json").read_text())
    assert cfg["plugin"] == "custom" and cfg["source"]
    timeout = _duration(cfg["pluginConfig"]["timeout"])
    _duration(cfg["pluginConfig"]["invoke_interval"])
    conditions = {c["type"] for c in cfg["conditions"]}
    for rule in cfg["rules"]:
        assert rule["type"] in ("temporary", "permanent")
        assert _duration(rule["timeout"]) <= timeout
        if rule["type"] == "permanent":
            assert rule["condition"] in conditions
        assert (K8S / Path(rule["path"]).name).is_file()
    # The plugin's own time box fits inside the rule's.
    script = (K8S / "flexdoctor-npd-plugin.sh").read_text()
    own = int(re.search(r"FLEXDOCTOR_TIMEOUT:-(\d+)", script).group(1))
    assert own + 5 <= _duration(cfg["rules"][0]["timeout"])


def test_npd_configmap_holds_the_files_as_they_are():
    (cm,) = _docs(K8S / "node-problem-detector-configmap.yaml")
    for name, text in cm["data"].items():
        assert text == (K8S / name).read_text(), f"{name} in the ConfigMap differs from contrib/k8s/{name}"


def _npd(**env) -> subprocess.CompletedProcess:
    return subprocess.run([str(K8S / "flexdoctor-npd-plugin.sh")], capture_output=True, text=True, timeout=120,
                          env={**ENV, **env})


def test_npd_plugin_exit_codes(runnable):
    # This machine has no GPU: under --profile gpu FD101 fails -> NonOK, the failing check as message.
    bad = _npd()
    assert bad.returncode == 1 and bad.stdout.startswith("flexdoctor: FD101 gpu-present")
    good = _npd(FLEXDOCTOR_ARGS="--static --profile default --skip FD5")
    assert good.returncode == 0 and good.stdout.strip() == "flexdoctor check passes"
    unknown = _npd(FLEXDOCTOR="/nonexistent/flexdoctor")
    assert unknown.returncode == 2 and "could not run" in unknown.stdout
    usage = _npd(FLEXDOCTOR_ARGS="--no-such-option")  # exit 2: Unknown, never a problem on the node
    assert usage.returncode == 2 and "could not run (exit 2)" in usage.stdout


def _fake_flexdoctor(folder: Path, code: int, results: list | None = None, text: str = "") -> Path:
    """A stand-in for flexdoctor that prints a report with ``results`` (``$(id -u)`` in them is
    the uid it runs as), or ``text``, and exits ``code``."""
    fake = folder / "flexdoctor"
    body = json.dumps({"ok": False, "results": results}) if results is not None else text
    fake.write_text(f"#!/bin/sh\ncat <<EOF\n{body}\nEOF\nexit {code}\n")
    fake.chmod(0o755)
    return fake


def test_npd_plugin_exit_1_without_a_report_is_unknown(public):
    done = _npd(FLEXDOCTOR=str(_fake_flexdoctor(public, 1, text="not a report")))
    assert done.returncode == 2 and "without a report" in done.stdout


@pytest.mark.skipif(not AS_ROOT, reason="as root only: the plugin runs the check as nobody")
def test_npd_plugin_as_root_runs_the_check_as_nobody(public):
    fake = _fake_flexdoctor(public, 1, [{"id": "FD999", "symbol": "uid-$(id -u)", "status": "fail", "message": "m"}])
    done = _npd(FLEXDOCTOR=str(fake))
    assert done.returncode == 1 and done.stdout.startswith(f"flexdoctor: FD999 uid-{NOBODY}: m"), done.stdout


def _fake_kubectl(folder: Path) -> Path:
    """kubectl replaced by a script answering the three calls collect-reports.sh makes."""
    fake = folder / "kubectl"
    fake.write_text("""#!/bin/bash
case "$*" in
  *" wait "*) exit 0 ;;
  "get nodes"*) printf 'gpu1\\n' ;;
  *"get pods"*) printf 'pod-a gpu1\\npod-b ../../escaped\\npod-c .hidden\\n' ;;
  *"logs pod-"*) echo '{"from": "'"${@: -1}"'"}' ;;
esac
""")
    fake.chmod(0o755)
    return fake


def test_collect_reports_keeps_its_files_in_a_private_folder_named_by_node_names(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_kubectl(bin_dir)
    merge = _fake_flexdoctor(bin_dir, 0, text="merged")
    env = {**ENV, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FLEXDOCTOR": str(merge)}
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    done = subprocess.run(["bash", str(K8S / "collect-reports.sh"), "flexdoctor-fleet", str(shared)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no one else can write" in done.stderr and os.listdir(shared) == []
    reports = tmp_path / "a" / "b" / "reports"
    done = subprocess.run(["bash", str(K8S / "collect-reports.sh"), "flexdoctor-fleet", str(reports)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(reports)) == ["expected-nodes.txt", "gpu1.json"]
    assert stat.S_IMODE(reports.stat().st_mode) == 0o700 and not (tmp_path / "a" / "escaped.json").exists()


# ------------------------------------------------------------------------- Slurm, scontrol recorded


def _fake_scontrol(tmp_path: Path, reason: str = "") -> tuple:
    log = tmp_path / "scontrol.log"
    fake = tmp_path / "scontrol"
    fake.write_text(f"""#!/bin/bash
echo "$@" >> {log}
if [ "$1" = show ]; then echo "NodeName=$3 State=IDLE Reason={reason}"; fi
""")
    fake.chmod(0o755)
    return fake, log


def _node_check(fake: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([str(SLURM / "flexdoctor-node-check")], capture_output=True, text=True, timeout=120,
                          env={**ENV, "SCONTROL": str(fake), "SLURMD_NODENAME": "gpu017", **env})


def test_node_check_drains_with_the_failing_checks(tmp_path, runnable):
    fake, log = _fake_scontrol(tmp_path)
    done = _node_check(fake, FLEXDOCTOR_MODE="healthcheck")
    assert done.returncode == 0
    assert log.read_text().splitlines() == [
        "update nodename=gpu017 state=drain reason=flexdoctor: FD101 gpu-present (run: flexdoctor check)"]


def test_node_check_as_prolog_fails_so_the_job_is_requeued(tmp_path, runnable):
    fake, log = _fake_scontrol(tmp_path)
    done = _node_check(fake, SLURM_JOB_ID="123")
    assert done.returncode == 1 and "state=drain" in log.read_text()


def test_node_check_resumes_only_its_own_drains(tmp_path, runnable):
    passing = {"FLEXDOCTOR_MODE": "healthcheck", "FLEXDOCTOR_ARGS": "--static --profile default --skip FD5"}
    fake, log = _fake_scontrol(tmp_path, reason="flexdoctor: FD101 gpu-present [root@2026-11-23T11:19:36]")
    _node_check(fake, **passing)
    assert log.read_text().splitlines()[-1] == "update nodename=gpu017 state=resume"
    other = tmp_path / "other"
    other.mkdir()
    fake, log = _fake_scontrol(other, reason="admin: new PSU")
    _node_check(fake, **passing)
    assert "resume" not in log.read_text()


def _cannot_run(public: Path) -> dict:
    """Ways flexdoctor itself does not run, each as node-check settings."""
    not_exec = public / "not-executable"
    not_exec.write_text("#!/bin/sh\nexit 1\n")
    garbage = public / "garbage"
    garbage.mkdir()
    return {
        "missing (127)": {"FLEXDOCTOR": "/nonexistent/flexdoctor"},
        "not executable (126)": {"FLEXDOCTOR": str(not_exec)},
        "usage error (2)": {"FLEXDOCTOR_ARGS": "--no-such-option"},
        "exit 1 without a report": {"FLEXDOCTOR": str(_fake_flexdoctor(garbage, 1, text="Traceback: oops"))},
        "no private folder": {"TMPDIR": "/nonexistent"},
    }


@pytest.mark.parametrize("how", ["missing (127)", "not executable (126)", "usage error (2)", "exit 1 without a report",
                                 "no private folder"])
def test_node_check_never_drains_when_flexdoctor_cannot_run(tmp_path, public, how):
    fake, log = _fake_scontrol(tmp_path)
    setting = _cannot_run(public)[how]
    for mode in ({"FLEXDOCTOR_MODE": "healthcheck"}, {"SLURM_JOB_ID": "7"}):  # a prolog exits 0 too: no requeue
        done = _node_check(fake, **mode, **setting)
        assert done.returncode == 0, done.stderr
        assert "could not run" in done.stderr or "no private temporary folder" in done.stderr, done.stderr
        assert "node left as it is" in done.stderr
    assert not log.exists() or "drain" not in log.read_text()


def test_node_check_time_box_drains_a_hung_check(tmp_path, public):
    fake, log = _fake_scontrol(tmp_path)
    hang = public / "hang"
    hang.write_text("#!/bin/bash\nsleep 60\n")
    hang.chmod(0o755)
    done = _node_check(fake, FLEXDOCTOR=str(hang), FLEXDOCTOR_TIMEOUT="2", FLEXDOCTOR_MODE="healthcheck")
    assert done.returncode == 0
    assert "did not finish in 2 s" in log.read_text()


def test_node_check_health_check_time_box_stays_under_slurms_60_s(tmp_path, public):
    """slurmd kills a HealthCheckProgram after 60 s: a longer FLEXDOCTOR_TIMEOUT is cut to 50."""
    fake, log = _fake_scontrol(tmp_path)
    flexdoctor = str(_fake_flexdoctor(public, 0, text="{}"))
    done = _node_check(fake, FLEXDOCTOR=flexdoctor, FLEXDOCTOR_TIMEOUT="300", FLEXDOCTOR_MODE="healthcheck")
    assert done.returncode == 0 and "FLEXDOCTOR_TIMEOUT=300 is longer than a health check may take" in done.stderr
    done = _node_check(fake, FLEXDOCTOR=flexdoctor, FLEXDOCTOR_TIMEOUT="300", SLURM_JOB_ID="7")  # a prolog: its own limit
    assert done.returncode == 0 and "FLEXDOCTOR_TIMEOUT" not in done.stderr


@pytest.mark.skipif(not AS_ROOT or not shutil.which("setpriv"), reason="as root only: the check then runs as nobody")
def test_node_check_runs_the_check_as_nobody_and_only_scontrol_as_root(tmp_path, public):
    fake, log = _fake_scontrol(tmp_path)
    flexdoctor = _fake_flexdoctor(public, 1, [{"id": "FD999", "symbol": "uid-$(id -u)", "status": "fail"}])
    _node_check(fake, FLEXDOCTOR=str(flexdoctor), FLEXDOCTOR_MODE="healthcheck")
    assert log.read_text().splitlines() == [
        f"update nodename=gpu017 state=drain reason=flexdoctor: FD999 uid-{NOBODY} (run: flexdoctor check)"]
    fake, log = _fake_scontrol(public)
    done = _node_check(fake, FLEXDOCTOR=str(flexdoctor), FLEXDOCTOR_MODE="healthcheck", FLEXDOCTOR_USER="root")
    assert "no unprivileged user" in done.stderr and not log.exists()


@pytest.mark.skipif(not AS_ROOT or not shutil.which("setpriv"), reason="as root only: a second uid plants the links")
@pytest.mark.parametrize("plant", ["symlink", "fifo"])
def test_node_check_never_writes_through_what_a_user_planted_in_the_report_dir(tmp_path, public, plant):
    """The old script cp'd the report into FLEXDOCTOR_REPORT_DIR/<node>.json as root: a user who
    could write there pointed that name at a root-owned file (overwritten with the report) or
    made it a FIFO (root's cp hung until slurmd killed it)."""
    victim = public / "root-only"
    victim.write_text("secret\n")
    victim.chmod(0o600)
    theirs = public / "reports"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    planted = ["ln", "-s", str(victim), f"{theirs}/gpu017.json"] if plant == "symlink" else ["mkfifo", f"{theirs}/gpu017.json"]
    subprocess.run(AS_NOBODY + planted, check=True)
    fake, log = _fake_scontrol(tmp_path)
    flexdoctor = _fake_flexdoctor(public, 0, [])
    done = _node_check(fake, FLEXDOCTOR=str(flexdoctor), FLEXDOCTOR_MODE="healthcheck", FLEXDOCTOR_REPORT_DIR=str(theirs))
    assert done.returncode == 0 and f"report not kept: {theirs} can be changed by others" in done.stderr
    assert victim.read_text() == "secret\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    ours = public / "ours"
    ours.mkdir()
    _node_check(fake, FLEXDOCTOR=str(flexdoctor), FLEXDOCTOR_MODE="healthcheck", FLEXDOCTOR_REPORT_DIR=str(ours))
    kept = ours / "gpu017.json"
    assert stat.S_ISREG(kept.lstat().st_mode) and json.loads(kept.read_text()) == {"ok": False, "results": []}
    assert os.listdir(ours) == ["gpu017.json"]  # the temporary name was renamed into place


@pytest.mark.skipif(not AS_ROOT or not shutil.which("setpriv"), reason="as root only: a second uid writes the file")
def test_node_check_reads_a_settings_file_only_when_root_alone_can_change_it(tmp_path, public):
    """The settings file is sourced by bash as root: one another user wrote is code they run as root."""
    theirs = public / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    marker = public / "sourced"
    subprocess.run(AS_NOBODY + ["sh", "-c", f"echo 'touch {marker}; FLEXDOCTOR=/bin/false' > {theirs}/defaults"],
                   check=True)
    fake, log = _fake_scontrol(tmp_path)
    done = _node_check(fake, FLEXDOCTOR_DEFAULTS=str(theirs / "defaults"), FLEXDOCTOR_MODE="healthcheck",
                       FLEXDOCTOR=str(_fake_flexdoctor(public, 0, text="{}")))
    assert not marker.exists() and f"settings file {theirs}/defaults ignored" in done.stderr
    ours = public / "defaults"
    ours.write_text(f"FLEXDOCTOR={_fake_flexdoctor(theirs.parent, 0, text='{}')}\nFLEXDOCTOR_USER=nobody\n")
    done = _node_check(fake, FLEXDOCTOR_DEFAULTS=str(ours), FLEXDOCTOR_MODE="healthcheck")
    assert done.returncode == 0 and "ignored" not in done.stderr


def test_fleet_preflight_refuses_a_reports_folder_others_can_write(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    done = subprocess.run(["bash", str(SLURM / "fleet-preflight.sbatch")], capture_output=True, text=True, timeout=60,
                          env={**ENV, "REPORTS": str(shared), "SLURM_JOB_ID": "1", "SLURM_JOB_NODELIST": "n1"})
    assert done.returncode == 2 and "must be a folder you own that no one else can write" in done.stderr
    assert os.listdir(shared) == []


@pytest.mark.parametrize("script", ["flexdoctor-node-check", "fleet-preflight.sbatch"])
def test_slurm_scripts_are_valid_bash(script):
    assert subprocess.run(["bash", "-n", str(SLURM / script)]).returncode == 0
