"""`flexdoctor trace` (issue 23): the timing bootstrap, torch's structured trace read for times and
silent failures, phases that add up to the wall time, findings and advice, the views; then real
CPU runs (torch 2.13 CPU): each silent failure reported for a small script that has it, a clean
compiled step on a warm cache reports nothing, two torchrun ranks timed one by one.

Recorded: tests/fixtures/trace/silent_cpu/ is tests/data/trace/silent.py run with every scenario
under the bootstrap and TORCH_TRACE (see the fixtures README).
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flexdoctor import timing
from flexdoctor.render import trace_timeline, trace_view
from flexdoctor.timing import boot, phases, torchlog
from flexdoctor.timing.model import Measurement, Process, Span, TorchLog
from flexdoctor.timing.runner import assemble
from flexdoctor.trace import findings as judge
from flexdoctor.trace.model import Finding, TraceResult

HERE = Path(__file__).parent
FIX = HERE / "fixtures" / "trace" / "silent_cpu"
SILENT = HERE / "data" / "trace" / "silent.py"
RANKS = HERE / "data" / "trace" / "ranks.py"
POOL = HERE / "data" / "trace" / "pool.py"
STEP = HERE / "data" / "why" / "flex_step.py"
SCHEMA = json.loads((HERE.parent / "flexdoctor" / "schema" / "trace.schema.json").read_text())
BOOT = HERE.parent / "flexdoctor" / "worker" / "_trace_boot" / "sitecustomize.py"


# --------------------------------------------------------------------------- phases (pure)

def _proc(**kw) -> Process:
    p = Process(pid=1, start=100.0, boot=100.1, end=110.0, atexit=110.5, exit=112.0, **kw)
    return p


def test_phases_add_up_to_the_wall_time_and_the_innermost_record_wins():
    log = TorchLog(pid=1, spans=[Span("dynamo", 104.0, 107.0, "dynamo", 0), Span("compile", 105.0, 106.0, "x", 0)])
    p = _proc(imports=[Span("import_torch", 100.2, 102.0, "torch"),
                       Span("import_compiler", 105.2, 105.6, "compile_fx")],  # imported inside the compile
              pool=[Span("exit_pool", 110.1, 110.4)], backward=[Span("backward", 108.0, 108.5)], log=log)
    phases.analyse(p)
    got = {ph.name: round(ph.seconds, 3) for ph in p.phases}
    assert abs(sum(got.values()) - p.wall) < 1e-6 and p.wall == 12.0
    assert got == {"interpreter": 0.1, "script": 2.1, "import_torch": 1.8, "import_compiler": 0.4,
                   "dynamo": 2.0, "compile": 0.6, "first_forward": 1.0, "first_backward": 0.5, "later_steps": 1.5,
                   "exit_pool": 0.3, "exit_atexit": 0.2, "exit_teardown": 1.5}
    assert p.first_forward_end == "backward" and all(ph.measured for ph in p.phases)
    assert p.frames[0].parts == {"dynamo": 2.0, "compile": 0.6}  # the import inside is the import's
    assert sum(s[2] - s[1] for s in p.segments) == pytest.approx(12.0)
    assert p.milestones["first_compile"] == 4.0 and p.milestones["exit"] == 12.0


def test_without_a_step_marker_the_first_forward_is_cut_at_the_last_compile_and_says_so():
    p = _proc(log=TorchLog(pid=1, spans=[Span("dynamo", 104.0, 105.0, "dynamo", 0)]))
    phases.analyse(p)
    inferred = {ph.name for ph in p.phases if not ph.measured}
    assert p.first_forward_end == "last_compile" and inferred == {"later_steps"}  # first forward: 0 s


def test_a_process_without_the_bootstrap_is_other_apart_from_torchs_events():
    p = Process(pid=1, start=0.0, exit=10.0, log=TorchLog(pid=1, spans=[Span("compile", 2.0, 3.0, "x", 0)]))
    phases.analyse(p)
    assert {ph.name: ph.seconds for ph in p.phases} == {"compile": 1.0, "other": 9.0}


def test_a_torch_without_chromium_events_still_times_its_compiles(tmp_path):
    """Without ``chromium_event`` records a compile's metrics (start, entire_frame_compile_time_s)
    give its span, counted as Dynamo's."""
    (tmp_path / "dedicated_log_torch_trace_x.log").write_text(
        'V1124 10:00:00.000000 42 a.py:1] {"dynamo_start": {"stack": [{"line": 3, "name": "f", "filename": "t.py"}]}, '
        '"frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n'
        'V1124 10:00:01.000000 42 a.py:1] {"compilation_metrics": {"compile_id": "0/0", "co_name": "f", '
        '"start_time": 100.0, "entire_frame_compile_time_s": 2.5}, "frame_id": 0, "frame_compile_id": 0, '
        '"attempt": 0}\n')
    log = torchlog.read(str(tmp_path))[42]
    assert [(s.kind, s.t0, s.t1, s.compile) for s in log.spans] == [("dynamo", 100.0, 102.5, 0)]
    assert log.compiles[0].name == "f" and log.compiles[0].filename == "t.py"


# --------------------------------------------------------------------------- a recorded run

@pytest.fixture
def recorded(tmp_path) -> Measurement:
    trace_dir, times = tmp_path / "trace", tmp_path / "times"
    for d in (trace_dir, times):
        d.mkdir(mode=0o700)
    for p in FIX.glob("*.gz"):
        (trace_dir / p.name[:-3]).write_text(gzip.open(p, "rt", encoding="utf-8").read(), encoding="utf-8")
    for p in FIX.glob("*.jsonl"):
        shutil.copy(p, times / p.name)
    records, logs = boot.read(str(times)), torchlog.read(str(trace_dir))
    (pid, proc), = records.items()
    m = Measurement(command=["python", "silent.py"], returncode=0, spawn=proc.start)
    m.processes = assemble(pid, proc.start, records, logs, {pid: proc.atexit + 1.0})
    m.wall = m.top.wall
    return m


def test_torch_trace_is_read_for_compiles_and_their_failures(recorded):
    log = recorded.top.log
    got = [(c.compile_id, c.name, c.flex_eager, c.limit_hit) for c in log.compiles]
    assert got[:5] == [("0/0", "_flex_attention_hop_wrapper", True, False), ("0/1", "_flex_attention_hop_wrapper",
                       True, False), ("1/0", "scaled", False, False), ("1/1", "scaled", False, False),
                       ("1/2", "scaled", False, True)]
    assert log.compiles[0].caller["filename"].endswith("silent.py") and log.torch_version == "2.13.0+cpu"
    pooled = [c for c in log.compiles if c.name == "pooled"][1]
    assert pooled.symbols == [{"symbol": "s27", "source": "L['x'].size()[1]"}]
    assert "size mismatch at index 1" in pooled.recompile_reasons[0]


def test_recorded_run_phases_add_up(recorded):
    p = recorded.top
    assert sum(ph.seconds for ph in p.phases) == pytest.approx(p.wall)
    assert p.first_forward_end == "backward" and p.seconds("import_torch") > 1.0 and p.seconds("dynamo") > 0
    assert p.seconds("other") == 0


def test_every_silent_failure_of_the_recorded_run_is_found(recorded):
    found = {f.code: f for f in judge.findings(recorded, None)}
    assert set(found) == {"flex_uncompiled", "recompile_limit", "recompiles", "dynamic_recompile", "graph_break"}
    assert found["flex_uncompiled"].args["count"] == 2 and found["flex_uncompiled"].args["where"].endswith("silent.py:27")
    limit = found["recompile_limit"].args
    assert (limit["frame"], limit["limit"], limit["knob"], limit["compile_id"]) == ("scaled", 2, "recompile_limit", "1/2")
    assert "dtype mismatch" in found["recompile_limit"].details[0]
    assert found["dynamic_recompile"].args["sizes"] == ["x[1]"] and found["dynamic_recompile"].args["frame"] == "pooled"
    assert found["recompiles"].args["frame"] == "scaled"  # dtypes, not sizes
    gb = found["graph_break"].args
    assert gb["where"].endswith("silent.py:43") and "print" in gb["reason"] + gb["hint"]


def test_advice_for_the_recorded_run(recorded):
    found = judge.findings(recorded, None)
    advice = {a.code: a for a in judge.advice(recorded, None, found, None)}
    assert advice["compile_flex"].command == "flex_attention = torch.compile(flex_attention)"
    assert advice["mark_dynamic"].command == "torch._dynamo.mark_dynamic(x, 1)" and advice["mark_dynamic"].python
    assert advice["recompile_limit"].args["knob"] == "recompile_limit" and advice["recompile_limit"].command is None
    assert "print" in advice["graph_break"].args["hint"]
    assert "compile_threads" not in advice  # no compile-worker pool on a CPU torch without Triton


@pytest.mark.parametrize("reason, knob", [
    ("Dynamo recompile limit exceeded\n  Explanation: ... exceeding the recompile_limit cache size limit "
     "(currently set to 8).", "recompile_limit"),  # 2.13
    ("recompile_limit reached", "recompile_limit"),  # 2.7-2.12
    ("cache_size_limit reached", "cache_size_limit"),  # 2.5, 2.6
    ("accumulated_cache_size_limit reached", "accumulated_cache_size_limit"),
    ("Unsupported Tensor.item() call", None),
])
def test_the_recompile_limit_in_every_torchs_words(reason, knob):
    from flexdoctor.timing.model import Compile

    c = Compile("0/8", name="f", fail_type="Unsupported", fail_reason=reason)
    p = Process(pid=1, start=0.0, log=TorchLog(pid=1, compiles=[c]))
    got = judge.process_findings(p)
    assert [f.args["knob"] for f in got if f.code == "recompile_limit"] == ([knob] if knob else [])


def test_the_recompile_limit_says_after_which_optimizer_step(recorded):
    p = recorded.top
    hit = [c for c in p.log.compiles if c.limit_hit][0]
    p.steps = [hit.start - 2.0, hit.start - 1.0, hit.start + 1.0]
    f = [f for f in judge.findings(recorded, None) if f.code == "recompile_limit"][0]
    assert f.args["steps"] == 2
    assert "after optimizer step 2" in trace_view.finding_text(f)


def test_measure_reruns_the_command_with_the_advised_setting():
    from flexdoctor.trace.model import Advice
    from flexdoctor.trace.tracer import _measure_advice

    argv = [sys.executable, "-c", "import os, time; time.sleep(0.05 if os.environ.get('FD_TEST_FAST') else 0.6)"]
    kw = {"env": dict(os.environ), "timeout": 60, "stdout": None}
    result = TraceResult(command=argv, cache_dir="", measurement=timing.measure(argv, **kw),
                         advice=[Advice("compile_threads", env={"FD_TEST_FAST": "1"})])
    _measure_advice(result, argv, kw)
    measured = result.advice[0].measured
    assert [r.env_changes for r in result.reruns] == [{"FD_TEST_FAST": "1"}]
    assert measured["without"] >= 0.6 and measured["with"] < measured["without"] - 0.3


def test_the_pool_advice_when_every_graph_hit(recorded):
    p = recorded.top
    p.pool = [Span("pool_start", p.start + 5, p.start + 5.1), Span("exit_pool", p.end + 0.001, p.end + 0.002)]
    phases.analyse(p)
    a = [a for a in judge.advice(recorded, None, [], None) if a.code == "compile_threads"][0]
    assert a.env == {"TORCHINDUCTOR_COMPILE_THREADS": "1"} and a.command.startswith("TORCHINDUCTOR_COMPILE_THREADS=1 ")
    assert a.args["exit_s"] == 0.0 and a.args["after_warm"] is False


def test_views_of_the_recorded_run(recorded, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    found = judge.findings(recorded, None)
    result = TraceResult(command=recorded.command, cache_dir=str(tmp_path), measurement=recorded, findings=found,
                         advice=judge.advice(recorded, None, found, None))
    doc = json.loads(trace_view.render_json(result))
    jsonschema.validate(doc, SCHEMA)
    assert doc["exit_code"] == 1 and doc["processes"][0]["role"] == "main"
    assert sum(ph["seconds"] for ph in doc["processes"][0]["phases"]) == pytest.approx(doc["wall_s"], rel=1e-3)
    text = trace_view.render_text(result, width=100)
    assert "Where the time went" in text and "import torch" in text and "█" in text
    assert "flex_attention ran without torch.compile 2 time(s)" in text
    assert ">>> torch._dynamo.mark_dynamic(x, 1)" in text


def test_outside_text_cannot_forge_lines_or_markup(recorded, tmp_path):
    recorded.top.log.compiles[0].name = "evil\x1b[31m<script>alert(1)</script>"
    f = Finding("graph_break", "warn", [], {"frame": "x\x1b]0;t\x07", "where": "a.py:1\nforged", "reason": "r",
                                             "hint": ""})
    result = TraceResult(command=["python", "-c", "\x1b[2J"], cache_dir=str(tmp_path), measurement=recorded,
                         findings=[f])
    text = trace_view.render_text(result)
    assert "\x1b" not in text and "\x07" not in text and "\\x1b" in text and "a.py:1\\nforged" in text
    page = trace_timeline.render(result)
    assert "<script>" not in page and "\x1b" not in page
    import xml.etree.ElementTree as ET

    ET.fromstring(trace_timeline.svg(result))  # well-formed: every piece of text escaped
    for external in ("src=", "href=", "url(", "@import", "<link", "<script"):
        assert external not in page


def test_the_cache_section_escapes_what_the_trace_said(tmp_path):
    """The section `cache why` and `trace` share: frame names, paths and torch's bypass reasons
    come from the traced program."""
    from flexdoctor.cache.why import Verdict, WhyResult
    from flexdoctor.render import why_view

    v = Verdict(compile_id="0/0", frame="f\x1b[2J", filename="/x/\x1b]0;owned\x07.py", line=3, status="bypass",
                reasons=["bypass"], bypass=["custom pass\x1b[31m"])
    why = WhyResult(command=["python"], cache_dir=str(tmp_path), verdicts=[v])
    text = "\n".join(why_view.section_lines(why, why_view.wrapper(100)))
    assert "\x1b" not in text and "\x07" not in text and text.count("\\x1b") == 3


# --------------------------------------------------------------------------- the bootstrap

def test_the_bootstrap_is_stdlib_python38_and_never_imports_flexdoctor():
    tree = ast.parse(BOOT.read_text(encoding="utf-8"), feature_version=(3, 8))
    top = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "flexdoctor" not in top and top <= set(sys.stdlib_module_names) | {"torch"}


def _boot_env(tmp_path, times_mode=0o700, pythonpath=""):
    code, times = tmp_path / "boot", tmp_path / "times"
    code.mkdir()
    times.mkdir()
    times.chmod(times_mode)
    shutil.copy(BOOT, code / "sitecustomize.py")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TORCH_TRACE")}
    env.update(PYTHONPATH=os.pathsep.join([str(code)] + ([pythonpath] if pythonpath else [])),
               FLEXDOCTOR_TRACE_BOOT=str(times))
    return env, code, times


def _records(times: Path) -> list:
    return [json.loads(line) for f in sorted(times.glob("p*.jsonl")) for line in f.read_text().splitlines()]


def test_the_bootstrap_times_imports_chains_the_users_sitecustomize_and_leaves_sys_path(tmp_path):
    mine = tmp_path / "mine"
    (mine / "torch").mkdir(parents=True)
    (mine / "sitecustomize.py").write_text("import sys\nsys.stderr.write('user sitecustomize ran\\n')\n")
    (mine / "torch" / "__init__.py").write_text("import time\ntime.sleep(0.2)\n")  # a stand-in torch
    env, code, times = _boot_env(tmp_path, pythonpath=str(mine))
    probe = ("import sys, torch\nprint(repr(sys.path)); print(type(torch.__loader__).__name__, "
             "type(torch.__spec__.loader).__name__)")
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "user sitecustomize ran" in done.stderr
    path_line, loaders = done.stdout.splitlines()
    assert str(code) not in path_line and str(mine) in path_line
    assert "_Timed" not in loaders  # the real loader is back before torch's code ran
    recs = _records(times)
    kinds = [r["k"] for r in recs]
    assert kinds == ["boot", "import", "end", "atexit"], recs
    imp = recs[1]
    assert imp["m"] == "torch" and imp["t1"] - imp["t0"] >= 0.19
    assert recs[0]["start"] <= recs[0]["t"] <= recs[2]["t"] <= recs[3]["t"]


def test_the_bootstrap_writes_nothing_into_a_folder_others_can_write(tmp_path):
    env, _, times = _boot_env(tmp_path, times_mode=0o777)
    done = subprocess.run([sys.executable, "-c", "print('ok')"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "ok\n" and list(times.iterdir()) == []


def test_a_forked_child_does_not_write_into_its_parents_records(tmp_path):
    env, _, times = _boot_env(tmp_path)
    code = ("import os, sys\npid = os.fork()\nif pid == 0:\n    sys.exit(0)\nos.waitpid(pid, 0)\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [r["k"] for r in _records(times)] == ["boot", "end", "atexit"]


def test_measure_times_a_plain_python_command():
    m = timing.measure([sys.executable, "-c", "import time; time.sleep(0.3)"], env=dict(os.environ))
    p = m.top
    assert m.returncode == 0 and p.role == "main" and p.boot is not None and m.booted
    assert m.wall >= 0.3 and sum(ph.seconds for ph in p.phases) == pytest.approx(m.wall, abs=1e-4)
    assert p.seconds("script") >= 0.29 and p.seconds("other") == 0


def test_measure_feeds_a_workers_lines_as_warm_cache_verification_would():
    lines = []
    m = timing.measure([sys.executable, "-c", "import sys; print('@@one'); sys.stderr.write('two\\n')"],
                       env=dict(os.environ), on_line=lines.append)
    assert m.returncode == 0 and sorted(lines) == ["@@one", "two"] and m.top.phases


def test_measure_a_command_that_cannot_start():
    m = timing.measure(["no-such-command-flexdoctor-trace"])
    assert not m.started and m.start_error and m.processes == []


# --------------------------------------------------------------------------- the CLI

def _cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TORCHINDUCTOR_COMPILE_THREADS", None)  # the pool test needs torch's default
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.mark.parametrize("args, words", [
    ((), "give the command to trace after --"),
    (("--format", "xml", "--", "true"), "--format xml"),
    (("--", "no-such-command-flexdoctor"), "could not start"),
])
def test_cli_usage_errors_exit_2(args, words, tmp_path):
    done = _cli("trace", "--cache-dir", str(tmp_path / "c"), *args)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


def test_cli_json_for_a_command_that_fails(tmp_path):
    done = _cli("trace", "--cache-dir", str(tmp_path / "c"), "--format", "json", "--", sys.executable, "-c",
                "import sys; print('hi'); sys.exit(3)")
    doc = json.loads(done.stdout)
    assert done.returncode == 1 and doc["returncode"] == 3 and "hi" in done.stderr
    assert [f["code"] for f in doc["findings"]] == ["command_failed"] and doc["findings"][0]["args"]["status"] == 3


def test_one_quoted_command_is_split_without_a_shell():
    from flexdoctor.cli.trace import command_argv

    assert command_argv(["--", "python train.py --lr '3e-4 x'"]) == ["python", "train.py", "--lr", "3e-4 x"]
    assert command_argv(["python", "a b.py"]) == ["python", "a b.py"]  # several words: as given


# --------------------------------------------------------------------------- real CPU runs

def _has_flex() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("torch.nn.attention.flex_attention") is not None
    except (ImportError, ValueError):
        return False


needs_flex = pytest.mark.skipif(not _has_flex(), reason="torch with flex_attention is not installed")


@pytest.fixture(scope="module")
def warm_root(tmp_path_factory):
    """One CPU flex config warmed by warm-cache's real worker, shared by the tests below."""
    from flexdoctor import workload
    from flexdoctor.cache import warm

    root = tmp_path_factory.mktemp("trace-cache") / "cache"
    cfg = workload.make(dtype="float32", head_dim=16, heads=2, seq_len=128, batch=1, mask="causal", device="cpu",
                        backward=False)
    out = warm.Outcome(cfg)
    warm.Runner(sys.executable, str(root), 1, timeout=600).compile([out])
    assert not out.failed, out.error
    return root


@pytest.mark.slow
@needs_flex
def test_real_script_with_every_silent_failure(tmp_path):
    done = _cli("trace", "--cache-dir", str(tmp_path / "c"), "--format", "json", "--", sys.executable, str(SILENT),
                "eager_flex", "limit", "graph_break", "dynamic", "train")
    doc = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr[-3000:]
    codes = {f["code"] for f in doc["findings"]}
    assert {"flex_uncompiled", "recompile_limit", "graph_break", "dynamic_recompile"} <= codes
    main = doc["processes"][0]
    assert main["first_forward_end"] == "backward" and main["optimizer_steps"] == 3
    assert sum(ph["seconds"] for ph in main["phases"]) == pytest.approx(doc["wall_s"], rel=1e-3)


@pytest.mark.slow
@needs_flex
def test_real_clean_warm_step_reports_no_problem_and_phases_add_up(warm_root):
    from flexdoctor import trace

    t0 = time.monotonic()
    result = trace.run([sys.executable, str(STEP), "base"], str(warm_root), cache_source="--cache-dir")
    outer = time.monotonic() - t0
    assert result.findings == [] and result.exit_code == 0, [(f.code, f.args) for f in result.findings]
    assert [v.status for v in result.why.verdicts] == ["hit"]
    p = result.measurement.top
    total = sum(ph.seconds for ph in p.phases)
    assert 0.9 * outer <= total <= outer  # the phases explain the run, measured from outside too
    assert p.seconds("other") == 0 and p.seconds("import_torch") > 0 and p.seconds("kernel_load") > 0


@pytest.mark.slow
@needs_flex
def test_real_cache_misses_by_dtype_and_score_mod_against_the_warm_cache(warm_root):
    done = _cli("trace", "--cache-dir", str(warm_root), "--format", "json", "--", sys.executable, str(STEP),
                "base", "bf16", "softcap")
    doc = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr[-3000:]
    graphs = doc["cache"]["graphs"]
    assert [g["status"] for g in graphs] == ["hit", "miss", "miss"]
    assert [d["kind"] for d in graphs[1]["differences"]] == ["dtype"]
    assert [d["kind"] for d in graphs[2]["differences"]] == ["mod_code"]
    assert sorted(f["code"] for f in doc["findings"]) == ["cache_miss", "recompiles"]  # flex_attention, twice
    recompiled = [f for f in doc["findings"] if f["code"] == "recompiles"][0]
    assert recompiled["args"]["frame"] == "flex_attention" and recompiled["args"]["count"] == 2
    warm = [a for a in doc["advice"] if a["code"] == "warm_cache"][0]
    assert warm["command"].startswith("flexdoctor warm-cache --cache-dir ")


@pytest.mark.slow
def test_real_compile_worker_pool_shutdown_is_timed_and_the_setting_measured(tmp_path):
    """The headline of issue 23 on CPU: a process that started Inductor's compile-worker pool pays
    for its shutdown after the last line; trace times it, advises TORCHINDUCTOR_COMPILE_THREADS=1,
    and --measure runs the command again with it (no pool, no shutdown)."""
    done = _cli("trace", "--cache-dir", str(tmp_path / "c"), "--format", "json", "--measure", "--",
                sys.executable, str(POOL))
    doc = json.loads(done.stdout)
    assert doc["returncode"] == 0, done.stderr[-3000:]
    main = {ph["name"]: ph["seconds"] for ph in doc["processes"][0]["phases"]}
    assert main["exit_pool"] > 0 and main["pool_start"] > 0 and "cache" not in main
    pool = [a for a in doc["advice"] if a["code"] == "compile_threads"][0]
    assert pool["args"]["after_warm"] is False and pool["measured"]["exit_pool_without"] > 0
    assert pool["measured"]["exit_pool_with"] == 0 and pool["measured"]["with"] is not None
    assert [r["env_changes"] for r in doc["reruns"]] == [{"TORCHINDUCTOR_COMPILE_THREADS": "1"}]
    assert doc["exit_code"] == 0  # advice is no finding


@pytest.mark.slow
def test_real_torchrun_two_cpu_ranks_are_timed_one_by_one(tmp_path):
    done = _cli("trace", "--cache-dir", str(tmp_path / "c"), "--format", "json", "--", sys.executable, "-m",
                "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(RANKS), timeout=300)
    doc = json.loads(done.stdout)
    assert doc["returncode"] == 0, done.stderr[-3000:]
    roles = sorted((p["role"], p["rank"]) for p in doc["processes"] if p["role"] != "helper")
    assert roles == [("launcher", None), ("rank", 0), ("rank", 1)]
    for p in doc["processes"]:
        if p["role"] == "rank":
            names = {ph["name"] for ph in p["phases"]}
            assert {"interpreter", "import_torch", "dynamo"} <= names
            assert sum(ph["seconds"] for ph in p["phases"]) == pytest.approx(p["wall_s"], rel=1e-3)
