"""One attention workload, typed: what warm-cache compiles, what bench times, what deep runs.

A :class:`Workload` is the shape and dtype of one attention call (batch, query and K/V heads,
query and K/V lengths, head dim), its mask and score mod, the device, whether the backward runs,
and the ``torch.compile`` options that enter the compile cache's key (mode, dynamic, fullgraph,
flex ``kernel_options``). It is a frozen value: its :meth:`Workload.to_dict` is the config's
identity in warm-cache's manifest and the payload the worker scripts read.

There is one parser per kind of word a user types (``4k`` sizes, ``bf16`` dtypes, masks, score
mods, modes, ``BLOCK_M=64`` kernel options); commands call these instead of parsing themselves.
Errors are :class:`WorkloadError` with a one-line message (the CLI makes it a usage error).
Imports nothing heavy: no torch.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional

from .text import t

# The one dtype table: every spelling a user may type -> torch's dtype name.
DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16",
          "half": "float16", "fp32": "float32", "float32": "float32", "float": "float32"}
SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
# "auto": the GPU when torch sees one, else the CPU (bench); warm-cache needs cuda or cpu.
DEVICES = ("cuda", "cpu", "auto")
# torch.compile(mode=...): "default" is torch's default (no mode argument).
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
MASK_KINDS = ("none", "causal", "sliding", "prefix", "document")
MASK_ALIASES = {"sliding": "sliding", "sliding_window": "sliding", "sliding-window": "sliding",
                "swa": "sliding", "prefix": "prefix", "prefix_lm": "prefix", "prefix-lm": "prefix",
                "document": "document", "packed": "document", "doc": "document"}
SCORE_MODS = ("none", "softcap", "alibi", "relative")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class WorkloadError(ValueError):
    """A workload the user asked for is not valid (a usage error, exit 2)."""


# --------------------------------------------------------------------------- the words users type

def parse_size(word: Any, what: str = "size") -> int:
    """A positive whole number; ``4k`` (or ``4K``) is 4096."""
    if isinstance(word, bool):
        raise WorkloadError(t("workload.error.size_word", what=what, word=word))
    if isinstance(word, int):
        n = word
    else:
        text = str(word).strip().lower()
        try:
            n = int(text[:-1]) * 1024 if text.endswith("k") else int(text)
        except ValueError:
            raise WorkloadError(t("workload.error.size_word", what=what, word=word)) from None
    if n < 1:
        raise WorkloadError(t("workload.error.size_small", what=what, word=word))
    return n


def parse_sizes(words: Iterable[Any], what: str = "size") -> list[int]:
    return [parse_size(w, what) for w in words]


def parse_dtype(word: Any) -> str:
    dt = DTYPES.get(str(word).strip().lower())
    if dt is None:
        raise WorkloadError(t("workload.error.dtype", word=word))
    return dt


def parse_device(word: Any) -> str:
    dev = str(word).strip().lower()
    if dev not in DEVICES:
        raise WorkloadError(t("workload.error.device", word=word))
    return dev


def parse_mode(word: Any) -> str:
    mode = str(word if word is not None else "default").strip().lower().replace("_", "-")
    if mode in ("", "none"):
        mode = "default"
    if mode not in MODES:
        raise WorkloadError(t("workload.error.mode", word=word, choices=", ".join(MODES)))
    return mode


def parse_mask(word: Any) -> str:
    """none | causal | sliding:N | prefix:N | document:N (packed documents, causal inside each)."""
    text = str(word).strip().lower()
    if text in ("none", "causal", ""):
        return text or "none"
    kind, _, arg = text.replace("=", ":").partition(":")
    norm = MASK_ALIASES.get(kind)
    if norm is None:
        raise WorkloadError(t("workload.error.mask", word=word))
    if norm == "document" and not arg:
        arg = "4"
    if not arg.isdigit() or int(arg) < 1:
        raise WorkloadError(t("workload.error.mask_arg", word=word, kind=norm))
    return f"{norm}:{int(arg)}"


def parse_score_mod(word: Any) -> str:
    """none | softcap[:X] | alibi | relative."""
    text = str(word if word is not None else "none").strip().lower() or "none"
    kind, _, arg = text.partition(":")
    if kind not in SCORE_MODS:
        raise WorkloadError(t("workload.error.score_mod", word=word))
    if kind == "softcap":
        try:
            return f"softcap:{float(arg or 30):g}"
        except ValueError:
            raise WorkloadError(t("workload.error.softcap", word=word)) from None
    return kind


def _option_value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def parse_kernel_options(value: Any) -> tuple:
    """flex_attention ``kernel_options`` as sorted ``(key, value)`` pairs, from ``BLOCK_M=64``
    words (repeatable, comma-separated) or a mapping (a TOML table). Values: int, float, bool or
    a word (``BACKEND=FLASH``). Keys are not checked against a list: they differ per torch release,
    and torch names a wrong one itself when it compiles."""
    if value is None or value == () or value == []:
        return ()
    if isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)) and all(isinstance(x, (list, tuple)) and len(x) == 2 for x in value):
        items = [(str(k), v) for k, v in value]
    else:
        words = [value] if isinstance(value, str) else list(value)
        items = []
        for w in words:
            for part in str(w).split(","):
                if not part.strip():
                    continue
                key, sep, raw = part.partition("=")
                if not sep or not raw.strip():
                    raise WorkloadError(t("workload.error.option_form", word=part.strip()))
                items.append((key.strip(), _option_value(raw)))
    out: dict = {}
    for key, v in items:
        if not _KEY.match(key):
            raise WorkloadError(t("workload.error.option_key", name=key))
        if not isinstance(v, (int, float, str, bool)):
            raise WorkloadError(t("workload.error.option_value", name=key, value=v))
        out[key] = v
    return tuple(sorted(out.items()))


# --------------------------------------------------------------------------- the workload

@dataclass(frozen=True)
class Workload:
    dtype: str = "bfloat16"
    head_dim: int = 128
    heads: int = 16
    kv_heads: Optional[int] = None  # GQA: fewer K/V heads than query heads (None: = heads)
    seq_len: int = 2048
    kv_len: Optional[int] = None  # None: = seq_len
    batch: int = 1
    mask: str = "none"  # none | causal | sliding:N | prefix:N | document:N
    score_mod: str = "none"  # none | softcap[:X] | alibi | relative
    device: str = "cuda"
    backward: bool = True
    # torch.compile options; each is part of the compile cache's key, so of a config's identity.
    mode: str = "default"
    dynamic: bool = False  # torch.compile(dynamic=True); False compiles static shapes (see DYNAMIC_NOTE)
    fullgraph: bool = False
    kernel_options: tuple = ()  # sorted (key, value) pairs passed to flex_attention(kernel_options=)

    @property
    def kv_heads_or_heads(self) -> int:
        return self.kv_heads or self.heads

    @property
    def kv_len_or_seq_len(self) -> int:
        return self.kv_len or self.seq_len

    @property
    def name(self) -> str:
        """A short label; unchanged for configs without compile options, so manifests written
        before those options existed name their configs the same way."""
        heads = f"H{self.heads}" + (f"/{self.kv_heads}" if self.kv_heads and self.kv_heads != self.heads else "")
        seq = f"L{self.seq_len}" + (f"/{self.kv_len}" if self.kv_len and self.kv_len != self.seq_len else "")
        parts = [SHORT.get(self.dtype, self.dtype), f"B{self.batch}", heads, seq, f"D{self.head_dim}", self.mask]
        if self.score_mod != "none":
            parts.append(self.score_mod)
        if self.dynamic:
            parts.append("dynamic")
        if self.mode != "default":
            parts.append(self.mode)
        if self.fullgraph:
            parts.append("fullgraph")
        if self.kernel_options:
            parts.append(",".join(f"{k}={v}" for k, v in self.kernel_options))
        parts += ["fwd+bwd" if self.backward else "fwd", self.device]
        return " ".join(parts)

    def to_dict(self) -> dict:
        """The identity of this workload (manifest, bundle, worker payload): plain JSON types."""
        d = dataclasses.asdict(self)
        d["kernel_options"] = dict(self.kernel_options)
        return d

    @classmethod
    def from_dict(cls, data: Mapping) -> "Workload":
        """Read :meth:`to_dict` output, and what flexdoctor wrote before compile options existed
        (``shapes: static|dynamic``; no mode, fullgraph: torch's defaults, which it compiled with)."""
        known = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in data.items() if k in known}
        if "dynamic" not in kw and "shapes" in data:
            shapes = str(data["shapes"]).strip().lower()
            if shapes not in ("static", "dynamic"):
                raise WorkloadError(t("workload.error.shapes", word=data["shapes"]))
            kw["dynamic"] = shapes == "dynamic"
        return make(**kw)

    def replace(self, **changes: Any) -> "Workload":
        """A validated copy with ``changes`` (same rules as :func:`make`)."""
        return make(**{**self.to_dict(), **changes})


# Why warm-cache's default is static shapes: measured on torch 2.13 (CPU), an entry compiled with
# torch.compile(dynamic=False) is hit by torch.compile's default (dynamic=None: the first compile is
# static), while one compiled with dynamic=True is a different key. --dynamic warms what automatic
# dynamic shapes compile after a shape changes, or what dynamic=True compiles.
DYNAMIC_NOTE = "static shapes are what torch.compile's default compiles first"


def _flag(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise WorkloadError(t("workload.error.flag", what=what, word=value))


def make(dtype: Any = "bfloat16", head_dim: Any = 128, heads: Any = 16, kv_heads: Any = None,
         seq_len: Any = 2048, kv_len: Any = None, batch: Any = 1, mask: Any = "none",
         score_mod: Any = "none", device: Any = "cuda", backward: Any = None, mode: Any = "default",
         dynamic: Any = False, fullgraph: Any = False, kernel_options: Any = (),
         shapes: Any = None) -> Workload:
    """A validated workload. ``backward=None`` means: on GPU yes, on CPU no (torch 2.11+ rejects
    CPU backward: 'FlexAttention does not support backward on CPU'). ``shapes`` is the old
    spelling of ``dynamic`` (static | dynamic)."""
    dev = parse_device(device)
    sizes = {"head_dim": head_dim, "heads": heads, "kv_heads": kv_heads, "seq_len": seq_len,
             "kv_len": kv_len, "batch": batch}
    ints = {k: (parse_size(v, k.replace("_", "-")) if v is not None else None) for k, v in sizes.items()}
    for k in ("head_dim", "heads", "seq_len", "batch"):
        if ints[k] is None:
            raise WorkloadError(t("workload.error.required", what=k.replace("_", "-")))
    if ints["kv_heads"] and ints["heads"] % ints["kv_heads"]:
        raise WorkloadError(t("workload.error.gqa", heads=ints["heads"], kv_heads=ints["kv_heads"]))
    if shapes is not None:
        text = str(shapes).strip().lower()
        if text not in ("static", "dynamic"):
            raise WorkloadError(t("workload.error.shapes", word=shapes))
        dynamic = text == "dynamic"
    bwd = (dev == "cuda") if backward is None else _flag(backward, "backward")
    return Workload(dtype=parse_dtype(dtype), mask=parse_mask(mask), score_mod=parse_score_mod(score_mod),
                    device=dev, backward=bwd, mode=parse_mode(mode), dynamic=_flag(dynamic, "dynamic"),
                    fullgraph=_flag(fullgraph, "fullgraph"), kernel_options=parse_kernel_options(kernel_options),
                    **ints)


FIELDS = tuple(f.name for f in dataclasses.fields(Workload))


def check_flex(w: Workload) -> Workload:
    """The rules flex_attention adds to any attention workload (bench also times SDPA and
    flash-attn, which take smaller head dims). 2.7+: 'NYI: embedding dimension of the query, key,
    and value must be at least 16'."""
    if w.head_dim < 16:
        raise WorkloadError(t("workload.error.flex_head_dim", head_dim=w.head_dim))
    if w.device == "auto":
        raise WorkloadError(t("workload.error.device_auto"))
    return w
