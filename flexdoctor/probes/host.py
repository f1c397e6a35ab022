"""Host identity and the environment variables that change how the stack behaves."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from ..facts import HostFacts

# Variables that change what torch, Triton, Inductor, NCCL-free CUDA or extension builds do.
RELEVANT_ENV = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "CUDA_PATH",
    "CC",
    "CXX",
    "LD_LIBRARY_PATH",
    "TRITON_LIBCUDA_PATH",
    "TRITON_PTXAS_PATH",
    "TRITON_CACHE_DIR",
    "TRITON_HOME",
    "TRITON_ALWAYS_COMPILE",
    "TORCHINDUCTOR_CACHE_DIR",
    "TORCHINDUCTOR_FX_GRAPH_CACHE",
    "TORCHINDUCTOR_FX_GRAPH_CACHE_DEFAULT",
    "TORCHINDUCTOR_AUTOGRAD_CACHE",
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES",
    "TORCH_COMPILE_FORCE_DISABLE_CACHES",
    "TORCHINDUCTOR_COMPILE_THREADS",
    "PYTORCH_KERNEL_CACHE_PATH",
    "USE_PYTORCH_KERNEL_CACHE",
    "PYTORCH_CUDA_ALLOC_CONF",
    "TORCH_CUDA_ARCH_LIST",
    "MAX_JOBS",
    "DIFFUSERS_ATTN_BACKEND",
    "DIFFUSERS_ATTN_CHECKS",
    "XDG_CACHE_HOME",
)

# Where a job sits in a fleet: the keys a merged multi-node report groups by.
SCHEDULER_ENV = (
    "SLURM_JOB_ID",
    "SLURM_JOB_NAME",
    "SLURM_NODEID",
    "SLURM_PROCID",
    "SLURM_LOCALID",
    "SLURMD_NODENAME",
    "KUBERNETES_SERVICE_HOST",
    "HOSTNAME",
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "NODE_RANK",
    # torchrun: the node's index in the job and the run it belongs to.
    "GROUP_RANK",
    "LOCAL_WORLD_SIZE",
    "TORCHELASTIC_RUN_ID",
    # Kubernetes Indexed Job: the pod's index.
    "JOB_COMPLETION_INDEX",
    # The node's name where the hostname is not it (a Kubernetes pod: set from spec.nodeName
    # through the downward API, contrib/k8s); `fleet merge` names nodes by it.
    "FLEXDOCTOR_NODE_NAME",
)


def _os_release() -> str | None:
    try:
        for line in Path("/etc/os-release").read_text(errors="replace").splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"') or None
    except OSError:
        pass
    if platform.system() == "Darwin":
        return f"macOS {platform.mac_ver()[0]}".strip()
    if platform.system() == "Windows":
        return f"Windows {platform.release()} {platform.version()}".strip()
    return None


def _container() -> str | None:
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if Path("/.dockerenv").exists():
        return "docker"
    if Path("/run/.containerenv").exists():
        return "podman"
    try:
        cgroup = Path("/proc/1/cgroup").read_text(errors="replace")
    except OSError:
        return None
    for word in ("docker", "kubepods", "containerd", "lxc"):
        if word in cgroup:
            return "kubernetes" if word == "kubepods" else word
    return None


def _avx2(machine: str) -> bool | None:
    # torch's check_cpu_supported() (inductor flex_cpu) wants AVX2: an ARM CPU never has it.
    if machine.lower() not in ("x86_64", "amd64", "i686", "x86"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return "avx2" in line.split()
    except OSError:
        pass
    return None


def _user() -> tuple[str | None, int | None]:
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        import getpass

        return getpass.getuser(), uid
    except Exception:  # no passwd entry (containers run as an arbitrary uid)
        return None, uid


def probe() -> HostFacts:
    uname = platform.uname()
    user, uid = _user()
    return HostFacts(
        hostname=_hostname(),
        os=uname.system,
        os_release=_os_release(),
        kernel=uname.release,
        machine=uname.machine,
        wsl="microsoft" in uname.release.lower(),
        container=_container(),
        user=user,
        uid=uid,
        cpu_count=os.cpu_count(),
        cpu_avx2=_avx2(uname.machine),
        scheduler={k: os.environ[k] for k in SCHEDULER_ENV if k in os.environ},
        env={k: os.environ[k] for k in RELEVANT_ENV if k in os.environ},
    )


def _hostname() -> str:
    """socket.gethostname() without importing socket (~6 ms of ``check --static``): on POSIX both
    are the uname nodename (glibc's gethostname is uname); elsewhere ask socket."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()
