"""fleet merge: node reports (the real H100 recording, drifted the way fleets drift) -> one report."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import _fleet_nodes as fn
from flexdoctor.fleet import merge_paths
from flexdoctor.fleet.hostlist import compress, expand
from flexdoctor.fleet.load import read_reports
from flexdoctor.fleet.merge import IgnoreError, merge, parse_ignore
from flexdoctor.fleet.stack import node_from_report, partial_facts, reported_name
from flexdoctor.render import fleet_github, fleet_json, fleet_markdown, fleet_text

SCHEMA = json.loads((Path(__file__).parent.parent / "flexdoctor" / "schema" / "fleet.schema.json").read_text())


@pytest.fixture(scope="module")
def healthy() -> dict:
    return fn.report_for("gpu001", change=fn.two_gpus)


def _fleet(tmp_path: Path, healthy: dict, n: int = 4, **odd) -> Path:
    """n healthy nodes gpu001..; odd={"gpu007": change} adds drifted ones."""
    reports = {}
    for i in range(1, n + 1):
        rep = json.loads(json.dumps(healthy))
        name = f"gpu{i:03d}"
        rep["facts"]["host"]["hostname"] = name
        rep["facts"]["host"]["scheduler"]["SLURMD_NODENAME"] = name
        reports[name] = rep
    for name, change in odd.items():
        reports[name] = fn.report_for(name, change=change)
    return fn.write(tmp_path / "reports", reports)


def _validate(report) -> dict:
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(fleet_json.render(report))
    jsonschema.validate(doc, SCHEMA)
    return doc


# ------------------------------------------------------------------------- the stack of one node


def test_stack_of_the_real_h100_recording(healthy):
    node = node_from_report(healthy, "gpu001")
    assert node.name == "gpu001" and node.ok
    assert node.stack == {
        "gpu": "NVIDIA H100 80GB HBM3", "gpu_count": "2", "capability": "9.0", "driver": "580.159.04",
        "cuda": "13.0", "torch": "2.11.0", "torch_build": "70d99e998b49", "triton": "3.6.0", "python": "3.12.3",
        "cache": node.stack["cache"],
    }
    # The recording was taken right after a real warm-cache: two configs for this environment.
    assert node.stack["cache"].startswith("warm ") and node.stack["cache"].endswith("(2 configs)")


@pytest.mark.parametrize("name", [p.stem for p in sorted(fn.Path(__file__).parent.joinpath("fixtures", "facts")
                                                             .glob("*.json"))])
def test_cache_fingerprint_is_the_one_fd505_uses(name):
    """The fleet rebuilds only some sections; the fingerprint must equal check's (FD505)."""
    from conftest import load_facts, load_facts_dict
    from flexdoctor.checks.cache import current_fingerprint

    assert current_fingerprint(partial_facts(load_facts_dict(name))) == current_fingerprint(load_facts(name))


def test_the_name_a_report_gives_prefers_the_scheduler_then_the_hostname(healthy):
    """The name inside a report (used only when it agrees with the file name: test_fleet_safety)."""
    rep = json.loads(json.dumps(healthy))
    rep["facts"]["host"]["scheduler"] = {"FLEXDOCTOR_NODE_NAME": "ip-10-0-0-7", "SLURMD_NODENAME": "x"}
    rep["facts"]["host"]["hostname"] = "trainer-0-abcde"  # a pod's hostname is not its node's name
    assert reported_name(partial_facts(rep["facts"])) == "ip-10-0-0-7"
    rep["facts"]["host"]["scheduler"] = {}
    assert reported_name(partial_facts(rep["facts"])) == "trainer-0-abcde"


# ------------------------------------------------------------------------- merging


def test_identical_nodes_pass(tmp_path, healthy):
    report = merge_paths([str(_fleet(tmp_path, healthy, n=5))])
    assert report.ok and report.exit_code == 0
    assert len(report.groups) == 1 and report.majority_group.nodes == tuple(f"gpu{i:03d}" for i in range(1, 6))
    assert report.outliers == () and report.exclude == ()
    doc = _validate(report)
    assert doc["counts"]["ok"] == 5 and doc["majority"]["tie"] is False


def test_driver_drift_names_the_node_and_the_difference(tmp_path, healthy):
    d = _fleet(tmp_path, healthy, n=4, gpu005=fn.both(fn.two_gpus, fn.driver("580.126.09")))
    report = merge_paths([str(d)])
    assert report.exit_code == 1
    (out,) = report.outliers
    assert out.node == "gpu005"
    assert [(x.field, x.expected, x.actual) for x in out.differences] == [("driver", "580.159.04", "580.126.09")]
    assert report.exclude == ("gpu005",)
    text = fleet_text.render(report, width=120)
    assert "gpu005: driver 580.126.09 (majority 580.159.04)" in text


def test_a_gpu_off_the_bus_and_a_cold_cache_are_drift(tmp_path, healthy):
    d = _fleet(tmp_path, healthy, n=3, gpu004=lambda x: None, gpu005=fn.both(fn.two_gpus, fn.cold_cache))
    report = merge_paths([str(d)])
    diffs = {o.node: {x.field: x.actual for x in o.differences} for o in report.outliers}
    assert diffs["gpu004"] == {"gpu_count": "1"}
    assert diffs["gpu005"] == {"cache": "cold"}
    assert report.exclude == ("gpu004", "gpu005")


def test_ignore_python_patch_and_cache(tmp_path, healthy):
    d = _fleet(tmp_path, healthy, n=3, gpu004=fn.both(fn.two_gpus, fn.python_patch("3.12.11")),
               gpu005=fn.both(fn.two_gpus, fn.cold_cache))
    assert merge_paths([str(d)]).exit_code == 1
    loose = merge_paths([str(d)], ignore=["python.patch", "cache"])
    assert loose.ok and loose.exit_code == 0 and len(loose.groups) == 1
    assert loose.ignored == ("python.patch", "cache") and "cache" not in loose.fields
    # A minor version is still drift under .patch.
    d2 = _fleet(tmp_path / "b", healthy, n=3, gpu004=fn.both(fn.two_gpus, fn.python_patch("3.11.9")))
    (out,) = merge_paths([str(d2)], ignore=["python.patch"]).outliers
    assert [(x.field, x.expected, x.actual) for x in out.differences] == [("python", "3.12", "3.11")]


def test_parse_ignore_rejects_unknown_fields():
    assert parse_ignore(["Python.patch", "driver.minor", "driver.patch"]) == {"python": "patch", "driver": "minor"}
    assert parse_ignore(["python", "python.patch"]) == {"python": None}  # the whole field wins
    for bad in ("pyton", "python.major", "gpu_count.patch"):
        with pytest.raises(IgnoreError):
            parse_ignore([bad])


def test_failing_node_with_its_findings_and_fix(tmp_path, healthy):
    d = _fleet(tmp_path, healthy, n=3, gpu004=fn.both(fn.two_gpus, fn.no_compiler))
    report = merge_paths([str(d)])
    (bad,) = report.failing
    assert bad.name == "gpu004" and report.outliers == ()  # same stack, but it fails
    assert [f.id for f in bad.findings] == ["FD304"]
    assert bad.findings[0].fix_commands  # the real fix commands travel with it
    assert report.exclude == ("gpu004",) and report.exit_code == 1
    doc = _validate(report)
    assert doc["failing"][0]["findings"][0]["symbol"] == "c-compiler"
    md = fleet_markdown.render(report)
    assert "FD304 c-compiler" in md and "```bash" in md


def test_strict_node_reports_fail_on_their_warnings(tmp_path, healthy):
    strict = fn.report_for("gpu009", change=fn.two_gpus, strict=True)
    assert strict["ok"] is (strict["summary"]["warn"] == 0)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "gpu009.json").write_text(json.dumps(strict))
    report = merge_paths([str(tmp_path / "r")])
    if strict["summary"]["warn"]:
        assert [f.status for f in report.failing[0].findings] == ["warn"] * strict["summary"]["warn"]


def test_bad_files_are_named_and_never_stop_the_merge(tmp_path, healthy):
    d = _fleet(tmp_path, healthy, n=2)
    (d / "gpu003.json").write_text("")  # the node wrote nothing
    (d / "gpu004.json").write_text(json.dumps(healthy)[:5000])  # killed while writing
    (d / "gpu005.json").write_text("srun: error: gpu005: task 0: Exited with exit code 1\n")
    (d / "gpu006.json").write_text(json.dumps({**healthy, "schema_version": 99}))
    (d / "gpu007.json").write_bytes(b"\xff\xfe\x00binary")
    (d / "notes.json").write_text("[1, 2, 3]")
    (d / "fleet.json").write_text(json.dumps({"kind": "flexdoctor-fleet", "schema_version": 1}))
    (d / "gpu010.json").write_text(json.dumps(fn.facts_for("gpu010", change=fn.two_gpus)))  # raw facts: judged
    (d / ".gpu008.json.123.tmp").write_text("{")  # an interrupted atomic write: not read at all
    dup = json.loads(json.dumps(healthy))
    dup["facts"]["host"]["scheduler"]["SLURMD_NODENAME"] = "gpu002"
    (d / "zz-copy.json").write_text(json.dumps(dup))  # gpu002's report under another name: which is true?
    report = merge_paths([str(d), str(tmp_path / "gone" / "gpu011.json")], expect=["gpu001", "gpu012"])
    kinds = {Path(p.path).name: p.kind for p in report.problems}
    assert kinds == {"gpu003.json": "empty", "gpu004.json": "truncated", "gpu005.json": "not-json",
                     "gpu006.json": "unsupported", "gpu007.json": "not-json", "notes.json": "foreign",
                     "fleet.json": "foreign", "zz-copy.json": "bad-name", "gpu011.json": "missing",
                     "gpu012": "no-report"}
    assert [n.name for n in report.nodes] == ["gpu001", "gpu002", "gpu010"]
    # Nodes without a usable report are kept out, under their file names; foreign files are only listed.
    assert report.exclude == ("gpu003", "gpu004", "gpu005", "gpu006", "gpu007", "gpu011", "gpu012", "zz-copy")
    assert report.exit_code == 1
    doc = _validate(report)
    assert doc["counts"]["foreign"] == 2
    text = fleet_text.render(report, width=200)
    for name in kinds:
        assert name in text


def test_nothing_to_merge(tmp_path):
    (tmp_path / "empty").mkdir()
    report = merge_paths([str(tmp_path / "empty")])
    assert report.nodes == () and report.majority is None and report.ok
    assert "no node report" in fleet_text.render(report)
    _validate(report)


def test_a_tie_is_said(tmp_path, healthy):
    d = _fleet(tmp_path, healthy, n=1, gpu002=fn.both(fn.two_gpus, fn.driver("575.57.08", "12.9")))
    report = merge_paths([str(d)])
    assert report.tie and "no majority" in fleet_text.render(report)


def test_github_annotations_and_step_summary(tmp_path, healthy):
    d = _fleet(tmp_path, healthy, n=3, gpu004=fn.both(fn.two_gpus, fn.driver("580.126.09")),
               gpu005=fn.both(fn.two_gpus, fn.no_compiler))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    out = fleet_github.render(merge_paths([str(d)]), step_summary=str(summary))
    lines = out.splitlines()
    assert any(x.startswith("::error title=flexdoctor fleet%3A gpu004::driver 580.126.09") for x in lines)
    assert any(x.startswith("::error title=flexdoctor fleet%3A gpu005::FD304 c-compiler") for x in lines)
    assert summary.read_text().startswith("earlier step\n## flexdoctor fleet")


def test_many_nodes_with_the_same_problem_show_once(tmp_path, healthy):
    odd = {f"gpu{i:03d}": fn.both(fn.two_gpus, fn.driver("580.126.09")) for i in range(10, 14)}
    report = merge_paths([str(_fleet(tmp_path, healthy, n=6, **odd))])
    text = fleet_text.render(report, width=200)
    assert "gpu[010-013]: driver 580.126.09 (majority 580.159.04)" in text
    assert len(report.outliers) == 4


# ------------------------------------------------------------------------- host lists


@pytest.mark.parametrize("names,expected", [
    (["gpu001", "gpu002", "gpu003", "gpu005"], "gpu[001-003,005]"),
    (["n9", "n10", "n11"], "n[9-11]"),
    (["gpu099", "gpu100"], "gpu[099-100]"),
    (["login", "a1", "b-7"], "a1,b-7,login"),
    (["r1n01", "r1n02", "r2n01"], "r1n[01-02],r2n01"),
])
def test_hostlist_compress(names, expected):
    assert compress(names) == expected
    assert sorted(expand(expected)) == sorted(names)


def test_hostlist_round_trip_at_scale():
    names = [f"node{i:04d}" for i in range(2000) if i % 7]
    assert sorted(expand(compress(names))) == sorted(names)


def test_slurm_expands_our_hostlists_the_same_way(tmp_path):
    """scontrol is the reference for host lists (skips where Slurm is not installed)."""
    import shutil
    import subprocess

    if not shutil.which("scontrol"):
        pytest.skip("Slurm (scontrol) is not installed")
    conf = tmp_path / "slurm.conf"  # `show hostnames` needs a configuration, not a running cluster
    conf.write_text("ClusterName=t\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1 State=UNKNOWN\n"
                    "PartitionName=p Nodes=localhost Default=YES\n")
    names = ["gpu001", "gpu002", "gpu003", "gpu005", "gpu099", "gpu100", "n9", "n10", "login"]
    done = subprocess.run(["scontrol", "show", "hostnames", compress(names)], capture_output=True, text=True,
                          timeout=30, env={**os.environ, "SLURM_CONF": str(conf)})
    if done.returncode != 0:
        pytest.skip(f"scontrol did not run here: {done.stderr.strip()[:200]}")
    assert sorted(done.stdout.split()) == sorted(names)


# ------------------------------------------------------------------------- reading scales


def test_read_reports_from_files_and_dirs(tmp_path, healthy):
    d = _fleet(tmp_path, healthy, n=3)
    nodes, problems = read_reports([str(d / "gpu001.json"), str(d / "gpu002.json")])
    assert [n.name for n in nodes] == ["gpu001", "gpu002"] and problems == []
    nodes, _ = read_reports([str(d)])
    assert len(nodes) == 3
    if os.geteuid() != 0:  # root reads everything
        (d / "gpu003.json").chmod(0)
        _, problems = read_reports([str(d)])
        assert [p.kind for p in problems] == ["unreadable"]


def test_merge_of_in_memory_nodes_is_pure(healthy):
    a = node_from_report(healthy, "gpu001")
    report = merge([a])
    assert report.ok and report.counts()["nodes"] == 1


# ------------------------------------------------------------------------- the warmed cache bundle


def _bundle(tmp_path: Path, fingerprint: dict, configs: list) -> Path:
    """A real bundle, written by warm-cache's own writer (the blobs' content is not read here)."""
    from flexdoctor.cache import warm
    from flexdoctor.cache.fingerprint import Fingerprint

    export = tmp_path / "export"
    export.mkdir()
    outcomes = []
    for i, cfg in enumerate(configs):
        (export / f"{i:03d}.bin").write_bytes(b"mega-cache artifacts")
        outcomes.append(warm.Outcome(workload=cfg, state="done"))
    dest = tmp_path / "cache.zip"
    warm.write_bundle(str(dest), str(export), outcomes, Fingerprint.from_dict(fingerprint), "test")
    return dest


def _newer_torch(d):
    d["torch"]["version"] = "2.12.0"
    d["torch"]["git_version"] = "1" * 40
    d["torch_runtime"]["version"] = "2.12.0+cu130"


def test_bundle_says_which_nodes_need_it_and_how_to_ship_it(tmp_path, healthy):
    from flexdoctor import workload

    h100 = fn.load_facts_dict("h100")
    configs = [workload.make(dtype="bfloat16", heads=24, seq_len=4096, head_dim=128, mask="none"),
               workload.make(dtype="bfloat16", heads=32, kv_heads=8, seq_len=4096, head_dim=128, mask="causal")]
    bundle = _bundle(tmp_path, h100["cache"]["manifest"]["fingerprint"], configs)
    d = _fleet(tmp_path, healthy, n=2, gpu003=fn.both(fn.two_gpus, fn.cold_cache),
               gpu004=fn.both(fn.two_gpus, fn.cold_cache), gpu005=fn.both(fn.two_gpus, _newer_torch))
    report = merge_paths([str(d)], bundle=str(bundle))
    b = report.bundle
    assert b.having("warm") == ["gpu001", "gpu002"]  # the recording's cache already holds both configs
    assert b.having("import") == ["gpu003", "gpu004"]
    assert b.having("incompatible") == ["gpu005"]
    (bad,) = [s for s in b.nodes if s.state == "incompatible"]
    assert ("torch", "2.11.0+cu130", "2.12.0+cu130") in bad.differences
    pin = hashlib.sha256(bundle.read_bytes()).hexdigest()  # the printed command loads only this content
    assert b.ship == (f"srun --nodelist='gpu[003-004]' --nodes=2 --ntasks-per-node=1 flexdoctor warm-cache "
                      f"--import {bundle} --sha256 {pin} --cache-dir /tmp/fdw",)
    doc = _validate(report)
    assert doc["bundle"]["nodes"]["import"] == ["gpu003", "gpu004"]
    text = fleet_text.render(report, width=240)
    assert "need the bundle: 2 nodes: gpu[003-004]" in text and "$ srun --nodelist=" in text


def test_bundle_outside_slurm_prints_the_plain_command(tmp_path):
    from flexdoctor import workload

    h100 = fn.load_facts_dict("h100")
    bundle = _bundle(tmp_path, h100["cache"]["manifest"]["fingerprint"],
                     [workload.make(dtype="float16", heads=8, seq_len=1024, head_dim=64)])
    rep = fn.report_for("pod-1", slurm=False)
    fn.write(tmp_path / "r", {"pod-1": rep})
    report = merge_paths([str(tmp_path / "r")], bundle=str(bundle))
    assert report.bundle.having("import") == ["pod-1"]  # warm, but not with this config
    pin = hashlib.sha256(bundle.read_bytes()).hexdigest()
    assert report.bundle.ship == (f"flexdoctor warm-cache --import {bundle} --sha256 {pin} --cache-dir /tmp/fdw",)


def test_a_file_that_is_no_bundle_is_a_clear_error(tmp_path):
    from flexdoctor.fleet.bundle import BundleError, read

    (tmp_path / "x.zip").write_text("not a zip")
    with pytest.raises(BundleError, match=r"^--bundle .*x.zip: not a flexdoctor cache bundle"):
        read(str(tmp_path / "x.zip"))
    with pytest.raises(BundleError, match="no such file"):
        read(str(tmp_path / "nope.zip"))
