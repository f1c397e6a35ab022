"""The GPUs of one node together (FD901-FD905): checks over recorded facts, the worker on CPU (gloo)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import load_facts_dict
from flexdoctor import checks, runner
from flexdoctor.checks.multigpu import expected, nvlink_gbps, pcie_gbps
from flexdoctor.facts import Facts
from flexdoctor.model import Status

FIXTURE = Path(__file__).parent / "fixtures" / "multigpu" / "h200x2_nv18.json"


def h200x2() -> dict:
    data = load_facts_dict("h100")  # a real recording: host, torch, toolchain, cache
    data.update(json.loads(FIXTURE.read_text()))
    return data


def results(data: dict) -> dict:
    specs = [s for s in checks.builtin() if s.area == "multigpu"]
    return {r.id: r for r in runner.run(specs, Facts.from_dict(data)).results}


def test_the_measured_h200_pair_passes_everything():
    r = results(h200x2())
    assert {k: v.status for k, v in r.items()} == {k: Status.PASS for k in ("FD901", "FD902", "FD903", "FD904",
                                                                              "FD905")}
    assert "NV18" in r["FD901"].message
    assert "18 active NVLinks" in r["FD902"].message and "NVSwitch" in r["FD902"].message
    # 291.6 GB/s against NCCL's model: 18 links x 20.6 GB/s (sm_90) = 370.8 GB/s.
    assert r["FD905"].message.startswith("bus bandwidth 291.6 GB/s across 2 GPUs (256 MiB), 79%")
    assert "370.8 GB/s" in r["FD905"].message


def test_nccl_model_constants():
    assert [nvlink_gbps(sm) for sm in (60, 70, 80, 86, 89, 90, 100, 120, None)] == \
        [18.0, 20.0, 20.0, 12.0, 20.0, 20.6, 40.1, 40.1, 20.0]
    assert (pcie_gbps(3, 16), pcie_gbps(4, 16), pcie_gbps(5, 16), pcie_gbps(4, 8)) == (12.0, 24.0, 48.0, 12.0)
    assert pcie_gbps(None, 16) is None


def test_p2p_disabled_by_the_environment_is_far_below_the_links():
    d = h200x2()
    ar = d["multi_gpu"]["allreduce"]
    ar["env"] = {"NCCL_P2P_DISABLE": "1"}
    ar.update(algbw_gbps=38.0, busbw_gbps=38.0)  # what SHM through host memory gives, not NVLink
    r = results(d)
    assert r["FD905"].status == Status.WARN
    assert "10% of what the links should give" in r["FD905"].message
    assert r["FD905"].details == ("NCCL_P2P_DISABLE=1",)
    assert any("NCCL_P2P_DISABLE=1 flexdoctor check --deep" in c for c in r["FD905"].fix.commands)


def test_nvlinked_gpus_without_peer_access():
    d = h200x2()
    d["multi_gpu"]["pairs"][0].update(p2p=False, nvml_p2p="disabled-by-regkey")
    r = results(d)
    assert r["FD901"].status == Status.WARN and "disabled-by-regkey" in r["FD901"].details[0]


def _dgx_a100(down: int = 5) -> dict:
    d = h200x2()
    d["gpu"]["devices"] = [{"index": i, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0",
                            "memory_total_bytes": 85899345920, "uuid": f"GPU-{i:08d}", "pci_bus_id": None}
                           for i in range(8)]
    m = d["multi_gpu"]
    m["gpus"] = [{"index": i, "nvlinks": 11 if i == down else 12, "nvlink_version": 3, "nvswitch": True,
                  "pcie_gen": 4, "pcie_width": 16, "pcie_gen_max": 4, "pcie_width_max": 16, "pcie_loaded": True}
                 for i in range(8)]
    m["pairs"] = [{"a": a, "b": b, "topology": "SYS", "nvlinks": 11 if down in (a, b) else 12, "nvml_p2p": "ok",
                   "p2p": True} for a in range(8) for b in range(a + 1, 8)]
    m["devices"] = list(range(8))
    m["allreduce"].update(world_size=8, busbw_gbps=205.0, algbw_gbps=117.1)
    return d


def test_a_gpu_with_a_link_down():
    r = results(_dgx_a100(down=5))
    assert r["FD902"].status == Status.WARN
    assert r["FD902"].details == ("GPU 5: 11 of 12 NVLinks active",)
    assert r["FD902"].fix.commands == ("nvidia-smi nvlink --status -i 5",)
    # The ring runs at the slowest GPU's links: 11 x 20 GB/s is the model.
    model, how = expected(Facts.from_dict(_dgx_a100(down=5)), Facts.from_dict(_dgx_a100(down=5)).multi_gpu)
    assert model == pytest.approx(220.0) and "11 NVLinks" in how
    assert results(_dgx_a100(down=-1))["FD902"].status == Status.PASS


def _rtx4090x2(x8: bool = False) -> dict:
    d = h200x2()
    for dev in d["gpu"]["devices"]:
        dev.update(name="NVIDIA GeForce RTX 4090", compute_capability="8.9")
    m = d["multi_gpu"]
    m["gpus"] = [{"index": i, "nvlinks": 0, "nvlink_version": None, "nvswitch": False, "pcie_gen": 4,
                  "pcie_width": 8 if (x8 and i == 1) else 16, "pcie_gen_max": 4, "pcie_width_max": 16,
                  "pcie_loaded": True} for i in range(2)]
    m["pairs"] = [{"a": 0, "b": 1, "topology": "PHB", "nvlinks": 0, "nvml_p2p": "gpu-not-supported", "p2p": False}]
    m["allreduce"].update(busbw_gbps=10.9, algbw_gbps=10.9)
    return d


def test_consumer_gpus_without_p2p_are_noted_not_failed():
    r = results(_rtx4090x2())
    assert r["FD901"].status == Status.PASS and "no peer access over PCIe" in r["FD901"].message
    assert r["FD902"].status == Status.SKIP  # no NVLink at all
    assert r["FD903"].status == Status.PASS
    # Gen4 x16 = 24 GB/s, halved through host memory: 10.9 GB/s is 91 % of that.
    assert r["FD905"].status == Status.PASS and "12.0 GB/s" in r["FD905"].message


def test_a_card_at_x8():
    r = results(_rtx4090x2(x8=True))
    assert r["FD903"].status == Status.WARN and r["FD903"].details == ("GPU 1: PCIe x8, the slot allows x16",)


def test_pcie_generation_is_judged_only_under_pcie_load():
    d = _rtx4090x2()
    d["multi_gpu"]["gpus"][0]["pcie_gen"] = 1  # an idle GPU drops to Gen1 on purpose
    d["multi_gpu"]["gpus"][0]["pcie_loaded"] = False
    assert results(d)["FD903"].status == Status.PASS
    d["multi_gpu"]["gpus"][0]["pcie_loaded"] = True  # ... but not while the all-reduce runs over PCIe
    assert results(d)["FD903"].status == Status.WARN
    nv = h200x2()
    nv["multi_gpu"]["gpus"][0]["pcie_gen"] = 1  # NVLinked: the all-reduce does not load PCIe
    assert results(nv)["FD903"].status == Status.PASS


def test_a_hung_collective_is_a_failure_naming_the_stage():
    d = h200x2()
    d["multi_gpu"]["allreduce"] = {"backend": "nccl", "world_size": 2, "bytes": 268435456, "hung": True,
                                   "timeout": 90.0, "stage": "first all-reduce",
                                   "error": "ranks 0, 1 did not finish (stopped at: rank 0 first all-reduce; "
                                            "rank 1 first all-reduce)", "env": {}}
    r = results(d)
    assert r["FD904"].status == Status.FAIL
    assert "hung (no result in 90 s, stopped at 'first all-reduce')" in r["FD904"].message
    assert r["FD905"].status == Status.SKIP


def test_a_wrong_sum_fails():
    d = h200x2()
    d["multi_gpu"]["allreduce"]["correct"] = False
    assert results(d)["FD904"].status == Status.FAIL


def test_a_probe_that_died_fails_fd904():
    d = h200x2()
    d["multi_gpu"]["allreduce"] = None
    d["multi_gpu"]["incomplete"] = {"probe_error": {"message": "the multi-GPU probe did not finish in 120 s "
                                                               "(hung during 'all-reduce start')", "kind": "timeout"}}
    assert results(d)["FD904"].status == Status.FAIL


def test_not_run_skips_everything():
    d = load_facts_dict("h100")
    r = results(d)
    assert {v.status for v in r.values()} == {Status.SKIP}
    assert "two or more GPUs" in r["FD904"].message
    d["deep"] = load_facts_dict("h100").get("deep") or {"device": "cuda"}  # deep ran on one GPU
    assert "fewer than two GPUs" in results(d)["FD904"].message


def test_every_multigpu_check_passes_and_complains_somewhere():
    broken = h200x2()
    broken["multi_gpu"]["pairs"][0].update(p2p=False)
    broken["multi_gpu"]["allreduce"].update(busbw_gbps=20.0, algbw_gbps=20.0, correct=False)
    machines = [h200x2(), _dgx_a100(), _rtx4090x2(x8=True), broken]
    seen: dict = {}
    for m in machines:
        for cid, r in results(m).items():
            seen.setdefault(cid, set()).add(r.status)
    for cid, statuses in seen.items():
        assert Status.PASS in statuses, f"{cid} passes nowhere"
        assert statuses & {Status.WARN, Status.FAIL}, f"{cid} never complains"


# ------------------------------------------------------------------------- the probe itself


def test_parse_joins_torch_devices_to_nvml_by_uuid():
    from flexdoctor.deep.multigpu import parse
    from flexdoctor.facts import GpuPair
    from flexdoctor.worker._wire import RESULT

    out = {"devices": [{"index": 0, "name": "x", "uuid": "bbbb"}, {"index": 1, "name": "x", "uuid": "aaaa"}],
           "p2p": [{"a": 0, "b": 1, "p2p": True}], "env": {"NCCL_DEBUG": "INFO"},
           "allreduce": {"backend": "nccl", "world_size": 2, "bytes": 1024, "busbw_gbps": 1.0, "correct": True}}
    facts = parse(RESULT + json.dumps(out) + "\n", "", 0, pairs=[GpuPair(0, 1, nvlinks=4)],
                  nvml_uuids=["GPU-aaaa", "GPU-bbbb"])
    assert facts.devices == [1, 0]  # torch device 0 is NVML's GPU 1 (CUDA_VISIBLE_DEVICES order)
    assert facts.pairs[0].p2p is True and facts.allreduce.env == {"NCCL_DEBUG": "INFO"}


def test_parse_of_a_killed_worker_keeps_the_peer_matrix():
    from flexdoctor.deep.multigpu import parse
    from flexdoctor.facts import GpuPair
    from flexdoctor.worker._wire import PART, STAGE

    stdout = f"{STAGE}peer access\n{PART}p2p " + json.dumps([{"a": 0, "b": 1, "p2p": False}]) + \
        f"\n{STAGE}all-reduce start\n"
    facts = parse(stdout, "", None, timed_out=True, timeout=120, pairs=[GpuPair(0, 1)])
    assert facts.incomplete.kind == "timeout" and "hung during 'all-reduce start'" in facts.incomplete.message
    assert facts.allreduce is None


@pytest.mark.slow
def test_worker_all_reduce_on_cpu_with_gloo():
    """The real worker, the real collective, the real arithmetic: 2 CPU processes over gloo."""
    pytest.importorskip("torch")
    from flexdoctor.deep import multigpu

    f = multigpu.probe(sys.executable, timeout=90, nbytes=4 << 20, extra={"device": "cpu", "world": 2},
                       force=True)
    ar = f.allreduce
    assert ar.error is None and ar.correct is True and ar.backend == "gloo" and ar.world_size == 2
    assert ar.bytes == 4 << 20 and ar.iterations == 20
    assert ar.busbw_gbps == pytest.approx(ar.algbw_gbps)  # n = 2: 2 (n - 1) / n = 1
    assert ar.algbw_gbps == pytest.approx(ar.bytes / ar.seconds / 1e9, rel=1e-3)


@pytest.mark.slow
def test_worker_busbw_factor_for_three_ranks():
    pytest.importorskip("torch")
    from flexdoctor.deep import multigpu

    f = multigpu.probe(sys.executable, timeout=90, nbytes=1 << 20, extra={"device": "cpu", "world": 3},
                       force=True)
    assert f.allreduce.correct is True
    assert f.allreduce.busbw_gbps == pytest.approx(f.allreduce.algbw_gbps * 4 / 3, rel=1e-2)


@pytest.mark.slow
def test_worker_time_box_turns_a_stuck_rank_into_a_finding():
    pytest.importorskip("torch")
    from flexdoctor.deep import multigpu

    f = multigpu.probe(sys.executable, timeout=45, nbytes=1 << 20,
                       extra={"device": "cpu", "world": 2, "stall_rank": 1, "timeout": 10}, force=True)
    ar = f.allreduce
    assert ar.busbw_gbps is None and ar.error
    data = load_facts_dict("h100")
    data["multi_gpu"] = json.loads(json.dumps(Facts(multi_gpu=f).to_dict()["multi_gpu"]))
    assert results(data)["FD904"].status == Status.FAIL


@pytest.mark.gpu
def test_multigpu_probe_on_this_node():
    """On a machine with 2+ GPUs: the real probe, NCCL, and the checks pass."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        pytest.skip("needs two or more GPUs")
    from flexdoctor.deep import multigpu

    f = multigpu.probe(sys.executable)
    assert f is not None and f.allreduce is not None
    assert f.allreduce.correct is True and f.allreduce.busbw_gbps > 0
    from flexdoctor.probes import gpu

    data = load_facts_dict("h100")
    data.update({k: v for k, v in Facts(gpu=gpu.probe(), multi_gpu=f).to_dict().items() if k in ("gpu", "multi_gpu")})
    print(json.dumps(data["multi_gpu"], indent=1))
    r = results(data)
    assert r["FD904"].status == Status.PASS, r["FD904"].message
    print(r["FD905"].message)

