"""Issue 23, warm-cache's part: its verification times the whole fresh process phase by phase
(timing.measure, as `flexdoctor trace` does), and its "use this cache at training time" advice
names TORCHINDUCTOR_COMPILE_THREADS=1 only when timing.compare measured it faster on this machine.

The verdict is a pure function, tested on made-up Measurements both ways; the real runs (CPU
torch, one small flex config, one cache shared by the module) assert what was measured and that
the verdict agrees with the numbers, never how fast anything was.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flexdoctor import workload as wl
from flexdoctor.cache import plan as planner
from flexdoctor.cache import warm
from flexdoctor.cache.fingerprint import Fingerprint
from flexdoctor.render import warm_json, warm_markdown, warm_view
from flexdoctor.timing import Measurement
from flexdoctor.timing import runner as timing_runner
from flexdoctor.timing.model import Phase, Process
from flexdoctor.worker import run as worker_run

HERE = Path(__file__).resolve().parent
SCHEMA = json.loads((HERE.parent / "flexdoctor" / "schema" / "warm.schema.json").read_text())
FD = [sys.executable, "-m", "flexdoctor"]
THREADS = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}
SETTING = "TORCHINDUCTOR_COMPILE_THREADS=1"


def fd(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_COMPILE_THREADS",
                                                            "CI", "GITHUB_ACTIONS")}
    env.update({"FLEXDOCTOR_LANG": "en", "PYTHONIOENCODING": "utf-8"})
    return subprocess.run(FD + list(args), capture_output=True, text=True, timeout=timeout, env=env)


def validate(doc: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(doc, SCHEMA)


# --------------------------------------------------------------------------- the verdict (pure)

def m(wall, returncode=0, pool=0.0, started=True, timed_out=False) -> Measurement:
    p = Process(pid=1, start=0.0, exit=wall)
    p.phases = [Phase("import_torch", (wall or 0) - pool), Phase("exit_pool", pool)]
    return Measurement(command=["python"], returncode=returncode, wall=wall, processes=[p], started=started,
                       timed_out=timed_out)


def test_faster_median_is_advised_with_its_numbers():
    pairs = [(m(23.7, pool=9.6), m(14.1)), (m(22.9, pool=9.1), m(14.2))]
    v = warm.judge_settings(pairs, THREADS, "cfg")
    assert v.helped and v.reason == "faster"
    assert (v.without_s, v.with_s, v.runs) == (23.3, 14.15, 2)
    assert v.saved_s == pytest.approx(9.15) and v.ratio == pytest.approx(14.15 / 23.3, abs=1e-3)
    assert v.pool_without == pytest.approx(9.35) and v.pool_with == 0.0
    assert v.to_dict()["without_runs_s"] == [23.7, 22.9]


@pytest.mark.parametrize("without, with_", [
    ([10.0, 10.2], [10.5, 10.1]),  # slower with the setting
    ([10.0], [10.0]),  # the same
    ([10.0], [9.95]),  # faster by less than MIN_SAVED_S: noise
    ([100.0], [99.0]),  # faster by 1 s, but less than MIN_SAVED_SHARE of 100 s
])
def test_not_faster_is_measured_and_not_advised(without, with_):
    v = warm.judge_settings([(m(a), m(b)) for a, b in zip(without, with_)], THREADS, "cfg")
    assert not v.helped and v.reason == "not_faster"
    assert v.without_s is not None and v.with_s is not None


@pytest.mark.parametrize("pairs, ok", [
    ([], True),  # nothing ran
    ([(m(10.0), m(5.0, returncode=1))], True),  # a run failed
    ([(m(10.0), m(None))], True),  # a run's end was never seen
    ([(m(10.0, timed_out=True), m(5.0))], True),
    ([(m(10.0), m(5.0))], False),  # a run's worker said it missed the cache
])
def test_a_failed_run_is_never_advice(pairs, ok):
    v = warm.judge_settings(pairs, THREADS, "cfg", ok=ok)
    assert not v.helped and v.reason == "failed"


class _Req:
    def __init__(self, measure=None, measure_runs=1):
        self.measure, self.measure_runs = measure, measure_runs


class _Runner:
    def __init__(self):
        self.calls = []

    def measure_settings(self, out, runs, settings):
        self.calls.append((out.workload.name, runs, settings))
        return warm.Measured(settings, "faster", out.workload.name, [2.0], [1.0])


def _hit(name_seq_len: int, pool: bool) -> warm.Outcome:
    o = warm.Outcome(wl.make(device="cpu", seq_len=name_seq_len), state="done")
    o.warm = {"ok": True, "counters": {"fxgraph_cache_hit": 1, "fxgraph_cache_miss": 0}}
    o.process = {"wall_s": 5.0, "pool": pool, "pool_s": 3.0 if pool else 0.0, "booted": True, "phases": []}
    return o


def test_what_is_measured_and_when():
    no_pool, pooled = _hit(128, False), _hit(256, True)
    r = _Runner()
    assert warm.measure_settings([no_pool], _Req(), r, environ={}).reason == "no_pool" and not r.calls
    assert warm.measure_settings([no_pool], _Req(False), r, environ={}).reason == "off" and not r.calls
    assert warm.measure_settings([pooled], _Req(True), r, environ=THREADS).reason == "already_set" and not r.calls
    assert warm.measure_settings([no_pool], _Req(True), r, environ={}).helped  # --measure: anyway
    assert warm.measure_settings([no_pool, pooled], _Req(None, 3), r, environ={}).helped
    assert r.calls[-1] == (pooled.workload.name, 3, THREADS)  # the config whose pool cost time
    missed = _hit(512, True)
    missed.warm["counters"]["fxgraph_cache_miss"] = 1
    assert warm.measure_settings([pooled, missed], _Req(True), r, environ={}) is None  # verification failed


# --------------------------------------------------------------------------- the views (recorded results)

def _result(measured) -> warm.WarmResult:
    env = planner.WarmEnv(cache_dir="/data/ind", cache_source="--cache-dir", temporary=False,
                          fingerprint=Fingerprint(torch="2.11.0+cu130"))
    a = wl.make(dtype="bf16", heads=32, kv_heads=8, seq_len=4096, mask="causal")
    plan = planner.Plan(steps=(planner.Step(a, planner.COMPILE, "new"),), env=env, jobs=1)
    (o,) = warm.outcomes(plan)
    o.state, o.cold = "done", {"first_call_s": 8.2, "wall_s": 30.0, "started": 1.0}
    o.warm = {"ok": True, "first_call_s": 1.2, "counters": {"fxgraph_cache_hit": 2, "fxgraph_cache_miss": 0}}
    o.process = {"wall_s": 23.7, "booted": True, "pool": True, "pool_s": 9.9,
                 "phases": [{"name": "import_torch", "seconds": 5.1, "measured": True},
                            {"name": "import_compiler", "seconds": 7.0, "measured": True},
                            {"name": "first_forward", "seconds": 1.2, "measured": True},
                            {"name": "exit_pool", "seconds": 9.9, "measured": True},
                            {"name": "exit_teardown", "seconds": 0.5, "measured": True}]}
    return warm.WarmResult(plan, [o], compile_wall_s=30.0, verify_wall_s=24.0, measured=measured,
                           manifest_path="/data/ind/flexdoctor-manifest.json")


FASTER = warm.judge_settings([(m(23.7, pool=9.9), m(14.1)), (m(22.9, pool=9.1), m(14.2))], THREADS, "cfg")
SLOWER = warm.judge_settings([(m(14.0), m(14.3))], THREADS, "cfg")


def test_text_advises_the_setting_only_when_measured_faster():
    text = warm_view.render(_result(FASTER), width=300)
    assert f"export TORCHINDUCTOR_CACHE_DIR=/data/ind {SETTING}" in text
    assert f"took 14.15 s with {SETTING} against 23.30 s as it is (9.15 s faster, 0.61× the time; median of 2" in text
    assert "fresh process 23.70 s; largest phases: exit: compile-worker pool shutdown 9.90 s · " \
           "import Dynamo, Inductor, Triton 7.00 s · import torch 5.10 s" in text
    slow = warm_view.render(_result(SLOWER), width=300)
    assert "export TORCHINDUCTOR_CACHE_DIR=/data/ind\n" in slow and f"/data/ind {SETTING}" not in slow
    assert f"{SETTING} did not make the warm start faster (14.30 s with it, 14.00 s as it is" in slow
    off = warm_view.render(_result(warm.Measured(dict(THREADS), "off")), width=300)
    assert "(--no-measure)" in off and f"/data/ind {SETTING}" not in off


def test_json_and_markdown_carry_the_same_advice():
    doc = json.loads(warm_json.render(_result(FASTER)))
    validate(doc)
    assert doc["advice"]["env"] == {"TORCHINDUCTOR_CACHE_DIR": "/data/ind", **THREADS}
    assert doc["advice"]["measured"]["helped"] and doc["advice"]["measured"]["with_s"] == 14.15
    assert [p["name"] for p in doc["configs"][0]["verify"]["phases"]][-2:] == ["exit_pool", "exit_teardown"]
    slow = json.loads(warm_json.render(_result(SLOWER)))
    validate(slow)
    assert slow["advice"]["env"] == {"TORCHINDUCTOR_CACHE_DIR": "/data/ind"}
    assert slow["advice"]["measured"]["reason"] == "not_faster"
    md = warm_markdown.render(_result(FASTER))
    assert f"export TORCHINDUCTOR_CACHE_DIR=/data/ind {SETTING}" in md and "| 23.70 |" in md
    assert f"export TORCHINDUCTOR_CACHE_DIR=/data/ind {SETTING}" not in warm_markdown.render(_result(SLOWER))


# --------------------------------------------------------------------------- timing.measure's kill hook

def test_measure_keeps_its_child_where_another_thread_can_end_it():
    procs: set = set()
    out: dict = {}
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    th = threading.Thread(target=lambda: out.setdefault("m", timing_runner.measure(argv, timeout=120, procs=procs,
                                                                                     on_line=lambda line: None)))
    t0 = time.monotonic()
    th.start()
    deadline = time.monotonic() + 30
    while not procs and time.monotonic() < deadline:
        time.sleep(0.02)
    assert procs, "the started child was never handed to the caller"
    for child in list(procs):
        worker_run.kill(child)  # what Runner.kill_all does on Ctrl-C
    th.join(30)
    assert not th.is_alive() and time.monotonic() - t0 < 30
    assert out["m"].returncode is not None and out["m"].returncode < 0 and not procs


# --------------------------------------------------------------------------- the real thing (CPU torch)

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="warm-cache compiles with torch")


@pytest.fixture(scope="module")
def measured_run(tmp_path_factory):
    """One real warm-cache with the measurement forced (no pool on CPU) at one run per side."""
    root = tmp_path_factory.mktemp("inductor")
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", str(root), "--format", "json",
              "--measure", "--measure-runs", "1")
    return root, done


@needs_torch
def test_real_verification_is_timed_phase_by_phase(measured_run):
    _, done = measured_run
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    doc = json.loads(done.stdout)
    validate(doc)
    (cfg,) = doc["configs"]
    v = cfg["verify"]
    assert v["hit"] and v["wall_s"] > 0
    names = [p["name"] for p in v["phases"]]
    assert {"interpreter", "import_torch", "import_compiler"} <= set(names)
    assert set(names) & {"cache", "kernel_load"} and any(n.startswith("exit_") for n in names)
    assert sum(p["seconds"] for p in v["phases"]) == pytest.approx(v["wall_s"], rel=0.10)
    assert "measuring (run 1/1, with TORCHINDUCTOR_COMPILE_THREADS=1" in done.stderr  # the progress shown


@needs_torch
def test_real_advice_carries_measured_numbers_and_agrees_with_them(measured_run):
    root, done = measured_run
    adv = json.loads(done.stdout)["advice"]
    mes = adv["measured"]
    assert mes["settings"] == THREADS and mes["runs"] == 1 and mes["config"] == "fp32 B1 H2 L128 D16 causal fwd cpu"
    assert mes["without_s"] > 0 and mes["with_s"] > 0 and mes["reason"] in ("faster", "not_faster")
    saved = mes["without_s"] - mes["with_s"]
    assert mes["helped"] == (saved >= max(warm.MIN_SAVED_S, warm.MIN_SAVED_SHARE * mes["without_s"]))
    assert mes["saved_s"] == pytest.approx(saved, abs=1e-3)
    assert adv["env"]["TORCHINDUCTOR_CACHE_DIR"] == str(root)
    assert ("TORCHINDUCTOR_COMPILE_THREADS" in adv["env"]) == mes["helped"]
    assert (SETTING in adv["command"]) == mes["helped"]


@needs_torch
def test_no_measure_skips_it_and_markdown_shows_the_process(measured_run):
    root, _ = measured_run
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", str(root), "--force", "--no-measure",
              "--format", "markdown")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "measuring" not in done.stderr
    assert f"{SETTING} was not measured (--no-measure)" in done.stdout
    row = next(ln for ln in done.stdout.splitlines() if ln.startswith("| fp32"))
    assert re.search(r"\| \d+\.\d\d \| [^|]*import torch \d+\.\d\d s", row), row
    assert f"export TORCHINDUCTOR_CACHE_DIR={root}\n" in done.stdout


def test_bad_measure_runs_is_a_usage_error(tmp_path):
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", str(tmp_path), "--measure-runs", "0")
    assert done.returncode == 2 and "--measure-runs must be positive" in done.stderr
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", str(tmp_path), "--format", "xml")
    assert done.returncode == 2 and "--format xml" in done.stderr


# --------------------------------------------------------------------------- outside text stays data

EVIL = "x\x1b[2J\n::warning::pwned ##[error]y"


@needs_torch
def test_progress_lines_show_outside_text_escaped(tmp_path):
    """warm-cache's progress lines (the --run line names the cache dir and the command) print
    paths as data: no raw control character, no line GitHub's runner would obey."""
    cache = tmp_path / EVIL
    cache.mkdir(mode=0o700)
    done = subprocess.run(FD + ["warm-cache", "--run", "true", "--cache-dir", str(cache)], capture_output=True,
                          timeout=300, env={**os.environ, "FLEXDOCTOR_LANG": "en", "PYTHONIOENCODING": "utf-8"})
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, err
    assert "running your command under" in err
    assert "\x1b" not in err and "\\x1b[2J\\n::warning::pwned" in err
    lines = re.split(r"\r\n|\r|\n", err + done.stdout.decode("utf-8", "replace"))
    assert not [ln for ln in lines if ln.lstrip().startswith("::") or "##[" in ln]

