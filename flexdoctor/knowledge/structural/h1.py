"""The structural layer's readers of tune-h1 (issue 22, cycle 2 of rounds 8-9), read by the error's shape with the
remedy the sources and threads establish (h1_tables.toml):

- ``cudnn_sdpa``: scaled_dot_product_attention on cuDNN with no plan for the shape/GPU (torch 2.5.0, nightlies of its
  time, 2.9+ on sm90/sm100): cuDNN attention off (torch.backends.cuda.enable_cudnn_sdp(False)), or torch 2.5.1.
- ``torch_classes``: a tool that walks modules (Streamlit's file watcher) probing torch.classes.__path__; a TorchScript
  custom class whose extension was not imported.
- ``pad``: a tokenizer with no pad token asked to pad; a decoder-only classification head with no pad_token_id.
- ``tokenizer_hub``: transformers' "Can't load tokenizer for '<hub id>'", which is what an unreachable Hub looks like.
- ``lora``: PEFT's target modules not in the model: the family's own layer names from a table.
"""

from __future__ import annotations

import re
from typing import Optional

from ... import wheels
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import HUB_REPO, _answer, catalogue, on_windows
from .tables import _load

_IDENT = re.compile(r"[A-Za-z_][\w.]{0,120}")


_say = catalogue("h1")


def _env(assignment: str, win: bool) -> str:
    name, value = assignment.split("=", 1)
    return f'$env:{name}="{value}"' if win else f"export {assignment}"


def _table(name: str):
    return _load("h1_tables.toml")[name]


# --- cuDNN attention ------------------------------------------------------------------------------------------------

def _pin(release: str, facts: LogFacts) -> Optional[str]:
    """pip command for a torch release with its companions, on the index of the log's CUDA tag when it has one."""
    rel = wheels.table().release(release)
    if rel is None:
        return None
    pins = [f"torch=={release}"] + [f"{name}=={v}" for name, v in (("torchvision", rel.torchvision),
                                                                   ("torchaudio", rel.torchaudio)) if v]
    tag = facts.cuda_tag
    tags = {v for plat in rel.variants.values() for v in plat}
    index = f" --index-url https://download.pytorch.org/whl/{tag}" if tag and tag in tags else ""
    return "python -m pip install " + " ".join(f'"{p}"' for p in pins) + index


def cudnn_sdpa(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = _table("cudnn_sdpa")
    release = facts.torch_release or ""
    commands = []
    if release in row["broken"]:
        case = "broken"
        pin = _pin(row["fixed"], facts)
        commands = [pin] if pin else []
    else:
        case = "any"
    return _answer("unsupported-op", "cudnn-sdpa", "high", _say("sdpa.title"), _say("sdpa.cause"),
                   _say("sdpa.fix") + " " + _say(f"sdpa.fix_{case}", torch=release, fixed=row["fixed"]), commands,
                   seen, facts, 18, package="torch")


# --- torch.classes ---------------------------------------------------------------------------------------------------

def torch_classes(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    cls = g.get("cls") or ""
    paths = "\n".join(facts.paths).replace("\\", "/")
    probe = bool(g.get("mod")) or cls.startswith("__") or cls in ("path.path",) or "/streamlit/" in paths
    if probe:
        row = _table("streamlit")
        win = on_windows(seen, facts, paths=True)
        commands = ["streamlit run app.py " + row["flag"], _env(row["env"], win)]
        return _answer("launcher", "streamlit", "high", _say("classes.title_watch"), _say("classes.cause_watch"),
                       _say("classes.fix_watch"), commands, seen, facts, 30, package="streamlit")
    if not _IDENT.fullmatch(cls):
        return None
    ns = cls.split(".")[0]
    module = next((r["module"] for r in _table("class_ns") if r["ns"] == ns), None)
    fix = _say("classes.fix_known", module=module) if module else _say("classes.fix_ext", ns=ns)
    return _answer("unsupported-op", "torch.classes", "medium", _say("classes.title_ext", cls=cls),
                   _say("classes.cause_ext", ns=ns), fix, [], seen, facts, 40)


# --- tokenizers --------------------------------------------------------------------------------------------------------

def pad(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    case = "head" if seen.groups.get("head") else "tok"
    return _answer("unsupported-op", "pad-token", "high", _say(f"pad.title_{case}"),
                   _say(f"pad.cause_{case}", families=_table("pad")["families"]), _say(f"pad.fix_{case}"), [],
                   seen, facts, 20, package="transformers")


def tokenizer_hub(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    repo = (seen.groups.get("repo") or "").strip()
    if not HUB_REPO.fullmatch(repo) or repo.startswith(".") or repo.count("/") > 1:
        return None  # a local folder: g2's reading (a folder shadowing, files missing) answers
    win = on_windows(seen, facts, paths=True)
    commands = [f"hf download {repo}", f"huggingface-cli download {repo}",
                _env("HF_HUB_OFFLINE=1", win)]
    return _answer("unsupported-op", "huggingface-hub", "high", _say("hub.title", repo=repo), _say("hub.cause"),
                   _say("hub.fix", repo=repo), commands, seen, facts, 24, package="transformers")


# --- LoRA target modules -------------------------------------------------------------------------------------------

def lora(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    where = (seen.text + "\n" + "\n".join(facts.paths)).lower()
    rows = _table("lora")
    known = next((r for r in rows if any(k in where for k in r["keys"])), None)
    names = "; ".join(f"{r['family']}: {r['names']}" for r in rows)
    llama = "q_proj" in seen.text or "v_proj" in seen.text
    lead = _say("lora.lead_known", family=known["family"], names=known["names"]) if known else ""
    first = known["names"].split(",")[0] if known else "<name>"
    fix = (lead + " " if lead else "") + _say("lora.fix", names=names, first=first)
    return _answer("unsupported-op", "peft", "high", _say("lora.title"),
                   _say("lora.cause_llama" if llama else "lora.cause"), fix, [], seen, facts, 19, package="peft")
