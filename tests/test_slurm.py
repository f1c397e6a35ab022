"""The Slurm recipes against a real single-host Slurm (munged, slurmctld, slurmd as root, all in a
temporary directory). Skips where Slurm is not installed or the test does not run as root.

    apt-get install -y slurm-wlm munge      # Debian 12: Slurm 22.05

What it proves: the documented `srun --output 'DIR/%N.json'` spelling writes one report per node
(flexdoctor's own --output does not expand %N), `fleet merge DIR` reads them, and
contrib/slurm/flexdoctor-node-check drains a node whose static check fails (this machine has no
GPU, so `--profile gpu` fails FD101), with the failing checks as the reason, resumes it when it
passes again, and as a Prolog keeps the job off the node.

And that root does only what needs root (issue 20, items 2 and 3): slurmd runs the script as root,
the script runs flexdoctor as nobody (uid 65534); a real second uid plants a .pth in the training
venv (it runs only as nobody, never as root), links and a FIFO in the report folder (no root-owned
file is truncated or overwritten, nothing hangs); flexdoctor failing to run (exit 2, no private
folder) drains nothing, a real failure drains with the reason.

The check runs as nobody, so the Python running these tests must be one every user can read (not
one under a private /root): they skip otherwise. Recorded run (Debian 12, Slurm 22.05.8, root,
/opt/fd-e2e/bin/python = Debian's python3.11 venv with torch 2.13.0+cpu):
benchmarks/results/slurm-root-guard.txt.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "contrib" / "slurm" / "flexdoctor-node-check"
NEEDED = ("munged", "slurmctld", "slurmd", "srun", "scontrol", "sinfo")

pytestmark = [pytest.mark.slow]
if not all(shutil.which(x) for x in NEEDED):
    pytest.skip("Slurm is not installed (apt-get install slurm-wlm munge)", allow_module_level=True)
if os.geteuid() != 0:
    pytest.skip("a private slurmctld/slurmd runs as root only", allow_module_level=True)
NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
_PROBE = subprocess.run(AS_NOBODY + [sys.executable, "-c", "import flexdoctor, typer"], cwd="/", capture_output=True,
                        env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60) if shutil.which("setpriv") else None
if _PROBE is None or _PROBE.returncode:
    pytest.skip(f"the node check runs flexdoctor as nobody (uid {NOBODY}), who cannot run {sys.executable} here: "
                "run these tests with a Python every user can read", allow_module_level=True)


def _free_ports(n: int) -> list:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


class Cluster:
    def __init__(self, root: Path):
        self.root = root
        self.node = socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf),
                        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.pidfiles = [root / "slurmd.pid", root / "slurmctld.pid", root / "munge" / "pid"]

    def write_conf(self, extra: str = "") -> None:
        ctld, d = self._ports
        r = self.root
        self.conf.write_text(f"""ClusterName=fdtest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={d}
AuthType=auth/munge
AuthInfo=socket={r}/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/slurmctld.log
SlurmdLogFile={r}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName={self.node} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
{extra}""")

    def start(self) -> None:
        r = self.root
        for sub in ("state", "spool", "munge"):
            (r / sub).mkdir(mode=0o700, exist_ok=True)
        key = r / "munge" / "key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self._ports = _free_ports(2)
        self.write_conf()
        self._run(["munged", "--force", f"--socket={r}/munge/sock", f"--key-file={key}",
                   f"--log-file={r}/munge/log", f"--pid-file={r}/munge/pid", f"--seed-file={r}/munge/seed"])
        self._run(["slurmctld", "-f", str(self.conf)])
        self._run(["slurmd", "-f", str(self.conf)])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out = self.sh("sinfo", "-h", "-o", "%t").stdout.strip()
            if out in ("idle", "mix", "alloc"):
                return
            time.sleep(1)
        raise RuntimeError(f"slurmd did not come up: {self.sh('sinfo').stdout}\n"
                           f"{(r / 'slurmd.log').read_text()[-2000:] if (r / 'slurmd.log').exists() else ''}")

    def _run(self, argv: list) -> None:
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {done.stderr[-2000:]}")

    def sh(self, *argv, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(list(argv), env={**self.env, **(env or {})}, capture_output=True, text=True,
                              timeout=timeout)

    def node_line(self) -> str:
        return self.sh("scontrol", "show", "node", self.node, "-o").stdout

    def stop(self) -> None:
        for f in self.pidfiles:  # only the daemons this test started, by their pid files
            pid = _pid(f)
            if pid:
                try:
                    os.kill(pid, 15)
                except ProcessLookupError:
                    pass
        time.sleep(1)
        for f in self.pidfiles:
            pid = _pid(f)
            if pid:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("slurm"))
    try:
        c.start()
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        c.stop()
        pytest.skip(f"could not start a single-host Slurm here: {exc}")
    yield c
    c.stop()


def _log(name: str, done: subprocess.CompletedProcess) -> None:
    print(f"$ {name}\n{done.stdout}{done.stderr}rc={done.returncode}")


def test_srun_writes_one_report_per_node_and_fleet_merge_reads_them(cluster, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    done = cluster.sh("srun", "--nodes=1", "--ntasks-per-node=1", f"--output={reports}/%N.json",
                      f"--error={reports}/%N.err", sys.executable, "-m", "flexdoctor", "check", "--static",
                      "--format", "json")
    _log("srun ... --output=DIR/%N.json flexdoctor check --static --format json", done)
    assert done.returncode == 0
    report = json.loads((reports / f"{cluster.node}.json").read_text())
    assert report["facts"]["host"]["scheduler"]["SLURMD_NODENAME"] == cluster.node
    merged = cluster.sh(sys.executable, "-m", "flexdoctor", "fleet", "merge", str(reports), "--format", "json",
                        "--exclude-file", str(tmp_path / "exclude.txt"))
    doc = json.loads(merged.stdout)
    assert [n["node"] for n in doc["nodes"]] == [cluster.node]
    assert "exclude.txt" in os.listdir(tmp_path)


def test_flexdoctors_own_output_does_not_expand_percent_n(cluster, tmp_path):
    done = cluster.sh("srun", "--nodes=1", sys.executable, "-m", "flexdoctor", "check", "--static", "--format",
                      "json", "--output", f"{tmp_path}/%N.json")
    assert done.returncode == 0
    assert os.listdir(tmp_path) == ["%N.json"]  # srun expands %N only in its own --output
    done = cluster.sh("srun", "--nodes=1", "bash", "-c", f'exec "{sys.executable}" -m flexdoctor check --static '
                      f'--format json --output "{tmp_path}/${{SLURMD_NODENAME}}.json"')
    assert done.returncode == 0 and f"{cluster.node}.json" in os.listdir(tmp_path)


def test_health_check_drains_with_the_reason_and_resumes(cluster):
    env = {"FLEXDOCTOR": f"{sys.executable} -m flexdoctor", "FLEXDOCTOR_MODE": "healthcheck"}
    done = cluster.sh(str(SCRIPT), env=env)  # --profile gpu on a machine without a GPU: FD101 fails
    _log("flexdoctor-node-check (healthcheck, --profile gpu, no GPU here)", done)
    assert done.returncode == 0
    line = cluster.node_line()
    print(line)
    assert "DRAIN" in line and "Reason=flexdoctor: FD101 gpu-present" in line
    done = cluster.sh(str(SCRIPT), env={**env, "FLEXDOCTOR_ARGS": "--static --profile default --skip FD5"})
    _log("flexdoctor-node-check (healthcheck, passing)", done)
    line = cluster.node_line()
    print(line)
    assert "DRAIN" not in line and "flexdoctor" not in line


def test_a_drain_by_someone_else_is_left_alone(cluster):
    cluster.sh("scontrol", "update", f"nodename={cluster.node}", "state=drain", "reason=admin: new PSU")
    try:
        env = {"FLEXDOCTOR": f"{sys.executable} -m flexdoctor", "FLEXDOCTOR_MODE": "healthcheck",
               "FLEXDOCTOR_ARGS": "--static --profile default --skip FD5"}
        cluster.sh(str(SCRIPT), env=env)
        assert "Reason=admin: new PSU" in cluster.node_line()
    finally:
        cluster.sh("scontrol", "update", f"nodename={cluster.node}", "state=resume")


def test_flexdoctor_missing_drains_nothing(cluster):
    done = cluster.sh(str(SCRIPT), env={"FLEXDOCTOR": "/nonexistent/flexdoctor", "FLEXDOCTOR_MODE": "healthcheck"})
    assert done.returncode == 0 and "could not run" in done.stderr
    assert "DRAIN" not in cluster.node_line()


def test_prolog_keeps_the_job_off_a_failing_node(cluster, tmp_path):
    wrapper = tmp_path / "prolog"
    wrapper.write_text(f"""#!/bin/bash
export PYTHONPATH={ROOT} FLEXDOCTOR="{sys.executable} -m flexdoctor"
exec {SCRIPT}
""")
    wrapper.chmod(0o755)
    cluster.write_conf(f"Prolog={wrapper}\nPrologEpilogTimeout=60\nPrologFlags=Alloc\n")
    try:
        assert cluster.sh("scontrol", "reconfigure").returncode == 0
        time.sleep(2)
        done = cluster.sh("srun", "--nodes=1", "hostname", timeout=90)
        _log("srun hostname (Prolog=flexdoctor-node-check, --profile gpu, no GPU here)", done)
        assert done.returncode != 0
        line = cluster.node_line()
        print(line)
        assert "DRAIN" in line and "Reason=flexdoctor: FD101 gpu-present" in line
    finally:
        cluster.write_conf()
        cluster.sh("scontrol", "reconfigure")
        cluster.sh("scontrol", "update", f"nodename={cluster.node}", "state=resume")


def test_preflight_batch_script(cluster, tmp_path):
    """contrib/slurm/fleet-preflight.sbatch end to end: per-node reports, merge, exclude list."""
    script = ROOT / "contrib" / "slurm" / "fleet-preflight.sbatch"
    common = {"FLEXDOCTOR": f"{sys.executable} -m flexdoctor", "REPORTS": str(tmp_path / "good")}
    exports = "ALL," + ",".join(f"{k}={v}" for k, v in common.items())
    ok = cluster.sh("sbatch", "--wait", "--nodes=1", f"--output={tmp_path}/good.out", f"--chdir={tmp_path}",
                    f"--export={exports},FLEXDOCTOR_CHECK_ARGS=--static --profile default", str(script),
                    timeout=180)
    print((tmp_path / "good.out").read_text())
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "good" / f"{cluster.node}.json").is_file()
    assert (tmp_path / "good" / "exclude.txt").read_text() == ""
    bad = cluster.sh("sbatch", "--wait", "--nodes=1", f"--output={tmp_path}/bad.out", f"--chdir={tmp_path}",
                     f"--export=ALL,FLEXDOCTOR={common['FLEXDOCTOR']},REPORTS={tmp_path}/bad,"
                     "FLEXDOCTOR_CHECK_ARGS=--static", str(script), timeout=180)
    out = (tmp_path / "bad.out").read_text()
    print(out)
    assert bad.returncode != 0  # --profile gpu on a machine without a GPU
    assert (tmp_path / "bad" / "exclude.txt").read_text() == f"{cluster.node}\n"
    assert f"keep out: {cluster.node}" in out


# ------------------------------------------------------------------------ root does only scontrol


@pytest.fixture
def public():
    """A folder root owns that every user can read (uid 65534 reaches what we hand it)."""
    path = Path(tempfile.mkdtemp(prefix="fd-slurm-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _drained(cluster) -> bool:
    return "DRAIN" in cluster.node_line()


def _resume(cluster) -> None:
    cluster.sh("scontrol", "update", f"nodename={cluster.node}", "state=resume")


def test_health_check_runs_flexdoctor_as_nobody_and_a_real_failure_drains(cluster, public):
    seen = public / "uids"
    seen.mkdir(mode=0o777)
    seen.chmod(0o777)
    wrapper = public / "flexdoctor"
    wrapper.write_text(f'#!/bin/sh\nid -u >> {seen}/uid\nexec "{sys.executable}" -m flexdoctor "$@"\n')
    wrapper.chmod(0o755)
    try:
        done = cluster.sh(str(SCRIPT), env={"FLEXDOCTOR": str(wrapper), "FLEXDOCTOR_MODE": "healthcheck"})
        _log("flexdoctor-node-check as root (--profile gpu, no GPU here)", done)
        assert (seen / "uid").read_text() == f"{NOBODY}\n"
        line = cluster.node_line()
        print(line)
        assert "DRAIN" in line and "Reason=flexdoctor: FD101 gpu-present" in line
    finally:
        _resume(cluster)


def test_a_pth_planted_in_the_training_venv_never_runs_as_root(cluster, public):
    venv = public / "train"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    os.chown(site, NOBODY, NOBODY)
    seen = public / "uids"
    seen.mkdir(mode=0o777)
    seen.chmod(0o777)
    line = f"import os; open({str(seen / 'uid')!r}, 'a').write('%d\\n' % os.geteuid())"
    subprocess.run(AS_NOBODY + ["sh", "-c", f"printf '%s\\n' \"$0\" > {site}/zz-planted.pth", line], check=True)
    # (a venv of a venv has no torch: judge only what passes without it)
    env = {"FLEXDOCTOR": f"{sys.executable} -m flexdoctor", "FLEXDOCTOR_MODE": "healthcheck",
           "FLEXDOCTOR_PYTHON": str(venv / "bin" / "python"), "FLEXDOCTOR_ARGS": "--static --profile default --only FD101"}
    try:
        done = cluster.sh(str(SCRIPT), env=env)
        _log("flexdoctor-node-check as root, FLEXDOCTOR_PYTHON = a venv uid 65534 can write", done)
        uids = (seen / "uid").read_text().split()
        print("the planted .pth ran as uid:", uids)
        assert uids and set(uids) == {str(NOBODY)}  # it ran, as nobody: never as root
        assert not _drained(cluster)
    finally:
        _resume(cluster)


def test_flexdoctor_not_running_never_drains(cluster, public):
    _resume(cluster)
    for env, why in (({"FLEXDOCTOR_ARGS": "--no-such-option"}, "exit 2"),
                     ({"TMPDIR": str(public / "gone")}, "no private temporary folder"),
                     ({"FLEXDOCTOR": "/nonexistent/flexdoctor"}, "exit 127"),
                     ({"FLEXDOCTOR_USER": "job", "SLURM_JOB_USER": "root"}, "no unprivileged user")):
        done = cluster.sh(str(SCRIPT), env={"FLEXDOCTOR": f"{sys.executable} -m flexdoctor",
                                            "FLEXDOCTOR_MODE": "healthcheck", **env})
        _log(f"flexdoctor-node-check ({why})", done)
        assert done.returncode == 0 and why in done.stderr and "node left as it is" in done.stderr
        assert not _drained(cluster), cluster.node_line()


def test_links_and_fifos_in_a_users_report_folder_touch_no_root_file(cluster, public):
    victim = public / "root-only"
    victim.write_text("secret\n")
    victim.chmod(0o600)
    theirs = public / "reports"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    subprocess.run(AS_NOBODY + ["ln", "-s", str(victim), f"{theirs}/{cluster.node}.json"], check=True)
    subprocess.run(AS_NOBODY + ["mkfifo", f"{theirs}/.{cluster.node}.json.fifo"], check=True)
    env = {"FLEXDOCTOR": f"{sys.executable} -m flexdoctor", "FLEXDOCTOR_MODE": "healthcheck",
           "FLEXDOCTOR_ARGS": "--static --profile default --skip FD5", "FLEXDOCTOR_REPORT_DIR": str(theirs)}
    t0 = time.monotonic()
    done = cluster.sh(str(SCRIPT), env=env, timeout=60)
    _log("flexdoctor-node-check, FLEXDOCTOR_REPORT_DIR owned by uid 65534 with a planted link", done)
    assert time.monotonic() - t0 < 55 and "report not kept" in done.stderr
    assert victim.read_text() == "secret\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert os.readlink(theirs / f"{cluster.node}.json") == str(victim)
    ours = public / "ours"
    ours.mkdir()
    cluster.sh(str(SCRIPT), env={**env, "FLEXDOCTOR_REPORT_DIR": str(ours)})
    report = json.loads((ours / f"{cluster.node}.json").read_text())
    assert report["facts"]["host"]["scheduler"].get("SLURMD_NODENAME", cluster.node) == cluster.node


def test_prolog_as_root_runs_the_check_as_nobody(cluster, public):
    seen = public / "uids"
    seen.mkdir(mode=0o777)
    seen.chmod(0o777)
    wrapper = public / "flexdoctor"
    wrapper.write_text(f'#!/bin/sh\nid -u >> {seen}/uid\nexec "{sys.executable}" -m flexdoctor "$@"\n')
    wrapper.chmod(0o755)
    prolog = public / "prolog"
    prolog.write_text(f"""#!/bin/bash
export PYTHONPATH={ROOT} FLEXDOCTOR={wrapper} FLEXDOCTOR_ARGS="--static --profile default --skip FD5"
exec {SCRIPT}
""")
    prolog.chmod(0o755)
    cluster.write_conf(f"Prolog={prolog}\nPrologEpilogTimeout=60\nPrologFlags=Alloc\n")
    try:
        assert cluster.sh("scontrol", "reconfigure").returncode == 0
        time.sleep(2)
        done = cluster.sh("srun", "--nodes=1", "hostname", timeout=90)
        _log("srun hostname (Prolog=flexdoctor-node-check, passing)", done)
        assert done.returncode == 0 and cluster.node in done.stdout
        assert (seen / "uid").read_text().split() == [str(NOBODY)]
    finally:
        cluster.write_conf()
        cluster.sh("scontrol", "reconfigure")
        _resume(cluster)
