"""The structural readers of tune-h6 (issue 22, cycle 3): serving runtimes, containers and drivers. Lines are
written here in the shape the real code prints them (llama.cpp src/llama-model.cpp / llama-vocab.cpp,
llama-cpp-python llama_cpp/_internals.py, ...), not copied from the corpus; each class has a sibling and a healthy
neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident

# --- a GGUF newer than the llama.cpp that loads it ------------------------------------------------------------------

_LOADER = ("llama_model_loader: - kv   0:                       general.architecture str              = {arch}\n"
           "llama_model_load: error loading model: error loading model architecture: unknown model architecture: "
           "'{arch}'\nllama_model_load_from_file_impl: failed to load model\n"
           "common_init_from_params: failed to load model 'model-Q4_K_M.gguf'\nmain: error: unable to load model\n")


def test_gguf_unknown_architecture_asks_for_a_newer_llama_cpp():
    top, fix = first(_LOADER.format(arch="olmo2"))
    assert ident(top) == "version-constraint:llama.cpp"
    assert "newer llama.cpp" in fix and "'olmo2'" in fix, fix
    assert "pull the latest image" in fix and "recipes --install llamacpp" in fix, fix


def test_gguf_sibling_pre_tokenizer_in_llama_cpp_python_gives_its_pip_command():
    log = ("llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer type: "
           "'deepseek-r1-qwen'\nllama_load_model_from_file: failed to load model\n"
           + frames(("/home/u/venv/lib/python3.11/site-packages/llama_cpp/llama.py", "_LlamaModel("),
                    ("/home/u/venv/lib/python3.11/site-packages/llama_cpp/_internals.py", "raise ValueError(...)"))
           + "ValueError: Failed to load model from file: DeepSeek-R1-Distill-Qwen-7B-Q4_K_M.gguf\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:llama-cpp-python"
    assert "pre-tokenizer 'deepseek-r1-qwen'" in fix or "'deepseek-r1-qwen'" in fix, fix
    assert "pip install --upgrade --force-reinstall --no-cache-dir llama-cpp-python" in fix, fix


def test_gguf_healthy_loader_lines_stay_silent():
    healthy("llama_model_loader: - kv   0:                       general.architecture str              = gemma3\n"
            "print_info: arch             = gemma3\nprint_info: file format = GGUF V3 (latest)\n"
            "load_tensors: offloaded 49/49 layers to GPU\nmain: server is listening on http://127.0.0.1:8080\n")


# --- fix content of existing entries (containers, drivers, WSL2, kernels of a package) --------------------------------

def test_driver_too_old_in_a_container_or_wsl_says_how_the_driver_gets_in():
    # cudaGetDeviceCount's cudaErrorInsufficientDriver, also what a container started without GPU access reports
    top, fix = first("terminate called after throwing an instance of 'std::runtime_error'\n"
                     "  what():  [TRT][ERROR] CUDA runtime error: CUDA driver version is insufficient for CUDA runtime "
                     "version\nAborted (core dumped)\n")
    assert ident(top) == "FDE105"
    assert "docker run --gpus all <image>" in fix and "21H2 (build 19044)" in fix, fix


def test_ptx_from_a_newer_toolchain_says_update_the_driver():
    top, fix = first("E0412 09:13:55.102 1 model_lifecycle.cc:626] failed to load 'ensemble' version 1: Internal: "
                     "CUDA runtime implicit initialization on GPU:0 failed. Status: the provided PTX was compiled with an "
                     "unsupported toolchain.\n")
    assert ident(top) == "FDE123"
    assert fix.startswith("Update the driver: install a newer NVIDIA driver"), fix


def test_no_driver_in_a_compose_service_names_the_capabilities():
    top, fix = first("api_1  |   File \"/usr/local/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 298, in "
                     "_lazy_init\napi_1  |     torch._C._cuda_init()\napi_1  | RuntimeError: Found no NVIDIA driver on "
                     "your system. Please check that you have an NVIDIA GPU and installed a driver from "
                     "http://www.nvidia.com/Download/index.aspx\n")
    assert ident(top) == "FDE102"
    assert "capabilities: [gpu, compute, utility]" in fix and "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in fix, fix


def test_no_kernel_image_names_a_package_s_own_arch_list():
    top, fix = first("(EngineCore_0 pid=211) RuntimeError: CUDA error: no kernel image is available for execution on "
                     "the device\n")
    assert ident(top) == "FDE108"
    assert "TORCH_CUDA_ARCH_LIST" in fix and "compute capability 7.0" in fix, fix


# --- a docker run option after the image ------------------------------------------------------------------------------

def test_option_after_the_image_reaches_the_entrypoint():
    top, fix = first("$ docker run -it myorg/sd-webui:latest --gpus all -p 7860:7860\n"
                     "/opt/nvidia/nvidia_entrypoint.sh: line 67: exec: --: invalid option\n"
                     "exec: usage: exec [-cl] [-a name] [command [arguments ...]] [redirection ...]\n")
    assert ident(top) == "launcher:docker run"
    assert "before the image name" in fix and "docker run --gpus all <image> [command]" in fix, fix


def test_option_after_the_image_sibling_no_entrypoint():
    top, fix = first('docker: Error response from daemon: failed to create task for container: failed to create shim '
                     'task: OCI runtime create failed: runc create failed: unable to start container process: exec: '
                     '"--shm-size=8g": executable file not found in $PATH: unknown.\n')
    assert ident(top) == "launcher:docker run" and "--shm-size=8g" in top.title, top.title


def test_option_before_the_image_stays_silent():
    healthy("$ docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:24.05-py3 python -c 'print(1)'\n"
            "== PyTorch ==\nNVIDIA Release 24.05 (build 92488929)\n1\n")
