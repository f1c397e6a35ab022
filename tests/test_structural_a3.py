"""The classes tuned in round 3 by helper tune-a3 (issue 22): cuBLAS status errors (a cuBLAS that does not
match torch), Windows errors by number, by Rust's "(os error N)" and by their message, and by where they
happen (Inductor's cache, pip replacing files in use, the commit limit), a CUDA library's versioned symbol
on a cut line, GPUs in containers (no NVIDIA runtime, NVML not loadable, NVML Unknown Error), two OpenMP
runtimes, static TLS. Every line is written for the test (realistic, not copied from the corpus), with
siblings of the same class, and healthy lines of the same vocabulary that must raise nothing."""

from __future__ import annotations

import pytest

from _explain_items import first, fix_text, healthy, ident, scan

TB = "Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    y = model(x)\n"


# --- cuBLAS status errors -------------------------------------------------------------------------

@pytest.mark.parametrize("status", ["CUBLAS_STATUS_INVALID_VALUE", "CUBLAS_STATUS_EXECUTION_FAILED",
                                    "CUBLAS_STATUS_NOT_SUPPORTED"])
def test_cublas_status_names_the_matching_cublas_wheel(status):
    item = first("torch 2.4.1+cu121\n" + TB + f"RuntimeError: CUDA error: {status} when calling "
                 "`cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda)`\n")
    assert ident(item) == f"cuda-error:{status}"
    text = fix_text(item)
    assert "nvidia-cublas-cu12" in text and "LD_LIBRARY_PATH" in text and "sm_86" in text


def test_cublas_status_without_a_cuda_version_lists_every_wheel():
    text = fix_text(first(TB + "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm(...)`\n"))
    assert "nvidia-cublas-cu11" in text and "nvidia-cublas-cu12" in text


# --- Windows errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "OSError: The paging file is too small for this operation to complete. (os error 1455)",
    "OSError: 页面文件太小，无法完成操作。 (os error 1455)",
    "ImportError: DLL load failed while importing _C: The paging file is too small for this operation to complete.",
    "OSError: [WinError 1455] The paging file is too small for this operation to complete",
])
def test_commit_limit_in_every_wording(line):
    item = first(TB + line + "\n")
    assert ident(item) == "windows-error:1455"
    text = fix_text(item)
    assert "paging file" in text and "num_workers" in text


def test_rust_os_error_on_linux_is_an_errno_not_a_windows_error():
    result = scan("Linux-6.5.0-x86_64\n" + TB + "OSError: No such file or directory (os error 2)\n")
    assert not any(a.kind == "windows-error" for a in result.answers)


@pytest.mark.parametrize("folder", ["D:\\\\ComfyUI\\\\.cache\\\\torchinductor\\\\cache",
                                    "C:\\\\Users\\\\me\\\\AppData\\\\Local\\\\Temp\\\\torchinductor_me\\\\fxgraph"])
def test_inductor_cache_rename_names_the_torch_fix(folder):
    item = first(TB + "FileExistsError: [WinError 183] Cannot create a file when that file already exists: "
                 f"'{folder}\\\\.24.tmp' -> '{folder}\\\\d595d7ef'\n")
    text = fix_text(item)
    assert "2.6" in text and "TORCHINDUCTOR_CACHE_DIR" in text


def test_a_183_elsewhere_keeps_the_generic_words():
    text = fix_text(first(TB + "FileExistsError: [WinError 183] Cannot create a file when that file already exists: "
                          "'D:\\\\data\\\\out'\n"))
    assert "torch 2.6" not in text


@pytest.mark.parametrize("code", ["5", "32"])
def test_pip_cannot_replace_files_in_use(code):
    item = first("Installing collected packages: torch\n  Attempting uninstall: torch\n"
                 f"ERROR: Could not install packages due to an OSError: [WinError {code}] Access is denied: "
                 "'C:\\\\venv\\\\Lib\\\\site-packages\\\\torch\\\\lib\\\\c10.dll'\n")
    text = fix_text(item)
    assert "another process" in text and "--user" in text


# --- a CUDA library's versioned symbol on a cut line --------------------------------------------

def test_versioned_symbol_on_a_cut_line_names_the_library_by_its_symbol():
    item = first(TB + "ImportError: /venv/lib/python3.11/site-packages/nvidia/cusolver/lib/libcusolver.so.11: "
                 "undefined symbol: __nvJitLinkComplete_12_4, version libnvJi\n")
    text = fix_text(item)
    assert "nvidia-nvjitlink-cu12" in text and "LD_LIBRARY_PATH" in text


# --- containers, OpenMP, static TLS --------------------------------------------------------------

@pytest.mark.parametrize("line, entry, want", [
    ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
     "FDE970", "nvidia-ctk runtime configure"),
    ("docker: Error response from daemon: unknown or invalid runtime name: nvidia.", "FDE970", "restart docker"),
    ("2024/01/09 10:02:11 Failed to initialize NVML: could not load NVML library.", "FDE971", "containerd"),
    ("E0109 10:02:11 main.go:1] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND", "FDE971", "RuntimeClass"),
    ("Failed to initialize NVML: Unknown Error", "FDE972", "create-dev-char-symlinks"),
    ("OMP: Error #15: Initializing libiomp5.dylib, but found libomp.dylib already initialized.", "FDE973", "KMP_DUPLICATE_LIB_OK"),
    ("OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.", "FDE973", "nomkl"),
    ("OSError: /lib/aarch64-linux-gnu/libGLdispatch.so.0: cannot allocate memory in static TLS block", "FDE974", "LD_PRELOAD"),
])
def test_platform_classes(line, entry, want):
    item = first(line + "\n")
    assert ident(item) == entry
    assert want in fix_text(item)


def test_healthy_lines_of_the_same_vocabulary():
    healthy("OMP: Info #276: omp_set_nested routine deprecated, please use omp_set_max_active_levels instead.\n"
            "NVIDIA Container Toolkit CLI version 1.14.3\n"
            "INFO[0000] Loading config from /etc/docker/daemon.json\n"
            "INFO[0000] Wrote updated config to /etc/docker/daemon.json\n"
            "I0109 10:02:11 main.go:256] Retrieving plugins.\n"
            "I0109 10:02:11 server.go:165] Starting GRPC server for 'nvidia.com/gpu'\n"
            "  Attempting uninstall: torch\n    Found existing installation: torch 2.4.1\n"
            "Successfully installed torch-2.5.1\n"
            "KMP_AFFINITY=granularity=fine,compact,1,0\n")


# --- NCCL: two ranks on one GPU --------------------------------------------------------------------

@pytest.mark.parametrize("log", [
    "node7:1201:1290 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>\n"
    "node7:1202:1291 [0] init.cc:1018 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 17000\n",
    TB + "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5\n"
    "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
    "Duplicate GPU detected : rank 3 and rank 2 both on CUDA device 41000\n",
])
def test_duplicate_gpu_names_one_gpu_per_rank(log):
    item = first(log)
    assert ident(item) == "nccl-error:ncclInvalidUsage"
    text = fix_text(item)
    assert "set_device(local_rank)" in text and "CUDA_VISIBLE_DEVICES" in text


def test_nccl_info_lines_are_healthy():
    healthy("node7:1201:1290 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>\n"
            "node7:1201:1290 [0] NCCL INFO cudaDriverVersion 12040\n"
            "node7:1201:1290 [0] NCCL INFO comm 0x5581 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
            "node7:1201:1290 [0] NCCL INFO Init COMPLETE\n")


# --- WSL2: the driver is the Windows one ---------------------------------------------------------

@pytest.mark.parametrize("where", ["/mnt/d/Users/kim/proj/.venv/lib/python3.11/site-packages",
                                   "/home/kim/.venv/lib/python3.11/site-packages"])
def test_wsl_driver_errors_point_at_the_wsl_libcuda(where):
    log = ("Linux DESKTOP-1 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64\n" if where.startswith("/home") else "") + \
        TB + f'  File "{where}/numba/cuda/cudadrv/driver.py", line 300, in initialize\n' \
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in CUDA_ERROR_NO_DEVICE (100)\n"
    text = fix_text(first(log))
    assert "/usr/lib/wsl/lib" in text and "LD_LIBRARY_PATH" in text


def test_no_device_on_plain_linux_says_nothing_of_wsl():
    log = TB + '  File "/home/kim/.venv/lib/python3.11/site-packages/numba/cuda/cudadrv/driver.py", line 300\n' \
        "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: Call to cuInit results in CUDA_ERROR_NO_DEVICE (100)\n"
    assert "/usr/lib/wsl/lib" not in fix_text(first(log))


# --- siblings: container CUDA requirement, unschedulable GPU pods, OpenMP thread limits, Windows errors

@pytest.mark.parametrize("line, entry, want", [
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a "
     "newer version, or use an earlier cuda container: unknown.", "FDE975", "Update the host NVIDIA driver"),
    ("  Warning  FailedScheduling  3m  default-scheduler  0/4 nodes are available: 4 Insufficient amd.com/gpu.",
     "FDE976", "Allocatable"),
    ("OMP: Error #179: Function pthread_create failed:", "FDE977", "OMP_NUM_THREADS"),
    ("libgomp: Thread creation failed: Resource temporarily unavailable", "FDE977", "OMP_NUM_THREADS"),
])
def test_platform_siblings(line, entry, want):
    item = first(line + "\n")
    assert ident(item) == entry
    assert want in fix_text(item)


@pytest.mark.parametrize("line, code, want", [
    ("OSError: [WinError 8] Not enough memory resources are available to process this command", "8", "paging file"),
    ("OSError: [WinError 1450] Insufficient system resources exist to complete the requested service", "1450", "paging file"),
    ("OSError: [WinError 112] There is not enough space on the disk", "112", "HF_HOME"),
    ("OSError: [WinError 1224] The requested operation cannot be performed on a file with a user-mapped section open",
     "1224", "new file name"),
])
def test_windows_error_siblings(line, code, want):
    item = first(TB + line + "\n")
    assert ident(item) == f"windows-error:{code}"
    assert want in fix_text(item)


# --- a library whose file name carries its own major (cuDNN): the fix names that major -------------

@pytest.mark.parametrize("line, want", [
    ("Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!", "cuDNN 9"),
    ("ImportError: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory", "cuDNN 8"),
])
def test_own_major_library_names_its_major(line, want):
    text = fix_text(first("torch 2.1.2+cu118\n" + TB + line + "\n"))
    assert want in text and "nvidia-cudnn-cu11" in text


def test_directml_out_of_memory_names_lowvram_and_the_other_backends():
    item = first("Error occurred when executing VAEDecode:\n\n"
                 "Could not allocate tensor with 268435456 bytes. There is not enough GPU video memory available!\n")
    assert ident(item) == "out-of-memory:directml"
    text = fix_text(item)
    assert "--lowvram" in text and "ZLUDA" in text


# --- a bare "Killed" after every line an entry matched: the kill is the cause ---------------------

BNB_CPU = ("/opt/venv/lib/python3.11/site-packages/bitsandbytes/cextension.py:34: UserWarning: The installed version "
           "of bitsandbytes was compiled without GPU support. 8-bit optimizers will not be available.\n")


def test_killed_after_an_entry_line_comes_first():
    item = first(BNB_CPU + "INFO:Loading mistral-7b...\nLoading checkpoint shards:   0%|          | 0/3\nKilled\n")
    assert ident(item) == "out-of-memory:cpu"
    assert "RAM" in fix_text(item)


def test_an_entry_line_after_the_kill_keeps_the_entry_first():
    items = scan("Killed\nOMP: Error #15: Initializing libiomp5.so, but found libiomp5.so already initialized.\n").ordered()
    assert items and ident(items[0]) == "FDE973"
