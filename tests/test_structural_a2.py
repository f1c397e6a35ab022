"""The classes tuned in round 2 by helper tune-a2 (issue 22): torch without CUDA (no NVIDIA GPU, macOS),
bf16 on a pre-Ampere GPU in every knob's wording, a torch wheel without kernels for the GPU. Every line
is written for the test (realistic, not copied from the corpus), with siblings of the same class, and
healthy lines of the same vocabulary that must raise nothing."""

from __future__ import annotations

import pytest

from _explain_items import first, fix_text, healthy, scan


# --- torch without CUDA ---------------------------------------------------------------------------

@pytest.mark.parametrize("tail", [
    '  File "/Users/ana/venv/lib/python3.12/site-packages/torch/cuda/__init__.py", line 310, in _lazy_init\n'
    '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
    'AssertionError: Torch not compiled with CUDA enabled\n',
    '  File "C:\\\\Users\\\\ana\\\\env\\\\Lib\\\\site-packages\\\\torch\\\\cuda\\\\__init__.py", line 284, in _lazy_init\n'
    'AssertionError: Torch not compiled with CUDA enabled\n',
])
def test_torch_without_cuda_names_both_ways_out(tail):
    item = first("Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n"
                 "    model = model.cuda()\n" + tail)
    text = fix_text(item)
    assert "download.pytorch.org/whl/cu" in text  # an NVIDIA GPU: the CUDA build
    assert "mps" in text and "device='cpu'" in text  # none (a Mac): mps or CPU


def test_inductor_without_cuda_is_a_compile_problem_not_a_wheel():
    item = first("Traceback (most recent call last):\n  File \"bench.py\", line 9, in <module>\n    out = fn(x)\n"
                 "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                 "AssertionError: Torch not compiled with CUDA enabled\n")
    assert item.entry.symbol == "inductor-on-torch-without-cuda"
    assert "aot_eager" in fix_text(item)
    older = first("BackendCompilerFailed: debug_wrapper raised AssertionError: Torch not compiled with CUDA enabled\n")
    assert older.entry.symbol == "inductor-on-torch-without-cuda"


# --- bf16 on a GPU without it ---------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
    "ValueError: Your setup doesn't support bf16/(cpu, tpu, neuroncore). You need torch>=1.10",
    "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device.",
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
    "Your Tesla V100-SXM2-32GB GPU has compute capability 7.0.",
    "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.",
])
def test_bf16_refusals_name_float16_in_every_knob(line):
    item = first("Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n" + line + "\n")
    assert item.entry.symbol == "bf16-needs-ampere"
    text = fix_text(item)
    for knob in ("--fp16 True", "--mixed_precision fp16", "--dtype float16", "torch.float16"):
        assert knob in text


# --- no kernels for this GPU -----------------------------------------------------------------------

@pytest.mark.parametrize("gpu, arch", [("NVIDIA GeForce RTX 3080", "86"), ("NVIDIA L4", "89")])
def test_no_kernel_image_names_the_cuda_that_knows_the_gpu(gpu, arch):
    item = first(f"{gpu} with CUDA capability sm_{arch} is not compatible with the current PyTorch installation.\n"
                 "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.\n"
                 "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    text = fix_text(item)
    assert "CUDA 11.1+" in text and "cu111" in text and "cu102" in text


# --- healthy lines of the same vocabulary ----------------------------------------------------------

def test_healthy_bf16_and_device_notices():
    healthy("Using bf16 mixed precision on NVIDIA A100-SXM4-80GB\n"
            "INFO: is_bf16_supported() = True\n"
            "torch 2.5.1+cu124 with CUDA 12.4, sm_80\n"
            "Epoch 1: 100%|##########| 50/50 [00:10<00:00,  4.9it/s, loss=1.2]\n")


# --- requirements quoted in backticks (transformers' import checks, any package) --------------------

@pytest.mark.parametrize("line, req", [
    ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please run "
     "`pip install transformers[torch]` or `pip install 'accelerate>=0.26.0'`", "accelerate>=0.26.0"),
    ("ImportError: Using `bitsandbytes` 4-bit quantization requires `bitsandbytes>=0.43.1`: "
     "Please run `pip install -U bitsandbytes`", "bitsandbytes>=0.43.1"),
])
def test_backticked_requirement_is_read(line, req):
    item = first("Traceback (most recent call last):\n  File \"ft.py\", line 12, in <module>\n" + line + "\n")
    assert req in fix_text(item)


# --- device-side asserts: the kernel's condition names what was out of range ------------------------

@pytest.mark.parametrize("assert_line, want", [
    ("/opt/pytorch/aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
     "thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.", "num_classes"),
    ("/opt/pytorch/aten/src/ATen/native/cuda/NLLLoss2d.cu:104: nll_loss2d_forward_kernel: block: [2,0,0], "
     "thread: [64,0,0] Assertion `cur_target >= 0 && cur_target < n_classes` failed.", "ignore_index"),
    ("/opt/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [90,0,0], "
     "thread: [3,0,0] Assertion `srcIndex < srcSelectDimSize` failed.", "max_position_embeddings"),
    ("/opt/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [1,0,0] "
     "Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.", "min and max"),
    ("/opt/pytorch/aten/src/ATen/native/cuda/Loss.cu:94: operator(): block: [7,0,0], thread: [32,0,0] "
     "Assertion `input_val >= zero && input_val <= one` failed.", "BCEWithLogitsLoss"),
])
@pytest.mark.parametrize("order", ["error-first", "assert-first"])
def test_device_assert_condition_answers_before_the_generic_710(assert_line, want, order):
    error = "RuntimeError: CUDA error: device-side assert triggered"
    lines = [error, assert_line] if order == "error-first" else [assert_line, assert_line, error]
    item = first("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
                 "    loss = criterion(out, y)\n" + "\n".join(lines) + "\n")
    assert want in fix_text(item), fix_text(item)


def test_unknown_assert_condition_still_gets_the_generic_710():
    item = first("RuntimeError: CUDA error: device-side assert triggered\n"
                 "/src/my_ext/kernel.cu:12: my_kernel: block: [0,0,0], thread: [0,0,0] Assertion `n > 0` failed.\n")
    assert item.subject == "cudaErrorAssert" and "CUDA_LAUNCH_BLOCKING=1" in fix_text(item)


def test_glibc_assert_is_not_a_cuda_assert():
    healthy("python3: ../sysdeps/x86/cpu-features.c:42: note: Assertion checks enabled\n"
            "Epoch 2: 100%|##########| 50/50 [00:10<00:00,  4.9it/s, loss=0.8]\n")


# --- cuDNN statuses ------------------------------------------------------------------------------------

@pytest.mark.parametrize("status, want", [
    ("CUDNN_STATUS_EXECUTION_FAILED", "cudnn.enabled = False"),
    ("CUDNN_STATUS_EXECUTION_FAILED", "CUDA 10.0+"),
    ("CUDNN_STATUS_INTERNAL_ERROR", "cudnn.benchmark = False"),
])
def test_cudnn_status_names_its_own_causes(status, want):
    item = first("Traceback (most recent call last):\n  File \"seg.py\", line 30, in <module>\n"
                 f"    y = conv(x)\nRuntimeError: cuDNN error: {status}\n")
    assert want in fix_text(item)


# --- shared libraries: two copies, old CUDA sonames, loaders other than torch ------------------------

@pytest.mark.parametrize("line, want", [
    ("OSError: /opt/env/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12: undefined symbol: "
     "cublasLtHSHMatmulAlgoInit, version libcublasLt.so.12", "nvidia-cublas-cu12"),
    ("OSError: /usr/local/lib/libcusparse.so.11: symbol __nvJitLinkAddData_12_1 version libnvJitLink.so.12 "
     "not defined in file libnvJitLink.so.12 with link time reference", "nvidia-nvjitlink-cu12"),
    ("ImportError: /srv/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
     "ncclCommWindowRegister", "nvidia-nccl-cu"),
    ("ImportError: /srv/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
     "cudnnGetLibConfig", "nvidia-cudnn-cu"),
])
def test_two_copies_of_a_cuda_library(line, want):
    item = first("Traceback (most recent call last):\n  File \"app.py\", line 1, in <module>\n    import torch\n"
                 + line + "\n")
    assert item.kind == "shared-library"
    text = fix_text(item)
    assert want in text and "LD_LIBRARY_PATH" in text


@pytest.mark.parametrize("line, want", [
    ("ImportError: libcudart.so.9.0: cannot open shared object file: No such file or directory", "CUDA 9.0"),
    ("ImportError: libcufft.so.10.0: cannot open shared object file: No such file or directory", "CUDA 10.0"),
])
def test_soname_of_a_cuda_older_than_any_wheel(line, want):
    item = first("Traceback (most recent call last):\n  File \"/env/lib/python3.6/site-packages/mxnet/base.py\", "
                 "line 9, in <module>\n" + line + "\n")
    assert want in fix_text(item)


def test_library_of_another_loader_names_the_loader_path():
    item = first("F0312 12:00:01.000 dynamic_loader.cc:120] Check failed: nullptr != dso_handle Failed to find "
                 "dynamic library: libcudnn.so (libcudnn.so: cannot open shared object file: No such file or directory)\n")
    text = fix_text(item)
    assert "LD_LIBRARY_PATH" in text and "ldconfig" in text


@pytest.mark.parametrize("line, want", [
    ("ERROR 05-02 10:00:00 pynccl.py:44] Failed to load NCCL library from /opt/nccl/lib/libnccl.so.2 .", "libnccl2"),
    ("Unable to load any of {libcudnn_cnn.so.9.1.0, libcudnn_cnn.so.9.1, libcudnn_cnn.so.9, libcudnn_cnn.so}",
     "nvidia-cudnn-cu12"),
])
def test_library_loaders_of_vllm_and_ctranslate2(line, want):
    assert want in fix_text(first(line + "\n"))


def test_cuda_pip_entry_names_the_package_of_each_library():
    item = first("Traceback (most recent call last):\n  File \"/v/lib/python3.12/site-packages/torch/__init__.py\", "
                 "line 290, in <module>\n    from torch._C import *\n"
                 "ImportError: libcusparseLt.so.0: cannot open shared object file: No such file or directory\n")
    assert "nvidia-cusparselt-cu12" in fix_text(item)


def test_healthy_library_notices():
    healthy("INFO 05-02 10:00:00 utils.py:598] Found nccl from library libnccl.so.2\n"
            "INFO 05-02 10:00:01 pynccl.py:63] vLLM is using nccl==2.21.5\n"
            "Loaded cuDNN version 90100\n")


# --- ROCm: code objects that do not load, no access to /dev/kfd, GPUs without kfd ---------------------

@pytest.mark.parametrize("line", [
    "RuntimeError: HIP error: shared object initialization failed",
    "RuntimeError: HIP Function Failed (/src/xformers/third_party/composable_kernel/include/ck/host_utility/"
    "kernel_launch.hpp,77) shared object initialization failed",
    "RuntimeError: HIP error: invalid device function",
])
def test_rocm_code_objects_name_arch_override_and_same_rocm(line):
    text = fix_text(first(line + "\nCompile with `TORCH_USE_HIP_DSA` to enable device-side assertions.\n"))
    for want in ("HSA_OVERRIDE_GFX_VERSION", "PYTORCH_ROCM_ARCH", "same ROCm version"):
        assert want in text


@pytest.mark.parametrize("text, symbol", [
    ("Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.\n",
     "rocm-no-access-to-kfd"),
    ("RuntimeError: No HIP GPUs are available\nhipErrorNoDevice: no ROCm-capable device is detected\n",
     "rocm-no-access-to-kfd"),
    ("Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed\n"
     "[    3.1] kfd kfd: amdgpu: OLAND  not supported in kfd\n", "rocm-gpu-not-supported-in-kfd"),
])
def test_rocm_device_access(text, symbol):
    item = first(text)
    assert item.entry.symbol == symbol
    assert ("usermod" in fix_text(item)) == (symbol == "rocm-no-access-to-kfd")


def test_healthy_rocm_startup():
    healthy("[    2.0] kfd kfd: amdgpu: added device 1002:744c\n"
            "ROCk module is loaded\n"
            "torch 2.5.1+rocm6.2 HIP 6.2.41133 gfx1100\n")


# --- a package's compiled core missing: shadowed by a folder, or a broken install ---------------------

@pytest.mark.parametrize("frame, want, unwanted", [
    ('  File "/home/u/src/pytorch/torch/__init__.py", line 237, in <module>\n', "different directory", "Reinstall"),
    ('  File "C:\\\\Users\\\\u\\\\vision\\\\torchvision\\\\__init__.py", line 6, in <module>\n', "different directory",
     "Reinstall"),
    ('  File "/opt/venv/lib/python3.11/site-packages/torch/__init__.py", line 237, in <module>\n', "Reinstall",
     "different directory"),
])
def test_compiled_core_missing_reads_where_it_was_imported_from(frame, want, unwanted):
    mod = "torchvision._C" if "vision" in frame else "torch._C"
    item = first("Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n" + frame +
                 "    from torch._C import *\n" + f"ModuleNotFoundError: No module named '{mod}'\n")
    text = fix_text(item)
    assert want in text and unwanted not in text


def test_compiled_core_missing_without_frames_names_both():
    text = fix_text(first("ModuleNotFoundError: No module named 'mmcv._ext'\n"))
    assert "different directory" in text and "reinstall" in text


# --- CUDA extensions built on macOS ------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "      /private/var/folders/x1/abc/T/pip-install-q/flash-attn_12/setup.py:80: UserWarning: flash_attn was "
    "requested, but nvcc was not found.  Are you sure your environment has nvcc available?",
    '      File "/Users/kim/venv/lib/python3.11/site-packages/torch/utils/cpp_extension.py", line 2416, in _join_cuda_home\n'
    "      OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
])
def test_cuda_extension_build_on_a_mac_says_skip_it(line):
    item = first("Collecting flash-attn\n  Preparing metadata (setup.py) ... error\n  error: subprocess-exited-with-error\n"
                 + line + "\n")
    text = fix_text(item)
    assert "not supported on macOS" in text and "sdpa" in text


def test_nvcc_warning_on_linux_is_not_the_mac_answer():
    result = scan("/home/u/build/flash-attn/setup.py:80: UserWarning: flash_attn was requested, but nvcc was not "
                  "found.  Are you sure your environment has nvcc available?\n"
                  "Successfully installed flash-attn-2.7.4\n")
    assert not result.found


# --- NCCL watchdog timeouts: diverged ranks versus one rank working alone --------------------------

def test_watchdog_timeout_names_both_kinds_of_wait():
    item = first("[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=88, OpType=ALLGATHER, NumelIn=4096, NumelOut=16384, Timeout(ms)=600000) ran for "
                 "600042 milliseconds before timing out.\n")
    text = fix_text(item)
    for want in ("drop_last=True", "same number of batches", "init_process_group(timeout=", "--ddp_timeout",
                 "TORCH_NCCL_TRACE_BUFFER_SIZE"):
        assert want in text


# --- engine: a progress bar redrawn at exit; a silent kill after survived errors ---------------------

OOM_TB = ("Traceback (most recent call last):\n  File \"train.py\", line 120, in <module>\n    loss.backward()\n"
          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 0 has a total capacity of "
          "23.64 GiB of which 410.00 MiB is free.\n")


def test_progress_bar_redrawn_after_the_crash_is_not_progress():
    item = first("Epoch 0:   0%|          | 2/4000 [00:09<5:02:11,  4.54s/it]\n" + OOM_TB +
                 "Epoch 0:   0%|          | 2/4000 [00:10<5:34:20,  5.02s/it]\n")
    assert item.kind == "out-of-memory"


def test_progress_that_continues_after_a_caught_error_is_still_progress():
    result = scan("Epoch 0:   1%|          | 40/4000 [00:09<5:02:11,  4.54s/it]\n"
                  "Traceback (most recent call last):\n  File \"loader.py\", line 8, in fetch\n"
                  "ValueError: corrupt sample 17, skipped\n"
                  "Epoch 0:   1%|          | 41/4000 [00:10<5:01:00,  4.50s/it]\n"
                  "Epoch 0:   2%|▏         | 80/4000 [00:19<4:59:00,  4.40s/it]\n"
                  "Epoch 0:   3%|▎         | 120/4000 [00:29<4:58:00,  4.40s/it]\n"
                  "Epoch 0:   4%|▍         | 160/4000 [00:38<4:57:00,  4.40s/it]\n")
    assert not result.found and not any(a.kind == "unknown" for a in result.answers)


def test_killed_after_a_survived_library_warning_is_the_cause():
    item = first("/env/lib/python3.10/site-packages/somepkg/libsome_cpu.so: undefined symbol: some_fn_fp32\n"
                 "INFO: loading model\nLoading checkpoint shards:   0%|          | 0/4 [00:00<?, ?it/s]\nKilled\n")
    assert item.kind == "out-of-memory" and "dmesg" in fix_text(item)


def test_progress_redrawn_after_a_pasted_excerpt_without_its_traceback_line():
    item = first('  File "/env/lib/python3.8/site-packages/torch/autograd/__init__.py", line 132, in backward\n'
                 "    allow_unreachable=True)\n"
                 "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 7.79 GiB total capacity)\n"
                 "  0%|          | 3/2000 [00:09<1:41:11,  3.04s/it]\n")
    assert item.kind == "out-of-memory"


def test_a_bare_error_line_then_progress_is_survived():
    # the bar moved on after the error (one bar alone, ending the log, is tqdm's redraw at exit:
    # tests/test_explain_structural.py::test_a_bar_redrawn_under_an_uncaught_exceptions_last_line_is_no_survival)
    result = scan("RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 7.79 GiB total capacity)\n"
                  "Epoch 3:  50%|#####     | 500/1000 [01:10<01:10,  7.1it/s]\n"
                  "Epoch 3:  51%|#####     | 510/1000 [01:11<01:09,  7.1it/s]\n")
    assert not [a for a in result.answers if a.kind != "unknown"]


# --- CUDA errors raised by a kernel library's own check, with its source file -----------------------

@pytest.mark.parametrize("line, pkg", [
    ("CUDA error (/build/flash-attention/hopper/flash_fwd_launch_template.h:180): an illegal memory access was "
     "encountered", "flash-attn"),
    ("CUDA error (/tmp/pip-build/xformers/csrc/attention/cuda/fmha/kernel_forward.h:1011): unspecified launch failure",
     "xformers"),
])
def test_cuda_error_in_a_kernel_library_names_the_library(line, pkg):
    item = first("(Worker pid=4411) " + line + "\n")
    assert item.kind == "cuda-error"
    text = fix_text(item)
    assert pkg in text and "SDPA" in text


def test_cuda_error_in_own_code_does_not_blame_a_library():
    item = first("CUDA error (/home/me/proj/kernels/my_op.cu:42): an illegal memory access was encountered\n")
    assert "flash-attn" not in fix_text(item) and "CUDA_LAUNCH_BLOCKING" in fix_text(item)


# --- ROCm attention kernels without this gfx target --------------------------------------------------

@pytest.mark.parametrize("text", [
    'Traceback (most recent call last):\n  File "/opt/venv/lib/python3.12/site-packages/aiter/jit/core.py", '
    "line 40, in <module>\nKeyError: 'gfx1201'\n",
    "/src/flash-attention/csrc/composable_kernel/include/ck/utility/amd_buffer_addressing.hpp:32:48: error: "
    "use of undeclared identifier '__builtin_amdgcn_raw_buffer_load'\n2 errors generated when compiling for gfx1030.\n",
    "AssertionError: One of GPU archs of ['gfx906'] is invalid or not supported by Flash-Attention\n",
])
def test_rocm_kernel_library_without_the_gfx_target(text):
    item = first(text)
    assert item.kind == "unsupported-op" and item.subject == "rocm"
    fix = fix_text(item)
    assert "FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE" in fix and "VLLM_ROCM_USE_AITER=0" in fix and "SDPA" in fix


def test_rocm_sdpa_warning_names_aotriton_not_windows():
    item = first("m.py:9: UserWarning: Torch was not compiled with flash attention. (Triggered internally at "
                 "../aten/src/ATen/native/transformers/hip/sdp_utils.cpp:505.)\n")
    assert item.entry.symbol == "rocm-torch-without-flash-sdpa"
    # the Windows wheels' twin is a note, not a problem: healthy Windows runs print it (round 9's healthy logs)
    cuda = scan("m.py:9: UserWarning: 1Torch was not compiled with flash attention. (Triggered internally at "
                "C:\\actions-runner\\_work\\pytorch\\aten\\src\\ATen\\native\\transformers\\cuda\\sdp_utils.cpp:555.)\n")
    assert not cuda.found and [n.entry.symbol for n in cuda.notes] == ["windows-torch-without-flash-sdpa"]


# --- FSDP auto-wrap with a layer class the model lacks ----------------------------------------------

@pytest.mark.parametrize("line", [
    "ValueError: Could not find the transformer layer class Qwen2DecoderLayer to wrap in the model.",
    "Exception: Could not find the transformer layer class to wrap in the model.",
])
def test_fsdp_wrap_class_names_the_option_and_the_model_class(line):
    item = first("Traceback (most recent call last):\n  File \"/v/lib/python3.11/site-packages/accelerate/"
                 "accelerator.py\", line 1467, in prepare_model\n" + line + "\n")
    text = fix_text(item)
    assert "fsdp_transformer_layer_cls_to_wrap" in text and "_no_split_modules" in text and "SIZE_BASED_WRAP" in text
