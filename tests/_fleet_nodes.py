"""Node reports for the fleet tests: the real H100 recording, renamed and changed the way real
fleets drift, judged by the real checks (so failing nodes carry real findings)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Callable, Optional

from conftest import load_facts_dict  # noqa: F401  (re-exported for tests)

BASE = "h100"  # a real recording, with a warm-cache manifest


def facts_for(name: str, base: str = BASE, change: Optional[Callable[[dict], None]] = None,
              slurm: bool = True) -> dict:
    data = copy.deepcopy(load_facts_dict(base))
    data["host"]["hostname"] = name
    if slurm:
        data["host"]["scheduler"] = {"SLURMD_NODENAME": name, "SLURM_JOB_ID": "4242", "SLURM_NODEID": "0"}
    if change is not None:
        change(data)
    return data


def report_for(name: str, base: str = BASE, change: Optional[Callable[[dict], None]] = None, strict: bool = False,
               slurm: bool = True) -> dict:
    from flexdoctor import checks, policy, runner
    from flexdoctor.facts import Facts
    from flexdoctor.render import json_

    specs, _ = checks.all_checks(with_plugins=False)
    facts = Facts.load(facts_for(name, base, change, slurm))
    return json_.to_dict(runner.run(specs, facts, settings=policy.Settings(strict=strict)))


def write(dirpath: Path, reports: dict) -> Path:
    dirpath.mkdir(parents=True, exist_ok=True)
    for name, rep in reports.items():
        (dirpath / f"{name}.json").write_text(json.dumps(rep), encoding="utf-8")
    return dirpath


# Real ways nodes drift.
def driver(version: str, cuda: str = "13.0"):
    def change(d):
        d["gpu"]["driver_version"] = version
        d["gpu"]["cuda_driver_version"] = cuda
    return change


def two_gpus(d):  # the healthy nodes have two GPUs; a node without this one lost a GPU off the bus
    gpu = copy.deepcopy(d["gpu"]["devices"][0])
    gpu["index"] = 1
    gpu["uuid"] = "GPU-00000000-0000-0000-0000-000000000001"
    d["gpu"]["devices"].append(gpu)


def python_patch(version: str):
    def change(d):
        d["python"]["version"] = version
    return change


def cold_cache(d):
    d["cache"]["manifest"] = None


def no_compiler(d):  # FD304 fails: no gcc or clang on the node
    d["toolchain"]["c_compiler"] = None
    d["host"]["env"].pop("CC", None)


def both(*changes):
    def change(d):
        for c in changes:
            c(d)
    return change
