"""What SimpleTuner's options mean for attention, as verified in its sources (no import of it).

Sources read (github.com/bghira/SimpleTuner, main at bc8e6ab7, 2026-08; setup.py pins
``diffusers>=0.36.0``) and huggingface/diffusers (v0.35.0 ... v0.42.1 from PyPI):

- ``--attention_mechanism`` choices: the argparse ``choices`` come from the field registry list in
  simpletuner/simpletuner_sdk/server/services/field_registry/sections/advanced.py
  (``attention_mechanisms = [...]``, default ``"diffusers"``); cmd_args.py
  ``_add_argument_from_field`` passes them to argparse, so any other spelling ("flex-attn",
  "flash_attn", which attention_backend.py would also accept) is rejected at start-up.
- What each value does: simpletuner/helpers/training/attention_backend.py
  ``AttentionBackendController.apply``: ``sageattention*`` / ``metal-flash-attention*`` / ``sla``
  replace ``torch.nn.functional.scaled_dot_product_attention`` globally (so they reach every model
  that calls SDPA); the values in ``_DIFFUSERS_BACKEND_TARGETS`` enter diffusers'
  ``attention_backend(AttentionBackendName(target))`` context after
  ``_check_attention_backend_requirements``; anything else (``diffusers``) restores the default,
  i.e. diffusers' own active backend: ``native`` SDPA unless ``DIFFUSERS_ATTN_BACKEND`` says
  otherwise. ``xformers`` is applied by trainer.py (``enable_xformers_memory_efficient_attention``).
- Compilation: ``--dynamo_backend`` (field registry advanced.py, default ``"no"``; also
  ``dynamo_mode``, ``dynamo_fullgraph``, ``dynamo_dynamic``, ``dynamo_use_regional_compilation``)
  builds Accelerate's ``TorchDynamoPlugin`` in trainer.py, which ``accelerator.prepare`` applies
  to the model. In config.env, ``TRAINING_DYNAMO_BACKEND`` and ``TRAINER_DYNAMO_BACKEND`` are
  skipped by env_file.load_env_config; simpletuner/train.sh passes ``TRAINING_DYNAMO_BACKEND`` to
  ``accelerate launch --dynamo_backend`` only when no accelerate config file exists (with one, its
  ``dynamo_config`` decides), and no launch path reads ``TRAINER_DYNAMO_BACKEND`` (see
  project/simpletuner.py). Only
  ``inductor`` lowers flex_attention to a fused Triton kernel; the other Dynamo backends run
  flex's unfused reference implementation.
- Precision: ``--mixed_precision`` choices no|fp16|bf16|fp8 (default bf16, advanced.py);
  ``--base_model_precision`` choices ``quantised_precision_levels`` in
  simpletuner/helpers/training/__init__.py (weights only: attention inputs stay in the compute
  dtype). safety_check.py exits when a ``sageattention*`` mechanism meets an ``nf4`` base model.
- Model families: simpletuner/helpers/models/model_metadata.json; which denoiser each family
  trains and whether its attention calls diffusers' ``dispatch_attention_fn`` was read from each
  family's transformer module (see FAMILIES).
"""

from __future__ import annotations

# SimpleTuner's --attention_mechanism choices (field_registry/sections/advanced.py), in its order.
MECHANISMS = (
    "diffusers", "xformers", "sla", "sageattention", "sageattention-int8-fp16-triton",
    "sageattention-int8-fp16-cuda", "sageattention-int8-fp8-cuda", "flash-attn", "flash-attn-hub",
    "flash-attn-2", "flash-attn-varlen-hub", "flash-attn-3", "flash-attn-3-hub", "flash-attn-3-varlen",
    "flash-attn-3-varlen-hub", "flash-attn-4-hub", "flex", "metal-flash-attention",
    "metal-flash-attention-int8", "metal-flash-attention-int4", "native", "cudnn", "native-efficient",
    "native-flash", "native-math", "native-npu", "native-xla",
)
DEFAULT_MECHANISM = "diffusers"

# attention_backend.py _DIFFUSERS_BACKEND_TARGETS, restricted to the argparse choices above:
# mechanism -> diffusers AttentionBackendName value.
DISPATCHER_BACKENDS = {
    "flash-attn": "flash",
    "flash-attn-hub": "flash_hub",
    "flash-attn-2": "flash_varlen",
    "flash-attn-varlen-hub": "flash_varlen_hub",
    "flash-attn-3": "_flash_3",
    "flash-attn-3-hub": "_flash_3_hub",
    "flash-attn-3-varlen": "_flash_varlen_3",
    "flash-attn-3-varlen-hub": "_flash_3_varlen_hub",
    "flash-attn-4-hub": "flash_4_hub",
    "flex": "flex",
    "native": "native",
    "cudnn": "_native_cudnn",
    "native-efficient": "_native_efficient",
    "native-flash": "_native_flash",
    "native-math": "_native_math",
    "native-npu": "_native_npu",
    "native-xla": "_native_xla",
}

# Spellings attention_backend.py understands but argparse rejects: suggest the accepted one.
ALIASES = {
    "flex-attn": "flex", "flex_attn": "flex", "flash": "flash-attn", "flash_attn": "flash-attn",
    "flash-attn-varlen": "flash-attn-2", "flash_attn_2": "flash-attn-2", "flash3": "flash-attn-3",
    "flash_attn_3": "flash-attn-3", "native-cudnn": "cudnn", "sdpa": "diffusers", "sage": "sageattention",
}


def mechanism_kind(mechanism: str) -> str:
    """default | dispatcher | sdpa-patch | xformers | unknown."""
    if mechanism == DEFAULT_MECHANISM:
        return "default"
    if mechanism in DISPATCHER_BACKENDS:
        return "dispatcher"
    if mechanism.startswith(("sageattention", "metal-flash-attention")) or mechanism == "sla":
        return "sdpa-patch"
    if mechanism == "xformers":
        return "xformers"
    return "unknown"


# diffusers backends whose registered constraints include _check_qkv_dtype_bf16_or_fp16
# (models/attention_dispatch.py, 0.35-0.42): fp32 attention inputs raise
# "Query, key, and value must be either bfloat16 or float16." (with DIFFUSERS_ATTN_CHECKS) or the
# kernel's own dtype error. flex, native, _native_efficient, _native_math accept fp32.
HALF_ONLY_BACKENDS = frozenset({
    "flash", "flash_hub", "flash_varlen", "flash_varlen_hub", "flash_4_hub", "_flash_3", "_flash_varlen_3",
    "_flash_3_hub", "_flash_3_varlen_hub", "aiter", "aiter_fa2_hub", "_native_cudnn", "_native_flash",
    "_native_npu", "sage", "sage_hub", "sage_blackwell_hub", "sage_varlen",
})
# Backends registered with _check_qkv_dtype_bf16 (0.40-0.42: aiter_fa2_hub, whose CK kernel ships
# bf16 mha_fwd instances only): fp16 raises "Query, key, and value must be bfloat16." too.
BF16_ONLY_BACKENDS = frozenset({"aiter_fa2_hub"})
# Backends that need an NVIDIA (CUDA) device: flash-attn kernels, cuDNN/flash SDPA, SageAttention.
CUDA_ONLY_BACKENDS = HALF_ONLY_BACKENDS - {"_native_npu"} | {
    "_sage_qk_int8_pv_fp8_cuda", "_sage_qk_int8_pv_fp8_cuda_sm90", "_sage_qk_int8_pv_fp16_cuda",
    "_sage_qk_int8_pv_fp16_triton", "xformers",
}


def is_hub_backend(backend: str) -> bool:
    """Hub backends download a kernel (``kernels`` package) when enabled: never probe them."""
    return backend.endswith("_hub")


# --mixed_precision choices -> the dtype attention runs in.
MIXED_PRECISION = {"no": "fp32", "fp16": "fp16", "bf16": "bf16", "fp8": "bf16"}
DEFAULT_MIXED_PRECISION = "bf16"
# --dynamo_backend choices (advanced.py); only inductor fuses flex_attention.
DYNAMO_BACKENDS = ("no", "inductor", "eager", "aot_eager", "aot_ts_nvfuser", "nvprims_nvfuser", "cudagraphs",
                   "ofi", "fx2trt", "onnxrt", "tensorrt", "ipex", "tvm", "hpu_backend")
FLEX_FUSING_DYNAMO = frozenset({"inductor"})

# Model family -> how its denoiser computes attention in SimpleTuner (helpers/models/<family>/):
#   dispatcher: calls diffusers' dispatch_attention_fn, so --attention_mechanism picks the kernel;
#   unet:       a diffusers-style UNet whose AttnProcessor2_0 calls torch SDPA directly;
#   sdpa:       SimpleTuner's own transformer calling torch SDPA (or its own kernels) directly.
# chroma and longcat_image reach the dispatcher through diffusers' FluxAttnProcessor
# (diffusers models/transformers/transformer_flux.py calls dispatch_attention_fn since 0.35);
# kandinsky5_image re-exports kandinsky5_video's transformer. flux (FLUX.1) has its own
# transformer.py calling F.scaled_dot_product_attention; with fuse_qkv_projections and a flash-*
# mechanism, flux and chroma use SimpleTuner's FluxFusedFlashAttnProcessor3 (flash-attn directly).
FAMILIES = {
    "ace_step": "sdpa", "anima": "sdpa", "auraflow": "sdpa", "boogu_image": "sdpa", "chroma": "dispatcher",
    "cosmos": "sdpa", "cosmos3": "dispatcher", "deepfloyd": "unet", "ernie": "dispatcher", "flux": "sdpa",
    "flux2": "dispatcher", "heartmula": "sdpa", "hidream": "sdpa", "hunyuanvideo": "dispatcher",
    "ideogram": "sdpa", "infinitetalk": "sdpa", "kandinsky5_image": "dispatcher",
    "kandinsky5_video": "dispatcher", "kolors": "unet", "krea2": "dispatcher", "longcat_image": "dispatcher",
    "longcat_video": "dispatcher", "ltxvideo": "dispatcher", "ltxvideo2": "dispatcher", "lumina2": "sdpa",
    "mageflow": "sdpa", "minimaxh3": "dispatcher", "minimaxmusic": "dispatcher", "omnigen": "sdpa",
    "pixart": "sdpa", "qwen_image": "dispatcher", "sana": "sdpa", "sanavideo": "dispatcher", "sd1x": "unet",
    "sd3": "sdpa", "sdxl": "unet", "stable_cascade": "unet", "wan": "dispatcher", "wan_s2v": "sdpa",
    "z_image": "dispatcher", "z_image_omni": "dispatcher", "zlab_i1": "sdpa",
}
# Families that fall back silently on their own: qwen_image's transformer.py
# attention_with_oom_fallback() switches to tiled SDPA after an out-of-memory error.
OOM_FALLBACK_FAMILIES = frozenset({"qwen_image"})
FUSED_FLASH_FAMILIES = frozenset({"flux", "chroma"})

# diffusers/utils/constants.py: DIFFUSERS_ATTN_CHECKS = os.getenv(..., "0") in ENV_VARS_TRUE_VALUES
# ({"1", "ON", "YES", "TRUE"}); 0.35.x compares the raw value, 0.36+ compares value.upper().
ENV_TRUE_VALUES = frozenset({"1", "ON", "YES", "TRUE"})
ENV_FALSE_VALUES = frozenset({"", "0", "OFF", "NO", "FALSE"})
CHECKS_CASE_INSENSITIVE_SINCE = (0, 36)
DISPATCHER_SINCE = (0, 35)
SIMPLETUNER_MIN_DIFFUSERS = (0, 36)  # SimpleTuner setup.py: diffusers>=0.36.0

# AttentionBackendName values across diffusers 0.35.0-0.42.1, for judging a value statically
# when diffusers cannot be imported (the installed enum wins whenever it can be read). "aiter"
# (the aiter package, ROCm) exists in 0.36-0.39; 0.40 replaced it with "aiter_fa2_hub".
KNOWN_BACKENDS = frozenset({
    "flash", "flash_hub", "flash_varlen", "flash_varlen_hub", "flash_4_hub", "_flash_3", "_flash_varlen_3",
    "_flash_3_hub", "_flash_3_varlen_hub", "aiter", "aiter_fa2_hub", "flex", "native", "_native_cudnn",
    "_native_efficient", "_native_flash", "_native_math", "_native_npu", "_native_xla", "sage", "sage_hub",
    "sage_blackwell_hub", "sage_varlen", "_sage_qk_int8_pv_fp8_cuda", "_sage_qk_int8_pv_fp8_cuda_sm90",
    "_sage_qk_int8_pv_fp16_cuda", "_sage_qk_int8_pv_fp16_triton", "xformers",
})
