"""The structural readers of tune-h7 (issue 22, round 10 train): installing and platforms. Lines are written here in
the shape the real code prints them (poetry's installation/chooser.py Chooser.choose_for and its console renderer; gdb's
stop line and disassembly marker; a shell's SIGILL line), not copied from the corpus; each class has siblings and a
healthy neighbour that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import healthy, ident, scan


def _poetry(pkg: str, ver: str, py: str = "3.12") -> str:
    return (f"  - Installing {pkg} ({ver}): Failed\n\n  RuntimeError\n\n"
            f"  Unable to find installation candidates for {pkg} ({ver})\n\n"
            f"  at /home/dev/.local/share/pypoetry/venv/lib/python{py}/site-packages/poetry/installation/chooser.py:74"
            " in choose_for\n"
            "       70│\n       73│         if not links:\n"
            '    →  74│             raise RuntimeError(f"Unable to find installation candidates for {package}")\n')


# --- poetry: no installation candidates -------------------------------------------------------------------------------

def test_poetry_torch_release_names_its_python_range_and_poetry_env_use():
    top, fix = first(_poetry("torch", "1.12.1", "3.11"))
    assert ident(top) == "version-constraint:torch"
    assert "3.7-3.10" in fix and "poetry env use 3.10" in fix, fix
    assert "Intel Mac" not in fix  # 1.12.1 has macOS x86_64 wheels


def test_poetry_torch_after_2_2_names_the_intel_mac_limit():
    top, fix = first(_poetry("torch", "2.4.1", "3.11"))
    assert ident(top) == "version-constraint:torch"
    assert "2.2.2" in fix and "x86_64" in fix and "poetry env use 3.12" in fix, fix


@pytest.mark.parametrize("ver,local", [("2.1.0+cpu", "cpu"), ("2.2.1+cu121", "cu121")])
def test_poetry_torch_local_version_gets_platform_markers(ver, local):
    top, fix = first(_poetry("torch", ver))
    assert ident(top) == "version-constraint:torch"
    assert "sys_platform" in fix and f"https://download.pytorch.org/whl/{local}" in fix, fix


@pytest.mark.parametrize("dist,ver", [("nvidia-cublas-cu11", "11.10.3.66"), ("nvidia-cudnn-cu11", "8.5.0.96")])
def test_poetry_nvidia_cuda_wheel_from_torch_113_metadata(dist, ver):
    top, fix = first(_poetry(dist, ver, "3.10"))
    assert ident(top) == f"version-constraint:{dist}"
    assert "poetry lock" in fix and "markers" in fix and "2.0.0" in fix, fix


def test_poetry_other_package_reads_the_python_tags():
    top, fix = first(_poetry("tokenizers", "0.13.3", "3.12"))
    assert ident(top) == "version-constraint:tokenizers"
    assert "poetry env use" in fix and "cpXY" in fix, fix


def test_poetry_successful_install_is_healthy():
    healthy("Installing dependencies from lock file\n\nPackage operations: 3 installs, 0 updates, 0 removals\n\n"
            "  - Installing nvidia-cublas-cu11 (11.10.3.66)\n  - Installing torch (2.3.1)\n"
            "  - Installing tokenizers (0.13.3)\n\nInstalling the current project: demo (0.1.0)\n")


# --- SIGILL on ARMv8.0 ------------------------------------------------------------------------------------------------

def test_gdb_sigill_with_lse_instruction_in_disassembly():
    log = ('Thread 1 "python3" received signal SIGILL, Illegal instruction.\n'
           "0x0000ffffa3b1c2d0 in c10::intrusive_ptr_target::release_() ()\n"
           "   from /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so\n(gdb) x/2i $pc\n"
           "=> 0x0000ffffa3b1c2d0 <+16>:\tcasal\tx1, x2, [x0]\n   0x0000ffffa3b1c2d4 <+20>:\tret\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:cpu-instructions"
    assert "casal" in top.cause and "ARMv8.1" in top.cause and "ARMv8.0" in fix, (top.cause, fix)


def test_gdb_sigill_with_known_torch_release_names_the_previous_one():
    log = ("Successfully installed torch-2.4.0\n>>> import torch\n\nProgram received signal SIGILL, Illegal instruction.\n"
           "0x0000007fa5d01450 in std::string::_Rep::_M_dispose(std::allocator<char> const&) ()\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:cpu-instructions"
    assert "pip install torch==2.3.1" in fix and "Cortex-A72" in fix, fix


def test_shell_sigill_after_torch_version_line_names_previous_release():
    top, fix = first("Using PyTorch version 2.6.0\nLoading model...\nIllegal instruction (core dumped)\n")
    assert ident(top) == "unsupported-op:cpu-instructions"
    assert "2.5.1" in fix and "downgrade torch" in fix, fix


def test_shell_sigill_without_torch_keeps_the_generic_reading():
    top, fix = first(">>> import numpy\nIllegal instruction (core dumped)\n")
    assert ident(top) == "unsupported-op:cpu-instructions"
    assert "ldaddal" not in fix and "avx" in fix.lower(), fix


def test_disassembly_of_a_healthy_session_is_silent():
    healthy("(gdb) x/3i $pc\n=> 0x0000ffffa3b1c2d0 <+16>:\tldr\tx1, [x0, #8]\n"
            "   0x0000ffffa3b1c2d4 <+20>:\tldaddal\tw2, w2, [x3]\n(gdb) continue\n[Inferior 1 (process 4242) exited normally]\n")


def test_sigsegv_is_not_read_as_sigill():
    result = scan("Program received signal SIGSEGV, Segmentation fault.\n0x00007ffff7a3b1c2 in free () from /lib/libc.so.6\n")
    assert not any(getattr(a, "subject", "") == "cpu-instructions" for a in result.answers)


# --- bitsandbytes before 0.43 on native Windows --------------------------------------------------------------------

_BNB = r"C:\Users\ana\miniconda3\envs\llm\lib\site-packages\bitsandbytes"


@pytest.mark.parametrize("binary", ["libbitsandbytes_cpu.so", "libbitsandbytes_cuda118.so"])
def test_bnb_linux_binary_on_a_windows_path(binary):
    log = (f"CUDA SETUP: Loading binary {_BNB}\\{binary}...\n"
           "argument of type 'WindowsPath' is not iterable\n"
           "CUDA SETUP: Problem: The main issue seems to be that the main CUDA library was not detected.\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:bitsandbytes"
    assert 'bitsandbytes>=0.43.0' in fix and "python -m bitsandbytes" in fix, fix


def test_bnb_community_dll_missing_sibling():
    log = (f"CUDA SETUP: Loading binary {_BNB}\\cuda_setup\\libbitsandbytes_cuda118.dll...\n"
           f"Could not find module '{_BNB}\\cuda_setup\\libbitsandbytes_cuda118.dll' (or one of its dependencies). "
           "Try using the full path with constructor syntax.\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:bitsandbytes" and "bitsandbytes-windows" in fix, fix


def test_bnb_official_windows_dll_and_linux_so_path_are_not_read_as_old_windows_builds():
    result = scan(f"Loaded {_BNB}\\libbitsandbytes_cuda121.dll\n"
                  "loading /opt/venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cuda121.so\n")
    assert not any(getattr(a, "subject", "") == "bitsandbytes" for a in result.answers)


# --- a download.pytorch.org CUDA index that does not exist --------------------------------------------------------

def test_nonexistent_cuda_index_names_the_nearest_build_of_the_requested_torch():
    log = ("$ pip install torch==2.9.1 --index-url https://download.pytorch.org/whl/cu131\n"
           "Looking in indexes: https://download.pytorch.org/whl/cu131\n"
           "ERROR: Could not find a version that satisfies the requirement torch==2.9.1 (from versions: none)\n"
           "ERROR: No matching distribution found for torch==2.9.1\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:torch"
    assert "--index-url https://download.pytorch.org/whl/cu130" in fix and "torch==2.9.1" in fix, fix


def test_nonexistent_cuda_index_sibling_without_a_torch_version():
    log = ("Looking in indexes: https://download.pytorch.org/whl/cu122\n"
           "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:torch" and "whl/cu121" in fix, fix


@pytest.mark.parametrize("line", ["Looking in indexes: https://download.pytorch.org/whl/cu128",
                                  "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cu131"])
def test_existing_or_extra_index_is_silent(line):
    healthy(f"{line}\nCollecting torch\n  Using cached torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl\n"
            "Successfully installed torch-2.9.1\n")


def test_no_torch_at_all_names_the_python_each_release_first_covers():
    log = ("Looking in indexes: https://download.pytorch.org/whl/cu116\n"
           "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
           "ERROR: No matching distribution found for torch\n")
    top, fix = first(log)
    assert ident(top) == "pip-no-distribution:torch"
    assert "Python 3.12: torch 2.2.0" in fix and "Python 3.11" in fix and "cu118" in fix, fix


def test_no_version_of_another_package_keeps_the_generic_words():
    top, fix = first("ERROR: Could not find a version that satisfies the requirement xformers (from versions: none)\n"
                     "ERROR: No matching distribution found for xformers\n")
    assert "Python 3.12: torch" not in fix, fix


# --- FDE526's fix for torch 2.4.0's fbgemm.dll (an edit of an existing entry's fix) ----------------------------------

def test_fbgemm_dll_of_torch_240_names_libomp140_and_the_releases_around_it():
    log = ('  File "C:\\apps\\venv\\Lib\\site-packages\\torch\\__init__.py", line 148, in <module>\n    raise err\n'
           'OSError: [WinError 126] The specified module could not be found. Error loading '
           '"C:\\apps\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.\n')
    top, fix = first(log)
    assert "libomp140" in fix and "torch==2.3.1" in fix and "2.4.1" in fix, fix


# --- a system library installed by hand (libraries.toml ldpath) and a BLAS routine undefined -----------------------

@pytest.mark.parametrize("lib", ["libmpi.so.40", "libmpich.so.12"])
def test_mpi_library_names_ld_library_path(lib):
    log = ('  File "/opt/venvs/dist/lib/python3.10/site-packages/torch/__init__.py", line 229, in <module>\n'
           f"    from torch._C import *\nImportError: {lib}: cannot open shared object file: No such file or directory\n")
    top, fix = first(log)
    assert ident(top) == f"shared-library:{lib}"
    assert "LD_LIBRARY_PATH" in fix and "ldconfig" in fix, fix


@pytest.mark.parametrize("sym", ["sgesdd", "dgetrf_", "cblas_sgemm"])
def test_undefined_blas_routine_names_openblas(sym):
    log = ('  File "/home/nv/.local/lib/python3.8/site-packages/torch/__init__.py", line 196, in <module>\n'
           "    from torch._C import *\n"
           f"ImportError: /home/nv/.local/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: {sym}\n")
    top, fix = first(log)
    assert ident(top) == "undefined-symbol:blas" and "libopenblas-dev" in fix, fix


def test_undefined_torch_symbol_is_not_read_as_blas():
    top, fix = first("ImportError: /opt/env/lib/python3.11/site-packages/xformers/_C.so: undefined symbol: "
                     "_ZN3c104cuda9SetDeviceEi\n")
    assert ident(top) != "undefined-symbol:blas", fix


# --- CUDAExtension's CUDA_HOME lookup in a truncated traceback ----------------------------------------------------

@pytest.mark.parametrize("call", ['library_paths(device_type="cuda")', "library_paths(cuda=True)",
                                  'include_paths(device_type="cuda")'])
def test_cuda_extension_frame_without_its_exception_reads_as_no_nvcc(call):
    target = call.split("(")[0].replace("_paths", "_dirs")
    log = ("  error: subprocess-exited-with-error\n  × python setup.py egg_info did not run successfully.\n"
           "  ╰─> [18 lines of output]\n      Traceback (most recent call last):\n"
           '        File "/tmp/pip-install-k2j/mamba-ssm_1f0c/setup.py", line 188, in <module>\n'
           "          CUDAExtension(\n"
           '        File "/opt/conda/envs/ssm/lib/python3.11/site-packages/torch/utils/cpp_extension.py", line 1568, '
           "in CUDAExtension\n"
           f"          {target} += {call}\n")
    top, fix = first(log)
    assert ident(top).startswith("pip-no-distribution:") and "CUDA_HOME" in fix and "prebuilt wheel" in fix, fix


def test_cpu_extension_frame_is_not_read_as_no_nvcc():
    result = scan('  File "/opt/env/lib/python3.11/site-packages/torch/utils/cpp_extension.py", line 1429, in CppExtension\n'
                  "    library_dirs += library_paths()\n")
    assert not any("nvcc" in (getattr(a, "title", "") or "") for a in result.answers)
