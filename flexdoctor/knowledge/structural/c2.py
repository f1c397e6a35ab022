"""The structural layer's distributed round (issue 22, tune-c2): distributed training, launchers and
serving engines, read by the shape of their own messages.

- DistributedDataParallel (``ddp``): unused parameters (named when TORCH_DISTRIBUTED_DEBUG=DETAIL printed
  them), a parameter marked ready twice (reentrant activation checkpointing), static_graph violated,
  Lightning's unused parameters, no default process group, device_ids with several GPUs, a module on the
  wrong device, a module without trainable parameters.
- A GPU index beyond the visible GPUs (``ordinal``): more processes than GPUs, the global rank used as a
  device index, CUDA_VISIBLE_DEVICES renumbering, Slurm/MPI local ranks.
- CUDA initialised before a fork (``fork``): vLLM's VLLM_WORKER_MULTIPROC_METHOD, DataLoader workers,
  torch.multiprocessing's start method.
- NCCL's own reasons (``nccl``): no usable socket interface, InfiniBand work completions by status
  (``c2_distributed.toml`` [[ibv]]), a verbs call failing, sockets refused; Gloo and the c10d store losing
  their peer (the victim of another rank's failure).
- Launchers (``launch``): a worker killed by a signal (``c2_distributed.toml`` [[signal]]), a summary with
  no rank error in the log, a closed rendezvous.
- DeepSpeed/FSDP/accelerate run-time errors (``train``) and vLLM/SGLang's memory and parallel checks
  (``serve``), with the flag values their messages state.

Every value put in a fix is a number or a name read by a bounded pattern (text from a log is data).
"""

from __future__ import annotations

import math
import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from . import errors
from .errors import env
from .model import Answer
from .readers import _answer
from .tables import _load

_TABLE = "c2_distributed.toml"
_LAUNCHER = "launcher"
_DETAIL = "TORCH_DISTRIBUTED_DEBUG=DETAIL"


def _w(key: str, **kw) -> str:
    return t(f"structural.c2.{key}", **kw)


def _ans(kind: str, subject: str, key: str, seen: Seen, facts: LogFacts, rank: int, commands=(),
         confidence: str = "high", **kw) -> Answer:
    """An answer whose title, cause and fix are structural.c2.<key>.{title,cause,fix}."""
    return _answer(kind, subject, confidence, _w(f"{key}.title", **kw), _w(f"{key}.cause", **kw),
                   _w(f"{key}.fix", **kw), list(commands), seen, facts, rank)


# --- DistributedDataParallel -------------------------------------------------------------------------

_PARAM = re.compile(r"[A-Za-z_][\w.]{0,200}")
_DDP_KEYS = (("twice", "ddp_twice", "ready-twice"), ("static", "ddp_static", "static-graph"),
             ("pg", "ddp_pg", "no-process-group"), ("devids", "ddp_devids", "device-ids"),
             ("frozen", "ddp_frozen", "no-trainable-parameters"), ("lightning", "ddp_lightning", "unused-parameters"))


def _unused_names(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """The line TORCH_DISTRIBUTED_DEBUG=DETAIL adds under the unused-parameters error: it names them."""
    root = facts.root[3] if facts.root else ""
    if "finished reduction" not in root:
        return None  # the names line answers only under DDP's own error
    names = [n for n in (p.strip() for p in seen.groups.get("params", "").split(",")) if _PARAM.fullmatch(n)]
    if not names:
        return None
    shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
    return _ans(_LAUNCHER, "unused-parameters", "ddp_unused_named", seen, facts, 29, params=shown,
                who=seen.groups.get("rank", "?"))


def ddp(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("names"):
        return _unused_names(seen, facts)
    if g.get("unused"):
        return _ans(_LAUNCHER, "unused-parameters", "ddp_unused", seen, facts, 30, [env(_DETAIL, facts)])
    if g.get("placement"):
        cpu = "cpu" in (g.get("devs") or "")
        return _ans(_LAUNCHER, "module-device", "ddp_cpu" if cpu else "ddp_placement", seen, facts, 30)
    for group, key, subject in _DDP_KEYS:
        if g.get(group):
            commands = [env(_DETAIL, facts)] if group in ("twice", "static") else []
            return _ans(_LAUNCHER, subject, key, seen, facts, 30, commands)
    return None


# --- a GPU index beyond the visible GPUs -------------------------------------------------------------

_COUNT = "python -c \"import torch; print(torch.cuda.device_count())\""


def ordinal(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """cudaErrorInvalidDevice (101): read as the launch's rank-to-GPU mapping (the CUDA table's generic
    reading of the same error ranks after this one and is replaced by it)."""
    visible = ("echo %CUDA_VISIBLE_DEVICES%" if facts.platform == "windows" else "echo $CUDA_VISIBLE_DEVICES")
    return _answer("cuda-error", "cudaErrorInvalidDevice", "high",
                   t("structural.title.cuda", name="cudaErrorInvalidDevice", code=101, text="invalid device ordinal"),
                   _w("ordinal.cause"), _w("ordinal.fix"), [_COUNT, visible, "nvidia-smi -L"], seen, facts, 43)


# --- CUDA initialised before a fork ------------------------------------------------------------------

# Process names an engine prefixes its log lines with: vLLM V0's "(VllmWorkerProcess pid=N)", V1's
# "(EngineCore_DP0 pid=N)" (vllm/v1/engine/core.py).
_ENGINE_MARKS = {"vllm": ("vllm", "enginecore"), "sglang": ("sglang",)}


def _mentions(name: str, seen: Seen, facts: LogFacts) -> bool:
    low = seen.text.lower()
    return (any(m in low for m in _ENGINE_MARKS.get(name, (name,))) or facts.package == name
            or any(f"/{name}/" in p.replace("\\", "/") for p in facts.paths))


def fork(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    dev = seen.groups.get("dev", "CUDA")
    if _mentions("vllm", seen, facts):
        return _ans(_LAUNCHER, "fork", "fork_vllm", seen, facts, 28,
                    [env("VLLM_WORKER_MULTIPROC_METHOD=spawn", facts)], dev=dev)
    loader = "DataLoader" in seen.text or any("torch/utils/data" in p.replace("\\", "/") for p in facts.paths)
    return _ans(_LAUNCHER, "fork", "fork_loader" if loader else "fork", seen, facts, 28, dev=dev)


# --- NCCL's own reasons, Gloo and the store ----------------------------------------------------------

_NCCL_NAME = re.compile(r"\b(nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError))\b")


def _nccl_subject(facts: LogFacts, default: str) -> str:
    m = _NCCL_NAME.search(facts.root[3]) if facts.root else None
    return m.group(1) if m else default


def _ib(seen: Seen, facts: LogFacts) -> Answer:
    status = int(seen.groups["wc"])
    row = next((r for r in _load(_TABLE)["ibv"] if r["status"] == status), None)
    cause = row["cause"] if row else "retry"
    name = row["name"] if row else str(status)
    return _ans("nccl-error", _nccl_subject(facts, "ncclRemoteError"), f"ib_{cause}", seen, facts, 41,
                ["ibstat", "ibv_devinfo", env("NCCL_DEBUG=INFO", facts)], status=name)


def nccl(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("ifname"):
        return _ans("nccl-error", _nccl_subject(facts, "ncclInternalError"), "ifname", seen, facts, 41,
                    ["ip -brief address", "env | grep -E 'NCCL_SOCKET_IFNAME|GLOO_SOCKET_IFNAME'",
                     env("NCCL_DEBUG=INFO", facts)])
    if g.get("wc"):
        return _ib(seen, facts)
    if (g.get("verb") or g.get("sock")) and facts.root is None:
        return None  # NCCL may retry or fall back to sockets after these WARNs: only a log that failed is read
    if g.get("verb"):
        return _ans("nccl-error", _nccl_subject(facts, "ncclSystemError"), "ib_verbs", seen, facts, 42,
                    ["ibv_devinfo", env("NCCL_DEBUG=INFO", facts)], verb="ibv_" + g["verb"])
    if g.get("sock"):
        return _ans("nccl-error", _nccl_subject(facts, "ncclSystemError"), "sock_network", seen, facts, 42,
                    ["ip -brief address", env("NCCL_DEBUG=INFO", facts)], reason=g["sock"])
    if g.get("text"):
        return errors.nccl(seen, facts)  # ncclResult_t's text in torch's abort report: the NCCL table's reading
    if g.get("gloo") == "Timed out waiting":
        return _ans(_LAUNCHER, "collective-timeout", "gloo_timeout", seen, facts, 62)
    if g.get("gloo") or g.get("store"):
        return _ans(_LAUNCHER, "peer-exited", "peer_exited", seen, facts, 62)
    return None


# --- launchers ---------------------------------------------------------------------------------------

def _summary_only(facts: LogFacts) -> bool:
    """Whether the log's only exception is the launcher's own report (no rank's error is in it)."""
    return facts.root is None or facts.root[1].split(".")[-1] in ("ChildFailedError", "CalledProcessError", "error")


def _signal(number: int, seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = next((r for r in _load(_TABLE)["signal"] if r["number"] == number), None)
    if row is None:
        return None
    if row["cause"] == "bus":  # /dev/shm: the shared-memory reading, in its words
        return _answer("shared-memory", "/dev/shm", "high", t("structural.shm.title"), t("structural.shm.cause"),
                       t("structural.shm.fix"), ["df -h /dev/shm"], seen, facts, row["rank"])
    commands = {"segv": [env("PYTHONFAULTHANDLER=1", facts)], "abrt": [env("TORCH_SHOW_CPP_STACKTRACES=1", facts)],
                "ill": ["grep -o -w -E 'avx2|avx512f' /proc/cpuinfo | sort -u"]}.get(row["cause"], [])
    return _ans(_LAUNCHER, row["name"], f"sig_{row['cause']}", seen, facts, row["rank"], commands, "medium",
                sig=row["name"], num=number)


def launch(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("closed"):
        return _ans(_LAUNCHER, "rendezvous-closed", "rdzv_closed", seen, facts, 45)
    code = -int(g["sig"]) if g.get("sig") else int(g.get("code", "0"))
    if code in (0, -9, 137):
        return None  # success, or SIGKILL: the out-of-memory reading (the kernel's OOM killer) answers
    if code < 0:
        return _signal(-code, seen, facts)
    if code > 128 and code - 128 != 9:
        return _signal(code - 128, seen, facts)  # a shell's 128+N
    if _summary_only(facts):
        return _ans(_LAUNCHER, "worker-failed", "exit_summary", seen, facts, 68, (), "medium", code=code)
    return None


# --- DeepSpeed, FSDP, accelerate ---------------------------------------------------------------------

_DS_OPS = {"DeepSpeedCPUAdam": "CPU_ADAM", "DeepSpeedCPUAdagrad": "CPU_ADAGRAD", "DeepSpeedCPULion": "CPU_LION"}
_FLOATS = {"torch.bfloat16", "torch.float16", "torch.float32"}


def _deepspeed(seen: Seen, facts: LogFacts) -> Answer:
    cls = seen.groups["ds"]
    op = _DS_OPS[cls]
    pip = "python -m pip install deepspeed --no-build-isolation --no-cache-dir --force-reinstall --no-deps"
    build = [f"set DS_BUILD_{op}=1", pip] if facts.platform == "windows" else [f"DS_BUILD_{op}=1 {pip}"]
    return _answer("pip-no-distribution", "deepspeed", "high", _w("ds_op.title", cls=cls), _w("ds_op.cause", cls=cls),
                   _w("ds_op.fix", cls=cls, op=op), ["ds_report"] + build, seen, facts, 34)


def train(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("ds"):
        return _deepspeed(seen, facts)
    if g.get("a"):
        a, b = g["a"], g["b"]
        if "torch.uint8" in (a, b) and ({a, b} - {"torch.uint8"}) <= _FLOATS:
            other = next(iter({a, b} - {"torch.uint8"}), "torch.bfloat16")
            return _ans(_LAUNCHER, "fsdp-dtype", "fsdp_quant", seen, facts, 30, a=a, b=b, dtype=other)
        return _ans(_LAUNCHER, "fsdp-dtype", "fsdp_dtype", seen, facts, 30, a=a, b=b)
    if g.get("rg"):
        return _ans(_LAUNCHER, "fsdp-requires-grad", "fsdp_grad", seen, facts, 30)
    if g.get("other"):
        return _ans(_LAUNCHER, "quantized-device", "accel_device", seen, facts, 30, bits=g.get("bits", ""))
    if g.get("offload"):
        return _ans(_LAUNCHER, "quantized-offload", "accel_offload", seen, facts, 30, bits=g.get("bits", ""))
    return None


# --- vLLM / SGLang -----------------------------------------------------------------------------------

def _util(free: str, total: str) -> Optional[str]:
    try:
        frac = float(free) / float(total) - _load(_TABLE)["vllm"]["margin"]
    except (ValueError, ZeroDivisionError):
        return None
    return f"{math.floor(frac * 100) / 100:.2f}" if 0.05 <= frac < 1 else None


def _tp_sizes(heads: int, tp: int) -> str:
    sizes = [n for n in _load(_TABLE)["vllm"]["tp_sizes"] if heads % n == 0 and n != tp]
    return ", ".join(str(n) for n in sizes) or "1"


def _capture(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    engine = next((e for e in ("vllm", "sglang") if _mentions(e, seen, facts)), None)
    if engine is None:
        return None  # elsewhere the CUDA table's reading (CUDA graphs in torch.compile) answers
    name = ("cudaErrorStreamCaptureInvalidated" if "previous error" in seen.text or "Invalidated" in seen.text
            else "cudaErrorStreamCaptureUnsupported")
    return _ans("cuda-error", name, f"capture_{engine}", seen, facts, 40)


def serve(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("capture"):
        return _capture(seen, facts)
    if g.get("fit") or g.get("est"):
        fit = (g.get("fit") or g.get("est") or "").replace(",", "")
        return _ans("out-of-memory", "cuda", "kv_short", seen, facts, 30, fit=fit)
    if g.get("noblocks") or g.get("needed"):
        return _ans("out-of-memory", "cuda", "kv_none", seen, facts, 31)
    if g.get("free"):
        util = _util(g["free"], g["total"])
        key = "startup_free" if util else "startup_busy"
        return _ans("out-of-memory", "cuda", key, seen, facts, 30, ["nvidia-smi"], free=g["free"], total=g["total"],
                    want=g["util"], util=util or "")
    if g.get("sglang"):
        return _ans("out-of-memory", "cuda", "sglang_mem", seen, facts, 31)
    if g.get("heads"):
        heads, tp = int(g["heads"]), int(g["tp"])
        return _ans(_LAUNCHER, "tensor-parallel-size", "tp_heads", seen, facts, 30, heads=heads, tp=tp,
                    sizes=_tp_sizes(heads, tp))
    return None
