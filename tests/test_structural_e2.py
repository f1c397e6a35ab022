"""The structural layer's round 5 (issue 22, tune-e2): GPUs held in an exclusive compute mode, GPUs the driver
lost without an Xid line, the driver's halves of different versions, nvidia-container-cli and CDI in containers,
torch's TCPStore without libuv on Windows, Rust extensions built without Rust, torchvision/torchaudio pinned next
to another torch, pkg_resources on Python 3.12, DDP's unused-parameter report without its error, THC's invalid
ordinal, conda init, Horovod built without an extension. Every line is written for these tests in the shape the
real tools print (not copied from the corpus); each class has a healthy sibling that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first as first_item
from _explain_items import first_with_fix as first
from _explain_items import fix_text, healthy, ident


@pytest.mark.parametrize("text, subject, want", [
    # compute mode: THC, Caffe's CHECK, a program's own macro, the runtime's current wording
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=50 error=46 : all CUDA-capable devices are busy "
     "or unavailable\n", "cudaErrorDevicesUnavailable", "-c DEFAULT"),
    ("F0312 10:11:12.000 4242 common.cpp:152] Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices "
     "are busy or unavailable\n", "cudaErrorDevicesUnavailable", "compute mode"),
    ("solver.cu@88: CUDA Runtime Error(46): all CUDA-capable devices are busy or unavailable\n",
     "cudaErrorDevicesUnavailable", "one GPU of its own"),
    ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n",
     "cudaErrorDevicesUnavailable", "CUDA_VISIBLE_DEVICES=N"),
])
def test_busy_devices_read_as_compute_mode(text, subject, want):
    top, fix = first(text)
    assert ident(top) == f"cuda-error:{subject}"
    assert want in fix


@pytest.mark.parametrize("text, want", [
    ("[ 5120.118203] NVRM: The NVIDIA GPU 0000:41:00.0\n"
     "               NVRM: (PCI ID: 10de:2330) installed in this system has\n"
     "               NVRM: fallen off the bus and is not responding to commands.\n", "lspci | grep -i nvidia"),
    ("$ nvidia-smi\nUnable to determine the device handle for GPU0000:81:00.0: Unknown Error\n",
     "sudo lspci -vvv -s 0000:81:00.0"),
])
def test_lost_gpu_without_xid_is_hardware(text, want):
    top, fix = first(text)
    assert ident(top) == "cuda-error:gpu-lost"
    assert "reboot" in fix and "replace" in fix and want in fix


def test_kernel_module_of_another_version_names_the_client_driver():
    text = ("[  212.002100] NVRM: API mismatch: the client has the version 550.90.07, but\n"
            "               NVRM: this kernel module has the version 535.183.01.  Please\n"
            "               NVRM: make sure that this kernel module and all NVIDIA driver\n")
    top, fix = first(text)
    assert ident(top) == "cuda-error:nvml-mismatch"
    assert "550.90.07" in fix and "same version" in fix


@pytest.mark.parametrize("text, subject, want", [
    ("docker: Error response from daemon: failed to create task for container: OCI runtime create failed: error running "
     "hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
     "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object "
     "file: no such file or directory: unknown.\n", "container-no-driver", "Install the NVIDIA driver on the host"),
    ("stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown\n",
     "container-no-driver", "sudo modprobe nvidia"),
    ("stderr: nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown\n",
     "nvml-mismatch", "same version"),
    ("stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: device error: 4: unknown device: unknown\n",
     "container-device", "nvidia-smi -L"),
    ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all\n", "cdi",
     "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"),
    ("Error: crun: failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=0\n", "cdi", "nvidia-ctk cdi list"),
])
def test_container_runtime_hook_errors(text, subject, want):
    top, fix = first(text)
    assert ident(top) == f"cuda-error:{subject}"
    assert want in fix


@pytest.mark.parametrize("text", [
    "Traceback (most recent call last):\n  File \"C:\\\\proj\\\\train.py\", line 12, in <module>\n"
    "    dist.init_process_group(\"gloo\")\n"
    "RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n",
    "[2025-01-02 10:00:00] [INFO] RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n",
])
def test_libuv_on_windows(text):
    top, fix = first(text)
    assert ident(top) == "launcher:libuv"
    assert "USE_LIBUV=0" in fix and "use_libuv=0" in fix


@pytest.mark.parametrize("text, want", [
    ("      running build_rust\n      error: can't find Rust compiler\n", "rustup"),
    ("running build_rust\nerror: Can not find Rust compiler\n", "PATH"),
    ("      Cargo, the Rust package manager, is not installed or is not on PATH.\n"
     "      This package requires Rust and Cargo to compile extensions.\n", "sh.rustup.rs"),
])
def test_rust_missing_for_an_sdist_build(text, want):
    top, fix = first(text)
    assert ident(top) == "pip-no-distribution:rust"
    assert want in fix and "prebuilt wheel" in fix


@pytest.mark.parametrize("text, subject, want", [
    ("ERROR: Cannot install torch==2.4.1+cu121 and torchvision==0.18.1+cu121 because these package versions have "
     "conflicting dependencies.\n\nThe conflict is caused by:\n    The user requested torch==2.4.1+cu121\n"
     "    torchvision 0.18.1+cu121 depends on torch==2.3.1+cu121\n", "torchvision",
     "python -m pip install torch==2.4.1 torchvision==0.19.1 --index-url https://download.pytorch.org/whl/cu121"),
    ("ERROR: Cannot install torch==2.0.1, torchaudio==2.1.0 and torchvision==0.15.2 because these package versions "
     "have conflicting dependencies.\n", "torchaudio", "torchaudio==2.0.2"),
    # the companion is not in the ERROR line: its own report line names the torch it was made for
    ("ERROR: Cannot install -r requirements.txt (line 3) and torch==1.13.1 because these package versions have "
     "conflicting dependencies.\n\nThe conflict is caused by:\n    The user requested torch==1.13.1\n"
     "    torchvision 0.15.2 depends on torch==2.0.1\n", "torchvision", "torch==2.0.1"),
])
def test_companion_pinned_next_to_another_torch(text, subject, want):
    top, fix = first(text)
    assert ident(top) == f"version-constraint:{subject}"
    assert want in fix


def test_companions_that_match_their_torch_are_not_blamed():
    text = ("ERROR: Cannot install torch==2.3.1 and torchvision==0.18.1 because these package versions have "
            "conflicting dependencies.\n\nThe conflict is caused by:\n    xformers 0.0.27 depends on torch==2.3.0\n")
    top, _fix = first(text)
    assert ident(top) != "version-constraint:torchvision"


@pytest.mark.parametrize("text", [
    "Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 3, in <module>\n    import pkg_resources\n"
    "  File \"/srv/venv/lib/python3.12/site-packages/pkg_resources/__init__.py\", line 40, in <module>\n"
    "    from pkgutil import ImpImporter\n",
    "ImportError: cannot import name 'ImpImporter' from 'pkgutil' (/usr/lib/python3.12/pkgutil.py)\n",
])
def test_pkg_resources_on_python312(text):
    top, fix = first(text)
    assert ident(top) == "version-constraint:setuptools"
    assert "pip install --upgrade setuptools" in fix


def test_ddp_unused_report_without_its_error_line():
    text = ("Parameter indices which did not receive grad for rank 1: 12 13 14\n"
            " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL\n"
            "Traceback (most recent call last):\n  File \"/work/train.py\", line 80, in <module>\n"
            "    loss = model(batch)\n"
            "  File \"/opt/venv/lib/python3.10/site-packages/accelerate/utils/operations.py\", line 820, in forward\n"
            "    return model_forward(*args, **kwargs)\n")
    top, fix = first(text)
    assert ident(top) == "launcher:unused-parameters"
    assert "DistributedDataParallelKwargs(find_unused_parameters=True)" in fix


@pytest.mark.parametrize("text", [
    "RuntimeError: cuda runtime error (10) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:32\n",
    "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=32 error=10 : invalid device ordinal\n",
])
def test_thc_invalid_ordinal_names_the_launch_flag(text):
    top, fix = first(text)
    assert ident(top) == "cuda-error:cudaErrorInvalidDevice"
    assert "--nproc_per_node" in fix


@pytest.mark.parametrize("text, want", [
    ("Step 5/9 : RUN conda activate py310 && python -V\n\nCondaError: Run 'conda init' before 'conda activate'\n",
     "etc/profile.d/conda.sh"),
    ("CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.\n", "conda init bash"),
])
def test_conda_activate_without_init(text, want):
    top, fix = first(text)
    assert ident(top) == "launcher:conda-init"
    assert want in fix


@pytest.mark.parametrize("text, want", [
    ("ImportError: Extension horovod.tensorflow has not been built: /usr/lib/python3/dist-packages/horovod/tensorflow/"
     "mpi_lib.cpython-310-x86_64-linux-gnu.so not found\nIf this is not expected, reinstall Horovod with "
     "HOROVOD_WITH_TENSORFLOW=1 to debug the build error.\n",
     "HOROVOD_WITH_TENSORFLOW=1 HOROVOD_GPU_OPERATIONS=NCCL python -m pip install --no-cache-dir"),
    ("ValueError: MPI support has not been built.  If this is not expected, ensure MPI is installed and reinstall "
     "Horovod with HOROVOD_WITH_MPI=1 to debug the build error.\n", "HOROVOD_WITH_MPI=1 python -m pip install"),
])
def test_horovod_without_an_extension(text, want):
    top, fix = first(text)
    assert ident(top) == "pip-no-distribution:horovod"
    assert want in fix


@pytest.mark.parametrize("text", [
    # a healthy nvidia-smi table naming the compute mode, and NCCL/driver INFO lines
    "|   0  NVIDIA A100-SXM4-80GB  On | 00000000:07:00.0 Off |   0 |\n| N/A 31C P0 61W / 400W | 4MiB / 81920MiB | "
    "0%   E. Process |\n",
    "[   3.100] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n",
    "INFO: nvidia-container-cli: detected 8 GPUs; CDI devices nvidia.com/gpu=all generated\n",
    # pip succeeding with the matching companions; a note about Rust in a successful build
    "Successfully installed torch-2.4.1 torchvision-0.19.1 torchaudio-2.4.1\n",
    "      Installing from the wheel would avoid the need for a Rust compiler.\n"
    "Successfully built tokenizers\nSuccessfully installed tokenizers-0.19.1\n",
    # a deprecation of ImpImporter (Python 3.11) and libuv mentioned in a warning
    "DeprecationWarning: pkgutil.ImpImporter is deprecated\n",
    "UserWarning: use_libuv is deprecated, PyTorch was build without libuv support? falling back\n",
    "conda activate base\n(base) $ python train.py\n",
])
def test_healthy_siblings_stay_silent(text):
    healthy(text)


@pytest.mark.parametrize("text", [
    "(autoscaler +40s) Error: No available node types can fulfill resource request {'CPU': 1.0, 'GPU': 2.0}. Add suitable "
    "node types to this cluster to resolve this issue.\n",
    "(autoscaler +2m3s) Error: No available node types can fulfill resource requests {'GPU': 1.0}*4\n",
])
def test_ray_without_gpu_nodes(text):
    top, fix = first(text)
    assert ident(top) == "launcher:ray-gpu"
    assert "ray.init(address='auto')" in fix and "--num-gpus" in fix


@pytest.mark.parametrize("text", [
    "(autoscaler +21s) Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0, 'CPU': 1.0}. "
    "This is likely due to all cluster resources being claimed by actors.\n",
    "(autoscaler +40s) Tip: use `ray status` to view detailed cluster status.\n",
])
def test_ray_notices_stay_silent(text):
    healthy(text)


def test_apptainer_nv_without_driver_explains_the_gpu_error():
    text = ("$ singularity exec --nv llm.sif python3 serve.py\n"
            "WARNING: Could not find any nv files on this host!\n"
            "Traceback (most recent call last):\n  File \"/opt/serve.py\", line 12, in <module>\n"
            "    torch.cuda.set_device(0)\n"
            "RuntimeError: No CUDA GPUs are available\n")
    top, fix = first(text)
    assert ident(top) == "cuda-error:apptainer-nv"
    assert "--gres=gpu:1" in fix and "--nv" in fix


def test_found_no_driver_names_container_gpu_access():
    top, fix = first("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
                     "installed a driver from http://www.nvidia.com/Download/index.aspx\n")
    assert ident(top) == "FDE102" and "--nv" in fix and "--gpus all" in fix


def test_pip_replaced_an_imported_package_restart():
    text = ("Successfully installed numpy-2.1.3\n"
            "WARNING: The following packages were previously imported in this runtime:\n  [numpy]\n"
            "You must restart the runtime in order to use newly installed versions.\n"
            "Traceback (most recent call last):\n  File \"<ipython-input-4-9f>\", line 2, in <cell line: 2>\n"
            "    import pandas\nImportError: cannot import name '_center' from 'numpy._core.umath'\n")
    top, fix = first(text)
    assert ident(top) == "launcher:runtime-restart"
    assert "Restart session" in fix


@pytest.mark.parametrize("text", [
    # the notices alone (a CPU step on a login node; a Colab install that then ran fine)
    "INFO:    Could not find any nv files on this host!\nhello world\n",
    "WARNING: The following packages were previously imported in this runtime:\n  [PIL]\n"
    "You must restart the runtime in order to use newly installed versions.\n",
])
def test_notices_alone_stay_silent(text):
    healthy(text)


def test_notice_before_an_unrelated_error_is_not_blamed():
    text = ("INFO:    Could not find any nv files on this host!\n"
            "Traceback (most recent call last):\n  File \"/w/a.py\", line 1, in <module>\n"
            "    open('missing.csv')\nFileNotFoundError: [Errno 2] No such file or directory: 'missing.csv'\n")
    top, _fix = first(text)
    assert ident(top) != "cuda-error:apptainer-nv"


def test_restart_notice_before_a_bug_in_user_code_is_not_blamed():
    text = ("You must restart the runtime in order to use newly installed versions.\n"
            "Traceback (most recent call last):\n  File \"<ipython-input-7-0c>\", line 3, in <cell line: 3>\n"
            "    out = cfg.model.name\nAttributeError: 'NoneType' object has no attribute 'name'\n")
    result = first_item(text)
    assert ident(result) != "launcher:runtime-restart"
