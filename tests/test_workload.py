"""flexdoctor.workload: the one model of an attention workload and the one parser per word."""

from __future__ import annotations

import json

import pytest

from flexdoctor import workload as wl


@pytest.mark.parametrize("word, n", [("4k", 4096), ("4K", 4096), (" 128 ", 128), (2048, 2048), ("1k", 1024)])
def test_sizes(word, n):
    assert wl.parse_size(word) == n


@pytest.mark.parametrize("word", ["0", "-1", "4x", "k", "", "1.5k", True])
def test_bad_sizes(word):
    with pytest.raises(wl.WorkloadError):
        wl.parse_size(word, "--seq-len")


def test_one_dtype_table():
    assert {wl.parse_dtype(w) for w in ("bf16", "BF16", "bfloat16")} == {"bfloat16"}
    assert wl.parse_dtype("half") == wl.parse_dtype("fp16") == "float16"
    assert wl.parse_dtype("float") == "float32"
    with pytest.raises(wl.WorkloadError, match="choose bf16, fp16 or fp32"):
        wl.parse_dtype("fp8")


@pytest.mark.parametrize("word, mode", [(None, "default"), ("max_autotune", "max-autotune"),
                                        ("reduce-overhead", "reduce-overhead"),
                                        ("MAX-AUTOTUNE-NO-CUDAGRAPHS", "max-autotune-no-cudagraphs")])
def test_modes(word, mode):
    assert wl.parse_mode(word) == mode


def test_bad_mode():
    with pytest.raises(wl.WorkloadError, match="choose default, reduce-overhead"):
        wl.parse_mode("fast")


def test_kernel_options_from_words_and_tables():
    words = wl.parse_kernel_options(["BLOCK_M=64", "BLOCK_N=32,num_stages=2", "BACKEND=FLASH", "PRESCALE_QK=true"])
    assert words == (("BACKEND", "FLASH"), ("BLOCK_M", 64), ("BLOCK_N", 32), ("PRESCALE_QK", True), ("num_stages", 2))
    table = wl.parse_kernel_options({"num_stages": 2, "BLOCK_N": 32, "BLOCK_M": 64, "BACKEND": "FLASH",
                                     "PRESCALE_QK": True})
    assert table == words
    assert wl.parse_kernel_options(None) == ()
    for bad in (["BLOCK_M"], ["BLOCK_M="], ["1X=2"], {"BLOCK_M": [64]}):
        with pytest.raises(wl.WorkloadError):
            wl.parse_kernel_options(bad)


def test_masks_and_score_mods():
    assert wl.parse_mask("swa=256") == "sliding:256"
    assert wl.parse_mask("packed") == "document:4"
    assert wl.parse_score_mod("softcap") == "softcap:30"
    with pytest.raises(wl.WorkloadError):
        wl.parse_mask("sliding")
    with pytest.raises(wl.WorkloadError):
        wl.parse_score_mod("softcap:x")


def test_make_validates():
    w = wl.make(dtype="bf16", heads=32, kv_heads=8, seq_len="4k", head_dim=128, mask="causal")
    assert (w.dtype, w.seq_len, w.kv_heads_or_heads, w.kv_len_or_seq_len, w.backward) == \
        ("bfloat16", 4096, 8, 4096, True)
    assert wl.make(device="cpu").backward is False  # torch 2.11+ rejects CPU backward
    with pytest.raises(wl.WorkloadError, match="flex_attention needs at least 16"):
        wl.check_flex(wl.make(head_dim=8))  # SDPA takes it (bench), flex does not (warm-cache)
    for bad in (dict(heads=32, kv_heads=7), dict(device="tpu"), dict(batch=0),
                dict(dynamic="maybe"), dict(shapes="ragged")):
        with pytest.raises(wl.WorkloadError):
            wl.make(**bad)


def test_identity_round_trips_through_json():
    w = wl.make(mode="max-autotune", dynamic=True, fullgraph=True, kernel_options={"BLOCK_M": 64})
    back = wl.Workload.from_dict(json.loads(json.dumps(w.to_dict())))
    assert back == w and hash(back) == hash(w)
    assert w != w.replace(mode="default")


def test_names_of_configs_without_compile_options_are_unchanged():
    """Manifests written before compile options existed name configs the same way."""
    w = wl.make(dtype="bf16", heads=32, kv_heads=8, head_dim=128, seq_len=4096, mask="causal")
    assert w.name == "bf16 B1 H32/8 L4096 D128 causal fwd+bwd cuda"
    full = w.replace(mode="max-autotune-no-cudagraphs", fullgraph=True, dynamic=True,
                     kernel_options={"BLOCK_M": 64})
    assert full.name == ("bf16 B1 H32/8 L4096 D128 causal dynamic max-autotune-no-cudagraphs fullgraph "
                         "BLOCK_M=64 fwd+bwd cuda")


def test_reads_the_old_shapes_field():
    """Configs in today's manifests and bundles say shapes: static|dynamic and have no mode."""
    old = {"dtype": "float32", "head_dim": 16, "heads": 2, "kv_heads": None, "seq_len": 128, "kv_len": None,
           "batch": 1, "mask": "causal", "score_mod": "none", "shapes": "static", "device": "cpu",
           "backward": False, "kernel_options": {}}
    w = wl.Workload.from_dict(old)
    assert (w.dynamic, w.mode, w.fullgraph) == (False, "default", False)
    assert wl.Workload.from_dict({**old, "shapes": "dynamic"}).dynamic is True
