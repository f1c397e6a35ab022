"""The structural readers of tune-h5 (issue 22, round 10 train): fix content for the meta-tensor copy, and the classes
h5 adds. Lines are written here in the shape the real code prints (aten's "Cannot copy out of meta tensor" in
aten/src/ATen/native/TensorConversions.cpp / torch/_meta_registrations.py, ...), not copied from the corpus; each class
has a sibling and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident

SITE = "/home/ml/.venv/lib/python3.10/site-packages"


# --- a module moved off 'meta' with weights never loaded: the model file, or device_map offload -----------------------
# The threads: kijai/ComfyUI-FluxTrainer#80/#127 (maintainer: "some weights were not loaded", the wrong model file),
# kohya-ss/sd-scripts#1454 (a repacked/fp8 Flux file), generative-ai-on-aws#4 (device_map offload on a small GPU).

def test_meta_copy_names_the_model_file_and_offload():
    log = frames(("/srv/train/train_network.py", "unet.to(accelerator.device, dtype=weight_dtype)"),
                 (f"{SITE}/torch/nn/modules/module.py", "return self._apply(convert)")) + \
        "NotImplementedError: Cannot copy out of meta tensor; no data!\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:device", ident(top)
    assert "wrong model file" in fix and "offload" in fix and "to_empty" in fix, fix


def test_meta_copy_sibling_with_to_empty_hint_in_a_node_report():
    top, fix = first("ERROR    !!! Exception during processing !!! Cannot copy out of meta tensor; no data! Please use "
                     "torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving module from meta to a "
                     "different device.\n")
    assert "model file" in fix, fix


def test_meta_device_notice_stays_silent():
    healthy("UserWarning: for model.layers.0.weight: copying from a non-meta parameter in the checkpoint to a meta "
            "parameter in the current model, which is a no-op. (Did you mean to pass `assign=True`?)\n"
            "Some parameters are on the meta device because they were offloaded to the cpu.\n")


# --- CUDA out of memory while training: the batch size is the first knob (the threads' answer) -----------------------

def test_cuda_oom_names_the_batch_size():
    log = frames(("/srv/train.py", "loss = model(**batch).loss")) + \
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB. GPU 0 has a total capacity of "
         "11.72 GiB of which 40.31 MiB is free. Including non-PyTorch memory, this process has 11.67 GiB memory in use.\n")
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda" and "batch size" in fix and "gradient checkpointing" in fix, fix
