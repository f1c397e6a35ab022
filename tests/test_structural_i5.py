"""The structural readers of cov12 builder i5 (issue 22): leftovers of the install/platform and Hugging Face lists.
Lines are written here in the shape the real code prints them (CPython's "X() got an unexpected keyword argument 'Y'"
as GitHub's Markdown renders it outside a code block; transformers' Trainer "You cannot perform fine-tuning on purely
quantized models" of trainer.py; torch's multinomial check "probability tensor contains either `inf`, `nan` or element
< 0" of aten/src/ATen/native/Distributions.cpp; torch's "Found no NVIDIA driver" of torch/cuda/__init__.py), not
copied from the corpus; each class has siblings and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident


def _user(code: str, line: str) -> str:
    return frames(("/home/me/finetune.py", code)) + line + "\n"


# --- a kwarg error pasted outside a code block --------------------------------------------------------------------

def test_typographic_quotes_and_eaten_dunder_still_read_the_renamed_kwarg():
    top, fix = first(_user("args = Seq2SeqTrainingArguments(", "TypeError: Seq2SeqTrainingArguments.init() got an "
                           "unexpected keyword argument \u2018evaluation_strategy\u2019"))
    assert ident(top) == "version-constraint:transformers"
    assert "eval_strategy=" in fix, fix


def test_typographic_quotes_sibling_sft_trainer_tokenizer():
    top, fix = first(_user("trainer = SFTTrainer(", "TypeError: SFTTrainer.init() got an unexpected keyword argument "
                           "\u2018tokenizer\u2019"))
    assert "processing_class" in fix, fix


def test_lowercase_init_method_is_not_taken_for_a_dunder():
    from flexdoctor.knowledge.structural.collect import Seen
    from flexdoctor.knowledge.structural.g1 import callee
    text = "TypeError: wandb.init() got an unexpected keyword argument 'foo'"
    s = Seen(uid="g1-kwarg", line=1, text=text, groups={"arg": "foo"}, start=text.index("()"), end=len(text))
    assert callee(s) == ("wandb.init", "init")


# --- no NVIDIA driver: a notebook session without a GPU -----------------------------------------------------------

def test_found_no_nvidia_driver_names_the_notebook_gpu_runtime():
    log = ("Traceback (most recent call last):\n"
           '  File "/content/app/launch.py", line 40, in <module>\n'
           "    device = torch.device(torch.cuda.current_device())\n"
           '  File "/usr/local/lib/python3.11/dist-packages/torch/cuda/__init__.py", line 319, in _lazy_init\n'
           "    torch._C._cuda_init()\n"
           "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
           "a driver from http://www.nvidia.com/Download/index.aspx\n")
    top, fix = first(log)
    assert "Change runtime type" in fix and "modprobe" in fix, fix


# --- Trainer on a quantized model without adapters -----------------------------------------------------------------

_QUANT = ("ValueError: You cannot perform fine-tuning on purely quantized models. Please attach trainable adapters on "
          "top of the quantized model to correctly perform fine-tuning. Please see: "
          "https://huggingface.co/docs/transformers/peft for more details")


def test_purely_quantized_model_names_get_peft_model():
    log = frames(("/home/me/sft.py", "trainer = SFTTrainer(model=model, args=cfg, train_dataset=ds)"),
                 ("/opt/venv/lib/python3.11/site-packages/trl/trainer/sft_trainer.py", "super().__init__("),
                 ("/opt/venv/lib/python3.11/site-packages/transformers/trainer.py", "raise ValueError(")) + _QUANT + "\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:quantized-without-adapters"
    assert "get_peft_model" in fix and "LoraConfig" in fix and "merge_and_unload" in fix, fix


def test_purely_quantized_model_under_unsloth_names_fastlanguagemodel():
    log = frames(("/content/train.py", "trainer = SFTTrainer(model = model, train_dataset = dataset)"),
                 ("/usr/local/lib/python3.11/dist-packages/unsloth/trainer.py", "original_init(self, *args, **kwargs)"),
                 ("/usr/local/lib/python3.11/dist-packages/transformers/trainer.py", "raise ValueError(")) + _QUANT + "\n"
    top, fix = first(log)
    assert "FastLanguageModel.get_peft_model" in fix, fix


def test_pasted_alone_the_quantized_message_still_answers():
    top, fix = first(_QUANT + "\n")
    assert "get_peft_model" in fix, fix


# --- generate() on inf/nan probabilities -----------------------------------------------------------------------------

def test_probability_tensor_nan_answers_bfloat16():
    log = frames(("/home/me/infer.py", "out = model.generate(**inputs, do_sample=True, max_new_tokens=256)"),
                 ("/opt/venv/lib/python3.10/site-packages/transformers/generation/utils.py",
                  "next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)")) + \
        "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:dtype"
    assert "torch_dtype=torch.bfloat16" in fix and "float32" in fix, fix


def test_probability_tensor_without_backticks_sibling():
    top, fix = first("RuntimeError: probability tensor contains either inf, nan or element < 0\n")
    assert ident(top) == "unsupported-op:dtype" and "bfloat16" in fix, fix


def test_healthy_neighbours_stay_silent():
    healthy("Setting `pad_token_id` to `eos_token_id`:2 for open-end generation.\n"
            "UserWarning: `do_sample` is set to `False`. However, `temperature` is set to `0.6` -- this flag is only "
            "used in sample-based generation modes.\n"
            "trainable params: 4,194,304 || all params: 3,504,607,232 || trainable%: 0.1197\n"
            "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.52s/it]\n")
