"""Which torch wheel to install: published releases, their CUDA variants, the GPU architectures each
variant carries and the driver each needs, read from ``torch_wheels.toml`` (sources in that file),
and the advice derived from them.

Pure data and arithmetic: no I/O besides reading the table, no imports from checks or probes, so
``checks``, ``knowledge`` and ``explain`` all ask the same question the same way::

    machine = Machine(platform="linux-x86_64", driver_cuda="12.2", gpu_ccs=((8, 0),), python=(3, 11))
    advice = recommend(machine, keep="2.11.0")
    advice.pip_args()   # "torch==2.11.0 --index-url https://download.pytorch.org/whl/cu126"

The rule (issue 12): the newest (torch, variant) pair that exists for the machine's OS and CPU,
has a wheel for its Python, carries every GPU's architecture and runs on its driver. A release the
user already has is kept when one of its variants fits, so a fix never silently moves torch to
another release. When no pair runs on the driver, the advice names the pair and the driver it
needs (``Advice.needs_driver``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, Optional

from .._toml import loads as toml_loads

INDEX = "https://download.pytorch.org/whl"
PLATFORMS = ("linux-x86_64", "linux-aarch64", "windows-x86_64", "macos-arm64")

CC = tuple  # (major, minor)

# Integrated (Jetson/Tegra) GPUs share a major with discrete ones but run none of their cubins:
# torch's own DEVICE_REQUIREMENT (torch/cuda/__init__.py, 2.13) excludes 5.3, 6.2, 7.2 and 8.7 from
# the discrete cubins of their major, and 10.1 (Thor before CUDA 13 renamed it 11.0).
_IGPU = {(5, 3), (6, 2), (7, 2), (8, 7), (10, 1)}


def _vtuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text))


def _version_key(text: str) -> tuple[int, ...]:
    return _vtuple(text.split("+")[0])


@functools.lru_cache(maxsize=4096)
def arch_runs(arch: str, cc: CC) -> bool:
    """Whether an entry of ``torch.cuda.get_arch_list()`` runs on a GPU of compute capability ``cc``.

    ``sm_XY``: a cubin, for the same major with an equal or higher minor (arch-specific ``sm_90a``
    only on exactly 9.0; family ``sm_100f`` like ``sm_100``); never on an integrated GPU unless built
    for exactly it. ``compute_XY``: PTX, JIT-compiled on any GPU of capability >= X.Y.
    """
    kind, _, num = arch.partition("_")
    digits = "".join(ch for ch in num if ch.isdigit())
    suffix = num[len(digits):]
    if len(digits) < 2:
        return False
    code = (int(digits[:-1]), int(digits[-1]))
    cc = (int(cc[0]), int(cc[1]))
    if kind == "compute":
        return cc >= code
    if kind != "sm":
        return False
    if code == cc or (code == (10, 1) and cc == (11, 0)):  # Thor's sm_101 was renamed 11.0 in CUDA 13
        return True
    if suffix == "a" or cc in _IGPU or code in _IGPU:
        return False
    return code[0] == cc[0] and code[1] <= cc[1]


def carries(archs: Iterable[str], cc: CC) -> bool:
    return any(arch_runs(a, cc) for a in archs)


@dataclass(frozen=True)
class DriverFloor:
    """The oldest driver that runs wheels of one CUDA major (minor-version compatibility)."""

    cuda_major: int
    linux: str
    windows: str

    def version(self, platform: str) -> str:
        return self.windows if platform.startswith("windows") else self.linux

    def allows(self, driver: str, platform: str) -> bool:
        return _vtuple(driver) >= _vtuple(self.version(platform))


@dataclass(frozen=True)
class Variant:
    """One build of a release: its index name (cu126, cpu, rocm6.4) and the archs it carries."""

    tag: str
    archs: tuple[str, ...]

    @property
    def cuda(self) -> Optional[tuple[int, int]]:
        m = re.fullmatch(r"cu(\d+)(\d)", self.tag)
        return (int(m.group(1)), int(m.group(2))) if m else None

    @property
    def kind(self) -> str:
        if self.tag.startswith("cu"):
            return "cuda"
        if self.tag.startswith("rocm"):
            return "rocm"
        return "cpu"


@dataclass(frozen=True)
class Release:
    version: str  # "2.11.0"
    series: str  # "2.11"
    python: tuple[tuple[int, int], tuple[int, int]]  # oldest, newest CPython with a wheel (Linux x86_64)
    python_max_other: dict  # platform -> newest CPython where it is older than on Linux x86_64
    pypi: dict  # platform -> the variant PyPI's wheel is
    variants: dict  # platform -> {tag: Variant}
    triton: Optional[str]  # "triton==3.6.0" (Linux)
    torchvision: Optional[str]  # the release that requires exactly this torch, or None
    torchaudio: Optional[str]

    @property
    def key(self) -> tuple[int, ...]:
        return _version_key(self.version)

    def python_ok(self, python: tuple[int, int], platform: str) -> bool:
        low, high = self.python
        if platform in self.python_max_other:
            high = min(high, self.python_max_other[platform])
        return low <= tuple(python[:2]) <= high

    def variant(self, platform: str, tag: str) -> Optional[Variant]:
        return self.variants.get(platform, {}).get(tag)


@dataclass(frozen=True)
class Table:
    releases: tuple[Release, ...]  # newest first
    drivers: dict  # CUDA major -> DriverFloor
    triton_windows: tuple = ()  # ("3.1", ...): minor series of triton-windows on PyPI

    def release(self, version: Optional[str]) -> Optional[Release]:
        if not version:
            return None
        key = _version_key(version)
        return next((r for r in self.releases if r.key == key), None)

    def newest_with(self, platform: str, tag: str) -> Optional[Release]:
        return next((r for r in self.releases if r.variant(platform, tag)), None)


def _py(text: str) -> tuple[int, int]:
    major, minor = _vtuple(text)[:2]
    return major, minor


@functools.lru_cache(maxsize=1)
def table() -> Table:
    raw = toml_loads(resources.files(__name__).joinpath("torch_wheels.toml").read_text(encoding="utf-8"))
    archs = {name: tuple(v) for name, v in raw["archs"].items()}
    drivers = {int(k): DriverFloor(int(k), v["linux"], v["windows"]) for k, v in raw["driver"].items()}
    releases = []
    for version, rel in raw["release"].items():
        series_name = ".".join(version.split(".")[:2])
        s = raw["series"][series_name]
        variants = {}
        for platform, tags in s["variants"].items():
            if platform not in PLATFORMS:
                raise ValueError(f"torch_wheels.toml: unknown platform {platform!r} in series {series_name}")
            variants[platform] = {tag: Variant(tag, archs[name]) for tag, name in tags.items()}
        releases.append(Release(
            version=version, series=series_name,
            python=(_py(s["python"][0]), _py(s["python"][1])),
            python_max_other={p: _py(v) for p, v in s.get("python_other", {}).items()},
            pypi=dict(s["pypi"]), variants=variants,
            triton=rel.get("triton") or None,
            torchvision=rel.get("torchvision") or None,
            torchaudio=rel.get("torchaudio") or None,
        ))
    releases.sort(key=lambda r: r.key, reverse=True)
    return Table(tuple(releases), drivers, tuple(raw.get("triton_windows", {}).get("series", ())))


# --------------------------------------------------------------------------------------- advice


@dataclass(frozen=True)
class Machine:
    """What the advice depends on. None = unknown (the constraint is not applied)."""

    platform: str = "linux-x86_64"
    driver_cuda: Optional[str] = None  # "12.2": the newest CUDA the driver supports (NVML)
    driver_version: Optional[str] = None  # "535.183.01"
    wsl: bool = False  # the driver is the Windows host's (its version numbers follow Windows)
    gpu_ccs: tuple = ()  # ((8, 0), ...) of the NVIDIA GPUs the job uses
    python: Optional[tuple] = None  # (3, 11)
    kind: str = "cuda"  # cuda | rocm | cpu: which builds to consider
    companions: tuple = ()  # installed torchvision / torchaudio to keep in step


@dataclass(frozen=True)
class Advice:
    release: Release
    variant: Variant
    platform: str
    companions: tuple[str, ...] = ()  # "torchvision==0.26.0", or "torchvision" when no pin is known
    needs_driver: Optional[DriverFloor] = None  # set when the current driver cannot run it
    missing_archs: tuple = ()  # GPU capabilities it does not carry (only when nothing carries them)

    @property
    def torch(self) -> str:
        return self.release.version

    @property
    def index_url(self) -> Optional[str]:
        """None on macOS: the PyPI wheel is the only build there."""
        if self.platform.startswith("macos"):
            return None
        return f"{INDEX}/{self.variant.tag}"

    def spec(self) -> str:
        """``torch==2.11.0 torchvision==0.26.0``: no shell quoting needed in bash, PowerShell or cmd."""
        return " ".join((f"torch=={self.torch}",) + self.companions)

    def index_args(self) -> str:
        return f" --index-url {self.index_url}" if self.index_url else ""

    def pip_args(self) -> str:
        return self.spec() + self.index_args()


def platform_of(sys_platform: Optional[str], machine: Optional[str]) -> str:
    """'linux'/'win32'/'darwin' + 'x86_64'/'AMD64'/'aarch64'/'arm64' -> a table platform."""
    sp = (sys_platform or "linux").lower()
    mach = (machine or "x86_64").lower()
    arm = mach in ("aarch64", "arm64", "armv8l", "arm64e")
    if sp.startswith("win"):
        return "windows-x86_64"
    if sp == "darwin":
        return "macos-arm64"
    return "linux-aarch64" if arm else "linux-x86_64"


def driver_major(machine: Machine, t: Optional[Table] = None) -> Optional[int]:
    """The CUDA major the driver supports: NVML's CUDA version, else the driver version's floor."""
    if machine.driver_cuda:
        nums = _vtuple(machine.driver_cuda)
        if nums:
            return nums[0]
    if machine.driver_version:
        t = t or table()
        plat = "windows-x86_64" if machine.wsl else machine.platform
        ok = [f.cuda_major for f in t.drivers.values() if f.allows(machine.driver_version, plat)]
        return max(ok) if ok else 0
    return None


def runs_on_driver(variant: Variant, machine: Machine, t: Optional[Table] = None) -> bool:
    if variant.kind != "cuda":
        return True
    major = driver_major(machine, t)
    return major is None or variant.cuda[0] <= major


def _variant_rank(release: Release, variant: Variant, machine: Machine) -> tuple:
    """Among a release's fitting variants: the newest CUDA the driver supports without relying on
    minor-version compatibility, else the oldest above it (closest to the driver). Driver unknown:
    the build PyPI ships, then the newest. ROCm: the newest ROCm."""
    if variant.kind == "rocm":
        return (1, _vtuple(variant.tag))
    cuda = variant.cuda or (0, 0)
    drv = _vtuple(machine.driver_cuda or "")[:2]
    if len(drv) < 2:
        return (2 if release.pypi.get(machine.platform) == variant.tag else 1, cuda)
    if cuda > tuple(drv):
        return (0, tuple(-x for x in cuda))
    return (1, cuda)


def _companions(release: Release, installed: Iterable[str]) -> tuple[str, ...]:
    out = []
    for name in ("torchvision", "torchaudio"):
        if name not in installed:
            continue
        pin = getattr(release, name)
        if pin:
            out.append(f"{name}=={pin}")
        elif name == "torchvision":  # no release pins this torch: let pip choose one that accepts it
            out.append(name)
        # torchaudio: its last release (2.11.0) requires no torch version; leave it as installed
    return tuple(out)


def candidates(machine: Machine, t: Optional[Table] = None, *, min_torch: Optional[str] = None,
               check_driver: bool = True, check_arch: bool = True) -> list[tuple[Release, Variant]]:
    """Every (release, variant) that fits the machine, newest release first."""
    t = t or table()
    low = _version_key(min_torch) if min_torch else ()
    out = []
    for rel in t.releases:
        if low and rel.key < low:
            continue
        if machine.python is not None and not rel.python_ok(machine.python, machine.platform):
            continue
        for v in rel.variants.get(machine.platform, {}).values():
            if machine.platform.startswith("macos"):
                pass  # one build, from PyPI
            elif v.kind != machine.kind:
                continue
            if check_arch and machine.kind == "cuda" and not all(carries(v.archs, cc) for cc in machine.gpu_ccs):
                continue
            if check_driver and not runs_on_driver(v, machine, t):
                continue
            out.append((rel, v))
    return out


def _pick(pairs: list, machine: Machine, keep: Optional[str], prefer: Optional[str]) -> Optional[tuple]:
    if not pairs:
        return None
    keep_key = _version_key(keep) if keep else None
    kept = [p for p in pairs if keep_key is not None and p[0].key == keep_key]
    pool = kept or pairs
    newest = max(p[0].key for p in pool)
    pool = [p for p in pool if p[0].key == newest]
    return max(pool, key=lambda p: (p[1].tag == prefer, _variant_rank(p[0], p[1], machine)))


def recommend(machine: Machine, *, keep: Optional[str] = None, min_torch: Optional[str] = None,
              prefer: Optional[str] = None, t: Optional[Table] = None) -> Optional[Advice]:
    """The pair to install, or None when no published torch fits this OS and Python at all.

    keep: the torch release the user has (kept when one of its variants fits). min_torch: the
    oldest acceptable release (e.g. "2.5" for flex_attention). prefer: a variant tag to take when
    it fits as well as any (the build installed now, for a plain reinstall). Tried in order: a pair that carries
    every GPU's arch and runs on the driver; one that needs a driver upgrade (needs_driver); one
    that lacks an arch (missing_archs: nothing published for this OS and Python carries it).
    """
    t = t or table()
    if keep is not None and min_torch is not None and _version_key(keep) < _version_key(min_torch):
        keep = None
    kw = dict(min_torch=min_torch)
    pick = _pick(candidates(machine, t, **kw), machine, keep, prefer)
    needs = None
    missing: tuple = ()
    if pick is None:
        pick = _pick(candidates(machine, t, check_driver=False, **kw), machine, keep, prefer)
        if pick is not None and pick[1].cuda is not None:
            needs = t.drivers.get(pick[1].cuda[0])
    if pick is None:
        pick = _pick(candidates(machine, t, check_arch=False, **kw), machine, keep, prefer)
        if pick is None:
            pick = _pick(candidates(machine, t, check_arch=False, check_driver=False, **kw), machine, keep, prefer)
            if pick is not None and pick[1].cuda is not None and not runs_on_driver(pick[1], machine, t):
                needs = t.drivers.get(pick[1].cuda[0])
        if pick is not None:
            missing = tuple(cc for cc in machine.gpu_ccs if not carries(pick[1].archs, cc))
    if pick is None:
        return None
    rel, var = pick
    return Advice(rel, var, machine.platform, _companions(rel, machine.companions), needs, missing)


def triton_requirement(torch_version: Optional[str], platform: str = "linux-x86_64",
                       t: Optional[Table] = None) -> Optional[str]:
    """The Triton a torch release needs on this platform: its pin on Linux ("triton==3.6.0"); on
    Windows the community triton-windows of the same minor ("triton-windows<3.7", the newest
    3.6.x), or None when that minor has no triton-windows release or the release is unknown."""
    t = t or table()
    rel = t.release(torch_version)
    if rel is None or not rel.triton:
        return None
    if not platform.startswith("windows"):
        return rel.triton
    m = re.search(r"(\d+)\.(\d+)", rel.triton)
    major, minor = int(m.group(1)), int(m.group(2))
    if f"{major}.{minor}" not in t.triton_windows:
        return None
    return f"triton-windows<{major}.{minor + 1}"


@functools.lru_cache(maxsize=64)
def newest_for_driver_cuda(driver_cuda: str, platform: str = "linux-x86_64") -> Optional[Advice]:
    """The newest pair a driver supporting ``driver_cuda`` runs, GPU unknown (``explain``)."""
    return recommend(Machine(platform=platform, driver_cuda=driver_cuda))


_FOUND_VERSION = re.compile(r"driver on your system is too old \(found version (\d{4,6})\)")


def explain_context(entry_id: str, line: str) -> dict:
    """Placeholder values for an ``explain`` hit, read from the matched log line.

    "The NVIDIA driver on your system is too old (found version 11040)": cudaDriverGetVersion's
    1000*major + 10*minor, so the driver supports CUDA 11.4; the fix names the newest wheel that
    runs on it (cu118, torch 2.7.1) instead of a default that needs a newer driver.
    """
    m = _FOUND_VERSION.search(line)
    if not m:
        return {}
    number = int(m.group(1))
    driver_cuda = f"{number // 1000}.{(number % 1000) // 10}"
    advice = newest_for_driver_cuda(driver_cuda)
    if advice is None:
        return {}
    return {"cuda_tag": advice.variant.tag, "torch_spec": advice.spec(), "index_args": advice.index_args(),
            "driver_cuda": driver_cuda}


__all__ = [
    "Advice", "DriverFloor", "INDEX", "Machine", "PLATFORMS", "Release", "Table", "Variant",
    "arch_runs", "candidates", "carries", "driver_major", "explain_context", "newest_for_driver_cuda",
    "platform_of", "recommend", "runs_on_driver", "table", "triton_requirement",
]
