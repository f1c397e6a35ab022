"""The structural readers of tune-g2 (issue 22, round 8): loading checkpoints and models (torch's load_state_dict,
transformers' loading errors), quantized models, and non-CUDA backends. Lines are written here in the shape the real
code prints (torch/nn/modules/module.py load_state_dict, transformers tokenization_auto.py / tokenization_utils_base.py
/ utils/hub.py / modeling_utils.py / auto_factory.py / quantizers, optimum gptq/quantizer.py, vllm config.py,
intel_extension_for_pytorch/__init__.py, torch_xla runtime), not copied from the corpus; each class has a sibling and a
healthy line that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident


SITE = "/opt/venv/lib/python3.11/site-packages"
TORCH_LOAD = frames(("/home/me/eval.py", "net.load_state_dict(torch.load(args.ckpt, map_location='cpu'))"),
                    (f"{SITE}/torch/nn/modules/module.py", "raise RuntimeError('Error(s) in loading state_dict for {}:"))
HF_LOAD = frames(("/home/me/train.py", "model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=3)"),
                 (f"{SITE}/transformers/modeling_utils.py", "raise RuntimeError(f\"Error(s) in loading state_dict"))


def _keys(prefix: str, names) -> str:
    return ", ".join(f'"{prefix}{n}"' for n in names)


NAMES = ("features.0.weight", "features.0.bias", "classifier.1.weight")


# --- state_dict prefixes ----------------------------------------------------------------------------------------

def test_ddp_prefix_on_unexpected_keys_strips_module():
    log = TORCH_LOAD + ("RuntimeError: Error(s) in loading state_dict for VGG:\n"
                        f"\tMissing key(s) in state_dict: {_keys('', NAMES)}. \n"
                        f"\tUnexpected key(s) in state_dict: {_keys('module.', NAMES)}. \n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:state_dict"
    assert 'k.removeprefix("module.")' in fix and "load_state_dict" in fix, fix


def test_compile_prefix_sibling_strips_orig_mod():
    log = TORCH_LOAD + ("RuntimeError: Error(s) in loading state_dict for Transformer:\n"
                        f"\tMissing key(s) in state_dict: {_keys('', NAMES)}. \n"
                        f"\tUnexpected key(s) in state_dict: {_keys('_orig_mod.', NAMES)}. \n")
    _, fix = first(log)
    assert 'removeprefix("_orig_mod.")' in fix, fix


def test_wrapped_model_missing_prefix_loads_into_inner_module():
    log = TORCH_LOAD + ("RuntimeError: Error(s) in loading state_dict for DistributedDataParallel:\n"
                        f"\tMissing key(s) in state_dict: {_keys('module.', NAMES)}. \n"
                        f"\tUnexpected key(s) in state_dict: {_keys('', NAMES)}. \n")
    _, fix = first(log)
    assert "model.module.load_state_dict(state_dict)" in fix, fix


def test_peft_prefix_names_peftmodel():
    log = TORCH_LOAD + ("RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:\n"
                        "\tUnexpected key(s) in state_dict: \"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight\", "
                        "\"base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight\". \n")
    _, fix = first(log)
    assert "PeftModel.from_pretrained" in fix and "merge_and_unload" in fix, fix


def test_other_keys_get_the_generic_reading():
    log = TORCH_LOAD + ("RuntimeError: Error(s) in loading state_dict for Net:\n"
                        "\tMissing key(s) in state_dict: \"fc3.weight\", \"fc3.bias\". \n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:state_dict" and "strict=False" in fix, fix


# --- size mismatch -----------------------------------------------------------------------------------------------

def _size(key: str, a: str, b: str) -> str:
    return (f"\tsize mismatch for {key}: copying a param with shape torch.Size([{a}]) from checkpoint, "
            f"the shape in current model is torch.Size([{b}]).\n")


def test_inpainting_unet_conv_in_9_channels():
    log = TORCH_LOAD + "RuntimeError: Error(s) in loading state_dict for UNet2DConditionModel:\n" + \
        _size("conv_in.weight", "320, 9, 3, 3", "320, 4, 3, 3")
    _, fix = first(log)
    assert "StableDiffusionInpaintPipeline" in fix and "in_channels=9" in fix, fix


def test_pix2pix_unet_sibling():
    log = TORCH_LOAD + "RuntimeError: Error(s) in loading state_dict for UNet2DConditionModel:\n" + \
        _size("conv_in.weight", "320, 8, 3, 3", "320, 4, 3, 3")
    _, fix = first(log)
    assert "StableDiffusionInstructPix2PixPipeline" in fix, fix


def test_resized_vocabulary_names_resize_token_embeddings_with_the_checkpoint_rows():
    log = TORCH_LOAD + "RuntimeError: Error(s) in loading state_dict for MistralForCausalLM:\n" + \
        _size("model.embed_tokens.weight", "32002, 4096", "32000, 4096") + _size("lm_head.weight", "32002, 4096",
                                                                                 "32000, 4096")
    _, fix = first(log)
    assert "model.resize_token_embeddings(32002)" in fix, fix


def test_transformers_head_names_ignore_mismatched_sizes_and_num_labels():
    log = HF_LOAD + "RuntimeError: Error(s) in loading state_dict for RobertaForSequenceClassification:\n" + \
        _size("classifier.out_proj.weight", "2, 768", "3, 768") + _size("classifier.out_proj.bias", "2", "3") + \
        "\tYou may consider adding `ignore_mismatched_sizes=True` in the model `from_pretrained` method.\n"
    _, fix = first(log)
    assert "ignore_mismatched_sizes=True" in fix and "num_labels=3" in fix, fix


def test_state_dict_healthy_neighbours_stay_silent():
    healthy("Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.52s/it]\n"
            "_IncompatibleKeys(missing_keys=['fc.weight'], unexpected_keys=[])\n"
            "Some weights of BertForSequenceClassification were not initialized from the model checkpoint at "
            "bert-base-uncased and are newly initialized: ['classifier.bias', 'classifier.weight']\n"
            "You should probably TRAIN this model on a down-stream task to be able to use it for predictions.\n")


def test_detail_line_without_the_error_is_silent():
    healthy("note from the docs:\n"
            "\tMissing key(s) in state_dict: \"module.fc.weight\". \n"
            "epoch 1 loss 0.31\n")


# --- transformers loading ------------------------------------------------------------------------------------------

def _hf(code: str, path: str, line: str) -> str:
    return frames(("/home/me/app.py", code), (f"{SITE}/transformers/{path}", "raise ...")) + line + "\n"


def test_llama_tokenizer_spelling():
    _, fix = first(_hf("tok = AutoTokenizer.from_pretrained(p)", "models/auto/tokenization_auto.py",
                       "ValueError: Tokenizer class LLaMATokenizer does not exist or is not currently imported."))
    assert '"tokenizer_class": "LlamaTokenizer"' in fix, fix


def test_new_tokenizer_class_names_the_release_that_added_it():
    _, fix = first(_hf("tok = AutoTokenizer.from_pretrained('Qwen/Qwen2-7B')", "models/auto/tokenization_auto.py",
                       "ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not currently imported."))
    assert "transformers>=4.37.0" in fix, fix


def test_cant_load_tokenizer_names_the_shadowing_folder():
    _, fix = first(_hf("tok = AutoTokenizer.from_pretrained('gpt2')", "tokenization_utils_base.py",
                       "OSError: Can't load tokenizer for 'gpt2'. If you were trying to load it from "
                       "'https://huggingface.co/models', make sure you don't have a local directory with the same "
                       "name. Otherwise, make sure 'gpt2' is the correct path to a directory containing all relevant "
                       "files for a GPT2TokenizerFast tokenizer."))
    assert "local folder named 'gpt2'" in fix, fix


def test_cant_load_tokenizer_from_a_local_output_folder():
    _, fix = first(_hf("tok = AutoTokenizer.from_pretrained('./outputs/checkpoint-500')", "tokenization_utils_base.py",
                       "OSError: Can't load tokenizer for './outputs/checkpoint-500'. If you were trying to load it"))
    assert "tokenizer.save_pretrained('./outputs/checkpoint-500')" in fix, fix


def test_no_config_json_names_subfolder_and_peft():
    _, fix = first(_hf("m = AutoModel.from_pretrained('./lora-out')", "utils/hub.py",
                       "OSError: ./lora-out does not appear to have a file named config.json. Checkout "
                       "'https://huggingface.co/./lora-out/tree/None' for available files."))
    assert 'subfolder="unet"' in fix and "PeftModel.from_pretrained" in fix, fix


def test_no_weights_in_directory_sibling():
    _, fix = first(_hf("m = AutoModelForCausalLM.from_pretrained('./ft')", "modeling_utils.py",
                       "OSError: Error no file named pytorch_model.bin, model.safetensors, tf_model.h5, "
                       "model.ckpt.index or flax_model.msgpack found in directory ./ft."))
    assert "git lfs pull" in fix and "PeftModel.from_pretrained" in fix, fix


def test_unrecognized_configuration_class_names_the_auto_class():
    _, fix = first(_hf("m = AutoModelForCausalLM.from_pretrained('google/flan-t5-large')",
                       "models/auto/auto_factory.py",
                       "ValueError: Unrecognized configuration class <class 'transformers.models.t5.configuration_t5."
                       "T5Config'> for this kind of AutoModel: AutoModelForCausalLM."))
    assert "AutoModelForSeq2SeqLM" in fix, fix
    _, fix = first(_hf("m = AutoModelForCausalLM.from_pretrained('llava-hf/llava-1.5-7b-hf')",
                       "models/auto/auto_factory.py",
                       "ValueError: Unrecognized configuration class <class 'transformers.models.llava.configuration_"
                       "llava.LlavaConfig'> for this kind of AutoModel: AutoModelForCausalLM."))
    assert "LlavaForConditionalGeneration" in fix, fix


def test_unable_to_load_weights_names_git_lfs_and_redownload():
    _, fix = first(_hf("m = AutoModel.from_pretrained('./bert')", "modeling_utils.py",
                       "OSError: Unable to load weights from pytorch checkpoint file for './bert/pytorch_model.bin' at "
                       "'./bert/pytorch_model.bin'. If you tried to load a PyTorch model from a TF 2.0 checkpoint, "
                       "please set from_tf=True."))
    assert "git lfs pull" in fix and "force_download=True" in fix, fix


def test_loading_healthy_lines_stay_silent():
    healthy("Loading checkpoint shards: 100%|##########| 4/4 [00:10<00:00,  2.61s/it]\n"
            "loading file tokenizer.model from cache at /root/.cache/huggingface/hub/models--x/tokenizer.model\n"
            "Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned "
            "or trained.\n"
            "generation_config.json: 100%|##########| 137/137 [00:00<00:00, 1.2MB/s]\n")


# --- quantized models -------------------------------------------------------------------------------------------------

def _q(path: str, line: str) -> str:
    return frames(("/home/me/serve.py", "model = AutoModelForCausalLM.from_pretrained(repo, device_map='auto')"),
                  (f"{SITE}/{path}", "raise ...")) + line + "\n"


def test_awq_library_named_by_the_message_is_installed():
    _, fix = first(_q("transformers/quantizers/quantizer_awq.py",
                      "ImportError: Loading an AWQ quantized model requires auto-awq library (`pip install autoawq`)"))
    assert "python -m pip install -U autoawq" in fix, fix


def test_gptq_sibling_installs_both_packages_it_names():
    _, fix = first(_q("transformers/quantizers/quantizer_gptq.py",
                      "ImportError: Loading a GPTQ quantized model requires optimum (`pip install optimum`) and gptqmodel "
                      "library (`pip install -v gptqmodel --no-build-isolation`)"))
    assert "python -m pip install -U optimum gptqmodel --no-build-isolation" in fix, fix


def test_gguf_and_hqq_minimum_versions():
    _, fix = first(_q("transformers/modeling_gguf_pytorch_utils.py",
                      "ImportError: Loading a GGUF checkpoint in PyTorch, requires both PyTorch and GGUF>=0.10.0 to be "
                      "installed. Please see https://pytorch.org/ and https://github.com/ggerganov/llama.cpp/tree/master/"
                      "gguf-py for installation instructions."))
    assert "'gguf>=0.10.0'" in fix, fix
    _, fix = first(_q("transformers/quantizers/quantizer_hqq.py",
                      "ImportError: A valid HQQ version (>=0.2.1) is not available. Please follow the instructions to "
                      "install it: `https://github.com/mobiusml/hqq/`."))
    assert "'hqq>=0.2.1'" in fix, fix


def test_bnb_needs_accelerate_and_bitsandbytes():
    _, fix = first(_q("transformers/quantizers/quantizer_bnb_8bit.py",
                      "ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: `pip install accelerate` "
                      "and the latest version of bitsandbytes: `pip install -i https://pypi.org/simple/ bitsandbytes`"))
    assert "pip install -U accelerate bitsandbytes" in fix and "python -m bitsandbytes" in fix, fix


def test_load_in_4bit_next_to_quantization_config():
    _, fix = first(_q("transformers/modeling_utils.py",
                      "ValueError: You can't pass `load_in_4bit`or `load_in_8bit` as a kwarg when passing "
                      "`quantization_config` argument at the same time."))
    assert "quantization_config=BitsAndBytesConfig(load_in_4bit=True" in fix, fix


def test_exllama_with_offloaded_modules():
    _, fix = first(_q("optimum/gptq/quantizer.py",
                      "ValueError: Found modules on cpu/disk. Using Exllama or Exllamav2 backend requires all the modules "
                      "to be on GPU.You can deactivate exllama backend by setting `disable_exllama=True` in the "
                      "quantization config object"))
    assert "use_exllama=False" in fix and "disable_exllama=True" in fix, fix


def test_fp8_capability_transformers_and_vllm():
    top, fix = first(_q("transformers/quantizers/quantizer_finegrained_fp8.py",
                        "ValueError: FP8 quantized models is only supported on GPUs with compute capability >= 8.9 "
                        "(e.g 4090/H100), actual = `8.6`"))
    assert ident(top) == "unsupported-op:quantization capability" and "BF16" in fix, fix
    log = ("INFO 06-01 12:00:00 llm_engine.py:100] Initializing an LLM engine (v0.5.0) with config: model='x-FP8'\n"
           "Traceback (most recent call last):\n"
           f'  File "{SITE}/vllm/config.py", line 250, in _verify_quantization\n'
           "    raise ValueError(\n"
           "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 89. "
           "Current capability: 80.\n")
    top, fix = first(log)
    assert "89" in top.title and "GPTQ" in fix and "AWQ" in fix, fix  # tune-j1: the formats listed one by one


def test_quant_healthy_warnings_stay_silent():
    healthy("The `load_in_4bit` and `load_in_8bit` arguments are deprecated and will be removed in the future versions. "
            "Please, pass a `BitsAndBytesConfig` object in `quantization_config` argument instead.\n"
            "WARNING: Found modules on cpu/disk. Using Exllama/Exllamav2 backend requires all the modules to be on GPU. "
            "Setting `disable_exllama=True`\n"
            "INFO quantization method awq, minimum capability 75\n")


# --- non-CUDA backends --------------------------------------------------------------------------------------------------

def test_ipex_pair_names_both_matching_installs():
    log = ("$ python bench.py --device cpu\n"
           "ERROR! Intel® Extension for PyTorch* needs to work with PyTorch 2.5.*, but PyTorch 2.6.0+cpu is found. "
           "Please switch to the matching version and run again.\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:intel-extension-for-pytorch"
    assert "'intel-extension-for-pytorch==2.6.*'" in fix and "'torch==2.5.*'" in fix, fix


def test_ipex_with_a_torch_newer_than_its_last_release():
    log = ("ERROR! Intel® Extension for PyTorch* needs to work with PyTorch/libtorch 2.8.*, but PyTorch/libtorch "
           "2.9.1 is found. Please switch to the matching version and run again.\n")
    _, fix = first(log)
    assert "intel-extension-for-pytorch==2.9" not in fix and "'torch==2.8.*'" in fix and "uninstall" in fix, fix


def test_xpu_not_linked_and_not_compiled_siblings():
    for line in ("RuntimeError: PyTorch is not linked with support for xpu devices",
                 "AssertionError: Torch not compiled with XPU enabled"):
        _, fix = first(frames(("/home/me/run.py", "x = torch.ones(4, device='xpu')"),
                              (f"{SITE}/torch/xpu/__init__.py", "torch._C._xpu_init()")) + line + "\n")
        assert "--index-url https://download.pytorch.org/whl/xpu" in fix, fix


def test_mps_not_linked_on_linux_says_no_mps_there():
    log = ("Linux colab 6.1.58+ #1 SMP x86_64 GNU/Linux\n" +
           frames(("/content/app.py", "pipe.to('mps')"), (f"{SITE}/torch/nn/modules/module.py", "return t.to(device)")) +
           "RuntimeError: PyTorch is not linked with support for mps devices\n")
    _, fix = first(log)
    assert "torch.device('cuda' if torch.cuda.is_available() else 'cpu')" in fix, fix


def test_pjrt_device_not_set():
    log = frames(("/home/me/train_tpu.py", "device = xm.xla_device()"),
                 (f"{SITE}/torch_xla/core/xla_model.py", "return runtime.xla_device(n, devkind)")) + \
        "RuntimeError: torch_xla/csrc/runtime/runtime.cc:31 : $PJRT_DEVICE is not set.\n"
    _, fix = first(log)
    assert "export PJRT_DEVICE=TPU" in fix, fix


def test_backend_healthy_lines_stay_silent():
    healthy("WARNING:root:PJRT is now the default runtime. For more information, see https://github.com/pytorch/xla/"
            "blob/master/docs/pjrt.md\n"
            "WARNING:root:Defaulting to PJRT_DEVICE=CPU\n"
            "intel_extension_for_pytorch version:          2.6.0\n"
            "torch.xpu.is_available(): True\n")
