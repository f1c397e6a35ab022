"""torch's release history for the structural layer: which torch releases exist, which CPython
versions their wheels cover, and the torchvision / torchaudio made for each. Releases from 2.4 come
from flexdoctor/wheels/torch_wheels.toml (the wheel advice's own table), older ones from
``torch_history.toml`` (its sources are listed there). Data, not words."""

from __future__ import annotations

import functools
import re
from typing import Optional

from ... import wheels
from .tables import _load

Version = tuple[int, ...]


def vkey(text: str) -> Version:
    """``2.1.2+cu118`` -> (2, 1, 2); ``0.1.2.post1`` -> (0, 1, 2, 1): the public release's numbers."""
    return tuple(int(x) for x in re.findall(r"\d+", text.split("+")[0])[:4])


def _py(text: str) -> tuple[int, int]:
    major, minor = (int(x) for x in text.split(".")[:2])
    return major, minor


@functools.lru_cache(maxsize=1)
def _old() -> dict:
    """release -> (python range, torchvision, torchaudio) for torch < 2.4."""
    out = {}
    for series in _load("torch_history.toml")["series"].values():
        lo, hi = (_py(v) for v in series["python"])
        for release, (vision, audio) in series["releases"].items():
            out[release] = ((lo, hi), vision or None, audio or None)
    return out


def _newest_old() -> Version:
    return max(vkey(r) for r in _old())


def exists(version: str) -> Optional[bool]:
    """Whether torch ``version`` was released; None when it is newer than every release known here
    (it may exist: the tables end somewhere)."""
    key = vkey(version)
    if len(key) == 2:
        key = key + (0,)
    newest = max([vkey(r.version) for r in wheels.table().releases] + [_newest_old()])
    if key > newest:
        return None
    return any(vkey(r) == key for r in _old()) or wheels.table().release(".".join(map(str, key))) is not None


def python_range(version: str, platform: str = "linux-x86_64") -> Optional[tuple[tuple[int, int], tuple[int, int]]]:
    """(oldest, newest) CPython that torch ``version`` has wheels for, or None when unknown."""
    rel = wheels.table().release(version.split("+")[0])
    if rel is not None:
        lo, hi = rel.python
        return lo, min(hi, rel.python_max_other.get(platform, hi))
    row = _old().get(".".join(map(str, vkey(version)[:3])))
    return row[0] if row else None


def companions(version: str) -> tuple[Optional[str], Optional[str]]:
    """(torchvision, torchaudio) made for torch ``version`` (exact releases), None where unknown."""
    rel = wheels.table().release(version.split("+")[0])
    if rel is not None:
        return rel.torchvision, rel.torchaudio
    row = _old().get(".".join(map(str, vkey(version)[:3])))
    return (row[1], row[2]) if row else (None, None)


def pyname(py: tuple[int, int]) -> str:
    return f"{py[0]}.{py[1]}"
