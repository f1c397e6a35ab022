"""The structural readers of cov12 builder i4 (issue 22): installing and platforms. Lines are written here in the shape
the real code prints them (torch's _lazy_init with the hipified "No CUDA GPUs are available" of
c10/cuda/CUDAFunctions.cpp; pip's resolver "Could not find a version that satisfies the requirement ... (from versions:
...)"; poetry's installation/chooser.py Chooser.choose_for), not copied from the corpus; each class has siblings and a
healthy neighbour that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import healthy, ident


def _lazy_init(msg: str, home: str = "/home/ana/venvs/rocm") -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/ana/train.py", line 12, in <module>\n'
            "    model = Net().to('cuda')\n"
            f'  File "{home}/lib/python3.12/site-packages/torch/cuda/__init__.py", line 372, in _lazy_init\n'
            "    torch._C._cuda_init()\n"
            f"RuntimeError: {msg}\n")


# --- torch's ROCm build: no HIP GPU ------------------------------------------------------------------------------------

def test_no_hip_gpus_names_the_render_video_groups_and_container_devices():
    top, fix = first(_lazy_init("No HIP GPUs are available"))
    assert ident(top) == "cuda-error:hipErrorNoDevice"
    assert "usermod -a -G render,video" in fix and "--device=/dev/kfd" in fix and "HIP_VISIBLE_DEVICES" in fix, fix
    assert "rocminfo" in top.fix.commands


def test_no_hip_gpus_under_wsl_points_at_the_windows_driver():
    log = "Linux version 5.15.153.1-microsoft-standard-WSL2\n" + _lazy_init("No HIP GPUs are available")
    top, fix = first(log)
    assert ident(top) == "cuda-error:hipErrorNoDevice"
    assert "Windows AMD driver" in fix and "usermod" not in fix, fix


def test_no_cuda_gpus_sibling_keeps_the_cuda_reading():
    top, fix = first(_lazy_init("No CUDA GPUs are available"))
    assert ident(top) == "cuda-error:cudaErrorNoDevice"
    assert "render,video" not in fix, fix


def test_no_hip_gpus_in_a_fallback_notice_is_healthy():
    healthy("[2025-03-02 10:11:12] WARNING: No HIP GPUs are available, falling back to CPU\n"
            "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.52s/it]\n")


# --- pip: a ~= pin older than every release for this Python -------------------------------------------------------

def _pip(req: str, versions: str, py: str = "3.12") -> str:
    return (f"Requirement already satisfied: numpy in /home/ana/.venv/lib/python{py}/site-packages (1.26.4)\n"
            f"ERROR: Could not find a version that satisfies the requirement {req} (from versions: {versions})\n"
            f"ERROR: No matching distribution found for {req}\n")


@pytest.mark.parametrize("req", ["torch~=2.0.1", "torch==2.0.1"])
def test_pip_compatible_release_pin_older_than_the_python_names_the_python_range(req):
    top, fix = first(_pip(req, "2.2.0, 2.2.1, 2.2.2, 2.3.0"))
    assert ident(top) == "pip-no-distribution:torch"
    assert "Python 3.8 to 3.11" in fix and "2.2.0 or later" in fix, fix


def test_pip_compatible_release_pin_satisfied_is_healthy():
    healthy("Requirement already satisfied: torch~=2.2.0 in /home/ana/.venv/lib/python3.12/site-packages (2.2.2)\n"
            "Successfully installed sympy-1.12\n")


# --- poetry: a torch local build and the project's Python ---------------------------------------------------------

def _poetry(ver: str, chooser: str) -> str:
    return (f"  - Installing torch ({ver}): Failed\n\n  RuntimeError\n\n"
            f"  Unable to find installation candidates for torch ({ver})\n\n"
            f"  at {chooser}:74 in choose_for\n")


@pytest.mark.parametrize("ver,lo,hi", [("2.5.1+cu124", "3.9", "3.12"), ("2.4.1+cu121", "3.8", "3.12")])
def test_poetry_local_build_names_the_python_range_first_off_macos(ver, lo, hi):
    top, fix = first(_poetry(ver, "~\\AppData\\Roaming\\pypoetry\\venv\\Lib\\site-packages\\poetry\\installation"
                                  "\\chooser.py"))
    assert ident(top) == "version-constraint:torch"
    assert fix.startswith(f"torch {ver} publishes wheels only for CPython {lo}"), fix
    assert f"poetry env use {hi}" in fix and "sys_platform" in fix, fix


def test_poetry_local_build_on_macos_keeps_the_marker_advice_first():
    top, fix = first(_poetry("2.5.1+cu124", "/opt/homebrew/Cellar/poetry/1.8.3/libexec/lib/python3.13/site-packages/poetry/"
                               "installation/chooser.py"))
    assert ident(top) == "version-constraint:torch"
    assert fix.startswith("2.5.1+cu124 is a local build") and "CPython 3.9" in fix, fix


# --- uv: a torch local build, and PyTorch's find-links page -------------------------------------------------------

def _uv(req: str) -> str:
    return ("  × No solution found when resolving dependencies:\n"
            f"  ╰─▶ Because there is no version of {req} and you require {req}, we can conclude that your\n"
            "      requirements are unsatisfiable.\n")


@pytest.mark.parametrize("release,tag", [("1.8.1", "cu111"), ("2.0.1", "cpu")])
def test_uv_local_build_names_the_index_and_the_find_links_page(release, tag):
    top, fix = first(_uv(f"torch=={release}+{tag}"))
    assert ident(top) == "pip-no-distribution:torch"
    assert f"--index-url https://download.pytorch.org/whl/{tag}" in fix, fix
    assert f"uv pip install torch=={release}+{tag} -f https://download.pytorch.org/whl/torch_stable.html" in fix, fix


def test_uv_resolved_is_healthy():
    healthy("Resolved 24 packages in 1.31s\nPrepared 3 packages in 2.05s\nInstalled 3 packages in 40ms\n"
            " + torch==2.0.1+cpu\n")
