"""Answers from the error tables: CUDA runtime errors, NCCL error classes, Windows system errors and
NTSTATUS exit codes; and Triton's resources, out of memory, unsupported operations."""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from ... import wheels
from . import tables
from .collect import Seen, package_of
from .context import LogFacts
from .model import Answer
from .readers import NVCC_REQUESTED, _answer, word_before

_VERSIONS = ("python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), "
             "torch.cuda.get_device_name(), torch.cuda.get_device_capability())\"")
# category -> commands (data: the words are structural.cuda.<category>)
_CUDA_COMMANDS = {
    "kernel": ["env:CUDA_LAUNCH_BLOCKING=1"],
    "assert": ["env:CUDA_LAUNCH_BLOCKING=1"],
    "driver": ["nvidia-smi"],
    "nodevice": ["nvidia-smi", "python -c \"import os; print(os.environ.get('CUDA_VISIBLE_DEVICES'))\""],
    "ordinal": ["nvidia-smi -L", "python -c \"import os; print(os.environ.get('CUDA_VISIBLE_DEVICES'))\""],
    "fabric": ["systemctl status nvidia-fabricmanager"],
    "mismatch": ["nvidia-smi", "cat /proc/driver/nvidia/version"],
    "unknown": ["nvidia-smi", "sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm"],
    "os": ["nvidia-smi", "ls -l /dev/nvidia*"],
    "hardware": ["nvidia-smi -q -d ECC"],
    "busy": ["nvidia-smi -q -d COMPUTE"],
    "peer": ["env:NCCL_P2P_DISABLE=1"],
    "cudnn_exec": [_VERSIONS],
    "cublas": ["python -m pip list", _VERSIONS],
    "cudnn_internal": [_VERSIONS],
}
_RANK = {"driver": 12, "compat": 13, "fabric": 12, "mismatch": 12, "nodevice": 14, "image": 15, "stub": 13,
         "init": 14, "os": 14}


def env(assignment: str, facts: LogFacts) -> str:
    """Set an environment variable for the next runs, in the shell of the log's platform."""
    name, value = assignment.split("=", 1)
    return f'$env:{name}="{value}"' if facts.platform == "windows" else f"export {assignment}"


# cuBLAS / cuDNN status names (cublas_api.h, cudnn_graph.h) -> category of advice
_LIB_STATUS = {"CUBLAS_STATUS_ALLOC_FAILED": "memory", "CUBLAS_STATUS_NOT_INITIALIZED": "libinit",
               "CUBLAS_STATUS_EXECUTION_FAILED": "cublas", "CUBLAS_STATUS_INTERNAL_ERROR": "libinit",
               "CUBLAS_STATUS_ARCH_MISMATCH": "image", "CUBLAS_STATUS_NOT_SUPPORTED": "cublas",
               "CUBLAS_STATUS_INVALID_VALUE": "cublas", "CUDNN_STATUS_NOT_INITIALIZED": "libinit",
               "CUDNN_STATUS_ALLOC_FAILED": "memory", "CUDNN_STATUS_EXECUTION_FAILED": "cudnn_exec",
               "CUDNN_STATUS_INTERNAL_ERROR": "cudnn_internal", "CUDNN_STATUS_MAPPING_ERROR": "kernel",
               "CUDNN_STATUS_NOT_SUPPORTED": "notsupported", "CUDNN_STATUS_ARCH_MISMATCH": "image",
               "CUDNN_STATUS_BAD_PARAM": "generic"}


def _lib_status(name: str) -> Optional[dict]:
    cat = _LIB_STATUS.get(name)
    if cat is None:
        return None
    return {"name": name, "code": name.split("_STATUS_")[0], "text": name.split("_STATUS_")[1].lower().replace("_", " "),
            "category": cat}


def _cuda_row(g: dict) -> Optional[dict]:
    if g.get("lib_status"):
        return _lib_status(g["lib_status"])
    if g.get("name"):
        return tables.cuda_by_name().get(g["name"].lower())
    if g.get("dname"):
        return tables.cuda_by_name().get(tables.cuda_driver_name(g["dname"]).lower())
    if g.get("code"):
        # THC (torch < 1.5) prints CUDA <= 10.0's codes, renumbered in 10.1: its message decides (tune-f1)
        by_text = _cuda_row_by_text(g["thc"]) if g.get("thc") else None
        return by_text or tables.cuda_by_code().get(int(g["code"]))
    return _cuda_row_by_text(g.get("text") or g.get("text2") or g.get("text3") or "")


def _cuda_row_by_text(text: str) -> Optional[dict]:
    text = text.strip().rstrip(".").lower()
    for known, row in sorted(tables.cuda_by_text().items(), key=lambda kv: -len(kv[0])):  # longest first
        if text.startswith(known):
            return row
    return None


# Source folders of attention and kernel libraries, as their own CUDA checks print them (flash-attn's
# CHECK_CUDA prints __FILE__: csrc/flash_attn/..., hopper/...), -> the distribution.
_KERNEL_SOURCES = (("flash-attention", "flash-attn"), ("flash_attn", "flash-attn"), ("xformers", "xformers"),
                   ("sageattention", "sageattention"), ("SageAttention", "sageattention"),
                   ("flashinfer", "flashinfer-python"), ("bitsandbytes", "bitsandbytes"), ("apex", "apex"),
                   ("deepspeed", "deepspeed"), ("vllm", "vllm"), ("causal-conv1d", "causal-conv1d"),
                   ("mamba", "mamba-ssm"))


def _kernel_package(seen: Seen) -> Optional[str]:
    src = seen.groups.get("src") or ""
    for marker, dist in _KERNEL_SOURCES:
        if re.search(r"(?:^|[\\/])" + re.escape(marker) + r"(?:[\\/_-]|$)", src):
            return dist
    return None


# Under WSL2 the driver is the Windows one, shared into the VM as /usr/lib/wsl/lib/libcuda.so.1 (NVIDIA's
# CUDA on WSL User Guide: no Linux display driver may be installed inside WSL): these categories then mean
# that another libcuda was found first, or that the WSL folder is not on the loader's path.
_WSL_DRIVER = ("nodevice", "driver", "init", "stub", "os", "unknown")


def cublas_fix(facts: LogFacts) -> str:
    """cuBLAS refusing or failing a plain GEMM (INVALID_VALUE, EXECUTION_FAILED, NOT_SUPPORTED): the
    cuBLAS loaded is not the one torch was built with, or the build's CUDA is older than the GPU. The
    wheel that provides cuBLAS for the log's CUDA major comes from libraries.toml."""
    pip = tables.library_row("cublas")["pip"]
    pkg = pip.get(str(facts.cuda_major)) if facts.cuda_major else None
    return t("structural.cuda.cublas.fix", pkgs=pkg or ", ".join(v for _k, v in sorted(pip.items())))


def cuda(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = _cuda_row(seen.groups)
    status = re.search(r"(?:CUBLAS|CUDNN)_STATUS_[A-Z_]{2,40}", seen.text)
    if status and (row is None or row["category"] == "generic"):
        row = _lib_status(status.group(0)) or row
    if row is None:
        return None
    cat = row["category"]
    commands = [env(c[4:], facts) if c.startswith("env:") else c for c in _CUDA_COMMANDS.get(cat, [])]
    if facts.platform == "windows":
        commands = [c for c in commands if not c.startswith(("systemctl", "cat ", "ls ", "sudo "))]
    fix = driver_fix(facts) if cat == "driver" else cublas_fix(facts) if cat == "cublas" else t(f"structural.cuda.{cat}.fix")
    if cat == "memory":  # builder i6: llama.cpp's out of memory (ollama, text-generation-webui) names its own knobs
        from .i6 import ggml_lead

        fix = ggml_lead(seen.text) or fix
    if facts.platform == "wsl2" and cat in _WSL_DRIVER:
        fix, commands = t("structural.cuda.wsl_driver") + " " + fix, commands + ["ls -l /usr/lib/wsl/lib/libcuda.so*"]
    kernel_pkg = _kernel_package(seen) if cat in ("kernel", "assert", "image") else None
    if kernel_pkg:  # the failing kernel is a library's: its version or its configuration is the suspect
        fix = t("structural.cuda_a2.in_package", pkg=kernel_pkg) + " " + fix
    return _answer("cuda-error", row["name"], "high",
                   t("structural.title.cuda", name=row["name"], code=row["code"], text=row["text"]),
                   t(f"structural.cuda.{cat}.cause"), fix, commands, seen, facts, _RANK.get(cat, 45))


def cuda_assert(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """An ATen kernel's device-side assert: its condition names what was out of range (cuda_errors.toml)."""
    cond = seen.groups.get("cond") or ""
    row = next((r for r in tables.cuda_asserts() if r["match"] in cond), None)
    if row is None:
        return None
    cat = row["category"]
    return _answer("cuda-error", "cudaErrorAssert", "high", t("structural.assert.title", cond=cond[:120]),
                   t(f"structural.assert.{cat}.cause"), t(f"structural.assert.{cat}.fix"),
                   [env("CUDA_LAUNCH_BLOCKING=1", facts)], seen, facts, 40)


def cuda_build(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A CUDA extension built on macOS: no CUDA exists there, so the package cannot be installed."""
    if facts.platform != "macos":
        return None  # elsewhere the CUDA toolkit may be missing: the toolchain entries answer
    dist = (seen.groups.get("dist") or word_before(seen.text, NVCC_REQUESTED) or facts.package or "").replace("_", "-")
    dist = dist if re.fullmatch(r"[A-Za-z][\w-]{0,60}", dist) else t("structural.word.the_package")
    return _answer("pip-no-distribution", dist, "high", t("structural.mac_a2.title", dist=dist),
                   t("structural.mac_a2.cause", dist=dist), t("structural.mac_a2.fix", dist=dist),
                   ["python -c \"import torch; print(torch.__version__, torch.backends.mps.is_available())\""],
                   seen, facts, 26)


def rocm_arch(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A ROCm kernel library (Composable Kernel in flash-attn, aiter, ...) without this gfx target."""
    gfx = seen.groups.get("gfx") or ""
    pkg = facts.package or package_of(seen.text) or ""
    if "flash-attention" in seen.text or "Flash-Attention" in seen.text or "composable_kernel" in seen.text:
        pkg = pkg or "flash_attn"
    pkg = pkg if re.fullmatch(r"[A-Za-z][\w.-]{0,60}", pkg) else t("structural.word.the_package")
    return _answer("unsupported-op", "rocm", "high", t("structural.rocm_a2.title", gfx=gfx, pkg=pkg),
                   t("structural.rocm_a2.cause", gfx=gfx, pkg=pkg), t("structural.rocm_a2.fix", gfx=gfx, pkg=pkg),
                   ["rocminfo | grep -m1 -o 'gfx[0-9a-f]*'",
                    "python -c \"import torch; print(torch.__version__, torch.version.hip, torch.cuda.get_arch_list())\""],
                   seen, facts, 30)


def driver_floors(facts: LogFacts) -> str:
    """'CUDA 12.x: driver 525.60.13 or newer; ...' from the wheel table's floors (NVIDIA's CUDA
    minor-version compatibility table), for the log's CUDA major when it says one, else for each."""
    drivers = wheels.table().drivers
    plat = "windows-x86_64" if facts.platform == "windows" else "linux-x86_64"
    majors = [facts.cuda_major] if facts.cuda_major in drivers else sorted(drivers)
    return "; ".join(t("structural.driver.floor", major=m, driver=drivers[m].version(plat)) for m in majors)


def driver_fix(facts: LogFacts) -> str:
    return t("structural.driver.fix", floors=driver_floors(facts))


_NCCL_FIX = {"argument": "structural.nccl_a.argument_fix"}  # the words that also name the world-size cause


def nccl(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    rows = tables.nccl_errors()
    if g.get("dup"):  # NCCL init.cc: "Duplicate GPU detected" makes ncclCommInitRank fail with ncclInvalidUsage
        row = next(r for r in rows if r["name"] == "ncclInvalidUsage")
        return _answer("nccl-error", row["name"], "high", t("structural.title.nccl", name=row["name"]),
                       t("structural.nccl.duplicate-gpu.cause"), t("structural.nccl.duplicate-gpu.fix"),
                       ["nvidia-smi -L", env("NCCL_DEBUG=INFO", facts)], seen, facts, 40)
    row = next((r for r in rows if r["name"] == g.get("name") or r["text"] == g.get("text")), None)
    if row is None:
        return None
    commands = [env("NCCL_DEBUG=INFO", facts)]
    if row["cause"] == "system":
        commands += ["df -h /dev/shm", "ip -brief address"]
    return _answer("nccl-error", row["name"], "high", t("structural.title.nccl", name=row["name"]),
                   t(f"structural.nccl.{row['cause']}.cause"), t(_NCCL_FIX.get(row["cause"], f"structural.nccl.{row['cause']}.fix")),
                   commands,
                   seen, facts, 44)


def _status_row(num: str) -> Optional[dict]:
    value = int(num, 16) if num.lower().startswith(("0x", "c0000")) else int(num)
    for row in tables.windows_statuses():
        if value == int(row["code"], 16) or value in row["decimal"]:
            return row
    return None


def _windows_row(g: dict, facts: LogFacts) -> Optional[dict]:
    """The winerror.toml row a match names: by number ([WinError N], Rust's "(os error N)" where N is not
    an errno), by NTSTATUS, or by the system message's own words."""
    code = g.get("code") or g.get("oscode")
    if g.get("oscode") and facts.platform != "windows" and int(code) < 1000:
        return None  # an errno (Linux, macOS), not a Windows error
    if code:
        return next((r for r in tables.windows_errors() if r["code"] == int(code)), None)
    if g.get("wintext"):
        text = g["wintext"].strip().rstrip(".").lower()
        return next((r for r in tables.windows_errors() if text and r["text"].lower().startswith(text)), None)
    num = g.get("num", "0")
    return next((r for r in tables.windows_errors() if str(r["code"]) == num), None) or _status_row(num)


# A file Windows would not replace or delete, by where it lies: Inductor's cache (write_atomic renamed
# over an existing entry before torch 2.6, pytorch#138211 fixed by #138331), or pip replacing a package's
# DLLs and .pyd files that a running Python still has loaded.
def _windows_category(row: dict, text: str) -> str:
    cat = row["category"]
    if cat in ("exists", "access", "sharing") and re.search(r"torchinductor|inductor[\\/]", text):
        return "inductor-cache"
    if cat in ("access", "sharing") and "Could not install packages" in text:
        return "pip-in-use"
    return cat


def windows(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = _windows_row(seen.groups, facts)
    if row is None:
        return None
    subject = str(row["code"])
    cat = _windows_category(row, seen.text)
    commands = ["winget install Microsoft.VCRedist.2015+.x64"] if cat in ("dll-missing", "dll-init") else []
    return _answer("windows-error", subject, "high", t("structural.title.windows", code=subject, name=row["name"]),
                   t(f"structural.windows.{cat}.cause"), t(f"structural.windows.{cat}.fix"), commands, seen, facts, 24)


def triton(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    res = (g.get("res") or g.get("res2") or "").strip()
    if not re.fullmatch(r"[a-z][a-z ]{0,40}", res):
        return None
    knob = "shared" if "shared" in res else "other"
    return _answer("triton-resources", res, "high", t("structural.title.triton", res=res),
                   t("structural.cause.triton", res=res, req=g.get("req", "?"), lim=g.get("lim", "?")),
                   t(f"structural.fix.triton_{knob}"), [], seen, facts, 46)


def oom(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("dml"):  # torch-directml: the GPU's memory, with none of CUDA's allocator knobs
        return _answer("out-of-memory", "directml", "medium", t("structural.title.oom", dev="directml"),
                       t("structural.oom.directml.cause"), t("structural.oom.directml.fix"), [], seen, facts, 48)
    killed = not (g.get("dev") or g.get("dev2")) and "CPUAllocator" not in seen.text and "OutOfMemoryError" not in seen.text
    if killed:  # SIGKILL: on Linux nearly always the kernel's OOM killer (host RAM), seen as exit code -9
        return _answer("out-of-memory", "cpu", "medium", t("structural.title.oom", dev="cpu"),
                       t("structural.oom.killed.cause"), t("structural.oom.cpu.fix"), ["sudo dmesg -T | grep -i -E 'killed process|out of memory'"],
                       seen, facts, 48)
    dev = (g.get("dev") or g.get("dev2") or ("cpu" if "CPUAllocator" in seen.text else "cuda")).split()[0].lower()
    dev = {"hip": "cuda"}.get(dev, dev)
    commands = [env("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", facts)] if dev == "cuda" and (
        facts.platform != "windows") else []
    from .j2 import oom_loading  # tune-j2: the weights did not fit while loading (quantize / offload first)

    lead = oom_loading(facts) if dev == "cuda" else ""
    return _answer("out-of-memory", dev, "medium", t("structural.title.oom", dev=dev),
                   t(f"structural.oom.{dev if dev in ('cuda', 'cpu', 'mps') else 'cuda'}.cause"),
                   lead + t(f"structural.oom.{dev if dev in ('cuda', 'cpu', 'mps') else 'cuda'}.fix"), commands, seen,
                   facts, 48)


def unsupported(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("nccl"):  # torch without NCCL: Windows and macOS builds
        return _answer("unsupported-op", "nccl", "high", t("structural.title.unsupported", backend="NCCL"),
                       t("structural.unsupported.nccl.cause"), t("structural.unsupported.nccl.fix"), [], seen, facts, 40)
    backend = (g.get("backend") or g.get("backend2") or g.get("backend3")
               or ("cpu" if g.get("dtype") else "")).lower()
    if (g.get("op2") or "").startswith(("torchvision::", "torchaudio::")):
        from .readers import torch_pair_fix  # an op of a companion package built without this backend

        dist = g["op2"].split("::")[0]
        summary, commands = torch_pair_fix(dist, facts)
        return _answer("version-constraint", dist, "high", t("structural.title.version", pkg=dist),
                       t("structural.cause.companion", dist=dist, backend=backend), summary, commands, seen, facts, 28)
    backend = {"hip": "rocm"}.get(backend, backend)
    if not backend:
        return None
    key = backend if backend in ("mps", "cpu", "rocm") else "other"
    commands = [env("PYTORCH_ENABLE_MPS_FALLBACK=1", facts)] if key == "mps" else []
    from .i2 import webui_half  # cov-i2: AUTOMATIC1111/Forge's --precision full --no-half
    lead = webui_half(facts) if key == "cpu" else ""
    return _answer("unsupported-op", backend, "medium", t("structural.title.unsupported", backend=backend),
                   t(f"structural.unsupported.{key}.cause"), lead + t(f"structural.unsupported.{key}.fix"), commands,
                   seen, facts, 47)


def shm(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """/dev/shm too small (a container's 64 MB default): DataLoader workers and NCCL's shared-memory
    transport fail. A worker killed by SIGKILL ("Killed") is host RAM instead; a crash is no answer."""
    sig = seen.groups.get("sig")
    if sig == "Killed":
        return _answer("out-of-memory", "cpu", "medium", t("structural.title.oom", dev="cpu"),
                       t("structural.oom.killed.cause"), t("structural.oom.cpu.fix"),
                       ["sudo dmesg -T | grep -i -E 'killed process|out of memory'"], seen, facts, 48)
    if sig not in (None, "Bus error"):
        return None
    return _answer("shared-memory", "/dev/shm", "high", t("structural.shm.title"), t("structural.shm.cause"),
                   t("structural.shm.fix"), ["df -h /dev/shm"], seen, facts, 30)


# errno values of a failed connect that do not clear up by retrying (socket.cpp retries until the
# timeout and logs each try as a warning: 111 "refused" and 99 "cannot assign" are normal while rank 0
# starts, or for IPv6 localhost): 110 timed out, 113 no route to host, 101 network unreachable.
_STUCK_CONNECT = {"110", "113", "101"}
_ERRNO = re.compile(r"errno: (\d{1,4})|code: -(\d{1,4})")
_PORT = re.compile(r"\]?:(\d{1,5}) \(errno|port: (\d{1,5})|, (\d{1,5})\)")
_HOST = re.compile(r"connect to ([A-Za-z0-9][A-Za-z0-9.-]{0,100}):(\d{1,5}) \(errno")


def rendezvous(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """torch.distributed could not meet: the master port is taken, or MASTER_ADDR cannot be reached."""
    text = seen.text
    m = _ERRNO.search(text)
    errno = (m.group(1) or m.group(2)) if m else None
    warned = bool(re.match(r"\s*(?:\S{1,40}: )?\[W ", text))  # socket.cpp's own warning line: it retries
    port_m = _PORT.search(text)
    port = next((g for g in port_m.groups() if g), None) if port_m else None
    if "server socket" in text or "EADDRINUSE" in text:
        if errno not in (None, "98"):
            return None  # 97 (no IPv6) and the like: torch tries the next address
        return _launcher("inuse", port, None, seen, facts)
    if seen.groups.get("rdzv") or "timed out" in text or errno in _STUCK_CONNECT or (errno and not warned):
        if errno == "99" or (warned and errno not in _STUCK_CONNECT):
            return None
        host = _HOST.search(text)
        return _launcher("connect", host.group(2) if host else port, host.group(1) if host else None, seen, facts)
    return None


_LAUNCH_SUBJECT = {"inuse": "address-in-use", "connect": "rendezvous-unreachable"}  # data: JSON keeps them


def _launcher(what: str, port: Optional[str], host: Optional[str], seen: Seen, facts: LogFacts) -> Answer:
    windows = facts.platform == "windows"
    commands = []
    if what == "inuse" and port:
        commands.append(f"netstat -ano | findstr :{port}" if windows else f"ss -ltnp 'sport = :{port}'")
    if what == "connect" and host and port and not windows:
        commands.append(f"nc -zv {host} {port}")
    return _answer("launcher", _LAUNCH_SUBJECT[what], "high",
                   t(f"structural.launcher.{what}.title", port=port or "?"),
                   t(f"structural.launcher.{what}.cause", port=port or "?"),
                   t(f"structural.launcher.{what}.fix", port=port or "29500"), commands, seen, facts, 26)


# Slurm's refusals, by the words of their reason (src/common/slurm_errno.c: ESLURM_INVALID_GRES "Invalid
# generic resource (gres) specification", ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE "Requested node
# configuration is not available", ESLURM_INVALID_ACCOUNT / ESLURM_INVALID_QOS / "Job violates
# accounting/QOS policy", ESLURM_INVALID_PARTITION_NAME, ESLURM_INVALID_TIME_LIMIT; sites' job_submit
# plugins word GPU requests themselves: "specify --gres=gpu:TYPE:NUM"). First match wins.
_SLURM_REASONS = (
    ("gres", ("gres", "gpu count", "--gpus", "GPU type")),
    ("nodeconf", ("Requested node configuration is not available",)),
    ("account", ("Invalid account", "Invalid qos", "accounting/QOS policy", "QOSMax", "AssocMax")),
    ("partition", ("Invalid partition",)),
    ("time", ("time limit",)),
    ("memory", ("Memory specification can not be satisfied", "memory")),
)
_SLURM_COMMANDS = {"gres": ["sinfo -o '%P %G'"], "nodeconf": ["sinfo -o '%P %D %c %m %G'"],
                   "account": ["sacctmgr show assoc user=$USER format=account,partition,qos"],
                   "partition": ["sinfo -s"], "time": ["sinfo -o '%P %l'"], "memory": ["sinfo -o '%P %m'"],
                   "oom": ["sacct -j $SLURM_JOB_ID --format=JobID,MaxRSS,ReqMem,State"]}


def slurm(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    """A Slurm refusal (sbatch/srun could not place the job) or a job step Slurm stopped."""
    g = seen.groups
    if g.get("oomkill"):
        what = "oom"
    elif g.get("cancel"):
        what = "time"
    else:
        msg = g.get("msg", "")
        if re.search(r"Exited with exit code|Job step aborted|Terminating job step|Killed", msg):
            return None  # a worker's failure reported by srun: its own lines hold the cause
        what = next((w for w, words in _SLURM_REASONS if any(x.lower() in msg.lower() for x in words)), None)
        if what is None:
            return None
    return _answer("slurm", what, "high", t(f"structural.slurm.{what}.title"), t(f"structural.slurm.{what}.cause"),
                   t(f"structural.slurm.{what}.fix"), _SLURM_COMMANDS[what], seen, facts, 25)
