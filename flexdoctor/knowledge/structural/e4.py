"""The structural layer's round-5 readers of tune-e4 (issue 22): the model hub, checkpoint loading and fine-tuning
stacks, and the Stable Diffusion web UIs, read by the error's shape, with the remedy the threads establish.

- ``hub``: Hugging Face Hub access: gated repositories (GatedRepoError, transformers' "You are trying to access a gated
  repo"), repositories not found or private, rejected tokens, no connection (transformers/utils/hub.py "We couldn't
  connect to '{endpoint}'"; a mirror when HF_ENDPOINT points elsewhere), offline mode with an empty cache
  (huggingface_hub LocalEntryNotFoundError, OfflineModeIsEnabled).
- ``pickle``: torch.load's weights_only default (True since torch 2.6, torch/serialization.py): the global the
  message names goes to torch.serialization.add_safe_globals; the library whose frame calls torch.load is named.
- ``remote``: a repository with custom code (transformers/dynamic_module_utils.py): trust_remote_code=True after
  reading it (vLLM/SGLang: --trust-remote-code).
- ``arch``: a model type this transformers does not know (configuration_auto.py): the first release that knows it
  (e4_tables.toml [[model_type]], sourced rows only), else the newest release.
- ``tokdep``: transformers' backend checks ("requires the SentencePiece library"): the distribution to install.
- ``train``: backward with nothing requiring grad (gradient checkpointing with frozen inputs: PEFT/LoRA), PEFT's
  target modules missing from the model.
- ``webui``: AUTOMATIC1111/Forge's CUDA test and NaN check, ComfyUI custom nodes that fail to import.

Every value put in a command is checked to be a plain token first (text from a log is data).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen, package_of
from .context import LogFacts
from .model import Answer
from . import m1  # tune-m1
from .readers import _answer, on_windows
from .tables import _load

_TOKEN = re.compile(r"[A-Za-z0-9][\w.-]{0,95}")
_REPO = re.compile(r"(?:[A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}")


def _table() -> dict:
    return _load("e4_tables.toml")


def _export(name: str, value: str, windows: bool) -> str:
    return f"set {name}={value}" if windows else f"export {name}={value}"


# --- Hugging Face Hub ------------------------------------------------------------------------------------

_GATED = ("GatedRepoError", "gated repo")
_NOTFOUND = ("RepositoryNotFoundError", "Repository Not Found")
_OFFMODE = ("OfflineModeIsEnabled", "outgoing traffic has been disabled")
_LOOKS_LIKE = re.compile(r"it looks like (\S{1,200}) is not the path to a directory")


def hub(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    text, g = seen.text, seen.groups
    repo = g.get("repo") or (m.group(1) if (m := _LOOKS_LIKE.search(text)) else None)
    repo = repo if repo and _REPO.fullmatch(repo) else None
    shown = repo or t("structural.e4.word.the_model")
    if any(w in text for w in _GATED) or "401 Client Error" in text:
        case, commands = "gated", ["hf auth login", "huggingface-cli login"]
    elif any(w in text for w in _NOTFOUND):
        case, commands = "notfound", ["hf auth whoami"]
    elif "Invalid credentials" in text:
        case, commands = "token", ["hf auth login"]
    else:
        return _offline(seen, facts, repo, shown)
    rank = 20 if repo else 22
    return _answer("unsupported-op", "huggingface-hub", "high", t(f"structural.e4.hub.title_{case}", repo=shown),
                   t(f"structural.e4.hub.cause_{case}"), t(f"structural.e4.hub.fix_{case}", repo=shown),
                   commands, seen, facts, rank)


def _offline(seen: Seen, facts: LogFacts, repo: Optional[str], shown: str) -> Answer:
    endpoint = seen.groups.get("endpoint") or ""
    host = re.sub(r"^https?://", "", endpoint).split("/")[0].split(":")[0]
    win = on_windows(seen, facts, paths=True)
    download = f"hf download {repo}" if repo else "hf download <owner/name>"
    if host and host not in ("huggingface.co", "hf.co"):
        case, commands = "mirror", []
    elif any(w in seen.text for w in _OFFMODE):
        case = "offmode"
        commands = [f"hf download {repo}"] if repo else []
    else:
        case = "connect"
        commands = ([f"hf download {repo}"] if repo else []) + [_export("HF_HUB_OFFLINE", "1", win)]
    return _answer("unsupported-op", "huggingface-hub", "high", t(f"structural.e4.hub.title_{case}", repo=shown),
                   t(f"structural.e4.hub.cause_{case}", endpoint=host), t(f"structural.e4.hub.fix_{case}", repo=shown,
                                                                          endpoint=host, download=download),
                   commands, seen, facts, 21 if repo else 23)


# --- torch.load's weights_only ----------------------------------------------------------------------------

def _caller(facts: LogFacts) -> Optional[str]:
    """The installed package whose frame called into torch (the frame under torch/serialization.py), if any."""
    for path in reversed(facts.paths):
        p = path.replace("\\", "/")
        if "/torch/" in p:
            continue
        pkg = package_of(p)
        return pkg if pkg and pkg != "torch" and _TOKEN.fullmatch(pkg) else None
    return None


def pickle(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    glob = seen.groups.get("glob")
    torch_v = facts.torch_release
    where = t("structural.e4.pickle.torch_is", v=torch_v) if torch_v else t("structural.e4.pickle.torch_26")
    if glob and "." in glob:
        mod, name = glob.rsplit(".", 1)
        allow = t("structural.e4.pickle.allow_named", mod=mod, name=name)
    else:
        allow = t("structural.e4.pickle.allow_any")
    pkg = _caller(facts)
    commands = [f"python -m pip install -U {pkg}"] if pkg else []
    upgrade = t("structural.e4.pickle.upgrade", pkg=pkg) if pkg else ""
    return _answer("version-constraint", "torch", "high", t("structural.e4.pickle.title", where=where),
                   t("structural.e4.pickle.cause", where=where),
                   t("structural.e4.pickle.fix", allow=allow, upgrade=upgrade).strip(),
                   commands, seen, facts, 20 if glob else 22)


# --- trust_remote_code -----------------------------------------------------------------------------------

def remote(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    repo = seen.groups.get("repo")
    repo = repo.strip("/") if repo and re.fullmatch(r"[\w./-]{1,200}", repo) else None
    shown = repo or t("structural.e4.word.the_model")
    paths = "\n".join(facts.paths).replace("\\", "/")
    server = "/vllm/" in paths or "/sglang/" in paths
    fix = t("structural.e4.remote.fix", repo=shown) + (" " + t("structural.e4.remote.server") if server else "")
    return _answer("unsupported-op", "trust_remote_code", "high", t("structural.e4.remote.title", repo=shown),
                   t("structural.e4.remote.cause"), fix, [], seen, facts, 20 if repo else 22)


# --- a model type this transformers does not know --------------------------------------------------------

def arch(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    mt = g.get("mt") or g.get("key")
    rows = {r["name"]: r for r in _table()["model_type"]}
    if g.get("key"):
        by_frame = any(p.replace("\\", "/").endswith("models/auto/configuration_auto.py") for p in facts.paths)
        if mt not in rows and not by_frame:
            return None  # a KeyError of any dict: only the model types of the table, or under AutoConfig's frame
    if not mt or not _TOKEN.fullmatch(mt):
        return None
    row = rows.get(mt)
    if row:
        commands = [f'python -m pip install -U "transformers>={row["first"]}"']
        fix = t("structural.e4.arch.fix_known", mt=mt, first=row["first"])
    else:
        commands = ["python -m pip install -U transformers"]
        fix = t("structural.e4.arch.fix_any", mt=mt)
    return _answer("version-constraint", "transformers", "high" if row else "medium",
                   t("structural.e4.arch.title", mt=mt), t("structural.e4.arch.cause", mt=mt), fix,
                   commands + ["python -m pip show transformers"], seen, facts, 20)


# --- a tokenizer's backend library -----------------------------------------------------------------------

def tokdep(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    word = g.get("tik") or (g.get("lib") or "").split()[-1:]
    word = (word if isinstance(word, str) else (word[0] if word else "")).lower()
    rows = {r["word"]: r for r in _table()["backend"]}
    row = rows.get(word)
    if row is None:
        return None
    dist = row["dist"]
    return _answer("missing-module", dist.lower(), "high", t("structural.e4.tokdep.title", dist=dist),
                   t("structural.e4.tokdep.cause", dist=dist), t("structural.e4.tokdep.fix", dist=dist),
                   [f"python -m pip install {dist}"], seen, facts, 20)


# --- fine-tuning: nothing requires grad, PEFT target modules ---------------------------------------------

_HF_TRAIN = ("/peft/", "/transformers/", "/trl/", "/accelerate/", "/unsloth/", "/deepspeed/")


def train(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if seen.groups.get("elem") is not None:
        paths = "\n".join(facts.paths).replace("\\", "/")
        case = "grad_hf" if any(w in paths for w in _HF_TRAIN) else "grad"
        return _answer("unsupported-op", "autograd", "high", t("structural.e4.train.title_grad"),
                       t(f"structural.e4.train.cause_{case}"), t(f"structural.e4.train.fix_{case}"), [],
                       seen, facts, 22)
    targets = seen.groups.get("targets", "")[:200]
    return _answer("unsupported-op", "peft", "high", t("structural.e4.train.title_targets", targets=targets),
                   t("structural.e4.train.cause_targets"), t("structural.e4.train.fix_targets"), [], seen, facts, 20)


# --- Stable Diffusion web UIs ----------------------------------------------------------------------------

_PY_CHECK = '-c "import torch; print(torch.__version__, torch.cuda.is_available())"'
_NODE = re.compile(r"custom_nodes[\\/](?P<node>[^\\/\s]{1,100})")
_WHY_MOD = re.compile(r"No module named '(?P<mod>[\w.]{1,100})'")


def webui(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g, win = seen.groups, on_windows(seen, facts, paths=True)
    if g.get("path"):
        return _comfy(seen, facts, win)
    if g.get("part"):
        part = g["part"]
        case = "vae" if part == "VAE" else "unet"
        flag = "--no-half-vae" if case == "vae" else "--upcast-sampling"
        command = _export("COMMANDLINE_ARGS", flag, win) if win else f'export COMMANDLINE_ARGS="{flag}"'
        return _answer("unsupported-op", "dtype", "high", t("structural.e4.webui.title_nan", part=part),
                       t(f"structural.e4.webui.cause_nan_{case}"), t(f"structural.e4.webui.fix_nan_{case}",
                                                                      file=_user_file(win)),
                       [command], seen, facts, 20)
    python = r"venv\Scripts\python.exe" if win else "venv/bin/python"
    return _answer("unsupported-op", "cuda", "high", t("structural.e4.webui.title_gpu"),
                   t("structural.e4.webui.cause_gpu"), t("structural.e4.webui.fix_gpu", file=_user_file(win)),
                   [f"{python} {_PY_CHECK}", "nvidia-smi"], seen, facts, 20)


def _user_file(win: bool) -> str:
    return "webui-user.bat" if win else "webui-user.sh"


def _comfy(seen: Seen, facts: LogFacts, win: bool) -> Optional[Answer]:
    path = seen.groups["path"].strip()
    m = _NODE.search(path)
    if not m:
        return None
    node = m.group("node")
    if node.endswith(".py"):
        node = node[:-3]
    if not _TOKEN.fullmatch(node):
        return None
    why = _WHY_MOD.search(seen.groups.get("why") or "")
    mod = why.group("mod") if why else None
    portable = "python_embeded" in path or "ComfyUI_windows_portable" in path or any(
        "python_embeded" in p for p in facts.paths)
    if m.group("node").endswith(".py"):
        commands = []
    elif portable:
        commands = [rf"python_embeded\python.exe -s -m pip install -r ComfyUI\custom_nodes\{node}\requirements.txt"]
    elif win:
        commands = [rf"python -m pip install -r custom_nodes\{node}\requirements.txt"]
    else:
        commands = [f"python -m pip install -r custom_nodes/{node}/requirements.txt"]
    where = t("structural.e4.webui.where_portable") if portable else t("structural.e4.webui.where_comfy")
    missing = t("structural.e4.webui.missing", mod=mod) if mod else ""
    fix = t("structural.e4.webui.fix_comfy", node=node, where=where)
    dist = m1.comfy_dist(mod, portable)  # tune-m1: the module's distribution first (cv2 -> opencv-python)
    if dist is not None:
        fix, commands = f"{dist[0]} {fix}", [dist[1]] + commands
    return _answer("missing-module", node, "high", t("structural.e4.webui.title_comfy", node=node),
                   (t("structural.e4.webui.cause_comfy", node=node) + " " + missing).strip(), fix, commands, seen, facts,
                   18 if mod else 45)  # another import error: its own reading (rank 40 or less) says more
