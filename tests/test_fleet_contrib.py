"""contrib/: the Kubernetes manifests validate, the node-problem-detector plugin keeps NPD's protocol,
and the Slurm node check drains, resumes and leaves alone as it says (scontrol replaced by a
recorder; tests/test_slurm.py runs it against a real Slurm)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "contrib" / "k8s"
SLURM = ROOT / "contrib" / "slurm"
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           FLEXDOCTOR=f"{sys.executable} -m flexdoctor")


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
    assert "flexdoctor check --profile gpu --format json --output /tmp/report.json" in script


def test_the_job_script_prints_a_report_fleet_merge_reads(tmp_path):
    """The container's script, run here with this flexdoctor: its stdout is a node report."""
    (job,) = _docs(K8S / "flexdoctor-fleet-job.yaml")
    script = job["spec"]["template"]["spec"]["containers"][0]["args"][0]
    script = script.replace("flexdoctor check", f"{sys.executable} -m flexdoctor check --static")
    script = script.replace("/tmp/", f"{tmp_path}/")
    done = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**ENV, "FLEXDOCTOR_NODE_NAME": "gpu-node-7"})
    assert done.returncode == 0
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


def test_npd_plugin_exit_codes():
    # This machine has no GPU: under --profile gpu FD101 fails -> NonOK, the failing check as message.
    bad = _npd()
    assert bad.returncode == 1 and bad.stdout.startswith("flexdoctor: FD101 gpu-present")
    good = _npd(FLEXDOCTOR_ARGS="--static --profile default --skip FD5")
    assert good.returncode == 0 and good.stdout.strip() == "flexdoctor check passes"
    unknown = _npd(FLEXDOCTOR="/nonexistent/flexdoctor")
    assert unknown.returncode == 2 and "could not run" in unknown.stdout


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


def test_node_check_drains_with_the_failing_checks(tmp_path):
    fake, log = _fake_scontrol(tmp_path)
    done = _node_check(fake, FLEXDOCTOR_MODE="healthcheck")
    assert done.returncode == 0
    assert log.read_text().splitlines() == [
        "update nodename=gpu017 state=drain reason=flexdoctor: FD101 gpu-present (run: flexdoctor check)"]


def test_node_check_as_prolog_fails_so_the_job_is_requeued(tmp_path):
    fake, log = _fake_scontrol(tmp_path)
    done = _node_check(fake, SLURM_JOB_ID="123")
    assert done.returncode == 1 and "state=drain" in log.read_text()


def test_node_check_resumes_only_its_own_drains(tmp_path):
    passing = {"FLEXDOCTOR_MODE": "healthcheck", "FLEXDOCTOR_ARGS": "--static --profile default --skip FD5"}
    fake, log = _fake_scontrol(tmp_path, reason="flexdoctor: FD101 gpu-present [root@2026-11-23T11:19:36]")
    _node_check(fake, **passing)
    assert log.read_text().splitlines()[-1] == "update nodename=gpu017 state=resume"
    other = tmp_path / "other"
    other.mkdir()
    fake, log = _fake_scontrol(other, reason="admin: new PSU")
    _node_check(fake, **passing)
    assert "resume" not in log.read_text()


def test_node_check_never_drains_when_flexdoctor_cannot_run(tmp_path):
    fake, log = _fake_scontrol(tmp_path)
    done = _node_check(fake, FLEXDOCTOR="/nonexistent/flexdoctor", FLEXDOCTOR_MODE="healthcheck")
    assert done.returncode == 0 and "could not run" in done.stderr
    assert not log.exists() or "drain" not in log.read_text()


def test_node_check_time_box_drains_a_hung_check(tmp_path):
    fake, log = _fake_scontrol(tmp_path)
    hang = tmp_path / "hang"
    hang.write_text("#!/bin/bash\nsleep 60\n")
    hang.chmod(0o755)
    done = _node_check(fake, FLEXDOCTOR=str(hang), FLEXDOCTOR_TIMEOUT="2", FLEXDOCTOR_MODE="healthcheck")
    assert done.returncode == 0
    assert "did not finish in 2 s" in log.read_text()


@pytest.mark.parametrize("script", ["flexdoctor-node-check", "fleet-preflight.sbatch"])
def test_slurm_scripts_are_valid_bash(script):
    assert subprocess.run(["bash", "-n", str(SLURM / script)]).returncode == 0
