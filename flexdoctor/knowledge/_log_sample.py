"""A sample of ordinary, healthy training-log text (real captures from tests/data/logs/healthy plus
typical trainer, logging, progress-bar and warning lines). explain uses it only to estimate how often
a candidate trigger literal occurs in logs, so that it searches for the rare ones."""

SAMPLE = """  triton_mm_13 4.1953 ms 98.1% ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=32, BLOCK_M=128, BLOCK_N=128, EVEN_K=True, GROUP_M=8, USE_FAST_ACCUM=False, num_stages=3, num_warps=4
  triton_mm_7 4.2342 ms 97.2% ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=32, BLOCK_M=64, BLOCK_N=128, EVEN_K=True, GROUP_M=8, USE_FAST_ACCUM=False, num_stages=3, num_warps=4
  bias_addmm 4.2496 ms 96.8%
  addmm 4.3561 ms 94.5%
SingleProcess AUTOTUNE benchmarking takes 0.9773 seconds and 0.6039 seconds precompiling for 17 choices
Autotune Choices Stats:
ok
/root/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py:105: FutureWarning: `torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated signature.
  self.gen = func(*args, **kwds)
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] Graph break in user code at /work/wt/explain/tests/data/logs/_capture/cpu_train_healthy2.py:14
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] 
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] torch.* op returned non-Tensor
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]   Explanation: torch.* ops that return a non-Tensor cannot be traced into the Dynamo FX graph output
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] 
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] 
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]   Developer debug context: example_value type: _GeneratorContextManager; op: call_function; target: <function sdp_kernel at 0x7f8d53a3bf60>
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] 
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]  For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0208.html
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] 
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] User code traceback:
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]   File "/work/wt/explain/tests/data/logs/_capture/cpu_train_healthy2.py", line 23, in <module>
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]     y = step_fn(x)
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]         ^^^^^^^^^^
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]   File "/work/wt/explain/tests/data/logs/_capture/cpu_train_healthy2.py", line 14, in block
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]     with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks]          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
V1123 11:21:05.096000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [0/0] [__graph_breaks] 
/root/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py:105: FutureWarning: `torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated signature.
  self.gen = func(*args, **kwds)
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks] Graph break in user code at /work/wt/explain/tests/data/logs/_capture/cpu_train_healthy2.py:14
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks] Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break encountered:
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks] 
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks] Unsupported context manager
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]   Explanation: Dynamo does not know how to enter a `_GeneratorContextManager` context manager.
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]   Hint: Avoid using the unsupported context manager.
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]   Hint: If the context manager seems like it should be supported (e.g. torch.set_grad_enabled), then it may be the case that it was created outside the compiled region, which Dynamo does not support. Supported context managers can cross graph break boundaries only if they are local non-closure variables, or are intermediate values.
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]   Hint: File an issue to PyTorch. Simple context managers can potentially be supported, but note that context managers can't be supported in general
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks] 
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]   Developer debug context: Attempted SETUP_WITH/BEFORE_WITH/LOAD_SPECIAL on LazyVariableTracker(realized: UserDefinedObjectVariable(_GeneratorContextManager))
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks] 
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]  For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0142.html
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks] 
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks] User code traceback:
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]   File "/work/wt/explain/tests/data/logs/_capture/cpu_train_healthy2.py", line 23, in <module>
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]     y = step_fn(x)
V1123 11:21:16.322000 14990 site-packages/torch/_dynamo/symbolic_convert.py:5124] [1/0] [__graph_breaks]         ^^^^^^^^^^
/usr/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py:1446: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.
  return fn(*args, **kwargs)
step 0: loss 0.8831 lr 1.0e-03 it/s 3.2
step 1: loss 0.8984 lr 1.0e-03 it/s 3.2
step 2: loss 0.8829 lr 1.0e-03 it/s 3.2
step 3: loss 0.8922 lr 1.0e-03 it/s 3.2
step 4: loss 0.8873 lr 1.0e-03 it/s 3.2
Training complete. Saved checkpoint to ./out/model.safetensors
(SoulX-FlashTalk) wzr@DESKTOP-H41D2AV:~/SoulX-FlashTalk$ bash inference_script_single_gpu.sh 
/home/wzr/SoulX-FlashTalk/flash_talk/wan/modules/model.py:31: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.
  @amp.autocast(enabled=False)
/home/wzr/SoulX-FlashTalk/flash_talk/wan/modules/model.py:42: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.
  @amp.autocast(enabled=False)
ok torch.Size([1, 2, 256, 64])
ok
  rank_zero_deprecation(
You are using a CUDA device ('NVIDIA GeForce RTX 4060 Laptop GPU') that has Tensor Cores. 
To properly utilize them, you should set torch.set_float32_matmul_precision('medium' | 'high') which will trade-off precision for performance. 
For more details, read 
https://pytorch.org/docs/stable/generated/torch.set_float32_matmul_precision.html#torch.set_float32_matmul_precision
  triton_mm_337 0.0288 ms 96.4% ACC_TYPE='tl.float32', ALLOW_TF32=True, BLOCK_K=32, BLOCK_M=16, BLOCK_N=64, B_PROLOGUE_CAST_TYPE=None, EVEN_K=True, GROUP_M=8, num_stages=5, num_warps=4
  triton_mm_348 0.0296 ms 93.8% ACC_TYPE='tl.float32', ALLOW_TF32=True, BLOCK_K=32, BLOCK_M=16, BLOCK_N=64, B_PROLOGUE_CAST_TYPE=None, EVEN_K=True, GROUP_M=8, num_stages=3, num_warps=4
  triton_mm_344 0.0301 ms 92.3% ACC_TYPE='tl.float32', ALLOW_TF32=True, BLOCK_K=32, BLOCK_M=16, BLOCK_N=128, B_PROLOGUE_CAST_TYPE=None, EVEN_K=True, GROUP_M=8, num_stages=3, num_warps=4
  triton_mm_345 0.0307 ms 90.7% ACC_TYPE='tl.float32', ALLOW_TF32=True, BLOCK_K=32, BLOCK_M=16, BLOCK_N=128, B_PROLOGUE_CAST_TYPE=None, EVEN_K=True, GROUP_M=8, num_stages=4, num_warps=8
  triton_mm_346 0.0312 ms 89.1% ACC_TYPE='tl.float32', ALLOW_TF32=True, BLOCK_K=64, BLOCK_M=16, BLOCK_N=128, B_PROLOGUE_CAST_TYPE=None, EVEN_K=True, GROUP_M=8, num_stages=3, num_warps=4
SingleProcess AUTOTUNE benchmarking takes 1.6365 seconds and 0.0036 seconds precompiling
AUTOTUNE addmm(1x32, 1x256, 256x32)
  triton_mm_740 0.0276 ms 100.0% ACC_TYPE='tl.float32', ALLOW_TF32=True, BLOCK_K=32, BLOCK_M=16, BLOCK_N=32, B_PROLOGUE_CAST_TYPE=None, EVEN_K=True, GROUP_M=8, num_stages=5, num_warps=2
#
i-56butc28zq2jtjaluzq7va7p6:9822:9822 [0] NCCL INFO Bootstrap: Using bond0:10.0.11.5<0>
i-56butc28zq2jtjaluzq7va7p6:9822:9822 [0] NCCL INFO cudaDriverVersion 12080
i-56butc28zq2jtjaluzq7va7p6:9822:9822 [0] NCCL INFO NCCL version 2.26.5+cuda12.9
i-56butc28zq2jtjaluzq7va7p6:9822:9928 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.
i-56butc28zq2jtjaluzq7va7p6:9822:9928 [0] NCCL INFO NET/IB : Using [0]mlx5_bond_0:1/RoCE [RO]; OOB bond0:10.0.11.5<0>
i-56butc28zq2jtjaluzq7va7p6:9822:9928 [0] NCCL INFO PROFILER/Plugin: Could not find: libnccl-profiler.so.
i-56butc28zq2jtjaluzq7va7p6:9822:9928 [0] NCCL INFO Using network IB
Will archive states to 20241119-165050
/home/lloyd/.pyenv/versions/puffer/lib/python3.11/site-packages/torch/_inductor/compile_fx.py:167: UserWarning: TensorFloat32 tensor cores for float32 matrix multiplication available but not enabled. Consider setting `torch.set_float32_matmul_precision('high')` for better performance.
  warnings.warn(
skipping cudagraphs due to ['incompatible ops']
Skipping import of cpp extensions due to incompatible torch version 2.9.0a0+git0fabc3b for torchao version 0.14.0         Please see GitHub issue #2919 for more info
Loading checkpoint shards:   0%|                                                                                                                                                             | 0/4 [00:00<?, ?it/s]/pytorch/xingyuan/projects/20251020-pytorch28-validate/pytorch/torch/__init__.py:1617: UserWarning: Please use the new API settings to control TF32 behavior, such as torch.backends.cudnn.conv.fp32_precision = 'tf32' or torch.backends.cuda.matmul.fp32_precision = 'ieee'. Old settings, e.g, torch.backends.cuda.matmul.allow_tf32 = True, torch.backends.cudnn.allow_tf32 = True, allowTF32CuDNN() and allowTF32CuBLAS() will be deprecated after Pytorch 2.9. Please see https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices (Triggered internally at /pytorch/xingyuan/projects/20251020-pytorch28-validate/pytorch/aten/src/ATen/Context.cpp:80.)
  _C._set_float32_matmul_precision(precision)
/home/wentao/pytorch/torch/_inductor/compile_fx.py:321: UserWarning: TensorFloat32 tensor cores for float32 matrix multiplication available but not enabled. Consider setting `torch.set_float32_matmul_precision('high')` for better performance.
warnings.warn
(/home/wentao/pytorch/torch/_inductor/compile_fx.py:321: UserWarning: TensorFloat32 tensor cores for float32 matrix multiplication available but not enabled. Consider setting `torch.set_float32_matmul_precision('high')` for better performance.
warnings.warn
/home/wentao/pytorch/torch/_inductor/compile_fx.py:321: UserWarning: TensorFloat32 tensor cores for float32 matrix multiplication available but not enabled. Consider setting `torch.set_float32_matmul_precision('high')` for better performance.
warnings.warn
{'loss': 1.2345, 'grad_norm': 3.456789, 'learning_rate': 4.5e-05, 'epoch': 0.12}
{'train_runtime': 1234.5678, 'train_samples_per_second': 12.345, 'train_steps_per_second': 0.771, 'train_loss': 0.9876, 'epoch': 3.0}
 45%|████▌     | 450/1000 [12:34<15:21,  1.68s/it, loss=0.432, lr=2.1e-05]
Epoch 2/10: 100%|██████████| 500/500 [01:02<00:00, 8.01it/s, loss=0.123]
2025-03-14 10:22:33,123 - INFO - accelerate.utils.modeling - Device 0 seems unavailable, Proceeding to check subsequent devices.
2025-03-14 10:22:35,456 - INFO - __main__ - ***** Running training *****
2025-03-14 10:22:35,456 - INFO - __main__ -   Num examples = 10000
2025-03-14 10:22:35,457 - INFO - __main__ -   Instantaneous batch size per device = 8
[rank0]:[W314 10:22:40.123456789 ProcessGroupNCCL.cpp:4561] Warning: using GPU 0 to perform barrier as devices used by this process are currently unknown.
INFO 03-14 10:22:41 [config.py:1234] Using max model len 4096
INFO 03-14 10:22:45 [gpu_model_runner.py:1500] Model loading took 14.9 GiB and 12.3 seconds
wandb: Tracking run with wandb version 0.19.1
wandb: Run data is saved locally in /home/user/wandb/run-20250314_102233-abcd1234
Saving model checkpoint to ./output/checkpoint-500
Configuration saved in ./output/checkpoint-500/config.json
Model weights saved in ./output/checkpoint-500/model.safetensors
step 1200 | loss 2.3456 | lr 3.00e-04 | grad_norm 0.912 | tokens/s 45678 | mfu 41.2%
Loading checkpoint shards: 100%|██████████| 4/4 [00:05<00:00,  1.32s/it]
The following values were not passed to `accelerate launch` and had defaults used instead: `--num_processes` was set to a value of `1`
You are using a model of type llama to instantiate a model of type mistral. This is not supported for all configurations of models and can yield errors.
Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained.
torch_dtype is deprecated! Use dtype instead!
/usr/lib/python3.11/site-packages/torch/utils/checkpoint.py:92: UserWarning: None of the inputs have requires_grad=True. Gradients will be None
Generating train split: 100%|██████████| 10000/10000 [00:01<00:00, 7654.32 examples/s]
Map (num_proc=8): 100%|██████████| 10000/10000 [00:03<00:00, 3012.45 examples/s]
validation: val_loss=0.4321 val_acc=0.8765 best=True patience=3
Using device: cuda, dtype: torch.bfloat16, compile: True, attention: flex
model.layers.0.self_attn.q_proj.weight torch.Size([4096, 4096]) requires_grad=False"""
