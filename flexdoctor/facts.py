"""Facts: one immutable snapshot of the machine, gathered by probes, judged by checks.

A fact is a value, ``None`` (absent: the thing does not exist or was not asked for), or a
:class:`ProbeError` (flexdoctor could not tell). Facts never hold sentinel words like
"N/A": words belong to renderers.

Every section is a frozen dataclass so checks are pure functions over plain data, and the
whole snapshot round-trips through JSON (``to_dict`` / ``from_dict``) so recorded facts of real
machines drive the tests.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Optional, Union

FACTS_SCHEMA_VERSION = 1
_UnionType = getattr(types, "UnionType", None)  # Python 3.10+


@dataclass(frozen=True)
class ProbeError:
    """flexdoctor could not tell: the probe failed, crashed, hung or was not run.

    ``kind`` is one of: ``error`` (an exception), ``timeout``, ``crash`` (killed by a signal),
    ``garbage`` (unparseable output), ``skipped`` (the user asked not to gather it).

    What flexdoctor itself has to say about it is data: ``reason`` names a ``probe-error.<reason>``
    text of the catalogues and ``args`` fills it, so a report words it in the user's language
    (``checks._util.probe_error_text``). ``message`` is then that text in English, for the JSON
    facts; without a reason it is what the failing program said (an import error, in its words).
    """

    message: str
    kind: str = "error"
    stage: Optional[str] = None
    detail: Optional[str] = None
    reason: Optional[str] = None
    args: dict = field(default_factory=dict)

    @classmethod
    def because(cls, reason: str, kind: str = "error", stage: Optional[str] = None,
                detail: Optional[str] = None, **args: Any) -> "ProbeError":
        """A ProbeError flexdoctor words: ``probe-error.<reason>`` filled with ``args``."""
        from .text import english

        return cls(english(f"probe-error.{reason}", **args), kind=kind, stage=stage, detail=detail,
                   reason=reason, args=args)

    def to_dict(self) -> dict:
        return {"probe_error": {k: v for k, v in dataclasses.asdict(self).items() if v is not None and v != {}}}


class Skip(Exception):
    """Raised inside a check: the facts it needs are missing, so it cannot judge.

    A check raises it with its own words (``Skip(t("deep.not_run"))``); :func:`require` raises it
    with data (``need``: what was needed; ``error``: the ProbeError, None when absent) and the
    runner words it.
    """

    def __init__(self, message: str = "", need: str = "", error: Optional[ProbeError] = None):
        super().__init__(message)
        self.message, self.need, self.error = message, need, error


def require(value: Any, what: str = "") -> Any:
    """Return ``value`` or raise :class:`Skip` when it is a ProbeError or None.

    ``what`` names the facts needed: a ``needs.<what>`` catalogue key (``"gpu"``), or words.
    """
    if isinstance(value, ProbeError):
        raise Skip(need=what, error=value)
    if value is None:
        raise Skip(need=what)
    return value


def ok(value: Any) -> bool:
    """True when the fact is a real value (neither absent nor a ProbeError)."""
    return value is not None and not isinstance(value, ProbeError)


# --------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class HostFacts:
    hostname: str
    os: str  # platform.system(): Linux, Windows, Darwin
    os_release: Optional[str]  # PRETTY_NAME of /etc/os-release, or platform string
    kernel: str
    machine: str  # x86_64, aarch64, arm64
    wsl: bool
    container: Optional[str]  # docker, podman, kubernetes, or None
    user: Optional[str]
    uid: Optional[int]
    cpu_count: Optional[int]
    cpu_avx2: Optional[bool] = None  # x86 only: CPU Inductor (flex on CPU) needs AVX2
    # Cluster identity for merging fleet reports (SLURM_JOB_ID, SLURM_NODEID, RANK, ...).
    scheduler: dict = field(default_factory=dict)
    # Environment variables that change how torch, Triton, Inductor or the CUDA toolchain behave.
    env: dict = field(default_factory=dict)


@dataclass(frozen=True)
class GpuDevice:
    index: int
    name: str
    compute_capability: str  # "9.0"
    memory_total_bytes: Optional[int] = None
    uuid: Optional[str] = None
    pci_bus_id: Optional[str] = None

    @property
    def cc(self) -> tuple[int, int]:
        major, _, minor = self.compute_capability.partition(".")
        return int(major), int(minor or 0)


@dataclass(frozen=True)
class GpuFacts:
    """NVIDIA GPUs as NVML sees them (no torch import)."""

    # ok | no-library | driver-not-loaded | driver-mismatch | no-permission | error
    nvml: str
    nvml_error: Optional[str] = None
    driver_version: Optional[str] = None
    cuda_driver_version: Optional[str] = None  # "13.0": the newest CUDA the driver supports
    devices: list[GpuDevice] = field(default_factory=list)
    device_nodes: bool = False  # /dev/nvidia0 or /proc/driver/nvidia exists


@dataclass(frozen=True)
class PythonFacts:
    """The target interpreter (``--python``), asked in a subprocess, stdlib only."""

    executable: str
    version: str  # "3.11.7"
    implementation: str
    platform: str  # sys.platform
    include_dir: Optional[str]
    python_h: bool
    # Installed distributions that matter (name -> version), read from metadata.
    packages: dict = field(default_factory=dict)


@dataclass(frozen=True)
class TorchStaticFacts:
    """torch as installed, read without importing it (metadata and torch/version.py as text)."""

    version: str
    location: Optional[str] = None
    cuda: Optional[str] = None
    hip: Optional[str] = None
    git_version: Optional[str] = None
    debug: Optional[bool] = None
    # torch's own triton requirement, e.g. "triton==3.6.0" (from Requires-Dist), if any.
    triton_requirement: Optional[str] = None


@dataclass(frozen=True)
class TorchDevice:
    index: int
    name: str
    capability: str  # "9.0"
    total_memory: Optional[int] = None
    uuid: Optional[str] = None  # matches NVML's "GPU-<uuid>": which physical GPUs torch can use


@dataclass(frozen=True)
class TorchRuntimeFacts:
    """What ``import torch`` in the target interpreter says (subprocess, time-boxed)."""

    version: str
    cuda: Optional[str] = None
    hip: Optional[str] = None
    cuda_available: Optional[bool] = None
    cuda_init_warning: Optional[str] = None
    device_count: Optional[int] = None
    devices: list[TorchDevice] = field(default_factory=list)
    arch_list: Optional[list] = None
    bf16_supported: Optional[bool] = None
    cudnn_version: Optional[int] = None
    mps_available: Optional[bool] = None
    triton_import_error: Optional[str] = None  # None: imported fine (or not tried)
    triton_version: Optional[str] = None
    flex_import_error: Optional[str] = None
    flex_importable: Optional[bool] = None
    seconds: Optional[float] = None
    stage_seconds: dict = field(default_factory=dict)  # "import torch" -> 2.1, ...


@dataclass(frozen=True)
class Nvcc:
    path: str
    version: Optional[str]  # "13.0"; None when the output named no release
    output: Optional[str] = None


@dataclass(frozen=True)
class CudaHome:
    path: str
    source: str  # CUDA_HOME | CUDA_PATH | nvcc | default
    is_dir: bool
    cuda_h: bool
    cuda_runtime_h: bool
    version: Optional[str] = None  # toolkit version from version.json / version.txt / cuda.h
    # $CUDA_HOME/bin/nvcc, the one torch.utils.cpp_extension runs for extension builds (it need
    # not be the nvcc on PATH). None: there is none (or, in facts recorded before this field, not
    # looked at: checks then fall back to the PATH nvcc when it lives in CUDA_HOME/bin).
    nvcc: Union["Nvcc", ProbeError, None] = None


@dataclass(frozen=True)
class Compiler:
    source: str  # CC | gcc | clang | CXX | g++ | clang++
    command: str
    path: Optional[str]  # None when $CC names something that is not there


@dataclass(frozen=True)
class LibCuda:
    path: Optional[str]  # the libcuda.so.1 Triton would load; None: not found
    method: Optional[str]  # TRITON_LIBCUDA_PATH | ldconfig | LD_LIBRARY_PATH
    unversioned: bool = False  # a plain libcuda.so next to it (triton <= 3.5 links -lcuda)


@dataclass(frozen=True)
class ToolchainFacts:
    nvcc: Union[Nvcc, ProbeError, None] = None
    cuda_home: Union[CudaHome, None] = None
    c_compiler: Union[Compiler, None] = None
    cxx_compiler: Union[Compiler, None] = None
    libcuda: Union[LibCuda, ProbeError, None] = None
    # Toolkit roots found in the usual places (holding include/cuda_runtime.h), for suggestions.
    cuda_installs: list = field(default_factory=list)


@dataclass(frozen=True)
class PathStat:
    """One directory (or symbolic link) on the way to a cache, as ``lstat`` saw it: what
    :func:`flexdoctor.safety.judge` decides a cache location's safety from."""

    path: str
    uid: int
    mode: int  # permission bits (st_mode & 0o7777)
    # target: the cache dir itself; ancestor: its nearest existing ancestor (the cache does not
    # exist yet and will be created inside it); parent: a directory above either, up to /;
    # link: a symbolic link named in the path (whoever owns it can re-point it).
    role: str = "parent"


@dataclass(frozen=True)
class CacheLocation:
    """One compile cache directory as the filesystem sees it (probes/cache.py, no torch import)."""

    kind: str  # inductor | triton | aten
    path: str
    source: str  # the environment variable that set it, or "default"
    exists: bool
    in_temp: bool = False  # under the temporary directory, /tmp, /var/tmp or /dev/shm
    fs_type: Optional[str] = None  # of the mount holding it (or its nearest existing parent)
    mount_point: Optional[str] = None
    noexec: Optional[bool] = None
    writable: Optional[bool] = None  # the dir, or the parent Inductor would create it in
    owner_uid: Optional[int] = None
    mode: Optional[int] = None  # permission bits (st_mode & 0o7777)
    free_bytes: Optional[int] = None
    size_bytes: Optional[int] = None  # None: not measured (too many files or too slow)
    # What safety.judge needs: the cache dir (or its nearest existing ancestor, when it does not
    # exist yet), every directory above it up to /, and the symlinks named on the way.
    # None: not gathered (facts recorded before flexdoctor 0.x recorded it; FD504 then judges
    # owner_uid/mode alone).
    chain: Optional[list[PathStat]] = None


@dataclass(frozen=True)
class CacheManifest:
    """flexdoctor's warm-cache manifest found in the Inductor cache dir."""

    path: str
    written_at: Optional[str] = None
    fingerprint: dict = field(default_factory=dict)
    configs: list = field(default_factory=list)  # names of the warmed configs
    # Entries recorded per warmed environment: [{"fingerprint": {...}, "bytes": N, "count": N}]
    entry_groups: list = field(default_factory=list)


@dataclass(frozen=True)
class CacheFacts:
    uid: Optional[int]
    inductor: CacheLocation
    triton: Optional[CacheLocation] = None  # Triton's own cache (TRITON_CACHE_DIR or ~/.triton/cache)
    aten: Optional[CacheLocation] = None
    manifest: Union[CacheManifest, ProbeError, None] = None
    disabled_by: list = field(default_factory=list)  # "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1", ...


@dataclass(frozen=True)
class SdpaBackendRun:
    """One SDPA backend asked (``can_use_*`` with debug on) and run alone (``sdpa_kernel([b])``)."""

    backend: str  # flash | efficient | cudnn | math
    usable: Optional[bool] = None  # torch.backends.cuda.can_use_*; None: not asked (CPU, math)
    reasons: list = field(default_factory=list)  # refusal reasons in torch's own words
    ran: Optional[bool] = None
    error: Optional[str] = None  # torch's words, or the English text of error_code
    rel_error: Optional[float] = None  # ||out - ref|| / ||ref|| against float64
    nan: Optional[bool] = None
    # Why it did not run when flexdoctor says it (the worker cannot import flexdoctor, so it sends
    # a code): the catalogue's worker-reason.<code> filled with error_args.
    error_code: Optional[str] = None
    error_args: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SdpaRun:
    dtype: str  # float16 | bfloat16 | float32
    shape: list = field(default_factory=list)  # [B, H, L, D]
    is_causal: bool = False
    backends: list[SdpaBackendRun] = field(default_factory=list)
    default_ok: Optional[bool] = None  # SDPA with torch choosing the backend
    default_error: Optional[str] = None
    default_rel_error: Optional[float] = None


@dataclass(frozen=True)
class FlexRun:
    """``torch.compile(flex_attention)`` with a causal block mask, one dtype, against float64."""

    dtype: str
    shape: list = field(default_factory=list)  # [B, H, L, D]
    mask: str = "causal"
    error: Optional[str] = None
    stage: Optional[str] = None  # where ``error`` happened
    compile_seconds: Optional[float] = None  # first call: compile (or cache load) + run
    run_seconds: Optional[float] = None
    compiled_path: Optional[bool] = None  # False: the uncompiled fallback ran
    fallback_warning: Optional[str] = None
    warnings: list = field(default_factory=list)
    cache: dict = field(default_factory=dict)  # Dynamo/Inductor counter deltas
    rel_error: Optional[float] = None
    nan: Optional[bool] = None
    tolerance: Optional[float] = None
    backward: Optional[dict] = None  # {seconds, rel_error, nan, tolerance} or {error}; None: not run


@dataclass(frozen=True)
class DeepFacts:
    """What running the real kernels in the target interpreter showed (``check --deep``)."""

    device: str  # cuda | cpu
    torch_version: Optional[str] = None
    device_name: Optional[str] = None
    capability: Optional[str] = None  # "7.5"
    seed: Optional[int] = None
    sdpa: list[SdpaRun] = field(default_factory=list)
    flex: list[FlexRun] = field(default_factory=list)
    flex_dtypes: list = field(default_factory=list)  # asked for
    flex_skipped: dict = field(default_factory=dict)  # dtype -> why not tried
    flash_attn: dict = field(default_factory=dict)  # installed, importable, version, runs, fa3, fa4
    xformers: dict = field(default_factory=dict)
    section_errors: dict = field(default_factory=dict)  # a probe bug in one section
    # The probe died (crash, hang, OOM) before the end; the sections above are what it finished.
    incomplete: Optional[ProbeError] = None
    seconds: Optional[float] = None
    stage_seconds: dict = field(default_factory=dict)


@dataclass(frozen=True)
class GpuLink:
    """One GPU's links as NVML sees them (``check --deep`` on a node with several GPUs)."""

    index: int  # NVML index
    nvlinks: int = 0  # active NVLinks
    nvlink_version: Optional[int] = None  # 2 Volta, 3 Ampere, 4 Hopper, 5 Blackwell
    nvswitch: bool = False  # its links end at an NVSwitch (every GPU on the switch is reachable)
    pcie_gen: Optional[int] = None  # highest current PCIe generation seen (idle and under load)
    pcie_width: Optional[int] = None  # highest current lane count seen
    pcie_gen_max: Optional[int] = None  # what this GPU in this slot can do (nvmlDeviceGetMaxPcieLink*)
    pcie_width_max: Optional[int] = None
    pcie_loaded: bool = False  # sampled while the all-reduce ran


@dataclass(frozen=True)
class GpuPair:
    a: int  # NVML indices, a < b
    b: int
    topology: Optional[str] = None  # NVML common ancestor: board | PIX | PXB | PHB | NODE | SYS
    nvlinks: int = 0  # NVLinks joining them (direct, or both on one NVSwitch fabric)
    nvml_p2p: Optional[str] = None  # NVML's P2P read status: ok | disabled-by-regkey | chipset-not-supported | ...
    p2p: Optional[bool] = None  # torch.cuda.can_device_access_peer both ways (None: not asked)


@dataclass(frozen=True)
class AllReduce:
    """An all-reduce across the node's GPUs, one process per GPU, timed as nccl-tests does."""

    backend: str  # nccl | gloo
    world_size: int
    bytes: int
    iterations: int = 0
    seconds: Optional[float] = None  # mean time of one all-reduce (slowest rank)
    algbw_gbps: Optional[float] = None  # bytes / seconds / 1e9
    busbw_gbps: Optional[float] = None  # algbw * 2 (n - 1) / n
    correct: Optional[bool] = None  # the sum every rank got is the right one
    error: Optional[str] = None  # torch's words, or the English text of error_code
    stage: Optional[str] = None  # where it failed or hung: init | first all-reduce | timing
    hung: bool = False  # a rank did not finish inside the time box
    timeout: Optional[float] = None
    nccl_version: Optional[str] = None
    env: dict = field(default_factory=dict)  # NCCL_* variables in effect
    # flexdoctor's reason (worker-reason.<code>, filled with error_args) when torch said nothing.
    error_code: Optional[str] = None
    error_args: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MultiGpuFacts:
    """The GPUs of this node together: NVML topology, torch's peer access, an all-reduce."""

    gpus: list[GpuLink] = field(default_factory=list)
    pairs: list[GpuPair] = field(default_factory=list)
    devices: list = field(default_factory=list)  # NVML indices of the GPUs torch uses, in torch order
    allreduce: Optional[AllReduce] = None
    nvml_error: Optional[str] = None
    incomplete: Optional[ProbeError] = None  # the worker died or hung before its end
    seconds: Optional[float] = None


# Plain dataclasses of the project tier live with the parser (stdlib only, no cycle back here).
from .project.model import DiffusersFacts, ProjectConfig  # noqa: E402


@dataclass(frozen=True)
class ProjectFacts:
    """``check --project``: the training config as its tool reads it, and the installed diffusers."""

    config: Union[ProjectConfig, ProbeError, None] = None  # None: no --project given
    # None: not asked (no config, no DIFFUSERS_ATTN_* variable); ProbeError: skipped or failed.
    diffusers: Union[DiffusersFacts, ProbeError, None] = None


@dataclass(frozen=True)
class Facts:
    """The whole snapshot. Sections are a dataclass, None (not applicable), or ProbeError."""

    host: Union[HostFacts, ProbeError, None] = None
    gpu: Union[GpuFacts, ProbeError, None] = None
    python: Union[PythonFacts, ProbeError, None] = None
    torch: Union[TorchStaticFacts, ProbeError, None] = None  # None: torch not installed
    torch_runtime: Union[TorchRuntimeFacts, ProbeError, None] = None
    toolchain: Union[ToolchainFacts, ProbeError, None] = None
    cache: Union[CacheFacts, ProbeError, None] = None
    deep: Union[DeepFacts, ProbeError, None] = None  # None: the deep tier was not run
    # check --deep on a node with two or more GPUs; None: not run or fewer GPUs.
    multi_gpu: Union[MultiGpuFacts, ProbeError, None] = None
    project: Union[ProjectFacts, ProbeError, None] = None  # None: no --project, no diffusers asked
    timings: dict = field(default_factory=dict)  # probe name -> seconds
    collected_at: Optional[str] = None
    flexdoctor_version: Optional[str] = None

    def to_dict(self) -> dict:
        out = to_jsonable(self)
        out["schema_version"] = FACTS_SCHEMA_VERSION
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Facts":
        data = {k: v for k, v in data.items() if k != "schema_version"}
        return from_jsonable(cls, data)

    @classmethod
    def load(cls, data: object) -> "Facts":
        """Facts from a recorded document, checked: ValueError says what is wrong with it (in the
        user's language: it is shown as a usage error, ``check --from-facts FILE``)."""
        from .text import t

        if not isinstance(data, dict):
            raise ValueError(t("facts-load.not_facts"))
        if data.get("schema_version") != FACTS_SCHEMA_VERSION:
            raise ValueError(t("facts-load.schema", version=repr(data.get("schema_version")),
                               supported=FACTS_SCHEMA_VERSION))
        missing = [k for k in ("host", "gpu", "python", "torch", "torch_runtime", "toolchain") if k not in data]
        if missing:
            raise ValueError(t("facts-load.missing", sections=", ".join(missing)))
        try:
            facts = cls.from_dict(data)
        except (TypeError, KeyError, AttributeError) as exc:
            raise ValueError(t("facts-load.malformed", error=exc)) from None
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            value = getattr(facts, f.name)
            allowed = tuple(a for a in typing.get_args(hints[f.name]) if isinstance(a, type)) or (object,)
            if value is not None and not isinstance(value, allowed):
                raise ValueError(t("facts-load.wrong_type", section=f.name, type=type(value).__name__))
        return facts


# --------------------------------------------------------------------------- (de)serialisation


def to_jsonable(value: Any) -> Any:
    if isinstance(value, ProbeError):
        return value.to_dict()
    if dataclasses.is_dataclass(value):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


def _is_probe_error_dict(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"probe_error"}


def from_jsonable(tp: Any, value: Any) -> Any:
    """Rebuild a value of annotated type ``tp`` from JSON data (tolerant of unknown keys)."""
    return _convert(_inner(tp), value)


def _convert(inner: Any, value: Any) -> Any:
    if value is None:
        return None
    if type(value) is dict and _is_probe_error_dict(value):
        return ProbeError(**value["probe_error"])
    return inner(value) if inner is not None else value


@functools.lru_cache(maxsize=None)
def _inner(tp: Any):
    """How to rebuild a non-null value of ``tp`` (None: as it is), worked out once per type:
    resolving annotations was most of the time of loading facts, and ``fleet merge`` loads
    thousands of reports."""
    origin = typing.get_origin(tp)
    if origin is Union or (_UnionType is not None and origin is _UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None) and a is not ProbeError]
        return _inner(args[0]) if len(args) == 1 else None
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        each = _inner(item)
        return lambda value: [_convert(each, v) for v in value]
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        fields = {f.name: _inner(hints[f.name]) for f in dataclasses.fields(tp)}

        def build(value: Any) -> Any:
            if not isinstance(value, dict):
                return value
            return tp(**{k: _convert(fields[k], v) for k, v in value.items() if k in fields})

        return build
    return None
