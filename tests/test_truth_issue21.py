"""Issue 21, "What is false or misleading": each corrected statement pinned by a test.

Sources are in /work/shared/FACTS.md §11 and in the comments next to each test.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import load_facts
from flexdoctor import checks, knowledge, runner, wheels
from flexdoctor.facts import Compiler, DeepFacts, TorchRuntimeFacts


def run_check(check_id: str, facts):
    spec = {s.id: s for s in checks.builtin()}[check_id]
    return runner.run_one(spec, facts)


def explain(text: str):
    from flexdoctor.knowledge import explain as ex

    return {p.entry.id: ex.fix_for(p) for p in ex.scan_lines(text.splitlines()).problems}


# 1. FDE605: only torch 2.5 and 2.6 reject non-power-of-two head dims (2.7's check is dead code,
# Inductor pads), so the fix is torch >= 2.7.
def test_fde605_names_torch_2_7_as_the_fix():
    e = knowledge.get("FDE605")
    assert e.applies == "torch 2.5-2.6" and "2.5-2.6" in e.title
    assert "2.7 or newer" in e.fix and "2.8" not in e.fix
    assert "'torch>=2.7'" in e.render().commands[0]


# 2. recompile_limit arrived in torch 2.7; 2.5/2.6 have only cache_size_limit. The knob the fix
# names follows the log (explain) or the machine (the deep check).
@pytest.mark.parametrize("line, knob", [
    ("W0101 torch._dynamo hit config.cache_size_limit (8)", "cache_size_limit"),
    ("W0101 torch._dynamo hit config.recompile_limit (8)", "recompile_limit"),
])
def test_recompile_limit_knob_follows_the_log(line, knob):
    fixes = explain(line)
    fix = fixes.get("FDE609")
    assert fix is not None, fixes
    assert f"torch._dynamo.config.{knob} only" in fix.summary
    assert f'print(torch.__version__, torch._dynamo.config.{knob})' in " ".join(fix.commands)
    other = {"cache_size_limit": "recompile_limit", "recompile_limit": "cache_size_limit"}[knob]
    assert f"config.{other} only" not in fix.summary


def test_fullgraph_recompile_error_names_the_knob_of_the_log():
    fixes = explain("torch._dynamo.exc.FailOnRecompileLimitHit: cache_size_limit reached with one_graph=True.")
    assert "torch._dynamo.config.cache_size_limit." in fixes["FDE621"].summary
    assert "before torch 2.6" not in knowledge.get("FDE621").fix


def test_recompile_texts_never_say_recompile_limit_works_on_2_5_or_2_6():
    for eid in ("FDE609", "FDE620", "FDE621", "FDE754"):
        e = knowledge.get(eid)
        rendered = e.render().summary
        assert "cache_size_limit on 2.5 and 2.6" in rendered, eid


def _deep_not_compiled(torch_version: str):
    from flexdoctor.facts import FlexRun

    f = load_facts("h100")
    run = FlexRun(dtype="bfloat16", compiled_path=False)
    deep = DeepFacts(device="cuda", capability="9.0", flex=[run])
    return dataclasses.replace(f, deep=deep, torch=dataclasses.replace(f.torch, version=torch_version))


@pytest.mark.parametrize("version, knob", [("2.6.0+cu124", "cache_size_limit"), ("2.11.0+cu130", "recompile_limit")])
def test_fde754_from_the_deep_check_names_this_torchs_knob(version, knob):
    r = run_check("FD804", _deep_not_compiled(version))
    assert r.fix.kb == "FDE754", r.message
    assert f"torch._dynamo.config.{knob})" in r.fix.summary


# 3. aarch64 CUDA 13 wheels carry sm_80 sm_90 sm_100 sm_110 sm_120 and no PTX (torch 2.13's
# PYTORCH_RELEASES_CODE_CC; 2.11/2.13/2.15 measured).
@pytest.mark.parametrize("version", ["2.11.0", "2.12.0", "2.13.0", "2.14.0", "2.15.0"])
def test_aarch64_cuda13_wheels_carry_no_ptx(version):
    rel = wheels.table().release(version)
    for tag, variant in rel.variants["linux-aarch64"].items():
        if tag.startswith("cu13"):
            assert list(variant.archs) == ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120"], (version, tag)
    # so a GPU newer than every listed arch has no cu13x aarch64 build
    assert not wheels.carries(rel.variants["linux-aarch64"]["cu130"].archs, (13, 0))


# 4. Linux CPU Inductor: $CXX, else g++ only (torch/_inductor/config.py cpp.cxx, 2.5-2.15);
# clang++ is the default only on macOS. A Linux box with only clang++ must not pass FD305.
def _only_clang(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "clang++"
    exe.write_text("#!/bin/sh\necho clang version 18\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's compiler search")
def test_linux_box_with_only_clang_fails_fd305(tmp_path, monkeypatch):
    from flexdoctor.probes import toolchain

    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setenv("PATH", str(_only_clang(tmp_path)))
    assert toolchain.cxx_compiler() is None
    f = load_facts("cpu_only")
    f = dataclasses.replace(f, toolchain=dataclasses.replace(f.toolchain, cxx_compiler=toolchain.cxx_compiler()))
    r = run_check("FD305", f)
    assert r.status.value == "fail" and "(g++)" in r.message
    # ... and CXX=clang++ is what torch would use, so it passes then
    monkeypatch.setenv("CXX", "clang++")
    f = dataclasses.replace(f, toolchain=dataclasses.replace(f.toolchain, cxx_compiler=toolchain.cxx_compiler()))
    assert run_check("FD305", f).status.value == "pass"


def test_recorded_linux_facts_with_clang_fail_fd305():
    f = load_facts("cpu_only")
    clang = Compiler(source="clang++", command="clang++", path="/usr/bin/clang++")
    f = dataclasses.replace(f, toolchain=dataclasses.replace(f.toolchain, cxx_compiler=clang))
    assert run_check("FD305", f).status.value == "fail"


def test_torch_own_cxx_default_is_gxx_on_linux():
    """The rule above, read from the installed torch itself."""
    import torch._inductor.config as cfg

    if sys.platform.startswith("linux") and not os.environ.get("CXX"):
        assert cfg.cpp.cxx[-1] == "g++"


# 5. FDE702: list(SDPBackend) raises TypeError (a pybind11 enum); SDPBackend.__members__ works.
def test_fde702_command_runs():
    cmd = knowledge.get("FDE702").render(python=shlex.quote(sys.executable)).commands[0]
    done = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "FLASH_ATTENTION" in done.stdout


def test_every_python_dash_c_command_is_valid_python():
    for eid, e in knowledge._english().items():
        for cmd in e.commands + e.log_commands:
            try:
                argv = shlex.split(cmd, comments=True)
            except ValueError:
                continue  # PowerShell quoting
            for i, arg in enumerate(argv[:-1]):
                if arg == "-c" and i > 0 and "python" in argv[i - 1]:
                    compile(argv[i + 1].replace("{", "").replace("}", ""), eid, "exec")


# 6a. FDE120: the ptxas knob each triton version reads (triton 3.3: TRITON_PTXAS-BLACKWELL_PATH,
# a hyphenated name export cannot set; 3.4/3.5: TRITON_PTXAS_PATH; 3.6+: TRITON_PTXAS_BLACKWELL_PATH,
# knobs.py env_nvidia_tool; triton PR 8945/8959).
def test_fde120_names_the_knob_of_each_triton_version():
    cmds = knowledge.get("FDE120").render().commands
    export_lines = [c for c in cmds if c.startswith("export ")]
    for c in export_lines:  # every export sets a name a shell accepts
        name = c.split()[1].split("=")[0]
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name), c
    assert any("TRITON_PTXAS_PATH=" in c and "3.4 and 3.5" in c for c in cmds)
    assert any("TRITON_PTXAS_BLACKWELL_PATH=" in c and "3.6 and newer" in c for c in cmds)
    hyphen = [c for c in cmds if "TRITON_PTXAS-BLACKWELL_PATH" in c]
    assert hyphen and hyphen[0].startswith("env 'TRITON_PTXAS-BLACKWELL_PATH=") and "3.3" in hyphen[0]


def test_env_really_passes_the_hyphenated_name():
    """What the 3.3 command relies on: env(1) sets a name export refuses."""
    done = subprocess.run(["env", "TRITON_PTXAS-BLACKWELL_PATH=/x", sys.executable, "-c",
                           "import os; print(os.environ['TRITON_PTXAS-BLACKWELL_PATH'])"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "/x"
    bad = subprocess.run(["bash", "-c", "export TRITON_PTXAS-BLACKWELL_PATH=/x"], capture_output=True, text=True)
    assert bad.returncode != 0


# 6b. FDE721: xformers >= 0.0.33 itself prints '(12, 0) (too new)' (CUTLASS and FA3 capped at sm_90).
def test_fde721_does_not_blame_the_xformers_release_for_too_new():
    e = knowledge.get("FDE721")
    assert "0.0.33 and later print that '(too new)' line themselves" in e.cause
    assert "upgrade xformers together with torch" not in e.fix


# 6c. FDE751: head dim > 256 rules out flash, not the memory-efficient kernel (sdp_utils.cpp
# check_head_dim_size_mem_efficient has no upper bound).
def test_fde751_head_dim_over_256_does_not_force_math():
    e = knowledge.get("FDE751")
    assert "not a multiple of 8 or above 256" not in e.cause
    assert "by itself it does not force the math path" in e.cause


# 6d. FDE606: the length check starts in torch 2.6 and fires for shorter sequences too.
def test_fde606_from_2_6_and_both_directions():
    e = knowledge.get("FDE606")
    assert e.applies == "torch >= 2.6" and "longer or shorter" in e.cause


# 6e. FD102 / FA4: FlashAttention-4 has kernels for 8.x-12.x (flash_attn/cute/arch_policy.py).
@pytest.mark.parametrize("machine", ["h100", "rtx4090", "a100_torch25"])
def test_fd102_notes_fa4_on_every_8x_to_12x_gpu(machine):
    r = run_check("FD102", load_facts(machine))
    said = " ".join((r.message,) + tuple(r.details))
    assert "FlashAttention-4 (flash_attn.cute) has kernels for 8.x-12.x" in said, said
    assert "FA4 also run here" not in said


def test_deep_fa4_note_on_ampere():
    from flexdoctor.checks import deep

    note = deep._fa34_details(DeepFacts(device="cuda", capability="8.6"), {"fa4": {"installed": False}})[1]
    assert "could run it" in note


# 6f. FD103: Jetson integrated GPUs are outside "same major, higher minor" (torch's DEVICE_REQUIREMENT).
@pytest.mark.parametrize("cc, archs, ok", [
    ("8.7", ["sm_80", "sm_86"], False),  # Orin: no sm_87 cubin, no PTX
    ("8.7", ["sm_80", "sm_87"], True),
    ("7.2", ["sm_70", "sm_75"], False),  # Xavier
    ("8.9", ["sm_80", "sm_86"], True),   # a discrete GPU still runs sm_86 code
    ("8.7", ["sm_80", "compute_80"], True),  # PTX JITs anywhere newer
])
def test_fd103_applies_torchs_jetson_exclusion(cc, archs, ok):
    from flexdoctor.facts import GpuDevice

    f = load_facts("h100")
    gpu = dataclasses.replace(f.gpu, devices=[GpuDevice(0, "Orin", cc)])
    rt = dataclasses.replace(f.torch_runtime, arch_list=archs)
    r = run_check("FD103", dataclasses.replace(f, gpu=gpu, torch_runtime=rt))
    assert (r.status.value == "pass") == ok, r.message


# 6g. FDE533: the MPS high watermark ratio defaults to 1.7, so the limit can exceed RAM.
def test_fde533_says_the_limit_can_exceed_ram():
    e = knowledge.get("FDE533")
    assert "defaults to 1.7" in e.cause and "larger than the machine's RAM" in e.cause
    assert any("1.7 * r" in c for c in e.commands)


# 6h. macOS: say what the torch source of that version shows (flex_cpu.check_cpu_supported
# excludes darwin in 2.6-2.14; 2.5 has no CPU lowering on any OS).
def _macos(version: str, mps: bool):
    f = load_facts("macos_m2")
    rt = f.torch_runtime
    rt = dataclasses.replace(rt, mps_available=mps, version=version) if isinstance(rt, TorchRuntimeFacts) else rt
    return dataclasses.replace(f, torch=dataclasses.replace(f.torch, version=version), torch_runtime=rt)


def test_macos_lines_quote_torchs_refusal_not_a_blanket_claim():
    from flexdoctor.text import english

    for key in ("platform.macos_mps_rejected", "platform.macos_no_mps"):
        words = english(key, where="x", version="y")
        assert "does not run on macOS" not in words
        assert "torch.compile on current platform is not supported for CPU." in words
    old = run_check("FD601", _macos("2.5.1", mps=False))
    assert "before 2.6 has no CPU lowering" in old.message, old.message


def test_torch_source_excludes_darwin_from_cpu_flex():
    """The statement above, read from the installed torch (2.13 here)."""
    import inspect

    from torch._inductor.kernel.flex import flex_cpu

    assert 'sys.platform != "darwin"' in inspect.getsource(flex_cpu.check_cpu_supported)


# 7. FDE110 and FDE123 say one thing about minor-version compatibility: cubins from a newer ptxas
# of the same major load on an older driver; PTX from a newer toolkit does not JIT; nothing loads
# across majors (NVIDIA CUDA Compatibility, Minor Version Compatibility).
def test_fde110_and_fde123_agree():
    one = ("Within one CUDA major version, minor-version compatibility lets an older driver load cubins "
           "(SASS) built by a newer toolkit or ptxas")
    for eid in ("FDE110", "FDE123"):
        e = knowledge.get(eid)
        assert one in e.cause, eid
        assert "nor cubins from a newer ptxas" not in e.cause
        assert "a cubin from a CUDA 13 ptxas does not run on a 12.x driver" in e.cause
