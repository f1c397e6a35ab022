"""The deep tier: the probe's protocol, the FD8xx checks over recorded and hand-written deep
facts, and one real CPU run of the real kernels (CI). GPU tests are marked `gpu`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flexdoctor import checks, knowledge, runner
from flexdoctor.deep import deep
from flexdoctor.facts import DeepFacts, Facts, ProbeError, from_jsonable, to_jsonable
from flexdoctor.model import Status
from flexdoctor.worker._wire import PART, RESULT, STAGE

DEEP_DIR = Path(__file__).parent / "fixtures" / "deep"
NAMES = sorted(p.stem for p in DEEP_DIR.glob("*.json"))
DEEP_SPECS = [s for s in checks.builtin() if s.area == "deep"]


def load(name: str) -> DeepFacts:
    return from_jsonable(DeepFacts, json.loads((DEEP_DIR / f"{name}.json").read_text(encoding="utf-8")))


def results(deep_facts) -> dict:
    report = runner.run(DEEP_SPECS, Facts(deep=deep_facts))
    return {r.id: r for r in report.results}


EXPECTED = {
    "cpu_torch213": {"FD801": "pass", "FD802": "pass", "FD803": "pass", "FD804": "pass", "FD805": "pass",
                     "FD806": "skip", "FD807": "skip", "FD808": "skip"},
    "t4": {"FD801": "pass", "FD802": "warn", "FD803": "pass", "FD804": "pass", "FD805": "pass", "FD806": "pass",
           "FD807": "warn", "FD808": "pass"},
    "h100": {"FD801": "pass", "FD802": "pass", "FD803": "pass", "FD804": "pass", "FD805": "pass",
                         "FD806": "pass", "FD807": "skip", "FD808": "skip"},
    "broken_extensions": {"FD801": "pass", "FD802": "pass", "FD803": "fail", "FD804": "warn", "FD805": "pass",
                          "FD806": "fail", "FD807": "fail", "FD808": "fail"},
    "wrong_results": {"FD801": "fail", "FD802": "pass", "FD803": "fail", "FD804": "fail", "FD805": "fail",
                      "FD806": "pass", "FD807": "pass", "FD808": "skip"},
}


def test_every_deep_fixture_has_expectations():
    assert sorted(EXPECTED) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_fixture_round_trips(name):
    d = load(name)
    assert from_jsonable(DeepFacts, to_jsonable(d)) == d
    facts = Facts(deep=d)
    assert Facts.from_dict(facts.to_dict()) == facts


@pytest.mark.parametrize("name,check_id,status",
                         [(n, c, s) for n, table in sorted(EXPECTED.items()) for c, s in sorted(table.items())])
def test_expected_status(name, check_id, status):
    res = results(load(name))[check_id]
    assert res.status.value == status, f"{name} {check_id}: {res.status.value}: {res.message}"


def test_every_deep_check_passes_and_complains_somewhere():
    seen = {s.id: set() for s in DEEP_SPECS}
    for name in NAMES:
        for cid, r in results(load(name)).items():
            seen[cid].add(r.status)
    for cid, statuses in seen.items():
        assert Status.PASS in statuses, cid
        assert statuses & {Status.WARN, Status.FAIL}, cid


@pytest.mark.parametrize("name", NAMES)
def test_every_problem_has_a_knowledge_base_fix(name):
    for r in results(load(name)).values():
        assert r.status != Status.ERROR, (r.id, r.message)
        if r.status in (Status.WARN, Status.FAIL) and r.id != "FD801" or (r.id == "FD801" and r.status == Status.FAIL):
            assert r.fix is not None and r.fix.kb, (name, r.id, r.message)


def test_deep_checks_skip_cleanly_when_not_run():
    for value in (None, ProbeError("could not start", kind="error")):
        res = results(value)
        for cid, r in res.items():
            if value is not None and cid == "FD801":
                assert r.status == Status.FAIL and r.fix.kb == "FDE759"
            else:
                assert r.status == Status.SKIP, (cid, r.message)


def test_t4_explains_no_available_kernel_and_recommends_efficient_attention():
    r = results(load("t4"))["FD802"]
    assert "sm 7.5" in r.message and "No available kernel" in r.message
    assert r.fix.kb == "FDE750"
    assert "EFFICIENT_ATTENTION" in r.fix.summary and "EFFICIENT_ATTENTION" in r.fix.commands[0]
    # bf16 on sm75: only math, said in torch's words
    assert any("bfloat16" in d and "math" in d for d in r.details)
    # torch's refusal text also maps to the existing sm7x entry (explain / match_text)
    assert knowledge.match_text(
        "Flash attention only supports gpu architectures in the range [sm80, sm121]. Attempting to run on a "
        "sm 7.5 gpu.")


def test_flash_attn_abi_mismatch_is_explained():
    r = results(load("broken_extensions"))["FD807"]
    assert "undefined symbol" in r.message and r.fix.kb == "FDE756"
    assert any("--no-build-isolation" in c for c in r.fix.commands)


def test_uncompiled_flex_fallback_is_a_warning_with_the_fix():
    r = results(load("broken_extensions"))["FD804"]
    assert "without torch.compile" in r.message and r.fix.kb == "FDE754"


def test_compile_failure_reuses_the_compiler_entry():
    r = results(load("wrong_results"))["FD804"]
    assert "C compiler" in r.message
    assert r.fix.kb != "FDE753"  # the existing "Failed to find C compiler" entry matched


def test_backward_shared_memory_error_gets_a_fix():
    r = results(load("broken_extensions"))["FD806"]
    assert r.status == Status.FAIL and r.fix is not None


# ------------------------------------------------------------------------- the probe's protocol


def _out(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_parse_complete_result():
    data = {"device": "cpu", "torch_version": "2.13.0", "sdpa": [], "flex": [], "seconds": 1.0}
    got = deep.parse(_out(STAGE + "import torch", RESULT + json.dumps(data)), "", 0)
    assert isinstance(got, DeepFacts) and got.torch_version == "2.13.0" and got.incomplete is None


def test_parse_keeps_finished_sections_when_it_hangs_later():
    sdpa = [{"dtype": "float32", "shape": [1, 8, 256, 64], "backends": [], "default_ok": True}]
    flex = {"dtype": "float16", "shape": [2, 4, 256, 64], "rel_error": 1e-3}
    out = _out(STAGE + "import torch", PART + "meta " + json.dumps({"device": "cuda", "capability": "8.6"}),
               PART + "sdpa " + json.dumps(sdpa), PART + "flex float16 " + json.dumps(flex),
               STAGE + "flex compile bfloat16")
    got = deep.parse(out, "", None, timed_out=True, timeout=300)
    assert isinstance(got, DeepFacts)
    assert got.device == "cuda" and got.sdpa[0].dtype == "float32" and got.flex[0].dtype == "float16"
    assert got.incomplete.kind == "timeout" and got.incomplete.stage == "flex compile bfloat16"
    res = results(got)
    assert res["FD801"].status == Status.FAIL and "flex compile bfloat16" in res["FD801"].message


def test_parse_crash_and_import_error():
    got = deep.parse(_out(STAGE + "import torch", STAGE + "sdpa float16"), "Segmentation fault", -11)
    assert isinstance(got, ProbeError) and got.kind == "crash" and "SIGSEGV" in got.message
    got = deep.parse(_out(RESULT + json.dumps({"import_error": "ImportError: libcudnn.so.9"})), "", 0)
    assert isinstance(got, ProbeError) and got.kind == "import-error"
    assert results(got)["FD801"].status == Status.SKIP  # FD202 reports a broken torch
    got = deep.parse("", "", None, start_error="No such file or directory: /nope/python")
    assert isinstance(got, ProbeError) and got.stage == "start"


def test_deep_failures_are_data_worded_in_the_report_language():
    from flexdoctor import text

    got = deep.parse(_out(STAGE + "import torch", STAGE + "flex run float16"), "", -9)
    assert (got.reason, got.args) == ("deep_killed_during", {"signal": "SIGKILL", "where": "flex run float16"})
    bf16 = from_jsonable(DeepFacts, {"device": "cuda", "capability": "7.5", "flex": [
        {"dtype": "float16", "shape": [2, 4, 256, 64], "rel_error": 1e-3, "compiled_path": True}],
        "flex_skipped": {"bfloat16": "no-native-bf16"}})
    for lang in [lang for lang in text.available()]:
        text.set_language(lang)
        try:
            fd801 = results(got)["FD801"]
            assert text.t("probe-error.deep_killed_during", signal="SIGKILL", where="flex run float16") in fd801.message
            assert text.t("deep-run.crashed") in fd801.message
            assert text.t("deep-flex-compiled.no_native_bf16", sm="75") in "\n".join(results(bf16)["FD804"].details)
        finally:
            text.set_language(None)


def test_missing_interpreter_is_a_result_not_a_crash():
    got = deep.probe("/nonexistent/python3", timeout=10)
    assert isinstance(got, ProbeError)
    assert results(got)["FD801"].status == Status.FAIL


def test_probe_script_is_stdlib_and_py38_syntax():
    import ast

    src = Path(deep.SCRIPT).read_text(encoding="utf-8")
    tree = ast.parse(src, feature_version=(3, 8))
    top = {n.names[0].name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)}
    top |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert "flexdoctor" not in top
    assert top <= set(sys.stdlib_module_names) | {"_wire", "torch", "triton", "flash_attn", "xformers"}


# ------------------------------------------------------------------------- the real thing


@pytest.mark.slow
def test_real_cpu_deep_run():
    """One small real run on the CPU (CI): SDPA per backend and compiled flex fp32, inference only."""
    pytest.importorskip("torch")
    stages: list = []
    got = deep.probe(sys.executable, timeout=280, device="cpu", on_stage=stages.append)
    assert isinstance(got, DeepFacts), got
    assert got.device == "cpu" and got.incomplete is None
    assert "import torch" in stages and any(s.startswith("flex compile") for s in stages)
    flex = got.flex[0]
    assert flex.dtype == "float32" and flex.error is None and flex.compiled_path is True
    assert flex.rel_error is not None and flex.rel_error < 1e-3 and flex.shape == [1, 2, 128, 16]
    assert {r.dtype for r in got.sdpa} == {"float16", "bfloat16", "float32"}
    res = results(got)
    for cid in ("FD801", "FD802", "FD803", "FD804", "FD805"):
        assert res[cid].status == Status.PASS, (cid, res[cid].message)
    assert res["FD806"].status == Status.SKIP


def _cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs an NVIDIA GPU")
def test_real_gpu_deep_run():
    got = deep.probe(sys.executable, timeout=600)
    assert isinstance(got, DeepFacts), got
    assert got.device == "cuda" and got.incomplete is None, got.incomplete
    res = results(got)
    for cid in ("FD801", "FD803", "FD804", "FD805", "FD806"):
        assert res[cid].status == Status.PASS, (cid, res[cid].message, res[cid].details)
    cc = tuple(int(x) for x in got.capability.split("."))
    flex_dtypes = {r.dtype for r in got.flex}
    assert {"float16", "float32"} <= flex_dtypes
    if cc >= (8, 0):
        assert "bfloat16" in flex_dtypes
        assert res["FD802"].status == Status.PASS, res["FD802"].message
        fp16 = next(r for r in got.sdpa if r.dtype == "float16")
        assert {b.backend for b in fp16.backends if b.ran} >= {"flash", "efficient", "math"}
    else:
        assert res["FD802"].status == Status.WARN
