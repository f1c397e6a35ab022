"""`flexdoctor cache why`: torch's structured trace read back (recorded on torch 2.13 CPU), warmed
keys compared with a run's lookups, the verdicts rendered; and one real CPU run end to end.

The recorded traces (tests/fixtures/trace/, see README.md there) come from two real processes:
the warm-cache worker compiling `fp32 B1 H2 L128 D16 causal fwd cpu`, then
tests/data/why/flex_step.py running `base bf16 L256 softcap model bypass` on that cache.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flexdoctor.cache import keys, manifest, trace, why
from flexdoctor.render import why_view

HERE = Path(__file__).parent
FIX = HERE / "fixtures" / "trace"
STEP = HERE / "data" / "why" / "flex_step.py"
WARM_LABEL = "fp32 B1 H2 L128 D16 causal fwd cpu"


def unpack(name: str, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for p in (FIX / name).glob("*.gz"):
        (dst / p.name[:-3]).write_text(gzip.open(p, "rt", encoding="utf-8").read(), encoding="utf-8")
    return dst


@pytest.fixture
def warmed_root(tmp_path):
    root = tmp_path / "cache"
    n = keys.record(str(root), trace.read(str(unpack("warm_fp32_causal_fwd_cpu", tmp_path / "warm"))),
                    {"kind": "config", "label": WARM_LABEL}, {"torch": "2.13.0+cpu", "device": "cpu"})
    assert n == 1
    return root


@pytest.fixture
def step(tmp_path):
    return trace.read(str(unpack("step_variants_cpu", tmp_path / "step")))


def verdicts(step, root):
    vs, problem = why.explain(step, keys.load(str(root)), str(root))
    assert problem is None
    return vs


# --------------------------------------------------------------------------- reading the trace

def test_trace_groups_lookups_by_compiled_graph(step):
    assert step.files == 1 and step.torch_version == "2.13.0+cpu"
    ids = [(g.compile_id, g.frame) for g in step.graphs]
    # torch._dynamo.reset() before "bypass" starts the ids at 0/0 again: a graph of its own
    assert ids == [("0/0", "flex_attention"), ("0/1", "flex_attention"), ("0/2", "flex_attention"),
                   ("0/3", "flex_attention"), ("1/0", "forward"), ("0/0", "flex_attention")]
    base = step.graphs[0]
    assert base.filename.endswith("torch/nn/attention/flex_attention.py")
    assert [(lk.cache, lk.state) for lk in base.lookups] == [("aotautograd", "miss"), ("fx_graph", "hit")]
    fx = base.lookups[1]
    assert fx.backward is False and len(fx.components) > 100 and "gm" in fx.components
    assert "class score_mod_0" in base.code


def test_torch_25_and_26_record_names(tmp_path):
    """2.5 wrote the state into the payload of `fx_graph_cache_hash` / `aotautograd_cache_hash`
    (torch/_inductor/codecache.py FxGraphCache.load, 2.5.1); 2.6 kept the AOT one."""
    def rec(name, payload, meta=""):
        body = "\n".join("\t" + ln for ln in json.dumps(payload, indent=0).splitlines())
        return (f'V1123 10:51:05.457000 20448 torch/_inductor/codecache.py:1382] {{"artifact": {{"name": "{name}", '
                f'"encoding": "json"}}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0{meta}, '
                '"has_payload": "x"}\n'
                + body + "\n")
    text = (
        'V1123 10:51:04 20448 torch/_dynamo/convert_frame.py:895] {"dynamo_start": {"stack": [{"line": 7, '
        '"name": "step", "filename": "train.py"}]}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n'
        + rec("aotautograd_cache_hash", {"key": "aabc", "cache_state": "bypass", "components": []})
        + rec("fx_graph_cache_hash", {"key": "fabcdefgh", "cache_state": "miss",
                                      "components": ["[h1] gm: def forward(self): pass",
                                                     "[h2] fx_kwargs[is_backward]: True"]})
        + "garbage line ] {not json\n\tstray payload\n")
    (tmp_path / "dedicated_log_torch_trace_rank_3_abc.log").write_text(text)
    tr = trace.read(str(tmp_path))
    g = tr.graphs[0]
    assert (g.frame, g.filename, g.rank) == ("step", "train.py", 3)
    assert [(lk.cache, lk.state) for lk in g.lookups] == [("aotautograd", "bypass"), ("fx_graph", "miss")]
    assert g.lookups[1].backward is True and g.lookups[1].components["gm"] == ("h1", "def forward(self): pass")


# --------------------------------------------------------------------------- verdicts

def test_same_config_hits(step, warmed_root):
    v = verdicts(step, warmed_root)[0]
    assert v.status == "hit" and v.via == "fx_graph" and not v.whole_model
    assert "aot_miss_fx_hit" in v.reasons  # AOT autograd's own key missed; the Inductor graph hit


def test_changed_dtype_is_a_miss_naming_the_dtype(step, warmed_root):
    v = verdicts(step, warmed_root)[1]
    assert v.status == "miss" and v.closest == WARM_LABEL and v.closest_source == "config"
    assert [(d.kind, d.warmed, d.now) for d in v.differences] == [("dtype", "torch.float32", "torch.bfloat16")]


def test_changed_sequence_length_is_a_shape_miss(step, warmed_root):
    v = verdicts(step, warmed_root)[2]
    kinds = {d.kind for d in v.differences}
    assert v.status == "miss" and "shape" in kinds and "dtype" not in kinds
    qkv = [d for d in v.differences if d.word == "tensor_inputs" and d.args == {"which": "0, 1, 2"}][0]
    assert (qkv.warmed, qkv.now) == ("[1, 2, 128, 16]", "[1, 2, 256, 16]")


def test_changed_score_mod_code_is_named(step, warmed_root):
    v = verdicts(step, warmed_root)[3]
    assert v.status == "miss"
    assert [(d.kind, d.name) for d in v.differences] == [("mod_code", "score_mod_0")]
    assert "torch.tanh" in v.differences[0].now and "return child" in v.differences[0].warmed


def test_whole_model_compile_needs_warm_cache_run(step, warmed_root):
    v = verdicts(step, warmed_root)[4]
    assert v.status == "miss" and v.whole_model and v.frame == "forward"
    assert "whole_model" in v.reasons and v.differences == []


def test_whole_model_already_warmed_by_run_but_entry_gone(step, warmed_root):
    """The very key was recorded by `warm-cache --run`, but the cache dir no longer holds it."""
    keys.record(str(warmed_root), trace.Trace(graphs=[step.graphs[4]]), {"kind": "run", "label": "python train.py"})
    v = verdicts(step, warmed_root)[4]
    assert "entry_gone" in v.reasons and v.closest is None


def test_whole_model_is_compared_with_what_warm_cache_run_compiled(step, warmed_root):
    """A `--run` entry of the same model in another dtype: the difference is named, not 'whole model'."""
    import copy

    other = copy.deepcopy(step.graphs[4])
    lk = [x for x in other.lookups if x.cache == "fx_graph"][0]
    lk.key = "f" + "x" * 51
    name = "example_inputs[2]"
    h, value = lk.components[name]
    lk.components[name] = ("other", value.replace("torch.float32", "torch.float64"))
    keys.record(str(warmed_root), trace.Trace(graphs=[other]), {"kind": "run", "label": "python train.py"})
    v = verdicts(step, warmed_root)[4]
    assert v.whole_model and "whole_model" not in v.reasons and v.closest_source == "run"
    assert [(d.kind, d.warmed, d.now) for d in v.differences] == [("dtype", "torch.float64", "torch.float32")]


def test_bypass_reports_torchs_words(step, warmed_root):
    v = verdicts(step, warmed_root)[5]
    assert v.status == "bypass" and v.bypass == ["Unsupported post grad custom pass"]


def test_nothing_warmed_says_so(step, tmp_path):
    vs, _ = why.explain(step, [], str(tmp_path))
    assert "no_warmed" in vs[1].reasons and vs[1].closest is None


@pytest.mark.parametrize("make, problem", [
    (lambda d: None, "no_trace"),
    (lambda d: (d / "dedicated_log_torch_trace_x.log").write_text(
        'V1 0 1 a.py:1] {"artifact": {"name": "torch_version", "encoding": "json"}, "has_payload": "x"}\n'
        '\t{"pytorch_version": "2.12.0"}\n'), "no_compile"),
    (lambda d: (d / "dedicated_log_torch_trace_x.log").write_text(
        'V1 0 1 a.py:1] {"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n'),
     "no_lookups"),
])
def test_problems_when_nothing_can_be_judged(tmp_path, make, problem):
    make(tmp_path)
    vs, got = why.explain(trace.read(str(tmp_path)), [], str(tmp_path))
    assert vs == [] and got == problem


def test_disabled_cache_is_the_problem(tmp_path):
    (tmp_path / "dedicated_log_torch_trace_x.log").write_text(
        'V1 0 1 a.py:1] {"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n')
    _, got = why.explain(trace.read(str(tmp_path)), [], str(tmp_path), ["TORCHINDUCTOR_FX_GRAPH_CACHE=0"])
    assert got == "cache_disabled"


# --------------------------------------------------------------------------- sidecar files

def test_keys_load_skips_junk_and_links(warmed_root, tmp_path):
    d = Path(keys.directory(str(warmed_root)))
    (d / "fx-junk.json").write_text("{not json")
    (d / "fx-other.json").write_text(json.dumps({"format": 99, "key": "x", "components": {}}))
    (d / "fx-link.json").symlink_to(next(d.glob("fx-f*.json")))
    assert [w.label for w in keys.load(str(warmed_root))] == [WARM_LABEL]


def test_keys_dir_is_not_a_cache_entry_and_clear_cache_identifies_it(warmed_root):
    """clear-cache deletes flexdoctor-keys/ files it identifies (name and content) with the
    Inductor cache or --manifest, and keeps anything else put there."""
    from flexdoctor.cache import clear

    assert manifest.entries(str(warmed_root)) == set()
    d = Path(keys.directory(str(warmed_root)))
    (d / "notes.txt").write_text("mine")
    (d / ("fx-f" + "a" * 51 + ".json")).write_text(json.dumps({"format": 1, "key": "other"}))  # wrong key
    env = {"TORCHINDUCTOR_CACHE_DIR": str(warmed_root), "HOME": str(warmed_root.parent)}
    for kinds in (["inductor"], ["manifest"]):
        cp = [c for c in clear.plan(kinds, env).caches if c.kind == kinds[0]][0]
        deleted = {f for u in cp.units for f, _ in u.files}
        kept = {k.rel: k.reason for k in cp.kept}
        warmed = next(p.name for p in d.glob("fx-f*.json") if "a" * 51 not in p.name)
        assert f"flexdoctor-keys/{warmed}" in deleted, (kinds, deleted)
        assert kept.get("flexdoctor-keys/notes.txt") == "unknown"
        assert kept.get(f"flexdoctor-keys/fx-f{'a' * 51}.json") == "content"


# --------------------------------------------------------------------------- rendering

def _result(step, root, **kw):
    vs, problem = why.explain(step, keys.load(str(root)), str(root))
    return why.WhyResult(command=["python", "train.py", "--lr", "3e-4"], cache_dir=str(root),
                         cache_source="--cache-dir",
                         returncode=0, seconds=12.5, torch_version=step.torch_version, warmed=1, verdicts=vs,
                         problem=problem, **kw)


def test_text_names_each_graph_and_the_fix(step, warmed_root):
    text = why_view.render_text(_result(step, warmed_root), width=100)
    assert "✓ graph 0/0: flex_attention (torch/nn/attention/flex_attention.py:2236): hit" in text
    assert "dtype: tensor inputs 0, 1, 2: torch.float32 -> torch.bfloat16" in text
    flat = " ".join(text.split())
    assert "shape: integer tensor input 3 (+7 more: block mask): [1, 1, 1, 1] -> [1, 1, 2, 2]" in flat
    assert "Unsupported post grad custom pass" in text
    assert "1 hit, 4 missed, 1 bypassed (of 6 compiled graph(s))" in text
    assert f"flexdoctor warm-cache --cache-dir {warmed_root} --run 'python train.py --lr 3e-4'" in text


def test_json_is_versioned_and_complete(step, warmed_root):
    r = _result(step, warmed_root)
    doc = json.loads(why_view.render_json(r))
    assert doc["schema_version"] == why.SCHEMA_VERSION and doc["summary"] == {"hit": 1, "miss": 4, "bypass": 1,
                                                                              "uncached": 0}
    assert [g["status"] for g in doc["graphs"]] == ["hit", "miss", "miss", "miss", "miss", "bypass"]
    assert doc["graphs"][1]["differences"] == [{"kind": "dtype", "name": "example_inputs", "warmed": "torch.float32",
                                                "now": "torch.bfloat16", "word": "tensor_inputs",
                                                "args": {"which": "0, 1, 2"}}]
    assert doc["graphs"][5]["bypass_reasons"] == ["Unsupported post grad custom pass"]
    assert r.exit_code == 1


def test_problem_rendered_without_graphs(tmp_path):
    r = why.WhyResult(command=["python", "x.py"], cache_dir=str(tmp_path), problem="no_lookups", compiles=2)
    text = why_view.render_text(r)
    assert "torch compiled 2 graph(s) but recorded no cache lookup" in text and "2.5" in text
    assert r.exit_code == 1


# --------------------------------------------------------------------------- the CLI

def _cli(*args, cwd=None, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "flexdoctor", "cache", "why", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=timeout)


@pytest.mark.parametrize("args, words", [
    ((), "give the command to run after --"),
    (("--format", "xml", "--", "true"), "--format xml"),
    (("--", "no-such-command-flexdoctor"), "command not found"),
])
def test_cli_usage_errors_exit_2(args, words, tmp_path):
    done = _cli("--cache-dir", str(tmp_path / "c"), *args)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


def test_cli_on_a_command_that_compiles_nothing(tmp_path):
    done = _cli("--cache-dir", str(tmp_path / "c"), "--format", "json", "--", sys.executable, "-c", "print('hi')")
    doc = json.loads(done.stdout)  # the command's own output went to stderr
    assert done.returncode == 1 and doc["problem"] == "no_trace" and "hi" in done.stderr


# --------------------------------------------------------------------------- real CPU compiles

def _has_flex() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("torch.nn.attention.flex_attention") is not None
    except (ImportError, ValueError):
        return False


@pytest.mark.skipif(not _has_flex(), reason="torch with flex_attention is not installed")
def test_real_cpu_warm_then_why(tmp_path):
    """warm-cache (its real worker) warms one CPU config and records its key; then `cache why`
    runs a step that compiles that config again (a hit), in bf16 and with a softcap score_mod (misses)."""
    from flexdoctor import workload
    from flexdoctor.cache import warm

    root = tmp_path / "cache"
    cfg = workload.make(dtype="float32", head_dim=16, heads=2, seq_len=128, batch=1, mask="causal", device="cpu",
                        backward=False)
    out = warm.Outcome(cfg)
    warm.Runner(sys.executable, str(root), 1, timeout=600).compile([out])
    assert not out.failed, out.error
    assert [w.label for w in keys.load(str(root))] == [cfg.name]

    done = _cli("--cache-dir", str(root), "--format", "json", "--", sys.executable, str(STEP),
                "base", "bf16", "softcap")
    doc = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr[-2000:]
    graphs = doc["graphs"]
    assert [g["status"] for g in graphs] == ["hit", "miss", "miss"]
    assert graphs[1]["closest"] == cfg.name
    assert [(d["kind"], d["now"]) for d in graphs[1]["differences"]] == [("dtype", "torch.bfloat16")]
    assert [d["kind"] for d in graphs[2]["differences"]] == ["mod_code"]
    assert "tanh" in graphs[2]["differences"][0]["now"]


def test_warm_cache_run_records_the_keys_of_what_the_command_compiled(tmp_path, monkeypatch):
    """`warm-cache --run CMD` runs CMD with TORCH_TRACE set and stores the FX keys it finds there
    (here the command writes a recorded trace itself: the plumbing, without a compile)."""
    from flexdoctor.cache import warm

    src = unpack("step_variants_cpu", tmp_path / "src")
    script = ("import os, shutil, glob, sys\n"
              "for p in glob.glob(sys.argv[1] + '/*.log'): shutil.copy(p, os.environ['TORCH_TRACE'])\n")
    root = tmp_path / "cache"
    made = []

    def mkdtemp(prefix=""):
        made.append(tmp_path / f"{prefix}x")
        made[-1].mkdir()
        return str(made[-1])

    monkeypatch.setattr(keys.tempfile, "mkdtemp", mkdtemp)
    res = warm.run_command([sys.executable, "-c", script, str(src)], str(root))
    assert res["error"] is None and len(made) == 1 and not made[0].exists()  # the trace is dropped
    found = keys.load(str(root))
    assert len(found) == 5 and {w.source["kind"] for w in found} == {"run"}
    assert all(w.label.startswith(sys.executable) for w in found)


def test_cache_why_run_does_not_record_its_own_run_as_warmed(tmp_path):
    src = unpack("step_variants_cpu", tmp_path / "src")
    script = ("import os, shutil, glob, sys\n"
              "for p in glob.glob(sys.argv[1] + '/*.log'): shutil.copy(p, os.environ['TORCH_TRACE'])\n")
    root = tmp_path / "cache"
    r = why.run([sys.executable, "-c", script, str(src)], str(root))
    assert keys.load(str(root)) == [] and r.trace_files == 1 and len(r.verdicts) == 6
    assert [v.status for v in r.verdicts] == ["hit", "miss", "miss", "miss", "miss", "bypass"]


def test_cli_refuses_a_cache_others_can_write(tmp_path):
    """The command compiles into the cache and loads code from it: warm-cache's safety rule (FD504)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    done = _cli("--cache-dir", str(shared), "--", sys.executable, "-c", "pass")
    assert done.returncode == 2 and "FD504" in done.stderr and "flexdoctor: running" not in done.stderr
