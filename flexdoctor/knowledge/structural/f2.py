"""The structural layer's readers of tune-f2 (issue 22, round 5): process, file and network limits and runtime
mismatches read by their shape, with the remedy the threads establish.

- ``spawn``: Windows (spawn) multiprocessing: a script that starts workers without ``if __name__ == "__main__":``
  (Python's multiprocessing/spawn.py _check_not_importing_main), the DataLoader's ``BrokenPipeError: [Errno 32]``
  when a worker could not be started under spawn (popen_spawn_win32.py), and torch's "DataLoader worker (pid(s) X)
  exited unexpectedly" (torch/utils/data/dataloader.py _try_get_data).
- ``limit``: ``[Errno 24] Too many open files`` (ulimit -n; torch.multiprocessing's file_descriptor sharing
  strategy, docs/source/multiprocessing.rst "Sharing strategies") and ``[Errno 28] No space left on device``
  outside pip: which folder (from the path in the error, else the frames; f2_tables.toml [[folder]]).
- ``tls``: ``CERTIFICATE_VERIFY_FAILED`` from pip, requests (huggingface_hub), urllib (torch.hub): the CA bundle
  variables (REQUESTS_CA_BUNDLE, SSL_CERT_FILE, pip's ``global.cert``), never "disable verification" first; HTTP 429
  from the Hugging Face Hub (log in / HF_TOKEN, retry later).
- ``drift``: an unexpected keyword argument or a missing positional argument raised in one installed package called
  from another (both read from the site-packages frames): their versions do not match.
- ``cudnn``: cuDNN's runtime version is not the one torch was built with (torch/backends/cudnn/__init__.py
  _init: "cuDNN version incompatibility: PyTorch was compiled against X but found runtime version Y"),
  CUDNN_STATUS_VERSION_MISMATCH.
- ``kernel``: misaligned address / illegal instruction / unspecified launch failure under a kernel library's frames
  (f2_tables.toml [[kernel]]): the library's kernel first, CUDA_LAUNCH_BLOCKING=1, the kernel log's Xid.
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from . import tables
from .collect import Seen, package_of
from .context import LogFacts
from .errors import env
from .model import Answer
from .readers import _answer

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,80}")
_METHOD = re.compile(r"(?:\w{1,80}\.){0,4}[A-Z]\w{0,80}\.\w{1,80}")  # Class.method (Python 3.10+ qualified names)


def _paths(facts: LogFacts) -> str:
    return "\n".join(facts.paths).replace("\\", "/")


def _rows(name: str) -> list[dict]:
    return tables._load("f2_tables.toml")[name]


# --- Windows (spawn) multiprocessing -----------------------------------------------------------------------

def spawn(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g, paths = seen.groups, _paths(facts)
    if g.get("boot"):
        case = "main"
    elif g.get("pipe"):
        if "popen_spawn_win32" not in paths and facts.platform != "windows":
            return None  # a broken pipe elsewhere (a closed stdout, a socket) is no spawn failure
        case = "pipe"
    elif g.get("pids"):
        case = "worker"
    elif g.get("eof") and ("multiprocessing/spawn.py" in paths or "popen_spawn" in paths):
        case = "pipe"  # the spawned child found nothing to unpickle: the parent failed to send it
    elif g.get("pickle"):
        case = "pickle"
    else:
        return None
    commands = {"worker": ["df -h /dev/shm", "ulimit -a"]}.get(case, [])
    if case == "worker" and facts.platform == "windows":
        commands = []
    return _answer("launcher", f"spawn-{case}", "high" if case != "worker" else "medium",
                   t(f"structural.f2.spawn.title_{case}"), t(f"structural.f2.spawn.cause_{case}"),
                   t(f"structural.f2.spawn.fix_{case}"), commands, seen, facts, 30 if case != "worker" else 60)


# --- open files and disk space ----------------------------------------------------------------------------

def _folder(seen: Seen, facts: LogFacts) -> tuple[str, str, str]:
    """(kind, env var, path) of the folder that is full: the path in the error, else the frames."""
    path = seen.groups.get("path") or ""
    where = path.replace("\\", "/") or _paths(facts)
    for row in _rows("folder"):
        if row["marker"] in where:
            return row["kind"], row["env"], path
    return "other", "TMPDIR" if not path else "", path


def limit(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if seen.groups.get("fd"):
        shared = "torch/multiprocessing" in _paths(facts) or "torch/utils/data" in _paths(facts)
        case = "fd_torch" if shared else "fd"
        commands = [] if facts.platform == "windows" else ["ulimit -n", "ulimit -Hn", 'ulimit -n "$(ulimit -Hn)"']
        return _answer("out-of-memory", "file-descriptors", "high", t("structural.f2.fd.title"),
                       t("structural.f2.fd.cause"), t(f"structural.f2.fd.{case}"), commands, seen, facts, 30)
    if "Could not install packages due to" in seen.text:
        return None  # pip's own report: tune-c1's c1-pip reading answers it
    kind, var, path = _folder(seen, facts)
    shown = path if path and len(path) < 300 else ""
    commands = ["df -h /dev/shm"] if kind == "shm" else ["df -h"]
    if facts.platform == "windows":
        commands = []
    if var:
        commands.append(env(f"{var}=/path/with/space", facts))
    return _answer("out-of-memory", "disk", "high", t("structural.f2.disk.title"),
                   t("structural.f2.disk.cause", path=shown or t("structural.f2.disk.nopath")),
                   t(f"structural.f2.disk.{kind}"), commands, seen, facts, 30)


# --- TLS certificates and rate limits ---------------------------------------------------------------------

def _tool(seen: Seen, facts: LogFacts) -> str:
    text, paths = seen.text, _paths(facts)
    if "Could not fetch URL" in text or "pypi.org" in text or "/pip/" in paths or "confirming the ssl" in text:
        return "pip"
    if seen.groups.get("git"):
        return "git"
    if "CondaSSLError" in text or "CondaHTTPError" in text:
        return "conda"
    if "huggingface" in text or "huggingface_hub" in paths or "hf-mirror" in text:
        return "hf"
    if "torch/hub.py" in paths or "urlopen error" in text or "urllib.error" in text:
        return "urllib"
    return "requests"


def tls(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if seen.groups.get("host") is not None:
        host = seen.groups["host"]
        hf = "huggingface.co" in host or "hf.co" in host
        case = "hf" if hf else "other"
        commands = ["hf auth login"] if hf else []
        return _answer("launcher", "http-429", "high", t("structural.f2.rate.title"), t("structural.f2.rate.cause"),
                       t(f"structural.f2.rate.fix_{case}"), commands, seen, facts, 30)
    if seen.text.lstrip().startswith("WARNING: Retrying"):
        return None  # pip retries; its "Could not fetch URL ... - skipping" line is the failure
    tool = _tool(seen, facts)
    commands = {"pip": ["python -m pip config set global.cert /path/to/ca-bundle.pem"],
                "hf": [env("REQUESTS_CA_BUNDLE=/path/to/ca-bundle.pem", facts)],
                "requests": [env("REQUESTS_CA_BUNDLE=/path/to/ca-bundle.pem", facts)],
                "urllib": [env("SSL_CERT_FILE=/path/to/ca-bundle.pem", facts)],
                "conda": ["conda config --set ssl_verify /path/to/ca-bundle.pem"],
                "git": ["git config --global http.sslCAInfo /path/to/ca-bundle.pem"]}[tool]
    return _answer("launcher", "tls-certificate", "high", t("structural.f2.tls.title"), t("structural.f2.tls.cause"),
                   t(f"structural.f2.tls.fix_{tool}"), commands, seen, facts, 15)


# --- API drift between two installed packages ----------------------------------------------------------

def _pair(facts: LogFacts) -> Optional[tuple[str, str]]:
    """(caller, callee): the last frame's package (where the call failed) and the package of the nearest frame
    before it that lies in another package; None unless both are installed packages."""
    pkgs = [package_of(p.replace("\\", "/")) for p in facts.paths]
    if not pkgs or not pkgs[-1]:
        return None
    callee = pkgs[-1]
    for pkg in reversed(pkgs[:-1]):
        if pkg and pkg != callee:
            return pkg, callee
    return None


def drift(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.root is None or seen.line != facts.root[0]:
        return None  # only the error the run died of
    pair = _pair(facts)
    if pair is None or not all(_SAFE.fullmatch(p) for p in pair):
        return None
    if not _METHOD.fullmatch(seen.groups.get("fn") or ""):
        return None  # a plain function may be a builtin (torch's C functions raise in the caller's frame): unread
    caller, callee = (p.replace("_", "-") for p in pair)
    name = (seen.groups.get("fn") or "")[:120]
    return _answer("version-constraint", callee, "medium", t("structural.f2.drift.title", caller=caller, callee=callee),
                   t("structural.f2.drift.cause", caller=caller, callee=callee, name=name),
                   t("structural.f2.drift.fix", caller=caller, callee=callee),
                   [f"python -m pip show {caller} {callee}", "python -m pip check",
                    f"python -m pip install -U {caller} {callee}"], seen, facts, 35, package=pair[1])


# --- cuDNN runtime mismatch -------------------------------------------------------------------------------

def _ver(raw: str) -> str:
    return ".".join(p for p in re.split(r"[,\s.]+", raw.strip()) if p)


def cudnn(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    built, found = _ver(seen.groups.get("built") or ""), _ver(seen.groups.get("found") or "")
    var = "PATH" if facts.platform == "windows" else "LD_LIBRARY_PATH"
    major = facts.cuda_major
    wheel = f"nvidia-cudnn-cu{major}" if major in (11, 12, 13) else ""
    commands = [] if facts.platform == "windows" else ["echo $LD_LIBRARY_PATH"]
    if wheel:
        commands.append(f"python -m pip show {wheel}")
    if facts.conda:
        commands.append("conda list cudnn")
    if wheel and built and re.fullmatch(r"\d{1,2}\.\d{1,3}\.\d{1,3}", built):
        commands.append(f'python -m pip install "{wheel}=={built}.*"')
    case = "versions" if built and found else "status"
    return _answer("shared-library", "cudnn", "high", t("structural.f2.cudnn.title"),
                   t(f"structural.f2.cudnn.cause_{case}", built=built, found=found, var=var),
                   t("structural.f2.cudnn.fix" + ("_conda" if facts.conda else ""), var=var,
                     wheel=wheel or t("structural.f2.cudnn.anywheel")), commands, seen, facts, 14)


# --- kernel faults under a kernel library's frames -------------------------------------------------------

_KERNEL_NAMES = {"misaligned": "cudaErrorMisalignedAddress", "illegal": "cudaErrorIllegalInstruction",
                 "launch": "cudaErrorLaunchFailure"}


def _kernel_dist(facts: LogFacts) -> Optional[str]:
    """The kernel library of the deepest frame that lies in one; Triton only when no library that writes Triton
    kernels (liger-kernel, unsloth, flash-attn's Triton ops ...) is in the frames above it."""
    found = []
    for path in reversed(facts.paths):
        path = path.replace("\\", "/")
        found += [row["dist"] for row in _rows("kernel") if re.search(r"/" + re.escape(row["module"]) + r"[/_.]", path)]
    own = [d for d in found if d != "triton"]
    return own[0] if own else (found[0] if found else None)


def kernel(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    text = seen.text[seen.start:seen.end].lower()
    key = "misaligned" if "misaligned" in text else "illegal" if "illegal" in text else "launch"
    dist = _kernel_dist(facts)
    commands = [env("CUDA_LAUNCH_BLOCKING=1", facts)]
    if dist:
        commands += [f"python -m pip show {dist} torch"]
    if facts.platform not in ("windows", "macos"):
        commands.append("sudo dmesg -T | grep -i xid")
    pkg_fix = "fix_pkg_triton" if dist == "triton" else "fix_pkg"
    fix = (t(f"structural.f2.kernel.{pkg_fix}", pkg=dist) if dist else "") + " " + t("structural.f2.kernel.fix")
    return _answer("cuda-error", _KERNEL_NAMES[key], "high" if dist else "medium",
                   t("structural.f2.kernel.title", name=_KERNEL_NAMES[key]),
                   t("structural.f2.kernel.cause_pkg", pkg=dist) if dist else t("structural.f2.kernel.cause"),
                   fix.strip(), commands, seen, facts, 44)
