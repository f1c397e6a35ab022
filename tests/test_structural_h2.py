"""The structural readers of tune-h2 (issue 22, cycle 2 of rounds 8-9): protobuf's refusal of old generated code in
both spellings, torch.distributed used without a process group or without the launcher's environment, a checkpoint
sharded for another model-parallel size, ZeRO-3's partitioned parameters used outside the engine, onnxruntime-gpu's
CUDA provider built for another CUDA major, and a macOS process of the wrong architecture. Lines are written here in
the shape the real code prints (sources in the comments and in flexdoctor/knowledge/structural/h2_tables.toml), not
copied from the corpus; each class has a sibling and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident

SITE = "/opt/conda/lib/python3.10/site-packages"


# --- protobuf >= 4 refusing _pb2.py files from protoc < 3.19 ----------------------------------------------------------

_PROTO_TAIL = ("If this call came from a _pb2.py file, your generated code is out of date and must be regenerated with "
               "protoc >= 3.19.0.\nIf you cannot immediately regenerate your protos, some other possible workarounds "
               "are:\n 1. Downgrade the protobuf package to 3.20.x or lower.\n 2. Set "
               "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python (but this will use pure-Python parsing and will be much "
               "slower).\n")


def _proto(spelling: str) -> str:
    return frames(("/srv/app/infer.py", "import onnx"), (f"{SITE}/onnx/onnx_ml_pb2.py", "_descriptor.EnumDescriptor("),
                  (f"{SITE}/google/protobuf/descriptor.py", "_message.Message._CheckCalledFromGeneratedFile()")) + (
        f"TypeError: Descriptors {spelling} be created directly.\n" + _PROTO_TAIL)


def test_protobuf_4_21_spelling_cannot_not_is_read():
    # protobuf 4.21.x's descriptor.py printed "cannot not" (fangfufu/Linux-Fake-Background-Webcam#179 on 4.21.1)
    top, fix = first(_proto("cannot not"))
    assert ident(top) == "version-constraint:protobuf", ident(top)
    assert "protobuf==3.20.3" in fix and "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python" in fix, fix


def test_protobuf_later_spelling_still_read():
    top, fix = first(_proto("cannot"))
    assert ident(top) == "version-constraint:protobuf" and "protobuf==3.20.3" in fix, fix


def test_protobuf_healthy_neighbour_stays_silent():
    # protobuf 5.28's runtime_version.py warns (and goes on) when gencode is older than the runtime
    healthy("Successfully installed protobuf-4.21.1\n"
            f"{SITE}/google/protobuf/runtime_version.py:112: UserWarning: Protobuf gencode version 5.27.2 is older "
            "than the runtime version 5.28.3 at tensorboard/compat/proto/tensor.proto. Please avoid checked-in "
            "Protobuf gencode that can be obsolete.\n  warnings.warn(\n")


# --- ZeRO-3 / FSDP: a partitioned (0-element) weight used outside the engine -----------------------------------------

def _fwd(message: str, op: str = "torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)") -> str:
    return "[rank0]: " + frames(("/work/train_sd.py", "encoder_hidden_states = text_encoder(input_ids)[0]"),
                                (f"{SITE}/torch/nn/functional.py", op)).replace("\n", "\n[rank0]: ").rstrip(" [rank0]:") \
        + "\n[rank0]: " + message + "\n"


def test_embedding_weight_not_2d_names_the_zero3_remedies():
    top, fix = first(_fwd("RuntimeError: 'weight' must be 2-D"))
    assert ident(top) == "unsupported-op:zero3", ident(top)
    for word in ("zero3_init_flag: false", "GatheredParameters", "ZeRO-2", "zero3_init_context_manager(enable=False)",
                 "unwrap_model_for_generation"):
        assert word in fix, (word, fix)


def test_conv_and_layernorm_siblings_are_the_same_class():
    top, _ = first(_fwd("RuntimeError: weight should have at least three dimensions",
                        "return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)"))
    assert ident(top) == "unsupported-op:zero3", ident(top)
    top, _ = first(_fwd("RuntimeError: Expected weight to be of same shape as normalized_shape, but got weight of "
                        "shape [0] and normalized_shape = [4096]",
                        "return torch.layer_norm(input, normalized_shape, weight, bias, eps)"))
    assert ident(top) == "unsupported-op:zero3", ident(top)


def test_layernorm_with_a_real_shape_mismatch_is_not_zero3():
    result = _explain_scan("RuntimeError: Expected weight to be of same shape as normalized_shape, but got weight of "
                           "shape [768] and normalized_shape = [1024]\n")
    assert not any(a.subject == "zero3" for a in result.answers)


def _explain_scan(text: str):
    from _explain_items import scan
    return scan(text)


# --- the launcher's variables missing ------------------------------------------------------------------------------

_RDZV = (f"{SITE}/torch/distributed/rendezvous.py", 'raise _env_error("RANK")')


def test_env_rendezvous_without_rank_names_torchrun_and_launch():
    log = frames(("train.py", 'dist.init_process_group("nccl")'), _RDZV) + (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, "
        "but not set\n")
    top, fix = first(log)
    assert ident(top) == "launcher:no-launcher", ident(top)
    assert "torchrun --nproc_per_node=" in fix and "python -m torch.distributed.launch --nproc_per_node=" in fix, fix
    assert "gloo" not in fix


def test_script_reading_local_rank_sibling_and_windows_gloo():
    log = frames((r"C:\work\yolo\tools\train.py", "local_rank = int(os.environ['LOCAL_RANK'])"),
                 (r"C:\Python310\lib\os.py", "raise KeyError(key) from None")) + "KeyError: 'LOCAL_RANK'\n"
    top, fix = first(log)
    assert ident(top) == "launcher:no-launcher" and "LOCAL_RANK" in top.title, ident(top)
    assert "torchrun" in fix and "backend='gloo'" in fix, fix


def test_paste_cut_at_the_raising_frame_is_read():
    top, fix = first(frames(("train.py", "dist.init_process_group(backend='nccl', world_size=2)"),
                            (_RDZV[0], 'raise _env_error("MASTER_ADDR")')))
    assert ident(top) == "launcher:no-launcher" and "MASTER_ADDR" in top.title, ident(top)


def test_healthy_launcher_lines_stay_silent():
    healthy("*****************************************\nSetting OMP_NUM_THREADS environment variable for each process to "
            "be 1 in default, to avoid your system being overloaded.\n*****************************************\n"
            "[W socket.cpp:601] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot "
            "assign requested address).\nenv LOCAL_RANK=0 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1\n")


def test_old_torch_default_pg_source_line_is_read():
    log = frames(("train.py", "sampler = DistributedSampler(dataset)"),
                 (f"{SITE}/torch/distributed/distributed_c10d.py", "_check_default_pg()")).rstrip("\n")
    log += '\n  File "x/torch/distributed/distributed_c10d.py", line 191, in _check_default_pg\n' \
           '    "Default process group is not initialized"\n'
    top, fix = first(log)
    assert ident(top) == "launcher:no-process-group" and "torchrun" in fix, ident(top)
    top, _ = first("AssertionError: Default process group is not initialized\n")
    assert ident(top) == "launcher:no-process-group"


# --- Meta's reference Llama loader: one process per shard ---------------------------------------------------------

def _llama(msg: str) -> str:
    return frames(("example_chat_completion.py", "generator = Llama.build("),
                  ("/home/u/llama/llama/generation.py", "assert model_parallel_size == len(")) + msg + "\n"


def test_mp_two_world_one_names_nproc_per_node_two():
    top, fix = first(_llama("AssertionError: Loading a checkpoint for MP=2 but world size is 1"))
    assert ident(top) == "launcher:model-parallel", ident(top)
    assert "torchrun --nproc_per_node 2" in fix and "download.sh" in fix, fix


def test_mp_sibling_eight_and_torchrun_failure_after_it():
    log = _llama("AssertionError: Loading a checkpoint for MP=8 but world size is 4") + (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 4242) of binary: "
        "/usr/bin/python3\n")
    top, fix = first(log)
    assert ident(top) == "launcher:model-parallel" and "--nproc_per_node 8" in fix, (ident(top), fix)


def test_mp_zero_means_no_shard_in_ckpt_dir():
    top, fix = first(_llama("AssertionError: Loading a checkpoint for MP=0 but world size is 1"))
    assert ident(top) == "launcher:no-checkpoint" and "consolidated.00.pth" in fix, fix


# --- onnxruntime-gpu built for CUDA 11 ----------------------------------------------------------------------------

_ORT = ("2025-01-07 10:00:00.000000000 [E:onnxruntime:Default, provider_bridge_ort.cc:1862 TryGetProviderInfo_CUDA] "
        "/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1539 onnxruntime::Provider& "
        "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
        "libonnxruntime_providers_cuda.so with error: {lib}: cannot open shared object file: No such file or directory\n")


def test_ort_cuda11_library_names_the_cuda12_build():
    top, fix = first(_ORT.format(lib="libcublasLt.so.11"))
    assert ident(top) == "shared-library:libcublasLt.so.11", ident(top)
    assert "onnxruntime-gpu>=1.19" in fix and "onnxruntime-cuda-12" in fix and "--index-url" in fix, fix


def test_ort_sibling_cudart_and_cudnn8():
    for lib in ("libcudart.so.11.0", "libcudnn.so.8"):
        top, fix = first(_ORT.format(lib=lib))
        assert ident(top) == f"shared-library:{lib}" and "CUDA 12 build" in fix, (lib, fix)


def test_ort_cuda12_library_keeps_the_wheel_answer():
    top, fix = first(_ORT.format(lib="libcublasLt.so.12"))
    assert "onnxruntime-gpu>=1.19" not in fix and "nvidia-cublas-cu12" in fix, fix


# --- uv: no wheel for the interpreter's platform tag ---------------------------------------------------------------

def _uv(tag: str) -> str:
    return ("  \u00d7 No solution found when resolving dependencies:\n  \u2570\u2500\u25b6 Because torch==2.5.1 has no "
            f"wheels with a matching platform tag (e.g., `{tag}`) and you require torch==2.5.1, we can conclude that "
            "your requirements are unsatisfiable.\n\n      hint: Wheels are available for `torch` (v2.5.1) on the "
            "following platforms: `manylinux_2_28_aarch64`, `macosx_11_0_arm64`, `win_amd64`\n")


def test_uv_mac_x86_64_tag_names_rosetta_and_arm64():
    top, fix = first(_uv("macosx_14_0_x86_64"))
    assert ident(top) == "version-constraint:platform", ident(top)
    assert "native arm64 Python" in fix and "arch -arm64" in fix and "torch==2.2.2" in fix, fix


def test_uv_win32_sibling_names_64_bit_python():
    top, fix = first(_uv("win32"))
    assert ident(top) == "version-constraint:platform" and "64-bit Python" in fix, fix


# --- macOS dyld's newer wording -----------------------------------------------------------------------------------

def test_dyld_parenthesised_x86_64h_is_an_intel_mac():
    lib = "/Users/u/app/.venv/lib/python3.10/site-packages/torch/lib/libtorch_global_deps.dylib"
    top, fix = first(f"OSError: dlopen({lib}, 0x000A): tried: '{lib}' (mach-o file, but is an incompatible "
                     "architecture (have (arm64), need (x86_64h)))\n")
    assert ident(top) == "shared-library:libtorch_global_deps.dylib", ident(top)
    assert "Intel Mac" in fix and "x86_64 wheel" in fix, fix
