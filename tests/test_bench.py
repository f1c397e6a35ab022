"""flexdoctor bench: FLOP count, rendering, usage errors, restart after a crashed item, and one
real tiny CPU run (CI). The GPU run is marked `gpu`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from flexdoctor import workload as wl
from flexdoctor.cli import app
from flexdoctor.deep import bench as b
from flexdoctor.render import bench_view


def _case(index=0, **kw):
    base = dict(batch=2, heads=24, kv_heads=24, seq_len=4096, head_dim=128, dtype="bfloat16", mask="none")
    base.update(kw)
    return b.Case(index, wl.make(device="cuda", **base))


def test_flops_halved_for_causal_and_3_5x_for_fwdbwd(monkeypatch):
    import importlib.util

    monkeypatch.syspath_prepend(str(b.WORKER.parent))  # as when run as a file: `import _wire` finds its sibling
    spec = importlib.util.spec_from_file_location("bw", b.WORKER)
    bw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bw)
    case = {"batch": 1, "heads": 2, "seq_len": 8, "head_dim": 4, "mask": "none"}
    assert bw.attention_flops(case, "fwd") == 4 * 1 * 2 * 8 * 8 * 4
    assert bw.attention_flops({**case, "mask": "causal"}, "fwd") == 2 * 1 * 2 * 8 * 8 * 4
    assert bw.attention_flops(case, "fwdbwd") == 3.5 * 4 * 1 * 2 * 8 * 8 * 4


def _report():
    c0, c1 = _case(), _case(index=1, seq_len=16384)
    M = b.Measurement
    res = [
        M(0, "flex-compiled", "fwdbwd", "ok", ms=2.5, tflops=300.0, peak_bytes=int(0.32 * 2**30), first_call_s=9.9,
          compiled=True),
        M(0, "flex-eager", "fwdbwd", "ok", ms=46.2, tflops=16.0, peak_bytes=int(10.1 * 2**30), first_call_s=0.5),
        M(0, "sdpa-flash", "fwdbwd", "ok", ms=1.5, tflops=500.0, peak_bytes=int(0.31 * 2**30), first_call_s=0.01),
        M(0, "sdpa-math", "fwdbwd", "unavailable", reason="refused"),
        M(1, "flex-compiled", "fwdbwd", "ok", ms=35.0, tflops=330.0),
        M(1, "flex-eager", "fwdbwd", "oom", reason="CUDA out of memory"),
        M(1, "sdpa-flash", "fwdbwd", "ok", ms=22.0, tflops=500.0),
        M(1, "flash-attn", "fwdbwd", "crash", reason="crashed"),
    ]
    return b.BenchReport(cases=[c0, c1], results=res, env={"device": "cuda", "device_name": "NVIDIA H100",
                         "torch": "2.11.0+cu130", "cuda": "13.0", "triton": "3.6.0"}, started_at="2026-11-22T00:00:00+00:00",
                         settings={"reps": 50})


def test_gap_line_shows_eager_vs_compiled_vs_sdpa():
    rep = _report()
    rows0 = [r for r in rep.results if r.case == 0]
    rows1 = [r for r in rep.results if r.case == 1]
    assert bench_view.gap_line(rows0) == "fwd+bwd: eager flex 46.20 ms · compiled flex 2.50 ms · SDPA (flash) 1.50 ms"
    assert "eager flex out of memory" in bench_view.gap_line(rows1)


def test_renderers():
    rep = _report()
    text = bench_view.render_text(rep, color=False, width=120)
    assert "NVIDIA H100" in text and "flex-eager" in text and "out of memory" in text and "█" in text
    assert "\x1b[" not in text
    data = json.loads(bench_view.render_json(rep))
    assert data["schema_version"] == b.BENCH_SCHEMA_VERSION and len(data["results"]) == 8
    md = bench_view.render_markdown(rep)
    assert "| B=2 H=24 L=16384 D=128 bfloat16 mask=none | flex-eager |" in md and "OOM" in md
    assert rep.failed  # the crashed flash-attn item


def test_a_dead_worker_is_data_and_worded_when_shown():
    from flexdoctor import text

    rep = _report()
    dead = b.Measurement(1, "sdpa-math", "fwd", "timeout", died_in="item 7")
    rep.results.append(dead)
    assert json.loads(bench_view.render_json(rep))["results"][-1]["died_in"] == "item 7"  # data, no words
    for lang in text.available():
        text.set_language(lang)
        try:
            said = bench_view.died_reason(dead)
            assert said == text.t("bench.worker_failed", what=text.t("deep-run.hung"), stage="item 7")
            assert text.t("bench.status_timeout") in bench_view.render_markdown(rep)
            assert text.t("bench.md_shape") in bench_view.render_markdown(rep)
        finally:
            text.set_language(None)


@pytest.mark.parametrize("args,needle", [
    (["--dtype", "fp64"], "--dtype"),
    (["--mask", "sliding"], "--mask"),
    (["-L", "abc"], "--seq-len"),
    (["--heads", "16", "--kv-heads", "5"], "--kv-heads"),
    (["--impl", "nope"], "--impl"),
    (["--format", "xml"], "--format"),
    (["--device", "tpu"], "--device"),
    (["--python", "/nonexistent/python"], "--python"),
])
def test_usage_errors_exit_2(args, needle):
    result = CliRunner().invoke(app, ["bench", *args])
    assert result.exit_code == 2
    assert needle in result.output and "Traceback" not in result.output


FAKE_WORKER = textwrap.dedent("""
    import json, os, signal, sys
    cfg = json.loads(sys.argv[1])
    print("@@flexdoctor-stage import torch", flush=True)
    print("@@flexdoctor-part " + json.dumps({"env": {"device": "cpu", "torch": "fake"}}), flush=True)
    for i in range(cfg["start"], len(cfg["items"])):
        case, impl, mode = cfg["items"][i]
        print("@@flexdoctor-stage item %d %s %s" % (i, impl, mode), flush=True)
        if impl == "sdpa-math" and mode == "fwd":
            os.kill(os.getpid(), signal.SIGSEGV)
        print("@@flexdoctor-part " + json.dumps({"item": i, "case": case["index"], "impl": impl, "mode": mode,
              "status": "ok", "ms": 1.0, "tflops": 0.1}), flush=True)
    print("@@flexdoctor-result " + json.dumps({"env": {}, "seed": 1}), flush=True)
""")


def test_a_crashing_item_does_not_lose_the_rest(tmp_path, monkeypatch):
    worker = tmp_path / "worker.py"
    worker.write_text(FAKE_WORKER)
    monkeypatch.setattr(b, "WORKER", worker)
    events = []
    rep = b.run(sys.executable, [_case(seq_len=128)], ["flex-compiled", "sdpa-math", "sdpa-flash"], ["fwd", "fwdbwd"],
                on_event=lambda i, n, m: events.append((i, m.status)))
    status = {(r.impl, r.mode): r.status for r in rep.results}
    assert status[("sdpa-math", "fwd")] == "crash"
    assert all(s == "ok" for k, s in status.items() if k != ("sdpa-math", "fwd"))
    assert rep.failed and (2, "crash") in events


@pytest.mark.slow
def test_real_cpu_bench_cli(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "flexdoctor", "bench", "--device", "cpu", "-L", "128", "-d", "16", "--heads", "2",
         "--batch", "1", "--mask", "causal", "--reps", "3", "--impl", "flex-compiled,flex-eager,sdpa-flash,sdpa-math",
         "--format", "json", "-o", str(out)],
        capture_output=True, text=True, timeout=400, env={**__import__("os").environ, "CI": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["env"]["device"] == "cpu"
    got = {(r["impl"], r["mode"]): r for r in data["results"]}
    fc = got[("flex-compiled", "fwd")]
    assert fc["status"] == "ok" and fc["ms"] > 0 and fc["compiled"] is True and fc["tflops"] > 0
    assert got[("sdpa-math", "fwdbwd")]["status"] == "ok"
    # CPU flex is inference only: torch refuses the backward, which is a result, not a failure
    assert got[("flex-compiled", "fwdbwd")]["status"] == "unavailable"
    assert "[1/8]" in proc.stderr and "Traceback" not in proc.stderr


def _cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs an NVIDIA GPU")
def test_real_gpu_bench():
    cases = b.grid(2, 16, 16, [1024], [64], ["bfloat16"], ["causal"])
    rep = b.run(sys.executable, cases, reps=20)
    got = {(r.impl, r.mode): r for r in rep.results}
    for key in (("flex-compiled", "fwd"), ("flex-compiled", "fwdbwd"), ("flex-eager", "fwdbwd"),
                ("sdpa-efficient", "fwdbwd"), ("sdpa-math", "fwd")):
        assert got[key].status == "ok", (key, got[key].reason)
        assert got[key].ms > 0 and got[key].peak_bytes > 0
    assert got[("flex-compiled", "fwd")].compiled is True
    # the gap users care about: compiled flex beats eager flex
    assert got[("flex-compiled", "fwdbwd")].ms < got[("flex-eager", "fwdbwd")].ms
    assert not rep.failed


def test_pass_is_the_flag_and_mode_its_deprecated_spelling():
    """bench's --mode (fwd/fwdbwd) is now --pass: warm-cache's --mode is the compile mode."""
    env = {**__import__("os").environ, "PYTHONPATH": str(__import__("pathlib").Path(__file__).resolve().parents[1])}
    run = lambda *a: subprocess.run([sys.executable, "-m", "flexdoctor", "bench", *a], capture_output=True,  # noqa: E731
                                    text=True, timeout=60, env=env)
    old = run("--mode", "sideways")
    assert old.returncode == 2 and "--mode is now --pass" in old.stderr and "--pass sideways" in old.stderr
    both = run("--mode", "fwd", "--pass", "fwd")
    assert both.returncode == 2 and "give --pass only" in both.stderr
    assert run("-L", "0").returncode == 2


def test_case_json_is_unchanged_by_the_workload_model():
    """bench JSON schema 1: cases[] keep their keys; a case read back is the same case."""
    c = _case(index=3, heads=32, kv_heads=8, mask="causal")
    assert c.to_dict() == {"index": 3, "batch": 2, "heads": 32, "kv_heads": 8, "seq_len": 4096, "head_dim": 128,
                           "dtype": "bfloat16", "mask": "causal"}
    assert b.Case.from_dict(c.to_dict()).to_dict() == c.to_dict()
    # SDPA and flash-attn take head dims flex does not: bench keeps them.
    assert b.grid(1, 2, None, [128], [8], ["float32"], ["none"], device="cpu")[0].workload.head_dim == 8
