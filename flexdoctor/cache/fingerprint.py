"""The environment fingerprint: what the compile cache's keys depend on, typed, built in one place.

Inductor's FX-graph and AOT-autograd keys hold the torch version and source hash, the Triton key,
``torch.version.cuda``/``hip`` and the name of the GPU ``torch.cuda.current_device()`` is, whenever
CUDA works (``CacheBase.get_system()``, also for graphs compiled for the CPU). Triton's keys hold
its own version and the GPU arch. No driver version is in either (FACTS §3). A change in any keyed
part means warmed entries are never hit again: dead weight, not wrong results.

Three builders, one type:

- :meth:`Fingerprint.from_runtime`: what a warm-cache worker saw after ``import torch`` (the truth).
- :meth:`Fingerprint.from_probes`: the same keyed parts read WITHOUT importing torch, in well
  under a second: ``torch/version.py`` as text and the package metadata (torch, Triton) from the
  target interpreter's stdlib-only probe, the GPU name from NVML (the probes' facts, handed down
  by the command). warm-cache compares it with the manifest to skip configs that are already
  warm without starting a torch worker.
- :meth:`Fingerprint.from_facts`: what ``check`` knows (static and runtime tiers) for FD505/FD506.

The trade-off of reading it cheaply (documented in ``warm-cache --help``): NVML cannot tell the GPU
torch will pick when a machine mixes GPU models and CUDA orders them otherwise (CUDA_DEVICE_ORDER),
and on ROCm Inductor keys the gcnArchName NVML does not have. In those cases the GPU is unknown,
and an unknown keyed part never counts as a match: warm-cache compiles instead of skipping.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional

# Parts of the fingerprint that are in Inductor's or Triton's cache keys: a change means a miss.
KEYED = ("torch", "torch_git", "triton", "cuda", "hip", "gpu_name")
# Recorded for the report, not in any cache key (driver) or implied by the keyed parts.
INFO = ("driver", "gpu_capability", "python", "device")
LABELS = {"torch": "torch", "torch_git": "torch build", "triton": "triton", "cuda": "CUDA",
          "hip": "HIP", "gpu_name": "GPU", "driver": "driver", "gpu_capability": "GPU capability",
          "python": "Python", "device": "device"}


def label(key: str) -> str:
    """A fingerprint part as a report names it, in the report's language (``fingerprint.<key>``)."""
    from ..text import has, t

    return t(f"fingerprint.{key}") if has(f"fingerprint.{key}") else LABELS.get(key, key)


TRITON_PACKAGES = ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-windows")
# Environment variables that change Inductor's or Dynamo's config, hence cache keys, except the
# ones that only say where the caches are.
COMPILE_ENV_PREFIXES = ("TORCHINDUCTOR_", "TORCHDYNAMO_", "TORCH_COMPILE_", "TRITON_", "INDUCTOR_")
COMPILE_ENV_IGNORED = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR",
                       "TRITON_OVERRIDE_DIR")


def _text(value: Any) -> Optional[str]:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Fingerprint:
    torch: Optional[str] = None
    torch_git: Optional[str] = None
    triton: Optional[str] = None
    cuda: Optional[str] = None
    hip: Optional[str] = None
    gpu_name: Optional[str] = None
    driver: Optional[str] = None
    gpu_capability: Optional[str] = None
    python: Optional[str] = None
    device: Optional[str] = None

    # ------------------------------------------------------------------ identity and comparison

    @property
    def id(self) -> str:
        """A short hash of the keyed parts (the manifest's ``fingerprint_id``, its group key)."""
        keyed = {k: getattr(self, k) for k in KEYED}
        return hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:16]

    def changes(self, new: "Fingerprint") -> list[tuple[str, object, object]]:
        """Keyed parts that differ from this (older) fingerprint: [(label, old, new)]. Unknown
        (None) in ``new`` is not a change: flexdoctor could not tell (e.g. ``check --static``)."""
        out = []
        for key in KEYED:
            a, b = getattr(self, key), getattr(new, key)
            if b is None or a == b:
                continue
            if key == "torch" and _public(a) == _public(b):
                # "2.11.0+cu130" (torch.__version__) and "2.11.0" (a wheel's metadata without the
                # local tag) are the same release; which build it is, torch_git says.
                continue
            if key == "gpu_name" and self.device == "cpu":
                continue
            out.append((label(key), a, b))
        return out

    def same_keys(self, now: "Fingerprint") -> bool:
        """Would a cache entry made under this fingerprint be hit ``now``? Strict: a keyed part
        this one knows and ``now`` does not (None) is not a match (warm-cache then compiles
        rather than claim a config is already warm)."""
        for key in KEYED:
            a, b = getattr(self, key), getattr(now, key)
            if key == "torch":
                a, b = _public(a), _public(b)
            if a != b:
                return False
        return True

    # ------------------------------------------------------------------ (de)serialisation

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Optional[Mapping]) -> "Fingerprint":
        """Tolerant: unknown keys are ignored, values become strings (a manifest is user-editable)."""
        data = data if isinstance(data, Mapping) else {}
        return cls(**{f.name: _text(data.get(f.name)) for f in dataclasses.fields(cls)})

    # ------------------------------------------------------------------ builders

    @classmethod
    def from_runtime(cls, seen: Optional[Mapping], driver: Optional[str] = None) -> "Fingerprint":
        """What a worker recorded after ``import torch`` (``worker/_warm_worker.py fingerprint()``),
        plus the driver from NVML (workers do not ask it: it is in no cache key)."""
        fp = cls.from_dict(seen)
        return dataclasses.replace(fp, driver=_text(driver)) if driver is not None else fp

    @classmethod
    def from_probes(cls, py: Any, torch: Any, gpu_facts: Any = None, env: Optional[Mapping] = None) -> "Fingerprint":
        """From the interpreter probe's (python, torch) facts and NVML's GPU facts (either may be a
        ProbeError or None: those parts are then unknown)."""
        env = os.environ if env is None else env
        kw: dict = {}
        if torch is not None and hasattr(torch, "version"):
            kw.update(torch=torch.version, torch_git=torch.git_version, cuda=torch.cuda, hip=torch.hip)
        if hasattr(py, "packages"):
            kw["triton"] = triton_version(py.packages or {})
            kw["python"] = getattr(py, "version", None)
        # A CUDA build keys the name of the GPU it sees; a CPU build or ROCm (gcnArchName) does not
        # use NVML's name, so it stays unknown or absent.
        if kw.get("cuda") and not kw.get("hip") and gpu_facts is not None and getattr(gpu_facts, "nvml", None) == "ok":
            kw["driver"] = gpu_facts.driver_version
            _, device = visible_gpu(gpu_facts.devices, env)
            if device is not None:
                kw["gpu_name"], kw["gpu_capability"] = device.name, device.compute_capability
        return cls(**{k: _text(v) for k, v in kw.items()})

    @classmethod
    def from_facts(cls, facts: Any) -> "Fingerprint":
        """What ``check`` knows: the torch runtime tier's versions and GPU when it ran, else the
        static ones (torch/version.py, package metadata) and the GPU NVML says torch will pick."""
        from ..facts import ok

        kw: dict = {}
        rt = facts.torch_runtime if ok(facts.torch_runtime) else None
        if ok(facts.torch):
            kw.update(torch=rt.version if rt else facts.torch.version, torch_git=facts.torch.git_version,
                      cuda=facts.torch.cuda, hip=facts.torch.hip)
        kw["triton"] = (rt.triton_version if rt else None) or (
            triton_version(facts.python.packages or {}) if ok(facts.python) else None)
        if rt is not None and rt.devices:
            kw["gpu_name"] = rt.devices[0].name  # torch.cuda.current_device(): what Inductor keys
        elif ok(facts.gpu) and facts.gpu.devices and kw.get("cuda"):
            env = facts.host.env if ok(facts.host) else {}
            _, device = visible_gpu(facts.gpu.devices, env)
            kw["gpu_name"] = device.name if device is not None else None
        return cls(**{k: _text(v) for k, v in kw.items()})


def _public(version: object) -> object:
    return version.split("+", 1)[0] if isinstance(version, str) else version


def triton_version(packages: Mapping) -> Optional[str]:
    """Triton's version from installed package metadata (the wheel name differs for nightlies/ROCm)."""
    for name in TRITON_PACKAGES:
        if packages.get(name):
            return str(packages[name])
    return None


def compile_env(env: Optional[Mapping] = None) -> dict:
    """The environment variables set here that change how torch compiles (cache keys included)."""
    env = os.environ if env is None else env
    return {k: v for k, v in sorted(env.items())
            if k.startswith(COMPILE_ENV_PREFIXES) and k not in COMPILE_ENV_IGNORED}


def visible_gpu(devices: list, env: Optional[Mapping] = None) -> tuple[bool, Optional[Any]]:
    """(does torch see a GPU?, the GPU ``torch.cuda.current_device()`` is, or None when NVML cannot
    tell) from NVML's device list and CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER."""
    env = os.environ if env is None else env
    if not devices:
        return False, None
    visible = env.get("CUDA_VISIBLE_DEVICES")
    chosen = list(devices)
    if visible is not None:
        tokens = [x.strip() for x in visible.split(",") if x.strip()]
        if not tokens or tokens[0] in ("-1",) or tokens[0].lower() == "nodevfiles":
            return False, None
        first = tokens[0]
        if first.lower().startswith(("gpu-", "mig-")):
            chosen = [d for d in devices if d.uuid and d.uuid.lower().startswith(first.lower())]
        elif first.isdigit():
            chosen = [d for d in devices if d.index == int(first)]
        else:
            chosen = []
        if not chosen:
            return True, None
        return True, chosen[0]
    names = {d.name for d in devices}
    if len(names) > 1 and env.get("CUDA_DEVICE_ORDER") != "PCI_BUS_ID":
        return True, None  # CUDA's default order (fastest first) is not NVML's (PCI bus)
    return True, min(devices, key=lambda d: d.index)
