"""The structural readers of tuner k1 (issue 22, round 13 train). Lines are written here in the shape the real code
prints them (vLLM's vllm/entrypoints/openai/serving_chat.py, cli_args.py and chat_utils.py; transformers'
tokenization_utils_base.py get_chat_template and processing_utils.py apply_chat_template; the openai client's
BadRequestError), not copied from the corpus; each class has siblings and a healthy neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident

_OPENAI = "/srv/agent/.venv/lib/python3.11/site-packages/openai/_base_client.py"


def _client(msg: str) -> str:
    return frames(("/srv/agent/run.py", "reply = client.chat.completions.create(**req)"),
                  (_OPENAI, "raise self._make_status_error_from_response(err.response) from None")) + msg + "\n"


# --- tool calling on a server started without it --------------------------------------------------------------------

_TOOL = ("openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': '\"auto\" tool choice requires "
         "--enable-auto-tool-choice and --tool-call-parser to be set', 'type': 'BadRequestError', 'param': None, "
         "'code': 400}")


def test_auto_tool_choice_refused_names_the_server_flags_and_parsers():
    top, fix = first(_client(_TOOL))
    assert ident(top) == "unsupported-op:tool-choice"
    assert "--enable-auto-tool-choice --tool-call-parser" in fix and "hermes" in fix and "llama3_json" in fix, fix


def test_auto_tool_choice_in_an_agent_log_line_without_traceback():
    log = ("2025-06-02 09:14:07.311 | INFO     | agent.loop:step:88 - step 1/20\n"
           "2025-06-02 09:14:07.402 | ERROR    | agent.llm:call:140 - API error: Error code: 400 - {'error': "
           "{'message': '\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', "
           "'type': 'invalid_request_error', 'param': None, 'code': '400'}}\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:tool-choice" and "--enable-auto-tool-choice" in fix


def test_serve_with_auto_tool_choice_but_no_parser():
    log = frames(("/usr/local/bin/vllm", "sys.exit(main())"),
                 ("/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/cli_args.py",
                  'raise TypeError("Error: --enable-auto-tool-choice requires --tool-call-parser")'))
    top, fix = first(log + "TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser\n")
    assert ident(top) == "unsupported-op:tool-choice" and "--tool-call-parser NAME" in fix, fix


def test_tool_calling_enabled_at_start_is_healthy():
    healthy("INFO 06-02 09:10:01 [api_server.py:1043] vLLM API server version 0.8.5\n"
            "INFO 06-02 09:10:01 [serving_chat.py:81] \"auto\" tool choice has been enabled please note that while "
            "the parallel_tool_calls client option is preset for compatibility reasons, it will be ignored.\n"
            "INFO 06-02 09:10:02 [launcher.py:28] Available routes are:\n"
            "INFO:     127.0.0.1:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n")


# --- no chat template ----------------------------------------------------------------------------------------------------

def test_vllm_without_chat_template_says_instruct_or_chat_template_flag():
    msg = ("ValueError: As of transformers v4.44, default chat template is no longer allowed, so you must provide a "
           "chat template if the tokenizer does not define one.")
    log = frames(("/opt/venv/lib/python3.10/site-packages/vllm/entrypoints/openai/serving_chat.py",
                  ") = await self._preprocess_chat("),
                 ("/opt/venv/lib/python3.10/site-packages/vllm/entrypoints/chat_utils.py", "raise ValueError("))
    top, fix = first(log + msg + "\n")
    assert ident(top) == "unsupported-op:chat_template"  # k2's reading (the class's owner)
    assert "--chat-template" in fix and "instruct" in fix and "/v1/completions" in fix, fix


def test_vllm_chat_template_as_a_client_400():
    msg = ("openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'As of transformers v4.44, "
           "default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not "
           "define one. None', 'type': 'BadRequestError', 'param': None, 'code': 400}")
    top, fix = first(_client(msg))
    assert ident(top) == "unsupported-op:chat_template" and "--chat-template" in fix


def test_transformers_tokenizer_without_chat_template():
    msg = ("ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template "
           "argument was passed! For information about writing templates and setting the tokenizer.chat_template "
           "attribute, please see the documentation at https://huggingface.co/docs/transformers/main/en/chat_templating")
    log = frames(("/work/sft/data.py", "text = tok.apply_chat_template(msgs, tokenize=False)"),
                 ("/work/.venv/lib/python3.11/site-packages/transformers/tokenization_utils_base.py",
                  "chat_template = self.get_chat_template(chat_template, tools)"))
    top, fix = first(log + msg + "\n")
    assert ident(top) == "unsupported-op:chat_template"
    assert "tokenizer.chat_template =" in fix and "instruct" in fix, fix


def test_processor_without_chat_template():
    msg = "ValueError: Cannot use apply_chat_template because this processor does not have a chat template."
    log = frames(("/work/vlm/eval.py", "prompt = processor.apply_chat_template(conv, add_generation_prompt=True)"),
                 ("/work/.venv/lib/python3.11/site-packages/transformers/processing_utils.py", "raise ValueError("))
    top, fix = first(log + msg + "\n")
    assert ident(top) == "unsupported-op:chat_template" and "processor.chat_template" in fix, fix


def test_chat_template_notices_are_healthy():
    healthy("INFO 06-02 09:12:44 [chat_utils.py:396] Detected the chat template content format to be 'string'. You "
            "can set `--chat-template-content-format` to override this.\n"
            "INFO 06-02 09:12:44 [serving_chat.py:118] Using supplied chat template: None\n"
            "INFO:     127.0.0.1:40112 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n")


# --- a checkpoint's head for another number of classes (g2.state's head reading, enriched) ----------------------------

def _sd(model: str, key: str, ckpt: str, cur: str, prefix: str = "") -> str:
    bias_c, bias_m = ckpt.split(",")[0], cur.split(",")[0]
    bias = key.rsplit(".", 1)[0] + ".bias"
    return (frames(("/home/lee/seg/test.py", "net.load_state_dict(torch.load(opt.weights))"),
                   ("/home/lee/.venv/lib/python3.9/site-packages/torch/nn/modules/module.py",
                    "raise RuntimeError('Error(s) in loading state_dict for {}:\\n\\t{}'.format("))
            + f"{prefix}RuntimeError: Error(s) in loading state_dict for {model}:\n"
            f"{prefix}\tsize mismatch for {key}: copying a param with shape torch.Size([{ckpt}]) from checkpoint, the "
            f"shape in current model is torch.Size([{cur}]).\n"
            f"{prefix}\tsize mismatch for {bias}: copying a param with shape torch.Size([{bias_c}]) from checkpoint, "
            f"the shape in current model is torch.Size([{bias_m}]).\n")


def test_classifier_head_for_imagenet_says_num_classes_and_replace_the_layer():
    top, fix = first(_sd("ResNet", "fc.weight", "1000, 2048", "10, 2048"))
    assert ident(top) == "unsupported-op:state_dict"
    assert "num_classes=1000" in fix and "your 10 classes" in fix and "nn.Linear(" in fix and ", 10)" in fix, fix
    assert "model_path" in fix and "strict=False" in fix, fix


def test_detection_class_head_sibling():
    top, fix = first(_sd("YOLOX", "head.cls_preds.0.weight", "80, 256, 1, 1", "3, 256, 1, 1"))
    assert ident(top) == "unsupported-op:state_dict" and "num_classes=80" in fix, fix


def test_segmentation_and_torchvision_heads_are_heads():
    for key in ("clf_conv.weight", "roi_heads.box_predictor.cls_score.weight", "last_linear.weight"):
        top, fix = first(_sd("Net", key, "40, 256", "2, 256"))
        assert "num_classes=40" in fix, (key, fix)


def test_head_mismatch_quoted_in_an_issue_still_reads_the_class_counts():
    text = _sd("ft_net", "classifier.classifier.0.weight", "702, 512", "751, 512", prefix="> ")
    top, fix = first(text.split("Traceback", 1)[0] + text[text.index("> RuntimeError"):])
    assert ident(top) == "unsupported-op:state_dict" and "num_classes=702" in fix, fix


# --- a serving engine's out of memory read from the engine's own process tag on the line (h3.oom rows, enriched) ---

_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 2 has a total capacity of 39.39 "
        "GiB of which 610.00 MiB is free. Including non-PyTorch memory, this process has 38.78 GiB memory in use.")


def test_vllm_worker_oom_without_frames_gets_vllm_flags():
    for tag in ("(VllmWorker rank=2 pid=41177) ERROR 03-11 08:02:13 [multiproc_executor.py:470] ",
                "(EngineCore_0 pid=9120) ERROR 03-11 08:02:13 [core.py:700] "):
        top, fix = first(tag + _OOM + "\nERROR 03-11 08:02:14 [core.py:515] EngineCore failed to start.\n")
        assert ident(top) == "out-of-memory:cuda"
        assert "--gpu-memory-utilization" in fix and "--max-model-len" in fix, (tag, fix)


def test_tgi_shard_oom_gets_tgi_launcher_flags():
    line = ("2024-05-02T10:11:12.131415Z ERROR batch{batch_size=4}:prefill:prefill{id=3 size=4}: text_generation_client: "
            "router/client/src/lib.rs:33: Server error: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a "
            "total capacty of 23.65 GiB of which 301.06 MiB is free.\n")
    top, fix = first(line)
    assert ident(top) == "out-of-memory:cuda"
    assert "--max-batch-prefill-tokens" in fix and "--max-total-tokens" in fix and "--cuda-memory-fraction" in fix, fix


def test_a_plain_training_oom_keeps_the_generic_advice():
    top, fix = first(frames(("/home/ana/train.py", "loss = model(x).sum()")) + _OOM + "\n")
    assert ident(top) == "out-of-memory:cuda" and "--max-batch-prefill-tokens" not in fix and "--max-model-len" not in fix
