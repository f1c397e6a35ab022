"""The structural readers of tune-i1 (issue 22, coverage by frequency): PyTorch's own checks of the user's code and
data. Lines are written here in the shape torch prints them (aten LinearAlgebra.cpp, TensorShape.cpp, LossNLL.cpp,
Convolution.cpp, InferSize.h, autograd's check_inplace, CPython's _pickle.c under torch/serialization.py), not copied
from the corpus; each class has siblings and a healthy neighbour that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import healthy, ident

_TB = ('Traceback (most recent call last):\n  File "/home/ml/proj/train.py", line 88, in <module>\n'
       "    out = model(batch)\n")


def _exc(line: str, frames: str = "") -> str:
    return _TB + frames + line + "\n"


@pytest.mark.parametrize("a,b,c,d", [("32", "2048", "512", "10"), ("64", "200", "256", "10")])
def test_linear_shapes_name_in_features(a, b, c, d):
    top, fix = first(_exc(f"RuntimeError: mat1 and mat2 shapes cannot be multiplied ({a}x{b} and {c}x{d})"))
    assert ident(top) == "unsupported-op:shape"
    assert f"in_features={c}" in fix and f"nn.Linear({b}, {d})" in fix and "torch.flatten(x, 1)" in fix, fix


def test_collate_stack_of_different_sizes():
    frames = ('  File "/opt/venv/lib/python3.11/site-packages/torch/utils/data/_utils/collate.py", line 214, in '
              "collate_tensor_fn\n    return torch.stack(batch, 0, out=out)\n")
    top, fix = first(_exc("RuntimeError: stack expects each tensor to be equal size, but got [3, 256, 256] at entry 0 "
                          "and [3, 240, 320] at entry 3", frames))
    assert ident(top) == "unsupported-op:shape"
    assert "transforms.Resize((H, W))" in fix and "collate_fn" in fix, fix


def test_collate_stack_of_grayscale_and_rgb_says_convert_rgb():
    top, fix = first(_exc("RuntimeError: stack expects each tensor to be equal size, but got [1, 224, 224] at entry 0 "
                          "and [3, 224, 224] at entry 7"))
    assert "convert('RGB')" in fix, fix


def test_dataloader_worker_wrapper_reads_the_inner_check():
    text = ("RuntimeError: Caught RuntimeError in DataLoader worker process 1.\nOriginal Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 309, in _worker_loop\n'
            "    data = fetcher.fetch(index)\n"
            "RuntimeError: stack expects each tensor to be equal size, but got [12] at entry 0 and [9] at entry 1\n")
    top, fix = first(text)
    assert ident(top) == "unsupported-op:shape" and "pad_sequence" in fix, fix


@pytest.mark.parametrize("t,word", [("10", "num_classes"), ("255", "ignore_index=255"), ("-1", "ignore_index=-1")])
def test_target_out_of_bounds(t, word):
    top, fix = first(_exc(f"IndexError: Target {t} is out of bounds."))
    assert ident(top) == "unsupported-op:labels"
    assert word in fix and "0 to C-1" in fix, fix


@pytest.mark.parametrize("i,t,word", [("512", "16", "32 x 16"), ("30", "32", "torch.flatten(x, 1)")])
def test_batch_size_mismatch(i, t, word):
    top, fix = first(_exc(f"ValueError: Expected input batch_size ({i}) to match target batch_size ({t})."))
    assert ident(top) == "unsupported-op:shape" and word in fix, fix


@pytest.mark.parametrize("want,got,word", [("3", "4", "convert('RGB')"), ("3", "1", "Grayscale(num_output_channels=3)"),
                                           ("1", "3", "convert('L')")])
def test_conv_channels(want, got, word):
    line = (f"RuntimeError: Given groups=1, weight of size [32, {want}, 3, 3], expected input[8, {got}, 128, 128] to "
            f"have {want} channels, but got {got} channels instead")
    top, fix = first(_exc(line))
    assert ident(top) == "unsupported-op:shape" and word in fix, fix


def test_conv_channels_last_layout_says_permute():
    top, fix = first(_exc("RuntimeError: Given groups=1, weight of size [16, 3, 5, 5], expected input[4, 64, 64, 3] to "
                          "have 3 channels, but got 64 channels instead"))
    assert "permute(0, 3, 1, 2)" in fix, fix


def test_conv_channels_without_exception_name():
    top, fix = first("[ERROR] failed on cat_01.png: Given groups=1, weight of size [64, 3, 7, 7], expected input[1, 4, "
                     "512, 512] to have 3 channels, but got 4 channels instead\n")
    assert ident(top) == "unsupported-op:shape" and "convert('RGB')" in fix, fix


@pytest.mark.parametrize("prefix", ["RuntimeError: ", "> RuntimeError: "])
def test_view_on_non_contiguous(prefix):
    top, fix = first(_exc(prefix + "view size is not compatible with input tensor's size and stride (at least one "
                          "dimension spans across two contiguous subspaces). Use .reshape(...) instead."))
    # j1's non-contiguous reading (tests/test_structural_j1.py) answers it first since both were merged
    assert ident(top) in ("unsupported-op:shape", "unsupported-op:non-contiguous"), fix
    assert ".contiguous()" in fix and ".reshape(" in fix, fix


def test_invalid_shape_for_size():
    top, fix = first(_exc("RuntimeError: shape '[64, 3136]' is invalid for input of size 100352"))
    assert "x.view(x.size(0), -1)" in fix and "drop_last=True" in fix, fix


@pytest.mark.parametrize("line", [
    "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but got 3-dimensional input of "
    "size [3, 224, 224] instead",
    "RuntimeError: Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 1, 3, 32, 32]"])
def test_unbatched_input(line):
    top, fix = first(_exc(line))
    assert "unsqueeze(0)" in fix, fix


def test_leaf_inplace_and_ambiguous_bool():
    _top, fix = first(_exc("RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."))
    assert "torch.no_grad()" in fix, fix
    _top, fix = first(_exc("RuntimeError: Boolean value of Tensor with more than one value is ambiguous"))
    assert "criterion = nn.CrossEntropyLoss()" in fix and ".any()" in fix, fix


def test_empty_checkpoint_eof():
    frames = ('  File "/opt/venv/lib/python3.10/site-packages/torch/serialization.py", line 1060, in _legacy_load\n'
              "    magic_number = pickle_module.load(f, **pickle_load_args)\n")
    top, fix = first(_exc("EOFError: Ran out of input", frames))
    assert ident(top) == "unsupported-op:checkpoint-file"
    assert "0 bytes" in fix and "download it again" in fix, fix


def test_spawn_eof_says_num_workers_zero():
    frames = ('  File "C:\\Python311\\Lib\\multiprocessing\\spawn.py", line 132, in _main\n'
              "    self = reduction.pickle.load(from_parent)\n")
    _top, fix = first(_exc("EOFError: Ran out of input", frames))
    assert "num_workers=0" in fix and "__main__" in fix, fix


def test_other_messages_of_those_exceptions_stay_generic():
    top, _fix = first(_exc("RuntimeError: mat1 and mat2 must have the same dtype"))
    assert ident(top) != "unsupported-op:shape"
    top, _fix = first(_exc("IndexError: list index out of range"))
    assert not ident(top).startswith("unsupported-op")


def test_healthy_shape_prints_stay_silent():
    healthy("epoch 1: logits torch.Size([32, 10]) labels torch.Size([32])\n"
            "INFO  resized inputs so each tensor has equal size [3, 224, 224]\n"
            "note: Use .reshape(...) instead of .view() where tensors may be non-contiguous\n"
            "loss 0.4213 acc 0.88\n")
