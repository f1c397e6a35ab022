"""The structural readers of tuner j1 (issue 22, round 12 train). Lines are written here in the shape the real code
prints them (ATen's view_impl in aten/src/ATen/native/TensorShape.cpp, checkContiguous in aten/src/ATen/TensorUtils.cpp,
the CHECK_CONTIGUOUS macro of C++/CUDA extensions,
torch/csrc/utils/tensor_numpy.cpp; vLLM's config.py _verify_quantization and compressed_tensors.py
_check_scheme_supported), not copied from the corpus; each class has siblings and a healthy neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident


def _raise(code: str, msg: str, path: str = "/home/kim/proj/model.py") -> str:
    return frames(("/home/kim/proj/train.py", "out = model(batch)"), (path, code)) + msg + "\n"


# --- non-contiguous tensors -------------------------------------------------------------------------------------------

_VIEW = ("RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension spans "
         "across two contiguous subspaces). Use .reshape(...) instead.")


def test_view_on_a_permuted_tensor_says_reshape_or_contiguous():
    top, fix = first(_raise("flat = feats.permute(0, 2, 1).view(b, -1)", _VIEW))
    assert ident(top) == "unsupported-op:non-contiguous"
    assert ".reshape(" in fix and ".contiguous().view(" in fix, fix


def test_view_pasted_alone_in_an_issue_still_answers():
    top, fix = first("Got this while evaluating top-5 accuracy:\n" + _VIEW + "\nAny idea?\n")
    assert ident(top) == "unsupported-op:non-contiguous" and "reshape(" in fix


def test_check_contiguous_names_the_argument():
    msg = ("RuntimeError: Expected contiguous tensor, but got non-contiguous tensor for argument #1 'self' (while "
           "checking arguments for cudnn_convolution)")
    top, fix = first(_raise("y = conv(x.t())", msg))
    assert ident(top) == "unsupported-op:non-contiguous"
    assert "self.contiguous()" in fix, fix


def test_extension_check_contiguous_macro():
    msg = "RuntimeError: features must be contiguous"
    top, fix = first(_raise("return _C.ball_query(features, idx)", msg, "/opt/ext/pointnet2_utils.py"))
    assert ident(top) == "unsupported-op:non-contiguous" and "features.contiguous()" in fix, fix


def test_numpy_negative_strides_say_ascontiguousarray():
    msg = ("ValueError: At least one stride in the given numpy array is negative, and tensors with negative strides "
           "are not currently supported. (You can probably work around this by making a copy of your array  with "
           "array.copy().) ")
    top, fix = first(_raise("t = torch.from_numpy(img[..., ::-1])", msg, "/home/kim/proj/data.py"))
    assert ident(top) == "unsupported-op:non-contiguous" and "np.ascontiguousarray" in fix, fix


def test_cython_buffer_not_c_contiguous():
    top, fix = first(_raise("keep = nms(dets, thresh)", "ValueError: ndarray is not C-contiguous", "/opt/det/nms.py"))
    assert ident(top) == "unsupported-op:non-contiguous" and "np.ascontiguousarray" in fix, fix


def test_contiguity_warnings_and_prose_stay_silent():
    healthy("/usr/lib/python3.10/site-packages/torch/nn/modules/rnn.py:878: UserWarning: RNN module weights are not "
            "part of single contiguous chunk of memory. This means they need to be compacted at every call, possibly "
            "greatly increasing memory usage. To compact weights again call flatten_parameters().\n"
            "  result = _VF.lstm(input, hx, self._flat_weights, self.bias, self.num_layers,\n"
            "INFO: note that the input must be contiguous for the fused kernel; falling back\n"
            "epoch 1 loss 0.412\n")


# --- vLLM quantization on an older GPU --------------------------------------------------------------------------------

def _vllm(msg: str) -> str:
    return (frames(("/usr/local/lib/python3.10/dist-packages/vllm/engine/arg_utils.py", "model_config = self.create_"
                    "model_config()"),
                   ("/usr/local/lib/python3.10/dist-packages/vllm/config.py", "self._verify_quantization()"))
            + msg + "\n")


def test_awq_on_volta_names_turing_and_the_formats_volta_can_serve():
    top, fix = first(_vllm("ValueError: The quantization method awq is not supported for the current GPU. Minimum "
                           "capability: 75. Current capability: 70."))
    assert ident(top) == "unsupported-op:quantization capability"
    assert "Turing" in fix and "compute capability 7.5" in fix and "GPTQ" in fix and "bitsandbytes" in fix, fix
    assert "AWQ (" not in fix, fix  # the refused method is not offered back


def test_compressed_tensors_tuple_form_on_turing():
    top, fix = first(_vllm("RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min "
                           "capability: 80. ', 'Current capability: 75.')"))
    assert ident(top) == "unsupported-op:quantization capability"
    assert "Ampere" in fix and "compute capability 8.0" in fix and "AWQ (7.5+)" in fix, fix


def test_fp8_on_ampere_offers_every_older_format():
    top, fix = first(_vllm("ValueError: The quantization method fp8 is not supported for the current GPU. Minimum "
                           "capability: 89. Current capability: 86."))
    assert "Ada Lovelace" in fix and "GGUF" in fix and "AWQ" in fix and "--dtype half" in fix, fix


def test_pascal_gets_only_what_runs_on_pascal():
    top, fix = first(_vllm("ValueError: The quantization method bitsandbytes is not supported for the current GPU. "
                           "Minimum capability: 70. Current capability: 60."))
    assert "Volta" in fix and "GGUF (6.0+)" in fix and "AWQ" not in fix, fix


def test_vllm_kernel_choice_info_stays_silent():
    healthy("INFO 03-02 10:11:12 compressed_tensors_wNa16.py:85] Using MarlinLinearKernel for CompressedTensorsWNA16\n"
            "INFO 03-02 10:11:13 model_runner.py:1099] Loading model weights took 5.1 GiB\n")


# --- tensors on two devices (c3's reading, fix content) ---------------------------------------------------------------

def test_device_mismatch_pasted_alone_says_same_device_and_register_buffer():
    top, fix = first("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
                     "what should I change?\n")
    assert ident(top) == "unsupported-op:device"
    assert "same device" in fix and ".to(device)" in fix and "register_buffer" in fix, fix


def test_device_mismatch_between_two_gpus_says_register_buffer():
    msg = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and "
           "cuda:0! (when checking argument for argument index in method wrapper_CUDA__index_select)")
    top, fix = first(_raise("emb = self.table[idx]", msg))
    assert "same device" in fix and "register_buffer" in fix, fix


def test_device_words_in_a_warning_stay_silent():
    healthy("/opt/venv/lib/python3.11/site-packages/accelerate/utils/modeling.py:1384: UserWarning: Current model "
            "requires 4096 bytes of buffer for offloaded layers, which seems does not fit any GPU's remaining memory.\n"
            "step 10 loss 1.02\n")


# --- DeepSpeed's launcher: a rank killed by SIGKILL -------------------------------------------------------------------

_DS = ("[2024-05-02 10:01:02,345] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 4242\n"
       "[2024-05-02 10:01:02,346] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
       "'--local_rank=0', '--deepspeed', 'ds.json'] exits with return code = {code}\n")


def test_deepspeed_rank_killed_by_sigkill_reads_as_host_oom():
    top, fix = first(_DS.format(code="-9"))
    assert ident(top) == "out-of-memory:cpu" and "RAM" in fix and "dmesg" in fix, fix


def test_deepspeed_other_codes_are_not_host_oom():
    result_top, _ = first(_DS.format(code="-11"))
    assert ident(result_top) != "out-of-memory:cpu"


def test_deepspeed_clean_exit_stays_silent():
    healthy("[2024-05-02 10:01:02,345] [INFO] [launch.py:351:main] Process 4242 exits successfully.\n")


# --- vLLM V1's warm-up out of memory ----------------------------------------------------------------------------------

def test_vllm_sampler_warmup_oom_gets_vllms_memory_flags():
    site = "/opt/venv/lib/python3.12/site-packages"
    log = (frames((f"{site}/vllm/v1/engine/core.py", "self.model_executor.compile_or_warm_up_model()"),
                  (f"{site}/vllm/v1/worker/gpu_model_runner.py", "raise RuntimeError("))
           + "RuntimeError: CUDA out of memory occurred when warming up sampler with 512 dummy requests. Please try "
             "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n")
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda" and "--gpu-memory-utilization" in fix and "--max-num-seqs" in fix, fix


def test_vllm_warmup_info_stays_silent():
    healthy("INFO 05-02 10:00:00 [gpu_model_runner.py:1500] Graph capturing finished in 12 secs, took 0.51 GiB\n"
            "INFO 05-02 10:00:01 [core.py:160] init engine (profile, create kv cache, warmup model) took 40.2 seconds\n")
