"""The structural layer's readers of tune-g2 (issue 22, round 8): loading models and checkpoints, quantized models, and
non-CUDA backends, read by the error's shape with the remedy the threads establish.

- ``state``: torch's ``Error(s) in loading state_dict for M`` (torch/nn/modules/module.py load_state_dict) and its
  detail lines: keys that all share a wrapper's prefix on one side (``_orig_mod.`` torch.compile, ``module.``
  DDP/DataParallel, ``base_model.model.`` PEFT, ``model.`` Lightning: g2_tables.toml [[prefix]]) -> strip it or load
  into the inner module; ``size mismatch for K`` -> what the two shapes mean (an inpainting UNet's 9 input channels, a
  resized vocabulary, a replaced task head: g2_tables.toml [size]), else another config of the model.
- ``hub``: transformers' loading errors: a tokenizer class this transformers does not have (e4_tables.toml
  [[model_type]] gives the release that added it), "Can't load tokenizer/the configuration for 'X'" (a local folder
  shadowing the repo id, a wrong id, a folder without those files), "does not appear to have a file named F" and
  "Error no file named ..." (a diffusers subfolder, a PEFT adapter folder, safetensors vs bin, a folder that is not
  the model), "Unrecognized configuration class" (the Auto class for that model family), "Unable to load weights from
  pytorch checkpoint file" (a Git LFS pointer or a truncated download).

Every value from the log that goes into a fix is checked to be a plain identifier or token first (text from a log is
data).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import HUB_REPO, _answer
from .tables import _load

_IDENT = re.compile(r"[A-Za-z_]\w{0,79}")
_TOKEN = re.compile(r"[A-Za-z0-9][\w.-]{0,95}")
_KEYS = re.compile(r"\"([\w.]{1,300})\"")


def _table(name: str):
    return _load("g2_tables.toml")[name]


def _raised(seen: Seen, facts: LogFacts, word: str) -> bool:
    """A detail line of the root error (it follows the exception line, which names ``word``)."""
    return facts.root is not None and word in facts.root[3] and seen.line >= facts.root[0]


# --- state_dict keys ---------------------------------------------------------------------------------------------

def _prefix(keys: list) -> Optional[dict]:
    for row in _table("prefix"):  # longest first in the table order: base_model.model. before model.
        if keys and all(k.startswith(row["prefix"]) for k in keys):
            return row
    return None


def state(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("sure") and not _raised(seen, facts, "state_dict") and not (g.get("ckpt") and facts.root is None):
        return None  # tune-k1: a size-mismatch line is load_state_dict's own; quoted ("> ") it has no root line
    if g.get("ckpt"):
        return _size(seen, facts)
    side = g.get("side")
    if side:
        row = _prefix(_KEYS.findall(seen.text))
        if row:
            return _strip(seen, facts, row, side.lower())
    model = g.get("model") if _IDENT.fullmatch(g.get("model") or "") else "the model"
    return _answer("unsupported-op", "state_dict", "medium", t("structural.g2.sd.title", model=model),
                   t("structural.g2.sd.cause"), t("structural.g2.sd.fix"), [], seen, facts, 30)


def _strip(seen: Seen, facts: LogFacts, row: dict, side: str) -> Answer:
    p = row["prefix"]
    if side == "unexpected":
        code = f'state_dict = {{k.removeprefix("{p}"): v for k, v in state_dict.items()}}; model.load_state_dict(state_dict)'
        fix = t("structural.g2.sd.fix_strip", prefix=p, code=code)
        if p == "base_model.model.":
            fix = t("structural.g2.sd.fix_peft", code=code)
    else:
        fix = t("structural.g2.sd.fix_inner", prefix=p, inner=row["inner"])
    return _answer("unsupported-op", "state_dict", "high", t("structural.g2.sd.title_prefix", prefix=p, who=row["who"]),
                   t(f"structural.g2.sd.cause_{side}", prefix=p, who=row["who"]), fix, [], seen, facts, 18)


def _dims(text: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d{1,9}", text))


def _swap(key: str, ckpt: tuple, m: int) -> str:
    """tune-k1: the line that replaces a Linear head (``fc.weight`` [n, k] -> ``model.fc = nn.Linear(...)``)."""
    layer = key.removesuffix(".weight").removeprefix("module.")
    if len(ckpt) == 2 and re.fullmatch(r"[A-Za-z_]\w{0,40}(?:\.[A-Za-z_]\w{0,40}){0,4}", layer):
        return f"model.{layer} = nn.Linear(model.{layer}.in_features, {m})"
    return f"model.fc = nn.Linear(model.fc.in_features, {m})"


def _size(seen: Seen, facts: LogFacts) -> Answer:
    g, size = seen.groups, _table("size")
    before = seen.text[: seen.start]
    m = re.search(r"size mismatch for ([\w.]{1,300}): ?$", before)
    key = m.group(1) if m else ""
    ckpt, cur = _dims(g.get("ckpt") or ""), _dims(g.get("cur") or "")
    parts = key.split(".")
    hf = facts.package in ("transformers", "peft") or "ignore_mismatched_sizes" in seen.text or \
        any("/transformers/" in p for p in facts.paths)
    case, extra = "config", {}
    if key.endswith("conv_in.weight") and len(ckpt) == 4 and len(cur) == 4 and ckpt[1] != cur[1]:
        kinds = size["conv_in"]["channels"]
        case = "unet"
        extra = {"ckpt_kind": kinds.get(str(ckpt[1]), "?"), "n": ckpt[1], "m": cur[1]}
        case = f"unet_{extra['ckpt_kind']}" if extra["ckpt_kind"] in ("inpaint", "pix2pix") else "unet"
    elif any(key.endswith(v) for v in size["vocab"]) and ckpt and cur and ckpt[0] != cur[0]:
        case, extra = "vocab", {"n": ckpt[0], "m": cur[0]}
    elif any(h in parts for h in size["head"]) and ckpt and cur and ckpt[0] != cur[0]:
        case, extra = ("head_hf" if hf else "head"), {"n": ckpt[0], "m": cur[0]}
        extra["swap"] = _swap(key, ckpt, cur[0])  # tune-k1
    shown = key if re.fullmatch(r"[\w.]{1,200}", key) else "?"
    return _answer("unsupported-op", "state_dict", "high" if case != "config" else "medium",
                   t("structural.g2.size.title", key=shown), t(f"structural.g2.size.cause_{case}", **extra),
                   t(f"structural.g2.size.fix_{case}", **extra), [], seen, facts, 19)


# --- transformers / diffusers loading ------------------------------------------------------------------------------

def _first_release(cls: str) -> Optional[str]:
    base = re.sub(r"Tokenizer(?:Fast)?$", "", cls).lower()
    for row in _load("e4_tables.toml").get("model_type", []):
        if row["name"].replace("_", "") == base:
            return row["first"]
    return None


def hub(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("cls"):
        return _tokclass(seen, facts, g["cls"])
    if g.get("auto"):
        return _auto(seen, facts)
    if g.get("lfs"):
        return _answer("unsupported-op", "checkpoint file", "high", t("structural.g2.lfs.title"),
                       t("structural.g2.lfs.cause"), t("structural.g2.lfs.fix"), ["git lfs install", "git lfs pull"],
                       seen, facts, 25)
    repo = g.get("repo") or _repo_before(seen.text[: seen.start])
    repo = repo if repo and HUB_REPO.fullmatch(repo.strip("./")) else None
    shown = repo or t("structural.e4.word.the_model")
    local = bool(repo) and (repo.startswith(("./", "/", "../", "~")) or repo.count("/") > 1)
    fname = (g.get("file") or "").rstrip(".")
    if g.get("what"):
        case = "local" if local else "shadow"
        return _answer("unsupported-op", "model files", "high", t("structural.g2.load.title", what=g["what"], repo=shown),
                       t(f"structural.g2.load.cause_{case}", repo=shown), t(f"structural.g2.load.fix_{case}", repo=shown),
                       [], seen, facts, 25)
    case = _file_case(fname, g.get("files") or "")
    return _answer("unsupported-op", "model files", "high", t("structural.g2.file.title", file=fname or "weights",
                                                               repo=shown),
                   t("structural.g2.file.cause"), t(f"structural.g2.file.fix_{case}", repo=shown), [], seen, facts, 25)


def _repo_before(before: str) -> Optional[str]:
    m = re.search(r"([^\s'\"]{1,300}) $", before)
    return m.group(1) if m else None


def _file_case(fname: str, files: str) -> str:
    if fname == "config.json":
        return "config"
    if fname in ("pytorch_model.bin", "model.safetensors", "diffusion_pytorch_model.bin",
                 "diffusion_pytorch_model.safetensors") or files:
        return "weights"
    if fname.startswith(("adapter_", "preprocessor", "tokenizer", "processor")):
        return "component"
    return "other"


def _tokclass(seen: Seen, facts: LogFacts, cls: str) -> Optional[Answer]:
    if not _IDENT.fullmatch(cls):
        return None
    if cls.startswith("LLaMA"):
        return _answer("version-constraint", "transformers", "high", t("structural.g2.tok.title", cls=cls),
                       t("structural.g2.tok.cause_case", cls=cls), t("structural.g2.tok.fix_case", cls=cls,
                                                                     good="Llama" + cls[5:]),
                       [], seen, facts, 24)
    first = _first_release(cls)
    spec = f"transformers>={first}" if first else "transformers"
    return _answer("version-constraint", "transformers", "high" if first else "medium",
                   t("structural.g2.tok.title", cls=cls), t("structural.g2.tok.cause", cls=cls),
                   t("structural.g2.tok.fix_first" if first else "structural.g2.tok.fix", cls=cls, first=first or ""),
                   [f"python -m pip install -U '{spec}' sentencepiece"], seen, facts, 24)


def _auto(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    cfg = (g.get("cfgpath") or "").rsplit(".", 1)[-1]
    auto = g.get("auto") or ""
    if not (_IDENT.fullmatch(cfg) and _IDENT.fullmatch(auto)):
        return None
    family = next((fam for fam, names in _load("g2_tables.toml")["auto"].items()
                   if fam != "source" and cfg in names), None)
    case = family or "other"
    return _answer("unsupported-op", "auto class", "high" if family else "medium",
                   t("structural.g2.auto.title", cfg=cfg, auto=auto), t("structural.g2.auto.cause", cfg=cfg, auto=auto),
                   t(f"structural.g2.auto.fix_{case}", cfg=cfg, auto=auto), [], seen, facts, 25)


# --- quantized models ------------------------------------------------------------------------------------------------

_PIP = re.compile(r"`pip install ([^`\n]{1,200})`")
_PKG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,60}(?:\[[\w,]{1,40}\])?(?:[<>=!~]=?[\w.*]{1,20})?")
_FLAGS = ("--no-build-isolation", "-v", "-U", "--upgrade")


def _stated_pip(text: str) -> list:
    """The packages a message's own `pip install ...` fragments name (checked tokens; index options dropped)."""
    out: list = []
    for frag in _PIP.findall(text):
        words = frag.split()
        for i, w in enumerate(words):
            if w.startswith("-") or (i and words[i - 1] in ("-i", "--index-url", "--extra-index-url")):
                continue
            if _PKG.fullmatch(w) and w not in out:
                out.append(w)
    return out


def quant(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("method") or g.get("gguf") or g.get("hqq"):
        return _quant_lib(seen, facts)
    if g.get("bnb"):
        return _answer("missing-module", "bitsandbytes", "high", t("structural.g2.bnb.title"),
                       t("structural.g2.bnb.cause"), t("structural.g2.bnb.fix"),
                       ["python -m pip install -U accelerate bitsandbytes", "python -m bitsandbytes"], seen, facts, 22)
    if g.get("kwarg"):
        return _answer("version-constraint", "transformers", "high", t("structural.g2.kwarg.title"),
                       t("structural.g2.kwarg.cause"), t("structural.g2.kwarg.fix"), [], seen, facts, 22)
    if g.get("exllama"):
        return _answer("unsupported-op", "exllama", "high", t("structural.g2.exllama.title"),
                       t("structural.g2.exllama.cause"), t("structural.g2.exllama.fix"), [], seen, facts, 22)
    return _capability(seen, facts)


def _quant_lib(seen: Seen, facts: LogFacts) -> Answer:
    g = seen.groups
    if g.get("gguf") or g.get("hqq"):
        name = "gguf" if g.get("gguf") else "hqq"
        pkgs = [f"{name}>={g.get('gguf') or g.get('hqq')}"]
        name = name.upper()
    else:
        pkgs = _stated_pip(seen.text)
        name = (g.get("method") or "").upper()
    method = name if re.fullmatch(r"[\w-]{1,20}", name) else "?"
    flags = " --no-build-isolation" if "--no-build-isolation" in seen.text else ""
    commands = [f"python -m pip install -U {' '.join(repr(p) if '>' in p else p for p in pkgs)}{flags}"] if pkgs else []
    shown = ", ".join(pkgs) or t("structural.word.the_package")
    return _answer("missing-module", (pkgs[0].split(">")[0] if pkgs else method.lower()), "high",
                   t("structural.g2.qlib.title", method=method, pkgs=shown),
                   t("structural.g2.qlib.cause", method=method, pkgs=shown),
                   t("structural.g2.qlib.fix", pkgs=shown), commands, seen, facts, 22)


def _capability(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("qm"):
        from . import j1  # tune-j1: vLLM's form names both GPUs' architectures and the formats this GPU can serve
        return j1.capability(seen, facts)
    need, have = g.get("need") or "", g.get("have") or ""
    if not (re.fullmatch(r"\d{1,2}\.?\d", need) and re.fullmatch(r"\d{1,2}\.?\d", have)):
        return None
    method = g.get("qm") or "fp8"
    method = method if re.fullmatch(r"[\w-]{1,40}", method) else "?"
    case = "vllm" if g.get("qm") else "hf"
    return _answer("unsupported-op", "quantization capability", "high",
                   t("structural.g2.cap.title", method=method, need=need, have=have),
                   t("structural.g2.cap.cause", method=method, need=need, have=have),
                   t(f"structural.g2.cap.fix_{case}", method=method, need=need, have=have), [], seen, facts, 22)


# --- non-CUDA backends -----------------------------------------------------------------------------------------------

def _mm(version: str) -> Optional[tuple]:
    m = re.match(r"(\d{1,2})\.(\d{1,3})", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def ipex(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    want, have = _mm(seen.groups.get("want") or ""), _mm(seen.groups.get("have") or "")
    if not want or not have:
        return None
    row = _table("ipex")
    last = _mm(row["last"])
    w, h = f"{want[0]}.{want[1]}", f"{have[0]}.{have[1]}"
    commands = [f"python -m pip install 'torch=={w}.*'"]
    if have <= last:
        commands.insert(0, f"python -m pip install 'intel-extension-for-pytorch=={h}.*'")
        fix = t("structural.g2.ipex.fix", want=w, have=h, index=row["xpu_index"])
    else:
        fix = t("structural.g2.ipex.fix_newer", want=w, have=h, last=row["last"])
    return _answer("version-constraint", "intel-extension-for-pytorch", "high", t("structural.g2.ipex.title", want=w,
                                                                                    have=h),
                   t("structural.g2.ipex.cause", want=w, have=h), fix, commands, seen, facts, 20)


def device(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("pjrt"):
        return _answer("unsupported-op", "xla", "high", t("structural.g2.xla.title"), t("structural.g2.xla.cause"),
                       t("structural.g2.xla.fix"), ["export PJRT_DEVICE=TPU"], seen, facts, 22)
    dev = (g.get("dev") or "").lower()
    row = _table("xpu")
    if dev == "xpu":
        case, commands = "xpu", [f"python -m pip install --force-reinstall torch --index-url {row['index']}"]
    elif dev == "mps":
        case, commands = ("mps" if facts.platform in (None, "macos") else "mps_off"), []
    else:
        return None
    return _answer("unsupported-op", dev, "high", t("structural.g2.dev.title", dev=dev),
                   t(f"structural.g2.dev.cause_{case}", first=row["first_torch"]),
                   t(f"structural.g2.dev.fix_{case}", index=row["index"], first=row["first_torch"]), commands, seen,
                   facts, 22)
