"""flexdoctor's manifest inside the Inductor cache dir: what was warmed, for which environment.

The manifest is a small JSON file (``flexdoctor-manifest.json``). It is written atomically
(temporary file in the same directory, fsync, ``os.replace``), so a crash or Ctrl-C leaves
either the old manifest or the new one, never half of one.

The fingerprint holds what Inductor's and Triton's cache keys depend on (torch version and
source hash, Triton, CUDA/HIP version, GPU name; FACTS §3) plus, for information only, the
driver, GPU capability and Python. :func:`compare` says which keyed parts changed: any of them
means the warmed entries will never be hit again (dead weight, not wrong results).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import tempfile
from typing import Iterable, Optional

from . import locations

FORMAT = 1
# Parts of the fingerprint that are in Inductor's or Triton's cache keys: a change means a miss.
KEYED = ("torch", "torch_git", "triton", "cuda", "hip", "gpu_name")
# Recorded for the report, not in any cache key (driver) or implied by the keyed parts.
INFO = ("driver", "gpu_capability", "python", "device")
LABELS = {"torch": "torch", "torch_git": "torch build", "triton": "triton", "cuda": "CUDA",
          "hip": "HIP", "gpu_name": "GPU", "driver": "driver", "gpu_capability": "GPU capability",
          "python": "Python", "device": "device"}


def fingerprint_id(fp: dict) -> str:
    keyed = {k: fp.get(k) for k in KEYED}
    return hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:16]


def compare(old: dict, new: dict) -> list[tuple[str, object, object]]:
    """Keyed fingerprint parts that differ: [(label, old, new)]. Unknown (None) in ``new`` is
    not a change: flexdoctor could not tell (e.g. the torch runtime probe was skipped)."""
    out = []
    for key in KEYED:
        a, b = old.get(key), new.get(key)
        if b is None or a == b:
            continue
        if key == "torch" and _public(a) == _public(b):
            # "2.11.0+cu130" (torch.__version__) and "2.11.0" (a wheel's metadata without the
            # local tag) are the same release; which build it is, torch_git says.
            continue
        if key == "gpu_name" and old.get("device") == "cpu":
            continue
        out.append((LABELS[key], a, b))
    return out


def _public(version: object) -> object:
    return version.split("+", 1)[0] if isinstance(version, str) else version


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def read(root: str) -> Optional[dict]:
    """The manifest in ``root``, or None when there is none. Raises ValueError when it is not
    a flexdoctor manifest (unreadable JSON or wrong shape)."""
    path = locations.manifest_path(root)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from exc
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to read") from None
    if not isinstance(data, dict) or not isinstance(data.get("fingerprint"), dict):
        raise ValueError(f"{path}: not a flexdoctor manifest")
    return data


def write(root: str, data: dict) -> str:
    """Atomically write ``data`` as the manifest of ``root``; returns its path."""
    path = locations.manifest_path(root)
    os.makedirs(root, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".flexdoctor-manifest.", suffix=".tmp", dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:  # KeyboardInterrupt included: never leave the temporary file behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


# --------------------------------------------------------------------------- cache entries

# Directories of the Inductor root whose children are one entry each at the given depth.
_DEPTH = {"fxgraph": 2, "aotautograd": 1, "triton": 2, "cache": 1}
_SKIP = {"locks", locations.LOCK_NAME, locations.MANIFEST_NAME}


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


def merge(old: Optional[dict], fp: dict, configs: Iterable[dict], new_entries: Iterable[str],
          cache_dir: str, flexdoctor_version: str, extra: Optional[dict] = None) -> dict:
    """The next manifest: this run's fingerprint and configs (configs of the same fingerprint
    warmed earlier are kept), and entry groups per fingerprint for the dead-weight report."""
    fid = fingerprint_id(fp)
    kept: dict = {}
    groups: dict = {}
    if old:
        groups = dict(old.get("entry_groups") or {})
        if old.get("fingerprint_id") == fid:
            kept = {c["name"]: c for c in old.get("configs", []) if isinstance(c, dict) and "name" in c}
    for c in configs:
        kept[c["name"]] = c
    group = dict(groups.get(fid) or {"fingerprint": fp, "entries": []})
    group["fingerprint"] = fp
    group["entries"] = sorted(set(group.get("entries", [])) | set(new_entries))
    groups[fid] = group
    data = {
        "format": FORMAT,
        "flexdoctor_version": flexdoctor_version,
        "written_at": now(),
        "cache_dir": cache_dir,
        "fingerprint": fp,
        "fingerprint_id": fid,
        "configs": sorted(kept.values(), key=lambda c: c["name"]),
        "entry_groups": groups,
    }
    data.update(extra or {})
    return data
