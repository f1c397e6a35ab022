"""The structural readers of tune-h4 (issue 22, cycle 2): the NVIDIA Container Toolkit's CUDA requirement (the driver each
CUDA release needs, NVIDIA's toolkit/driver table), Windows error 127 on a DLL in torch\\lib (stale or mixed DLLs, not
the VC++ runtime), and a cuDNN found at run time other than the build's (TensorFlow/JAX cuda_dnn.cc, torch <= 1.12).
Lines are written here in the shape the real code prints (libnvidia-container src/nvc_info.c / the Go toolkit's
requirements, torch/__init__.py _load_dll_libraries, tensorflow stream_executor/cuda/cuda_dnn.cc,
torch/backends/cudnn/__init__.py), not copied from the corpus; each class has a sibling and a healthy neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident

from flexdoctor.knowledge.structural import h4

WIN_SITE = r"C:\Users\ana\sd\venv\Lib\site-packages"
_REQ = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
        "runtime create failed: runc create failed: unable to start container process: error during container init: "
        "error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>={need}, please update your driver to a "
        "newer version, or use an earlier cuda container: unknown\n")


# --- container CUDA requirement ------------------------------------------------------------------------------------

def test_container_requirement_names_the_driver_for_that_cuda():
    top, fix = first(_REQ.format(need="12.9"))
    assert ident(top) == "FDE975"
    assert "575.51.03" in fix and "CUDA 12.9" in fix and "earlier cuda container" in fix, fix


def test_container_requirement_sibling_old_cuda_and_unlisted_minor():
    _top, fix = first(_REQ.format(need="11.4"))
    assert "470.42.01" in fix, fix
    # no CUDA 12.7 was released: the oldest driver that reports >= 12.7 is 12.8's
    assert h4.driver_for(12, 7)[1] == "570.26"
    assert h4.driver_for(13, 0)[2] is None  # NVIDIA lists no Windows driver for 13.x
    assert h4.driver_for(99, 0) is None


def test_container_requirement_go_toolkit_format():
    top, fix = first("Error: failed to start container \"trainer\": Error response from daemon: OCI runtime create "
                     "failed: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=13.0 (cuda=12.4): "
                     "unknown\n")
    assert ident(top) == "FDE975" and "580.65.06" in fix, fix


# --- WinError 127 in torch\lib -------------------------------------------------------------------------------------

def _dll(name: str, site: str = WIN_SITE, quoted: bool = True) -> str:
    path = f"{site}\\torch\\lib\\{name}"
    path = f'"{path}"' if quoted else path
    return frames((r"C:\Users\ana\app\main.py", "import torch"), (f"{site}\\torch\\__init__.py", "raise err")) + (
        f"OSError: [WinError 127] The specified procedure could not be found. Error loading {path} or one of its "
        "dependencies.\n")


def test_win127_pip_clean_reinstall_not_vcredist():
    top, fix = first(_dll("cudnn_cnn_infer64_8.dll"))
    assert ident(top) == "shared-library:cudnn_cnn_infer64_8.dll"
    assert "pip uninstall torch" in fix and "--force-reinstall" in fix and "Dependencies" in fix, fix
    assert "VCRedist" not in fix, fix


def test_win127_sibling_conda_env_unquoted_and_localised():
    site = r"C:\Users\ana\miniconda3\envs\gen\lib\site-packages"
    log = _dll("shm.dll", site, quoted=False).replace("The specified procedure could not be found.",
                                                      "La procédure spécifiée est introuvable.")
    top, fix = first(log)
    assert ident(top) == "shared-library:shm.dll" and "fresh environment" in fix and "cudatoolkit" in fix, fix


def test_win127_torch_python_names_the_interpreter():
    _top, fix = first(_dll("torch_python.dll"))
    assert "interpreter" in fix and "released Python" in fix, fix


def test_win126_stays_the_missing_dependency_answer():
    log = _dll("c10.dll").replace("[WinError 127] The specified procedure could not be found.",
                                  "[WinError 126] The specified module could not be found.")
    _top, fix = first(log)
    assert "Visual C++" in fix, fix


def test_win127_healthy_neighbour_silent():
    healthy("Note: an earlier run failed with WinError 127; after reinstalling torch it imports fine.\n"
            "torch 2.5.1+cu124 True\n")


# --- cuDNN found at run time ----------------------------------------------------------------------------------------

def test_tensorflow_older_cudnn_dotted():
    top, fix = first("2024-03-02 10:11:12.345678: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:447] Loaded "
                     "runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library needs to have "
                     "matching major version and equal or higher minor version. If using a binary install, upgrade "
                     "your CuDNN library.  If building from sources, make sure the library loaded at runtime is "
                     "compatible with the version specified during compile configuration.\n")
    assert ident(top) == "shared-library:cudnn"
    assert "Upgrade cuDNN to 8.9.4" in fix and "LD_LIBRARY_PATH" in fix, fix


def test_tensorflow_packed_versions_sibling_newer_runtime():
    top, fix = first("2018-06-01 09:00:00.000001: E tensorflow/stream_executor/cuda/cuda_dnn.cc:396] Loaded runtime "
                     "CuDNN library: 7102 (compatibility version 7100) but source was compiled with 7004 (compatibility "
                     "version 7000).  If using a binary install, upgrade your CuDNN library to match.\n")
    assert ident(top) == "shared-library:cudnn"
    assert "Install cuDNN 7.0.4" in fix and "cudnn=7.0.4" in fix and "Upgrade" not in fix, fix


def test_torch_old_wording_linked_against():
    log = frames(("/opt/venv/lib/python3.9/site-packages/torch/backends/cudnn/__init__.py", "raise RuntimeError(")) + (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 3, 2) but linked against "
        "(7, 6, 5)\n")
    top, fix = first(log)
    assert ident(top) == "shared-library:cudnn" and "LD_LIBRARY_PATH" in fix, fix


def test_cudnn_healthy_neighbour_silent():
    healthy("2024-03-02 10:11:12.000001: I external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:469] Loaded cuDNN "
            "version 8907\n"
            "Epoch 1/10 - loss: 0.42\n")


# --- torch missing while pip builds a package -------------------------------------------------------------------------

def test_torch_missing_in_pip_build_names_no_build_isolation():
    log = ("$ pip install causal-conv1d\n"
           "  Getting requirements to build wheel ... error\n"
           "  error: subprocess-exited-with-error\n"
           "  The build said: No module named 'torch', though torch 2.5.1 is installed.\n")
    top, fix = first(log)
    assert ident(top) == "missing-module:torch" and "--no-build-isolation" in fix and "prebuilt wheel" in fix, fix


def test_torch_missing_plain_sibling_names_the_interpreter_and_isolation():
    top, fix = first("[ERROR] worker 3 could not start: No module named 'torch'\n")
    assert ident(top) == "missing-module:torch" and "sys.executable" in fix and "--no-build-isolation" in fix, fix


def test_torch_submodule_is_not_read_as_torch_missing():
    log = frames(("/srv/app/run.py", "import torch._dynamo")) + "ModuleNotFoundError: No module named 'torch._dynamo'\n"
    top, _fix = first(log)
    assert ident(top) != "missing-module:torch"


# --- MPS on a machine that cannot use it ------------------------------------------------------------------------------

def test_mps_too_old_in_pytest_output_offers_the_cpu():
    log = ("tests/test_train.py:42: in test_fit\n"
           "    learner.fit(1)\n"
           "E       RuntimeError: Exception occured in `Recorder` when calling event `before_fit`:\n"
           "E       \tThe MPS backend is supported on MacOS 13.0+.Current OS version can be queried using `sw_vers`\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:macos", ident(top)
    assert "device='cpu'" in fix and "skip" in fix and "Upgrade macOS" in fix, fix


def test_mps_not_linked_off_a_mac_says_it_is_apple_only():
    log = frames(("/home/u/llm/model.py", "self.cache = torch.zeros(shape, device='mps')")) + (
        "RuntimeError: PyTorch is not linked with support for mps devices\n")
    _top, fix = first(log)
    assert "Apple silicon" in fix and "macOS" in fix, fix


def test_pytest_passing_output_is_healthy():
    healthy("============================= test session starts ==============================\n"
            "collected 12 items\n"
            "tests/test_mps.py ....s.......                                            [100%]\n"
            "======================== 11 passed, 1 skipped in 3.21s =========================\n")


# --- vLLM engine core start-up wrapper --------------------------------------------------------------------------------

_CORE = frames(("/srv/venv/lib/python3.12/site-packages/vllm/v1/engine/core_client.py", "self._wait_for_engine_startup()"),
               ("/srv/venv/lib/python3.12/site-packages/vllm/v1/engine/utils.py", "raise RuntimeError(")) + (
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_0': 1}\n")


def test_vllm_engine_core_wrapper_alone_names_gpu_memory_utilization():
    top, fix = first(_CORE)
    assert ident(top) == "launcher:vllm-engine-core"
    assert "--gpu-memory-utilization" in fix and "VLLM_LOGGING_LEVEL=DEBUG" in fix, fix


def test_vllm_engine_core_wrapper_yields_to_the_root_error_above():
    log = ("(EngineCore_0 pid=812) ERROR 06-02 10:01:02 [core.py:586] EngineCore failed to start.\n"
           "(EngineCore_0 pid=812) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
           "total capacity of 23.55 GiB of which 1.02 GiB is free.\n") + _CORE
    top, _fix = first(log)
    assert ident(top) != "launcher:vllm-engine-core", ident(top)


def test_vllm_startup_info_is_healthy():
    healthy("INFO 06-02 10:01:02 [core.py:69] Initializing a V1 LLM engine (v0.9.1) with config: model='m', "
            "gpu_memory_utilization=0.9\n"
            "INFO 06-02 10:01:40 [api_server.py:1336] Starting vLLM API server 0 on http://0.0.0.0:8000\n")


# --- pip: a CUDA build the searched index does not list --------------------------------------------------------------

def _nover(req: str, versions: str) -> str:
    return (f"ERROR: Could not find a version that satisfies the requirement {req} (from versions: {versions})\n"
            f"ERROR: No matching distribution found for {req}\n")


def test_pip_cuda_build_not_on_generic_index_names_the_cuda_index():
    _top, fix = first(_nover("torch==2.4.1+cu118", "2.3.1, 2.3.1+cpu, 2.4.1, 2.4.1+cpu, 2.6.0+cu126, 2.7.0+cu128"))
    assert "--index-url https://download.pytorch.org/whl/cu118" in fix, fix


def test_pip_cuda_build_that_never_existed_is_not_sent_to_an_index():
    _top, fix = first(_nover("torch==2.7.0+cu121", "2.6.0, 2.6.0+cu126, 2.7.0, 2.7.0+cu126, 2.7.0+cu128"))
    assert "whl/cu121" not in fix, fix


# --- bitsandbytes' old CUDA setup (0.38-0.41) ------------------------------------------------------------------------

def test_old_bitsandbytes_cuda_setup_failure_says_upgrade():
    log = ("CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so.12\n"
           "CUDA SETUP: Highest compute capability among GPUs detected: 7.5\n"
           "CUDA SETUP: Detected CUDA version 123\n"
           "CUDA SETUP: Something unexpected happened. Please compile from source:\n"
           "git clone https://github.com/TimDettmers/bitsandbytes.git\n"
           "cd bitsandbytes\n"
           "CUDA_VERSION=123 make cuda12x\n"
           "python setup.py install\n")
    top, fix = first(log)
    assert ident(top) == "FDE726" and "pip install -U bitsandbytes" in fix, fix


def test_bitsandbytes_setup_success_is_healthy():
    healthy("CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so\n"
            "CUDA SETUP: Highest compute capability among GPUs detected: 8.0\n"
            "CUDA SETUP: Detected CUDA version 118\n"
            "CUDA SETUP: Loading binary /opt/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda118.so...\n")
