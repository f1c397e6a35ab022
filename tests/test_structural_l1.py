"""The structural readers of tuner l1 (issue 22, round 14 train). Lines are written here in the shape the real code
prints them (vLLM's entrypoints/openai/serving_engine.py _validate_input and v1/engine/processor.py
_validate_model_input; text-generation-inference's router/src/validation.rs; SGLang's tokenizer_manager.py; llama.cpp's
server exceed_context_size_error; the openai client's BadRequestError), not copied from the corpus; each class has
siblings and a healthy neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident

_OPENAI = "/srv/evals/.venv/lib/python3.11/site-packages/openai/_base_client.py"
_VLLM = "/opt/conda/lib/python3.12/site-packages/vllm"


def _client(msg: str) -> str:
    return frames(("/srv/evals/run_eval.py", "out = client.chat.completions.create(**req)"),
                  (_OPENAI, "raise self._make_status_error_from_response(err.response) from None")) + msg + "\n"


# --- a request longer than the server's context ---------------------------------------------------------------------

def test_vllm_server_refuses_prompt_plus_max_tokens_names_the_room_and_max_model_len():
    msg = ("openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"This model's maximum context "
           "length is 8192 tokens. However, you requested 9100 tokens (5100 in the messages, 4000 in the completion). "
           "Please reduce the length of the messages or completion.\", 'type': 'BadRequestError', 'param': None, "
           "'code': 400}")
    top, fix = first(_client(msg))
    assert ident(top) == "version-constraint:context-length"
    assert "at most 3092" in fix and "--max-model-len" in fix, fix


def test_vllm_server_prompt_alone_too_long_says_truncate():
    log = ("2025-03-02 11:02:17 | ERROR | bench.client:send:77 - request 412 failed: Error code: 400 - {'object': "
           "'error', 'message': \"This model's maximum context length is 32768 tokens. However, you requested 40011 "
           "tokens in the messages, Please reduce the length of the messages.\", 'type': 'BadRequestError', "
           "'param': None, 'code': 400}\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:context-length"
    assert "40011" in fix and "truncate" in fix and "--max-model-len" in fix, fix


def test_vllm_engine_decoder_prompt_longer_than_max_model_len():
    log = frames(("/work/rollout.py", "outputs = llm.generate(prompts, sampling_params)"),
                 (f"{_VLLM}/v1/engine/processor.py", "raise ValueError("))
    top, fix = first(log + "ValueError: The decoder prompt (length 5120) is longer than the maximum model length of "
                           "4096. Make sure that `max_model_len` is no smaller than the number of text tokens.\n")
    assert ident(top) == "version-constraint:context-length" and "max_model_len" in fix, fix


def test_vllm_encoder_prompt_and_v0_wording_are_siblings():
    for line in ("ValueError: The encoder prompt (length 1600) is longer than the maximum model length of 1024.",
                 "ValueError: Prompt length of 9000 is longer than the maximum model length of 8192."):
        top, fix = first(frames((f"{_VLLM}/engine/llm_engine.py", "raise ValueError(")) + line + "\n")
        assert ident(top) == "version-constraint:context-length" and "--max-model-len" in fix, (line, fix)


def test_tgi_input_length_names_truncate_and_the_launcher_flags():
    log = ("text_generation.errors.ValidationError: Input validation error: `inputs` must have less than 4096 tokens. "
           "Given: 5012\n")
    top, fix = first(frames(("/app/qa.py", "resp = client.generate(prompt, max_new_tokens=512)")) + log)
    assert ident(top) == "version-constraint:context-length"
    assert "truncate" in fix and "--max-input-tokens" in fix and "--max-input-length" in fix, fix


def test_tgi_total_tokens_sibling_gives_the_room_for_max_new_tokens():
    log = ("huggingface_hub.errors.ValidationError: Input validation error: `inputs` tokens + `max_new_tokens` must "
           "be <= 2048. Given: 1500 `inputs` tokens and 1024 `max_new_tokens`\n")
    top, fix = first(frames(("/app/chat.py", "text = client.text_generation(prompt, max_new_tokens=1024)")) + log)
    assert ident(top) == "version-constraint:context-length"
    assert "at most 548" in fix and "--max-total-tokens" in fix, fix


def test_sglang_and_llamacpp_siblings_name_their_own_flags():
    sg = _client("openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"The input (33000 tokens) "
                 "is longer than the model's context length (32768 tokens).\", 'type': 'BadRequestError', "
                 "'param': None, 'code': 400}")
    top, fix = first(sg)
    assert ident(top) == "version-constraint:context-length" and "--context-length" in fix, fix
    cpp = _client("openai.BadRequestError: Error code: 400 - {'error': {'code': 400, 'message': 'the request exceeds "
                  "the available context size, try increasing it', 'type': 'exceed_context_size_error', "
                  "'n_prompt_tokens': 5210, 'n_ctx': 4096}}")
    top, fix = first(cpp)
    assert ident(top) == "version-constraint:context-length" and "--ctx-size" in fix, fix


def test_openai_api_context_length_exceeded_does_not_advise_a_server_flag_first():
    msg = ("openai.BadRequestError: Error code: 400 - {'error': {'message': \"This model's maximum context length is "
           "8192 tokens. However, your messages resulted in 9304 tokens. Please reduce the length of the messages.\", "
           "'type': 'invalid_request_error', 'param': 'messages', 'code': 'context_length_exceeded'}}")
    top, fix = first(_client(msg))
    assert ident(top) == "version-constraint:context-length"
    assert fix.index("truncate") < fix.index("cannot be raised") < fix.index("--max-model-len"), fix


def test_tokenizer_length_warning_and_auto_truncate_notice_are_healthy():
    healthy("Token indices sequence length is longer than the specified maximum sequence length for this model "
            "(5210 > 4096). Running this sequence through the model will result in indexing errors\n"
            "INFO 03-02 11:00:01 [api_server.py:1043] vLLM API server version 0.9.1\n"
            "INFO 03-02 11:00:05 [config.py:1604] Using max model len 32768\n"
            "100%|##########| 200/200 [01:10<00:00,  2.84it/s]\n")


# --- torch._six and its names (c1's rows, completed by l1.removed_more) ---------------------------------------------

def test_torch_six_in_user_code_says_what_to_define_instead():
    log = frames(("/home/me/det/train.py", "from utils.coco_eval import CocoEvaluator"),
                 ("/home/me/det/utils/coco_eval.py", "from torch._six import string_classes"))
    top, fix = first(log + "ModuleNotFoundError: No module named 'torch._six'\n")
    assert ident(top) == "missing-module:torch._six"
    assert "string_classes = str" in fix and "from torch import inf" in fix and "older than 0.4.0" in fix, fix


def test_torch_six_through_a_lazy_import_names_the_usual_importers():
    log = ("RuntimeError: Failed to import transformers.trainer because of the following error (look up to see its "
           "traceback):\nNo module named 'torch._six'\n")
    top, fix = first(log)
    assert ident(top) == "missing-module:torch._six"
    assert "pip install --upgrade deepspeed" in fix, fix


def test_torch_six_in_an_installed_package_stays_that_packages_upgrade():
    log = frames(("/srv/ft/train.py", "import deepspeed"),
                 ("/srv/ft/.venv/lib/python3.10/site-packages/deepspeed/runtime/utils.py", "from torch._six import inf"))
    top, fix = first(log + "ModuleNotFoundError: No module named 'torch._six'\n")
    assert "Upgrade deepspeed" in fix and "older than 0.4.0" not in fix, fix


def test_container_abcs_and_int_classes_are_torch_1_9_removals():
    for name in ("container_abcs", "int_classes"):
        log = frames(("/home/me/track/ltr/data/loader.py", f"from torch._six import {name}"))
        top, fix = first(log + f"ImportError: cannot import name '{name}' from 'torch._six' "
                               "(/usr/lib/python3.8/site-packages/torch/_six.py)\n")
        assert ident(top) == f"import-name:torch._six.{name}", (name, ident(top))
        assert "1.9.0" in fix and "import collections.abc as container_abcs" in fix and "0.4.0" not in fix, fix


# --- deterministic algorithms and an op without a deterministic kernel ---------------------------------------------

_DET = ("RuntimeError: {op} does not have a deterministic implementation, but you set "
        "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation, or you can "
        "use the 'warn_only=True' option, if that's acceptable for your application. You can also file an issue at "
        "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
        "operation.\n")


def test_op_without_deterministic_kernel_gives_warn_only_and_the_switch():
    log = frames(("/work/seg/train.py", "out = model(x).scatter_add_(1, idx, src)"))
    top, fix = first(log + _DET.format(op="scatter_add_cuda_"))
    assert ident(top) == "unsupported-op:deterministic"
    assert "warn_only=True" in fix and "use_deterministic_algorithms(False)" in fix and "loss.backward" not in fix


def test_backward_op_says_the_switch_must_cover_backward():
    log = frames(("/work/det/train.py", "scaler.scale(loss).backward()"))
    top, fix = first(log + _DET.format(op="adaptive_max_pool2d_backward_cuda"))
    assert "loss.backward()" in fix and "init_seeds(deterministic=False)" in fix, fix


def test_old_torch_message_without_warn_only_does_not_advise_it():
    line = ("RuntimeError: index_put_with_sort_kernel does not have a deterministic implementation, but you set "
            "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation if "
            "that's acceptable for your application.\n")
    top, fix = first(frames(("/work/a.py", "y[idx] = v")) + line)
    assert ident(top) == "unsupported-op:deterministic" and "no warn_only" in fix and "1.11" in fix, fix


def test_cublas_workspace_gives_the_variable_as_a_command():
    line = ("RuntimeError: Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` "
            "or `at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it "
            "uses CuBLAS and you have CUDA >= 10.2. To enable deterministic behavior in this case, you must set an "
            "environment variable before running your PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 or "
            "CUBLAS_WORKSPACE_CONFIG=:16:8. For more information, go to "
            "https://docs.nvidia.com/cuda/cublas/index.html#results-reproducibility\n")
    top, fix = first(frames(("/work/lm/model.py", "h = self.proj(x)")) + line)
    assert ident(top) == "unsupported-op:deterministic"
    assert "export CUBLAS_WORKSPACE_CONFIG=:4096:8" in top.fix.commands and ":16:8" in fix, fix


def test_warn_only_warning_is_healthy():
    healthy("/opt/venv/lib/python3.11/site-packages/torch/autograd/graph.py:825: UserWarning: "
            "upsample_bilinear2d_backward_out_cuda does not have a deterministic implementation, but you set "
            "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
            "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
            "operation. (Triggered internally at ../aten/src/ATen/Context.cpp:91.)\n"
            "Epoch 3: 100%|##########| 500/500 [02:10<00:00,  3.83it/s, loss=0.412]\n")


# --- FlashAttention-2's renamed varlen functions -------------------------------------------------------------------

def test_flash_attn_unpadded_names_get_their_varlen_names():
    for old, new in (("flash_attn_unpadded_func", "flash_attn_varlen_func"),
                     ("flash_attn_unpadded_kvpacked_func", "flash_attn_varlen_kvpacked_func")):
        log = frames(("/home/me/vlm/train/attn_patch.py", f"from flash_attn.flash_attn_interface import {old}"))
        top, fix = first(log + f"ImportError: cannot import name '{old}' from 'flash_attn.flash_attn_interface' "
                               "(/opt/conda/lib/python3.11/site-packages/flash_attn/flash_attn_interface.py)\n")
        assert ident(top) == f"import-name:flash_attn.flash_attn_interface.{old}"
        assert f"{old} -> {new}" in fix and "2.0.0" in fix, fix


# --- tokenizer.json the tokenizers library cannot read -------------------------------------------------------------

_TOKFAST = "/opt/venv/lib/python3.10/site-packages/transformers/tokenization_utils_fast.py"


def test_tokenizer_json_not_json_gets_git_lfs_and_redownload():
    for msg in ("Exception: expected value at line 1 column 1",
                "Exception: EOF while parsing a value at line 1 column 0"):
        log = frames(("/srv/sft/train.py", "tok = AutoTokenizer.from_pretrained(args.model_dir)"),
                     (_TOKFAST, "fast_tokenizer = TokenizerFast.from_file(fast_tokenizer_file)"))
        top, fix = first(log + msg + "\n")
        assert ident(top) == "unsupported-op:tokenizer.json", (msg, ident(top))
        assert "git lfs pull" in fix and "re-download" in fix, fix


def test_tokenizer_json_from_a_newer_tokenizers_gets_the_upgrade():
    for enum in ("ModelWrapper at line 1251012 column 3", "PyPreTokenizerTypeWrapper at line 40 column 3"):
        log = frames((_TOKFAST, "fast_tokenizer = TokenizerFast.from_file(fast_tokenizer_file)"))
        top, fix = first(log + f"Exception: data did not match any variant of untagged enum {enum}\n")
        assert ident(top) == "version-constraint:tokenizers" and "upgrade tokenizers" in fix.lower(), fix


def test_json_words_in_a_healthy_log_stay_silent():
    healthy("loading file tokenizer.json from cache at /root/.cache/huggingface/hub/models--x/tokenizer.json\n"
            "Parsed config: expected value at line 1 column 1 is a test fixture name, not an error\n"
            "{'loss': 1.93, 'learning_rate': 2e-05, 'epoch': 0.1}\n")


# --- FDE972 (NVML 'Unknown Error' in a container): the Kubernetes CPUManager cause ---------------------------------

def test_nvml_unknown_error_in_a_pod_names_the_cpumanager_static_policy():
    log = ("$ kubectl exec -it trainer-0 -- nvidia-smi\n"
           "Failed to initialize NVML: Unknown Error\n"
           "command terminated with exit code 255\n")
    top, fix = first(log)
    assert "--cpu-manager-policy=static" in fix and "--pass-device-specs=true" in fix, fix
    assert "create-dev-char-symlinks" in fix  # the systemd cause stays first
