"""Compile caches as the filesystem sees them: location, mount, owner, mode, free space, size,
and flexdoctor's warm-cache manifest. No torch import; walks are bounded so the probe stays fast.
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Optional

from .. import safety
from ..cache import locations
from ..cache import manifest as mf
from ..facts import CacheFacts, CacheLocation, CacheManifest, ProbeError

MAX_FILES = 50_000  # beyond this, or MAX_SECONDS, the size is "not measured" (None)
MAX_SECONDS = 2.0


def _size(path: str, deadline: float) -> Optional[int]:
    total, files = 0, 0
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
        files += len(filenames)
        if files > MAX_FILES or time.monotonic() > deadline:
            return None
    return total


def _chain(path: str) -> list:
    """The rows safety.judge decides from ([]: a directory on the way could not be stat'ed,
    which judge calls cannot-inspect)."""
    try:
        return safety.inspect(path)
    except OSError:
        return []


def location(loc: locations.Location, deadline: float) -> CacheLocation:
    path = loc.path
    if not path:  # the writer keeps no cache (PYTORCH_KERNEL_CACHE_PATH set but empty)
        return CacheLocation(kind=loc.kind, path=path, source=loc.source, exists=False)
    exists = os.path.isdir(path)
    anchor = path if exists else locations.existing_ancestor(path)
    mount, fs_type, options = locations.mount_of(anchor)
    owner = mode = free = None
    try:
        st = os.stat(anchor)
        if exists:
            owner, mode = st.st_uid, st.st_mode & 0o7777
    except OSError:
        pass
    try:
        free = shutil.disk_usage(anchor).free
    except OSError:
        pass
    return CacheLocation(
        kind=loc.kind,
        path=path,
        source=loc.source,
        exists=exists,
        in_temp=locations.in_temp(path),
        fs_type=fs_type,
        mount_point=mount,
        noexec=("noexec" in options) if mount else None,
        writable=os.access(anchor, os.W_OK | os.X_OK),
        owner_uid=owner,
        mode=mode,
        free_bytes=free,
        size_bytes=_size(path, deadline) if exists else 0,
        chain=_chain(path),
    )


def _manifest(root: str):
    try:
        m = mf.load(root)
    except mf.ManifestError as exc:  # English in the JSON facts, worded by the report (probe_error_text)
        return ProbeError.because(exc.reason, kind="garbage", stage="manifest", **exc.params)
    except ValueError as exc:
        return ProbeError(str(exc), kind="garbage", stage="manifest")
    if m is None:
        return None
    groups = []
    for group in m.entry_groups.values():
        present = [e for e in group.entries if os.path.lexists(os.path.join(root, e))]
        groups.append({"fingerprint": group.fingerprint.to_dict(),
                       "bytes": sum(mf.size_of(os.path.join(root, e)) for e in present),
                       "count": len(present)})
    return CacheManifest(path=locations.manifest_path(root), written_at=m.written_at,
                         fingerprint=m.fingerprint.to_dict(), configs=[c.name for c in m.configs],
                         entry_groups=groups)


def probe(env: Optional[dict] = None) -> CacheFacts:
    env = dict(os.environ if env is None else env)
    deadline = time.monotonic() + MAX_SECONDS
    ind = locations.inductor(env)
    return CacheFacts(
        uid=os.getuid() if hasattr(os, "getuid") else None,
        inductor=location(ind, deadline),
        triton=location(locations.triton(env), deadline),
        aten=location(locations.aten(env), deadline),
        manifest=_manifest(ind.path),
        disabled_by=locations.disabled_by(env),
    )
