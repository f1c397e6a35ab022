"""The readers of builder i6 (issue 22, coverage: out of memory in each program's own words). Lines are written here in
the shape the programs print them (llama.cpp ggml-cuda.cu CUDA_CHECK and ggml_backend_cuda_buffer_type_alloc_buffer;
ollama's server log; text-generation-inference's router panic; torch's CUDACachingAllocator message under the frames
of Fooocus, text-generation-inference, SGLang and text-generation-webui), not copied from the corpus; each class has
siblings and healthy neighbours."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import fix_text, healthy, scan

_TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity "
              "of 7.79 GiB of which 301.44 MiB is free. Of the allocated memory 6.90 GiB is allocated by PyTorch, and "
              "150.12 MiB is reserved by PyTorch but unallocated.\n")


def _trace(*paths: str) -> str:
    frames = "".join(f'  File "{p}", line {10 + n}, in run\n    x = f(x)\n' for n, p in enumerate(paths))
    return "Traceback (most recent call last):\n" + frames + _TORCH_OOM


# --- llama.cpp's CUDA out of memory, by the program around it --------------------------------------------------------

def test_llamacpp_error2_names_ngl_and_ctx_size():
    top, fix = first("main: build = 1501 (a7fe2e7)\n"
                     "CUDA error 2 at /home/me/src/llama.cpp/ggml-cuda.cu:6241: out of memory\ncurrent device: 0\n")
    assert "-ngl" in fix and "--ctx-size" in fix, fix
    assert "num_gpu" not in fix


def test_llamacpp_buffer_alloc_line_alone_is_read():
    top, fix = first("llm_load_tensors: offloading 40 repeating layers to GPU\n"
                     "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9104.50 MiB on device 0: cudaMalloc failed: "
                     "out of memory\n"
                     "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n")
    assert top.kind == "cuda-error" and "--n-gpu-layers" in fix, fix


def test_ollama_server_log_names_num_gpu_and_num_ctx():
    top, fix = first('time=2025-03-02T10:11:12.000+01:00 level=ERROR source=sched.go:455 msg="error loading llama '
                     'server" error="llama runner process has terminated: cudaMalloc failed: out of memory"\n')
    assert "num_gpu" in fix and "num_ctx" in fix, fix


def test_ollama_ggml_assert_on_windows_names_num_ctx():
    top, fix = first("CUDA error: out of memory\n  current device: 0, in function ggml_cuda_pool_malloc_vmm at "
                     "C:\\a\\ollama\\ollama\\llm\\llama.cpp\\ggml-cuda.cu:8583\n"
                     "  cuMemCreate(&handle, reserve_size, &prop, 0)\n"
                     "GGML_ASSERT: C:\\a\\ollama\\ollama\\llm\\llama.cpp\\ggml-cuda.cu:256: !\"CUDA error\"\n")
    assert "num_ctx" in fix, fix


def test_llama_cpp_python_wheel_path_names_n_gpu_layers():
    top, fix = first("CUDA error 2 at /tmp/pip-build/llama-cpp-python/vendor/llama.cpp/ggml-cuda.cu:7949: out of memory\n"
                     "current device: 0\n")
    assert "n_gpu_layers" in fix and "n_ctx" in fix, fix


def test_torch_cuda_error_out_of_memory_keeps_the_general_fix():
    top, fix = first("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    loss.backward()\n"
                     "RuntimeError: CUDA error: out of memory\n")
    assert "num_gpu" not in fix and "-ngl" not in fix, fix


def test_ggml_launch_timeout_is_not_read_as_out_of_memory():
    top, fix = first("E CUDA error: the launch timed out and was terminated\n"
                     "E   current device: 0, in function ggml_backend_cuda_synchronize at "
                     "/src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:2530\n"
                     "E   cudaStreamSynchronize(cuda_ctx->stream())\n")
    assert top.subject != "cudaErrorMemoryAllocation" and "-ngl" not in fix, fix


def test_llamacpp_offload_progress_is_healthy():
    healthy("llm_load_tensors: offloading 32 repeating layers to GPU\n"
                   "llm_load_tensors: offloaded 33/33 layers to GPU\n"
                   "llm_load_tensors:      CUDA0 buffer size =  4095.05 MiB\n"
                   "llama_new_context_with_model: n_ctx      = 4096\n")


# --- TGI's warm-up ---------------------------------------------------------------------------------------------------

def test_tgi_router_warmup_panic_names_token_budgets():
    top, fix = first("thread 'main' panicked at 'Unable to warmup model: Generation(\"Allocation on device 0 would "
                     "exceed allowed memory. (out of memory)\\nCurrently allocated     : 30.01 GiB\")', "
                     "router/src/main.rs:220:18\nError: WebserverFailed\n")
    assert "--max-batch-prefill-tokens" in fix and "--num-shard" in fix, fix


def test_tgi_shard_frames_oom_names_token_budgets():
    top, fix = first(_trace("/opt/conda/lib/python3.11/site-packages/text_generation_server/models/flash_causal_lm.py",
                            "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py"))
    assert "--max-batch-prefill-tokens" in fix, fix


def test_tgi_router_other_warmup_error_is_not_oom():
    fix = " ".join(fix_text(i) for i in scan("thread 'main' panicked at 'Unable to warmup model: Generation(\"Flash attention is not "
                     "supported\")', router/src/main.rs:220:18\n").ordered())
    assert "--max-batch-prefill-tokens" not in fix, fix


# --- each program's frames -------------------------------------------------------------------------------------------

def test_fooocus_frames_get_fooocus_flags_not_comfyuis():
    top, fix = first(_trace("D:\\Fooocus_win64_2-5-0\\Fooocus\\modules\\async_worker.py",
                            "D:\\Fooocus_win64_2-5-0\\Fooocus\\ldm_patched\\modules\\model_management.py",
                            "D:\\Fooocus_win64_2-5-0\\python_embeded\\lib\\site-packages\\torch\\nn\\modules\\module.py"))
    assert "--always-low-vram" in fix and "--novram" not in fix, fix


def test_comfyui_frames_still_get_comfyuis_flags():
    top, fix = first(_trace("C:\\ComfyUI_windows_portable\\ComfyUI\\execution.py",
                            "C:\\ComfyUI_windows_portable\\ComfyUI\\comfy\\samplers.py",
                            "C:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\torch\\nn\\functional.py"))
    assert "--lowvram" in fix and "--always-low-vram" not in fix, fix


def test_sglang_runtime_oom_lowers_mem_fraction_and_chunked_prefill():
    top, fix = first(_trace("/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py",
                            "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py"))
    assert "--mem-fraction-static" in fix and "--chunked-prefill-size" in fix, fix


def test_text_generation_webui_frames_name_its_loaders():
    top, fix = first(_trace("C:\\text-generation-webui\\modules\\ui_model_menu.py",
                            "C:\\text-generation-webui\\modules\\models.py",
                            "C:\\text-generation-webui\\installer_files\\env\\Lib\\site-packages\\torch\\nn\\modules\\module.py"))
    assert "--load-in-4bit" in fix and "n-gpu-layers" in fix, fix


def test_plain_script_oom_keeps_the_general_answer():
    top, fix = first(_trace("/home/me/proj/train.py", "/usr/lib/python3/site-packages/torch/nn/modules/module.py"))
    assert "--always-low-vram" not in fix and "--mem-fraction-static" not in fix and "num_gpu" not in fix, fix
