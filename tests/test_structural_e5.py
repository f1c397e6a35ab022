"""The structural layer's round-5 readers of tune-e5 (issue 22): a torch without CUDA and JetPack libraries on a
Jetson (NVIDIA's wheels for the L4T release the log shows), SIGILL from numpy's OpenBLAS on a Jetson, uv without the
PyTorch index (+cuXYZ local versions, the first-index strategy), and a failed pip build read by the cause printed
above pip's summary (no Rust, a Python-version guard) or, without one, by the package and where to look. Lines are
written here in the shape the real tools print (torch/cuda/__init__.py, /etc/nv_tegra_release, uv's
pubgrub/report.rs, pip's and setuptools-rust's messages), not copied from the corpus; each class has a sibling and
a healthy line that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import fix_text, healthy, ident, scan


NOT_COMPILED = ("Traceback (most recent call last):\n"
                '  File "/home/nvidia/app/infer.py", line 31, in <module>\n'
                "    net = net.cuda()\n"
                '  File "/home/nvidia/.local/lib/python3.8/site-packages/torch/cuda/__init__.py", line 289, in _lazy_init\n'
                '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
                "AssertionError: Torch not compiled with CUDA enabled\n")


# --- Jetson: a torch without CUDA, JetPack libraries ---------------------------------------------------------

def test_pypi_torch_on_jetpack5_gets_nvidias_wheel_for_l4t_r35():
    log = ("$ cat /etc/nv_tegra_release\n"
           "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, DATE: Tue Aug  1 2023\n"
           + NOT_COMPILED)
    top, fix = first(log)
    assert ident(top) == "unsupported-op:jetson", ident(top)
    assert "developer.download.nvidia.com/compute/redist/jp/v512/pytorch/torch-2.1.0a0+41361538.nv23.06-cp38" in fix
    assert "download.pytorch.org/whl/cu126" not in fix


def test_jetpack_6_2_gets_the_jetson_ai_lab_index():
    log = "Jetson AGX Orin 64GB, JetPack 6.2 (L4T R36.4.3), Python 3.10\n" + NOT_COMPILED
    top, fix = first(log)
    assert ident(top) == "unsupported-op:jetson"
    assert "--index-url https://pypi.jetson-ai-lab.io/jp6/cu126" in fix, fix


def test_jetpack_6_0_is_not_given_the_cuda_12_6_index():
    top, fix = first("L4T R36.3.0 (JetPack 6.0)\n" + NOT_COMPILED)
    assert ident(top) == "unsupported-op:jetson"
    assert "jp/v60/pytorch" in fix and "jp6/cu126 " not in fix


def test_thor_gets_the_sbsa_cu130_index():
    top, fix = first("Jetson AGX Thor Developer Kit\n" + NOT_COMPILED)
    assert "https://pypi.jetson-ai-lab.io/sbsa/cu130" in fix, fix


def test_a_tegra_kernel_without_release_lists_each_jetpack_and_asks_for_it():
    log = "Linux orin 5.15.148-tegra #1 SMP PREEMPT aarch64 GNU/Linux\n" + NOT_COMPILED
    top, fix = first(log)
    assert ident(top) == "unsupported-op:jetson"
    assert "cat /etc/nv_tegra_release" in fix and "jp6/cu126" in fix and "sbsa/cu130" in fix


def test_not_compiled_on_a_desktop_stays_the_cpu_wheel_entry():
    log = "Linux ws 6.8.0-45-generic #45-Ubuntu SMP x86_64 GNU/Linux\n" + NOT_COMPILED
    top, fix = first(log)
    assert ident(top) == "FDE204", ident(top)
    assert "jetson" not in fix.lower()


def test_a_missing_cudnn_on_a_jetson_is_jetpacks():
    log = ("# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64\n"
           ">>> import torch\nTraceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.8/dist-packages/torch/__init__.py", line 229, in <module>\n'
           "    from torch._C import *\n"
           "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:jetson", ident(top)
    assert fix.split("\n")[1] == "sudo apt-get install -y nvidia-jetpack"


def test_sigill_on_a_jetson_nano_is_openblas_coretype():
    log = ("nvidia@nano:~$ uname -a\nLinux nano 4.9.337-tegra #1 SMP PREEMPT Thu Jun 8 21:19:14 PDT 2023 aarch64 "
           "aarch64 aarch64 GNU/Linux\nnvidia@nano:~$ python3 -c 'import numpy'\n"
           "Illegal instruction (core dumped)\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:cpu-instructions"
    assert fix.split("\n")[1] == "export OPENBLAS_CORETYPE=ARMV8", fix


def test_sigill_on_an_x86_box_keeps_the_cpu_flags_reading():
    top, fix = first("$ python -c 'import tensorflow'\nIllegal instruction (core dumped)\n")
    assert "OPENBLAS_CORETYPE=ARMV8" not in fix.split("\n")[1:], fix
    assert "/proc/cpuinfo" in fix


def test_a_healthy_jetson_run_stays_silent():
    healthy("# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64\n"
            "Linux orin 5.15.148-tegra #1 SMP PREEMPT aarch64 GNU/Linux\n"
            "JetPack 6.2 / L4T R36.4.3\n2.8.0 True Orin\nepoch 1: accuracy 0.91\n")


# --- uv and the PyTorch index ----------------------------------------------------------------------------

def test_uv_local_cuda_version_not_on_pypi_gets_the_pytorch_index():
    log = ("$ uv pip install torch==2.5.1+cu121\n  \u00d7 No solution found when resolving dependencies:\n"
           "  \u2570\u2500\u25b6 Because torch==2.5.1+cu121 was not found in the package registry and you require "
           "torch==2.5.1+cu121, we can conclude that your requirements are unsatisfiable.\n")
    top, fix = first(log)
    assert ident(top) == "pip-no-distribution:torch"
    assert "uv pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121" in fix
    assert "--torch-backend=cu121" in fix and "0.6.9" in fix  # the flag with the uv that has it


def test_uv_sibling_no_version_of_torchvision():
    log = ("  \u00d7 No solution found when resolving dependencies:\n  \u2570\u2500\u25b6 Because there is no version of "
           "torchvision==0.19.1+cu118 and you require torchvision==0.19.1+cu118, we can conclude that your "
           "requirements are unsatisfiable.\n")
    top, fix = first(log)
    assert "uv pip install torchvision==0.19.1 --index-url https://download.pytorch.org/whl/cu118" in fix


def test_uv_asks_for_a_torch_build_that_never_existed():
    log = ("  \u2570\u2500\u25b6 Because torch==2.6.0+cu121 was not found in the package registry and you require "
           "torch==2.6.0+cu121, we can conclude that your requirements are unsatisfiable.\n")
    top, fix = first(log)
    assert ident(top) == "pip-no-distribution:torch"
    assert "cu124" in top.cause and "whl/cu121" not in fix, (top.cause, fix)


def test_uv_first_index_hint_names_the_index_strategy():
    log = ("  \u00d7 No solution found when resolving dependencies:\n  \u2570\u2500\u25b6 Because only "
           "numpy<=1.26.3 is available and you require numpy>=2.0, we can conclude that your requirements are "
           "unsatisfiable.\n\n      hint: `numpy` was found on https://download.pytorch.org/whl/cu124, but not at the "
           "requested version (numpy>=2.0). A compatible version may be available on a subsequent index (e.g., "
           "https://pypi.org/simple). By default, uv will only consider versions that are published on the first "
           "index that contains a given package, to avoid dependency confusion attacks. If all indexes are "
           "equivalent, consider running with `--index-strategy unsafe-best-match`.\n")
    top, fix = first(log)
    assert ident(top) == "pip-no-distribution:numpy"
    assert "export UV_INDEX_STRATEGY=unsafe-best-match" in fix and "[tool.uv.sources]" in fix


def test_a_healthy_uv_install_stays_silent():
    healthy("$ uv pip install torch --index-url https://download.pytorch.org/whl/cu121\n"
            "Resolved 12 packages in 1.31s\nPrepared 12 packages in 40.2s\nInstalled 12 packages in 180ms\n"
            " + torch==2.5.1+cu121\n + triton==3.1.0\n")


# --- pip builds: the cause above the summary -------------------------------------------------------------

def _pip_build(pkg: str, output: str) -> str:
    return (f"Building wheels for collected packages: {pkg}\n"
            f"  Building wheel for {pkg} (pyproject.toml) ... error\n  error: subprocess-exited-with-error\n\n"
            f"  \u00d7 Building wheel for {pkg} (pyproject.toml) did not run successfully.\n  \u2502 exit code: 1\n"
            f"  \u2570\u2500> [8 lines of output]\n{output}      [end of output]\n\n"
            "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
            f"  ERROR: Failed building wheel for {pkg}\nFailed to build {pkg}\n"
            f"ERROR: Could not build wheels for {pkg}, which is required to install pyproject.toml-based projects\n")


def test_a_build_without_a_readable_cause_names_the_package_and_where_to_look():
    top, fix = first(_pip_build("pyjq", "      running bdist_wheel\n      running build\n      running build_ext\n"))
    assert ident(top) == "pip-no-distribution:pyjq"
    assert "first 'error:'" in fix and "python -m pip install --only-binary=:all: pyjq" in fix
    assert "nvcc" not in fix  # not a CUDA extension: no CUDA toolkit advice


def test_no_rust_compiler_is_read_above_the_summary():
    out = ("      running build_rust\n      error: can't find Rust compiler\n\n      If you are using an outdated pip "
           "version, it is possible a prebuilt wheel is available for this package but pip is not able to install "
           "from it.\n")
    top, fix = first(_pip_build("tokenizers", out))
    assert ident(top) == "pip-no-distribution:rust"  # tune-e2's reading (e2.rust), above pip's summary
    assert "https://sh.rustup.rs" in fix


def test_maturin_sibling_cargo_not_installed():
    out = ("      Cargo, the Rust package manager, is not installed or is not on PATH.\n      This package requires "
           "Rust and Cargo to compile extensions. Install it through the system's package manager or via "
           "https://rustup.rs/\n")
    top, _fix = first(_pip_build("orjson", out))
    assert ident(top) == "pip-no-distribution:rust"


def test_a_python_version_guard_in_setup_py_is_the_cause():
    log = ("  Preparing metadata (setup.py) ... error\n  error: subprocess-exited-with-error\n\n"
           "  \u00d7 python setup.py egg_info did not run successfully.\n  \u2502 exit code: 1\n  \u2570\u2500> [5 lines of output]\n"
           "      Traceback (most recent call last):\n"
           '        File "/tmp/pip-install-k2/oldpkg_3/setup.py", line 9, in <module>\n'
           '          raise RuntimeError("oldpkg requires Python 3.9 or older")\n'
           "      RuntimeError: oldpkg requires Python 3.9 or older\n      [end of output]\n\n"
           "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
           "error: metadata-generation-failed\n\n\u00d7 Encountered error while generating package metadata.\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:python", ident(top)
    assert "Python 3.9 or older" in fix


def test_a_compiler_read_above_still_comes_first():
    out = ("      building 'pycocotools._mask' extension\n"
           "      error: command 'gcc' failed: No such file or directory\n")
    result = scan(_pip_build("pycocotools", out))
    idents = [ident(x) for x in result.ordered()]
    assert idents[0] == "unsupported-op:compiler" and "pip-no-distribution:pycocotools" in idents, idents


def test_a_cuda_extension_summary_keeps_its_own_reading():
    top, fix = first(_pip_build("flash-attn", "      running build_ext\n"))
    assert "--only-binary=:all: flash-attn" not in fix


def test_a_successful_build_stays_silent():
    healthy("Building wheels for collected packages: pycocotools\n"
            "  Building wheel for pycocotools (pyproject.toml) ... done\n"
            "  Created wheel for pycocotools: filename=pycocotools-2.0.7-cp311-cp311-linux_x86_64.whl\n"
            "Successfully built pycocotools\nInstalling collected packages: pycocotools\n"
            "Successfully installed pycocotools-2.0.7\n  warning: Python 3.13 is not supported by this release yet\n")
