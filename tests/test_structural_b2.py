"""The structural layer's third round (issue 22, tune-b2): a compiled module against another NumPy C
ABI (both directions, every wording NumPy and Cython print), torch.compile refusing a Python (each
torch's wording, the release that supports it from the table), errors that state their requirement
(transformers, accelerate, diffusers-style wordings), bitsandbytes' CUDA binaries. Every line here is
written for these tests in the shape the real tools print (not copied from the corpus)."""

from __future__ import annotations

import pytest

from _explain_items import first as first_item
from _explain_items import fix_text, scan


def first(text: str):
    top = first_item(text)
    return top, fix_text(top).lower()


TB = "Traceback (most recent call last):\n  File \"/srv/app/run.py\", line 3, in <module>\n    import {mod}\n"


# --- NumPy C ABI -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want, not_want", [
    # a module built for NumPy 1.x under NumPy 2 (numpy's own banner, then the import failure)
    ("A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.1.3 as it may crash.\n"
     + TB.format(mod="scipy") + "ImportError: numpy.core.multiarray failed to import\n", "numpy<2", None),
    (TB.format(mod="cv2") + "AttributeError: _ARRAY_API not found\n", "numpy<2", None),
    (TB.format(mod="h5py") + "ImportError: module compiled against ABI version 0x1000009 but this version of numpy "
     "is 0x2000000\n", "numpy<2", None),
    # Cython's size check: the module saw a bigger dtype in its headers than at run time (built on NumPy 2)
    (TB.format(mod="pandas") + "ValueError: numpy.dtype size changed, may indicate binary incompatibility. "
     "Expected 96 from C header, got 88 from PyObject\n", "--upgrade numpy", "numpy<2"),
    (TB.format(mod="sklearn") + "RuntimeError: module compiled against API version 0x10 but this version of numpy "
     "is 0xe\n", "--upgrade numpy", "numpy<2"),
    # code written for NumPy 1 under NumPy 2
    (TB.format(mod="mylib") + "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` "
     "instead.\n", "numpy<2", None),
    # Python 3.8 cannot run NumPy 2: the installed numpy is the older one
    ("Python 3.8.10 (default)\n" + TB.format(mod="torch") + "ImportError: numpy.core.multiarray failed to import\n",
     "--upgrade numpy", "numpy<2"),
])
def test_numpy_abi_direction(text, want, not_want):
    top, fix = first(text)
    assert getattr(top, "subject", None) == "numpy", top
    assert want in fix
    if not_want:
        assert not_want not in fix


def test_numpy_abi_names_the_owner():
    text = (TB.format(mod="pandas") + '  File "/opt/venv/lib/python3.11/site-packages/pandas/__init__.py", line 2\n'
            "AttributeError: _ARRAY_API not found\n")
    _top, fix = first(text)
    assert "install --upgrade pandas" in fix


# --- torch.compile and Python --------------------------------------------------------------------------

@pytest.mark.parametrize("line, since, older", [
    ("RuntimeError: Python 3.11+ not yet supported for torch.compile", "2.1", "3.10"),
    ("RuntimeError: Dynamo is not supported on Python 3.12+", "2.4", "3.11"),
    ("RuntimeError: torch.compile is not supported on Python 3.13+", "2.6", "3.12"),
    ("RuntimeError: torch.compile is not supported on Python 3.14+", "2.10", "3.13"),
])
def test_dynamo_python_names_the_release(line, since, older):
    top, fix = first(TB.format(mod="model") + line + "\n")
    py = line.split("Python ")[1][:4]
    assert f"{py} from {since}" in fix or f"{py} from torch {since}" in fix, fix


def test_dynamo_python_reader_unknown_future_release_names_no_torch():
    from flexdoctor.knowledge.structural import b2
    from flexdoctor.knowledge.structural.collect import Seen
    from flexdoctor.knowledge.structural.context import LogFacts
    line = "RuntimeError: torch.compile is not yet supported on Python 3.15+"
    a = b2.dynamo_python(Seen("dynamo-py", 1, line, {"py": "3.15"}, 0, len(line)), LogFacts())
    assert "3.14" in a.fix.summary and not any("torch>=" in c for c in a.fix.commands)
    a = b2.dynamo_python(Seen("dynamo-py", 1, line, {"py": "3.12"}, 0, len(line)), LogFacts())
    assert a.fix.commands == ('python -m pip install --upgrade "torch>=2.4"',)


# --- errors that state their requirement ---------------------------------------------------------------

@pytest.mark.parametrize("line, want", [
    ("ImportError: Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`: Please run `pip install "
     "transformers[torch]` or `pip install 'accelerate>=0.26.0'`", 'pip install "accelerate>=0.26.0"'),  # read by the backtick-requirement reader (tune-a2)
    ("ImportError: Using `bitsandbytes` 4-bit quantization requires the latest version of bitsandbytes: "
     "`pip install -U bitsandbytes`", "pip install -u bitsandbytes"),
    ("ImportError: tokenizers>=0.14,<0.15 is required for a normal functioning of this module, but found "
     "tokenizers==0.13.3.", 'pip install -u "tokenizers>=0.14,<0.15"'),
    ("ImportError: DeepSpeed is not available => install it using `pip3 install deepspeed` or build it from source",
     "python -m pip install deepspeed"),
    ("ImportError: PeftModel requires the peft library but it was not found in your environment. You can install "
     "it with pip: `pip install peft`", "python -m pip install -u peft"),
])
def test_advice_reads_the_requirement(line, want):
    _top, fix = first(TB.format(mod="train") + line + "\n")
    assert want in fix, fix
    assert "restart" in fix or "install deepspeed" in fix or "accelerate" in want


def test_advice_never_puts_log_text_in_a_command():
    _top, fix = first(TB.format(mod="train") + "ImportError: requires `x;rm>=1.0`\n")
    assert "rm" not in fix.split("\n", 1)[-1]


# --- bitsandbytes' CUDA binaries ------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ("RuntimeError:\n        CUDA Setup failed despite GPU being available. Please run python -m bitsandbytes\n",
     "upgrade bitsandbytes"),
    ("UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers "
     "are unavailable.\n" + TB.format(mod="train") + "AttributeError: 'NoneType' object has no attribute "
     "'cget_col_row_stats'\n", "upgrade bitsandbytes"),
    ("RuntimeError: Configured CUDA binary not found at /opt/venv/lib/python3.11/site-packages/bitsandbytes/"
     "libbitsandbytes_cuda131.so\n", "upgrade bitsandbytes"),
    ("CUDA SETUP: Required library version not found: libbitsandbytes_cuda102.so. Maybe you need to compile it "
     "from source?\nCUDA SETUP: CUDA detection failed!\n", "make cuda_version=102"),
])
def test_bitsandbytes_cuda_binary(text, want):
    _top, fix = first(text)
    assert want in fix, fix


# --- healthy guards ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # numpy's advice printed in a warning, a run that goes on
    "UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
    "torch/csrc/utils/tensor_numpy.cpp:84.)\n100%|##########| 10/10 [00:01<00:00, 9.1it/s]\n",
    # a library telling the user how to get an optional speed-up
    "INFO: for faster loading you can install it with pip: `pip install hf_transfer`\n",
    "WARNING: flash-attn requires `torch>=2.2`; falling back to sdpa\n",
    "Successfully installed accelerate-0.34.2 numpy-1.26.4\n",
    "torch.compile is supported on Python 3.12 from torch 2.4\n",
])
def test_healthy_lines_raise_nothing(text):
    result = scan(text)
    assert not result.problems and not [a for a in result.answers if a.kind != "unknown"], result
