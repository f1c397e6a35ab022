"""Every built-in check over recorded facts of real (and realistic) machines.

Each fixture in tests/fixtures/facts/ is a whole Facts snapshot (see its README for where each
comes from). EXPECTED pins the status each relevant check must give on it; the coverage test
makes sure every check has a machine where it passes and one where it does not.
"""

from __future__ import annotations

import functools
import re

import pytest

from conftest import facts_fixture_names, load_facts, load_facts_dict, torch_pin_of
from flexdoctor import checks, knowledge, runner, wheels
from flexdoctor.facts import FACTS_SCHEMA_VERSION, Facts, ProbeError, ok
from flexdoctor.model import Status

P, N, W, F, S = "pass", "note", "warn", "fail", "skip"
ALL_PASS = {cid: P for cid in ("FD101", "FD102", "FD103", "FD104", "FD105", "FD201", "FD202", "FD203", "FD204",
                               "FD205", "FD206", "FD301", "FD302", "FD303", "FD304", "FD306", "FD307", "FD401",
                               "FD402", "FD403", "FD601")}

EXPECTED: dict[str, dict[str, str]] = {
    "cpu_only": {"FD101": N, "FD102": S, "FD103": S, "FD104": S, "FD105": S, "FD201": P, "FD202": P, "FD203": P,
                 "FD204": N, "FD205": S, "FD206": P, "FD301": S, "FD302": S, "FD303": S, "FD304": S, "FD305": P,
                 "FD306": P, "FD307": S, "FD401": S, "FD402": S, "FD403": S, "FD601": P},
    "h100": {**ALL_PASS, "FD305": S},
    "h100_cuda_hidden": {"FD101": P, "FD103": S, "FD204": P, "FD205": F, "FD301": P, "FD307": P},
    "h100_bad_env": {"FD101": P, "FD205": P, "FD304": F, "FD307": F, "FD306": P},
    "a100_torch25": {**ALL_PASS, "FD305": S},
    "rtx4090": {**ALL_PASS, "FD305": S},
    "t4": {"FD101": P, "FD102": W, "FD103": P, "FD104": P, "FD105": W, "FD202": P, "FD203": P, "FD205": P,
           "FD206": P, "FD301": P, "FD302": P, "FD303": P, "FD307": P, "FD402": P, "FD403": P, "FD601": P},
    "rtx5090_torch26": {"FD101": P, "FD102": P, "FD103": F, "FD104": P, "FD204": P, "FD205": P, "FD206": P,
                        "FD301": P, "FD302": P, "FD303": F, "FD304": P, "FD307": P, "FD402": P},
    "cpu_wheel_on_gpu": {"FD101": P, "FD102": P, "FD103": S, "FD104": S, "FD105": P, "FD201": P, "FD202": P,
                         "FD204": F, "FD205": S, "FD301": S, "FD302": S, "FD303": S, "FD304": S, "FD305": P,
                         "FD307": S, "FD401": S, "FD601": P},
    "driver_too_old": {"FD101": P, "FD102": P, "FD103": S, "FD104": F, "FD201": P, "FD202": P, "FD203": P,
                       "FD204": P, "FD205": F, "FD206": P, "FD301": P, "FD302": P, "FD307": P, "FD401": P,
                       "FD402": W, "FD403": P},
    "rocm": {"FD101": S, "FD102": S, "FD103": S, "FD104": S, "FD105": S, "FD201": P, "FD202": P, "FD203": P,
             "FD204": S, "FD205": S, "FD206": P, "FD301": P, "FD302": P, "FD303": S, "FD304": P, "FD306": P,
             "FD307": S, "FD401": S, "FD402": S, "FD403": S, "FD601": P},
    "broken_torch": {"FD101": P, "FD103": S, "FD201": P, "FD202": F, "FD204": P, "FD205": S},
    "broken_torch_segfault": {"FD101": P, "FD103": S, "FD202": F, "FD205": S},
    "broken_torch_timeout": {"FD101": P, "FD103": S, "FD202": F, "FD205": S},
    "no_compiler_slim": {"FD101": P, "FD102": P, "FD103": P, "FD205": P, "FD301": P, "FD302": P, "FD304": F,
                         "FD305": S, "FD306": F, "FD307": F, "FD401": N, "FD402": S, "FD403": N},
    "python314_torch29": {"FD103": P, "FD104": P, "FD203": P, "FD205": P, "FD206": F, "FD302": P},
    "no_torch": {"FD101": P, "FD201": F, "FD202": S, "FD203": S, "FD204": S, "FD205": S, "FD206": S, "FD301": S,
                 "FD306": S, "FD401": S},
    "v100_torch24": {"FD102": W, "FD103": P, "FD105": W, "FD201": P, "FD203": F, "FD206": S, "FD302": P},
    "p100_kaggle": {"FD101": P, "FD102": F, "FD103": P, "FD104": P, "FD105": W},
    "driver_mismatch": {"FD101": F, "FD102": S, "FD103": S, "FD104": S, "FD204": P, "FD205": S},
    "windows_rtx3080": {"FD101": P, "FD102": P, "FD103": P, "FD104": P, "FD204": P, "FD205": P, "FD301": F,
                        "FD302": S, "FD303": S, "FD306": P, "FD307": S, "FD601": W},
    "macos_m2": {"FD101": S, "FD102": S, "FD201": P, "FD202": P, "FD203": P, "FD204": S, "FD301": S, "FD304": S,
                 "FD305": P, "FD306": P, "FD307": S, "FD401": S, "FD601": W},
    "triton_mismatch": {"FD301": P, "FD302": F, "FD303": P, "FD307": P},
    "a10g_k8s": {"FD103": P, "FD104": W, "FD205": P, "FD302": P, "FD307": W, "FD401": P, "FD402": P, "FD403": P},
    "cpu_slim": {"FD101": N, "FD201": P, "FD202": P, "FD304": S, "FD305": F, "FD306": P, "FD601": P},
    # A Docker build stage without a GPU: the +cpu wheel (a note here, a failure under --profile
    # image: tests/test_levels_image.py) and the CUDA build with Triton at torch's pin.
    "image_cpu_wheel": {"FD101": N, "FD201": P, "FD204": N, "FD205": S, "FD301": S, "FD302": S, "FD305": P,
                        "FD306": P, "FD307": S, "FD401": S},
    "image_builder": {"FD101": N, "FD201": P, "FD204": P, "FD205": S, "FD301": P, "FD302": P, "FD304": P,
                      "FD305": P, "FD306": P, "FD307": S, "FD401": N, "FD402": S, "FD403": N},
    "shadowed_torch": {"FD202": W, "FD203": P, "FD204": P, "FD205": P, "FD302": P, "FD403": P},
}

FIXTURES = facts_fixture_names()


@functools.lru_cache(maxsize=None)
def report(name: str):
    return runner.run(checks.builtin(), load_facts(name))


def result(name: str, check_id: str):
    for r in report(name).results:
        if r.id == check_id:
            return r
    raise AssertionError(f"{check_id} did not run on {name}")


def all_commands(res) -> str:
    return "\n".join(res.fix.commands) if res.fix else ""


# ------------------------------------------------------------------------- the fixtures themselves


def test_every_fixture_has_expectations():
    assert sorted(EXPECTED) == FIXTURES


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_is_complete_facts_json(name):
    data = load_facts_dict(name)
    assert data["schema_version"] == FACTS_SCHEMA_VERSION
    facts = Facts.from_dict(data)
    # Complete: every key in the file is one Facts knows, with the value it reads back; keys the
    # file lacks are only sections/fields added after it was recorded, at their empty defaults.
    _same_or_newer_default(facts.to_dict(), data, name)


def _same_or_newer_default(out, data, where):
    if isinstance(out, dict) and isinstance(data, dict) and set(data) != {"probe_error"}:
        assert set(data) <= set(out), f"{where}: unknown keys {set(data) - set(out)}"
        for k, v in out.items():
            if k in data:
                _same_or_newer_default(v, data[k], f"{where}.{k}")
            else:
                assert v in (None, {}, []), f"{where}.{k} is missing from the fixture"
    elif isinstance(out, list) and isinstance(data, list):
        assert len(out) == len(data), where
        for i, (a, b) in enumerate(zip(out, data)):
            _same_or_newer_default(a, b, f"{where}[{i}]")
    else:
        assert out == data, where


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_round_trips(name):
    facts = load_facts(name)
    assert Facts.from_dict(facts.to_dict()) == facts


def _base(version: str) -> str:
    return version.split("+")[0]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_is_internally_consistent(name):
    """The mechanical part of "a fixture tells one coherent story"."""
    f = load_facts(name)
    py, torch, rt, gpu, tc, host = f.python, f.torch, f.torch_runtime, f.gpu, f.toolchain, f.host
    assert ok(py) and ok(host) and ok(tc) and ok(gpu)
    # packages <-> torch metadata
    if torch is None:
        assert "torch" not in py.packages
    else:
        assert py.packages["torch"] == torch.version
        assert torch.location is None or "/torch" in torch.location.replace("\\", "/")
        if torch.triton_requirement:
            dist = re.split(r"[=<>!~ ]", torch.triton_requirement)[0]
            assert dist in ("triton", "pytorch-triton", "pytorch-triton-rocm")
    # runtime <-> static torch (shadowed_torch shadows on purpose)
    if ok(rt) and ok(torch) and name != "shadowed_torch":
        assert _base(rt.version) == _base(torch.version)
        assert rt.cuda == torch.cuda and rt.hip == torch.hip
    if ok(rt):
        if rt.triton_version is not None:
            assert rt.triton_version in py.packages.values()
        if rt.cuda_available:
            assert rt.device_count == len(rt.devices) > 0
            assert rt.arch_list
            if rt.cuda:  # NVIDIA: NVML sees the same GPUs (it ignores CUDA_VISIBLE_DEVICES)
                assert gpu.nvml == "ok"
                nvml = {(d.name, d.compute_capability) for d in gpu.devices}
                assert {(d.name, d.capability) for d in rt.devices} <= nvml
        else:
            assert rt.device_count == 0 and rt.devices == [] and rt.arch_list == []
        if rt.flex_importable is False:
            assert rt.flex_import_error
    # NVML
    if gpu.nvml == "ok":
        assert gpu.devices and gpu.device_nodes and gpu.driver_version and gpu.cuda_driver_version
        assert [d.index for d in gpu.devices] == list(range(len(gpu.devices)))
    else:
        assert not gpu.devices and gpu.nvml_error
    # Python headers live in the include dir of the interpreter's version
    minor = ".".join(py.version.split(".")[:2])
    if py.platform != "win32":
        assert py.include_dir.endswith(f"python{minor}")
    # host.env <-> toolchain
    env = host.env
    if tc.cuda_home is not None and tc.cuda_home.source in ("CUDA_HOME", "CUDA_PATH"):
        assert env.get(tc.cuda_home.source) == tc.cuda_home.path
    if "CUDA_HOME" in env:
        assert tc.cuda_home.source == "CUDA_HOME"
    if tc.c_compiler is not None and tc.c_compiler.source == "CC":
        assert env.get("CC") == tc.c_compiler.command
    if "CC" in env:
        assert tc.c_compiler.source == "CC"
    if ok(tc.libcuda) and tc.libcuda.method == "TRITON_LIBCUDA_PATH":
        assert "TRITON_LIBCUDA_PATH" in env
    if ok(tc.nvcc) and tc.cuda_home is not None and tc.cuda_home.source == "nvcc":
        assert tc.nvcc.path.startswith(tc.cuda_home.path + "/")
    if py.platform.startswith("linux"):
        assert tc.libcuda is not None
    else:
        assert tc.libcuda is None


# ------------------------------------------------------------------------- expected statuses


@pytest.mark.parametrize("name,check_id,status",
                         [(n, c, s) for n, table in sorted(EXPECTED.items()) for c, s in sorted(table.items())])
def test_expected_status(name, check_id, status):
    res = result(name, check_id)
    assert res.status.value == status, f"{name} {check_id}: {res.status.value}: {res.message}"


@pytest.mark.parametrize("name", FIXTURES)
def test_no_check_errors(name):
    errors = [(r.id, r.message, r.details) for r in report(name).results if r.status == Status.ERROR]
    assert errors == []


# Areas whose facts these machine fixtures do not carry have the same both-ways coverage test
# over their own fixtures: cache (tests/test_cache_checks.py, one bad and one good case per
# check), deep (tests/test_deep.py::test_every_deep_check_passes_and_complains_somewhere) and
# diffusers (tests/test_diffusers_checks.py::test_every_check_passes_somewhere_and_complains_somewhere)
# and multigpu (tests/test_multigpu.py::test_every_multigpu_check_passes_and_complains_somewhere).
OWN_COVERAGE = ("cache", "deep", "diffusers", "multigpu")


def test_every_check_both_passes_and_complains_somewhere():
    specs = [s for s in checks.builtin() if s.area not in OWN_COVERAGE]
    assert {s.area for s in checks.builtin()} >= set(OWN_COVERAGE)
    seen: dict[str, set] = {s.id: set() for s in specs}
    for name in FIXTURES:
        for r in report(name).results:
            if r.id in seen:
                seen[r.id].add(r.status)
    for cid, statuses in seen.items():
        assert Status.PASS in statuses, f"{cid} passes on no fixture"
        assert statuses & {Status.NOTE, Status.WARN, Status.FAIL}, f"{cid} notes, warns or fails on no fixture"


PLACEHOLDER = re.compile(r"\{[a-z_]+(![rs])?\}")


@pytest.mark.parametrize("name", FIXTURES)
def test_messages_and_fixes_are_filled_in(name):
    for r in report(name).results:
        assert r.message.strip(), f"{r.id}: empty message"
        texts = [r.message, *r.details]
        if r.fix:
            texts += [r.fix.summary, *r.fix.commands]
        for text in texts:
            assert not PLACEHOLDER.search(text), f"{name} {r.id}: unfilled placeholder in {text!r}"
            assert "None" not in text.replace("NoneType", ""), f"{name} {r.id}: 'None' in {text!r}"
        if r.status in (Status.NOTE, Status.WARN, Status.FAIL):
            assert r.fix is not None and r.fix.summary, f"{name} {r.id}: {r.status.value} without a fix"
            # kb None: the error was read by explain's structural layer (issue 22), which has no entry
            assert r.fix.kb is None or r.fix.kb in knowledge.entries(), f"{name} {r.id}: unknown KB entry {r.fix.kb}"


# ------------------------------------------------------------------------- what the findings say


def test_cpu_wheel_on_gpu_fix_names_a_cuda_index():
    r = result("cpu_wheel_on_gpu", "FD204")
    assert r.fix.kb == knowledge.get("cpu-wheel-on-gpu").id
    assert "download.pytorch.org/whl/cu12" in all_commands(r)
    # The L4's driver supports CUDA 12.4: the cu126 wheel runs on it through minor-version
    # compatibility and is published for current torch (cu124 stopped at torch 2.6).
    assert "download.pytorch.org/whl/cu126" in all_commands(r)
    assert "2.8.0+cpu" in r.message


def test_driver_too_old():
    drv = result("driver_too_old", "FD104")
    assert drv.fix.kb == "FDE105"
    assert "12.2" in drv.message and "13.0" in drv.message
    avail = result("driver_too_old", "FD205")
    assert avail.fix.kb == "FDE105"  # matched from torch's own warning, not the generic FDE205
    assert "too old" in avail.message
    assert "13.0" in avail.fix.summary  # "a driver that supports CUDA 13.0"
    assert re.search(r"download\.pytorch\.org/whl/cu12\d", all_commands(avail))


def test_t4_is_sm7x():
    r = result("t4", "FD102")
    assert r.fix.kb == knowledge.get("sm7x-limited").id
    assert "sm_75" in r.message and "Tesla T4" in r.message
    assert "bf16" in result("t4", "FD105").message


def test_rtx5090_with_torch26():
    arch = result("rtx5090_torch26", "FD103")
    assert arch.fix.kb == knowledge.get("arch-not-in-torch-build").id
    assert "sm_120" in arch.message and "sm_120" in arch.fix.summary
    ptxas = result("rtx5090_torch26", "FD303")
    assert ptxas.fix.kb == knowledge.get("triton-too-old-for-blackwell").id
    assert "3.2.0" in ptxas.message
    # The newest release with a wheel that carries sm_120 and runs on this CUDA 12.9 driver.
    version, variant, _ = torch_pin_of(all_commands(ptxas))
    release = wheels.table().release(version)
    assert release.key >= (2, 7) and variant.startswith("cu12")
    assert wheels.carries(release.variant("linux-x86_64", variant).archs, (12, 0))


def test_hidden_gpus_name_the_variable():
    r = result("h100_cuda_hidden", "FD205")
    assert "CUDA_VISIBLE_DEVICES" in r.message
    assert r.fix.kb == knowledge.get("cuda-not-available").id


def test_slim_container_findings():
    cc = result("no_compiler_slim", "FD304")
    assert cc.fix.kb == knowledge.get("no-c-compiler").id
    assert "Failed to find C compiler" in cc.message
    headers = result("no_compiler_slim", "FD306")
    assert "python3.10-dev" in all_commands(headers)
    lib = result("no_compiler_slim", "FD307")
    assert lib.fix.kb == knowledge.get("libcuda-not-found").id
    assert "ldconfig" in all_commands(lib)
    # nvcc and CUDA_HOME only matter for extension builds: no toolkit at all is a note (it fails
    # only under --profile extensions), never a warning that would fail --strict.
    assert result("no_compiler_slim", "FD401").status == Status.NOTE
    assert result("no_compiler_slim", "FD403").status == Status.NOTE


def test_bad_cc_names_the_variable():
    r = result("h100_bad_env", "FD304")
    assert "/opt/missing/gcc" in r.message


def test_broken_torch_reports_the_error_and_stage():
    imp = result("broken_torch", "FD202")
    assert "undefined symbol: ncclCommRegister" in imp.message
    # read by explain's structural layer (issue 22): torch misses an NCCL symbol -> its NCCL package
    assert "nvidia-nccl-cu12" in imp.fix.summary and any("nccl" in c for c in imp.fix.commands)
    assert any("Traceback" in d or "import torch" in d for d in imp.details)
    crash = result("broken_torch_segfault", "FD202")
    assert "torch.cuda.is_available" in crash.message and "SIGSEGV" in crash.message
    hang = result("broken_torch_timeout", "FD202")
    assert "torch.cuda.is_available" in hang.message and "in time" in hang.message
    # Checks that need the runtime say why they skip instead of guessing.
    skipped = result("broken_torch", "FD205")
    assert "ncclCommRegister" in skipped.message or "probe" in skipped.message


def test_python_too_new_for_dynamo():
    r = result("python314_torch29", "FD206")
    assert "3.14" in r.message and "3.13" in r.message
    assert r.fix.kb == knowledge.get("python-without-dynamo").id
    assert "--python 3.13" in all_commands(r)


def test_no_torch_fix_matches_the_driver():
    r = result("no_torch", "FD201")
    version, variant, _ = torch_pin_of(all_commands(r))
    # The driver supports CUDA 12.8: a CUDA 12 wheel, of the newest release that still has one
    # carrying the GPU's sm_86 (cu128 stopped at 2.11, cu126 goes on), never a cu13x one.
    assert variant.startswith("cu12")
    fitting = [rel for rel in wheels.table().releases
               if any(v.startswith("cu12") and wheels.carries(a.archs, (8, 6))
                      for v, a in rel.variants["linux-x86_64"].items()) and rel.python_ok((3, 10), "linux-x86_64")]
    assert version == fitting[0].version


def test_torch_too_old_for_flex():
    r = result("v100_torch24", "FD203")
    assert "2.4.1" in r.message
    assert r.fix.kb == knowledge.get("torch-too-old-for-flex").id


def test_pre_volta_gpu_fails_for_triton():
    r = result("p100_kaggle", "FD102")
    assert r.fix.kb == knowledge.get("gpu-too-old-for-triton").id
    assert "sm_60" in r.message


def test_driver_library_mismatch_says_reboot():
    r = result("driver_mismatch", "FD101")
    assert r.fix.kb == knowledge.get("nvml-driver-mismatch").id
    assert "reboot" in (r.message + r.fix.summary).lower()


def test_triton_pin_mismatch_fix_installs_the_pin():
    r = result("triton_mismatch", "FD302")
    assert "triton==3.1.0" in all_commands(r)
    assert "3.2.0" in r.message


def test_shadowed_torch_names_both_versions():
    r = result("shadowed_torch", "FD202")
    assert "2.9.0a0" in r.message and "2.7.1" in r.message


def test_cpu_and_other_platforms():
    assert "macOS" in result("macos_m2", "FD601").message
    assert "Windows" in result("windows_rtx3080", "FD601").message
    assert "ROCm" in result("rocm", "FD601").message
    assert "CPU" in result("cpu_only", "FD601").message
    assert "g++" in all_commands(result("cpu_slim", "FD305"))


def test_a100_multi_gpu_summary():
    r = result("a100_torch25", "FD102")
    assert "8" in r.message and len(r.details) == 8


# ------------------------------------------------------------------------- platform-specific fixes


def test_windows_triton_fix_installs_triton_windows():
    r = result("windows_rtx3080", "FD301")
    cmds = all_commands(r)
    assert "triton-windows" in cmds
    assert "install 'triton'" not in cmds


def test_windows_c_compiler_not_judged_with_linux_rules():
    r = result("windows_rtx3080", "FD304")
    assert r.status != Status.FAIL
    assert "apt-get" not in all_commands(r)
