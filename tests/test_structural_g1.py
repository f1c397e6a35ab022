"""The structural readers of tune-g1 (issue 22, round 8): API drift in calls. Lines are written here in the shape
CPython prints its argument errors (Python/ceval.c "X() got an unexpected keyword argument 'Y'", Python/getargs.c
"missing N required positional argument", "takes N positional arguments but M were given"; Python >= 3.10 qualifies
methods as Class.__init__, older ones print "__init__()"), with the callees and arguments of the libraries in
g1_tables.toml (transformers, trl, peft, accelerate, flash-attn, torch, huggingface_hub); not copied from the corpus.
Each class has siblings and healthy neighbours (warnings that mention the same words) that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident, scan

SITE = "/opt/venv/lib/python3.11/site-packages"


def _user(code: str, line: str) -> str:
    return frames(("/home/me/train.py", code)) + line + "\n"


# --- transformers / TRL renames ---------------------------------------------------------------------------------

def test_training_arguments_evaluation_strategy_renamed_to_eval_strategy():
    top, fix = first(_user("args = TrainingArguments(", "TypeError: TrainingArguments.__init__() got an unexpected "
                           "keyword argument 'evaluation_strategy'"))
    assert ident(top) == "version-constraint:transformers"
    assert "eval_strategy=" in fix and "4.41.0" in fix, fix


def test_seq2seq_arguments_on_python39_without_class_name_same_rename():
    top, fix = first(_user("args = Seq2SeqTrainingArguments(", "TypeError: __init__() got an unexpected keyword "
                           "argument 'evaluation_strategy'"))
    assert ident(top) == "version-constraint:transformers"
    assert "eval_strategy=" in fix, fix


def test_sft_trainer_tokenizer_renamed_to_processing_class_with_trl_pin():
    top, fix = first(_user("trainer = SFTTrainer(", "TypeError: SFTTrainer.__init__() got an unexpected keyword "
                           "argument 'tokenizer'"))
    assert ident(top) == "version-constraint:trl"
    assert "processing_class=" in fix and 'pip install "trl<0.16.0"' in fix, fix


def test_trl_calling_transformers_trainer_with_tokenizer_upgrades_trl():
    log = frames(("/home/me/sft.py", "trainer = SFTTrainer("),
                 (f"{SITE}/trl/trainer/sft_trainer.py", "super().__init__(")) + \
        "TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:transformers"
    assert "pip install --upgrade trl" in fix and 'transformers<5.0.0' in fix, fix


def test_sft_trainer_max_seq_length_moves_into_sft_config():
    top, fix = first(_user("trainer = SFTTrainer(", "TypeError: SFTTrainer.__init__() got an unexpected keyword "
                           "argument 'max_seq_length'"))
    assert "SFTConfig(" in fix and "trl<0.13.0" in fix, fix


def test_sft_config_max_seq_length_renamed_to_max_length():
    top, fix = first(_user("cfg = SFTConfig(", "TypeError: SFTConfig.__init__() got an unexpected keyword argument "
                           "'max_seq_length'"))
    assert "max_length=" in fix and "trl<0.20.0" in fix, fix


def test_dpo_trainer_beta_moves_into_dpo_config():
    top, fix = first(_user("trainer = DPOTrainer(", "TypeError: DPOTrainer.__init__() got an unexpected keyword "
                           "argument 'beta'"))
    assert "DPOConfig(" in fix, fix


# --- arguments added by a release: upgrade -------------------------------------------------------------------------

def test_lora_config_use_dora_needs_peft_090():
    top, fix = first(_user("config = LoraConfig(r=16, use_dora=True)", "TypeError: LoraConfig.__init__() got an "
                           "unexpected keyword argument 'use_dora'"))
    assert ident(top) == "version-constraint:peft"
    assert '"peft>=0.9.0"' in fix, fix


def test_adapter_config_from_newer_peft_sibling_lora_bias():
    log = frames((f"{SITE}/peft/config.py", "config = config_cls(**kwargs)")) + \
        "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'lora_bias'\n"
    top, fix = first(log)
    assert '"peft>=0.14.0"' in fix, fix


def test_flash_attn_softcap_from_transformers_needs_flash_attn_26():
    log = frames((f"{SITE}/transformers/modeling_flash_attention_utils.py", "attn_output = flash_attn_func(")) + \
        "TypeError: flash_attn_func() got an unexpected keyword argument 'softcap'\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:flash-attn"
    assert '"flash-attn>=2.6.0" --no-build-isolation' in fix, fix


def test_flash_attn_window_size_sibling():
    top, fix = first(_user("out = flash_attn_func(q, k, v, causal=True, window_size=(256, 0))",
                           "TypeError: flash_attn_func() got an unexpected keyword argument 'window_size'"))
    assert "flash-attn>=2.3.0" in fix, fix


def test_sdpa_enable_gqa_needs_torch_25_with_the_cuda_index():
    log = "PyTorch version: 2.4.1+cu121\n" + _user("out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)",
                                        "TypeError: scaled_dot_product_attention() got an unexpected keyword "
                                        "argument 'enable_gqa'")
    top, fix = first(log)
    assert ident(top) == "version-constraint:torch"
    assert '"torch>=2.5.0" --index-url https://download.pytorch.org/whl/cu121' in fix, fix


def test_sdpa_enable_gqa_on_new_torch_means_a_replaced_function():
    log = "PyTorch version: 2.6.0+cu124\n" + _user("out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)",
                                        "TypeError: scaled_dot_product_attention() got an unexpected keyword "
                                        "argument 'enable_gqa'")
    top, fix = first(log)
    assert "replaced" in fix and "torch>=" not in fix, fix


def test_torch_load_weights_only_sibling():
    top, fix = first(_user("sd = torch.load(path, weights_only=True)",
                           "TypeError: load() got an unexpected keyword argument 'weights_only'"))
    assert "torch>=1.13.0" in fix, fix


def test_accelerator_logging_dir_renamed_to_project_dir():
    top, fix = first(_user("accelerator = Accelerator(log_with='tensorboard', logging_dir=out)",
                           "TypeError: Accelerator.__init__() got an unexpected keyword argument 'logging_dir'"))
    assert ident(top) == "version-constraint:accelerate"
    assert "project_dir=" in fix and "accelerate<0.20.0" in fix, fix


def test_hub_use_auth_token_from_a_library_upgrades_the_library():
    log = frames((f"{SITE}/pyannote/audio/core/pipeline.py", "config_yml = hf_hub_download(")) + \
        "TypeError: hf_hub_download() got an unexpected keyword argument 'use_auth_token'\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:huggingface_hub"
    assert "pip install --upgrade pyannote" in fix and "huggingface_hub<1.0.0" in fix, fix


def test_logged_error_without_traceback_still_read():
    top, fix = first("2026-01-02 10:00:00,001 ERROR [app] Failed to load model: hf_hub_download() got an "
                     "unexpected keyword argument 'use_auth_token'\n")
    assert "token=" in fix, fix


# --- unknown callees: the package, never a version ------------------------------------------------------------------

def test_unknown_callee_called_from_a_library_names_both_packages():
    log = frames(("/app/run.py", "pipe = build(cfg)"), (f"{SITE}/mylib/pipeline.py", "return Renderer(cfg, fast=1)")) + \
        "TypeError: Renderer.__init__() got an unexpected keyword argument 'fast'\n"
    top, fix = first(log)
    assert top.kind == "version-constraint"
    assert "pip show mylib" in fix and "pip check" in fix and ">=" not in fix, fix


def test_unknown_callee_from_user_code_says_which_version_your_code_targets():
    top, fix = first(_user("img = pipe(prompt, guidance=3)", "TypeError: FluxPipeline.__call__() got an unexpected "
                           "keyword argument 'guidance'"))
    assert top.kind == "version-constraint"
    assert "written for" in fix and ">=" not in fix, fix


def test_missing_positional_argument_names_the_drift():
    log = frames(("/app/run.py", "rope = LlamaRotaryEmbedding(config=cfg)"),
                 (f"{SITE}/mylib/model.py", "self.rotary = LlamaRotaryEmbedding(dim)")) + \
        "TypeError: LlamaRotaryEmbedding.__init__() missing 1 required positional argument: 'config'\n"
    top, fix = first(log)
    assert top.kind == "version-constraint" and "pip show mylib" in fix, fix


def test_takes_positional_arguments_sibling():
    top, fix = first(_user("out = attn(q, k, v, mask)", "TypeError: Attention.forward() takes 4 positional arguments "
                           "but 5 were given"))
    assert top.kind == "version-constraint", ident(top)


# --- healthy neighbours ------------------------------------------------------------------------------------------

def test_deprecation_warnings_about_the_same_arguments_stay_silent():
    healthy(f"{SITE}/transformers/training_args.py:1575: FutureWarning: `evaluation_strategy` is deprecated and will "
            "be removed in version 4.46 of Transformers. Use `eval_strategy` instead\n  warnings.warn(\n"
            "UserWarning: You passed a `max_seq_length` argument to the SFTTrainer, the value you passed will override "
            "the one in the `SFTConfig`.\n{'loss': 1.23, 'epoch': 0.1}\n")


def test_a_warning_quoting_the_type_error_stays_silent():
    healthy("WARNING: retrying without fast kernels (caught: got an unexpected keyword argument 'softcap')\n"
            "WARNING:root:flash_attn_func() got an unexpected keyword argument 'softcap'; falling back to sdpa\n"
            "step 10 | loss 2.1\n")


def test_an_earlier_recovered_type_error_is_not_the_answer():
    log = _user("x = f(a=1)", "TypeError: f() got an unexpected keyword argument 'a'") + \
        "retrying with the defaults\n" + " 10%|#         | 10/100 [00:05<00:45,  2.00it/s]\n" + \
        " 20%|##        | 20/100 [00:10<00:40,  2.00it/s]\nsaving checkpoint-20\n"
    items = [ident(x) for x in scan(log).ordered()]
    assert not any(i.startswith("version-constraint") for i in items), items


# --- an interpreter too old (or too new) for a package ---------------------------------------------------------------

def _site(py: str, pkg: str, code: str, line: str) -> str:
    return frames(("/home/me/app.py", "import " + pkg),
                  (f"/home/me/.venv/lib/python{py}/site-packages/{pkg}/utils.py", code)) + line + "\n"


def test_pep604_union_in_a_package_on_python39_needs_310():
    top, fix = first(_site("3.9", "gradio", "def f(x: str | None = None):",
                           "TypeError: unsupported operand type(s) for |: 'type' and 'NoneType'"))
    assert ident(top) == "version-constraint:python"
    assert "Python 3.10" in top.title and "gradio" in fix and "Requires-Python" in fix, fix


def test_pep585_generic_sibling_needs_39():
    top, fix = first(_site("3.8", "vllm", "def g(xs: list[int]) -> dict[str, int]:",
                           "TypeError: 'type' object is not subscriptable"))
    assert ident(top) == "version-constraint:python" and "3.9" in top.title, top.title


def test_dict_union_sibling_needs_39():
    top, _fix = first(_site("3.8", "mylib", "cfg = defaults | overrides",
                            "TypeError: unsupported operand type(s) for |: 'dict' and 'dict'"))
    assert "3.9" in top.title, top.title


def test_match_statement_syntax_error_inside_a_package_needs_a_newer_python():
    log = (f'  File "/home/me/.venv/lib/python3.9/site-packages/vllm/config.py", line 212\n'
           "    match self.kind:\n          ^\nSyntaxError: invalid syntax\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:python" and "3.10" in top.title, top.title


def test_syntax_error_in_a_package_on_python312_is_old_code():
    log = (f'  File "/home/me/.venv/lib/python3.12/site-packages/oldpkg/core.py", line 40\n'
           "    print 'hello'\n    ^^^^^^^^^^^^^\nSyntaxError: Missing parentheses in call to 'print'.\n")
    top, fix = first(log)
    assert "pip install --upgrade oldpkg" in fix and "needs Python" not in top.title, (top.title, fix)


def test_subscript_and_syntax_errors_in_user_code_are_not_this_class():
    for line in ("TypeError: 'type' object is not subscriptable", "SyntaxError: invalid syntax"):
        items = [ident(x) for x in scan(_user("x = int[3]", line)).ordered()]
        assert "version-constraint:python" not in items, items


def test_union_on_python310_is_not_this_class():
    items = [ident(x) for x in scan(_site("3.11", "mylib", "y = int | 3",
                                          "TypeError: unsupported operand type(s) for |: 'type' and 'int'")).ordered()]
    assert "version-constraint:python" not in items, items


def test_pip_requires_a_different_python_names_the_spec_and_an_unpinned_install():
    log = ("Collecting vllm==0.6.3\nERROR: Package 'vllm' requires a different Python: 3.8.10 not in '>=3.9'\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:python"
    assert "'>=3.9'" in fix and "pip install vllm" in fix, fix


def test_python_notices_stay_silent():
    healthy("DeprecationWarning: Python 3.8 support is deprecated; please use Python >= 3.9\n"
            "SyntaxWarning: invalid escape sequence '\\d'\nINFO: using typing.Optional for Python 3.9 compatibility\n")


# --- torch without a usable NumPy -----------------------------------------------------------------------------------

def test_numpy_not_available_after_array_api_warning_pins_numpy_below_2():
    log = (f"{SITE}/torch/nn/modules/transformer.py:20: UserWarning: Failed to initialize NumPy: _ARRAY_API not found "
           "(Triggered internally at ../torch/csrc/utils/tensor_numpy.cpp:84.)\n" +
           _user("arr = out.cpu().numpy()", "RuntimeError: Numpy is not available"))
    top, fix = first(log)
    assert 'pip install "numpy<2"' in fix, fix


def test_numpy_not_available_on_python313_upgrades_numpy_and_torch():
    log = frames(("/home/me/app.py", "x = torch.from_numpy(a)"),
                 ("/home/me/.venv/lib/python3.13/site-packages/mylib/io.py", "return torch.from_numpy(arr)")) + \
        "RuntimeError: Numpy is not available\n"
    top, fix = first(log)
    assert "pip install --upgrade numpy torch" in fix and "numpy<2" not in fix, fix


def test_numpy_init_warning_alone_stays_silent():
    healthy(f"{SITE}/torch/_subclasses/functional_tensor.py:267: UserWarning: Failed to initialize NumPy: No module "
            "named 'numpy' (Triggered internally at /pytorch/torch/csrc/utils/tensor_numpy.cpp:84.)\n"
            "  cpu = _conversion_method_template(device=torch.device(\"cpu\"))\nepoch 1: loss=0.52\n")


def test_numpy_not_available_alone_names_numpy_below_2():
    log = frames(("/home/me/app.py", "x = ds[0]"),
                 ("/home/me/.venv/lib/python3.10/site-packages/torch/utils/data/_utils/collate.py",
                  "return collate_numpy_array_fn(batch)")) + "RuntimeError: Numpy is not available\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:numpy" and 'pip install "numpy<2"' in fix, fix


def test_vllm_sampling_params_use_beam_search_from_a_library_upgrades_it_or_pins_vllm():
    log = frames(("/app/venv/lib/python3.11/site-packages/fastchat/serve/vllm_worker.py",
                  "sampling_params = SamplingParams(")) + \
        "TypeError: Unexpected keyword argument 'use_beam_search'\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:vllm"
    assert "pip install --upgrade fastchat" in fix and 'vllm<0.6.3' in fix, fix


def test_vllm_use_beam_search_in_user_code_names_beam_search():
    top, fix = first(_user("params = SamplingParams(n=4, use_beam_search=True)",
                           "TypeError: Unexpected keyword argument 'use_beam_search'"))
    assert "BeamSearchParams" in fix and "vllm<0.6.3" in fix, fix


# --- standard-library names newer than this Python -------------------------------------------------------------------

def test_typing_name_newer_than_python_in_a_package_needs_that_python_not_a_typing_upgrade():
    log = _site("3.9", "outlines", "from typing import TypeAlias",
                "ImportError: cannot import name 'TypeAlias' from 'typing' (/usr/lib/python3.9/typing.py)")
    top, fix = first(log)
    assert ident(top) == "version-constraint:python" and "3.10" in top.title, top.title
    assert "pip install --upgrade typing" not in fix and "outlines" in fix, fix


def test_tomllib_in_user_code_names_tomli():
    log = frames(("/home/me/cfg.py", "import tomllib")) + "ModuleNotFoundError: No module named 'tomllib'\n"
    top, fix = first("Python 3.10.12\n" + log)
    assert "3.11" in top.title and "pip install tomli" in fix, (top.title, fix)


def test_typing_name_on_a_python_that_has_it_is_not_this_class():
    log = _site("3.12", "mylib", "from typing import Self", "ImportError: cannot import name 'Self' from 'typing' "
                "(/home/me/mylib/typing.py)")
    items = [ident(x) for x in scan(log).ordered()]
    assert "version-constraint:python" not in items, items
