"""render/warm_view.py: the warm-cache report from a recorded result (no torch, no workers)."""

from __future__ import annotations

from flexdoctor import workload as wl
from flexdoctor.cache import plan as planner
from flexdoctor.cache import warm
from flexdoctor.cache.fingerprint import Fingerprint
from flexdoctor.render import warm_view

A = wl.make(dtype="bf16", heads=32, kv_heads=8, seq_len=4096, mask="causal")
B = A.replace(mode="max-autotune-no-cudagraphs")
C = A.replace(kernel_options={"BLOCK_M": 64})
HIT = {"fxgraph_cache_hit": 1, "fxgraph_cache_miss": 0, "autograd_cache_hit": 1, "autograd_cache_miss": 0}


def result(**kw):
    env = planner.WarmEnv(cache_dir="/data/ind", cache_source="--cache-dir", temporary=False,
                          fingerprint=Fingerprint(torch="2.11.0+cu130", gpu_name="NVIDIA H100 80GB HBM3"))
    steps = (planner.Step(A, planner.WARM, "warm"), planner.Step(B, planner.COMPILE, "new"),
             planner.Step(C, planner.COMPILE, "new"))
    plan = planner.Plan(steps=steps, env=env, jobs=2)
    outs = warm.outcomes(plan)
    outs[1].state, outs[1].cold, outs[1].warm = "done", {"first_call_s": 16.4, "wall_s": 20.0, "started": 5.0}, {"ok": True, "first_call_s": 1.2,
                                                                                  "counters": HIT}
    outs[2].state, outs[2].error, outs[2].error_stage = "failed", "Traceback...\nOutOfResources: shared memory", \
        "first forward"
    return warm.WarmResult(plan, outs, compile_wall_s=20.0, manifest_path="/data/ind/flexdoctor-manifest.json", **kw)


def test_report_names_each_config_with_its_compile_options_and_status():
    r = result()
    text = warm_view.render(r, width=160)
    assert B.name in text and "max-autotune-no-cudagraphs" in text and "BLOCK_M=64" in text
    row = {ln.split("│")[1].strip(): ln for ln in text.splitlines() if ln.startswith("│")}
    assert "already warm" in row[A.name] and "warm (verified)" in row[B.name] and "failed" in row[C.name]
    assert "1/0 (aot 1/0)" in row[B.name]
    assert "✗ " + C.name + ": first forward: OutOfResources: shared memory" in text
    assert "already warm: 1 config(s) for this environment (torch 2.11.0+cu130, NVIDIA H100 80GB HBM3)" in text
    assert "warm-up: 20.00 s for 2 config(s) with 2 job(s)" in text  # one time: the compile process's wall
    assert "20.00" in row[B.name] and "16.40" not in row[B.name]
    assert "export TORCHINDUCTOR_CACHE_DIR=/data/ind" in text
    assert "--run" in text  # the note for models compiled whole
    assert r.failed  # a failed config: exit 1


def test_skipped_configs_do_not_fail_and_start_nothing():
    r = result()
    for o in r.outcomes[1:]:
        o.state, o.error, o.cold, o.warm = "skipped", None, None, None
    assert not r.failed and all(o.status() == "already warm" for o in r.outcomes)


def test_says_why_a_known_config_compiled_again():
    r = result()
    steps = list(r.plan.steps)
    steps[1] = planner.Step(B, planner.COMPILE, "environment-changed", "torch 2.11.0+cu130 -> 2.12.0+cu130")
    r.plan = planner.Plan(steps=tuple(steps), env=r.plan.env, jobs=2)
    text = warm_view.render(r, width=160)
    assert "compiled again: 1 config(s) were warmed for another environment (torch 2.11.0+cu130 -> 2.12.0+cu130)" in text


def _on_gpus(count, run_argv=None, device="cuda"):
    r = result()
    env = planner.WarmEnv(cache_dir="/data/ind", cache_source="--cache-dir", gpu_count=count)
    steps = tuple(planner.Step(s.workload.replace(device=device), s.action, s.reason) for s in r.plan.steps)
    r.plan = planner.Plan(steps=steps, env=env, jobs=2, run_argv=run_argv)
    return warm_view.render(r, width=400)


def test_several_gpus_note_that_other_ranks_compile_again():
    text = _on_gpus(8)
    assert "this node has 8 GPUs and these configs were compiled on GPU 0" in text
    assert '--run "torchrun --standalone --nproc-per-node 8 train.py --max-steps 1"' in text
    assert "this node has" not in _on_gpus(1)  # one GPU: every rank is GPU 0
    assert "this node has" not in _on_gpus(None)  # NVML could not tell
    assert "this node has" not in _on_gpus(8, device="cpu")
    assert "this node has" not in _on_gpus(8, run_argv=("torchrun", "step.py"))  # --run warmed the job itself


def test_several_gpus_note_in_japanese(monkeypatch):
    from flexdoctor import text

    monkeypatch.setattr(text, "_chosen", "ja")
    out = _on_gpus(4)
    assert "このノードには GPU が 4 基あり" in out and "this node has" not in out
    assert "--nproc-per-node 4" in out


def test_narrow_terminal_wraps_names_and_keeps_numbers_whole(monkeypatch):
    """At 100 columns the numbers are never cut ('16.…'); a config's name wraps, whole."""
    from flexdoctor import text

    for lang in ("en", "ja", "hi"):
        monkeypatch.setattr(text, "_chosen", lang)
        out = warm_view.render(result(), width=100)
        lines = out.splitlines()
        assert "20.00" in out and "1.20" in out and "…" not in "".join(ln for ln in lines if ln.startswith("│"))
        from rich.cells import cell_len

        assert max(cell_len(ln) for ln in lines if ln.startswith(("│", "┃"))) <= 100
        first = "".join(ln.split("│")[1].replace(" ", "") for ln in lines if ln.startswith("│"))
        for w in (A, B, C):
            assert w.name.replace(" ", "") in first, (lang, w.name)
