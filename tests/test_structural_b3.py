"""The structural layer's fourth round (issue 22, tune-b3): build toolchains (no C/C++ compiler on
Windows, Linux and macOS; a CUDA extension built without nvcc; pip's summary of a failed CUDA extension
build; a build run in an isolated environment without torch) and the entries that now name their
concrete remedy (xformers built for another torch, triton missing or mismatched). Every line here is
written for these tests in the shape the real tools print (not copied from the corpus)."""

from __future__ import annotations

import io

import pytest

from flexdoctor.knowledge import explain as kbx

from _explain_items import first as first_item
from _explain_items import fix_text, scan


def first(text: str):
    top = first_item(text)
    return top, fix_text(top).lower()


WIN_TB = ('Traceback (most recent call last):\n  File "D:\\apps\\sd\\venv\\Lib\\site-packages\\torch\\_inductor\\'
          'cpp_builder.py", line 141, in check_compiler_exist_windows\n'
          '    raise RuntimeError(f"Compiler: {compiler} is not found.") from exc\n')
LINUX_TB = ('Traceback (most recent call last):\n  File "/opt/venv/lib/python3.11/site-packages/torch/_inductor/'
            'cpp_builder.py", line 90, in get_cpp_compiler\n    raise exc.InvalidCxxCompiler\n')


# --- no C/C++ compiler ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    (WIN_TB + "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Compiler: cl is not found.\n",
     "vcvarsall"),
    (WIN_TB, "build tools"),  # a paste that ends at the raise line itself
    ("running build_ext\nerror: Microsoft Visual C++ 14.0 or greater is required. Get it with \"Microsoft C++ Build "
     "Tools\": https://visualstudio.microsoft.com/visual-cpp-build-tools/\n", "build tools"),
    (LINUX_TB + "torch._inductor.exc.InvalidCxxCompiler: No working C++ compiler found in "
     "torch._inductor.config.cpp.cxx: (None, 'g++')\n", "g++"),
    ("building 'mamba_ssm_cuda' extension\ngcc -pthread -fPIC -c csrc/selective_scan.cpp\n"
     "error: command 'gcc' failed: No such file or directory\n", "build-essential"),
])
def test_compiler_missing_names_the_platforms_compiler(text, want):
    top, fix = first(text)
    assert want in fix, fix


def test_compiler_missing_on_macos_is_xcode():
    text = ("Python 3.12.2 (main, Feb  6 2024) [Clang 15.0.0 (clang-1500.1.0.2.5)] on darwin\n"
            "Platform: macOS-14.4-arm64-arm-64bit\n"
            "error: command 'clang' failed: No such file or directory\n")
    top, fix = first(text)
    assert "xcode-select --install" in fix, fix


def test_compiler_version_warning_alone_is_no_problem():
    # torch.utils.cpp_extension warns when it cannot ask cl for its version; a later successful build
    # (or no build at all) means nothing failed.
    text = ("C:\\envs\\a\\lib\\site-packages\\torch\\utils\\cpp_extension.py:383: UserWarning: Error checking "
            "compiler version for cl: [WinError 2] The system cannot find the file specified\n"
            "  warnings.warn(f'Error checking compiler version for {compiler}: {error}')\n"
            "Successfully installed my-ext-0.1\n")
    assert not scan(text).found


# --- nvcc missing for a CUDA extension -----------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("  torch.__version__  = 2.4.1+cu121\n  Traceback (most recent call last):\n"
     "    File \"/tmp/pip-install-x/mamba-ssm/setup.py\", line 200, in <module>\n"
     "  RuntimeError: mamba_ssm was requested, but nvcc was not found.  Are you sure your environment has nvcc available?\n",
     "cuda_home=/usr/local/cuda-12.1"),
    ("Traceback (most recent call last):\n  File \"/home/u/src/causal-conv1d/setup.py\", line 9, in <module>\n"
     "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n",
     "prebuilt wheel"),
])
def test_nvcc_missing_names_toolkit_and_wheel(text, want):
    top, fix = first(text)
    assert want in fix and "cuda_home" in fix.replace("cuda-12.1", ""), fix


# --- pip's summary of a failed CUDA extension build ---------------------------------------------------

@pytest.mark.parametrize("dist", ["flash-attn", "deepspeed", "xformers"])
def test_failed_cuda_extension_build_gives_ninja_and_max_jobs(dist):
    text = (f"Building wheels for collected packages: {dist}\n  error: subprocess-exited-with-error\n"
            f"  Running setup.py install for {dist} ... error\nerror: legacy-install-failure\n")
    top, fix = first(text)
    assert "max_jobs" in fix and "ninja" in fix and dist in fix, fix


def test_failed_build_of_a_pure_python_package_is_not_a_cuda_build():
    text = "  Building wheel for rouge-score (setup.py) ... error\n  Failed building wheel for rouge-score\n"
    items = scan(text).ordered()
    assert not any("max_jobs" in (getattr(i, "fix", None) or kbx.fix_for(i)).summary.lower() for i in items)


# --- a build without torch in its isolated environment -------------------------------------------------

def test_uv_build_isolation_hint_beats_torch_not_installed():
    text = ("  ModuleNotFoundError: No module named 'torch'\n\n"
            "  hint: This error likely indicates that `causal-conv1d@1.5.0` depends on `torch`, but doesn't declare "
            "it as a build dependency.\n")
    top, fix = first(text)
    assert "--no-build-isolation" in fix and "causal-conv1d" in fix, fix


def test_pip_build_subprocess_without_torch():
    text = ("  × Getting requirements to build wheel did not run successfully.\n  │ exit code: 1\n"
            "  ╰─> [17 lines of output]\n      Traceback (most recent call last):\n"
            "        File \"<string>\", line 8, in <module>\n      ModuleNotFoundError: No module named 'torch'\n"
            "      [end of output]\n")
    top, fix = first(text)
    assert "--no-build-isolation" in fix, fix


def test_plain_torch_missing_still_says_install_torch():
    text = "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\nModuleNotFoundError: No module named 'torch'\n"
    top, fix = first(text)
    assert "no-build-isolation" not in fix and "pip install torch" in fix, fix


# --- entries that name their remedy ---------------------------------------------------------------------

@pytest.mark.parametrize("have, want", [("2.4.0+cpu", "cuda build"), ("2.5.1+cu124", "reinstall xformers")])
def test_xformers_built_for_other_torch_names_the_remedy(have, want):
    text = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            f"    PyTorch 2.4.0+cu121 with CUDA 1201 (you have {have})\n    Python  3.11.9 (you have 3.11.9)\n")
    top, fix = first(text)
    assert want in fix and "matching torch" in fix, fix


def test_triton_missing_says_install_triton():
    text = "Traceback (most recent call last):\n  File \"a.py\", line 2, in <module>\nModuleNotFoundError: No module named 'triton'\n"
    top, fix = first(text)
    assert "install triton" in fix, fix


# --- binaries built against one exact torch ------------------------------------------------------------

@pytest.mark.parametrize("path, dist", [
    ("/opt/venv/lib/python3.11/site-packages/vllm/_C.abi3.so", "vllm"),
    ("/usr/local/lib/python3.12/dist-packages/sgl_kernel/sm90/common_ops.abi3.so", "sgl-kernel"),
    ("/opt/venv/lib/python3.11/site-packages/torchao/_C.abi3.so", "torchao"),
])
def test_undefined_torch_symbol_in_a_torch_pinned_binary(path, dist):
    text = (f"Traceback (most recent call last):\n  File \"serve.py\", line 1, in <module>\n"
            f"ImportError: {path}: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev\n")
    top, fix = first(text)
    assert f"reinstall {dist}" in fix and "matching torch" in fix and f"m.requires('{dist}')" in fix, fix


def test_undefined_torch_symbol_in_a_source_built_extension_keeps_the_rebuild():
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 4, in <module>\n"
            "ImportError: /opt/venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: "
            "undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationESs\n")
    top, fix = first(text)
    assert "--no-build-isolation" in fix and "m.requires" not in fix, fix


# --- ptxas older than the PTX ----------------------------------------------------------------------------

@pytest.mark.parametrize("ptx, have, need", [("8.7", "8.4", "12.8"), ("8.6", "8.5", "12.7"), ("9.0", "8.8", "13.0")])
def test_ptxas_older_than_the_ptx_names_the_cuda_it_needs(ptx, have, need):
    text = (f"ptxas /tmp/tmpk2j1x9/kernel.ptx, line 5; fatal   : Unsupported .version {ptx}; current version is '{have}'\n"
            "ptxas fatal   : Ptx assembly aborted due to errors\nTraceback (most recent call last):\n"
            "  File \"/opt/venv/lib/python3.12/site-packages/triton/backends/nvidia/compiler.py\", line 380, in make_cubin\n"
            "subprocess.CalledProcessError: Command '['/usr/local/cuda/bin/ptxas', '-lineinfo']' returned non-zero exit status 255.\n")
    top, fix = first(text)
    assert "triton_ptxas_path" in fix and f"cuda {need}" in fix, fix


def test_unknown_ptx_isa_gives_no_invented_version():
    text = "ptxas fatal   : Unsupported .version 42.1; current version is '8.5'\n"
    items = scan(text).ordered()
    assert not any(getattr(i, "kind", "") == "version-constraint" for i in items)


# --- SDPA with no kernel left ------------------------------------------------------------------------------

def test_no_available_kernel_names_the_math_fallback_and_the_flash_option():
    text = ("Traceback (most recent call last):\n  File \"/srv/lib/attend.py\", line 90, in forward\n"
            "    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n"
            "RuntimeError: No available kernel.  Aborting execution.\n")
    top, fix = first(text)
    assert "enable_math=true" in fix and "flash_attn=false" in fix and "is_causal" in fix, fix


# --- a submodule missing from an installed package -------------------------------------------------------

def test_missing_submodule_of_an_installed_package_is_a_version_mismatch_of_the_importer():
    text = ("Traceback (most recent call last):\n  File \"run.py\", line 1, in <module>\n"
            "  File \"/opt/venv/lib/python3.11/site-packages/peft/__init__.py\", line 22, in <module>\n"
            "    from transformers.generation.beam_search import BeamScorer\n"
            "ModuleNotFoundError: No module named 'transformers.generation.beam_search'\n")
    top, fix = first(text)
    assert "upgrade peft" in fix and "transformers version" in fix and "pip check" in fix, fix


def test_missing_submodule_of_torch_is_not_called_a_version_mismatch():
    text = ("Traceback (most recent call last):\n  File \"run.py\", line 1, in <module>\n"
            "ModuleNotFoundError: No module named 'torch._C'\n")
    items = scan(text).ordered()
    assert not any("written for another" in ((getattr(i, "fix", None) or kbx.fix_for(i)).summary) for i in items)


def test_missing_module_cut_before_its_quote():
    text = ("ModuleNotFoundError                       Traceback (most recent call last)\n"
            "----> 1 import deepspeed\n\nModuleNotFoundError: No module named 'deepspeed\n")
    top, fix = first(text)
    assert "pip install deepspeed" in fix, fix


# --- an error inside Inductor ---------------------------------------------------------------------------

@pytest.mark.parametrize("tail", [
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nAssertionError: unexpected stride\n",
    "torch._inductor.exc.InductorError: AssertionError: buffer not allocated\n",
])
def test_inductor_internal_error_gives_upgrade_and_eager_fallback(tail):
    text = ("Traceback (most recent call last):\n  File \"/srv/train.py\", line 80, in <module>\n"
            "    loss = model(batch)\n" + tail)
    top, fix = first(text)
    assert "suppress_errors" in fix and "dynamic=false" in fix, fix


def test_inductor_fallback_warning_that_recovered_is_no_problem():
    text = ("W1024 01:17:10.936000 1404 torch/_dynamo/convert_frame.py:1009] torch._dynamo.exc.BackendCompilerFailed: "
            "backend='inductor' raised:\nW1024 01:17:10.936000 1404 torch/_dynamo/convert_frame.py:1009] NameError: name "
            "'s4' is not defined\n{'loss': 1.2031, 'learning_rate': 2e-05, 'epoch': 0.1}\n"
            " 10%|#         | 10/100 [00:05<00:45,  1.98it/s]\n")
    assert not scan(text).found


# --- siblings: torchvision's CUDA check, torch's JIT extension cache, vLLM's ops warning ---------------------

def test_torchvision_built_for_another_cuda_major_pins_the_pair():
    text = ("PyTorch version: 2.5.1+cu118\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n"
            "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
            "PyTorch has CUDA Version=11.8 and torchvision has CUDA Version=12.4. Please reinstall the torchvision that "
            "matches your PyTorch install.\n")
    top, fix = first(text)
    assert "torchvision==0.20.1 --index-url https://download.pytorch.org/whl/cu118" in fix, fix


def test_jit_extension_from_another_torch_is_rebuilt_in_a_new_cache():
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
            "ImportError: /home/u/.cache/torch_extensions/py311_cu124/cpu_adam/cpu_adam.so: undefined symbol: "
            "_ZN3c1017RegisterOperatorsD1Ev\n")
    top, fix = first(text)
    assert "torch_extensions_dir" in fix and "cpu_adam" in fix and "rm " not in fix, fix


def test_vllm_ops_warning_with_a_torch_symbol_is_the_problem():
    text = ("WARNING 01-09 10:00:01 _custom_ops.py:21] Failed to import from vllm._C with ImportError('/srv/venv/lib/"
            "python3.12/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE')\n")
    top, fix = first(text)
    assert "reinstall vllm" in fix and "matching torch" in fix, fix


def test_vllm_ops_warning_without_a_symbol_is_not_this_entry():
    text = "WARNING 01-09 10:00:01 _custom_ops.py:21] Failed to import from vllm._C with ModuleNotFoundError('No module named vllm._C')\n"
    assert not any(getattr(getattr(p, "entry", None), "id", "") == "FDE728" for p in scan(text).ordered())
