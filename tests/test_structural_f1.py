"""The structural readers of tune-f1 (issue 22, the round-5/6 families): Open MPI slots, worker processes out of file
descriptors, non-UTF-8 locales, CUDA extension builds with no visible GPU, nvcc 11.5 on gcc 11, vLLM's Gemma-2
soft-capping, DeepSpeed's batch check, quantized models offloaded to CPU, Ray placement, and the GPU-too-old-for-Triton
entry. Lines are written here in the shape the real code prints (Open MPI help-orte-rmaps-base.txt, CPython
multiprocessing/reduction.py, google/colab/_system_commands.py, Click _unicodefun.py, torch/utils/cpp_extension.py,
libstdc++ std_function.h under nvcc, vllm/attention/selector.py, deepspeed/runtime/config.py, transformers
quantizer_bnb_8bit.py, verl/vLLM ray utils, torch/_inductor), not copied from the corpus; each class has a sibling and
a healthy line that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import fix_text, healthy, ident, scan


SITE = "/opt/venv/lib/python3.10/site-packages"
RULE = "-" * 74 + "\n"


# --- Open MPI slots -------------------------------------------------------------------------------------------

def test_mpi_slots_on_hosts_names_host_count_hostfile_and_oversubscribe():
    log = ("$ mpirun -np 4 -H node1,node2 python train.py\n" + RULE +
           "There are not enough slots available in the system to satisfy the 4\n"
           "slots that were requested by the application:\n\n  python\n\n"
           "Either request fewer slots for your application, or make more slots\navailable for use.\n" + RULE)
    top, fix = first(log)
    assert ident(top) == "launcher:mpi slots"
    assert "localhost:4" in fix and "slots=N" in fix and "--oversubscribe" in fix, fix


def test_mpi_slots_under_slurm_names_ntasks():
    log = ("+ srun -n1 --gres=gpu:4 horovodrun -np 4 python train.py\n" + RULE +
           "There are not enough slots available in the system to satisfy the 4 slots\n"
           "that were requested by the application:\n  python\n" + RULE)
    top, fix = first(log.replace("+ srun", "srun: job 1234 queued\n+ srun"))
    assert ident(top) == "launcher:mpi slots"
    assert "--oversubscribe" in fix, fix


def test_mpi_healthy_help_text_is_silent():
    healthy("mpirun (Open MPI) 4.1.5\nRank 0 of 4 started on node1 (slots available: 8)\ntraining done\n")


# --- file descriptors ---------------------------------------------------------------------------------------------

def test_ancdata_from_dataloader_workers_names_sharing_strategy_and_ulimit():
    log = frames((f"{SITE}/torch/utils/data/dataloader.py", "idx, data = self._get_data()"),
                 ("/usr/lib/python3.10/multiprocessing/resource_sharer.py", "return reduction.recv_handle(conn)"),
                 ("/usr/lib/python3.10/multiprocessing/reduction.py", "return recvfds(s, 1)[0]")) + \
        "RuntimeError: received 0 items of ancdata\n"
    top, fix = first(log)
    assert ident(top) == "launcher:file descriptors"
    assert "set_sharing_strategy('file_system')" in fix and "ulimit -n" in fix, fix


def test_emfile_sibling_names_the_same_remedy():
    log = frames((f"{SITE}/torch/multiprocessing/reductions.py", "fd, size = storage._share_fd_cpu_()")) + \
        "OSError: [Errno 24] Too many open files\n"
    top, fix = first(log)
    assert "set_sharing_strategy('file_system')" in fix or "ulimit -n" in fix, fix


def test_sharing_strategy_notice_is_silent():
    healthy("INFO: using torch.multiprocessing sharing strategy file_descriptor (ancdata ok)\nepoch 1 done\n")


# --- locale ----------------------------------------------------------------------------------------------------------

def test_colab_utf8_locale_names_preferred_encoding_override():
    log = frames(("/usr/local/lib/python3.10/dist-packages/google/colab/_system_commands.py",
                  "'A UTF-8 locale is required. Got {}'.format(locale_encoding))")) + \
        "NotImplementedError: A UTF-8 locale is required. Got ANSI_X3.4-1968\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:locale"
    assert "getpreferredencoding" in fix and "LC_ALL=C.UTF-8" in fix, fix


def test_click_ascii_sibling_names_lc_all():
    log = ("RuntimeError: Click will abort further execution because Python was configured to use ASCII as "
           "encoding for the environment. Consult https://click.palletsprojects.com/unicode-support/ for "
           "mitigation steps.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:locale"
    assert "export LC_ALL=C.UTF-8 LANG=C.UTF-8" in fix, fix


def test_locale_info_line_is_silent():
    healthy("locale: LANG=C.UTF-8, preferred encoding UTF-8\nUTF-8 locale is set\n")


# --- CUDA extension builds -----------------------------------------------------------------------------------------

def test_empty_arch_list_names_torch_cuda_arch_list():
    log = ("#12 8.1 No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n" +
           frames((f"{SITE}/torch/utils/cpp_extension.py", "cflags + _get_cuda_arch_flags(cflags))"),
                  (f"{SITE}/torch/utils/cpp_extension.py", "arch_list[-1] += '+PTX'")) +
           "IndexError: list index out of range\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:cuda arch list"
    assert "TORCH_CUDA_ARCH_LIST=" in fix, fix


def test_gcc11_std_function_under_nvcc115_names_gcc10_and_cuda116():
    log = ("/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not expanded with '...':\n"
           "  435 |         function(_Functor&& __f)\n"
           "/usr/include/c++/11/bits/std_function.h:530:146: error: parameter packs not expanded with '...':\n"
           "ninja: build stopped: subcommand failed.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:nvcc host compiler"
    assert "g++-10" in fix and "-ccbin" in fix and "CUDA 11.6" in fix, fix


def test_gcc10_headers_are_not_this_class():
    log = "/usr/include/c++/9/bits/std_function.h:435:145: error: parameter packs not expanded with '...':\n"
    items = [ident(x) for x in scan(log).ordered()]
    assert "unsupported-op:nvcc host compiler" not in items, items


# --- vLLM soft-capping -------------------------------------------------------------------------------------------------

def test_gemma2_softcap_names_vllm_upgrade_and_flashinfer():
    log = ("ValueError: Please use Flashinfer backend for models with logits_soft_cap (i.e., Gemma-2). Otherwise, "
           "the output might be wrong. Set Flashinfer backend by export VLLM_ATTENTION_BACKEND=FLASHINFER.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:vllm"
    assert "vllm>=0.5.4" in fix and "VLLM_ATTENTION_BACKEND=FLASHINFER" in fix and "flashinfer" in fix, fix


def test_flashinfer_backend_info_is_silent():
    healthy("INFO 08-01 10:00:00 selector.py:79] Using Flashinfer backend.\nINFO done\n")


# --- DeepSpeed batch check ---------------------------------------------------------------------------------------------

def test_deepspeed_world_size_one_names_launcher_and_version():
    log = ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
           "gradient_acc_step * world_size 32 != 4 * 1 * 1\n")
    top, fix = first(log)
    assert ident(top) == "launcher:deepspeed batch"
    assert "deepspeed==0.8.3" in fix and "torchrun" in fix, fix


def test_deepspeed_numbers_that_do_not_multiply_name_the_right_batch():
    log = ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
           "gradient_acc_step * world_size 30 != 4 * 2 * 4\n")
    top, fix = first(log)
    assert "train_batch_size to 32" in fix, fix


# --- quantized offload -------------------------------------------------------------------------------------------------

def test_bnb_dispatch_names_fp32_cpu_offload():
    log = ("ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit "
           "the quantized model. If you want to dispatch the model on the CPU or the disk while keeping these modules "
           "in 32-bit, you need to set `llm_int8_enable_fp32_cpu_offload=True` and pass a custom `device_map`\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:bitsandbytes offload"
    assert "llm_int8_enable_fp32_cpu_offload=True" in fix and "max_memory" in fix, fix


# --- Ray placement -------------------------------------------------------------------------------------------------------

def test_ray_total_gpus_names_ray_status_and_address_auto():
    log = "ValueError: Total available GPUs 8.0 is less than total desired GPUs 16\n"
    top, fix = first(log)
    assert ident(top) == "launcher:ray gpus"
    assert "ray status" in fix and 'address="auto"' in fix and "ray stop" in fix, fix
    assert "8" in top.title and "16" in top.title


def test_ray_placement_group_sibling():
    log = ("ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement "
           "group.\n")
    top, fix = first(log)
    assert ident(top) == "launcher:ray gpus" and "tensor_parallel_size" in fix, fix


def test_ray_resources_info_is_silent():
    healthy("INFO worker.py:1642 -- Started a local Ray instance. Total available GPUs 8 for this job\n")


# --- GPU too old for Triton (FDE106's fix) -------------------------------------------------------------------------------

def test_triton_too_old_names_eager_fallback_and_volta():
    log = ("RuntimeError: Found Tesla P40 which is too old to be supported by the triton GPU compiler, which is used "
           "as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA "
           "capability 6.1\n")
    top, fix = first(log)
    assert ident(top) == "FDE106"
    assert "TORCHDYNAMO_DISABLE=1" in fix and "suppress_errors" in fix and "Volta or newer" in fix, fix


# --- flash-attn 1.x backward head-dim limit ------------------------------------------------------------------------------

def test_flash_attn1_backward_headdim_names_flash_attn2_and_turing_fallback():
    log = frames((f"{SITE}/flash_attn/flash_attn_interface.py", "_flash_attn_backward(")) + (
        "RuntimeError: FlashAttention backward for head dim > 64 requires A100 or H100 GPUs as the implementation "
        "needs a large amount of shared memory.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:flash-attn"
    assert "flash-attn>=2" in fix and "sdpa" in fix and "A100" in fix, fix


# --- THC's CUDA error numbers (torch < 1.5: CUDA <= 10.0's numbering) ---------------------------------------------------

def test_thc_old_error_number_is_read_by_its_message():
    log = frames(("main.py", "data = data.to(device)")) + (
        "RuntimeError: cuda runtime error (6) : the launch timed out and was terminated at "
        "/opt/conda/conda-bld/pytorch_1/work/aten/src/THC/generic/THCTensorCopy.cpp:21\n")
    top, fix = first(log)
    assert ident(top) == "cuda-error:cudaErrorLaunchTimeout", ident(top)
    assert "display" in fix, fix


def test_thc_error_number_without_message_keeps_the_code():
    log = "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510\n"
    top, _fix = first(log)
    assert ident(top) != "unknown", ident(top)
