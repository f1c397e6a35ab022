"""The classes tuned by helper tune-m3 (issue 22, last wave): Docker's "could not select device driver" in the
form newer Docker prints (no quoted driver) with the snap-Docker remedy; ggml's (llama.cpp, whisper.cpp) CUDA
init failure read through the CUDA error table (cudaErrorUnknown: the nvidia_uvm module); Lightning's own Slurm
task-count messages. Every line is written for the test in the shape the library prints it (its source is named
at each test), with siblings, and healthy lines of the same vocabulary that must raise nothing."""

from __future__ import annotations

import pytest

from _explain_items import first, fix_text, healthy, ident


# --- Docker without the NVIDIA runtime (moby daemon: "could not select device driver %q with capabilities: %v";
# newer Docker leaves the empty driver out) -------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "docker: Error response from daemon: could not select device driver with capabilities: [[gpu]].",
    'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
    "Error response from daemon: could not select device driver with capabilities: [[compute utility gpu]]",
    'Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]]',
])
def test_docker_without_nvidia_runtime_names_the_toolkit_and_snap(line):
    item = first("$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n" + line + "\n")
    assert ident(item) == "FDE970"
    text = fix_text(item)
    assert "nvidia-container-toolkit" in text and "nvidia-ctk runtime configure --runtime=docker" in text
    assert "snap remove docker" in text and "apt repository" in text


def test_docker_gpu_words_in_a_healthy_run_stay_silent():
    healthy("$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n"
            "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |\n"
            "INFO: selected device driver nvidia with capabilities [[gpu]]\n")


# --- ggml's CUDA init failure (ggml-cuda.cu ggml_cuda_init: "%s: failed to initialize CUDA: %s", cudaGetErrorString) ---

GGML_HEAD = ("ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no\n"
             "ggml_cuda_init: GGML_CUDA_FORCE_CUBLAS: no\n")


@pytest.mark.parametrize("prefix", ["", "llama-server  | ", "error:  "])
def test_ggml_cuda_init_unknown_error_loads_nvidia_uvm(prefix):
    item = first(GGML_HEAD + prefix + "ggml_cuda_init: failed to initialize CUDA: unknown error\n"
                 "llm_load_tensors: offloaded 33/33 layers to GPU\nllm_load_tensors:        CPU buffer size =  4437.80 MiB\n")
    assert ident(item) == "cuda-error:cudaErrorUnknown"
    text = fix_text(item)
    assert "sudo modprobe nvidia_uvm" in text and "nvidia-modprobe -u -c=0" in text
    assert "reboot" in text and "on the host" in text


@pytest.mark.parametrize("message, name", [
    ("no CUDA-capable device is detected", "cudaErrorNoDevice"),
    ("CUDA driver version is insufficient for CUDA runtime version", "FDE105"),  # the driver entry answers it
])
def test_ggml_cuda_init_other_errors_read_through_the_cuda_table(message, name):
    item = first(f"ggml_cuda_init: failed to initialize CUDA: {message}\n")
    assert ident(item) in (f"cuda-error:{name}", name)
    assert "nvidia_uvm" not in fix_text(item)


def test_ggml_cuda_init_healthy_lines_stay_silent():
    healthy(GGML_HEAD + "ggml_cuda_init: found 1 CUDA devices:\n"
            "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n"
            "llm_load_tensors: offloaded 33/33 layers to GPU\n")


# --- Lightning's Slurm layout checks (lightning/fabric/plugins/environments/slurm.py) -----------------------------

TB = ('Traceback (most recent call last):\n  File "train.py", line 52, in <module>\n    trainer.fit(model, dm)\n'
      '  File "/opt/venv/lib/python3.11/site-packages/lightning/fabric/plugins/environments/slurm.py", line 163, in '
      'validate_settings\n    raise ValueError(\n')


def test_lightning_devices_vs_ntasks_per_node_asks_for_one_task_per_gpu():
    item = first(TB + "ValueError: You set `devices=8` in Lightning, but the number of tasks per node configured in "
                 "SLURM `--ntasks-per-node=2` does not match. HINT: Set `devices=2`.\n")
    assert ident(item) == "slurm:ntasks-per-node"
    text = fix_text(item)
    assert "--ntasks-per-node=8" in text and "srun python" in text and "Trainer(devices=2)" in text


def test_lightning_num_nodes_vs_nodes():
    item = first(TB + "ValueError: You set `num_nodes=2` in Lightning, but the number of nodes configured in SLURM "
                 "`--nodes=4` does not match. HINT: Set `num_nodes=4`.\n")
    assert ident(item) == "slurm:nodes"
    assert "Trainer(num_nodes=4)" in fix_text(item)


def test_lightning_ntasks_without_per_node():
    item = first("RuntimeError: You set `--ntasks=16` in your SLURM bash script, but this variable is not supported. "
                 "HINT: Use `--ntasks-per-node=16` instead.\n")
    assert ident(item) == "slurm:ntasks"
    text = fix_text(item)
    assert "--ntasks-per-node" in text and "srun python train.py" in text


def test_lightning_slurm_healthy_lines_stay_silent():
    healthy("SLURM auto-requeueing enabled. Setting signal handlers.\n"
            "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/8\n"
            "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]\n")
