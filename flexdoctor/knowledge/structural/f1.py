"""The structural layer's readers of tune-f1 (issue 22, the round-5/6 train families): launchers, worker processes,
locales, CUDA extension builds, vLLM backends, DeepSpeed batch checks, quantized offload and Ray placement, read by the
error's shape with the remedy the threads establish.

- ``mpi``: Open MPI's "There are not enough slots available in the system to satisfy the N slots" (orte/prrte
  help-orte-rmaps-base.txt): slots per host (-H host:N, hostfile slots=N), Slurm tasks (--ntasks), --oversubscribe.
- ``fds``: torch.multiprocessing's file-descriptor sharing running out (CPython multiprocessing/reduction.py recvfds
  "received 0 items of ancdata", OSError [Errno 24] Too many open files): set_sharing_strategy('file_system'), ulimit -n.
- ``locale``: a non-UTF-8 locale (google/colab/_system_commands.py "A UTF-8 locale is required. Got X"; Click's
  "Python was configured to use ASCII as encoding"): the preferred-encoding override on Colab, LC_ALL/LANG elsewhere.
- ``archlist``: torch/utils/cpp_extension.py _get_cuda_arch_flags with no visible GPU (arch_list[-1] += '+PTX'
  IndexError): TORCH_CUDA_ARCH_LIST; a CPU torch or a CPU Colab runtime named when the log shows it.
- ``gcc11``: nvcc 11.4/11.5 on gcc 11's std_function.h ("parameter packs not expanded"): gcc-10 as host compiler or
  CUDA 11.6+ (f1_tables.toml [nvcc_gcc11]).
- ``softcap``: vLLM's Gemma-2 logits soft-capping that only FlashInfer ran (f1_tables.toml [vllm_softcap]).
- ``dsbatch``: DeepSpeed's "Check batch related parameters" (runtime/config.py _batch_assertion): world size 1 means
  the launcher did not reach DeepSpeed (f1_tables.toml [deepspeed_ws1]), else the batch numbers disagree.
- ``offload``: transformers' bitsandbytes quantizers refusing CPU/disk dispatch ("Some modules are dispatched on the CPU
  or the disk"): llm_int8_enable_fp32_cpu_offload with a device_map, or free GPU memory.
- ``fa1bwd``: flash-attn 1.x's backward head-dim limit off A100/H100 ("FlashAttention backward for head dim > 64
  requires A100 or H100 GPUs"): flash-attn 2 on Ampere/Ada, SDPA/xformers on Turing.
- ``ray``: Ray/vLLM/verl asking for more GPUs than the Ray cluster has: ray status, ray stop, address="auto", fewer GPUs.

Numbers taken from a log are checked to be digits before they go into a command (text from a log is data).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, on_windows
from .tables import _load


def _table(name: str) -> dict:
    return _load("f1_tables.toml")[name]


def _num(value: Optional[str]) -> Optional[str]:
    return value if value and value.isdigit() and len(value) <= 6 else None


# --- Open MPI slots ---------------------------------------------------------------------------------------

def mpi(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    n = _num(seen.groups.get("n")) or "N"
    slurm = facts.platform == "slurm" or bool(re.search(r"\bsrun\b|\bsbatch\b|SLURM_", seen.text))
    case = "slurm" if slurm else "hosts"
    # no command: the user's own mpirun line (its program and arguments) is not ours to reprint
    return _answer("launcher", "mpi slots", "high", t("structural.f1.mpi.title", n=n), t("structural.f1.mpi.cause"),
                   t(f"structural.f1.mpi.fix_{case}", n=n), [], seen, facts, 20)


# --- file descriptors of worker processes ---------------------------------------------------------------

def fds(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    commands = ["ulimit -n 65535"] if not on_windows(seen, facts) else []
    return _answer("launcher", "file descriptors", "high", t("structural.f1.fds.title"), t("structural.f1.fds.cause"),
                   t("structural.f1.fds.fix"), commands, seen, facts, 20)


# --- locale -------------------------------------------------------------------------------------------------

def locale(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    got = seen.groups.get("got") or ""
    got = got if re.fullmatch(r"[\w.-]{1,40}", got) else "ASCII"
    colab = bool(seen.groups.get("colab")) or "google/colab" in seen.text or "google.colab" in seen.text
    case = "colab" if colab else "shell"
    commands = [] if colab or on_windows(seen, facts) else ["export LC_ALL=C.UTF-8 LANG=C.UTF-8"]
    return _answer("unsupported-op", "locale", "high", t("structural.f1.locale.title", got=got),
                   t("structural.f1.locale.cause"), t(f"structural.f1.locale.fix_{case}"), commands, seen, facts, 20)


# --- CUDA extension builds ------------------------------------------------------------------------------------

_CPU_TORCH = re.compile(r"No CUDA runtime is found|Torch not compiled with CUDA enabled|\+cpu\b")


def archlist(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if _CPU_TORCH.search(seen.text) or (facts.torch or "").endswith("+cpu") or on_windows(seen, facts):
        case = "cputorch"
    else:
        case = "build"
    arch = "7.5;8.0;8.6" if (facts.cuda_major or 12) < 12 and not (facts.cuda or "").startswith("11.8") \
        else "7.5;8.0;8.6;8.9;9.0"
    var = f'TORCH_CUDA_ARCH_LIST="{arch}"'
    commands = [f"set {var}" if on_windows(seen, facts) else f"export {var}"]
    return _answer("unsupported-op", "cuda arch list", "high", t("structural.f1.arch.title"),
                   t("structural.f1.arch.cause"), t(f"structural.f1.arch.fix_{case}", var=var), commands, seen, facts,
                   20)


def gcc11(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = _table("nvcc_gcc11")
    m = re.search(r"c\+\+/(\d{1,2})/bits/", seen.text)
    gcc = m.group(1) if m else "11"
    if not gcc.isdigit() or int(gcc) < 11:
        return None
    host = row["host_gcc"]
    commands = [f"export CC=gcc-{host} CXX=g++-{host} CUDAHOSTCXX=g++-{host}"]
    return _answer("unsupported-op", "nvcc host compiler", "high", t("structural.f1.gcc.title", gcc=gcc),
                   t("structural.f1.gcc.cause", gcc=gcc, fixed=row["fixed_cuda"]),
                   t("structural.f1.gcc.fix", host=host, fixed=row["fixed_cuda"]), commands, seen, facts, 20)


# --- vLLM soft-capping ------------------------------------------------------------------------------------------

def softcap(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = _table("vllm_softcap")
    case = "rocm" if facts.rocm or "rocm" in seen.text.lower() else "cuda"
    commands = [f"pip install -U 'vllm>={row['fixed_vllm']}'"]
    return _answer("unsupported-op", "vllm", "high", t("structural.f1.softcap.title"), t("structural.f1.softcap.cause"),
                   t(f"structural.f1.softcap.fix_{case}", fixed=row["fixed_vllm"], env=row["env"]), commands, seen,
                   facts, 20)


# --- DeepSpeed batch check ----------------------------------------------------------------------------------------

_BATCH = re.compile(r"world_size\s{1,4}(\d{1,7}) != (\d{1,7}) \*\s{0,80}(\d{1,7}) \*\s{0,80}(\d{1,7})")


def dsbatch(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    m = _BATCH.search(seen.text)
    tb, mb, ga, ws = (int(x) for x in m.groups()) if m else (0, 0, 0, 0)
    row = _table("deepspeed_ws1")
    if m and ws != 1:
        case, commands = "numbers", []
        fix = t("structural.f1.ds.fix_numbers", want=mb * ga * ws, mb=mb, ga=ga, ws=ws)
    else:
        case, commands = "ws1", [f"pip install deepspeed=={row['good']}"]
        fix = t("structural.f1.ds.fix_ws1", good=row["good"], broken=row["broken"])
    return _answer("launcher", "deepspeed batch", "high", t(f"structural.f1.ds.title_{case}"),
                   t(f"structural.f1.ds.cause_{case}"), fix, commands, seen, facts, 20)


# --- quantized model dispatched to CPU/disk ----------------------------------------------------------------------

def offload(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    return _answer("unsupported-op", "bitsandbytes offload", "high", t("structural.f1.offload.title"),
                   t("structural.f1.offload.cause"), t("structural.f1.offload.fix"), [], seen, facts, 20)


# --- Ray placement --------------------------------------------------------------------------------------------------

def ray(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    have, want = _num(seen.groups.get("have")), _num(seen.groups.get("want"))
    title = t("structural.f1.ray.title_n", have=have, want=want) if have and want else t("structural.f1.ray.title")
    return _answer("launcher", "ray gpus", "high", title, t("structural.f1.ray.cause"), t("structural.f1.ray.fix"),
                   ["ray status"], seen, facts, 20)


# --- flash-attn 1.x backward head-dim limit ---------------------------------------------------------------------------

def fa1bwd(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    hd = _num(seen.groups.get("hd")) or "64"
    return _answer("unsupported-op", "flash-attn", "high", t("structural.f1.fa1.title", hd=hd),
                   t("structural.f1.fa1.cause", hd=hd), t("structural.f1.fa1.fix", hd=hd),
                   ["python -m pip install --upgrade 'flash-attn>=2' --no-build-isolation"], seen, facts, 20)
