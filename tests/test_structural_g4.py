"""The structural readers of tune-g4 (issue 22, round 8): Triton front-end and launch errors, Inductor's
NoValidChoicesError, Dynamo's wrappers (TorchRuntimeError, InternalTorchDynamoError), FlexAttention's vmapped
mask/score functions and BlockMask devices. Lines are written here in the shape the real code raises them
(triton/language/semantic.py, triton/runtime/autotuner.py and jit.py, torch/_inductor/select_algorithm.py,
torch/_dynamo/exc.py and utils.py, aten/src/ATen/functorch/BatchRulesDynamic.cpp, torch/nn/attention/flex_attention.py),
not copied from the corpus; each class has a sibling and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident

SITE = "/opt/venv/lib/python3.11/site-packages"


def _compile_error(where: str, inner: str) -> str:
    return (frames(("/home/u/kern.py", "kern[grid](x, out, n)"),
                   (f"{SITE}/triton/compiler/compiler.py", "module = src.make_ir(options, codegen_fns, module_map, context)"))
            + f"triton.compiler.errors.CompilationError: at 5:14:\n{where}\n              ^\n{inner}\n")


# --- Triton front-end errors ------------------------------------------------------------------------------------

def test_arange_not_power_of_two_names_next_power_of_2_and_mask():
    top, fix = first(_compile_error("    offs = tl.arange(0, BLOCK)", "ValueError(\"arange's range must be a power of 2\")"))
    assert ident(top) == "unsupported-op:triton"
    assert "triton.next_power_of_2" in fix and "mask" in fix, fix


def test_arange_bound_not_constexpr_names_tl_constexpr():
    top, fix = first(_compile_error("    offs_h = tl.arange(0, H)", "arange's arguments must be of type tl.constexpr"))
    assert ident(top) == "unsupported-op:triton"
    assert "tl.constexpr" in fix and "@triton.jit" in fix, fix


def test_dot_min_size_new_and_old_wording():
    new = _compile_error("    qk = tl.dot(q, k)", "AssertionError('Input shapes should have M >= 16, N >= 16 and K >= 16')")
    top, fix = first(new)
    assert ident(top) == "unsupported-op:triton" and "tl.sum(a[:, None] * b, axis=0)" in fix, fix
    old = _compile_error("    qk = tl.dot(q, k)", "AssertionError('All values in both first input shape ([constexpr[1], "
                         "constexpr[64]]) and second input shape ([constexpr[64], constexpr[32]]) must be >= 16!')")
    top, fix = first(old)
    assert ident(top) == "unsupported-op:triton" and "BLOCK_M/BLOCK_N/BLOCK_K" in fix, fix
    # the minimum the backend states (AMD allows M >= 1) is the one shown
    amd = _compile_error("    s = tl.dot(keys, q)", "AssertionError: Input shapes should have M >= 1, N >= 16 and K >= 16")
    top, fix = first(amd)
    assert "1/16/16" in fix, fix


def test_dot_inner_dimensions_name_tl_trans():
    top, fix = first(_compile_error("    qk = tl.dot(q, k)", "AssertionError('First input shape (['constexpr[64]', "
                                    "'constexpr[32]']) and second input shape ['constexpr[64]', 'constexpr[32]'] are not "
                                    "compatible for matmul (second index of first shape (32) must be equal to first "
                                    "index of second shape (64)')"))
    assert ident(top) == "unsupported-op:triton"
    assert "tl.trans" in fix, fix


def test_autotune_conflict_names_the_parameter_to_remove():
    log = frames((f"{SITE}/triton/runtime/autotuner.py", "raise ValueError(f\"Conflicting meta-parameters: ...\")")) + \
        "ValueError: Conflicting meta-parameters: BLOCK_M, BLOCK_N. Make sure that you don't re-define auto-tuned symbols.\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:triton"
    assert "Remove BLOCK_M, BLOCK_N=" in fix and "META[" in fix, fix


def test_unknown_launch_keyword_is_named():
    log = frames((f"{SITE}/triton/runtime/jit.py", "raise KeyError(\"Keyword argument %s was specified but unrecognised\" % k)")) + \
        "KeyError: 'Keyword argument launch_pdl was specified but unrecognised'\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:triton"
    assert "'launch_pdl'" in fix, fix


def test_triton_healthy_neighbours_stay_silent():
    healthy("Autotuning kernel _attn_fwd with config BLOCK_M: 128, BLOCK_N: 64, num_warps: 4, num_stages: 3\n"
            "Triton autotuning for function _attn_fwd finished after 2.31s; best config selected: BLOCK_M: 64\n"
            "# note: tl.arange's range must be a power of 2, so we round BLOCK up\n"
            "step 1 loss 2.30\n")


# --- Inductor's NoValidChoicesError ---------------------------------------------------------------------------------

_NVC = ("torch._inductor.exc.LoweringException: NoValidChoicesError: No choices to select, please consider adding "
        "ATEN into max_autotune_gemm_backends config (defined in torch/_inductor/config.py) to allow at least one choice. \n")


def test_no_valid_choices_under_flex_names_kernel_options_not_aten():
    log = frames((f"{SITE}/torch/_inductor/kernel/flex_attention.py", "broadcasted_grad_key = autotune_select_algorithm("),
                 (f"{SITE}/torch/_inductor/select_algorithm.py", "raise NoValidChoicesError(")) + _NVC + \
        "  target: flex_attention_backward\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:inductor"
    assert "kernel_options=" in fix and "max-autotune-no-cudagraphs" in fix and "ATEN" not in fix, fix


def test_no_valid_choices_for_cpu_flex_on_torch_25_names_26():
    log = "PyTorch version: 2.5.1+cpu\n" + frames((f"{SITE}/torch/_inductor/kernel/flex_attention.py", "autotune_select_algorithm(")) + \
        _NVC.replace("torch._inductor.exc.", "") + "  target: flex_attention\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:inductor"
    assert "2.6" in fix and "whl/cpu" in " ".join(top.fix.commands), (fix, top.fix.commands)


def test_no_valid_choices_for_a_matmul_puts_aten_back():
    log = frames((f"{SITE}/torch/_inductor/kernel/mm.py", "return autotune_select_algorithm(\"mm\", choices, [mat1, mat2], layout)")) + \
        _NVC + "  target: aten.mm.default\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:inductor"
    assert "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN,TRITON" in " ".join(top.fix.commands), top.fix.commands


def test_max_autotune_notices_stay_silent():
    healthy("W1120 10:00:01.123000 1234 torch/_inductor/utils.py:1250] [0/0] Not enough SMs to use max_autotune_gemm mode\n"
            "skipping cudagraphs due to mutated inputs (2 instances). Found from : \n"
            "AUTOTUNE mm(4096x4096, 4096x4096)\n  triton_mm_1 0.5 ms 100.0%\n"
            "step 10 loss 2.31\n")


# --- Dynamo's wrappers ----------------------------------------------------------------------------------------------

def test_torch_runtime_error_is_the_models_own_error():
    log = frames(("/home/u/model.py", "out = cmodel(x)"), (f"{SITE}/torch/_dynamo/utils.py", "raise RuntimeError(make_error_message(e))")) + \
        ("torch._dynamo.exc.TorchRuntimeError: Failed running call_function <built-in function add>(*(FakeTensor(..., "
         "size=(2, 16, 128)), FakeTensor(..., size=(2, 16, 64))), **{}):\n"
         "Attempting to broadcast a dimension of length 64 at -1! Mismatching argument at index 1 had torch.Size([2, 16, 64])\n"
         "\nfrom user code:\n   File \"/home/u/model.py\", line 31, in forward\n    return x + self.bias\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:dynamo"
    assert "TORCH_COMPILE_DISABLE=1" in fix and "from user code:" in fix, fix


def test_torch_runtime_error_with_a_known_inner_error_answers_the_inner_one_first():
    log = ("torch._dynamo.exc.TorchRuntimeError: Failed running call_method matmul(*(FakeTensor(..., device='cuda:0', "
           "size=(4, 8)), FakeTensor(..., size=(8, 8))), **{}):\n"
           "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n")
    top, _fix = first(log)
    assert ident(top) != "unsupported-op:dynamo", ident(top)


def test_internal_dynamo_error_upgrades_torch_and_is_not_suppressed():
    log = frames(("/home/u/run.py", "y = f(x)")) + \
        ("torch._dynamo.exc.InternalTorchDynamoError: AttributeError: 'NoneType' object has no attribute 'source'\n\n"
         "from user code:\n   File \"/home/u/run.py\", line 8, in f\n    return g(x)\n\n"
         "You can suppress this exception and fall back to eager by setting:\n    import torch._dynamo\n"
         "    torch._dynamo.config.suppress_errors = True\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:dynamo"
    assert "pip install --upgrade torch" in fix and "@torch.compiler.disable" in fix and "not a fix" in fix, fix


# --- FlexAttention masks and BlockMask ------------------------------------------------------------------------------

_VMAP = ("RuntimeError: vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
         "We don't support that yet, please shout over at https://github.com/pytorch/functorch/issues/257 .\n")


def test_mask_mod_with_python_control_flow_names_tensor_ops():
    log = frames(("/home/u/train.py", "block_mask = create_block_mask(doc_mask, B, H, S, S)"),
                 (f"{SITE}/torch/nn/attention/flex_attention.py", "partial_block_mask, full_block_mask = inner_func("),
                 (f"{SITE}/torch/_functorch/apis.py", "return vmap_impl(")) + _VMAP
    top, fix = first(log)
    assert ident(top) == "unsupported-op:vmap"
    assert "torch.where" in fix and "& | ~" in fix and "mask" in top.title, (top.title, fix)


def test_item_in_a_vmapped_function_outside_flex():
    log = frames(("/home/u/jac.py", "torch.func.vmap(f)(xs)"), (f"{SITE}/torch/_functorch/apis.py", "return vmap_impl(")) + \
        ("RuntimeError: vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to use a "
         "Tensor in some data-dependent control flow or (3) encountering this error in PyTorch internals.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:vmap"
    assert ".item()" in fix and "FlexAttention" not in top.title, (top.title, fix)


def test_block_mask_on_another_device_names_device_q_device():
    log = frames((f"{SITE}/torch/nn/attention/flex_attention.py", "raise RuntimeError(")) + \
        "RuntimeError: Expect q/k/v and block_mask to be on the same device but got cuda:1 and cuda:0.\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:block_mask"
    assert "device=q.device" in fix and "block_mask.to(q.device)" in fix and "cuda:1" in top.title, (top.title, fix)


def test_flex_healthy_neighbours_stay_silent():
    healthy("# mask_mod must not use data-dependent control flow (vmap), use torch.where\n"
            "BlockMask(shape=(1, 1, 4096, 4096), sparsity=49.22%)\n"
            "block_mask moved to the same device as q/k/v\n"
            "epoch 1 step 100 loss 1.92\n")
