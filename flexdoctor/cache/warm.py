"""``flexdoctor warm-cache``: really compile torch.compile(flex_attention) ahead of time.

Configurations come from flags, named presets, or ``[tool.flexdoctor.warm]`` in
pyproject.toml / ``[warm]`` in flexdoctor.toml. Each one compiles in its own subprocess of the
target interpreter (``worker/_warm_worker.py``), ``jobs`` at a time (phase 1). Then a fresh process per
config runs it again and must hit the cache (phase 2, the proof): its Inductor counters and
first-call time are reported beside the cold ones. A manifest recording the environment
fingerprint, configs and timings is written atomically into the cache dir.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Optional

from ..worker import run as worker_run
from ..worker import script
from . import manifest as mf

WORKER = script("_warm_worker.py")

DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16",
          "half": "float16", "fp32": "float32", "float32": "float32", "float": "float32"}
SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
MASK_ALIASES = {"sliding": "sliding", "sliding_window": "sliding", "sliding-window": "sliding",
                "swa": "sliding", "prefix": "prefix", "prefix_lm": "prefix", "prefix-lm": "prefix",
                "document": "document", "packed": "document", "doc": "document"}
SCORE_MODS = ("none", "softcap", "alibi", "relative")


class ConfigError(ValueError):
    """A configuration the user asked for is not valid (a usage error, exit 2)."""


@dataclass(frozen=True)
class WarmConfig:
    dtype: str = "bfloat16"
    head_dim: int = 128
    heads: int = 16
    kv_heads: Optional[int] = None  # GQA: fewer K/V heads than query heads
    seq_len: int = 2048
    kv_len: Optional[int] = None
    batch: int = 1
    mask: str = "none"  # none | causal | sliding:N | prefix:N | document:N
    score_mod: str = "none"  # none | softcap[:X] | alibi | relative
    shapes: str = "static"  # static | dynamic
    device: str = "cuda"
    backward: bool = True
    kernel_options: tuple = ()  # sorted (key, value) pairs

    @property
    def name(self) -> str:
        heads = f"H{self.heads}" + (f"/{self.kv_heads}" if self.kv_heads and self.kv_heads != self.heads else "")
        seq = f"L{self.seq_len}" + (f"/{self.kv_len}" if self.kv_len and self.kv_len != self.seq_len else "")
        parts = [SHORT.get(self.dtype, self.dtype), f"B{self.batch}", heads, seq, f"D{self.head_dim}", self.mask]
        if self.score_mod != "none":
            parts.append(self.score_mod)
        if self.shapes != "static":
            parts.append(self.shapes)
        if self.kernel_options:
            parts.append(",".join(f"{k}={v}" for k, v in self.kernel_options))
        parts += ["fwd+bwd" if self.backward else "fwd", self.device]
        return " ".join(parts)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["kernel_options"] = dict(self.kernel_options)
        return d

    @classmethod
    def from_dict(cls, data: dict) -> "WarmConfig":
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in data.items() if k in known}
        if isinstance(kw.get("kernel_options"), dict):
            kw["kernel_options"] = tuple(sorted(kw["kernel_options"].items()))
        return make(**kw)


def _mask(value: str) -> str:
    text = str(value).strip().lower()
    if text in ("none", "causal", ""):
        return text or "none"
    kind, sep, arg = text.replace("=", ":").partition(":")
    norm = MASK_ALIASES.get(kind)
    if norm is None:
        raise ConfigError(f"mask {value!r}: choose none, causal, sliding:N, prefix:N or document:N")
    if norm == "document" and not arg:
        arg = "4"
    if not arg.isdigit() or int(arg) < 1:
        raise ConfigError(f"mask {value!r}: {norm} needs a positive number, e.g. {norm}:256")
    return f"{norm}:{int(arg)}"


def _score(value: Optional[str]) -> str:
    text = (value or "none").strip().lower()
    kind, _, arg = text.partition(":")
    if kind not in SCORE_MODS:
        raise ConfigError(f"score mod {value!r}: choose none, softcap[:X], alibi or relative")
    if kind == "softcap":
        try:
            return f"softcap:{float(arg or 30):g}"
        except ValueError:
            raise ConfigError(f"score mod {value!r}: softcap takes a number, e.g. softcap:30")
    return kind


def make(dtype: str = "bfloat16", head_dim: int = 128, heads: int = 16, kv_heads: Optional[int] = None,
         seq_len: int = 2048, kv_len: Optional[int] = None, batch: int = 1, mask: str = "none",
         score_mod: Optional[str] = "none", shapes: str = "static", device: str = "cuda",
         backward: Optional[bool] = None, kernel_options: Any = ()) -> WarmConfig:
    """A validated config; ``backward=None`` means: on GPU yes, on CPU no (torch 2.11+ rejects
    CPU backward: 'FlexAttention does not support backward on CPU')."""
    dt = DTYPES.get(str(dtype).strip().lower())
    if dt is None:
        raise ConfigError(f"dtype {dtype!r}: choose bf16, fp16 or fp32")
    dev = str(device).strip().lower()
    if dev not in ("cuda", "cpu"):
        raise ConfigError(f"device {device!r}: choose cuda or cpu")
    shp = str(shapes).strip().lower()
    if shp not in ("static", "dynamic"):
        raise ConfigError(f"shapes {shapes!r}: choose static or dynamic")
    try:
        ints = {k: (int(v) if v is not None else None) for k, v in
                dict(head_dim=head_dim, heads=heads, kv_heads=kv_heads, seq_len=seq_len,
                     kv_len=kv_len, batch=batch).items()}
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"sizes must be whole numbers ({exc})")
    for k, v in ints.items():
        if v is not None and v < 1:
            raise ConfigError(f"{k.replace('_', '-')} must be at least 1, got {v}")
    if ints["head_dim"] < 16:
        raise ConfigError(f"head-dim {ints['head_dim']}: flex_attention needs at least 16")
    if ints["kv_heads"] and ints["heads"] % ints["kv_heads"]:
        raise ConfigError(f"heads {ints['heads']} is not a multiple of kv-heads {ints['kv_heads']} (GQA)")
    if isinstance(kernel_options, dict):
        kernel_options = tuple(sorted(kernel_options.items()))
    bwd = (dev == "cuda") if backward is None else bool(backward)
    return WarmConfig(dtype=dt, mask=_mask(mask), score_mod=_score(score_mod), shapes=shp, device=dev,
                      backward=bwd, kernel_options=tuple(kernel_options), **ints)


# --------------------------------------------------------------------------- presets

PRESETS: dict[str, tuple[str, list[dict]]] = {
    "llm-causal": ("decoder LLM training: bf16, 32 query / 8 KV heads (GQA), d=128, L=4096, causal, fwd+bwd",
                   [dict(dtype="bf16", heads=32, kv_heads=8, head_dim=128, seq_len=4096, mask="causal")]),
    "llm-packed": ("LLM with packed documents and a sliding window: bf16, GQA 32/8, d=128, L=4096",
                   [dict(dtype="bf16", heads=32, kv_heads=8, head_dim=128, seq_len=4096, mask="document:8"),
                    dict(dtype="bf16", heads=32, kv_heads=8, head_dim=128, seq_len=4096, mask="sliding:1024")]),
    "diffusers": ("diffusion transformer (Flux/Wan style): bf16, 24 heads, d=128, L=4096, no mask, fwd+bwd",
                  [dict(dtype="bf16", heads=24, head_dim=128, seq_len=4096, mask="none")]),
    "sweep": ("bf16 and fp16 x head dims 64 and 128 x causal and none (8 configs), B=2 H=16 L=2048, fwd+bwd",
              [dict(dtype=dt, head_dim=d, mask=m, batch=2, heads=16, seq_len=2048)
               for dt in ("bf16", "fp16") for d in (64, 128) for m in ("causal", "none")]),
    "cpu-smoke": ("tiny CPU inference config for CI: fp32, B=1 H=2 L=128 d=16, causal, forward only",
                  [dict(dtype="fp32", batch=1, heads=2, seq_len=128, head_dim=16, mask="causal",
                        device="cpu", backward=False)]),
}


def preset(name: str, device: Optional[str] = None) -> list[WarmConfig]:
    key = name.strip().lower()
    if key not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}: choose {', '.join(PRESETS)}")
    out = []
    for raw in PRESETS[key][1]:
        raw = dict(raw)
        if device and "device" not in raw:
            raw["device"] = device
        out.append(make(**raw))
    return out


# --------------------------------------------------------------------------- config sources

FLAG_KEYS = ("dtype", "head_dim", "heads", "kv_heads", "seq_len", "kv_len", "batch", "mask", "score_mod",
             "shapes", "device", "backward")


def product(values: dict) -> list[WarmConfig]:
    """The cartesian product of list-valued settings (dtype x head_dim x seq_len x mask ...)."""
    axes = {k: (v if isinstance(v, (list, tuple)) else [v]) for k, v in values.items() if v is not None}
    keys = list(axes)
    return [make(**dict(zip(keys, combo))) for combo in itertools.product(*(axes[k] for k in keys))]


def from_file(path: Optional[Path] = None, cwd: Optional[Path] = None) -> tuple[Optional[Path], dict]:
    """The warm-cache settings table: ``--config FILE``, else ./flexdoctor.toml ``[warm]``, else
    ./pyproject.toml ``[tool.flexdoctor.warm]``. ({} when there is none.)"""
    from .._toml import TOMLDecodeError, loads

    cwd = cwd or Path.cwd()
    candidates = [path] if path is not None else [cwd / "flexdoctor.toml", cwd / "pyproject.toml"]
    for cand in candidates:
        if cand is None or not cand.is_file():
            if path is not None:
                raise ConfigError(f"--config {path}: no such file")
            continue
        try:
            data = loads(cand.read_text(encoding="utf-8"))
        except (OSError, TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{cand}: {exc}")
        table = data.get("tool", {}).get("flexdoctor", {}).get("warm") if cand.name == "pyproject.toml" \
            else data.get("warm", data.get("tool", {}).get("flexdoctor", {}).get("warm"))
        if table is None:
            if path is not None:
                raise ConfigError(f"{cand}: no [warm] or [tool.flexdoctor.warm] table")
            continue
        if not isinstance(table, dict):
            raise ConfigError(f"{cand}: the warm settings must be a table")
        return cand, table
    return None, {}


def configs_from_table(table: dict, source: str) -> list[WarmConfig]:
    out: list[WarmConfig] = []
    try:
        device = table.get("device") if isinstance(table.get("device"), str) else None
        for name in table.get("presets", []) or []:
            out += preset(name, device)
        for raw in table.get("configs", []) or []:
            if not isinstance(raw, dict):
                raise ConfigError("each entry of configs must be a table")
            out += product({k.replace("-", "_"): v for k, v in raw.items()})
        flat = {k.replace("-", "_"): v for k, v in table.items()}
        axes = {k: flat[k] for k in FLAG_KEYS if k in flat}
        if axes and set(axes) - {"device"}:
            out += product(axes)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}")
    except TypeError as exc:
        raise ConfigError(f"{source}: unknown or invalid setting ({exc})")
    return out


def dedupe(configs: list[WarmConfig]) -> list[WarmConfig]:
    seen, out = set(), []
    for c in configs:
        if c not in seen:
            seen.add(c)
            out.append(c)
    return out


# --------------------------------------------------------------------------- running

@dataclass
class Outcome:
    config: WarmConfig
    state: str = "queued"  # queued | compiling | compiled | verifying | done | failed
    stage: Optional[str] = None
    started: Optional[float] = None
    cold: Optional[dict] = None  # worker result of the compile run
    warm: Optional[dict] = None  # worker result of the fresh verification run
    error: Optional[str] = None
    error_stage: Optional[str] = None
    kb: list = field(default_factory=list)  # knowledge-base ids matching the error
    wall_s: Optional[float] = None

    @property
    def failed(self) -> bool:
        return self.state == "failed"

    @property
    def hit(self) -> Optional[bool]:
        """Did the fresh process hit the cache for everything it compiled?"""
        if not self.warm or not self.warm.get("ok"):
            return None
        c = self.warm.get("counters") or {}
        return c.get("fxgraph_cache_miss", 0) == 0 and c.get("fxgraph_cache_hit", 0) > 0

    def status(self) -> str:
        if self.failed:
            return "failed"
        if self.hit is False:
            return "missed"
        cold_c = (self.cold or {}).get("counters") or {}
        if self.cold and cold_c.get("fxgraph_cache_miss", 0) == 0 and cold_c.get("fxgraph_cache_hit", 0) > 0:
            return "already warm"
        if self.hit:
            return "warm (verified)"
        return "compiled"

    def record(self) -> dict:
        cold, warm = self.cold or {}, self.warm or {}
        return {
            "name": self.config.name,
            "config": self.config.to_dict(),
            "status": self.status(),
            "compile_s": cold.get("first_call_s"),
            "fwd_s": cold.get("fwd_s"),
            "bwd_s": cold.get("bwd_s"),
            "process_s": cold.get("seconds"),
            "stage_seconds": cold.get("stage_seconds"),
            "counters": cold.get("counters"),
            "warm_first_call_s": warm.get("first_call_s"),
            "warm_fwd_s": warm.get("fwd_s"),
            "warm_bwd_s": warm.get("bwd_s"),
            "warm_counters": warm.get("counters"),
            "export_bytes": warm.get("export_bytes", cold.get("export_bytes")),
            "error": self.error,
            "error_stage": self.error_stage,
            "kb": list(self.kb),
        }


def worker_env(cache_dir: str, base: Optional[dict] = None) -> dict:
    env = dict(os.environ if base is None else base)
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def run_worker(python: str, args: list, env: dict, timeout: float,
               on_stage: Optional[Callable[[str], None]] = None,
               procs: Optional[set] = None) -> dict:
    """Run the worker; always returns a result dict (``ok`` False with ``error`` on failure).
    ``procs``: a set the started process is kept in while it runs (``Runner.kill_all``)."""
    wire = worker_run.Reader(on_stage=on_stage)
    child = worker_run.start([python, str(WORKER)] + list(args), env, on_line=wire.feed, merge_stderr=True)
    if isinstance(child, worker_run.Completed):
        return {"ok": False, "error": f"could not start: {child.start_error}"}
    if procs is not None:
        procs.add(child)
    try:
        done = worker_run.wait(child, timeout)
    finally:
        if procs is not None:
            procs.discard(child)
    tail = list(wire.other)
    data = wire.result()
    if data is not None:
        if not data.get("ok") and tail and "log" not in data:
            data["log"] = "\n".join(tail[-20:])
        return data
    if done.timed_out:
        why = f"did not finish in {timeout:g} s"
    elif done.signal_name:
        why = f"crashed ({done.signal_name})"
    else:
        why = f"exited with status {done.returncode} without a result"
    return {"ok": False, "error": f"the compile process {why}", "stage": wire.stage, "log": "\n".join(tail[-20:])}


def _explain(out: Outcome, result: dict) -> None:
    from .. import knowledge as kb

    out.state = "failed"
    out.error = (result.get("error") or "failed").strip()
    out.error_stage = result.get("stage")
    text = "\n".join(filter(None, [result.get("error"), result.get("traceback"), result.get("log")]))
    try:
        out.kb = [e.id for e in kb.match_text(text)][:3]
    except Exception:  # a broken knowledge file must not hide the real error
        out.kb = []


def default_jobs(configs: list[WarmConfig], gpu_free_bytes: Optional[int] = None) -> int:
    """Parallel compile processes: each compile keeps about one core busy (Triton's LLVM/ptxas,
    or the C++ compiler for CPU Inductor) and, on a GPU, a CUDA context and small tensors
    (about 1-3 GiB); half the cores, at most 8, fewer when GPU memory is short."""
    cores = os.cpu_count() or 1
    jobs = max(1, min(len(configs), max(1, cores // 2), 8))
    if gpu_free_bytes and any(c.device == "cuda" for c in configs):
        jobs = max(1, min(jobs, int(gpu_free_bytes // (4 << 30))))
    return jobs


class Runner:
    """Runs the phases; ``on_update`` is called (from worker threads) whenever a state changes."""

    def __init__(self, python: str, cache_dir: str, jobs: int, timeout: float = 900.0,
                 on_update: Optional[Callable[[], None]] = None):
        self.python, self.cache_dir, self.jobs, self.timeout = python, cache_dir, jobs, timeout
        self.on_update = on_update or (lambda: None)
        self.procs: set = set()
        self.env = worker_env(cache_dir)

    def _run(self, out: Outcome, args: list, state: str) -> dict:
        out.state, out.started, out.stage = state, time.monotonic(), None
        self.on_update()

        def stage(name: str) -> None:
            out.stage = name
            self.on_update()

        result = run_worker(self.python, args, self.env, self.timeout, on_stage=stage, procs=self.procs)
        out.wall_s = round(time.monotonic() - out.started, 3)
        return result

    def compile(self, outcomes: list[Outcome], export_dir: Optional[str] = None) -> float:
        return self._phase(outcomes, export_dir, "compiling", "cold", "compiled")

    def verify(self, outcomes: list[Outcome], export_dir: Optional[str] = None) -> float:
        """The same compile in a fresh process: on a warm cache it must hit."""
        return self._phase(outcomes, export_dir, "verifying", "warm", "done", skip_failed=True)

    def _phase(self, outcomes: list[Outcome], export_dir: Optional[str], label: str, slot: str,
               done_state: str, skip_failed: bool = False) -> float:
        def one(item: tuple[int, Outcome]) -> None:
            i, out = item
            if skip_failed and out.failed:
                return
            args = ["compile", json.dumps(out.config.to_dict())]
            if export_dir:
                args += ["--export", os.path.join(export_dir, f"{i:03d}.bin")]
            res = self._run(out, args, label)
            setattr(out, slot, res)
            if res.get("ok"):
                out.state = done_state
            else:
                _explain(out, res)
            self.on_update()

        return self._pool(one, list(enumerate(outcomes)))

    def _pool(self, fn, items) -> float:
        t0 = time.monotonic()
        pool = ThreadPoolExecutor(max_workers=max(1, self.jobs), thread_name_prefix="flexdoctor-warm")
        futures = [pool.submit(fn, it) for it in items]
        try:
            for f in futures:
                while True:  # short waits so Ctrl-C reaches the main thread promptly
                    try:
                        f.result(timeout=0.2)
                        break
                    except FutureTimeout:
                        continue
        except BaseException:
            for f in futures:
                f.cancel()
            self.kill_all()
            pool.shutdown(wait=False)
            raise
        pool.shutdown(wait=True)
        return round(time.monotonic() - t0, 3)

    def kill_all(self) -> None:
        self.on_update = lambda: None  # stopping: the killed workers' ends are not news
        for child in list(self.procs):
            worker_run.kill(child)

    def fingerprint(self) -> dict:
        return run_worker(self.python, ["fingerprint"], self.env, min(self.timeout, 180.0))

    def import_bundle(self, path: str) -> dict:
        return run_worker(self.python, ["import", path], self.env, self.timeout)


# --------------------------------------------------------------------------- export bundles

BUNDLE_FORMAT = 1


def write_bundle(dest: str, export_dir: str, outcomes: list[Outcome], fp: dict, flexdoctor_version: str) -> int:
    """Zip the per-config mega-cache blobs with the configs and fingerprint; atomic. Returns bytes."""
    import zipfile

    dest_path = os.path.abspath(dest)
    os.makedirs(os.path.dirname(dest_path) or ".", exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".flexdoctor-export.", suffix=".tmp", dir=os.path.dirname(dest_path))
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            meta = {"format": BUNDLE_FORMAT, "flexdoctor_version": flexdoctor_version, "created_at": mf.now(),
                    "fingerprint": fp, "configs": []}
            for i, out in enumerate(outcomes):
                blob = os.path.join(export_dir, f"{i:03d}.bin")
                if out.failed or not os.path.isfile(blob):
                    continue
                zf.write(blob, f"artifacts/{i:03d}.bin")
                meta["configs"].append(out.config.to_dict())
            zf.writestr("flexdoctor-bundle.json", json.dumps(meta, indent=2, sort_keys=True))
        os.replace(tmp, dest_path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return os.path.getsize(dest_path)


def read_bundle(path: str) -> dict:
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            meta = json.loads(zf.read("flexdoctor-bundle.json"))
    except FileNotFoundError:
        raise ConfigError(f"--import {path}: no such file")
    except (OSError, KeyError, ValueError, RecursionError, zipfile.BadZipFile) as exc:
        raise ConfigError(f"--import {path}: not a flexdoctor cache bundle ({exc})")
    if not isinstance(meta, dict) or not isinstance(meta.get("fingerprint"), dict):
        raise ConfigError(f"--import {path}: not a flexdoctor cache bundle")
    return meta


# --------------------------------------------------------------------------- --run CMD

def run_command(argv: list, cache_dir: str, timeout: Optional[float] = None) -> dict:
    """Run the user's own one-step command under the cache dir; its output goes to the terminal."""
    env = worker_env(cache_dir)
    before = mf.entries(cache_dir)
    t0 = time.monotonic()
    done = worker_run.attached(argv, env, timeout)
    code: Optional[int] = done.returncode
    if done.start_error:
        missing = done.start_errno == errno.ENOENT
        error = f"command not found: {argv[0]}" if missing else f"could not start: {done.start_error}"
    elif done.timed_out:
        error = f"did not finish in {timeout:g} s"
    else:
        error = None if code == 0 else f"exited with status {code}"
    after = mf.entries(cache_dir)
    return {"returncode": code, "error": error, "seconds": round(time.monotonic() - t0, 3),
            "new_entries": sorted(after - before)}
