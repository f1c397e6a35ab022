"""The structural layer's readers of tune-g4 (issue 22, round 8): the long tail of compile, Inductor, Triton and
attention kernels, read by the error's shape with the remedy the sources and threads establish (g4_tables.toml).

- ``triton``: Triton front-end errors in a @triton.jit kernel (a tl.arange range not a power of 2, its bounds not
  tl.constexpr, tl.dot blocks under 16 or with inner dimensions that differ) and the launch-time checks of the
  autotuner (a tuned meta-parameter passed again) and of JITFunction.run (a keyword the kernel does not take).
- ``choices``: Inductor's NoValidChoicesError: a flex_attention template whose every config failed (smaller
  kernel_options, mode="max-autotune-no-cudagraphs"; on CPU torch >= 2.6) or a GEMM/conv autotune without ATEN.
- ``dynamo``: Dynamo's wrappers: TorchRuntimeError ("Failed running call_function ...": the model's own error, found
  on fake tensors) and InternalTorchDynamoError (a bug inside Dynamo). suppress_errors hides either; it is not a fix.
- ``flex``: functorch's vmap refusing Python control flow or .item() inside a mask_mod/score_mod, and a BlockMask on
  another device than q/k/v.

Names taken from a log (a meta-parameter, a keyword, a device) are checked to be identifiers first (text from a log
is data).
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

_IDENT = re.compile(r"[A-Za-z_]\w{0,79}")
_DEVICE = re.compile(r"(?:cuda|cpu|mps|xpu|meta|hpu|npu)(?::\d{1,2})?")


# What may stand before an error of these shapes on its own line: a rank prefix, the exceptions that carry it
# ("torch._inductor.exc.LoweringException: NoValidChoicesError: ", "ValueError(\"", "KeyError: '"), and the words of
# the message before the matched part (tl.arange's name, tl.dot's "All values in both first input shape (...)"); a
# mention in prose or a comment has other words there and is not the error.
_OWN = re.compile(r"\s{0,40}(?:\[rank\d{1,5}\]:\s{0,4})?(?:[\w.]{0,120}(?:Error|Exception|Failed)(?::\s?|\(\s?)){0,4}"
                  r"['\"]?(?:arange|All (?:non-batch )?values in both first input shape [^\n]{0,400}|[\w.]{0,80}\.)?")


def _own(seen: Seen) -> bool:
    """Whether the matched message is the line's own error, not a mention of it."""
    return bool(_OWN.fullmatch(seen.text[: seen.start][-600:]))


def _table(name: str):
    return _load("g4_tables.toml")[name]


def _ident(value: Optional[str]) -> Optional[str]:
    return value if value and _IDENT.fullmatch(value) else None


def _flex(seen: Seen, facts: LogFacts) -> bool:
    """Whether the failing code is FlexAttention's (its name on the line, or its files among the frames)."""
    if "flex_attention" in seen.text or "create_block_mask" in seen.text:
        return True
    return any("flex_attention" in p or "/kernel/flex/" in p or "block_mask" in p for p in facts.paths)


# --- Triton front-end errors --------------------------------------------------------------------------------------

def _triton_case(seen: Seen) -> Optional[str]:
    g = seen.groups
    if g.get("names"):
        return "conflict"
    if g.get("kw"):
        return "kwarg"
    if g.get("dotdim"):
        return "dotdim"
    if g.get("m"):
        return "dotmin"
    text = seen.text
    return next((r["case"] for r in _table("triton") if r["literal"] in text), None)


def triton(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    case = _triton_case(seen) if _own(seen) else None
    if case is None:
        return None
    g = seen.groups
    names = ", ".join(n for n in (g.get("names") or "").split(", ") if _ident(n)) or "BLOCK_SIZE"
    words = {"names": names, "kw": _ident(g.get("kw")) or "?", "m": g.get("m") or "16", "n": g.get("n") or "16",
             "k": g.get("k") or "16"}
    return _answer("unsupported-op", "triton", "high", t(f"structural.g4.triton.title_{case}", **words),
                   t(f"structural.g4.triton.cause_{case}", **words), t(f"structural.g4.triton.fix_{case}", **words),
                   [], seen, facts, 25)


# --- Inductor's NoValidChoicesError ----------------------------------------------------------------------------------

def _older(release: Optional[str], than: str) -> bool:
    try:
        return tuple(int(x) for x in (release or "").split(".")[:2]) < tuple(int(x) for x in than.split("."))
    except ValueError:
        return False


def choices(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if not _own(seen):
        return None
    row = _table("choices")
    conv = seen.groups.get("cfg") == "max_autotune_conv_backends"
    env = row["conv_env" if conv else "gemm_env"]
    win = on_windows(seen, facts)
    setenv = f"set {env}={row['backends']}" if win else f"export {env}={row['backends']}"
    cpu = (facts.torch or "").endswith("+cpu") or "'cpu'" in seen.text
    if _flex(seen, facts):
        case = "flex_cpu" if cpu and _older(facts.torch_release, row["cpu_flex_since"]) else "flex"
        commands = ['python -c "import torch; print(torch.__version__, torch.cuda.get_device_name())"']
        if case == "flex_cpu":
            plus = (facts.torch or "").endswith("+cpu")
            commands = [f'python -m pip install --upgrade "torch>={row["cpu_flex_since"]}"'
                        + (" --index-url https://download.pytorch.org/whl/cpu" if plus else "")]
    else:
        case, commands = "any", [setenv]
    words = {"env": env, "backends": row["backends"], "opts": row["kernel_options"], "since": row["cpu_flex_since"],
             "torch": facts.torch or "?"}
    return _answer("unsupported-op", "inductor", "high", t(f"structural.g4.choices.title_{case}", **words),
                   t(f"structural.g4.choices.cause_{case}", **words), t(f"structural.g4.choices.fix_{case}", **words),
                   commands, seen, facts, 22)


# --- Dynamo's wrappers -----------------------------------------------------------------------------------------------

def dynamo(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if not _own(seen):
        return None
    g = seen.groups
    off = "set TORCH_COMPILE_DISABLE=1" if on_windows(seen, facts) else "export TORCH_COMPILE_DISABLE=1"
    if g.get("op"):
        return _answer("unsupported-op", "dynamo", "high", t("structural.g4.dynamo.title_fake"),
                       t("structural.g4.dynamo.cause_fake"), t("structural.g4.dynamo.fix_fake"), [off], seen, facts, 45)
    inner = _ident(g.get("inner")) or "?"
    return _answer("unsupported-op", "dynamo", "high", t("structural.g4.dynamo.title_internal", inner=inner),
                   t("structural.g4.dynamo.cause_internal", inner=inner), t("structural.g4.dynamo.fix_internal"),
                   ["python -m pip install --upgrade torch", 'python -c "import torch; print(torch.__version__)"'],
                   seen, facts, 45)


# --- FlexAttention masks and BlockMask --------------------------------------------------------------------------

def flex(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if not _own(seen):
        return None
    g = seen.groups
    if g.get("vmap"):
        item = ".item()" in g["vmap"] or "(1)" in g["vmap"]
        where = "flex" if _flex(seen, facts) else "any"
        case = f"{where}_item" if item else where
        return _answer("unsupported-op", "vmap", "high", t(f"structural.g4.vmap.title_{case}"),
                       t(f"structural.g4.vmap.cause_{where}"), t(f"structural.g4.vmap.fix_{case}"), [], seen, facts, 24)
    qdev, bdev = g.get("qdev") or "", g.get("bdev") or ""
    qdev = qdev if _DEVICE.fullmatch(qdev) else "cuda"
    bdev = bdev if _DEVICE.fullmatch(bdev) else "cpu"
    return _answer("unsupported-op", "block_mask", "high", t("structural.g4.bm.title", q=qdev, b=bdev),
                   t("structural.g4.bm.cause", q=qdev, b=bdev), t("structural.g4.bm.fix", q=qdev, b=bdev), [], seen,
                   facts, 24)
