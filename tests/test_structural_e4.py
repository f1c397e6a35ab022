"""The structural layer's round-5 readers of tune-e4 (issue 22): Hugging Face Hub access and offline use, torch.load's
weights_only default, trust_remote_code, model types transformers does not know, tokenizer backends, fine-tuning
(nothing requires grad, PEFT target modules), AUTOMATIC1111/Forge and ComfyUI. Lines are written here in the shape
the real code prints (huggingface_hub/utils/_http.py, transformers/utils/hub.py, dynamic_module_utils.py,
configuration_auto.py, utils/import_utils.py, torch/serialization.py, peft tuners_utils.py, stable-diffusion-webui
modules/launch_utils.py and devices.py, ComfyUI nodes.py), not copied from the corpus; each class has a sibling and a
healthy line that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first as first_item
from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import fix_text, healthy, ident


SITE = "/srv/env/lib/python3.11/site-packages"


# --- Hugging Face Hub: gated, not found, token ---------------------------------------------------------------

def test_gated_403_names_the_repo_license_and_login():
    log = frames((f"{SITE}/huggingface_hub/utils/_http.py", "response.raise_for_status()")) + (
        "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: "
        "https://huggingface.co/google/gemma-2-9b/resolve/main/config.json\n"
        "huggingface_hub.errors.GatedRepoError: 403 Client Error. (Request ID: Root=1-6700aa)\n\n"
        "Cannot access gated repo for url https://huggingface.co/google/gemma-2-9b/resolve/main/config.json.\n"
        "Access to model google/gemma-2-9b is restricted and you are not in the authorized list. "
        "Visit https://huggingface.co/google/gemma-2-9b to ask for access.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:huggingface-hub"
    assert "https://huggingface.co/google/gemma-2-9b" in fix and "hf auth login" in fix and "HF_TOKEN" in fix, fix
    assert "huggingface-cli login" in fix


def test_gated_401_through_transformers_oserror():
    log = frames((f"{SITE}/transformers/utils/hub.py", "raise EnvironmentError(")) + (
        "OSError: You are trying to access a gated repo.\n"
        "Make sure to have access to it at https://huggingface.co/meta-llama/Llama-3.2-1B.\n"
        "401 Client Error. (Request ID: Root=1-6700bb)\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:huggingface-hub" and "accept the license" in fix, fix


def test_repository_not_found_is_a_spelling_or_private_repo():
    log = ("huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-67)\n\n"
           "Repository Not Found for url: https://huggingface.co/api/models/acme/privatemodel/revision/main.\n")
    top, fix = first(log)
    assert "acme/privatemodel" in top.title and "hf auth whoami" in fix, (top.title, fix)


# --- Hugging Face Hub: offline, cache, mirror --------------------------------------------------------------

def test_no_connection_downloads_once_then_offline():
    log = frames((f"{SITE}/transformers/utils/hub.py", "raise EnvironmentError(")) + (
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached "
        "files and it looks like openai/clip-vit-large-patch14 is not the path to a directory containing a file "
        "named config.json.\n")
    top, fix = first(log)
    assert "HF_HUB_OFFLINE=1" in fix and "hf download openai/clip-vit-large-patch14" in fix, fix


def test_a_mirror_endpoint_is_named():
    log = ("OSError: We couldn't connect to 'https://hf-mirror.com' to load this file, couldn't find it in the cached "
           "files and it looks like BAAI/bge-m3 is not the path to a directory containing a file named config.json.\n")
    top, fix = first(log)
    assert "hf-mirror.com" in fix and "HF_ENDPOINT" in fix, fix


def test_offline_mode_with_an_empty_cache():
    log = ("huggingface_hub.errors.LocalEntryNotFoundError: Cannot find an appropriate cached snapshot folder for the "
           "specified revision on the local disk and outgoing traffic has been disabled. To enable repo look-ups and "
           "downloads online, pass 'local_files_only=False' as input.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:huggingface-hub" and "HF_HUB_OFFLINE" in fix and "HF_HOME" in fix, fix


def test_windows_offline_export_uses_set():
    log = frames((r"C:\Users\me\venv\Lib\site-packages\transformers\utils\hub.py", "raise EnvironmentError(")) + (
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached "
        "files and it looks like bert-base-uncased is not the path to a directory containing a file named "
        "config.json.\n")
    assert "set HF_HUB_OFFLINE=1" in first(log)[1]


# --- torch.load weights_only -------------------------------------------------------------------------------

WO = ("_pickle.UnpicklingError: Weights only load failed. This file can still be loaded, to do so you have two "
      "options, do those steps only if you trust the source of the checkpoint.\n"
      "\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` "
      "to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result "
      "in arbitrary code execution. Do it only if you got the file from a trusted source.\n"
      "\t(2) Alternatively, to load with `weights_only=True` please check the recommended steps in the following "
      "error message.\n"
      "\tWeightsUnpickler error: Unsupported global: GLOBAL {glob} was not an allowed global by default. Please use "
      "`torch.serialization.add_safe_globals([{name}])` or the `torch.serialization.safe_globals([{name}])` "
      "context manager to allowlist this global if you trust this class/function.\n")


def test_weights_only_names_the_global_and_the_calling_library():
    log = ("torch 2.7.1+cu126\n" +
           frames((f"{SITE}/ultralytics/nn/tasks.py", "ckpt = torch.load(file, map_location='cpu')"),
                  (f"{SITE}/torch/serialization.py", "raise pickle.UnpicklingError(_get_wo_message(str(e))) from None"))
           + WO.format(glob="ultralytics.nn.tasks.DetectionModel", name="DetectionModel"))
    top, fix = first(log)
    assert ident(top) == "version-constraint:torch"
    assert "weights_only=False" in fix and "from ultralytics.nn.tasks import DetectionModel" in fix, fix
    assert "add_safe_globals([DetectionModel])" in fix and "pip install -U ultralytics" in fix, fix


def test_weights_only_from_the_users_own_call_names_no_library():
    log = frames(("/home/me/train.py", "state = torch.load('ckpt.pt')"),
                 (f"{SITE}/torch/serialization.py", "raise pickle.UnpicklingError(_get_wo_message(str(e))) from None")) \
        + WO.format(glob="numpy.core.multiarray.scalar", name="scalar")
    top, fix = first(log)
    assert "from numpy.core.multiarray import scalar" in fix and "pip install" not in fix, fix


def test_torch_load_futurewarning_is_healthy():
    healthy("/srv/app/load.py:12: FutureWarning: You are using `torch.load` with `weights_only=False` (the current "
            "default value), which uses the default pickle module implicitly.\n  state = torch.load(path)\n"
            "Epoch 1/3: 100%|##########| 50/50 [00:10<00:00,  4.90it/s]\n")


# --- trust_remote_code -------------------------------------------------------------------------------------

def test_custom_code_repository_needs_trust_remote_code():
    log = ("ValueError: The repository for microsoft/Phi-3-vision-128k-instruct contains custom code which must be "
           "executed to correctly load the model. You can inspect the repository content at "
           "https://hf.co/microsoft/Phi-3-vision-128k-instruct.\n"
           "Please pass the argument `trust_remote_code=True` to allow custom code to be run.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:trust_remote_code" and "trust_remote_code=True" in fix, fix
    assert "microsoft/Phi-3-vision-128k-instruct" in top.title


def test_old_wording_and_vllm_flag():
    log = frames((f"{SITE}/vllm/transformers_utils/config.py", "config = AutoConfig.from_pretrained(")) + (
        "ValueError: Loading internlm/internlm2-chat-7b requires you to execute the configuration file in that repo "
        "on your local machine. Make sure you have read the code there to avoid malicious use, then set the option "
        "`trust_remote_code=True` to remove this error.\n")
    top, fix = first(log)
    assert "--trust-remote-code" in fix and "internlm/internlm2-chat-7b" in fix, fix


# --- model types transformers does not know ----------------------------------------------------------------

def test_unknown_model_type_takes_the_first_release_from_the_table():
    log = frames((f"{SITE}/transformers/models/auto/configuration_auto.py", "raise KeyError(key)")) + \
        "KeyError: 'qwen3_moe'\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:transformers" and 'transformers>=4.51.0' in fix, fix


def test_checkpoint_sentence_for_a_type_not_in_the_table_upgrades_transformers():
    log = ("ValueError: The checkpoint you are trying to load has model type `deepseek_v3` but Transformers does not "
           "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
           "version of Transformers is out of date.\n")
    top, fix = first(log)
    assert "pip install -U transformers" in fix and "trust_remote_code=True" in fix, fix


def test_a_bare_keyerror_of_another_dict_is_not_a_model_type():
    top = first_item(frames(("/home/me/collate.py", "return batch['input_ids']")) + "KeyError: 'input_ids'\n")
    assert ident(top) != "version-constraint:transformers"


# --- tokenizer backends ------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls,lib,dist", [("T5Tokenizer", "SentencePiece", "sentencepiece"),
                                          ("GemmaConverter", "protobuf", "protobuf"),
                                          ("AutoTokenizer", "\U0001F917 Tokenizers", "tokenizers")])
def test_backend_library_is_installed_by_its_distribution(cls, lib, dist):
    log = frames((f"{SITE}/transformers/utils/import_utils.py", "raise ImportError(\"\".join(failed))")) + (
        f"ImportError: \n{cls} requires the {lib} library but it was not found in your environment. Checkout the "
        "instructions on the\ninstallation page of its repo and follow the ones\nthat match your environment. "
        "Please note that you may need to restart your runtime after installation.\n")
    top, fix = first(log)
    assert ident(top) == f"missing-module:{dist}" and f"pip install {dist}" in fix, fix


def test_tiktoken_conversion():
    log = "ValueError: `tiktoken` is required to read a `tiktoken` file. Install it with `pip install tiktoken`.\n"
    assert "pip install tiktoken" in first(log)[1]


# --- fine-tuning -------------------------------------------------------------------------------------------

GRAD = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n"


def test_no_grad_fn_under_the_trainer_is_enable_input_require_grads():
    log = frames((f"{SITE}/transformers/trainer.py", "self.accelerator.backward(loss, **kwargs)"),
                 (f"{SITE}/torch/autograd/__init__.py", "_engine_run_backward(")) + GRAD
    top, fix = first(log)
    assert ident(top) == "unsupported-op:autograd"
    assert fix.index("enable_input_require_grads") < fix.index("use_reentrant"), fix


def test_no_grad_fn_in_plain_torch_checks_no_grad_first():
    log = frames(("/home/me/loop.py", "loss.backward()")) + GRAD
    fix = first(log)[1]
    assert fix.index("no_grad") < fix.index("enable_input_require_grads"), fix


def test_peft_target_modules_not_found():
    log = frames((f"{SITE}/peft/tuners/tuners_utils.py", "raise ValueError(")) + (
        "ValueError: Target modules {'q_proj', 'k_proj', 'v_proj'} not found in the base model. Please check the "
        "target modules and try again.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:peft" and "print(model)" in fix and "all-linear" in fix, fix


# --- Stable Diffusion web UIs ------------------------------------------------------------------------------

def test_a1111_cuda_test_is_not_answered_with_skip():
    log = frames((r"D:\sd\stable-diffusion-webui-forge\modules\launch_utils.py", "raise RuntimeError(")) + (
        "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to "
        "disable this check\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:cuda" and "Do not add --skip-torch-cuda-test" in fix
    assert r"venv\Scripts\python.exe" in fix and "webui-user.bat" in fix and "driver" in fix, fix


@pytest.mark.parametrize("part,flag", [("VAE", "--no-half-vae"), ("Unet", "--upcast-sampling")])
def test_nan_check_names_the_flag_for_the_part(part, flag):
    log = (f"modules.devices.NansException: A tensor with all NaNs was produced in {part}. This could be because "
           "there's not enough precision to represent the picture. Use --disable-nan-check commandline argument to "
           "disable this check.\n")
    top, fix = first(log)
    assert f'export COMMANDLINE_ARGS="{flag}"' in fix and "webui-user.sh" in fix, fix


def test_comfyui_node_missing_module_installs_its_requirements_with_the_embedded_python():
    node = r"E:\ComfyUI_windows_portable\ComfyUI\custom_nodes\comfyui_controlnet_aux"
    log = frames((node + r"\__init__.py", "from .utils import here")) + (
        "ModuleNotFoundError: No module named 'mediapipe'\n\n"
        f"Cannot import {node} module for custom nodes: No module named 'mediapipe'\n\n"
        "Import times for custom nodes:\n"
        f"   0.3 seconds (IMPORT FAILED): {node}\n")
    top, fix = first(log)
    assert ident(top) == "missing-module:comfyui_controlnet_aux", ident(top)
    assert (r"python_embeded\python.exe -s -m pip install -r ComfyUI\custom_nodes\comfyui_controlnet_aux"
            r"\requirements.txt") in fix, fix


def test_comfyui_node_on_linux_uses_its_venv_python():
    node = "/home/me/ComfyUI/custom_nodes/ComfyUI-KJNodes"
    log = (f"Cannot import {node} module for custom nodes: No module named 'color_matcher'\n"
           f"   0.1 seconds (IMPORT FAILED): {node}\n")
    assert "python -m pip install -r custom_nodes/ComfyUI-KJNodes/requirements.txt" in first(log)[1]


def test_comfyui_startup_without_failures_is_healthy():
    healthy("Import times for custom nodes:\n"
            "   0.0 seconds: /home/me/ComfyUI/custom_nodes/websocket_image_save.py\n"
            "   0.4 seconds: /home/me/ComfyUI/custom_nodes/ComfyUI-Manager\n"
            "Starting server\n\nTo see the GUI go to: http://127.0.0.1:8188\n")


def test_hub_notices_are_healthy():
    healthy("Fetching 4 files: 100%|##########| 4/4 [00:02<00:00,  1.9it/s]\n"
            "/srv/env/lib/python3.11/site-packages/huggingface_hub/file_download.py:945: FutureWarning: "
            "`resume_download` is deprecated and will be removed in version 1.0.0.\n"
            "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.6s/it]\n")
