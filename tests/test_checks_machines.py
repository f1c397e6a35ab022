"""Machines the recorded fixtures do not cover, built by editing a real recording: mixed GPUs
with CUDA_VISIBLE_DEVICES, a Jetson without NVML, a V100 on a new driver, an ARM CPU box, a
driver one CUDA minor behind."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from conftest import torch_pin_of
from flexdoctor import checks, runner, wheels
from flexdoctor.facts import Facts
from flexdoctor.model import Status

FIXTURES = Path(__file__).parent / "fixtures" / "facts"


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def results(data: dict) -> dict:
    return {r.id: r for r in runner.run(checks.builtin(), Facts.from_dict(data)).results}


def commands(r) -> str:
    return "\n".join(r.fix.commands) if r.fix else ""


GT1030 = {"index": 1, "name": "NVIDIA GeForce GT 1030", "compute_capability": "6.1",
          "memory_total_bytes": 2 * 2**30, "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000001", "pci_bus_id": None}


def test_display_card_hidden_from_training_does_not_fail_the_report():
    d = load("h100")
    d["gpu"]["devices"].append(GT1030)
    h100_uuid = d["gpu"]["devices"][0]["uuid"]
    d["torch_runtime"]["devices"][0]["uuid"] = h100_uuid[4:]  # torch's str(props.uuid) has no "GPU-"
    r = results(d)
    assert r["FD102"].status == Status.PASS and r["FD103"].status == Status.PASS
    assert r["FD105"].status == Status.PASS
    # Without torch's view, CUDA_VISIBLE_DEVICES decides.
    d2 = copy.deepcopy(d)
    d2["torch_runtime"]["devices"][0]["uuid"] = None
    d2["host"]["env"]["CUDA_VISIBLE_DEVICES"] = "0"
    assert results(d2)["FD102"].status == Status.PASS
    # And with neither, every GPU of the machine is judged: the GT 1030 is too old for Triton.
    d3 = copy.deepcopy(d2)
    d3["host"]["env"].pop("CUDA_VISIBLE_DEVICES")
    assert results(d3)["FD102"].status == Status.FAIL


def test_jetson_without_nvml_is_a_gpu_machine():
    d = load("h100")
    d["gpu"] = {"nvml": "no-library", "nvml_error": "NVML Shared Library Not Found", "driver_version": None,
                "cuda_driver_version": None, "devices": [], "device_nodes": False}
    d["torch_runtime"]["devices"][0].update(name="Orin", capability="8.7")
    r = results(d)
    assert r["FD101"].status == Status.PASS and "Orin" in r["FD101"].message
    assert r["FD102"].status == Status.PASS
    assert "CUDA" in r["FD601"].message and "CPU" not in r["FD601"].message


def test_v100_on_a_cuda13_driver_is_not_sent_to_cu130_wheels():
    d = load("cpu_wheel_on_gpu")
    d["gpu"]["cuda_driver_version"] = "13.0"
    d["gpu"]["driver_version"] = "580.65.06"
    d["gpu"]["devices"][0].update(name="Tesla V100-SXM2-32GB", compute_capability="7.0")
    fix = commands(results(d)["FD204"])
    # cu130 wheels start at sm_75; the pair keeps torch 2.8.0 in a build that carries sm_70.
    version, variant, _ = torch_pin_of(fix)
    assert version == "2.8.0" and "cu130" not in fix
    assert wheels.carries(wheels.table().release(version).variant("linux-x86_64", variant).archs, (7, 0))


def test_reinstall_fixes_keep_the_torch_release():
    r = results(load("cpu_wheel_on_gpu"))["FD204"]
    assert torch_pin_of(commands(r))[0] == "2.8.0"


def test_driver_one_minor_behind_suggests_no_reinstall():
    d = load("h100")
    d["gpu"]["cuda_driver_version"] = "12.4"
    d["torch"]["cuda"] = "12.8"
    d["torch_runtime"]["cuda"] = "12.8"
    r = results(d)["FD104"]
    assert r.status == Status.WARN and r.fix.kb == "FDE110"
    assert "pip" not in commands(r)


def test_arm_cpu_box_cannot_compile_flex_on_the_cpu():
    d = load("cpu_only")
    d["host"].update(machine="aarch64", cpu_avx2=False)
    r = results(d)["FD601"]
    assert r.status == Status.WARN and "AVX2" in r.message


def test_python_headers_fix_depends_on_who_installed_python():
    d = load("no_compiler_slim")
    assert d["python"]["python_h"] is False
    version = ".".join(d["python"]["version"].split(".")[:2])
    d["python"]["include_dir"] = f"/usr/include/python{version}"
    assert f"apt-get install -y python{version}-dev" in commands(results(d)["FD306"])
    d["python"]["include_dir"] = f"/home/me/.pyenv/versions/{d['python']['version']}/include/python{version}"
    r = results(d)["FD306"]
    assert r.fix.kb == "FDE308" and f"pyenv install --force {version}" in r.fix.summary
    assert "apt-get" not in commands(r)


def test_nightly_triton_pin_points_at_the_nightly_index():
    d = load("triton_mismatch")
    d["torch"]["triton_requirement"] = "pytorch-triton==3.7.0+git1234abcd"
    d["torch"]["version"] = "2.12.0.dev20260101+cu130"
    d["python"]["packages"]["pytorch-triton"] = "3.6.0+gitdeadbeef"
    fix = commands(results(d)["FD302"])
    assert "whl/nightly/cu" in fix and "pytorch-triton==3.7.0+git1234abcd" in fix
