"""warm-cache, step 1: what to compile, and what is already warm.

The flow mirrors ``check``'s: :func:`gather` touches the machine once (cache dir, manifest, the
target interpreter's torch read without importing it, NVML once) and returns a :class:`WarmEnv`;
:func:`decide` is pure over a :class:`WarmRequest` and that env and returns the :class:`Plan`
(every config with ``compile`` or ``already warm`` and the reason). ``cache/warm.py`` runs the
plan (workers); ``render/warm_view.py`` shows the result.

Where configs come from: ``--preset`` names, config flags (``--dtype``, ``--head-dim`` ...; each
list value is one more config), or the settings table (``[warm]`` in flexdoctor.toml,
``[tool.flexdoctor.warm]`` in pyproject.toml, or ``--warm-config FILE``). The compile options
(``--mode``, ``--dynamic``, ``--fullgraph``, ``--kernel-option``) apply to every config from any
source; a mode list multiplies them. They are part of each config's identity: another mode is
another cache entry (measured on torch 2.13: each mode misses the others' entries).

"Already warm" means: the manifest's environment has the same keyed fingerprint as this one
(read cheaply, see ``cache/fingerprint.py``) and the same compile environment variables, the
config is recorded there as warm, and the cache entries its environment's warm-ups created are
all still in the cache dir. Anything unknown means "compile": a skip is a claim, so it must be
true. ``--force`` compiles everything; ``--export`` compiles everything too (the bundle holds
what this run compiles or loads).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from .. import policy
from ..text import t
from ..workload import Workload, WorkloadError, check_flex, make, parse_kernel_options, parse_mode
from . import envflags, locations
from . import manifest as mf
from .fingerprint import Fingerprint, compile_env, triton_version


class PlanError(ValueError):
    """The request cannot be planned (a usage error, exit 2); the message is one line."""


# --------------------------------------------------------------------------- presets

# Name -> the configs it warms. What each is for is the catalogue's `warm-preset.<name>` text
# (locale/en.views.toml), shown by --list-presets in the user's language.
PRESETS: dict[str, list[dict]] = {
    "llm-causal": [dict(dtype="bf16", heads=32, kv_heads=8, head_dim=128, seq_len=4096, mask="causal")],
    "llm-packed": [dict(dtype="bf16", heads=32, kv_heads=8, head_dim=128, seq_len=4096, mask="document:8"),
                   dict(dtype="bf16", heads=32, kv_heads=8, head_dim=128, seq_len=4096, mask="sliding:1024")],
    "diffusers": [dict(dtype="bf16", heads=24, head_dim=128, seq_len=4096, mask="none")],
    "sweep": [dict(dtype=dt, head_dim=d, mask=m, batch=2, heads=16, seq_len=2048)
              for dt in ("bf16", "fp16") for d in (64, 128) for m in ("causal", "none")],
    "cpu-smoke": [dict(dtype="fp32", batch=1, heads=2, seq_len=128, head_dim=16, mask="causal",
                       device="cpu", backward=False)],
}

# Settings that describe a workload's shape (each may be a list: one config per value).
SHAPE_KEYS = ("dtype", "head_dim", "heads", "kv_heads", "seq_len", "kv_len", "batch", "mask", "score_mod",
              "shapes", "device", "backward")
COMPILE_KEYS = ("mode", "dynamic", "fullgraph", "kernel_options")
TABLE_KEYS = set(SHAPE_KEYS) | set(COMPILE_KEYS) | {"presets", "configs", "run", "cache_dir", "jobs"}


def preset(name: str, device: Optional[str] = None) -> list[Workload]:
    key = name.strip().lower()
    if key not in PRESETS:
        raise PlanError(t("warm.error.unknown_preset", name=name, choices=", ".join(PRESETS)))
    return [make(**{"device": device, **raw} if device and "device" not in raw else raw) for raw in PRESETS[key]]


def product(values: Mapping) -> list[Workload]:
    """The cartesian product of list-valued settings (dtype x head_dim x seq_len x mask ...)."""
    axes = {k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in values.items() if v is not None}
    keys = list(axes)
    return [make(**dict(zip(keys, combo))) for combo in itertools.product(*(axes[k] for k in keys))]


def dedupe(configs: list) -> list:
    return list(dict.fromkeys(configs))


# --------------------------------------------------------------------------- the request

@dataclass(frozen=True)
class CompileOptions:
    """Compile options asked for on the command line or in a settings table; None: not given."""

    modes: Optional[tuple] = None
    dynamic: Optional[bool] = None
    fullgraph: Optional[bool] = None
    kernel_options: Optional[tuple] = None

    def over(self, base: "CompileOptions") -> "CompileOptions":
        """These options, falling back to ``base`` for what is not given."""
        return CompileOptions(*(a if a is not None else b for a, b in
                                zip(dataclasses.astuple(self), dataclasses.astuple(base))))

    def apply(self, configs: list) -> list:
        out = []
        for w in configs:
            fixed = {k: v for k, v in (("dynamic", self.dynamic), ("fullgraph", self.fullgraph),
                                       ("kernel_options", self.kernel_options)) if v is not None}
            for mode in self.modes or (None,):
                out.append(w.replace(**fixed, **({"mode": mode} if mode is not None else {})))
        return out

    @classmethod
    def from_table(cls, table: Mapping) -> "CompileOptions":
        mode = table.get("mode")
        modes = None if mode is None else tuple(parse_mode(m) for m in (mode if isinstance(mode, list) else [mode]))
        ko = table.get("kernel_options")
        if ko is not None and not isinstance(ko, Mapping):
            raise PlanError(t("warm.error.kernel_options_table"))
        for key in ("dynamic", "fullgraph"):
            if key in table and not isinstance(table[key], bool):
                raise PlanError(t("warm.error.not_bool", name=key))
        return cls(modes=modes, dynamic=table.get("dynamic"), fullgraph=table.get("fullgraph"),
                   kernel_options=None if ko is None else parse_kernel_options(ko))


@dataclass(frozen=True)
class WarmRequest:
    """What the user asked for, parsed from flags (``cli/warm_cache.py``) but not yet checked
    against the machine. Lists are flag values; None: the flag was not given."""

    presets: tuple = ()
    axes: Mapping = field(default_factory=dict)  # dtype/head_dim/seq_len/mask/score_mod: lists
    scalars: Mapping = field(default_factory=dict)  # heads, kv_heads, kv_len, batch, device, backward
    compile: CompileOptions = CompileOptions()
    settings_file: Optional[Path] = None  # --warm-config
    run: Optional[str] = None
    run_from_settings: bool = False  # --run-from-settings: a `run =` from the settings may run
    jobs: Optional[int] = None
    cache_dir: Optional[Path] = None
    export: Optional[Path] = None
    import_: Optional[Path] = None
    sha256: Optional[str] = None  # --sha256: the only content --import accepts
    verify: bool = True
    force: bool = False
    timeout: float = 900.0
    python: str = ""
    measure: Optional[bool] = None  # --measure/--no-measure: time the warm start's settings (None: when a pool ran)
    measure_runs: int = 2  # --measure-runs
    run_stdout: Optional[int] = None  # a file descriptor for --run's standard output (--format json: stderr's)


def settings_table(path: Optional[Path] = None, cwd: Optional[Path] = None) -> tuple[Optional[Path], dict]:
    """The warm-cache settings table: ``--warm-config FILE``, else ./flexdoctor.toml ``[warm]``,
    else ./pyproject.toml ``[tool.flexdoctor.warm]``. ({} when there is none.)"""
    from .._toml import TOMLDecodeError, loads

    cwd = cwd or Path.cwd()
    candidates = [path] if path is not None else [cwd / "flexdoctor.toml", cwd / "pyproject.toml"]
    for cand in candidates:
        if not cand.is_file():
            if path is not None:
                raise PlanError(t("warm.error.no_file", path=path))
            continue
        try:  # settings are trusted like code (policy: the user's or root's, no one else can write)
            data = loads(policy.read_trusted(cand))
        except policy.ConfigError as exc:
            raise PlanError(str(exc))
        except (OSError, TOMLDecodeError, UnicodeDecodeError) as exc:
            raise PlanError(t("warm.error.unreadable", path=cand, error=exc))
        table = data.get("tool", {}).get("flexdoctor", {}).get("warm") if cand.name == "pyproject.toml" \
            else data.get("warm", data.get("tool", {}).get("flexdoctor", {}).get("warm"))
        if table is None:
            if path is not None:
                raise PlanError(t("warm.error.no_table", path=cand))
            continue
        if not isinstance(table, dict):
            raise PlanError(t("warm.error.not_a_table", path=cand))
        return cand, table
    return None, {}


def settings_run(table: Mapping, configs: list, req: "WarmRequest") -> Optional[str]:
    """The table's ``run =`` command when it applies (no --run, no configs or presets given)."""
    if req.run is not None or configs or req.presets or not table.get("run"):
        return None
    return str(table["run"])


def configs_from_table(table: Mapping, source: str, flags: CompileOptions = CompileOptions()) -> list[Workload]:
    """The configs a settings table describes; ``flags`` (compile options given on the command
    line) win over the table's, which win over each ``[[configs]]`` entry's own."""
    flat = {str(k).replace("-", "_"): v for k, v in table.items()}
    unknown = sorted(set(flat) - TABLE_KEYS)
    try:
        if unknown:
            raise PlanError(t("warm.error.unknown_setting", name=unknown[0], known=", ".join(sorted(TABLE_KEYS))))
        top = flags.over(CompileOptions.from_table(flat))
        device = flat.get("device") if isinstance(flat.get("device"), str) else None
        out: list[Workload] = []
        for name in flat.get("presets", []) or []:
            out += top.apply(preset(name, device))
        for raw in flat.get("configs", []) or []:
            if not isinstance(raw, Mapping):
                raise PlanError(t("warm.error.configs_entry"))
            entry = {str(k).replace("-", "_"): v for k, v in raw.items()}
            own = flags.over(CompileOptions.from_table(entry)).over(CompileOptions.from_table(flat))
            out += own.apply(product({k: v for k, v in entry.items() if k not in COMPILE_KEYS}))
        axes = {k: flat[k] for k in SHAPE_KEYS if k in flat}
        if axes and set(axes) - {"device"}:
            out += top.apply(product(axes))
    except (PlanError, WorkloadError) as exc:
        raise PlanError(t("warm.error.in_source", source=source, error=exc)) from None
    except TypeError as exc:
        raise PlanError(t("warm.error.invalid_setting", source=source, error=exc)) from None
    return out


def configs_from_request(req: WarmRequest, table: Mapping, source: Optional[Path]) -> list[Workload]:
    """Configs from presets, config flags and (when neither is given) the settings table."""
    try:
        configs: list[Workload] = []
        device = req.scalars.get("device")
        backward = req.scalars.get("backward")
        for name in req.presets:
            for w in preset(name, device):
                configs.append(w.replace(backward=backward) if backward is not None else w)
        axes = {k: v for k, v in req.axes.items() if v}
        if axes or (req.scalars and not req.presets):
            configs += product({**axes, **req.scalars})
        configs = req.compile.apply(configs)
        if not req.presets and not axes and table:
            configs += configs_from_table(table, str(source), req.compile)
        return dedupe([check_flex(w) for w in configs])
    except WorkloadError as exc:
        raise PlanError(str(exc)) from None


# --------------------------------------------------------------------------- the machine, once

@dataclass(frozen=True)
class WarmEnv:
    """What warm-cache needs to know about the machine before it starts any torch process."""

    cache_dir: str
    cache_source: str  # TORCHINDUCTOR_CACHE_DIR, or "default", or --cache-dir
    disabled_by: tuple = ()  # env switches that turn the compile caches off
    cache_problem: Optional[str] = None  # the dir cannot be created or written
    manifest: Optional[mf.Manifest] = None
    manifest_error: Optional[str] = None  # an unreadable manifest: never "already warm"
    fingerprint: Optional[Fingerprint] = None  # read without importing torch; None: not read
    compile_env: Mapping = field(default_factory=dict)
    torch_version: Optional[str] = None  # of --python, from torch/version.py
    has_gpu: Optional[bool] = None  # an NVIDIA GPU (NVML); None: could not tell / not asked
    gpu_memory: Optional[int] = None  # of the smallest GPU
    gpu_count: Optional[int] = None  # NVIDIA GPUs of this node (NVML, whatever CUDA_VISIBLE_DEVICES says)
    driver: Optional[str] = None
    temporary: bool = False  # under a temporary directory (often wiped on reboot)


def cache_location(cache_dir: Optional[Path], table: Mapping, env: Mapping) -> locations.Location:
    """The Inductor cache dir this run warms: --cache-dir, the table's cache_dir, else torch's own
    rule over the environment. The environment of this process is not changed: workers get the
    directory in theirs (``cache/warm.worker_env``)."""
    if cache_dir is None and table.get("cache_dir"):
        cache_dir = Path(str(table["cache_dir"]))
    if cache_dir is not None:
        return locations.Location("inductor", os.path.abspath(os.path.expanduser(str(cache_dir))), "--cache-dir")
    return locations.inductor(env)


def _usable(root: str) -> Optional[str]:
    """Why warm-cache cannot write ``root``, or None. A missing dir is no problem here: the CLI
    creates it private (0700) after the cache-location safety verdict (cli/_safety.py), which is
    also where a dir others can write is refused: compiled kernels are code."""
    if os.path.lexists(root) and not os.path.isdir(root):
        return t("warm-bundle.cache_dir_not_folder", path=root)
    if os.path.isdir(root) and not os.access(root, os.W_OK | os.X_OK):
        return t("warm.error.cache_dir_read_only", path=root)
    return None


def gather(req: WarmRequest, configs: list, table: Mapping, read_interp: Callable[[str], tuple],
           read_gpu: Callable[[], Any], env: Optional[Mapping] = None) -> WarmEnv:
    """Look at the machine once: cache dir and manifest; torch (read, not imported) when a skip,
    --export/--import or a cache switch needs it; NVML once when a config runs on the GPU or the
    fingerprint needs the GPU's name. Creates nothing. ``read_interp(python)`` is the interpreter
    probe ((python facts, torch facts), torch read without importing it) and ``read_gpu()`` NVML's:
    probes/ stands above cache/, so the command hands them down."""
    env = dict(os.environ if env is None else env)
    loc = cache_location(req.cache_dir, table, env)
    root = loc.path
    env["TORCHINDUCTOR_CACHE_DIR"] = root
    out: dict = {"cache_dir": root, "cache_source": loc.source, "compile_env": compile_env(env),
                 "temporary": locations.in_temp(root)}
    out["cache_problem"] = _usable(root)
    if os.path.isdir(root):
        try:
            out["manifest"] = mf.load(root)
        except mf.ManifestError as exc:
            out["manifest_error"] = exc.text()
        except ValueError as exc:
            out["manifest_error"] = str(exc)
    switches_set = any(env.get(n) is not None for n in envflags.NAMES)
    need_torch = (out.get("manifest") is not None and not req.force and req.export is None) \
        or req.export is not None or req.import_ is not None or switches_set
    py = torch = None
    if need_torch:
        py, torch = read_interp(req.python)
        out["torch_version"] = getattr(torch, "version", None)
    # Cache switches are parsed as the target's torch and Triton releases parse them.
    out["disabled_by"] = tuple(locations.disabled_by(
        env, torch_version=out.get("torch_version"),
        triton_version=triton_version(getattr(py, "packages", None) or {}))) if switches_set else ()
    gpu_facts = None
    cuda_build = bool(getattr(torch, "cuda", None)) and not getattr(torch, "hip", None)
    if any(w.device == "cuda" for w in configs) or (need_torch and cuda_build):
        try:
            gpu_facts = read_gpu()
        except Exception:  # NVML surprises: unknown, never a crash
            gpu_facts = None
    if gpu_facts is not None:
        if gpu_facts.nvml == "ok":
            mems = [d.memory_total_bytes for d in gpu_facts.devices if d.memory_total_bytes]
            out.update(has_gpu=bool(gpu_facts.devices), gpu_memory=min(mems) if mems else None,
                       driver=gpu_facts.driver_version, gpu_count=len(gpu_facts.devices))
        elif gpu_facts.nvml == "no-library" and not gpu_facts.device_nodes:
            out["has_gpu"] = False
    if need_torch:
        out["fingerprint"] = Fingerprint.from_probes(py, torch, gpu_facts, env)
    return WarmEnv(**out)


# --------------------------------------------------------------------------- the decision

COMPILE, WARM = "compile", "already warm"


@dataclass(frozen=True)
class Step:
    workload: Workload
    action: str  # COMPILE | WARM
    reason: str  # a stable word: new, forced, export, environment-changed, compile-env-changed,
    #              not-warm, entries-missing, manifest-unreadable, no-fingerprint, warm
    detail: str = ""  # e.g. "torch 2.11.0 -> 2.12.0"


@dataclass(frozen=True)
class Plan:
    steps: tuple
    env: WarmEnv
    jobs: int
    run_argv: Optional[tuple] = None
    bundle: Optional[dict] = None  # an --import bundle's metadata
    staged: Optional[dict] = None  # --import: the private folder of its checked blobs (warm.stage_bundle)

    @property
    def to_compile(self) -> list[Workload]:
        return [s.workload for s in self.steps if s.action == COMPILE]

    @property
    def already_warm(self) -> list[Workload]:
        return [s.workload for s in self.steps if s.action == WARM]


def _step(w: Workload, req: WarmRequest, env: WarmEnv) -> Step:
    m = env.manifest
    if req.force:
        return Step(w, COMPILE, "forced")
    if req.export is not None:
        return Step(w, COMPILE, "export")
    if env.manifest_error:
        return Step(w, COMPILE, "manifest-unreadable", env.manifest_error)
    if m is None or m.config(w) is None:
        return Step(w, COMPILE, "new")
    if env.fingerprint is None:
        return Step(w, COMPILE, "no-fingerprint")
    if not m.fingerprint.same_keys(env.fingerprint):
        changed = m.fingerprint.changes(env.fingerprint)
        detail = "; ".join(f"{k} {a} -> {b}" for k, a, b in changed) or t("warm-process.fingerprint_unread")
        return Step(w, COMPILE, "environment-changed", detail)
    if m.compile_env is None or dict(m.compile_env) != dict(env.compile_env):
        return Step(w, COMPILE, "compile-env-changed")
    if not m.config(w).warm:
        return Step(w, COMPILE, "not-warm", m.config(w).status)
    group = m.entry_groups.get(m.fingerprint.id)
    if group is None or not group.present(env.cache_dir):
        return Step(w, COMPILE, "entries-missing")
    return Step(w, WARM, "warm")


def default_jobs(configs: list, gpu_memory: Optional[int] = None) -> int:
    """Parallel compile processes: each compile keeps about one core busy (Triton's LLVM/ptxas,
    or the C++ compiler for CPU Inductor) and, on a GPU, a CUDA context and small tensors
    (about 1-3 GiB); half the cores, at most 8, fewer when GPU memory is short."""
    cores = os.cpu_count() or 1
    jobs = max(1, min(len(configs) or 1, max(1, cores // 2), 8))
    if gpu_memory and any(w.device == "cuda" for w in configs):
        jobs = max(1, min(jobs, int(gpu_memory // (4 << 30))))
    return jobs


def decide(req: WarmRequest, configs: list, env: WarmEnv, table: Mapping,
           run_argv: Optional[tuple] = None, bundle: Optional[dict] = None) -> Plan:
    """The plan, pure over the request and the env; PlanError when it cannot run."""
    if not configs and run_argv is None and bundle is None:
        raise PlanError(t("warm.error.nothing"))
    if req.export is not None and not configs:
        raise PlanError(t("warm.error.export_needs_configs"))
    if env.disabled_by:
        raise PlanError(t("warm.error.caches_off", switches=", ".join(env.disabled_by)))
    if env.cache_problem:
        raise PlanError(env.cache_problem)
    if req.export is not None or req.import_ is not None:
        _needs_mega_cache(req, env)
    if any(w.device == "cuda" for w in configs) and env.has_gpu is False:
        raise PlanError(t("warm.error.no_gpu"))
    steps = tuple(_step(w, req, env) if bundle is None else Step(w, COMPILE, "import") for w in configs)
    todo = [s.workload for s in steps if s.action == COMPILE]
    table_jobs = table.get("jobs") if isinstance(table.get("jobs"), int) and not isinstance(table.get("jobs"), bool) else None
    jobs = req.jobs or table_jobs or default_jobs(todo or [make(device="cpu")], env.gpu_memory)
    return Plan(steps=steps, env=env, jobs=jobs, run_argv=run_argv, bundle=bundle)


def _needs_mega_cache(req: WarmRequest, env: WarmEnv) -> None:
    from packaging.version import InvalidVersion, Version

    tv = env.torch_version
    try:
        too_old = tv is not None and Version(Version(tv).base_version) < Version("2.7")
    except InvalidVersion:
        too_old = False
    if too_old:
        flag = "--export" if req.export is not None else "--import"
        raise PlanError(t("warm.error.mega_cache", flag=flag, python=req.python, version=tv))
