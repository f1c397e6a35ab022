"""The structural layer's round 4 (issue 22, tune-c4): GPU hardware faults (NVIDIA Xid), no usable GPU
(CUDA/XPU, nvidia-smi missing), text read with a locale code page, Windows symlink privilege and long
paths, macOS architecture and MPS, ROCm rocBLAS/MIOpen. Every line here is written for these tests in the
shape the real tools print (not copied from the corpus); each class has a healthy sibling that must stay
silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import fix_text, healthy, ident


# --- GPU hardware faults (Xid) -------------------------------------------------------------------------

@pytest.mark.parametrize("text, subject, want", [
    ("[Mon Jun  2 10:01:44 2025] NVRM: Xid (PCI:0000:41:00): 79, pid=9911, name=torchrun, GPU has fallen off the bus.\n",
     "Xid 79", "sudo lspci -vvv -s 0000:41:00.0"),
    ("kernel: NVRM: GPU at PCI:0000:41:00: GPU-1b2c3d4e-0000-1111-2222-333344445555\n"
     "kernel: NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.\n", "Xid 79", "reboot"),
    ("Unable to determine the device handle for GPU0000:C1:00.0: GPU is lost.  Reboot the system to recover this GPU\n",
     "Xid 79", "reboot"),
    ("[ 771.20] NVRM: Xid (PCI:0000:17:00): 48, pid=3110, name=python, An uncorrectable double bit error (DBE) has "
     "been detected on GPU in the framebuffer at partition 2, subpartition 1.\n", "Xid 48", "sudo nvidia-smi -r -i 0000:17:00.0"),
    ("[ 771.30] NVRM: Xid (PCI:0000:17:00): 95, pid=3110, name=python, Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No\n",
     "Xid 95", "ROW_REMAPPER"),
    ("[9901.3] NVRM: Xid (PCI:0000:b7:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 5"
     "(0x0, 0x0, 0x0, 0x1000, 0x0, 0x0, 0x0)\n", "Xid 74", "nvidia-smi nvlink -e -i 0000:b7:00.0"),
    ("[  12.9] NVRM: Xid (0000:02:00): 64, pid=77, Dynamic Page Retirement: Fatal error, unable to retire page (0x0012ab)\n",
     "Xid 64", "RMA"),
    ("[ 4410.2] NVRM: Xid (PCI:0000:3d:00): 119, pid=8100, name=python3, Timeout after 6s of waiting for RPC response "
     "from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL).\n", "Xid 119", "driver"),
])
def test_xid_gives_the_operators_action(text, subject, want):
    top, fix = first(text)
    assert ident(top) == f"cuda-error:{subject}"
    assert want in fix, fix


def test_xid_of_the_application_ranks_below_the_cuda_error():
    text = ("[ 99.1] NVRM: Xid (PCI:0000:01:00): 31, pid=4242, name=python, Ch 00000008, intr 00000000. "
            "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_34560000.\n"
            "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    y = f(x)\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    top, fix = first(text)
    assert ident(top) == "cuda-error:cudaErrorIllegalAddress"


def test_xid_45_alone_is_a_consequence_not_an_answer():
    from _explain_items import scan
    answers = scan("[ 5.0] NVRM: Xid (PCI:0000:01:00): 45, pid=4242, name=python, Ch 00000010\n").answers
    assert not any(a.subject == "Xid 45" for a in answers)


def test_nvidia_smi_healthy_table_is_silent():
    healthy("+-----------------------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 550.120                Driver Version: 550.120        CUDA Version: 12.4     |\n"
            "|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:41:00.0 Off |                    0 |\n"
            "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.120  Fri Sep 13 10:10:01 UTC 2024\n")


# --- no usable GPU -------------------------------------------------------------------------------------

def test_no_cuda_gpus_points_at_visibility():
    top, fix = first('Traceback (most recent call last):\n  File "/srv/app/run.py", line 9, in <module>\n'
                     '    net.cuda()\nRuntimeError: No CUDA GPUs are available\n')
    assert ident(top) == "cuda-error:cudaErrorNoDevice"
    assert "unset CUDA_VISIBLE_DEVICES" in fix and "--gpus all" in fix


@pytest.mark.parametrize("text, want", [
    ("root@c0ffee:/app# nvidia-smi\nbash: nvidia-smi: command not found\n", "--gpus all"),
    ("$ nvidia-smi\n/bin/sh: 1: nvidia-smi: not found\n", "--gpus all"),
    ("Command 'nvidia-smi' not found, but can be installed with:\nsudo apt install nvidia-utils-550\n",
     "sudo ubuntu-drivers autoinstall"),
    ("C:\\Users\\ana>nvidia-smi\n'nvidia-smi' is not recognized as an internal or external command,\n"
     "operable program or batch file.\n", "System32"),
])
def test_nvidia_smi_missing_names_driver_or_runtime(text, want):
    top, fix = first(text)
    assert ident(top) == "cuda-error:nvidia-smi"
    assert want in fix, fix


def test_no_xpu_devices():
    top, fix = first("RuntimeError: No XPU devices are available.\n")
    assert ident(top) == "cuda-error:xpu" and "download.pytorch.org/whl/xpu" in fix


def test_gpu_presence_notices_are_silent():
    healthy("torch.cuda.is_available(): True\nCUDA_VISIBLE_DEVICES=0,1\nFound 2 CUDA GPUs\n"
            "Checking for nvidia-smi ... /usr/bin/nvidia-smi\n")


# --- text read with a locale code page -------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("UnicodeDecodeError: 'gbk' codec can't decode byte 0xa6 in position 210: illegal multibyte sequence\n",
     "setx PYTHONUTF8 1"),
    ("UnicodeDecodeError: 'cp932' codec can't decode byte 0x87 in position 11: illegal multibyte sequence\n",
     "setx PYTHONUTF8 1"),
    ("UnicodeDecodeError: 'charmap' codec can't decode byte 0x8f in position 4410: character maps to <undefined>\n",
     "setx PYTHONUTF8 1"),
    ("UnicodeEncodeError: 'cp949' codec can't encode character '\\u2713' in position 3: illegal multibyte sequence\n",
     "PYTHONIOENCODING"),
    ("UnicodeDecodeError: 'ascii' codec can't decode byte 0xe2 in position 18: ordinal not in range(128)\n",
     "export PYTHONUTF8=1"),
])
def test_locale_codec_errors_turn_on_utf8_mode(text, want):
    top, fix = first(text)
    assert ident(top) == "unsupported-op:encoding"
    assert want in fix, fix


def test_utf8_codec_error_is_not_a_locale_problem():
    from _explain_items import scan
    answers = scan("UnicodeDecodeError: 'utf-8' codec can't decode byte 0x80 in position 64: invalid start byte\n").answers
    assert not any(a.subject == "encoding" for a in answers)


# --- Windows ---------------------------------------------------------------------------------------------

def test_symlink_privilege_in_the_hub_cache():
    text = ('  File "C:\\venv\\Lib\\site-packages\\huggingface_hub\\file_download.py", line 470, in _create_symlink\n'
            "    os.symlink(src_rel_or_abs, abs_dst)\n"
            "OSError: [WinError 1314] A required privilege is not held by the client: '..\\\\..\\\\blobs\\\\9f2e' -> "
            "'C:\\\\Users\\\\li\\\\.cache\\\\huggingface\\\\hub\\\\models--a--b\\\\snapshots\\\\c\\\\config.json'\n")
    top, fix = first(text)
    assert ident(top) == "windows-error:1314"
    assert "AllowDevelopmentWithoutDevLicense" in fix and "pip install --upgrade huggingface_hub" in fix


def test_long_paths_from_winerror_pip_hint_and_errno2():
    deep = "C:\\\\Users\\\\someone\\\\AppData\\\\Local\\\\Temp\\\\pip-install-x\\\\" + "sub_folder_name\\\\" * 16 + "file.h"
    for text in ("OSError: [WinError 206] The filename or extension is too long: 'C:\\\\x'\n",
                 "ERROR: Could not install packages due to an OSError.\nHINT: This error might have occurred since "
                 "this system does not have Windows Long Path support enabled. You can find information on how to "
                 "enable this at https://pip.pypa.io/warnings/enable-long-paths\n",
                 f"FileNotFoundError: [Errno 2] No such file or directory: '{deep}'\n"):
        top, fix = first(text)
        assert ident(top) == "windows-error:206" and "LongPathsEnabled" in fix, (text, fix)


def test_short_missing_path_is_not_a_long_path():
    from _explain_items import scan
    short = "C:\\\\data\\\\" + "x" * 200 + ".txt"  # 215 characters as printed: a missing file, not MAX_PATH
    answers = scan(f"FileNotFoundError: [Errno 2] No such file or directory: '{short}'\n").answers
    assert not any(a.subject == "206" for a in answers)


# --- macOS -----------------------------------------------------------------------------------------------

def test_arm64_python_with_an_x86_64_wheel_reinstalls_it():
    text = ("ImportError: dlopen(/Users/jo/venv/lib/python3.12/site-packages/tokenizers/tokenizers.abi3.so, 0x0002): "
            "tried: '/Users/jo/venv/lib/python3.12/site-packages/tokenizers/tokenizers.abi3.so' (mach-o file, but is "
            "an incompatible architecture (have 'x86_64', need 'arm64e' or 'arm64'))\n")
    top, fix = first(text)
    assert ident(top) == "shared-library:tokenizers.abi3.so"
    assert "--force-reinstall --no-cache-dir tokenizers" in fix


def test_rosetta_python_needs_an_arm64_python():
    text = ("ImportError: dlopen(/Users/jo/miniconda3/lib/python3.11/site-packages/torch/_C.cpython-311-darwin.so, 2): "
            "tried: '/Users/jo/miniconda3/lib/python3.11/site-packages/torch/_C.cpython-311-darwin.so' (mach-o file, "
            "but is an incompatible architecture (have 'arm64', need 'x86_64'))\n")
    top, fix = first(text)
    assert "sysctl.proc_translated" in fix and "arm64 Python" in fix


@pytest.mark.parametrize("need", ["12.3", "13.0", "14.0"])
def test_mps_needs_a_newer_macos(need):
    top, fix = first(f"RuntimeError: The MPS backend is supported on MacOS {need}+.Current OS version can be "
                     "queried using `sw_vers`\n")
    assert ident(top) == "version-constraint:macos" and "sw_vers" in fix and "2.4.1" in fix


def test_placeholder_storage_moves_inputs_to_mps():
    top, fix = first("RuntimeError: Placeholder storage has not been allocated on MPS device!\n")
    assert ident(top) == "unsupported-op:mps" and '.to("mps")' in fix


def test_mps_notices_are_silent():
    healthy("MPS available: True\nUsing device: mps\nThe MPS backend is in use on macOS 14.5 (arm64)\n")


# --- ROCm ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("gfx, want", [
    ("gfx1103", "export HSA_OVERRIDE_GFX_VERSION=11.0.0"),
    ("gfx1032", "export HSA_OVERRIDE_GFX_VERSION=10.3.0"),
    ("gfx1201", "whl/rocm6.4"),
    ("gfx1010", "PYTORCH_ROCM_ARCH=gfx1010"),
])
def test_rocblas_tensile_missing_per_family(gfx, want):
    text = (f"rocBLAS error: Cannot read /opt/venv/lib/python3.12/site-packages/torch/lib/rocblas/library/"
            f"TensileLibrary.dat: No such file or directory for GPU arch : {gfx}\n"
            ' List of available TensileLibrary Files : \n"/opt/x/TensileLibrary_lazy_gfx1100.dat"\nAborted (core dumped)\n')
    top, fix = first(text)
    assert ident(top) == "unsupported-op:rocm"
    assert want in fix, fix


def test_rocblas_on_windows_hip_sdk_has_no_override():
    text = ("rocBLAS error: Cannot read C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\/rocblas/library/TensileLibrary.dat: "
            "No such file or directory for GPU arch : gfx1103\n")
    top, fix = first(text)
    assert "does not exist in the HIP SDK" in fix and "export HSA_OVERRIDE" not in fix


@pytest.mark.parametrize("text", [
    "RuntimeError: miopenStatusUnknownError\n",
    "MIOpen(HIP): Error [Compile] 'hiprtcCompileProgram(prog.get(), c_options.size(), c_options.data())' "
    "naive_conv.cpp: HIPRTC_ERROR_COMPILATION (6)\n",
])
def test_miopen_errors_clear_its_cache(text):
    top, fix = first(text)
    assert ident(top) == "unsupported-op:miopen" and "rm -rf ~/.cache/miopen ~/.config/miopen" in fix


def test_miopen_warnings_are_silent():
    healthy("MIOpen(HIP): Warning [SQLiteBase] Missing system database file: gfx1030_40.kdb Performance may degrade. "
            "Please follow instructions to install: https://github.com/ROCm/MIOpen#installing-miopen-kernels-package\n")


# --- Triton on a GPU below compute capability 7.0 (FDE106's fix) --------------------------------------------

def test_gpu_too_old_for_triton_offers_aot_eager():
    top, fix = first("RuntimeError: Found Tesla P4 which is too old to be supported by the triton GPU compiler, which "
                     "is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device "
                     "is of CUDA capability 6.1\n")
    assert 'backend="aot_eager"' in fix
