"""Node reports are data (issue 20 item 4): crafted reports in real files, FIFOs and symlinks.

A node report is written by the node (or by anyone who can write the reports folder). Nothing in
it may become an option, a command, another host in the exclude file, or a reason to read a file
that is not a report. These tests craft the reports an attacker would and run the real merge.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import _fleet_nodes as fn
from flexdoctor.fleet import merge_paths
from flexdoctor.render import fleet_markdown, fleet_text

ROOT = Path(__file__).resolve().parents[1]
# What an exclude file may hold: RFC 1123 labels (Slurm also takes '_'), one name a line.
HOST_LINE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}"
                       r"[A-Za-z0-9])?)*")


@pytest.fixture(scope="module")
def healthy() -> dict:
    return fn.report_for("gpu001", change=fn.two_gpus)


@pytest.fixture(scope="module")
def failing() -> dict:
    return fn.report_for("gpu001", change=fn.both(fn.two_gpus, fn.no_compiler))


def _named(rep: dict, name: str) -> dict:
    """``rep`` claiming to be node ``name`` (hostname and SLURMD_NODENAME)."""
    out = json.loads(json.dumps(rep))
    out["facts"]["host"]["hostname"] = name
    out["facts"]["host"]["scheduler"]["SLURMD_NODENAME"] = name
    return out


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                FLEXDOCTOR_LANG="en", NO_COLOR="1", COLUMNS="200")


def _cli(*args: str, timeout: float = 120, columns: int = 200) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True,
                          timeout=timeout, env=dict(_env(), COLUMNS=str(columns)))


# ------------------------------------------------------------------------- names come from file names

CRAFTED = {
    "gpu004": "gpu004\ngpu001\nlogin01",  # newlines: other hosts into the exclude file
    "gpu005": "--selector=kubernetes.io/os=linux",  # an option: cordon every Linux node
    "gpu006": "gpu006\x1b[2J\x1b[Hall nodes ready",  # a terminal control
    "gpu007": "gpü007",  # not ASCII
    "gpu008": "g" * 300,  # too long for a hostname
    "gpu009": "gpu010",  # a valid name, but another node's: not what the file says
}


def _crafted_dir(tmp_path: Path, healthy: dict, failing: dict) -> Path:
    d = tmp_path / "reports"
    reports = {f"gpu{i:03d}": _named(healthy, f"gpu{i:03d}") for i in (1, 2, 3)}
    for stem, inside in CRAFTED.items():
        reports[stem] = _named(failing, inside)
    fn.write(d, reports)
    return d


def test_a_node_is_named_by_its_file_and_a_bad_name_inside_keeps_it_out(tmp_path, healthy, failing):
    d = _crafted_dir(tmp_path, healthy, failing)
    report = merge_paths([str(d)])
    assert [n.name for n in report.nodes] == ["gpu001", "gpu002", "gpu003"]
    bad = {p.node: p.kind for p in report.problems}
    assert bad == dict.fromkeys(CRAFTED, "bad-name")
    assert report.exclude == tuple(CRAFTED)  # each kept out under its file name, nothing else
    assert report.exit_code == 1
    counts = report.counts()
    assert (counts["nodes"], counts["ok"], counts["problems"]) == (9, 3, 6)


def test_the_exclude_file_holds_only_hostnames(tmp_path, healthy, failing):
    d = _crafted_dir(tmp_path, healthy, failing)
    ex = tmp_path / "exclude.txt"
    done = _cli("fleet", "merge", str(d), "--exclude-file", str(ex))
    assert done.returncode == 1, done.stderr
    lines = ex.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and lines[:-1] == list(CRAFTED)
    for line in lines[:-1]:
        assert HOST_LINE.fullmatch(line) and len(line) <= 253
    assert "login01" not in ex.read_text() and "selector" not in ex.read_text()


def test_a_report_without_a_usable_name_fails_the_merge(tmp_path, healthy):
    """No file name to fall back on (srun's literal %N.json) and a bad name inside: listed, exit 1."""
    d = tmp_path / "r"
    fn.write(d, {"gpu001": _named(healthy, "gpu001")})
    (d / "%N.json").write_text(json.dumps(_named(healthy, "-n1\nrm")), encoding="utf-8")
    report = merge_paths([str(d)])
    (problem,) = report.problems
    assert problem.kind == "bad-name" and problem.node is None
    assert report.exclude == () and report.exit_code == 1 and not report.ok
    # A good name inside with no file name to agree with is used.
    (d / "%N.json").write_text(json.dumps(_named(healthy, "gpu002")), encoding="utf-8")
    report = merge_paths([str(d)])
    assert [n.name for n in report.nodes] == ["gpu001", "gpu002"] and report.ok


def test_a_short_file_name_agrees_with_the_fqdn_inside(tmp_path, healthy):
    d = tmp_path / "r"
    rep = _named(healthy, "gpu001")
    rep["facts"]["host"]["scheduler"] = {}
    rep["facts"]["host"]["hostname"] = "gpu001.cluster.example.org"
    fn.write(d, {"gpu001": rep, "GPU002": _named(healthy, "gpu002")})
    report = merge_paths([str(d)])
    assert [n.name for n in report.nodes] == ["GPU002", "gpu001"] and report.problems == ()


def test_the_printed_cordon_recipe_cordons_only_the_failing_node(tmp_path, healthy, failing):
    """The exclude file and the printed `xargs … kubectl cordon` line, run for real against an API server.

    Before: a report naming itself `--selector=kubernetes.io/os=linux` made the recipe cordon every
    Linux node, and the node that failed was not cordoned."""
    kubectl = shutil.which("kubectl")
    if not kubectl or not shutil.which("xargs"):
        pytest.skip("kubectl (or xargs) is not installed")
    try:
        usable = subprocess.run([kubectl, "version", "--client"], capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        usable = False
    if not usable:
        pytest.skip("kubectl is installed but does not run here")
    d = tmp_path / "reports"
    fn.write(d, {"gpu001": _named(healthy, "gpu001"), "gpu002": _named(healthy, "gpu002"),
                 "gpu003": _named(failing, "--selector=kubernetes.io/os=linux")})
    ex = tmp_path / "exclude.txt"
    done = _cli("fleet", "merge", str(d), "--exclude-file", str(ex), columns=2000)
    assert done.returncode == 1
    recipe = re.search(r"xargs -r -n1 kubectl cordon[^<\n]*< \S+", done.stdout)
    assert recipe, done.stdout
    calls = _kubectl_against_fake_api(tmp_path, recipe.group(0))
    assert not any("labelSelector" in path for _, path in calls)
    assert [c for c in calls if c[0] == "PATCH"] == [("PATCH", "/api/v1/nodes/gpu003")]
    assert recipe.group(0) == f"xargs -r -n1 kubectl cordon -- < {ex}"


def _kubectl_against_fake_api(tmp_path: Path, command: str) -> list:
    """Run ``command`` (a shell line calling kubectl) against a minimal Kubernetes API on 127.0.0.1
    that knows nodes a, b, gpu001-003; returns the requests it saw."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen: list = []

    def node(name: str) -> dict:
        return {"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "resourceVersion": "1"}, "spec": {}}

    class Api(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, doc: dict, code: int = 200) -> None:
            body = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            seen.append(("GET", self.path))
            path = self.path.split("?")[0]
            docs = {"/api": {"kind": "APIVersions", "versions": ["v1"]},
                    "/apis": {"kind": "APIGroupList", "groups": []},
                    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                        {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node",
                         "verbs": ["get", "list", "patch", "update"]}]},
                    "/api/v1/nodes": {"kind": "NodeList", "apiVersion": "v1", "metadata": {},
                                      "items": [node(n) for n in ("a", "b", "gpu001", "gpu002", "gpu003")]}}
            if path in docs:
                return self._send(docs[path])
            if path.startswith("/api/v1/nodes/"):
                return self._send(node(path.rsplit("/", 1)[1]))
            return self._send({"kind": "Status", "status": "Failure", "code": 404}, 404)

        def do_PATCH(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(("PATCH", self.path.split("?")[0]))
            return self._send(node(self.path.split("?")[0].rsplit("/", 1)[1]))

    server = HTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = tmp_path / "kubeconfig"
        config.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{server.server_address[1]}'}}}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n")
        env = dict(os.environ, KUBECONFIG=str(config), HOME=str(tmp_path))
        subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    return seen


def test_expect_names_that_are_no_hostnames_are_a_usage_error(tmp_path, healthy):
    d = fn.write(tmp_path / "r", {"gpu001": _named(healthy, "gpu001")})
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("gpu001\n--selector=x\n")
    done = _cli("fleet", "merge", str(d), "--expect", str(hosts))
    assert done.returncode == 2 and "--expect" in done.stderr + done.stdout


# ------------------------------------------------------------------------- readiness from the results


def test_ok_true_over_failing_results_is_not_ready(tmp_path, failing):
    liar = _named(failing, "gpu002")
    liar["ok"], liar["exit_code"] = True, 0
    liar["summary"] = {"pass": 40, "warn": 0, "fail": 0, "skip": 0, "error": 0, "total": 40}
    fn.write(tmp_path / "r", {"gpu002": liar})
    report = merge_paths([str(tmp_path / "r")])
    (node,) = report.nodes
    assert not node.ok and [f.id for f in node.findings] == ["FD304"]
    assert node.counts["fail"] == 1  # counted from the results, not the summary
    assert report.exclude == ("gpu002",) and report.exit_code == 1


def test_a_report_without_results_or_with_odd_statuses_proves_nothing(tmp_path, healthy):
    empty = _named(healthy, "gpu002")
    empty["results"] = []
    odd = _named(healthy, "gpu003")
    odd["results"][0]["status"] = "PASSED"
    fn.write(tmp_path / "r", {"gpu001": _named(healthy, "gpu001"), "gpu002": empty, "gpu003": odd})
    report = merge_paths([str(tmp_path / "r")])
    assert [n.name for n in report.nodes] == ["gpu001"]
    assert {p.node: p.kind for p in report.problems} == {"gpu002": "unsupported", "gpu003": "unsupported"}
    assert report.exclude == ("gpu002", "gpu003")


# ------------------------------------------------------------------------- links, FIFOs, sizes


def test_a_symlink_to_a_fifo_does_not_hang_the_merge(tmp_path, healthy):
    d = fn.write(tmp_path / "r", {"gpu001": _named(healthy, "gpu001")})
    os.mkfifo(tmp_path / "pipe")
    os.symlink(tmp_path / "pipe", d / "gpu002.json")
    os.mkfifo(d / "gpu003.json")
    try:
        done = _cli("fleet", "merge", str(d), "--format", "json", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("fleet merge hung on a FIFO")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    assert {p["node"]: p["kind"] for p in doc["problems"]} == {"gpu002": "not-regular", "gpu003": "not-regular"}
    assert doc["exclude"] == ["gpu002", "gpu003"]


def test_a_symlink_to_a_secret_is_never_read(tmp_path, healthy):
    secret = tmp_path / "shadow"
    secret.write_text("root:SECRET-HASH-4f1c:19000:0:99999:7:::\n")
    secret.chmod(0o600)
    d = fn.write(tmp_path / "r", {"gpu001": _named(healthy, "gpu001")})
    os.symlink(secret, d / "gpu002.json")
    (d / "gpu003.json").write_text("TOPSECRET-LINE not a report\n")  # a regular file that is no report
    (d / "gpu004.json").write_text("{\"a\": \"TOPSECRET-IN-JSON\"")  # cut JSON
    for fmt in ("text", "json", "markdown", "github"):
        done = _cli("fleet", "merge", str(d), "--format", fmt)
        assert done.returncode == 1, done.stderr
        out = done.stdout + done.stderr
        assert "SECRET" not in out, fmt
    report = merge_paths([str(d)])
    assert {p.node: p.kind for p in report.problems} == {"gpu002": "not-regular", "gpu003": "not-json",
                                                         "gpu004": "truncated"}


def test_a_huge_file_is_not_read(tmp_path, healthy):
    from flexdoctor.fleet.load import MAX_BYTES

    d = fn.write(tmp_path / "r", {"gpu001": _named(healthy, "gpu001")})
    with open(d / "gpu002.json", "wb") as fh:  # sparse: costs no disk
        fh.truncate(MAX_BYTES + 1)
    report = merge_paths([str(d)])
    (p,) = report.problems
    assert (p.node, p.kind) == ("gpu002", "too-large")
    assert report.exclude == ("gpu002",) and report.exit_code == 1


# ------------------------------------------------------------------------- two reports, one host (issue 21)


def test_two_reports_for_one_host_are_one_problem(tmp_path, healthy):
    a = fn.write(tmp_path / "a", {"gpu001": _named(healthy, "gpu001")})
    b = fn.write(tmp_path / "b", {"gpu001": _named(healthy, "gpu001"), "gpu002": _named(healthy, "gpu002")})
    report = merge_paths([str(a), str(b)])
    assert [n.name for n in report.nodes] == ["gpu002"]
    (p,) = report.problems
    assert (p.node, p.kind) == ("gpu001", "duplicate")
    assert report.exclude == ("gpu001",)
    c = report.counts()
    assert (c["nodes"], c["ok"], c["problems"], c["excluded"]) == (2, 1, 1, 1)
    text = fleet_text.render(report, width=200)
    assert "2 nodes: 1 ready" in text
    assert text.count("gpu001") >= 1 and sum("duplicate" in x or "second report" in x for x in text.splitlines()) == 1


def test_the_same_file_named_twice_is_one_report(tmp_path, healthy):
    d = fn.write(tmp_path / "r", {"gpu001": _named(healthy, "gpu001")})
    report = merge_paths([str(d), str(d / "gpu001.json")])
    assert [n.name for n in report.nodes] == ["gpu001"] and report.ok


# ------------------------------------------------------------------------- facts files (README's fleet route)


def test_raw_facts_files_are_judged_like_check_from_facts(tmp_path):
    from flexdoctor.facts import Facts

    d = tmp_path / "r"
    d.mkdir()
    for name, change in (("gpu001", fn.two_gpus), ("gpu002", fn.two_gpus),
                         ("gpu003", fn.both(fn.two_gpus, fn.no_compiler))):
        facts = Facts.load(fn.facts_for(name, change=change)).to_dict()
        (d / f"{name}.json").write_text(json.dumps(facts), encoding="utf-8")
    bad = fn.facts_for("--selector=x", change=fn.two_gpus)
    (d / "gpu004.json").write_text(json.dumps(bad), encoding="utf-8")
    report = merge_paths([str(d)])
    assert [n.name for n in report.nodes] == ["gpu001", "gpu002", "gpu003"]
    assert [n.name for n in report.failing] == ["gpu003"]
    assert [f.id for f in report.failing[0].findings] == ["FD304"]
    assert {p.node: p.kind for p in report.problems} == {"gpu004": "bad-name"}
    assert report.exclude == ("gpu003", "gpu004")


def test_the_readme_fleet_route_with_real_facts(tmp_path):
    """`flexdoctor facts --format json --raw -o DIR/<node>.json` on a node, then `fleet merge DIR`."""
    import socket

    d = tmp_path / "r"
    d.mkdir()
    host = socket.gethostname().split(".")[0]
    done = _cli("facts", "--static", "--format", "json", "--raw", "-o", str(d / f"{host}.json"), timeout=300)
    assert done.returncode == 0, done.stderr
    done = _cli("fleet", "merge", str(d), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    assert [n["node"] for n in doc["nodes"]] == [host] and doc["problems"] == []


# ------------------------------------------------------------------------- plurals (issue 21)


@pytest.mark.parametrize("lang", ["en", "ja", "pt-BR", "hi"])
def test_one_node_is_said_in_the_singular(tmp_path, healthy, lang):
    from flexdoctor import text

    d = fn.write(tmp_path / "r", {"gpu001": _named(healthy, "gpu001")})
    text.set_language(lang)
    try:
        out = fleet_text.render(merge_paths([str(d)]), width=200) + fleet_markdown.render(merge_paths([str(d)]))
        one, many = {"en": ("1 node:", "1 nodes"), "pt-BR": ("1 nó:", "1 nós"), "hi": ("1 node", "1 nodes"),
                     "ja": ("1 ノード", None)}[lang]
        assert one in out and (many is None or many not in out)
        if lang == "en":
            assert "(1 of 1 node:" in out and "All 1 nodes" not in out
    finally:
        text.set_language("en")

