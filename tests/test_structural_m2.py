"""Tuner m2 (issue 22, last wave): fix content for classes whose first answer lacked the remedy people apply.
Lines are written here in the shape the libraries print them (torch's c10/cuda/CUDAException.cpp
c10_cuda_check_implementation: "CUDA error: device-side assert triggered" + the CUDA_LAUNCH_BLOCKING and
TORCH_USE_CUDA_DSA hints), not copied from the corpus."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident

_TORCH_HINTS = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
                "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


# --- a device-side assert without the kernel's assertion line: the usual cause is a label/index out of range ----------

def test_bare_device_side_assert_names_the_label_range_remedy():
    log = frames(("/home/u/proj/train.py", "loss = criterion(logits, y)"),
                 ("/opt/venv/lib/python3.10/site-packages/torch/nn/modules/loss.py",
                  "return F.cross_entropy(input, target, weight=self.weight,")) + \
        "RuntimeError: CUDA error: device-side assert triggered\n" + _TORCH_HINTS
    top, fix = first(log)
    assert ident(top) == "cuda-error:cudaErrorAssert"
    assert "start at 0" in fix and "number of classes" in fix and "ignore_index" in fix, fix
    assert "CUDA_LAUNCH_BLOCKING=1" in fix, fix


def test_device_side_assert_from_an_accelerator_error_line_also_names_the_label_range():
    # torch >= 2.4 prints torch.AcceleratorError for the same CUDA error (c10/util/Exception.h AcceleratorError).
    log = "torch.AcceleratorError: CUDA error: device-side assert triggered\n" + _TORCH_HINTS
    top, fix = first(log)
    assert ident(top) == "cuda-error:cudaErrorAssert"
    assert "start at 0" in fix and "num_embeddings" in fix, fix


def test_kernel_assertion_on_n_classes_keeps_its_specific_reading():
    log = ("/pytorch/aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
           "thread: [3,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
           "RuntimeError: CUDA error: device-side assert triggered\n" + _TORCH_HINTS)
    top, fix = first(log)
    assert ident(top) == "cuda-error:cudaErrorAssert"
    assert "n_classes" in fix or "number of classes" in fix, fix


# --- a library's example script newer than the installed library (check_min_version) -------------------------------
# diffusers/transformers src/*/utils/__init__.py check_min_version: "This example requires a source install from
# HuggingFace <Name> (see `...#install-from-source`)," / "This example requires a minimum version of Y," + " but the
# version found is X.\n"

_SITE = "/home/u/.venv/lib/python3.10/site-packages"


def _check(script: str, lib: str, want: str) -> str:
    return frames((script, f'check_min_version("{want}")'),
                  (f"{_SITE}/{lib}/utils/__init__.py", "raise ImportError(error_message)"))


def test_diffusers_example_from_main_says_install_from_source_or_the_release_tag():
    log = _check("/home/u/diffusers/examples/dreambooth/train_dreambooth_lora_sdxl.py", "diffusers", "0.33.0.dev0") + \
        ("ImportError: This example requires a source install from HuggingFace diffusers (see "
         "`https://huggingface.co/docs/diffusers/installation#install-from-source`), but the version found is 0.32.2.\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:diffusers"
    assert "pip install git+https://github.com/huggingface/diffusers" in fix, fix
    assert "git checkout v0.32.2" in fix and "{" not in fix, fix


def test_transformers_example_sibling_names_transformers_source_install():
    log = _check("/work/transformers/examples/pytorch/translation/run_translation.py", "transformers",
                 "4.48.0.dev0") + \
        ("ImportError: This example requires a source install from HuggingFace Transformers (see "
         "`https://huggingface.co/docs/transformers/installation#install-from-source`), but the version found is "
         "4.47.1.\nCheck out https://github.com/huggingface/transformers/tree/main/examples#important-note for the "
         "examples corresponding to other versions of HuggingFace Transformers.\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:transformers"
    assert "pip install git+https://github.com/huggingface/transformers" in fix, fix


def test_pinned_minimum_version_says_upgrade_to_it():
    log = _check("/content/train_text_to_image.py", "diffusers", "0.24.0") + \
        "ImportError: This example requires a minimum version of 0.24.0, but the version found is 0.21.4.\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:diffusers"
    assert 'pip install --upgrade "diffusers>=0.24.0"' in fix and "0.21.4" in top.cause, fix


def test_pinned_minimum_version_of_an_unknown_library_still_names_the_version():
    log = "ImportError: This example requires a minimum version of 1.2.0, but the version found is 1.1.0.\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:example"
    assert "1.2.0" in fix, fix


def test_readme_text_quoting_the_check_is_not_a_problem():
    # a README / docstring line that quotes the words without raising them
    healthy("INFO: the examples call check_min_version; This example requires a source install from HuggingFace "
            "diffusers when it comes from main.\n"
            "Steps: 10/10 [00:05<00:00, 1.9it/s]\n")


def test_examples_script_importing_a_name_the_installed_diffusers_lacks_says_install_from_source():
    log = frames(("/home/u/src/diffusers/examples/text_to_image/train_text_to_image_lora.py",
                  "from diffusers.training_utils import cast_training_params, compute_snr")) + \
        ("ImportError: cannot import name 'cast_training_params' from 'diffusers.training_utils' "
         f"({_SITE}/diffusers/training_utils.py)\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:diffusers"
    assert "pip install git+https://github.com/huggingface/diffusers" in fix and "git checkout" in fix, fix


def test_own_script_importing_a_missing_diffusers_name_keeps_the_plain_import_name_answer():
    log = frames(("/home/u/proj/pipeline.py", "from diffusers import FluxKontextPipeline")) + \
        (f"ImportError: cannot import name 'FluxKontextPipeline' from 'diffusers' ({_SITE}/diffusers/__init__.py)\n")
    top, _fix = first(log)
    assert ident(top) == "import-name:diffusers.FluxKontextPipeline"
