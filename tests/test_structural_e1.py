"""The structural layer's round-5 readers of tune-e1 (issue 22): bitsandbytes models moved after loading (who
moved them), Dynamo refusing logger calls and disabled functions under fullgraph=True, MPS's 4 GiB array
limit, GradScaler on half-precision trainable parameters, vLLM's KV-cache check pasted without its exception
name, and the remedies of two entries (xformers' reasons, q/k/v dtypes in ComfyUI). Lines are written here in
the shape the real code prints (transformers modeling_utils.py, accelerate big_modeling.py, torch/_dynamo,
MPSNDArray.mm, torch/amp/grad_scaler.py, vllm worker.py), not copied from the corpus; each class has a sibling
and a healthy line that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import fix_text, healthy, ident


SITE = "/srv/env/lib/python3.11/site-packages"
TO_8 = ("ValueError: `.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. Please use the model as it "
        "is, since the model has already been set to the correct devices and casted to the correct `dtype`.")


# --- bitsandbytes models moved after loading ------------------------------------------------------------

def test_dispatch_model_moving_a_quantized_model_is_an_accelerate_transformers_upgrade():
    log = frames((f"{SITE}/transformers/modeling_utils.py", "dispatch_model(model, **device_map_kwargs)"),
                 (f"{SITE}/accelerate/big_modeling.py", "model.to(device)"),
                 (f"{SITE}/transformers/modeling_utils.py", "raise ValueError(")) + TO_8 + "\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:device"
    assert "pip install -U accelerate transformers" in fix, fix


def test_windows_frames_are_read_too():
    site = r"C:\Users\me\venv\Lib\site-packages"
    log = frames((site + r"\accelerate\big_modeling.py", "model.to(device)"),
                 (site + r"\transformers\modeling_utils.py", "raise ValueError(")) + \
        "ValueError: `.to` is not supported for `8-bit` bitsandbytes models. Please use the model as it is\n"
    assert "pip install -U accelerate" in first(log)[1]


def test_the_trainer_moving_a_quantized_model_is_a_transformers_upgrade():
    log = frames((f"{SITE}/trl/trainer/dpo_trainer.py", "super().__init__("),
                 (f"{SITE}/transformers/trainer.py", "self._move_model_to_device(model, args.device)"),
                 (f"{SITE}/transformers/modeling_utils.py", "raise ValueError(")) + \
        "ValueError: `.to` is not supported for `4-bit` or `8-bit` models. Please use the model as it is\n"
    top, fix = first(log)
    assert "pip install -U transformers trl" in fix, fix


def test_old_bitsandbytes_cannot_move_4bit():
    log = frames((f"{SITE}/transformers/modeling_utils.py", "raise ValueError(")) + (
        "ValueError: Calling `to()` is not supported for `4-bit` quantized models with the installed version of "
        "bitsandbytes. The current device is `cuda:0`. If you intended to move the model, please install "
        "bitsandbytes >= 0.43.2.\n")
    assert "bitsandbytes>=0.43.2" in first(log)[1]


def test_the_users_own_to_call_keeps_the_load_with_device_map_answer():
    log = frames(("/home/me/chat.py", "model = model.to('cuda')"),
                 (f"{SITE}/transformers/modeling_utils.py", "raise ValueError(")) + TO_8 + "\n"
    top, fix = first(log)
    assert "device_map" in fix and "pip install -U accelerate" not in fix, fix


# --- Dynamo: logger calls and disabled functions under fullgraph=True -------------------------------------

def test_logger_with_the_config_hint_names_ignore_logger_methods():
    log = ("torch._dynamo.exc.Unsupported: Logger not supported for non-export cases. To avoid graph breaks caused by "
           "logger in compile-mode, it is recommended to disable logging by adding logging methods to "
           "config.ignore_logger_methods\n\nfrom user code:\n   File \"/srv/m.py\", line 9, in forward\n"
           "    logger.warning_once(\"x\")\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:dynamo"
    assert "ignore_logger_methods.add(logging.Logger.warning_once)" in fix and "fullgraph=False" in fix, fix


def test_logger_of_torch_2_0_in_skipfiles():
    log = ("torch._dynamo.exc.Unsupported: inline in skipfiles: Logger.warning  | warning "
           "/usr/lib/python3.10/logging/__init__.py\n\nfrom user code:\n   File \"/srv/m.py\", line 9, in forward\n"
           "    logger.warning(\"y\")\n")
    fix = first(log)[1]
    assert "fullgraph=False" in fix and "is_compiling" in fix, fix


def test_another_skipped_function_is_fullgraph_false():
    log = "'inline in skipfiles: Mapping.__contains__ | __contains__ /usr/lib/python3.11/_collections_abc.py, skipped'\n"
    top, fix = first(log)
    assert "Mapping.__contains__" in top.title and "fullgraph=False" in fix


@pytest.mark.parametrize("line", [
    "torch._dynamo.exc.Unsupported: Skip calling `torch.compiler.disable()`d function",
    "torch._dynamo.exc.Unsupported: call torch._dynamo.disable() wrapped function <function helper at 0x7f>",
])
def test_disabled_function_under_fullgraph(line):
    assert "fullgraph=False" in first(line + "\n")[1]


def test_logged_graph_breaks_stay_silent():
    healthy("W0611 12:01:02.123000 4411 torch/_dynamo/convert_frame.py:844] [0/0] Graph break: "
            "torch._dynamo.exc.Unsupported: Logger not supported for non-export cases\n"
            "V0611 12:01:02.200000 4411 torch/_dynamo/symbolic_convert.py:400] [__graph_breaks] Reason: inline in "
            "skipfiles: Logger.info  | info /usr/lib/python3.10/logging/__init__.py\n"
            "step 10 loss 1.23 12.5 it/s\n")


# --- MPS: one array over 4 GiB ----------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "/AppleInternal/Library/BuildRoots/0a1b/Library/Caches/com.apple.xbs/Sources/MetalPerformanceShaders/MPSCore/"
    "Types/MPSNDArray.mm:788: failed assertion `[MPSNDArray initWithDevice:descriptor:] Error: total bytes of "
    "NDArray > 2**32'",
    "MPSTemporaryNDArray.mm:120: failed assertion `[MPSTemporaryNDArray initWithDevice:descriptor:] Error: total "
    "bytes of temporary NDArray > 2**32'",
])
def test_mps_4gib_array_is_chunk_or_cpu(line):
    top, fix = first(line + "\nzsh: abort      python upscale.py\n")
    assert ident(top) == "unsupported-op:mps"
    assert "enable_attention_slicing" in fix and "tiles" in fix and 'device="cpu"' in fix, fix


# --- GradScaler on half-precision parameters --------------------------------------------------------------

def test_unscale_fp16_gradients_is_fp32_trainable_params_or_bf16():
    log = frames((f"{SITE}/accelerate/accelerator.py", "self.scaler.unscale_(opt)"),
                 (f"{SITE}/torch/amp/grad_scaler.py", 'raise ValueError("Attempting to unscale FP16 gradients.")')) + \
        "ValueError: Attempting to unscale FP16 gradients.\n"
    top, fix = first(log)
    assert "float16" in top.title and "cast_training_params" in fix and "bf16" in fix, fix


def test_bf16_gradients_under_the_fp16_scaler():
    line = "RuntimeError: \"_amp_foreach_non_finite_check_and_unscale_cuda\" not implemented for 'BFloat16'\n"
    top, fix = first(line)
    assert "bfloat16" in top.title and "float32" in fix


def test_scaler_words_in_healthy_lines_stay_silent():
    healthy("INFO: using GradScaler, init_scale=65536; will unscale FP16 gradients before clipping\n"
            "epoch 1 loss 0.5 3.2 it/s\n")


# --- vLLM's KV-cache check pasted without its exception name ---------------------------------------------

def test_vllm_max_seq_len_over_kv_cache_without_the_exception_name():
    log = ("INFO 05-02 10:00:01 gpu_executor.py:122] # GPU blocks: 900, # CPU blocks: 2048\n"
           "The model's max seq len (65536) is larger than the maximum number of tokens that can be stored in KV "
           "cache (14400). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
           "the engine.\n")
    fix = first(log)[1]
    assert "max-model-len" in fix or "max_model_len" in fix, fix


# --- entries' remedies ------------------------------------------------------------------------------------

def test_xformers_on_cpu_or_float32_names_cuda_half_or_disable():
    log = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
           "     query       : shape=(2, 77, 8, 40) (torch.float32)\n"
           "`cutlassF-pt` is not supported because:\n    device=cpu (supported: {'cuda'})\n")
    fix = first(log)[1]
    assert ".cuda()" in fix and "torch_dtype=torch.float16" in fix and "disable xformers" in fix, fix


def test_qkv_dtype_mismatch_in_comfyui_names_force_fp16():
    log = ("!!! Exception during processing !!! Expected query, key, and value to have the same dtype, but got "
           "query.dtype: struct c10::Half key.dtype: float and value.dtype: float instead.\n")
    assert "--force-fp16" in first(log)[1]
