"""The structural readers of tune-g3 (issue 22, round 8): the training loop (autograd), numerics, wrappers whose real
error is inside them, and bare process deaths. Lines are written here in the shape the real code prints
(torch/csrc/autograd saved_variable.cpp and engine.cpp, torch/utils/checkpoint.py, ATen Distributions.cpp, DeepSpeed
runtime/fp16/loss_scaler.py, Lightning loops/utilities.py, DETR engine.py, torch/_utils.py ExceptionWrapper, ComfyUI
execution.py, ray/exceptions.py, CPython concurrent/futures/process.py, joblib/loky, torch/utils/data/dataloader.py,
glibc malloc.c, bash's signal reports, faulthandler, kubectl), not copied from the corpus; each class has a sibling and a
healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident, scan

SITE = "/home/ml/.venv/lib/python3.11/site-packages"


def _bwd(message: str) -> str:
    return frames(("/home/ml/train.py", "loss.backward()"),
                  (f"{SITE}/torch/autograd/__init__.py", "_engine_run_backward(")) + message + "\n"


# --- autograd ------------------------------------------------------------------------------------------------------

def test_inplace_names_anomaly_detection_and_the_activation():
    log = _bwd("RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
               "operation: [torch.cuda.HalfTensor [8, 1024]], which is output 0 of LeakyReluBackward1, is at version 3; "
               "expected version 2 instead. Hint: enable anomaly detection to find the operation that failed to compute "
               "its gradient, with torch.autograd.set_detect_anomaly(True).")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:autograd"
    assert "set_detect_anomaly(True)" in fix and "inplace=False" in fix and "clone()" in fix, fix


def test_inplace_sibling_without_details_cpu_tensor():
    top, fix = first(_bwd("RuntimeError: one of the variables needed for gradient computation has been modified by an "
                          "inplace operation: [torch.FloatTensor [3, 3]], which is output 0 of TBackward0, is at "
                          "version 1; expected version 0 instead."))
    assert ident(top) == "unsupported-op:autograd" and "x = x + y" in fix, fix


def test_backward_twice_names_detach_and_retain_graph():
    top, fix = first(_bwd("RuntimeError: Trying to backward through the graph a second time (or directly access saved "
                          "tensors after they have already been freed). Saved intermediate values of the graph are "
                          "freed when you call .backward() or autograd.grad()."))
    assert ident(top) == "unsupported-op:autograd"
    assert "hidden.detach()" in fix and "retain_graph=True" in fix and "loss.item()" in fix, fix


def test_checkpoint_metadata_names_use_cache_and_use_reentrant():
    log = frames((f"{SITE}/torch/utils/checkpoint.py", "frame.check_recomputed_tensors_match(gid)")) + (
        "torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values for the following tensors "
        "have different metadata than during the forward pass.\ntensor at position 3:\n"
        "saved metadata: {'shape': torch.Size([2, 16, 511, 128]), 'dtype': torch.bfloat16}\n"
        "recomputed metadata: {'shape': torch.Size([2, 16, 1022, 128]), 'dtype': torch.bfloat16}\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:autograd"
    assert "use_cache = False" in fix and '"use_reentrant": True' in fix, fix


def test_checkpoint_different_number_sibling():
    top, fix = first("torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: A different number of tensors "
                     "was saved during the original forward and recomputation.\nNumber of tensors saved during "
                     "forward: 52\nNumber of tensors saved during recomputation: 17\n")
    assert ident(top) == "unsupported-op:autograd" and "use_reentrant" in fix, fix


def test_nan_in_backward_names_epsilon_bf16_and_clipping():
    log = ("/home/ml/.venv/lib/python3.11/site-packages/torch/autograd/graph.py:768: UserWarning: Error detected in "
           "SqrtBackward0. Traceback of forward call that caused the error:\n") + _bwd(
        "RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:autograd" and "SqrtBackward0" in top.title
    assert "1e-8" in fix and "bfloat16" in fix and "clip_grad_norm_" in fix, fix


def test_autograd_words_in_a_warning_stay_silent():
    healthy("Warning: Trying to backward through the graph a second time is avoided by detaching hidden states.\n"
            "UserWarning: modified by an inplace operation checks are disabled in inference mode\n"
            "{'loss': 0.41, 'epoch': 1.0}\n")


# --- numerics ------------------------------------------------------------------------------------------------------

def test_multinomial_nan_names_bfloat16_not_float16():
    log = frames((f"{SITE}/transformers/generation/utils.py", "next_tokens = torch.multinomial(probs, num_samples=1)")) \
        + "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:dtype"
    assert "torch_dtype=torch.bfloat16" in fix and "float32" in fix and "do_sample=False" in fix, fix


def test_multinomial_sum_sibling():
    top, fix = first("RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)\n")
    assert ident(top) == "unsupported-op:dtype" and "bfloat16" in fix, fix


def test_deepspeed_min_loss_scale_names_bf16_config():
    log = ("[2025-01-09 10:01:02,331] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
           "step. Attempted loss scale: 1, reducing to 1\n" +
           frames((f"{SITE}/deepspeed/runtime/fp16/loss_scaler.py", "raise Exception(")) +
           "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.\n")
    top, fix = first(log)
    assert ident(top) == "unsupported-op:dtype"
    assert '"bf16": {"enabled": true}' in fix and "--bf16" in fix, fix


def test_lightning_nan_loss_and_detr_stop():
    top, fix = first(frames((f"{SITE}/lightning/pytorch/loops/utilities.py", "raise ValueError(")) +
                     "ValueError: The loss returned in `training_step` is tensor(nan, device='cuda:0').\n")
    assert ident(top) == "unsupported-op:nan" and "gradient_clip_val" in fix and "bf16-mixed" in fix, fix
    top, fix = first("Epoch: [3]  [1200/7393]  eta: 0:41:02  lr: 0.000100  loss: 12.1 (11.9)\n"
                     "Loss is nan, stopping training\n{'loss_ce': nan, 'loss_bbox': nan}\n")
    assert ident(top) == "unsupported-op:nan" and "clip_max_norm" in fix, fix


def test_gradient_overflow_of_healthy_fp16_training_stays_silent():
    healthy("[2025-01-09 10:01:02,331] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
            "step. Attempted loss scale: 65536, reducing to 32768\n"
            "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0\n"
            "{'loss': 2.01, 'learning_rate': 1e-05, 'epoch': 0.5}\n"
            "Epoch 3: val_loss = 0.82 (the check 'Loss is nan, stopping training' never fired)\n")


# --- wrappers ------------------------------------------------------------------------------------------------------

def _dataloader(inner: str, exc: str = "RuntimeError") -> str:
    return (frames(("/home/ml/train.py", "for batch in loader:"), (f"{SITE}/torch/_utils.py", "raise exception")) +
            f"{exc}: Caught {exc} in DataLoader worker process 2.\nOriginal Traceback (most recent call last):\n" +
            f'  File "{SITE}/torch/utils/data/_utils/worker.py", line 349, in _worker_loop\n'
            "    data = fetcher.fetch(index)\n" + inner + "\n")


def test_dataloader_wrapper_inner_error_is_answered_by_its_reader():
    top, fix = first(_dataloader("ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
                                 "ImportError"))
    assert ident(top) == "shared-library:libGL.so.1", ident(top)


def test_dataloader_wrapper_unknown_inner_names_num_workers_0():
    # tune-i1: a torch check i1 knows (stack expects each tensor to be equal size) is answered by i1 now
    # (tests/test_structural_i1.py); an inner error no rule knows keeps this reading.
    result = scan(_dataloader("KeyError: 'segmentation_mask'"))
    top = result.ordered()[0]
    assert top.kind == "unknown" and "segmentation_mask" in top.title, top.title
    assert "num_workers=0" in top.fix.summary and not result.found


def test_comfyui_old_dialog_message_without_type_is_answered():
    log = ("Error occurred when executing KSamplerAdvanced:\n\nExpected all tensors to be on the same device, but "
           "found at least two devices, cuda:0 and cpu!\n\n"
           '  File "C:\\ComfyUI\\execution.py", line 152, in recursive_execute\n'
           "    output_data, output_ui = get_output_data(obj, input_data_all)\n")
    top, _fix = first(log)
    assert ident(top) == "unsupported-op:device", ident(top)


def test_comfyui_console_line_alone_and_unknown_node_error():
    top, _fix = first("got prompt\n!!! Exception during processing !!! Expected all tensors to be on the same device, "
                      "but found at least two devices, cuda:0 and cpu!\nPrompt executed in 3.1 seconds\n")
    assert ident(top) == "unsupported-op:device", ident(top)
    result = scan("Error occurred when executing IPAdapterModelLoader:\n\nIPAdapter model not found.\n\n"
                  '  File "/srv/ComfyUI/execution.py", line 152, in recursive_execute\n    x = 1\n'
                  '  File "/srv/ComfyUI/custom_nodes/ComfyUI_IPAdapter_plus/IPAdapterPlus.py", line 9, in load\n'
                  "    raise Exception\n")
    top = result.ordered()[0]
    assert top.kind == "unknown" and top.subject == "IPAdapterModelLoader"
    assert "ComfyUI/models" in top.fix.summary and "flexdoctor facts" in top.fix.commands, top.fix
    result = scan("!!! Exception during processing !!! ClipVision model not found.\nTraceback (most recent call last):\n"
                  '  File "/srv/ComfyUI/execution.py", line 327, in execute\n    x = 1\n'
                  '  File "/srv/ComfyUI/custom_nodes/ComfyUI_IPAdapter_plus/IPAdapterPlus.py", line 9, in load\n'
                  '    raise Exception("ClipVision model not found.")\nException: ClipVision model not found.\n')
    top = result.ordered()[0]
    assert top.kind == "unknown" and "ClipVision" in top.title and not result.found, top
    result = scan(result_log := ("!!! Exception during processing !!! bad mask\nTraceback (most recent call last):\n"
                                 '  File "/srv/ComfyUI/custom_nodes/comfyui-masks/nodes.py", line 9, in run\n    x = 1\n'
                                 "ValueError: bad mask\n"))
    top = result.ordered()[0]
    assert top.kind == "unknown" and "comfyui-masks" in top.cause, (result_log, top.cause)


def test_ray_task_error_inner_error_answers():
    log = ("ray.exceptions.RayTaskError(ModuleNotFoundError): ray::score() (pid=4410, ip=10.1.2.3)\n"
           '  File "/tmp/ray/session_2025/runtime_resources/app.py", line 3, in score\n    import peft\n'
           "ModuleNotFoundError: No module named 'peft'\n")
    top, fix = first(log)
    assert ident(top) == "missing-module:peft" and "pip install peft" in fix, fix


def test_broken_process_pool_and_joblib_sibling():
    log = frames(("/home/ml/prep.py", "out = list(ex.map(encode, shards))")) + (
        "concurrent.futures.process.BrokenProcessPool: A process in the process pool was terminated abruptly while "
        "the future was running or pending.\n")
    top, fix = first(log)
    assert ident(top) == "launcher:process-pool" and "dmesg" in fix and "max_workers" in fix, fix
    top, fix = first("joblib.externals.loky.process_executor.TerminatedWorkerError: A worker process managed by the "
                     "executor was unexpectedly terminated. This could be caused by a segmentation fault while calling "
                     "the function or by an excessive memory usage causing the Operating System to kill the worker.\n")
    assert ident(top) == "launcher:process-pool", ident(top)


def test_dataloader_too_many_open_files_without_errno():
    top, fix = first("RuntimeError: Too many open files. Communication with the workers is no longer possible. Please "
                     "increase the limit using `ulimit -n` in the shell or change the sharing strategy by calling "
                     "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code\n")
    assert ident(top) == "out-of-memory:file-descriptors"
    assert "set_sharing_strategy('file_system')" in fix and "ulimit -n" in fix, fix


def test_wrapper_words_in_healthy_lines_stay_silent():
    healthy("INFO: worker 3 Caught up with the queue in DataLoader worker process pool (no error)\n"
            "Prompt executed in 4.21 seconds\n"
            "2025-01-09 INFO ray tasks: 12 finished, RayTaskError count 0\n")


# --- bare process deaths --------------------------------------------------------------------------------------------

def test_heap_corruption_lines_and_old_glibc_sibling():
    for line in ("free(): invalid pointer", "double free or corruption (!prev)", "corrupted size vs. prev_size",
                 "munmap_chunk(): invalid pointer", "*** Error in `python3': free(): invalid next size (fast): "
                 "0x00005581c2f0e7a0 ***"):
        top, fix = first(f"Loading weights\n{line}\nAborted (core dumped)\n")
        assert ident(top) == "launcher:heap-corruption", (line, ident(top))
        assert "PYTHONFAULTHANDLER=1" in fix and "gdb -ex r --args" in fix, fix


def test_segfault_fpe_and_bash_job_line():
    top, fix = first(">>> import torch\nSegmentation fault (core dumped)\n")
    assert ident(top) == "launcher:SIGSEGV" and "python -X faulthandler" in fix and "gdb -ex r --args" in fix, fix
    top, _fix = first("./run.sh: line 7: 88123 Segmentation fault      (core dumped) python infer.py\n")
    assert ident(top) == "launcher:SIGSEGV"
    top, _fix = first("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n")
    assert ident(top) == "launcher:SIGSEGV"
    top, fix = first("$ python bench.py\nFloating point exception (core dumped)\n")
    assert ident(top) == "launcher:SIGFPE" and "zero-sized" in fix, fix


def test_abort_after_a_what_line_is_answered_by_the_what():
    top, _fix = first("terminate called after throwing an instance of 'c10::Error'\n"
                      "  what():  CUDA error: an illegal memory access was encountered\nAborted (core dumped)\n")
    assert ident(top) == "cuda-error:cudaErrorIllegalAddress", ident(top)


def test_killed_137_and_oomkilled_name_low_cpu_mem_usage_and_limits():
    top, fix = first("Loading checkpoint shards:  50%|#####     | 1/2 [00:40<00:40, 40.1s/it]\n"
                     "./run.sh: line 12:  4721 Killed                  python train.py --cfg a.yaml\n")
    assert ident(top) == "out-of-memory:cpu" and "low_cpu_mem_usage=True" in fix and "dmesg" in fix, fix
    top, fix = first("trainer exited with code 137\n")
    assert ident(top) == "out-of-memory:cpu", ident(top)
    top, fix = first("    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n")
    assert ident(top) == "out-of-memory:cpu" and "resources.limits.memory" in fix, fix


def test_deaths_quoted_in_prose_or_healthy_status_stay_silent():
    healthy('Tip: if you ever see "Segmentation fault (core dumped)", run python -X faulthandler.\n'
            "NOTE: the old 'double free or corruption' crash was fixed in 2.1.\n"
            '        "OOMKilled": false,\n'
            "Process finished with exit code 0\n"
            "Aborted!\n")
