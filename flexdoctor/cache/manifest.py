"""flexdoctor's manifest inside the Inductor cache dir: what was warmed, for which environment.

The manifest is a small JSON file (``flexdoctor-manifest.json``). It is written atomically
(temporary file in the same directory, fsync, ``os.replace``), so a crash or Ctrl-C leaves
either the old manifest or the new one, never half of one.

:class:`Manifest` is its typed form. ``format`` says which layout wrote it:

- 1 (flexdoctor before compile options): configs say ``shapes: static|dynamic``, no mode,
  fullgraph or dynamic; they were compiled with torch.compile's defaults, which is how
  :meth:`Manifest.from_dict` reads them.
- 2: configs carry ``mode``, ``dynamic``, ``fullgraph`` and ``kernel_options`` (their identity),
  and the run's compile environment (``compile_env``).

The fingerprint (:mod:`.fingerprint`) holds what the cache keys depend on; entry groups record,
per fingerprint, the cache entries its warm-ups created (for the dead-weight report and for
"already warm": a config is only skipped while its group's entries are still there).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from ..text import english, t
from ..workload import Workload, WorkloadError
from . import locations
from .fingerprint import Fingerprint

FORMAT = 2
READS = (1, 2)
# Statuses of a config that a fresh process proved (or the compile found) warm.
# "imported (slow)": the bundle lacked what the verification run then compiled here, so the cache
# is warm now; "imported (not timed)": hits counted, the bundle recorded no first-call time.
WARM_STATUSES = ("warm (verified)", "compiled", "already warm", "imported (slow)", "imported (not timed)")


def fingerprint_id(fp: Mapping) -> str:
    return Fingerprint.from_dict(fp).id


def compare(old: Mapping, new: Mapping) -> list[tuple[str, object, object]]:
    """Keyed fingerprint parts that differ: [(label, old, new)] (see Fingerprint.changes)."""
    return Fingerprint.from_dict(old).changes(Fingerprint.from_dict(new))


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


class ManifestError(ValueError):
    """A manifest flexdoctor cannot read. Its words are data, like a ProbeError's: ``reason`` names a
    ``probe-error.<reason>`` text (``manifest.*``, locale/en.manifest.toml) filled with ``params``;
    ``str()`` is English (the facts JSON), :meth:`text` the user's language (warm-cache, reports)."""

    def __init__(self, reason: str, **params: object) -> None:
        self.reason = f"manifest.{reason}"
        self.params = {k: v if isinstance(v, (int, float)) else str(v) for k, v in params.items()}
        super().__init__(english(f"probe-error.{self.reason}", **self.params))

    def text(self) -> str:
        return t(f"probe-error.{self.reason}", **self.params)


# --------------------------------------------------------------------------- the typed manifest

@dataclass(frozen=True)
class ConfigRecord:
    """One warmed config: its identity (the workload) and what its compile and proof measured."""

    workload: Workload
    status: str
    compile_s: Optional[float] = None
    fwd_s: Optional[float] = None
    bwd_s: Optional[float] = None
    process_s: Optional[float] = None
    stage_seconds: Optional[dict] = None
    counters: Optional[dict] = None
    warm_first_call_s: Optional[float] = None
    warm_fwd_s: Optional[float] = None
    warm_bwd_s: Optional[float] = None
    warm_counters: Optional[dict] = None
    export_bytes: Optional[int] = None
    error: Optional[str] = None
    error_stage: Optional[str] = None
    kb: tuple = ()

    @property
    def name(self) -> str:
        return self.workload.name

    @property
    def warm(self) -> bool:
        return self.status in WARM_STATUSES and not self.error

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "workload"}
        d["kb"] = list(self.kb)
        return {"name": self.name, "config": self.workload.to_dict(), **d}

    @classmethod
    def from_dict(cls, data: Mapping) -> "ConfigRecord":
        known = {f.name for f in dataclasses.fields(cls)} - {"workload"}
        kw = {k: v for k, v in data.items() if k in known}
        kw["kb"] = tuple(kw.get("kb") or ())
        kw["status"] = str(kw.get("status") or "")
        return cls(workload=Workload.from_dict(data.get("config") or {}), **kw)


@dataclass(frozen=True)
class EntryGroup:
    fingerprint: Fingerprint
    entries: tuple = ()  # cache entries (relative paths) its warm-ups created

    def present(self, root: str) -> bool:
        """Are all its entries still in the cache dir (bounded: one lstat each)?"""
        return all(os.path.lexists(os.path.join(root, e)) for e in self.entries)


@dataclass(frozen=True)
class Manifest:
    fingerprint: Fingerprint
    configs: tuple = ()  # ConfigRecord, sorted by name
    entry_groups: Mapping = field(default_factory=dict)  # fingerprint id -> EntryGroup
    cache_dir: Optional[str] = None
    written_at: Optional[str] = None
    flexdoctor_version: Optional[str] = None
    format: int = FORMAT
    compile_env: Optional[dict] = None  # None: not recorded (format 1)
    last_run: Optional[dict] = None
    run: Optional[dict] = None
    imported_from: Optional[str] = None
    unreadable_configs: int = 0  # config entries this flexdoctor could not read (kept out of configs)

    @property
    def fingerprint_id(self) -> str:
        return self.fingerprint.id

    def config(self, workload: Workload) -> Optional[ConfigRecord]:
        return next((c for c in self.configs if c.workload == workload), None)

    @classmethod
    def from_dict(cls, data: Any, where: str = "manifest") -> "Manifest":
        """Read any format in READS. ValueError: not a flexdoctor manifest, or a newer one."""
        if not isinstance(data, Mapping) or not isinstance(data.get("fingerprint"), Mapping):
            raise ManifestError("not_ours", where=where)
        fmt = data.get("format", 1)
        if fmt not in READS:
            raise ManifestError("too_new", where=where, format=repr(fmt), reads=", ".join(map(str, READS)))
        configs, bad = [], 0
        for raw in data.get("configs") or []:
            try:
                configs.append(ConfigRecord.from_dict(raw))
            except (WorkloadError, TypeError, AttributeError, ValueError):
                bad += 1  # a hand-edited or foreign entry: never "already warm"
        groups = {}
        for gid, g in (data.get("entry_groups") or {}).items():
            if isinstance(g, Mapping):
                entries = tuple(e for e in g.get("entries") or () if isinstance(e, str) and ".." not in e.split("/"))
                groups[str(gid)] = EntryGroup(Fingerprint.from_dict(g.get("fingerprint")), entries)
        env = data.get("compile_env")
        return cls(fingerprint=Fingerprint.from_dict(data["fingerprint"]),
                   configs=tuple(sorted(configs, key=lambda c: c.name)), entry_groups=groups,
                   cache_dir=data.get("cache_dir"), written_at=data.get("written_at"),
                   flexdoctor_version=data.get("flexdoctor_version"), format=int(fmt),
                   compile_env=dict(env) if isinstance(env, Mapping) else None,
                   last_run=data.get("last_run") if isinstance(data.get("last_run"), Mapping) else None,
                   run=data.get("run") if isinstance(data.get("run"), Mapping) else None,
                   imported_from=data.get("imported_from"), unreadable_configs=bad)

    def to_dict(self) -> dict:
        out = {
            "format": FORMAT,
            "flexdoctor_version": self.flexdoctor_version,
            "written_at": self.written_at,
            "cache_dir": self.cache_dir,
            "fingerprint": self.fingerprint.to_dict(),
            "fingerprint_id": self.fingerprint.id,
            "compile_env": self.compile_env or {},
            "configs": [c.to_dict() for c in self.configs],
            "entry_groups": {gid: {"fingerprint": g.fingerprint.to_dict(), "entries": sorted(g.entries)}
                             for gid, g in self.entry_groups.items()},
        }
        for key in ("last_run", "run", "imported_from"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def load(root: str) -> Optional[Manifest]:
    """The typed manifest of ``root``; None when there is none; ManifestError when unreadable."""
    data = read(root)
    return None if data is None else Manifest.from_dict(data, locations.manifest_path(root))


def read(root: str) -> Optional[dict]:
    """The manifest in ``root`` as JSON data, or None when there is none. Raises ValueError when it
    is not a flexdoctor manifest (unreadable JSON or wrong shape): a ManifestError, a ValueError."""
    path = locations.manifest_path(root)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ManifestError("unreadable", where=path, error=exc.strerror or exc) from exc
    except ValueError as exc:  # not JSON, or not UTF-8
        raise ManifestError("not_json", where=path, error=exc) from exc
    except RecursionError:
        raise ManifestError("too_deep", where=path) from None
    if not isinstance(data, dict) or not isinstance(data.get("fingerprint"), dict):
        raise ManifestError("not_ours", where=path)
    return data


def write(root: str, data: Any) -> str:
    """Atomically write ``data`` (a Manifest or its JSON data) as the manifest of ``root``; returns
    its path."""
    if isinstance(data, Manifest):
        data = data.to_dict()
    path = locations.manifest_path(root)
    os.makedirs(root, exist_ok=True)
    with locations.replacing(path, ".flexdoctor-manifest.") as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
    return path


# --------------------------------------------------------------------------- cache entries

# Directories of the Inductor root whose children are one entry each at the given depth.
_DEPTH = {"fxgraph": 2, "aotautograd": 1, "triton": 2, "cache": 1}
_SKIP = {"locks", locations.LOCK_NAME, locations.MANIFEST_NAME, locations.KEYS_NAME}


def entries(root: str) -> set[str]:
    """Relative paths of the cache entries under an Inductor root (one per compiled artifact:
    ``fxgraph/ab/<key>``, ``aotautograd/<key>``, ``triton/0/<hash>``, generated ``ab/<file>``)."""
    out: set[str] = set()

    def walk(rel: str, depth: int) -> None:
        try:
            with os.scandir(os.path.join(root, rel)) as it:
                for e in it:
                    child = f"{rel}/{e.name}" if rel else e.name
                    if depth > 1 and e.is_dir(follow_symlinks=False):
                        walk(child, depth - 1)
                    else:
                        out.add(child)
        except OSError:
            pass

    try:
        tops = list(os.scandir(root))
    except OSError:
        return out
    for top in tops:
        if top.name in _SKIP or top.name.startswith(".flexdoctor"):
            continue
        if top.is_dir(follow_symlinks=False):
            walk(top.name, _DEPTH.get(top.name, 1))
        else:
            out.add(top.name)
    return out


def size_of(path: str) -> int:
    """Bytes under ``path`` (files, not following symlinks); unreadable parts count as 0."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    if not os.path.isdir(path) or os.path.islink(path):
        return st.st_size
    total = 0
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def merge(old: Optional[Manifest], fp: Fingerprint, configs: Iterable[ConfigRecord], new_entries: Iterable[str],
          cache_dir: str, flexdoctor_version: str, compile_env: Optional[dict] = None,
          last_run: Optional[dict] = None, run: Optional[dict] = None,
          imported_from: Optional[str] = None) -> Manifest:
    """The next manifest: this run's fingerprint and configs (configs of the same environment
    warmed earlier are kept, unless this run compiled the same config again), and entry groups
    per fingerprint for the dead-weight report and the "already warm" check."""
    fid = fp.id
    kept: dict = {}
    groups = dict(old.entry_groups) if old else {}
    if old and old.fingerprint.id == fid and (old.compile_env or {}) == (compile_env or {}):
        kept = {c.workload: c for c in old.configs}
    for c in configs:
        kept[c.workload] = c
    prior = groups.get(fid)
    entries = set(prior.entries if prior else ()) | set(new_entries)
    groups[fid] = EntryGroup(fp, tuple(sorted(entries)))
    return Manifest(fingerprint=fp, configs=tuple(sorted(kept.values(), key=lambda c: c.name)),
                    entry_groups=groups, cache_dir=cache_dir, written_at=now(),
                    flexdoctor_version=flexdoctor_version, compile_env=dict(compile_env or {}),
                    last_run=last_run, run=run, imported_from=imported_from)
