"""The structural readers of tune-h1 (issue 22, cycle 2 of rounds 8-9): SDPA on cuDNN with no plan, tools that probe
torch.classes (Streamlit's file watcher) and unregistered TorchScript classes, tokenizers with no pad token, tokenizers the
Hub could not deliver, PEFT target modules. Lines are written here in the shape the real code prints (torch
aten/src/ATen/cudnn/Exceptions.h + cudnn_frontend, streamlit/watcher/local_sources_watcher.py, torch/_classes.py,
transformers tokenization_utils_base.py and modeling_gpt2.py, peft/tuners/tuners_utils.py), not copied from the corpus;
each class has a sibling and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident

SITE = "/home/ml/.venv/lib/python3.12/site-packages"


def _sdpa(message: str) -> str:
    return frames(("/home/ml/gen.py", "image = pipe(prompt).images[0]"),
                  (f"{SITE}/diffusers/models/attention_processor.py",
                   "hidden_states = F.scaled_dot_product_attention(")) + message + "\n"


# --- SDPA on cuDNN -------------------------------------------------------------------------------------------------

def test_cudnn_sdpa_no_plan_names_enable_cudnn_sdp_and_the_fixed_release():
    log = "PyTorch version: 2.5.0+cu121\n" + _sdpa("RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans "
                                        "support the graph.")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:cudnn-sdpa"
    assert "enable_cudnn_sdp(False)" in fix and "2.5.1" in fix, fix
    assert '"torchvision==0.20.1"' in fix and "whl/cu121" in fix, fix


def test_cudnn_sdpa_sibling_no_valid_plans_built_on_a_nightly():
    log = "PyTorch version: 2.6.0.dev20240914+cu124\n" + _sdpa(
        "RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No valid execution plans built.")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:cudnn-sdpa"
    assert "enable_cudnn_sdp(False)" in fix and "stable release" in fix, fix


def test_cudnn_sdpa_sibling_engine_configs_without_version():
    top, fix = first(_sdpa("RuntimeError: cuDNN Frontend error: No valid engine configs for "
                           "Matmul_MUL_ADD_Reduction_SUB_EXP_Reduction_LOG_ADD_DIV_Matmul_"))
    assert ident(top) == "unsupported-op:cudnn-sdpa" and "sdpa_kernel" in fix, fix


def test_cudnn_sdpa_warning_neighbour_stays_silent():
    # torch 2.5 aten/src/ATen/native/cudnn/MHA.cpp: a cuDNN SDPA warning of a run that goes on
    healthy("/home/ml/.venv/lib/python3.12/site-packages/torch/autograd/graph.py:825: UserWarning: cuDNN SDPA backward "
            "got grad_output.strides() != output.strides(), attempting to materialize a grad_output with matching "
            "strides... (Triggered internally at ../aten/src/ATen/native/cudnn/MHA.cpp:674.)\n"
            "  return Variable._execution_engine.run_backward(\nstep 10 loss 1.2\n")


# --- torch.classes ---------------------------------------------------------------------------------------------------

_WATCH = f"{SITE}/streamlit/watcher/local_sources_watcher.py"


def test_streamlit_watcher_line_alone_names_file_watcher_type():
    log = ("  You can now view your Streamlit app in your browser.\n\n"
           "2025-03-02 10:11:12.345 Examining the path of torch.classes raised: Tried to instantiate class "
           "'__path__._path', but it does not exist! Ensure that it is registered via torch::class_\n")
    top, fix = first(log)
    assert ident(top) == "launcher:streamlit"
    assert "--server.fileWatcherType none" in fix and "torch.classes.__path__ = []" in fix, fix


def test_streamlit_watcher_traceback_sibling_on_windows():
    log = "2025-03-02 10:11:12.345 Examining the path of torch.classes raised:\n" + frames(
        (_WATCH.replace("/home/ml/.venv/lib", "C:\\app\\venv\\Lib"), "potential_paths = extract_paths(module)"),
        ("C:\\app\\venv\\Lib\\site-packages\\torch\\_classes.py", "proxy = torch._C._get_custom_class_python_wrapper(")) + (
        "RuntimeError: Tried to instantiate class '__path__._path', but it does not exist! Ensure that it is registered "
        "via torch::class_\n")
    top, fix = first(log)
    assert ident(top) == "launcher:streamlit" and '$env:STREAMLIT_SERVER_FILE_WATCHER_TYPE="none"' in fix, fix


def test_unregistered_custom_class_names_the_extension():
    log = frames(("/home/ml/infer.py", "model = torch.jit.load('trt.ts')")) + (
        "RuntimeError: Tried to instantiate class 'tensorrt.Engine', but it does not exist! Ensure that it is "
        "registered via torch::class_\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:torch.classes" and "import torch_tensorrt" in fix, fix


# --- tokenizers: pad token --------------------------------------------------------------------------------------------

def test_pad_token_missing_names_eos_and_add_special_tokens():
    log = frames(("/home/ml/train.py", "batch = tokenizer(texts, padding=True, return_tensors='pt')"),
                 (f"{SITE}/transformers/tokenization_utils_base.py", "raise ValueError(")) + (
        "ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as "
        "`pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via "
        "`tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:pad-token"
    assert "tokenizer.pad_token = tokenizer.eos_token" in fix and "resize_token_embeddings" in fix, fix


def test_pad_token_sibling_classification_head():
    log = frames((f"{SITE}/transformers/models/llama/modeling_llama.py", "raise ValueError(")) + (
        "ValueError: Cannot handle batch sizes > 1 if no padding token is defined.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:pad-token" and "model.config.pad_token_id = tokenizer.pad_token_id" in fix, fix


def test_pad_token_generation_notice_stays_silent():
    healthy("Setting `pad_token_id` to `eos_token_id`:50256 for open-end generation.\n"
            "The attention mask and the pad token id were not set. As a consequence, you may observe unexpected "
            "behavior. Please pass your input's `attention_mask` to obtain reliable results.\n")


# --- tokenizers the Hub could not deliver --------------------------------------------------------------------------------

def test_tokenizer_of_hub_id_names_network_mirror_and_offline():
    log = frames((f"{SITE}/transformers/tokenization_utils_base.py", "raise EnvironmentError(")) + (
        "OSError: Can't load tokenizer for 'google/t5-v1_1-xxl'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, "
        "make sure 'google/t5-v1_1-xxl' is the correct path to a directory containing all relevant files for a "
        "T5TokenizerFast tokenizer.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:huggingface-hub"
    assert "HF_ENDPOINT" in fix and "HF_HUB_OFFLINE=1" in fix and "hf download google/t5-v1_1-xxl" in fix, fix


def test_tokenizer_of_local_folder_is_left_to_the_folder_reading():
    log = ("OSError: Can't load tokenizer for '/data/models/my-llama'. If you were trying to load it from "
           "'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, "
           "make sure '/data/models/my-llama' is the correct path to a directory containing all relevant files for a "
           "LlamaTokenizerFast tokenizer.\n")
    top, _fix = first(log)
    assert ident(top) != "unsupported-op:huggingface-hub"


# --- PEFT target modules ----------------------------------------------------------------------------------------------

def test_lora_targets_list_fused_names_and_lora_target_flag():
    log = frames((f"{SITE}/peft/tuners/tuners_utils.py", "raise ValueError(")) + (
        "ValueError: Target modules {'q_proj', 'v_proj'} not found in the base model. Please check the target modules "
        "and try again.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:peft"
    assert "W_pack" in fix and "query_key_value" in fix and "wqkv" in fix and "--lora_target" in fix, fix


def test_lora_targets_sibling_names_the_family_from_the_path():
    log = frames(("/home/ml/LLaMA-Factory/src/train.py", "run_exp()"),
                 ("/models/Baichuan2-13B-Chat/modeling_baichuan.py", "self.W_pack = nn.Linear("),
                 (f"{SITE}/peft/tuners/tuners_utils.py", "raise ValueError(")) + (
        "ValueError: Target module ['q_proj', 'k_proj'] not found in the base model. Please check the target modules "
        "and try again.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:peft" and "This is a Baichuan model: target W_pack" in fix, fix


# --- CUDA out of memory: the fix names the training and the inference remedies ----------------------------------------

def test_cuda_oom_fix_names_offload_and_training_savers():
    # (a frame in a program with its own memory options gets those instead: tests/test_structural_h3.py)
    log = frames(("/home/u/generate.py", "noise_pred = model(latents)")) + (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 72.00 MiB. GPU 0 has a total capacity of 15.69 GiB "
        "of which 3.12 MiB is free. Of the allocated memory 15.21 GiB is allocated by PyTorch, and 95.10 MiB is reserved "
        "by PyTorch but unallocated.\n")
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda"
    assert "enable_model_cpu_offload()" in fix and "gradient_checkpointing" in fix and "8-bit Adam" in fix, fix
