"""The structural readers of tuner m3 (issue 22, last wave: leftovers of rounds 12-14).

- ``cudainit``: ggml's CUDA backend (llama.cpp, whisper.cpp, ollama's runner) could not initialise CUDA:
  ``ggml_cuda_init: failed to initialize CUDA: <cudaGetErrorString>`` (ggml/src/ggml-cuda/ggml-cuda.cu,
  ggml_cuda_init: GGML_LOG_ERROR("%s: failed to initialize " GGML_CUDA_NAME ": %s\\n", __func__,
  cudaGetErrorString(err)) after cudaGetDeviceCount fails). The message is read through the CUDA error table
  (cuda_errors.toml, as errors.cuda does); cudaErrorUnknown (999, "unknown error") there is, on Linux, the
  nvidia_uvm kernel module missing (not loaded at boot, or lost across a suspend/resume): the answer loads it
  (sudo modprobe nvidia_uvm, or nvidia-modprobe -u -c=0), on the host when the program runs in a container.
  Sources: llama.cpp#7218, #1866; NVIDIA forum "CUDA fails after suspend" (sudo rmmod nvidia_uvm && sudo modprobe
  nvidia_uvm); nvidia-modprobe(1): -u loads nvidia-uvm, -c=0 creates /dev/nvidia0.
- ``slurm``: Lightning's own checks of the Slurm layout (lightning/fabric/plugins/environments/slurm.py,
  SLURMEnvironment.validate_settings / _validate_srun_variables): ``You set `devices=4` in Lightning, but the
  number of tasks per node configured in SLURM `--ntasks-per-node=1` does not match``, ``You set `num_nodes=1`
  ... `--nodes=2` does not match``, ``You set `--ntasks=8` in your SLURM bash script, but this variable is not
  supported``. Lightning on Slurm expects one task per GPU started by srun: --ntasks-per-node equal to
  Trainer(devices=...), --nodes equal to num_nodes (Lightning docs, "Run on an on-prem cluster (advanced)": SLURM).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from . import errors
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue

_say = catalogue("m3")
_SRUN = "srun python train.py  # in job.sh: srun starts one task per GPU"
_UVM = ["sudo modprobe nvidia_uvm", "nvidia-modprobe -u -c=0", "lsmod | grep nvidia_uvm", "nvidia-smi"]


def cudainit(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """ggml could not initialise CUDA: the CUDA error its message names (cudaErrorUnknown: nvidia_uvm)."""
    text = seen.groups.get("text") or ""
    row = errors._cuda_row({"text": text})
    if row is None:
        return None
    if row["category"] != "unknown":
        return errors.cuda(replace(seen, groups={"text": text}), facts)
    commands = [c for c in _UVM if facts.platform != "windows" or c == "nvidia-smi"]
    fix = _say("uvm.fix_windows") if facts.platform == "windows" else _say("uvm.fix")
    return _answer("cuda-error", row["name"], "high", _say("uvm.title", prog="ggml_cuda_init"),
                   _say("uvm.cause"), fix, commands, seen, facts, 12)


def slurm(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """Lightning refused the Slurm job's layout: one task per GPU, started by srun, --nodes = num_nodes."""
    g = seen.groups
    if g.get("devices") and g.get("tasks"):
        key, kw = "devices", {"devices": g["devices"], "tasks": g["tasks"]}
        commands = [f"sbatch --ntasks-per-node={g['devices']} --gpus-per-node={g['devices']} job.sh", _SRUN]
    elif g.get("num_nodes") and g.get("nodes"):
        key, kw = "nodes", {"num_nodes": g["num_nodes"], "nodes": g["nodes"]}
        commands = [f"sbatch --nodes={g['num_nodes']} job.sh", _SRUN]
    elif g.get("ntasks"):
        key, kw = "ntasks", {"ntasks": g["ntasks"]}
        commands = [_SRUN]
    else:
        return None
    return _answer("slurm", {"devices": "ntasks-per-node"}.get(key, key), "high", _say(f"slurm.title_{key}", **kw), _say("slurm.cause"),
                   _say(f"slurm.fix_{key}", **kw), commands, seen, facts, 14, package="lightning")
