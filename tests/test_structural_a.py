"""The structural layer's classes added while tuning on the train families (issue 22, helper tune-a):
driver problems, shared memory, launcher/rendezvous, Slurm, Windows DLLs. Every line here is written
for the test (realistic, not copied from the corpus), with a sibling of the same class where one
exists, and healthy lines of the same vocabulary that must raise nothing."""

from __future__ import annotations

import pytest

from _explain_items import first, fix_text, healthy, scan


# --- drivers -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, name, want", [
    ("RuntimeError: cuda runtime error (802) : system not yet initialized at /opt/pytorch/aten/src/THC/THCGeneral.cpp:51",
     "cudaErrorSystemNotReady", "nvidia-fabricmanager"),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized",
     "cudaErrorSystemNotReady", "nvidia-fabricmanager"),
    ("RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at /tmp/THCGeneral.cpp:70",
     "cudaErrorNoDevice", "CUDA_VISIBLE_DEVICES"),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 999: unknown error", "cudaErrorUnknown", "nvidia_uvm"),
])
def test_cuda_init_errors_by_their_code(line, name, want):
    a = first(line + "\n")
    assert (a.kind, a.subject) == ("cuda-error", name)
    assert want in fix_text(a)


def test_cuda_initialization_warning_of_a_broken_driver_is_the_failure():
    log = ("/home/u/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: "
           "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable "
           "CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero.\n"
           "  return torch._C._cuda_getDeviceCount() > 0\n")
    a = first(log)
    assert (a.kind, a.subject) == ("cuda-error", "cudaErrorUnknown")
    assert "sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm" in a.fix.commands and "reboot" in a.fix.summary


def test_cuda_initialization_warning_on_a_machine_without_gpu_is_no_structural_answer():
    # (the fingerprint entry FDE102 names it; the structural layer adds nothing: no CUDA error row)
    assert not scan("/usr/lib/python3/site-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization: Found no "
            "NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
            "http://www.nvidia.com/Download/index.aspx\n  return torch._C._cuda_getDeviceCount() > 0\n").answers


def test_insufficient_driver_names_the_driver_floor_of_the_cuda_major():
    a = first("torch 2.4.0+cu121\nRuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n")
    text = fix_text(a)
    assert "newer driver" in text.lower() and "525.60.13" in text  # CUDA 12.x floor (NVIDIA's table)
    assert "580" not in text  # only the log's CUDA major


def test_driver_too_old_never_names_a_wheel_the_driver_cannot_run():
    old = first("RuntimeError: The NVIDIA driver on your system is too old (found version 10010).\n")
    text = fix_text(old)
    assert "update the driver" in text.lower()
    assert "cu130" not in text  # a CUDA 10.1 driver runs no torch the table knows
    # tune-j2: only the last wheel built for CUDA 10.1 (pytorch.org previous versions), never a newer one
    assert "pip install" not in text or ("torch==1.8.1+cu101" in text and "cu11" not in text and "cu12" not in text)
    ok = first("RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n")
    assert "cu118" in fix_text(ok)  # CUDA 11 minor-version compatibility: cu118 runs on a CUDA 11.4 driver


def test_driver_too_old_names_the_cuda_of_torch_from_the_log():
    a = first("torch==2.3.1+cu121\nRuntimeError: CUDA driver version is insufficient for CUDA runtime version\n")
    text = fix_text(a)
    assert "CUDA 12.1 (CUDA 12.x needs driver 525.60.13 or newer)" in text and "<torch.version.cuda>" not in text
    assert "pip install" not in text  # the log does not say which CUDA the driver supports: no wheel guessed


# --- shared memory -------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "RuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus error. It is possible that dataloader's "
    "workers are out of shared memory. Please try to raise your shared memory limit.",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "RuntimeError: unable to write to file </torch_1203_3951829127_7>: No space left on device (28)",
    "RuntimeError: unable to open shared memory object </torch_88_1719941244_3> in read-write mode: Too many open "
    "files (24)",
    "RuntimeError: unable to mmap 1048576 bytes from file </torch_77_20202020_1>: Cannot allocate memory (12)",
])
def test_shared_memory_exhausted(line):
    a = first(line + "\n")
    assert (a.kind, a.subject) == ("shared-memory", "/dev/shm")
    assert "--shm-size" in a.fix.summary and "--ipc=host" in a.fix.summary and "num_workers=0" in a.fix.summary


def test_worker_killed_by_sigkill_is_host_memory_not_shm():
    a = first("RuntimeError: DataLoader worker (pid 991) is killed by signal: Killed.\n")
    assert (a.kind, a.subject) == ("out-of-memory", "cpu")


def test_shm_words_in_a_warning_are_no_problem():
    healthy("UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of "
            "worker in current system is 8, which is smaller than what this DataLoader is going to create.\n"
            "WARNING: shared memory (/dev/shm) is 64M; consider --shm-size\n")


# --- launcher / rendezvous -----------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
    "The server socket has failed to bind to [::]:29511 (errno: 98 - Address already in use).",
    "RuntimeError: The server socket has failed to listen on any local network address. port: 29511, useIpv6: 0, "
    "code: -98, name: EADDRINUSE, message: address already in use",
])
def test_master_port_in_use(line):
    a = first(line + "\n")
    assert (a.kind, a.subject) == ("launcher", "address-in-use")
    assert "--master_port" in a.fix.summary and "MASTER_PORT" in a.fix.summary
    assert "ss -ltnp 'sport = :29511'" in a.fix.commands


@pytest.mark.parametrize("line", [
    "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
    "(gpu-node-07, 29400). The client socket has failed to connect to gpu-node-07:29400 (errno: 113 - No route to host).",
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [10.0.3.4]:29500 (errno: 110 - Connection "
    "timed out).",
    "RuntimeError: connect() timed out. Original timeout was 1800000 ms.",
    "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed.",
])
def test_rendezvous_address_unreachable(line):
    a = first(line + "\n")
    assert (a.kind, a.subject) == ("launcher", "rendezvous-unreachable")
    assert "MASTER_ADDR" in a.fix.summary and "127.0.0.1" in a.fix.summary


def test_rendezvous_warnings_of_a_healthy_start_are_no_problem():
    healthy("[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - "
            "Cannot assign requested address).\n"
            "[W socket.cpp:436] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address "
            "family not supported by protocol).\n"
            "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node0]:29500 (errno: 111 - "
            "Connection refused).\n"
            "[2024-05-01 10:00:00] rank 1 joined\n")


# --- Windows: a DLL of torch's wheel whose dependency is missing -------------------------------------

@pytest.mark.parametrize("line", [
    'OSError: [WinError 126] The specified module could not be found. Error loading '
    '"C:\\apps\\sd\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
    'OSError: [WinError 126] Error loading "D:\\py\\Lib\\site-packages\\torch\\lib\\c10_cuda.dll" or one of its '
    'dependencies.',
])
def test_torch_dll_dependency_is_the_vc_runtime(line):
    item = first(line + "\n")
    assert getattr(item, "entry", None) is not None and item.entry.id == "FDE526"
    assert "Visual C++ Redistributable" in fix_text(item) and "winget install Microsoft.VCRedist.2015+.x64" in fix_text(item)


def test_old_python_dll_load_failed_under_import_torch():
    log = ('  File "C:\\Python36\\lib\\site-packages\\torch\\__init__.py", line 78, in <module>\n'
           "    from torch._C import *\nImportError: DLL load failed: The specified module could not be found.\n")
    item = first(log)
    assert item.entry.id == "FDE526"


def test_dll_load_failed_of_another_package_is_not_torchs():
    result = scan('  File "C:\\app\\main.py", line 3, in <module>\n    import cv2\n'
                  "ImportError: DLL load failed: The specified module could not be found.\n")
    assert all(p.entry.id != "FDE526" for p in result.problems)


# --- Slurm -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, what, want", [
    ("sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification", "gres", "--gres=gpu:TYPE:NUM"),
    ("sbatch: error: This partition requires a GPU type, specify --gres=gpu:TYPE:NUM", "gres", "--gres=gpu:"),
    ("srun: error: Unable to allocate resources: Requested node configuration is not available", "nodeconf", "sinfo"),
    ("sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified",
     "account", "--account"),
    ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4242.0. Some of your processes may have been killed "
     "by the cgroup out-of-memory handler.", "oom", "--mem"),
    ("slurmstepd: error: *** JOB 4242 ON gpu017 CANCELLED AT 2024-03-01T10:00:00 DUE TO TIME LIMIT ***", "time", "--time"),
])
def test_slurm_refusals_and_stops(line, what, want):
    a = first(line + "\n")
    assert (a.kind, a.subject) == ("slurm", what)
    assert want in fix_text(a)


def test_srun_exit_lines_are_consequences_and_the_rank_error_before_progress_is_the_answer():
    log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of "
           "23.6 GiB of which 1.1 GiB is free.\n"
           "Epoch 0:  12%|#2        | 120/1000 [01:10<08:30,  1.72it/s]\n"
           "srun: error: node12: task 1: Exited with exit code 1\n"
           "srun: error: node12: task 0: Exited with exit code 1\n")
    a = first(log)
    assert (a.kind, a.subject) == ("out-of-memory", "cuda")
    survived = scan(log.replace("srun: error: node12: task 1: Exited with exit code 1\n", "")
                    .replace("srun: error: node12: task 0: Exited with exit code 1\n", "done\n"))
    assert not survived.answers  # no launcher failure: an error before the last progress was survived


def test_nccl_invalid_argument_names_the_world_size():
    a = first("RuntimeError: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:121, invalid "
              "argument, NCCL version 2.10.3\n")
    assert a.subject == "ncclInvalidArgument" and "world size" in a.fix.summary and "--ntasks" in a.fix.summary


def test_vllm_pynccl_failing_to_load_nccl_names_the_nccl_wheel():
    a = first("torch==2.3.0+cu121\nERROR 05-02 10:00:00 pynccl.py:53] Failed to load NCCL library from libnccl.so.2 . "
              "It is expected if you are not running on NVIDIA/AMD GPUs.\n")
    assert (a.kind, a.subject) == ("shared-library", "libnccl.so.2") and "nvidia-nccl-cu12" in fix_text(a)
