"""The structural readers of tune-i3 (issue 22, cycle 12: frequent serving headlines). Lines are written here in the
shape the engines print them (vLLM's model_executor/models/registry.py _raise_for_unsupported, also wrapped in pydantic's
"Value error, ..."; SGLang's registry "Unsupported architectures: X. Supported list: [...]"; text-generation-inference's
flash_causal_lm.py warmup RuntimeError and the launcher's Warmup(Generation(...)) error), not copied from the corpus;
each class has siblings and healthy neighbours that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import healthy, ident

_SUPPORTED = "Supported architectures: ['AquilaModel', 'BloomForCausalLM', 'LlamaForCausalLM', 'Qwen2ForCausalLM']"


def _vllm(arch: str, prefix: str = "") -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.12/site-packages/vllm/model_executor/models/registry.py", line 380, in '
            "_raise_for_unsupported\n    raise ValueError(\n"
            f"{prefix}ValueError: Model architectures {arch} are not supported for now. {_SUPPORTED}\n")


# --- vLLM / SGLang: architecture not implemented -----------------------------------------------------------------------

@pytest.mark.parametrize("arch,name", [("['Gemma3ForConditionalGeneration']", "Gemma3ForConditionalGeneration"),
                                       ("['DeepseekV3ForCausalLM']", "DeepseekV3ForCausalLM"),
                                       ("['Phi4MMForCausalLM', 'PhiForCausalLM']", "Phi4MMForCausalLM, PhiForCausalLM")])
def test_vllm_unknown_architecture_says_upgrade_vllm(arch, name):
    top, fix = first(_vllm(arch))
    assert ident(top) == "version-constraint:vllm"
    assert name in fix and "pip install --upgrade vllm" in fix, fix
    assert "Error in inspecting model architecture" in fix  # the import-failure variant is named too


def test_vllm_unknown_architecture_under_a_rank_prefix():
    top, fix = first(_vllm("['Glm4vForConditionalGeneration']", "[rank0]: "))
    assert ident(top) == "version-constraint:vllm" and "Glm4vForConditionalGeneration" in fix


def test_vllm_pydantic_value_error_wording():
    text = ("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
            "  Value error, Model architectures ['Qwen3MoeForCausalLM'] are not supported for now. "
            f"{_SUPPORTED} [type=value_error, input_value=ArgsKwargs((), {{}}), input_type=ArgsKwargs]\n")
    top, fix = first(text)
    assert ident(top) == "version-constraint:vllm" and "Qwen3MoeForCausalLM" in fix


def test_sglang_unsupported_architecture():
    text = ("  File \"/usr/local/lib/python3.10/dist-packages/sglang/srt/model_loader/loader.py\", line 88, in "
            "load_model_cls_srt\n"
            "ValueError: Unsupported architectures: Qwen2VLForConditionalGeneration. Supported list: "
            "['LlamaForCausalLM', 'MistralForCausalLM']\n")
    top, fix = first(text)
    assert ident(top) == "version-constraint:sglang"
    assert "sglang[all]" in fix and "Qwen2VLForConditionalGeneration" in fix, fix


def test_architecture_names_that_are_not_identifiers_stay_out_of_the_fix():
    top, fix = first(_vllm("['$(touch x)', 'Llama4ForCausalLM']"))
    assert "touch" not in fix and "Llama4ForCausalLM" in fix


@pytest.mark.parametrize("line", [
    "INFO 05-06 10:11:12 [registry.py:301] Supported architectures: ['LlamaForCausalLM', 'Qwen2ForCausalLM']",
    "WARNING 05-06 10:11:12 [config.py:1200] Model architectures ['Qwen2ForCausalLM'] are resolved by the "
    "Transformers backend",
    "lipo: Unsupported architectures: arm64e",
])
def test_architecture_neighbours_stay_silent(line):
    healthy(line + "\nINFO 05-06 10:11:20 [api_server.py:1024] Starting vLLM API server on http://0.0.0.0:8000\n")


# --- text-generation-inference warm-up ---------------------------------------------------------------------------------

def _tgi(msg: str) -> str:
    return ('  File "/opt/conda/lib/python3.11/site-packages/text_generation_server/models/flash_causal_lm.py", '
            "line 1268, in warmup\n    raise RuntimeError(\n"
            f"RuntimeError: {msg}\n"
            "2024-05-02T09:11:12.123456Z ERROR warmup{max_input_length=4095 max_prefill_tokens=4096 "
            "max_total_tokens=4096 max_batch_size=None}:warmup: text_generation_router_v3::client: "
            "backends/v3/src/client/mod.rs:54: Server error: CUDA out of memory.\n")


@pytest.mark.parametrize("n,lower", [("4096", "2048"), ("8192", "4096"), ("32768", "16384")])
def test_tgi_prefill_warmup_lowers_max_batch_prefill_tokens(n, lower):
    top, fix = first(_tgi(f"Not enough memory to handle {n} prefill tokens. You need to decrease "
                          "`--max-batch-prefill-tokens`"))
    assert ident(top) == "out-of-memory:cuda"
    assert f"--max-batch-prefill-tokens {lower}" in fix and "--num-shard" in fix and "--max-input-tokens" in fix, fix


def test_tgi_total_tokens_sibling_names_both_knobs():
    text = ('Error: Warmup(Generation("Not enough memory to handle 16000 total tokens with 4096 prefill tokens. '
            'You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`"))\n')
    top, fix = first(text)
    assert ident(top) == "out-of-memory:cuda"
    assert "--max-batch-total-tokens below 16000" in fix and "--max-batch-prefill-tokens 2048" in fix, fix


def test_tgi_healthy_warmup_stays_silent():
    healthy("2024-05-02T09:11:02.000000Z  INFO text_generation_launcher: Default `max_batch_prefill_tokens` "
                   "to 4146\n2024-05-02T09:11:40.000000Z  INFO text_generation_router_v3: backends/v3/src/lib.rs:125: "
                   "Setting max batch total tokens to 284224\n2024-05-02T09:11:41.000000Z  INFO "
                   "text_generation_router::server: router/src/server.rs:2336: Connected\n")


# --- vLLM: max_model_len above the model's own context ----------------------------------------------------------------

@pytest.mark.parametrize("derived,limit", [("max_position_embeddings=32768 or model_max_length=None", "32768"),
                                           ("None=8192", "8192"), ("seq_length=2048 or model_max_length=None", "2048")])
def test_vllm_max_model_len_above_derived_names_the_limit(derived, limit):
    text = (f"ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len ({derived} in "
            "model's config.json). This may lead to incorrect model outputs or CUDA errors. To allow overriding this "
            "maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1\n")
    top, fix = first(text)
    assert ident(top) == "version-constraint:max_model_len"
    assert f"--max-model-len {limit}" in fix and "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in fix, fix


def test_vllm_max_model_len_warning_stays_silent():
    healthy("WARNING 05-06 10:11:12 [config.py:3400] User-specified max_model_len (131072) is less than the derived "
            "max_model_len (max_position_embeddings=131072 or model_max_length=None in model's config.json).\n")
