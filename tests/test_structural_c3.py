"""The structural layer's round-4 readers of tune-c3 (issue 22): tensors in different dtypes or on different
devices, Dynamo and CUDA graphs at run time, Triton's fp8 formats by GPU, transformers' attention selection
and flash-attn's run-time checks. Every line here is written for these tests in the shape the real code
prints (ATen, torch/_dynamo, triton, transformers' modeling_utils.py, flash-attn's flash_api.cpp), not
copied from the corpus; each class has a sibling wording and a healthy line that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import fix_text, healthy, ident


def tb(frame_path: str, code: str, last: str) -> str:
    return (f'Traceback (most recent call last):\n  File "/home/u/run.py", line 12, in <module>\n    out = model(x)\n'
            f'  File "{frame_path}", line 114, in forward\n    {code}\n{last}\n')


LINEAR = "/home/u/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py"
CONV = "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py"
EMB = "/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py"


# --- dtype mismatches ---------------------------------------------------------------------------------

@pytest.mark.parametrize("last, want", [
    ("RuntimeError: expected scalar type Half but found Float", "autocast"),
    ("RuntimeError: expected scalar type BFloat16 but found Float", "x.to(model.dtype)"),
    ("RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16", "torch_dtype"),
    ("RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half", "autocast"),
    ("RuntimeError: expected m1 and m2 to have the same dtype, but got: c10::Half != float", "x.to(model.dtype)"),
    ("RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same",
     "autocast"),
    ("RuntimeError: Input type (c10::Half) and bias type (float) should be the same", "autocast"),
])
def test_float_precision_mix_is_autocast_or_cast(last, want):
    top, fix = first(tb(LINEAR, "return F.linear(input, self.weight, self.bias)", last))
    assert ident(top) == "unsupported-op:dtype", ident(top)
    assert want in fix, fix


@pytest.mark.parametrize("last, want", [
    ("RuntimeError: expected scalar type Long but found Float", ".long()"),
    ("RuntimeError: Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
     "but got torch.cuda.FloatTensor instead (while checking arguments for embedding)", ".long()"),
    ("RuntimeError: Found dtype Long but expected Float", "y.float()"),
    ("RuntimeError: Input type (torch.cuda.ByteTensor) and weight type (torch.cuda.FloatTensor) should be the same",
     "/ 255"),
    ("RuntimeError: expected scalar type Double but found Float", ".float()"),
    ("RuntimeError: Expected object of scalar type Float but got scalar type Double for argument #2 'mat1' in call "
     "to _th_addmm", "torch.from_numpy(a).float()"),
])
def test_integer_and_float64_mismatches_name_their_cast(last, want):
    top, fix = first(tb(EMB, "return torch._C._nn.cross_entropy_loss(input, target)", last))
    assert ident(top) == "unsupported-op:dtype", ident(top)
    assert want in fix, fix


def test_sdpa_mask_dtype():
    last = ("RuntimeError: Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            "attn_mask.dtype: long int and  query.dtype: c10::Half instead.")
    top, fix = first(tb(EMB, "attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)", last))
    assert "mask.bool()" in fix, fix


# --- device mismatches --------------------------------------------------------------------------------

@pytest.mark.parametrize("last", [
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
    "(when checking argument for argument index in method wrapper_CUDA__index_select)",
    "RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from other "
    "tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)",
    "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or "
    "input should be a MKLDNN tensor and weight is a dense tensor",
    "RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cpu and parameter "
    "tensor at cuda:0",
    "RuntimeError: Expected object of device type cuda but got device type cpu for argument #1 'self' in call to "
    "_th_index_select",
    "RuntimeError: Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking arguments "
    "for addmm)",
])
def test_inputs_on_the_cpu_go_to_the_models_device(last):
    top, fix = first(tb(EMB, "return torch.embedding(weight, input, padding_idx)", last))
    assert ident(top) == "unsupported-op:device", ident(top)
    assert "inputs.to(model.device)" in fix, fix


def test_two_gpus_is_device_map_advice():
    last = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 "
            "and cuda:0! (when checking argument for argument mat2 in method wrapper_CUDA_mm)")
    top, fix = first(tb(LINEAR, "return F.linear(input, self.weight, self.bias)", last))
    assert "CUDA_VISIBLE_DEVICES=0" in fix and "inputs.to(model.device)" in fix, fix


def test_mps_placeholder_storage_is_a_device_mismatch():
    top, fix = first(tb(LINEAR, "return F.linear(input, self.weight, self.bias)",
                        "RuntimeError: Placeholder storage has not been allocated on MPS device!"))
    # tune-c4 reads the same line as an MPS placement (subject "mps"), with the same remedy
    assert ident(top) in ("unsupported-op:device", "unsupported-op:mps") and 'model.to("mps")' in fix, fix


def test_meta_device_is_loading_advice():
    last = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, meta and "
            "cuda:0!")
    top, fix = first(tb(LINEAR, "return F.linear(input, self.weight, self.bias)", last))
    assert "assign=True" in fix, fix


def test_fake_tensor_device_propagation_under_compile():
    text = ("torch._dynamo.exc.TorchRuntimeError: Failed running call_function <built-in function linear>(*(FakeTensor"
            "(..., device='cuda:0', size=(8, 512)), Parameter(FakeTensor(..., size=(512, 512))), None), **{}):\n"
            "Unhandled FakeTensor Device Propagation for aten.mm.default, found two different devices cuda:0, cpu\n")
    top, fix = first(text)
    assert ident(top) == "unsupported-op:device", ident(top)


def test_a_mismatch_in_a_warning_or_survived_traceback_is_silent():
    healthy("/usr/lib/python3/dist-packages/accelerate/utils/modeling.py:1363: UserWarning: Expected all tensors to "
            "be on the same device, but found at least two devices, cuda:0 and cpu! Moving them to cuda:0\n"
            "Epoch 1: 100%|##########| 50/50 [00:10<00:00,  4.91it/s, loss=0.31]\n")
    healthy("WARNING: expected scalar type Half but found Float; retrying under autocast\n"
            "step 10 | loss 2.31\n")


# --- Dynamo and CUDA graphs ------------------------------------------------------------------------------

DYN = ('  File "/w/.venv/lib/python3.12/site-packages/torch/_dynamo/exc.py", line 317, in unimplemented\n'
       '    raise Unsupported(msg, case_name=case_name)\n')


@pytest.mark.parametrize("msg, want", [
    ("torch._dynamo.exc.Unsupported: call_function BuiltinVariable(print) [ConstantVariable()] {}", "print()"),
    ("torch._dynamo.exc.Unsupported: Data-dependent branching", "torch.cond"),
    ("torch._dynamo.exc.Unsupported: generic_jump TensorVariable()", "torch.cond"),
    ("torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped", "torch.compiler.disable"),
    ("torch._dynamo.exc.Unsupported: Unsupported Tensor.item() call with capture_scalar_outputs=False",
     "capture_scalar_outputs = True"),
    ("torch._dynamo.exc.Unsupported: dynamic shape operator: aten.nonzero.default; to enable, set "
     "torch._dynamo.config.capture_dynamic_output_shape_ops = True", "capture_dynamic_output_shape_ops"),
    ("torch._dynamo.exc.Unsupported: Graph break under GenericContextWrappingVariable", "fullgraph=True"),
    ("torch._dynamo.exc.UserError: Dynamic control flow is not supported at the moment. Please use "
     "functorch.experimental.control_flow.cond to explicitly capture the control flow.", "torch.cond"),
])
def test_dynamo_unsupported_names_the_break_and_fullgraph(msg, want):
    top, fix = first("Traceback (most recent call last):\n" + DYN + msg + "\n\nfrom user code:\n"
                     '   File "/w/model.py", line 41, in forward\n    print("shape", x.shape)\n')
    assert ident(top) == "unsupported-op:dynamo", ident(top)
    assert want in fix and "torch._dynamo.explain" in fix, fix


def test_graph_break_log_lines_of_a_run_that_went_on_are_silent():
    healthy('V1120 10:02:11.123000 torch/_dynamo/symbolic_convert.py:444] [0/0] [__graph_breaks] Graph break in user '
            'code at /w/model.py:41\nReason: Unsupported: call_function BuiltinVariable(print) [ConstantVariable()] {}\n'
            "step 1 | loss 2.01\n")
    healthy("[rank0]:W1120 torch/_dynamo/convert_frame.py:1125] WON'T CONVERT forward /w/model.py line 30\n"
            "[rank0]:W1120 torch._dynamo.exc.Unsupported: Data-dependent branching\n"
            "Epoch 1: 100%|##########| 50/50 [00:10<00:00,  4.91it/s, loss=0.31]\n")


def test_fx_trace_of_a_compiled_function():
    top, fix = first(tb("/opt/conda/lib/python3.10/site-packages/torch/fx/_symbolic_trace.py", "raise RuntimeError(",
                        "RuntimeError: Detected that you are using FX to symbolically trace a dynamo-optimized "
                        "function. This is not supported at the moment."))
    assert "_orig_mod" in fix, fix


def test_cudagraph_output_overwritten():
    top, fix = first(tb("/home/u/infer.py", "print(out1.sum())",
                        "RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
                        "subsequent run. Stack trace: File \"/home/u/model.py\", line 20, in forward"))
    assert "cudagraph_mark_step_begin" in fix and ".clone()" in fix, fix


# --- Triton's fp8 formats ------------------------------------------------------------------------------

SEM = ('  File "/opt/venv/lib/python3.12/site-packages/triton/language/semantic.py", line 1500, in dot\n'
       '    assert False, msg\n')


def test_fp8e4nv_on_mi300_is_the_fnuz_format():
    top, fix = first("Traceback (most recent call last):\n" + SEM + "AssertionError: type fp8e4nv not supported in "
                     "this architecture. The supported fp8 dtypes are ('fp8e4b8', 'fp8e5b16')\n")
    assert ident(top) == "unsupported-op:fp8e4nv" and "float8_e4m3fnuz" in fix, fix


def test_fp8e4nv_on_an_old_nvidia_gpu_stays_the_entrys():
    top, fix = first("Traceback (most recent call last):\n" + SEM + "AssertionError: type fp8e4nv not supported in "
                     "this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\n")
    assert ident(top) == "FDE125", ident(top)


def test_fp8e4b15_on_hopper():
    top, fix = first("Traceback (most recent call last):\n" + SEM + "AssertionError: type fp8e4b15 not supported in "
                     "this architecture. The supported fp8 dtypes are ('fp8e4nv', 'fp8e5')\n")
    assert ident(top) == "unsupported-op:fp8e4b15" and "fp8e4nv" in fix, fix


# --- transformers' attention selection --------------------------------------------------------------------

MU = ('  File "/usr/local/lib/python3.10/dist-packages/transformers/modeling_utils.py", line 1451, in '
      '_check_and_enable_flash_attn_2\n    raise ValueError(\n')


def hf(last: str) -> str:
    return "Traceback (most recent call last):\n" + MU + last + "\n"


@pytest.mark.parametrize("last, want", [
    ("ValueError: GPTBigCodeForCausalLM does not support Flash Attention 2.0 yet. Please request to add support where "
     "the model is hosted, on its model hub page: https://huggingface.co/bigcode/starcoder/discussions/new or in the "
     "Transformers GitHub repo: https://github.com/huggingface/transformers/issues/new", 'attn_implementation="sdpa"'),
    ("ValueError: Qwen2AudioEncoder does not support Flash Attention 2 yet. Please request to add support where the "
     "model is hosted", 'attn_implementation="sdpa"'),
    ("ValueError: T5ForConditionalGeneration does not support an attention implementation through "
     "torch.nn.functional.scaled_dot_product_attention yet. Please request the support for this architecture: "
     "https://github.com/huggingface/transformers/issues/28005.", 'attn_implementation="eager"'),
    ("ValueError: MistralForCausalLM does not support an attention implementation through torch's flex_attention. "
     "Please request the support for this architecture", 'attn_implementation="sdpa"'),
    ('ValueError: Specified `attn_implementation="flash_attention_3"` is not supported. The only possible arguments '
     'are `attn_implementation="eager"` (manual attention implementation)', "pip install --upgrade transformers"),
    ('ValueError: Specified `attn_implementation="\'eager\'"` is not supported. The only possible arguments are '
     '`attn_implementation="eager"` (manual attention implementation)', "attn_implementation=eager"),
    ("ImportError: FlashAttention3 has been toggled on, but it cannot be used due to the following error: the package "
     "for FlashAttention3 doesn't seem to be installed.", "hopper/"),
    ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
     "FlashAttention2 requires at least version `2.3.3`.", "pip install --upgrade flash-attn"),
    ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
     "FlashAttention2 is not available on CPU. Please make sure you are on any of the supported devices: ('cuda',).",
     'attn_implementation="sdpa"'),
    ("ImportError: FlashAttention3 has been toggled on, but it cannot be used due to the following error: "
     "FlashAttention3 requires compute capability >= 9, but found (8, 6) with compute capability 8.x",
     'attn_implementation="flash_attention_2"'),
    ("ValueError: Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes. You passed "
     "torch.float32, this might lead to unexpected behaviour.", "torch_dtype=torch.bfloat16"),
    ("ImportError: PyTorch SDPA requirements in Transformers are not met. Please install torch>=2.1.1.",
     "torch>=2.1.1"),
])
def test_transformers_attention_selection_names_the_implementation_to_ask_for(last, want):
    top, fix = first(hf(last))
    assert want in fix, (ident(top), fix)


def test_flash_attention_dtype_warning_alone_is_silent():
    # transformers >= 4.37 only warns (logger.warning_once) and the run goes on
    healthy("Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes, but the current dype in "
            "LlamaForCausalLM is torch.float32. You should run training or inference using Automatic Mixed-Precision "
            "via the `with torch.autocast(device_type='torch_device'):` decorator, or load the model with the "
            "`torch_dtype` argument.\n{'loss': 1.93, 'learning_rate': 2e-05, 'epoch': 0.1}\n")


# --- flash-attn's run-time checks -----------------------------------------------------------------------

FA = ('  File "/home/u/.venv/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 90, in '
      '_flash_attn_backward\n    dq, dk, dv, softmax_d, = flash_attn_cuda.bwd(\n')


def fa(last: str) -> str:
    return "Traceback (most recent call last):\n" + FA + last + "\n"


@pytest.mark.parametrize("last, want", [
    ("RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800", "2.5.5"),
    ("RuntimeError: FlashAttention backward for head dim 256 with dropout, or head dim 224 with/without dropout "
     "requires A100/A800 or H100/H800", "dropout to 0"),
    ("RuntimeError: Expected is_sm80 to be true, but got false.  (Could this error message be improved?  If so, "
     "please report an enhancement request to PyTorch.)", "pip install --upgrade flash-attn"),
    ("RuntimeError: Expected is_sm90 || is_sm8x to be true, but got false.", 'attn_implementation="sdpa"'),
    ("RuntimeError: cu_seqlens_q must have shape (batch_size + 1)", "torch.cumsum"),
    ("RuntimeError: cu_seqlens_k must have dtype int32", "dtype=torch.int32"),
    ("RuntimeError: Input tensor must have contiguous last dimension", ".contiguous()"),
    ("RuntimeError: Number of heads in key/value must divide number of heads in query", "repeat_interleave"),
    ("RuntimeError: FlashAttention only supports Hopper GPUs or newer.", "flash_attention_2"),
    ("RuntimeError: q must have shape (batch_size, seqlen_q, num_heads, head_size_og)", "transpose(1, 2)"),
])
def test_flash_attn_checks_name_the_change(last, want):
    top, fix = first(fa(last))
    assert want in fix, (ident(top), fix)


def test_torch_20_flash_check_on_sm86_is_a_torch_answer():
    text = ('Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py"'
            ', line 5101, in multi_head_attention_forward\n    attn_output = scaled_dot_product_attention(q, k, v)\n'
            "RuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.  (Could this error message be "
            "improved?  If so, please report an enhancement request to PyTorch.)\n")
    top, fix = first(text)
    assert "enable_flash=False" in fix and "2.0.1" in fix, fix


# --- one tensor in the wrong place (NumPy, torch.load, meta) and diffusers' backends --------------------------

@pytest.mark.parametrize("last, want", [
    ("TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
     "first.", "x.detach().cpu().numpy()"),
    ("RuntimeError: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
     "x.detach().cpu().numpy()"),
    ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
     "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your "
     "storages to the CPU.", 'map_location="cpu"'),
    ("RuntimeError: Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use "
     "torch.load with map_location to map your storages to an existing device.", 'map_location="cuda:0"'),
    ("NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of "
     "torch.nn.Module.to() when moving module from meta to a different device.", "to_empty"),
    ("RuntimeError: Tensor on device cpu is not on the expected device meta!", "assign=True"),
    ("RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)",
     "inputs.to(model.device)"),
])
def test_one_tensor_in_the_wrong_place(last, want):
    top, fix = first(tb("/w/.venv/lib/python3.11/site-packages/torch/serialization.py", "return torch.load(f)", last))
    assert ident(top) == "unsupported-op:device", ident(top)
    assert want in fix, fix


def test_old_transformers_wordings():
    top, fix = first(hf("ValueError: The current architecture does not support Flash Attention 2.0. Please open an "
                        "issue on GitHub to request support for this architecture: "
                        "https://github.com/huggingface/transformers/issues/new"))
    assert 'attn_implementation="sdpa"' in fix and "architecture" not in top.title, (top.title, fix)
    top, fix = first(hf("ImportError: Flash Attention 2.0 is not available. Please refer to the documentation of "
                        "https://github.com/Dao-AILab/flash-attention for installing it. Make sure to have at least "
                        "the version 2.1.0"))
    assert "pip install flash-attn --no-build-isolation" in fix, fix


def test_uncaptured_higher_order_op():
    top, fix = first("Traceback (most recent call last):\n" + DYN + "torch._dynamo.exc.UncapturedHigherOrderOpError: "
                     "Cond doesn't work unless it is captured completely with torch.compile. Scroll up to find out "
                     "what causes the graph break.\n")
    assert ident(top) == "unsupported-op:dynamo" and "torch.where" in fix and "fullgraph" not in fix, fix


@pytest.mark.parametrize("last, want", [
    ("RuntimeError: Flash Attention backend 'flash' is not usable because of missing package or the version is too "
     "old. Please install `flash-attn>=2.6.3`.", 'pip install "flash-attn>=2.6.3" --no-build-isolation'),
    ("RuntimeError: Sage Attention backend 'sage' is not usable because of missing package or the version is too old. "
     "Please install `sageattention>=2.1.1`.", 'pip install "sageattention>=2.1.1"'),
    ("RuntimeError: Flash Attention 3 backend '_flash_3' is not usable because of missing package or the version is "
     "too old. Please build FA3 beta release from source.", "hopper/"),
])
def test_diffusers_backend_requirements(last, want):
    text = ('Traceback (most recent call last):\n  File "/w/.venv/lib/python3.11/site-packages/diffusers/models/'
            'attention_dispatch.py", line 411, in _check_attention_backend_requirements\n    raise RuntimeError(\n'
            + last + "\n")
    top, fix = first(text)
    assert want in fix and "native" in fix, fix


@pytest.mark.parametrize("last, want", [
    ("RuntimeError: query and key must have the same dtype", "q.to(dtype)"),
    ("ValueError: Query/Key/Value should all have the same dtype", "q.to(dtype)"),
    ("RuntimeError: mat1 and mat2 must have the same dtype", "x.to(model.dtype)"),
    ("RuntimeError: expected dtype Float but got dtype Long", "y.float()"),
    ("RuntimeError: Index put requires the source and destination dtypes match, got Float for the destination and "
     "Half for the source.", "autocast"),
    ("RuntimeError: masked_scatter_: expected self and source to have same dtypes but got Half and Float",
     "x.to(model.dtype)"),
    ("RuntimeError: value cannot be converted to type at::Half without overflow", "torch.finfo(scores.dtype).min"),
    ("RuntimeError: Expected tensor for argument #1 'input' to have the same type as tensor for argument #2 'weight'; "
     "but type torch.cuda.HalfTensor does not equal torch.cuda.FloatTensor (while checking arguments for "
     "cudnn_convolution)", "autocast"),
])
def test_dtype_siblings(last, want):
    top, fix = first(tb(LINEAR, "return F.linear(input, self.weight, self.bias)", last))
    assert ident(top) == "unsupported-op:dtype", ident(top)
    assert want in fix, fix


def test_unnamed_dtypes_are_not_invented():
    top, fix = first(tb(LINEAR, "return F.linear(input, self.weight, self.bias)",
                        "RuntimeError: mat1 and mat2 must have the same dtype"))
    assert "torch.float16" not in top.title + top.cause, top.title


@pytest.mark.parametrize("last, want", [
    ("RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
     "'weight'; but device 1 does not equal 0 (while checking arguments for cudnn_convolution)", "CUDA_VISIBLE_DEVICES=0"),
    ("RuntimeError: expected device cuda:0 but got device cpu", "inputs.to(model.device)"),
])
def test_torch1_device_wordings(last, want):
    top, fix = first(tb(CONV, "return F.conv2d(input, weight, bias)", last))
    assert ident(top) == "unsupported-op:device" and want in fix, fix


@pytest.mark.parametrize("last, want", [
    ("AttributeError: module 'torch._dynamo.config' has no attribute 'recompile_limit'", "cache_size_limit"),
    ("ImportError: cannot import name 'save_cache_artifacts' from 'torch.compiler' "
     "(/opt/conda/lib/python3.11/site-packages/torch/compiler/__init__.py)", "torch>=2.7"),
])
def test_torch_api_names_the_release_that_added_it(last, want):
    top, fix = first(tb("/w/warm.py", "torch._dynamo.config.recompile_limit = 64", last))
    assert ident(top) == "version-constraint:torch" and want in fix, (ident(top), fix)


def test_an_unknown_torch_attribute_is_left_to_the_generic_reading():
    top, fix = first(tb("/w/warm.py", "torch.foo()", "AttributeError: module 'torch.compiler' has no attribute "
                        "'nonexistent_thing'"))
    assert ident(top) != "version-constraint:torch", ident(top)


# --- SDPA refusing every kernel, the RuntimeError cut off; Inductor's lowering error without its module -------

@pytest.mark.parametrize("header", [
    "Memory efficient kernel not used because:",
    "Flash attention kernel not used because:",
    "CuDNN attention kernel not used because:",
])
def test_sdpa_debug_headers_mean_no_available_kernel(header):
    # aten sdp_utils.cpp select_sdp_backend prints these only on its way to "No available kernel"
    text = ("  0%|          | 0/100 [00:00<?, ?it/s]/w/model/attention.py:88: UserWarning: Memory Efficient attention "
            "has been runtime disabled. (Triggered internally at ../aten/src/ATen/native/transformers/cuda/"
            "sdp_utils.cpp:512.)\n  out = F.scaled_dot_product_attention(\n"
            f"/w/model/attention.py:88: UserWarning: {header} (Triggered internally at ../aten/src/ATen/native/"
            "transformers/cuda/sdp_utils.cpp:700.)\n  out = F.scaled_dot_product_attention(\n")
    top, fix = first(text)
    assert ident(top) == "FDE701" and "enable_math=True" in fix, (ident(top), fix)


def test_bare_lowering_exception_of_flex_under_dynamic_shapes():
    text = ("LoweringException: AssertionError: Batch dimension must match\n  target: flex_attention\n"
            "  args[0]: TensorBox(StorageBox(\n    InputBuffer(name='primals_1', layout=FixedLayout('cuda', "
            "torch.float16, size=[s0, 16, s1, 64], stride=[1024*s1, 64, 1024, 1]))\n  ))\n")
    top, fix = first(text)
    assert "dynamic=False" in fix, (ident(top), fix)


@pytest.mark.parametrize("last", [
    "RuntimeError: self and mat2 must have the same dtype, but got Half and Float",
    "RuntimeError: expected self and mat2 to have the same dtype, but got: c10::Half != float",
    "RuntimeError: mixed dtype (CPU): expect parameter to have scalar type of Float",
])
def test_dtype_wordings_of_other_ops(last):
    top, fix = first(tb(LINEAR, "return torch.bmm(attn, v)", last))
    assert ident(top) == "unsupported-op:dtype" and "x.to(model.dtype)" in fix, (ident(top), fix)


def test_cutlass_no_kernel_is_fp16_on_pre_ampere():
    text = ('Traceback (most recent call last):\n  File "/usr/local/lib/python3.10/dist-packages/xformers/ops/fmha/'
            '__init__.py", line 310, in _memory_efficient_attention_forward\n    out, *_ = op.apply(inp, '
            'needs_gradient=False)\nRuntimeError: cutlassF: no kernel found to launch!\n')
    top, fix = first(text)
    assert ident(top) == "unsupported-op:memory-efficient" and "torch_dtype=torch.float16" in fix, (ident(top), fix)


@pytest.mark.parametrize("last, want", [
    ("ValueError: `.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. Please use the model as it is, "
     "since the model has already been set to the correct devices and casted to the correct `dtype`.",
     'device_map={"": 0}'),
    ("RuntimeError: You can't move a model that has some modules offloaded to cpu or disk.", "BitsAndBytesConfig"),
])
def test_models_placed_at_load_time_are_not_moved(last, want):
    # the user's own .to() (accelerate's dispatch_model moving it is tune-e1's reading: upgrade accelerate)
    top, fix = first(tb("/w/app/serve.py", "model = model.to(device)", last))
    assert ident(top) == "unsupported-op:device" and want in fix and "inputs.to(model.device)" in fix, (ident(top), fix)


def test_generator_on_another_device():
    top, fix = first(tb("/w/.venv/lib/python3.11/site-packages/torch/utils/data/sampler.py",
                        "yield from torch.randperm(n, generator=generator).tolist()",
                        "RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'"))
    assert ident(top) == "unsupported-op:device" and 'torch.Generator(device="cuda")' in fix, (ident(top), fix)
