"""fleet gather over a real torch.distributed process group (gloo, CPU): 2 "nodes" in local processes.

Each process is a rank with LOCAL_RANK 0 and its own FLEXDOCTOR_NODE_NAME, so it checks "its
node" (this machine, static tier: fast) and the reports travel to rank 0 as JSON bytes in uint8
tensors (no pickle: every rank refuses one, see _no_pickle).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
    pytest.skip("this torch has no gloo backend", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _no_pickle() -> None:
    """Any pickling or unpickling in a rank fails the gather (and so the test): the reports travel as
    JSON bytes, never as pickles a peer of the unauthenticated rendezvous could craft (issue 20)."""
    import pickle

    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d

    def refuse(*args, **kwargs):
        raise AssertionError("fleet gather used pickle")

    for name in ("gather_object", "all_gather_object", "broadcast_object_list", "scatter_object_list",
                 "send_object_list", "recv_object_list"):
        for module in (dist, c10d):
            if hasattr(module, name):
                setattr(module, name, refuse)
    for module, name in ((pickle, "loads"), (pickle, "load"), (pickle, "Unpickler"), (c10d, "_unpickler"),
                         (c10d, "_pickler")):
        if hasattr(module, name):
            setattr(module, name, refuse)


def _rank_main(rank: int, world: int, port: int, out: str, stall: str, timeout: float) -> None:
    """One rank (run in a spawned process)."""
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK="0", GROUP_RANK=str(rank),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), FLEXDOCTOR_NODE_NAME=f"node{rank}")
    sys.path.insert(0, str(ROOT))
    from flexdoctor.fleet import gather
    from flexdoctor.cli.fleet import _check_node
    from flexdoctor.policy import Settings
    from flexdoctor.render import fleet_json

    _no_pickle()

    def check() -> dict:
        if stall == "check" and rank == world - 1:
            time.sleep(600)  # a node whose check never ends: never reaches the process group
        doc = _check_node(sys.executable, True, False, Settings())  # what `fleet gather --static` runs
        if stall == "craft" and rank == world - 1:  # a node that names itself an option and a second host
            doc["facts"]["host"]["scheduler"]["FLEXDOCTOR_NODE_NAME"] = "--selector=kubernetes.io/os=linux\nnode0"
            doc["ok"] = True
        return doc

    def joined(me) -> None:
        if stall == "collective" and me.rank == world - 1:
            time.sleep(600)  # in the group, but never enters the collective

    def emit(report, docs) -> None:
        Path(out).write_text(fleet_json.render(report))

    code = gather.run(gather.Options(timeout=timeout, backend="gloo"), check, emit, joined=joined,
                      log=lambda s: None)
    Path(f"{out}.rank{rank}").write_text(str(code))
    sys.exit(code)


def _launch(tmp_path: Path, world: int = 2, stall: str = "", timeout: float = 60.0):
    import torch.multiprocessing as mp

    out = str(tmp_path / "fleet.json")
    ctx = mp.get_context("spawn")
    port = _free_port()
    procs = [ctx.Process(target=_rank_main, args=(r, world, port, out, stall, timeout)) for r in range(world)]
    for p in procs:
        p.start()
    procs[0].join(240)
    for p in procs[1:]:
        p.join(5 if stall else 240)
    for p in procs:  # a stalled rank is ours to end
        if p.is_alive():
            p.kill()
            p.join(10)
    return out, [p.exitcode for p in procs]


def test_gather_two_nodes_over_gloo(tmp_path):
    out, codes = _launch(tmp_path)
    doc = json.loads(Path(out).read_text())
    assert sorted(n["node"] for n in doc["nodes"]) == ["node0", "node1"]
    assert doc["gather_error"] is None
    assert doc["source"] == "gather over 2 ranks (gloo)"
    assert len(doc["groups"]) == 1  # one machine, one stack
    # Every rank ends with the fleet's verdict (broadcast from rank 0).
    assert codes[0] == codes[1] == doc["exit_code"]


def test_a_crafted_report_over_the_wire_is_data(tmp_path):
    """A rank's report is validated as `fleet merge` validates a file: a name that is no hostname
    keeps it out (it has no file name to fall back on: the fleet fails), and nothing is unpickled."""
    out, codes = _launch(tmp_path, stall="craft")
    doc = json.loads(Path(out).read_text())
    assert doc["gather_error"] is None  # no pickle was needed (_no_pickle refuses any)
    assert [n["node"] for n in doc["nodes"]] == ["node0"]
    assert [(p["file"], p["kind"], p["node"]) for p in doc["problems"]] == [("rank 1", "bad-name", None)]
    assert doc["exclude"] == [] and doc["exit_code"] == 1 and codes == [1, 1]


def test_wire_bytes_are_parsed_as_json_only(tmp_path):
    """A pickle sent as a report is 'not JSON': it is never unpickled (its __reduce__ would run)."""
    import pickle

    from flexdoctor.fleet.gather import encode
    from flexdoctor.fleet.load import from_documents

    import _fleet_nodes as fn

    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (Path.touch, (marker,))

    good = fn.report_for("node0")
    nodes, problems = from_documents([("rank 0", encode(good)), ("rank 1", pickle.dumps(Evil())),
                                      ("rank 2", b"\x00" * 64)])
    assert [n.name for n in nodes] == ["node0"]
    assert [(p.path, p.kind) for p in problems] == [("rank 1", "not-json"), ("rank 2", "not-json")]
    assert not marker.exists()


def test_reports_dir_writes_only_reports_named_by_a_hostname():
    """`fleet gather --reports-dir DIR` writes DIR/<name>.json: only for a valid host name."""
    from flexdoctor.fleet.gather import encode, node_reports

    import _fleet_nodes as fn

    crafted = fn.report_for("x")
    crafted["facts"]["host"]["scheduler"]["SLURMD_NODENAME"] = "../../etc/cron.d/x"
    out = node_reports({0: encode(fn.report_for("node0")), 1: encode(crafted), 2: b"not json", 3: None})
    assert list(out) == ["node0"] and out["node0"]["facts"]["host"]["hostname"] == "node0"


def test_a_rank_stuck_in_the_collective_becomes_a_report(tmp_path):
    out, codes = _launch(tmp_path, stall="collective", timeout=8)
    doc = json.loads(Path(out).read_text())
    assert codes[0] == 1 and doc["exit_code"] == 1
    assert "collective path itself hangs" in doc["gather_error"]
    # node1 joined the group and left its report in the store before the collective hung.
    assert sorted(n["node"] for n in doc["nodes"]) == ["node0", "node1"]


def test_a_rank_that_never_joins_becomes_a_report(tmp_path):
    out, codes = _launch(tmp_path, stall="check", timeout=8)
    doc = json.loads(Path(out).read_text())
    assert codes[0] == 1 and "ranks that never reported: 1" in doc["gather_error"]
    assert [n["node"] for n in doc["nodes"]] == ["node0"]
    assert [(p["file"], p["kind"]) for p in doc["problems"]] == [("rank 1", "no-report")]


def test_outside_a_launcher_is_a_usage_error():
    from flexdoctor.fleet.gather import GatherError, identity

    with pytest.raises(GatherError, match="torchrun"):
        identity({})
    me = identity({"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "MASTER_ADDR": "h", "MASTER_PORT": "1"})
    assert (me.rank, me.world, me.checks_node, me.group_rank) == (3, 8, False, None)


def test_node_ranks_follow_torchruns_numbering():
    from flexdoctor.fleet.gather import identity

    env = {"RANK": "0", "WORLD_SIZE": "16", "LOCAL_WORLD_SIZE": "8", "MASTER_ADDR": "h", "MASTER_PORT": "1"}
    assert identity(env).node_ranks() == [0, 8]
    assert identity({**env, "LOCAL_WORLD_SIZE": ""}).node_ranks() == list(range(16))


def test_a_rank_whose_node_sent_nothing_is_named():
    from flexdoctor.fleet.gather import Identity, Options, build_report

    import _fleet_nodes as fn

    me = Identity(rank=0, world=4, local_rank=0, group_rank=0, local_world=2)
    report = build_report({0: fn.report_for("a"), 1: None, 2: None, 3: None}, me, Options(), backend="gloo")
    assert [(p.path, p.kind) for p in report.problems] == [("rank 2", "no-report")]
    assert report.exit_code == 1
