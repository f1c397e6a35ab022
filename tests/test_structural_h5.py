"""The structural readers of tune-h5 (issue 22, round 10 train): fix content for the meta-tensor copy, and the classes
h5 adds. Lines are written here in the shape the real code prints (aten's "Cannot copy out of meta tensor" in
aten/src/ATen/native/TensorConversions.cpp / torch/_meta_registrations.py, ...), not copied from the corpus; each class
has a sibling and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident

SITE = "/home/ml/.venv/lib/python3.10/site-packages"


# --- a module moved off 'meta' with weights never loaded: the model file, or device_map offload -----------------------
# The threads: kijai/ComfyUI-FluxTrainer#80/#127 (maintainer: "some weights were not loaded", the wrong model file),
# kohya-ss/sd-scripts#1454 (a repacked/fp8 Flux file), generative-ai-on-aws#4 (device_map offload on a small GPU).

def test_meta_copy_names_the_model_file_and_offload():
    log = frames(("/srv/train/train_network.py", "unet.to(accelerator.device, dtype=weight_dtype)"),
                 (f"{SITE}/torch/nn/modules/module.py", "return self._apply(convert)")) + \
        "NotImplementedError: Cannot copy out of meta tensor; no data!\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:device", ident(top)
    assert "wrong model file" in fix and "offload" in fix and "to_empty" in fix, fix


def test_meta_copy_sibling_with_to_empty_hint_in_a_node_report():
    top, fix = first("ERROR    !!! Exception during processing !!! Cannot copy out of meta tensor; no data! Please use "
                     "torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving module from meta to a "
                     "different device.\n")
    assert "model file" in fix, fix


def test_meta_device_notice_stays_silent():
    healthy("UserWarning: for model.layers.0.weight: copying from a non-meta parameter in the checkpoint to a meta "
            "parameter in the current model, which is a no-op. (Did you mean to pass `assign=True`?)\n"
            "Some parameters are on the meta device because they were offloaded to the cpu.\n")


# --- CUDA out of memory while training: the batch size is the first knob (the threads' answer) -----------------------

def test_cuda_oom_names_the_batch_size():
    log = frames(("/srv/train.py", "loss = model(**batch).loss")) + \
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB. GPU 0 has a total capacity of "
         "11.72 GiB of which 40.31 MiB is free. Including non-PyTorch memory, this process has 11.67 GiB memory in use.\n")
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda" and "batch size" in fix and "gradient checkpointing" in fix, fix


# --- trust_remote_code: a local Windows folder, the newer "custom code" wording, text-generation-webui's flag ---------
# transformers dynamic_module_utils.py resolve_trust_remote_code; oobabooga/text-generation-webui modules/shared.py.

TG = r"C:\ai\text-generation-webui"


def test_remote_code_from_a_local_windows_folder_in_textgen():
    log = frames((rf"{TG}\modules\ui_model_menu.py", "shared.model, shared.tokenizer = load_model(name, loader)"),
                 (rf"{TG}\modules\models.py", "output = load_func_map[loader](model_name)")) + \
        (r"ValueError: Loading models\Qwen_Qwen-7B-Chat requires you to execute the configuration file in that repo on "
         "your local machine. Make sure you have read the code there to avoid malicious use, then set the option "
         "trust_remote_code=True to remove this error.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:trust_remote_code", ident(top)
    assert "--trust-remote-code" in fix and "CMD_FLAGS.txt" in fix and "trust_remote_code=True" in fix, fix


def test_remote_code_newer_wording_sibling():
    log = frames((f"{SITE}/transformers/models/auto/tokenization_auto.py", "trust_remote_code = resolve_trust_remote_code("),
                 (f"{SITE}/transformers/dynamic_module_utils.py", "raise ValueError(")) + \
        ("ValueError: Loading this model requires you to execute custom code contained in the model repository on your "
         "local machine. Please set the option `trust_remote_code=True` to permit loading of this model.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:trust_remote_code" and "trust_remote_code=True" in fix, fix
    assert "text-generation-webui" not in fix, fix


def test_remote_code_prompt_notice_stays_silent():
    healthy("The repository for THUDM/chatglm3-6b contains custom code which must be executed to correctly load the "
            "model. You can inspect the repository content at https://hf.co/THUDM/chatglm3-6b.\n"
            "You can avoid this prompt in future by passing the argument `trust_remote_code=True`.\n\n"
            "Do you wish to run the custom code? [y/N] y\nLoading checkpoint shards: 100%|##########| 7/7\n")


# --- a paste that stops at the raising frame: torch without CUDA, AUTOMATIC1111's older CUDA test ---------------------

def _lazy(raise_line: str, site: str = r"D:\conda\envs\tcn\lib\site-packages") -> str:
    return frames((r"D:\work\tcn\train.py", "model.cuda()"),
                  (rf"{site}\torch\nn\modules\module.py", "return self._apply(lambda t: t.cuda(device))"),
                  (rf"{site}\torch\cuda\__init__.py", raise_line))


def test_truncated_not_compiled_with_cuda_gets_the_cuda_build():
    top, fix = first(_lazy('raise AssertionError("Torch not compiled with C'))
    assert ident(top) == "unsupported-op:cuda", ident(top)
    assert "download.pytorch.org/whl/cu" in fix and "CUDA build" in fix, fix


def test_full_raise_line_sibling_without_message():
    top, fix = first(_lazy('raise AssertionError("Torch not compiled with CUDA enabled")'))
    assert "CUDA build" in fix, fix


def test_a1111_cuda_test_frame_without_its_message():
    root = r"C:\sd\stable-diffusion-webui"
    log = frames((rf"{root}\launch.py", "prepare_environment()"),
                 (rf"{root}\launch.py", "run_python(\"import torch; assert torch.cuda.is_available(), 'Torch is not able "
                                        "to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to disable "
                                        "this check'\")"),
                 (rf"{root}\launch.py", "raise RuntimeError(message)"))
    top, fix = first(log)
    assert ident(top) == "unsupported-op:cuda" and "delete the venv" in fix, fix


def test_cuda_checks_that_passed_stay_silent():
    healthy("Python 3.10.6 (tags/v3.10.6:9c7b4bd, Aug  1 2022, 21:53:49) [MSC v.1932 64 bit (AMD64)]\n"
            "Commit hash: 4afaaf8a020c1df457bcf7250cb1c7f609699fa7\nInstalling torch and torchvision\n"
            "torch 2.1.2+cu121 CUDA available: True\nLaunching Web UI with arguments: --xformers\n"
            "Running on local URL:  http://127.0.0.1:7860\n")


# --- unsloth against another release of what it patches (unsloth.ai/docs/get-started/install/updating) ----------------

UNS = "/usr/local/lib/python3.11/dist-packages"


def test_unsloth_patched_trainer_function_with_another_signature():
    log = frames((f"{UNS}/transformers/trainer.py", "return inner_training_loop("),
                 (f"{UNS}/unsloth/models/llama.py", "batch_samples, num_items = self.get_batch_samples(it, n, device)")) + \
        "TypeError: _unsloth_get_batch_samples() takes 3 positional arguments but 4 were given\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:unsloth", ident(top)
    assert "pip install --upgrade unsloth unsloth_zoo" in fix and "pin transformers" in fix, fix


def test_unsloth_patched_function_keyword_sibling():
    log = frames((f"{UNS}/trl/trainer/sft_trainer.py", "loss = self.compute_loss(model, inputs, num_items_in_batch=n)")) + \
        "TypeError: _unsloth_pre_compute_loss() got an unexpected keyword argument 'num_items_in_batch'\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:unsloth" and "unsloth_zoo" in fix, fix


def test_unsloth_zoo_patching_step_failure_names_the_previous_release():
    log = frames(("/content/train.py", "from unsloth import FastLanguageModel"),
                 (f"{UNS}/unsloth_zoo/saving_utils.py", "raise RuntimeError(\"Unsloth: Failed to find `for shard_file, "
                                                        "tensors in filename_to_tensors`\")")) + \
        "RuntimeError: Unsloth: Failed to find `for shard_file, tensors in filename_to_tensors`\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:unsloth", ident(top)
    assert "unsloth==<previous version>" in fix and "--upgrade unsloth unsloth_zoo" in fix, fix


def test_unsloth_data_error_and_banner_stay_silent():
    healthy("==((====))==  Unsloth 2025.3.19: Fast Llama patching. Transformers: 4.50.0.\n"
            "   \\\\   /|    Tesla T4. Num GPUs = 1. Max memory: 14.741 GB. Platform: Linux.\n"
            "Unsloth: Will patch your computer to enable 2x faster free finetuning.\n"
            "Unsloth: Failed to patch Gemma3ForConditionalGeneration forward function.\n"
            "Unsloth 2025.3.19 patched 28 layers with 28 QKV layers, 28 O layers and 28 MLP layers.\n")


# --- "requires X>=Y" stated by a library: upgrade, then restart (the module already imported is not reloaded) ---------
# transformers#24147 / training_args.py: "Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`".

def test_stated_requirement_says_restart_after_the_upgrade():
    log = frames(("/content/train.py", "args = TrainingArguments(output_dir='out')"),
                 (f"{SITE}/transformers/training_args.py", "raise ImportError(")) + \
        ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.21.0`: Please run "
         "`pip install transformers[torch]` or `pip install 'accelerate>=0.21.0'`\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:accelerate" and "restart" in fix and "accelerate>=0.21.0" in fix, fix


# --- kohya-ss/sd-scripts' optional packages (library/train_util.py: ImportError("No X / Xがインストールされていないようです"))

KS = r"D:\ai\kohya_ss"


def _kohya(pkg: str, caller: str = "optimizer_name, optimizer_args, optimizer = train_util.get_optimizer(args, params)"):
    return frames((rf"{KS}\sd-scripts\train_network.py", caller),
                  (rf"{KS}\sd-scripts\library\train_util.py", f'raise ImportError("No {pkg} / {pkg}がインストールされていないようです")')) + \
        f"ImportError: No {pkg} / {pkg}がインストールされていないようです\n"


def test_kohya_without_bitsandbytes_installs_it_or_picks_adamw():
    top, fix = first(_kohya("bitsandbytes"))
    assert ident(top) == "missing-module:bitsandbytes", ident(top)
    assert "pip install bitsandbytes" in fix and "--optimizer_type=AdamW" in fix and "0.43.0" in fix, fix


def test_kohya_without_xformers_sibling_offers_sdpa():
    top, fix = first(_kohya("xformers", caller="train_util.replace_unet_modules(unet, args.mem_eff_attn, args.xformers)"))
    assert ident(top) == "missing-module:xformers" and "--sdpa" in fix and "pip install xformers" in fix, fix


def test_kohya_unknown_optional_package_is_not_guessed():
    top, _fix = first(_kohya("somethingelse"))
    assert not ident(top).startswith("missing-module:somethingelse"), ident(top)


def test_kohya_startup_notices_stay_silent():
    healthy("2024-05-01 10:00:00 INFO     use 8-bit AdamW optimizer | {}                              train_util.py:3889\n"
            "2024-05-01 10:00:01 INFO     Using xformers for attention                                 train_util.py:2012\n"
            "steps:   0%|          | 0/1600 [00:00<?, ?it/s]\n")


# --- pip's post-install report: a companion of torch preinstalled for another torch (pip install.py
# _warn_about_conflicts); the companions of the installed torch from the wheel/history tables ------------------------

PIP_HEAD = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
            "This behaviour is the source of the following dependency conflicts.\n")


def test_preinstalled_torchvision_for_another_torch_names_the_matching_pair():
    log = PIP_HEAD + ("torchvision 0.15.2+cu118 requires torch==2.0.1, but you have torch 1.13.1 which is incompatible.\n"
                      "torchaudio 2.0.2+cu118 requires torch==2.0.1, but you have torch 1.13.1 which is incompatible.\n"
                      "Successfully installed torch-1.13.1\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:torch", ident(top)
    assert "torchvision==0.14.1" in fix and "torchaudio==0.13.1" in fix and "ignored" in fix, fix


def test_torchtext_sibling_alone():
    top, fix = first(PIP_HEAD + "torchtext 0.15.2 requires torch==2.0.1, but you have torch 1.13.1 which is incompatible.\n")
    assert ident(top) == "version-constraint:torch" and "torchvision==0.14.1" in fix, fix


def test_pip_success_stays_silent():
    healthy("Collecting torch==2.0.1\n  Using cached torch-2.0.1-cp310-cp310-manylinux1_x86_64.whl (619.9 MB)\n"
            "Requirement already satisfied: torchvision==0.15.2 in /usr/local/lib/python3.10/dist-packages (0.15.2+cu118)\n"
            "Successfully installed torch-2.0.1\n")


# --- sgl-kernel's loader: common_ops found but not loadable (sgl_kernel/load_utils.py) ---------------------------------

def test_sgl_kernel_common_ops_not_loadable_is_the_torch_pair():
    site = "/srv/.venv/lib/python3.11/site-packages"
    log = frames((f"{site}/sglang/srt/layers/activation.py", "from sgl_kernel import gelu_and_mul, silu_and_mul"),
                 (f"{site}/sgl_kernel/__init__.py", "common_ops = _load_architecture_specific_ops()"),
                 (f"{site}/sgl_kernel/load_utils.py", "raise ImportError(error_msg)")) + \
        ("ImportError: \n[sgl_kernel] CRITICAL: Could not load any common_ops library!\n\nAttempted locations:\n"
         f"1. Architecture-specific pattern: {site}/sgl_kernel/sm90/common_ops.* - found files: "
         f"['{site}/sgl_kernel/sm90/common_ops.abi3.so']\n")
    top, fix = first(log)
    assert ident(top) == "undefined-symbol:torch" and "sgl-kernel" in fix and "torch" in fix, fix


def test_sgl_kernel_loaded_notice_stays_silent():
    healthy("[sgl_kernel] Loaded architecture-specific common_ops from sm90/common_ops.abi3.so\n"
            "[2025-06-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', tp_size=1)\n"
            "[2025-06-01 10:00:30] The server is fired up and ready to roll!\n")
