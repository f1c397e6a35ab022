"""The structural readers of tuner l2 (issue 22, round 14 train). Lines are written here in the shape the real code
prints them (ComfyUI's execution.py validate_inputs and its "Failed to validate prompt" report; transformers'
tokenization_utils_fast.py; modprobe/insmod and nvidia-installer's kernel module messages), not copied from the corpus;
each class has siblings and a healthy neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import healthy, ident, scan

# --- ComfyUI: a loader's file is not in the list it offers ----------------------------------------------------------

_COMFY = ("got prompt\nFailed to validate prompt for output 9:\n* {node} 4:\n  - Value not in list: {line}\n"
          "Output will be ignored\ninvalid prompt: {{'type': 'prompt_outputs_failed_validation', 'message': 'Prompt "
          "outputs failed validation', 'details': '', 'extra_info': {{}}}}\n")


def _comfy(node: str, line: str) -> str:
    return _COMFY.format(node=node, line=line)


def test_empty_checkpoint_list_says_put_the_file_into_models_checkpoints():
    top, fix = first(_comfy("CheckpointLoaderSimple", "ckpt_name: 'sd_xl_base_1.0.safetensors' not in []"))
    assert ident(top) == "unsupported-op:ComfyUI models/checkpoints", ident(top)
    assert "'sd_xl_base_1.0.safetensors'" in fix and "ComfyUI/models/checkpoints" in fix, fix
    assert "extra_model_paths.yaml" in fix and "reselect" in fix


def test_subfolder_prefix_names_the_listed_entry_to_select():
    line = ("ckpt_name: 'juggernautXL_v9.safetensors' not in ['SD15\\\\dreamshaper_8.safetensors', "
            "'XL\\\\juggernautXL_v9.safetensors']")
    top, fix = first(_comfy("CheckpointLoaderSimple", line))
    assert "select 'XL\\juggernautXL_v9.safetensors'" in fix and "subfolder" in fix, fix


def test_other_name_in_a_long_list_says_place_it_or_reselect():
    top, fix = first(_comfy("LoraLoader", "lora_name: 'detail_tweaker_xl.safetensors' not in (list of length 37)"))
    assert ident(top) == "unsupported-op:ComfyUI models/loras", ident(top)
    assert "among the 37 file(s)" in top.title and "ComfyUI/models/loras" in fix and "reselect" in fix, fix


def test_unet_and_text_encoder_siblings_name_both_of_their_folders():
    log = _comfy("UNETLoader", "unet_name: 'flux1-dev-fp8.safetensors' not in []").replace(
        "Output will be ignored", "* DualCLIPLoader 11:\n  - Value not in list: clip_name2: 't5xxl_fp8_e4m3fn."
        "safetensors' not in ['clip_l.safetensors']\nOutput will be ignored")
    top, fix = first(log)
    assert "ComfyUI/models/diffusion_models" in fix and "ComfyUI/models/unet" in fix, fix
    subjects = [getattr(x, "subject", "") for x in scan(log).ordered()]
    assert "ComfyUI models/text_encoders" in subjects, subjects


def test_load_image_missing_from_input_folder():
    top, fix = first(_comfy("LoadImage", "image: 'portrait_01.png' not in ['example.png']"))
    assert "ComfyUI/input" in fix and "Load Image" in fix, fix


def test_non_file_option_says_select_a_listed_value_or_update():
    top, fix = first(_comfy("KSampler", "scheduler: 'align_your_steps' not in ['normal', 'karras', 'exponential', "
                                        "'sgm_uniform', 'simple', 'ddim_uniform']"))
    assert top.subject == "ComfyUI scheduler" and "update ComfyUI" in fix, fix


def test_a_successful_comfyui_run_stays_silent():
    healthy("got prompt\nmodel weight dtype torch.float16, manual cast: None\nmodel_type EPS\n"
            "Using pytorch attention in VAE\nRequested to load SDXLClipModel\nloaded completely 9.5 GB 1560.8 MB\n"
            "100%|##########| 20/20 [00:05<00:00,  3.71it/s]\nPrompt executed in 7.42 seconds\n")


# --- transformers: a fast tokenizer converted without its backend ---------------------------------------------------

_TOKCONV = ("Traceback (most recent call last):\n  File \"/srv/app/chat.py\", line 12, in <module>\n"
            "    tok = AutoTokenizer.from_pretrained(\"google/flan-t5-large\")\n"
            "  File \"/opt/venv/lib/python3.11/site-packages/transformers/tokenization_utils_fast.py\", line 120, in "
            "__init__\n    raise ValueError(\n"
            "ValueError: Couldn't instantiate the backend tokenizer from one of:\n"
            "(1) a `tokenizers` library serialization file,\n(2) a slow tokenizer instance to convert or\n"
            "(3) an equivalent slow tokenizer class to instantiate and convert.\n"
            "You need to have sentencepiece{tik} installed to convert a slow tokenizer to a fast one.\n")


def test_slow_to_fast_conversion_without_sentencepiece_says_install_sentencepiece_protobuf():
    top, fix = first(_TOKCONV.format(tik=""))
    assert ident(top) == "missing-module:sentencepiece", ident(top)
    assert "python -m pip install sentencepiece protobuf" in fix and "transformers[sentencepiece]" in fix, fix
    assert "tiktoken" not in fix


def test_newer_wording_with_tiktoken_names_both_backends():
    top, fix = first(_TOKCONV.format(tik=" or tiktoken"))
    assert ident(top) == "missing-module:sentencepiece" and "pip install tiktoken" in fix, fix


def test_use_fast_false_notice_stays_silent():
    healthy("You set `add_prefix_space`. The tokenizer needs to be converted from the slow tokenizers\n"
            "loading file tokenizer.model from cache at /root/.cache/huggingface/hub/models--t5/tokenizer.model\n")


# --- a library opened with dlopen -----------------------------------------------------------------------------------

def test_failed_to_dlopen_libcuda_is_the_driver_library():
    log = ("Traceback (most recent call last):\n  File \"/home/u/probe.py\", line 3, in <module>\n"
           "    err, = cuda.cuInit(0)\n  File \"cuda/_cuda/ccuda.pyx\", line 424, in cuda._cuda.ccuda.cuPythonInit\n"
           "RuntimeError: Failed to dlopen libcuda.so.1\n")
    top, fix = first(log)
    assert ident(top) == "shared-library:libcuda.so.1", ident(top)
    assert "NVIDIA driver" in fix and "/usr/lib/wsl/lib" in fix, fix


def test_failed_to_dlopen_sibling_nvml():
    top, fix = first("ERROR: failed to dlopen libnvidia-ml.so.1\n")
    assert top.kind == "shared-library" and top.subject == "libnvidia-ml.so.1", ident(top)


# --- a kernel module refused for its signature (Secure Boot) --------------------------------------------------------

def test_modprobe_key_rejected_says_sign_with_an_enrolled_mok():
    log = ("$ sudo modprobe nvidia\nmodprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n"
           "$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
           "the latest NVIDIA driver is installed and running.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:secure boot", ident(top)
    assert "mokutil --sb-state" in fix and "mokutil --import /var/lib/dkms/mok.pub" in fix and "Enroll MOK" in fix, fix
    assert "--module-signing-secret-key" in fix and "Secure Boot off" in fix


def test_sibling_module_and_insmod_enokey():
    top, fix = first("insmod: ERROR: could not insert module /lib/modules/6.5.0-35-generic/updates/dkms/v4l2loopback.ko:"
                     " Required key not available\n")
    assert ident(top) == "unsupported-op:secure boot" and "v4l2loopback" in top.title, top.title
    assert "--module-signing-secret-key" not in fix  # NVIDIA's installer options only for NVIDIA's modules


def test_installer_not_signed_and_its_eperm_load_error():
    top, fix = first("ERROR: The kernel module failed to load, because it was not signed by a key that is trusted by "
                     "the kernel. Please try installing the driver again, and sign the kernel module when prompted to "
                     "do so.\n")
    assert ident(top) == "unsupported-op:secure boot" and "sign the kernel module" in fix, fix
    top, fix = first("Kernel module load error: Operation not permitted\n")
    assert ident(top) == "unsupported-op:secure boot" and "privileged" in fix and "mokutil --sb-state" in fix, fix


def test_installer_generic_load_failure_lists_secure_boot_first():
    top, fix = first("ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel "
                     "module was built against the wrong or improperly configured kernel sources\n")
    assert ident(top) == "unsupported-op:secure boot", ident(top)
    assert fix.index("Secure Boot") < fix.index("nouveau") and "/var/log/nvidia-installer.log" in fix, fix


def test_lockdown_line_is_read():
    top, _fix = first("[   12.345678] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7\n")
    assert ident(top) == "unsupported-op:secure boot", ident(top)


def test_tainting_kernel_notice_and_installer_prompt_stay_silent():
    healthy("[    4.211] nvidia: loading out-of-tree module taints kernel.\n"
            "[    4.212] nvidia: module verification failed: signature and/or required key missing - tainting kernel\n"
            "[    4.530] nvidia-nvlink: Nvlink Core is being initialized, major device number 236\n"
            "The target kernel has CONFIG_MODULE_SIG set, which means that it supports cryptographic signatures on "
            "kernel modules.\n")


# --- bitsandbytes quantization asked for on a Mac -------------------------------------------------------------------

def _bnb(home: str, bits: str) -> str:
    return ("Traceback (most recent call last):\n"
            f"  File \"{home}/caption.py\", line 40, in load\n"
            "    model = AutoModelForCausalLM.from_pretrained(path, quantization_config=cfg)\n"
            f"  File \"{home}/venv/lib/python3.11/site-packages/transformers/quantizers/quantizer_bnb_{bits}bit.py\", "
            "line 73, in validate_environment\n    raise ImportError(\n"
            f"ImportError: Using `bitsandbytes` {bits}-bit quantization requires the latest version of bitsandbytes: "
            "`pip install -U bitsandbytes`\n")


def test_bnb_quantization_on_a_mac_says_load_it_without_bitsandbytes():
    top, fix = first(_bnb("/Users/kim/app", "4"))
    assert ident(top) == "unsupported-op:mps", ident(top)
    assert "non-quantized" in fix and "NVIDIA GPU" in fix and "pip install -U" not in fix, fix


def test_bnb_8bit_sibling_on_a_mac():
    top, fix = first(_bnb("/Users/kim/app", "8"))
    assert ident(top) == "unsupported-op:mps" and "load_in_8bit" in fix, fix


def test_bnb_on_linux_keeps_the_upgrade():
    top, fix = first(_bnb("/home/kim/app", "4"))
    assert top.subject == "bitsandbytes" and "pip install -U bitsandbytes" in fix, fix


def test_an_unquantized_load_on_a_mac_stays_silent():
    healthy("/Users/kim/app/caption.py:12: FutureWarning: `torch_dtype` is deprecated! Use `dtype` instead!\n"
            "Loading checkpoint shards: 100%|##########| 4/4 [00:05<00:00,  1.30s/it]\n"
            "Some parameters are on the meta device because they were offloaded to the cpu.\n"
            "Model loaded on mps (float16); bitsandbytes quantization: off\n")
