"""The structural layer's readers of tune-h2 (issue 22, cycle 2 of rounds 8-9): distributed launch and sharding,
onnxruntime's CUDA provider, wheels for another platform tag, read by the error's shape with the remedy the threads
establish (sources: h2_tables.toml).

- ``zero3``: a weight with 0 elements reaching an op that checks its shape (F.embedding's "'weight' must be 2-D", a
  convolution's "at least three dimensions", layer_norm's "weight of shape [0]"): a parameter DeepSpeed ZeRO-3 (or FSDP)
  partitioned, used outside the engine that gathers it.
- ``envrank``: torch.distributed's env:// rendezvous, or the script itself (os.environ['LOCAL_RANK']), missing a variable
  only the launcher sets: the script was started with plain python.
- ``mp``: Meta's reference Llama loaders (one process per consolidated.NN.pth shard): "Loading a checkpoint for MP=N but
  world size is W" -> torchrun --nproc_per_node N; MP=0 -> no shard in --ckpt_dir.
- ``ort``: onnxruntime-gpu's libonnxruntime_providers_cuda.so needing a CUDA 11 / cuDNN 8 library: a CUDA 11 build of
  onnxruntime-gpu on a CUDA 12 machine -> the CUDA 12 build.
- ``uvtag``: uv's "no wheels with a matching platform tag (e.g., `tag`)": the interpreter's platform (an x86_64 Python on
  a Mac, a 32-bit Python on Windows) has no wheel.
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue, on_windows
from .tables import _load

_VAR = re.compile(r"[A-Z_]{1,40}")


_say = catalogue("h2")


# --- ZeRO-3 / FSDP: a partitioned weight used outside the engine ---------------------------------------------------

def zero3(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    case = next(k for k in ("emb", "conv", "ln") if seen.groups.get(k))
    return _answer("unsupported-op", "zero3", "medium", _say(f"zero3.title_{case}"), _say("zero3.cause"),
                   _say("zero3.fix"), [], seen, facts, 22)


# --- the launcher's variables missing -----------------------------------------------------------------------------

def envrank(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    var = seen.groups.get("var") or ""
    if not _VAR.fullmatch(var):
        return None
    fix = _say("env.fix") + (" " + _say("env.fix_windows") if on_windows(seen, facts, paths=True) else "")
    return _answer("launcher", "no-launcher", "high", _say("env.title", var=var), _say("env.cause", var=var), fix,
                   [], seen, facts, 24)


# --- Meta's reference Llama loaders: one process per shard ----------------------------------------------------------

def mp(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    shards, world = int(seen.groups["mp"]), int(seen.groups["ws"])
    if shards == 0:
        return _answer("launcher", "no-checkpoint", "high", _say("mp.title_none"), _say("mp.cause_none"),
                       _say("mp.fix_none"), [], seen, facts, 20)
    return _answer("launcher", "model-parallel", "high", _say("mp.title", mp=shards, ws=world),
                   _say("mp.cause", mp=shards, ws=world), _say("mp.fix", mp=shards, ws=world), [], seen, facts, 20)


# --- onnxruntime-gpu built for CUDA 11 --------------------------------------------------------------------------------

def _ort_cuda11() -> frozenset:
    return frozenset(lib for row in _load("h2_tables.toml")["ort"] if row["case"] == "cuda11" for lib in row["libs"])


def ort(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    lib = seen.groups.get("lib") or ""
    if lib not in _ort_cuda11():
        return None  # a CUDA 12 / cuDNN 9 library: the shared-library reader's answer (its pip wheel) is the fix
    return _answer("shared-library", lib, "high", _say("ort.title", lib=lib), _say("ort.cause", lib=lib),
                   _say("ort.fix"), ['python -m pip install --upgrade "onnxruntime-gpu>=1.19"',
                                     "python -c \"import onnxruntime as o; print(o.__version__, o.get_available_providers())\""],
                   seen, facts, 14, "onnxruntime-gpu")


# --- uv: no wheel for this platform tag -------------------------------------------------------------------------------

_MAC_X86 = re.compile(r"macosx_\d{1,2}_\d{1,2}_x86_64")


def uvtag(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    tag = seen.groups.get("tag") or ""
    case = "mac" if _MAC_X86.fullmatch(tag) else "win32" if tag == "win32" else None
    if case is None:
        return None  # another tag: pip's and uv's own answers (the hint lists the platforms with wheels)
    commands = ["python -c \"import platform, sys; print(platform.machine(), sys.maxsize > 2**32)\""]
    if case == "mac":
        commands.append("sysctl -n sysctl.proc_translated")
    return _answer("version-constraint", "platform", "high", _say(f"uv.title_{case}", tag=tag), _say(f"uv.cause_{case}"),
                   _say(f"uv.fix_{case}"), commands, seen, facts, 22)
