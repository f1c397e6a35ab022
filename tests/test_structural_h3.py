"""The structural readers of tune-h3 (issue 22, round 9 train): a model config newer than the transformers that reads it,
parts of two diffusion architectures in one graph, a GPU out of memory in ComfyUI, a library that sees no GPU, and the
caller of a refused keyword read past decorator frames. Lines are written here in the shape the real code prints
(transformers <= 4.42 configuration_llama.py _rope_scaling_validation, ATen's F.linear shape check, ComfyUI's
execution.py and error report, unsloth/__init__.py and unsloth_zoo/device_type.py, transformers utils/deprecation.py),
not copied from the corpus; each class has a sibling and a healthy neighbour that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident

SITE = "/home/ml/.venv/lib/python3.10/site-packages"
WIN = r"C:\AI\ComfyUI_windows_portable"


def _cfg(message: str, model: str = "llama", site: str = SITE) -> str:
    return frames(("/home/ml/run.py", "model = AutoModelForCausalLM.from_pretrained(path)"),
                  (f"{site}/transformers/configuration_utils.py", "config = cls(**config_dict)"),
                  (f"{site}/transformers/models/{model}/configuration_{model}.py", "self._rope_scaling_validation()")) \
        + message + "\n"


# --- a model config newer than transformers -------------------------------------------------------------------------

def test_llama31_rope_type_names_the_release_that_reads_it():
    top, fix = first(_cfg("ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got "
                          "{'factor': 32.0, 'high_freq_factor': 4.0, 'low_freq_factor': 1.0, "
                          "'original_max_position_embeddings': 8192, 'rope_type': 'llama3'}"))
    assert ident(top) == "version-constraint:transformers"
    assert 'transformers>=4.43.2' in fix and "two fields" in fix, fix


def test_yarn_type_field_sibling_in_llama_config():
    top, fix = first(_cfg("ValueError: `rope_scaling`'s type field must be one of ['linear', 'dynamic'], got yarn"))
    assert ident(top) == "version-constraint:transformers" and "transformers>=4.43.0" in fix, fix


def test_unknown_rope_type_in_another_model_names_no_version():
    top, fix = first(_cfg("ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got "
                          "{'factor': 4.0, 'rope_type': 'dynamic_ntk_v2', 'beta': 2}", model="qwen2"))
    assert ident(top) == "version-constraint:transformers" and "pip install --upgrade transformers" in fix, fix
    assert ">=" not in fix, fix


def test_remote_code_config_is_the_repository_not_transformers():
    mods = "/home/ml/.cache/huggingface/modules/transformers_modules/org/model"
    log = frames(("/home/ml/run.py", "AutoConfig.from_pretrained(path, trust_remote_code=True)"),
                 (f"{mods}/configuration_custom.py", "self._rope_scaling_validation()")) + \
        ("ValueError: `rope_scaling` must be a dictionary with with two fields, `type` and `factor`, got "
         "{'factor': 8.0, 'rope_type': 'llama3'}\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:model code" and "current revision" in fix, fix


def test_comfy_portable_gets_the_embedded_python():
    log = frames((rf"{WIN}\ComfyUI\execution.py", "output_data = get_output_data(obj)"),
                 (rf"{WIN}\python_embeded\Lib\site-packages\transformers\models\llama\configuration_llama.py",
                  "raise ValueError(")) + \
        ("ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got "
         "{'factor': 8.0, 'rope_type': 'llama3'}\n")
    top, _fix = first(log)
    assert any(c.startswith(r"python_embeded\python.exe -s -m pip install") for c in top.fix.commands), top.fix.commands


def test_rope_scaling_info_line_is_silent():
    healthy("INFO: model config rope_scaling={'factor': 8.0, 'rope_type': 'llama3'} (transformers 4.44.0)\n"
            "Loading checkpoint shards: 100%|##########| 4/4 [00:05<00:00,  1.3s/it]\n")


# --- two diffusion architectures in one graph -----------------------------------------------------------------------

def test_sdxl_conditioning_into_sd15_controlnet():
    log = ("got prompt\nError occurred when executing ControlNetApplyAdvanced:\n\n"
           "mat1 and mat2 shapes cannot be multiplied (231x2048 and 768x640)\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:model family"
    assert "ControlNet for SDXL" in fix and "SD1.5 checkpoint" in fix, fix


def test_sd15_conditioning_into_sdxl_layer_sibling():
    log = frames((f"{SITE}/diffusers/models/attention_processor.py", "key = attn.to_k(encoder_hidden_states)"),
                 (f"{SITE}/torch/nn/modules/linear.py", "return F.linear(input, self.weight, self.bias)")) + \
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (154x768 and 2048x1280)\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:model family" and "ControlNet for SD1.5" in fix, fix


def test_sdxl_clip_into_flux_names_the_clip_loader_type():
    log = ("Requested to load Flux\n!!! Exception during processing !!! mat1 and mat2 shapes cannot be multiplied "
           "(1x1280 and 768x3072)\nTraceback (most recent call last):\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:model family" and "DualCLIPLoader's type to flux" in fix, fix


def test_t5_context_sibling_for_flux():
    top, fix = first("RuntimeError: mat1 and mat2 shapes cannot be multiplied (512x2048 and 4096x3072)\n")
    assert ident(top) == "version-constraint:model family" and "t5xxl" in fix, fix


def test_shape_error_of_other_widths_is_not_a_family_mix():
    log = frames(("/home/ml/model.py", "return self.fc(x)")) + \
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 768x10)\n"
    top, _fix = first(log)
    assert ident(top) != "version-constraint:model family"


# --- out of memory in ComfyUI ---------------------------------------------------------------------------------------

def test_comfy_error_report_oom_gives_comfy_flags():
    log = ("# ComfyUI Error Report\n## Error Details\n- **Node Type:** VAEDecode\n"
           "- **Exception Type:** torch.OutOfMemoryError\n- **Exception Message:** Allocation on device \n")
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda" and "--lowvram" in fix and "GGUF" in fix, fix


def test_comfy_console_oom_sibling():
    log = frames((rf"{WIN}\ComfyUI\execution.py", "output_data = get_output_data(obj)"),
                 (rf"{WIN}\ComfyUI\comfy\model_management.py", "return tensor.to(device, copy=copy)")) + \
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 50.00 MiB. GPU 0 has a total capacity of 8.00 GiB\n"
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda" and "--reserve-vram" in fix, fix


def test_oom_outside_comfy_keeps_the_generic_reading():
    log = frames(("/home/ml/train.py", "loss = model(x)")) + \
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda" and "--lowvram" not in fix, fix


# --- a library that sees no GPU -------------------------------------------------------------------------------------

def test_unsloth_no_gpu_names_the_cuda_build_of_torch():
    log = frames(("C:\\work\\train.py", "from unsloth import FastLanguageModel"),
                 ("C:\\envs\\u\\lib\\site-packages\\unsloth\\__init__.py", "raise NotImplementedError(")) + \
        "NotImplementedError: Unsloth: No NVIDIA GPU found? Unsloth currently only supports GPUs!\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:torch" and "CUDA build of torch" in fix and "--index-url" in fix, fix
    assert not any("--index-url" in c for c in top.fix.commands), top.fix.commands  # no CUDA tag in the log: none invented


def test_unsloth_zoo_sibling_with_a_tag_gives_the_command():
    log = "pytorch version: 2.6.0+cu124\n" + frames((f"{SITE}/unsloth_zoo/device_type.py", "raise NotImplementedError(")) + \
        "NotImplementedError: Unsloth cannot find any torch accelerator? You need a GPU.\n"
    top, _fix = first(log)
    assert any(c.endswith("--index-url https://download.pytorch.org/whl/cu124") for c in top.fix.commands), top.fix.commands


def test_unsloth_banner_is_silent():
    healthy("==((====))==  Unsloth 2025.3.9: Fast Llama patching. Transformers: 4.49.0.\n"
            "   \\\\   /|    GPU: NVIDIA GeForce RTX 4090. Max memory: 23.988 GB. Platform: Linux.\n")


# --- a refused keyword: the caller past decorator frames (g1.caller via g1.call_site) ---------------------------------

def test_deprecation_decorator_frame_is_not_the_caller():
    log = frames(("/home/ml/finetune.py", "trainer = SFTTrainer(model=model, packing=True)"),
                 (f"{SITE}/transformers/utils/deprecation.py", "return func(*args, **kwargs)")) + \
        "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'packing'\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:trl" and "SFTConfig" in fix and "transformers passes" not in fix, fix


def test_library_caller_of_a_renamed_kwarg_also_names_the_new_name():
    log = frames(("/home/ml/finetune.py", "trainer = SFTTrainer(model=model, tokenizer=tok)"),
                 (f"{SITE}/huggingface_hub/utils/_deprecation.py", "return f(*args, **kwargs)"),
                 (f"{SITE}/trl/trainer/sft_trainer.py", "super().__init__(")) + \
        "TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'\n"
    top, fix = first(log)
    assert "pip install --upgrade trl" in fix and "processing_class=" in fix, fix


# --- out of memory in the programs that have their own memory options (h3_tables.toml [[oom_stack]]) ----------------

_OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB\n"
_SP = "/home/u/.venv/lib/python3.11/site-packages"


@pytest.mark.parametrize("frame, want", [
    (f"{_SP}/vllm/worker/model_runner.py", "--gpu-memory-utilization"),
    (f"{_SP}/vllm/v1/worker/gpu_model_runner.py", "--tensor-parallel-size"),
    ("/home/u/kohya_ss/sd-scripts/sdxl_train.py", "--fused_backward_pass"),
    ("/home/u/lora/train_network.py", "--cache_latents"),
    ("C:\\sd\\stable-diffusion-webui\\modules\\processing.py", "--medvram"),
    ("/home/u/diffusers/examples/dreambooth/train_dreambooth_lora_sdxl.py", "--use_8bit_adam"),
    (f"{_SP}/deepspeed/runtime/engine.py", "offload_optimizer"),
    (f"{_SP}/transformers/trainer.py", "gradient_checkpointing=True"),
    (f"{_SP}/trl/trainer/sft_trainer.py", "adamw_bnb_8bit"),
    (f"{_SP}/diffusers/pipelines/flux/pipeline_flux.py", "enable_model_cpu_offload"),
])
def test_oom_answers_with_the_programs_own_memory_options(frame, want):
    top, fix = first(frames(("/home/u/run.py", "main()"), (frame, "out = self.model(x)")) + _OOM)
    assert ident(top) == "out-of-memory:cuda" and want in fix, fix


def test_oom_inside_comfy_running_diffusers_is_comfys():
    log = frames(("/ComfyUI/execution.py", "run()"), (f"{_SP}/diffusers/pipelines/flux/pipeline_flux.py", "x")) + _OOM
    top, fix = first(log)
    assert "--lowvram" in fix and "enable_model_cpu_offload" not in fix, fix


def test_oom_in_a_plain_script_keeps_the_generic_options():
    top, fix = first(frames(("/home/u/train.py", "loss = model(x)")) + _OOM)
    assert ident(top) == "out-of-memory:cuda"
    assert not any(w in fix for w in ("--gpu-memory-utilization", "--medvram", "--cache_latents", "offload_optimizer")), fix
