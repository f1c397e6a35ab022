"""pip found no distribution: why, read from what pip printed. ``Could not find a version that
satisfies the requirement torch==2.1.0+cu121 (from versions: 2.2.0, ...)`` says which versions exist
for this interpreter; compared with the requirement (and, for torch, with its release history and the
Python versions each release has wheels for) it tells a too-new Python from a missing CUDA index, a
version that never existed, a 32-bit or unsupported interpreter, or a platform with no wheels
(``modules.toml``: triton -> triton-windows on Windows, Linux-only packages)."""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from ... import wheels
from . import history, tables
from .context import LogFacts

_REQ = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]{0,100})(?:\[[\w,.-]{0,100}\])?"
                  r"(?:(?:==|~=)(?P<ver>\d{1,4}(?:\.\d{1,6}){0,3}(?:(?:a|b|rc|\.post|\.dev)\d{1,8})?)(?:\+(?P<local>[\w.]{1,40}))?)?")
_VERSIONS = re.compile(r"\(from versions: ([^)\n]{0,20000})\)")
_PLATFORM_TAG = {"windows": "windows-x86_64", "macos": "macos-arm64"}
ARCH_CHECK = "python -c \"import platform, sys; print(sys.version, platform.architecture()[0], platform.machine())\""


def _listed(text: str) -> Optional[list[str]]:
    m = _VERSIONS.search(text)
    if m is None:
        return None
    body = m.group(1).strip()
    return [] if body == "none" else [v.strip() for v in body.split(",") if v.strip()]


def _python_span(name: str, ver: str, facts: LogFacts) -> Optional[tuple[str, str]]:
    if name != "torch" or not ver:
        return None
    span = history.python_range(ver, _PLATFORM_TAG.get(facts.platform or "", "linux-x86_64"))
    return (history.pyname(span[0]), history.pyname(span[1])) if span else None


def _platform_rule(name: str, facts: LogFacts) -> Optional[tuple[str, list]]:
    """A package with no wheel for this platform at all (modules.toml's platform rules)."""
    row = next((r for r in tables.modules() if r["dist"] == name), None)
    if row is None or facts.platform == "linux":
        return None
    if row["rule"] == "windows":
        commands = [f"python -m pip install {row['windows_dist']}"] if facts.platform == "windows" else []
        return t("structural.b.pip.windows_dist", dist=name, other=row["windows_dist"]), commands
    if row["rule"] == "linux-cuda":
        return t("structural.b.pip.linux_only", dist=name), []
    return None


def _none(name: str, ver: Optional[str], facts: LogFacts) -> tuple[str, list]:
    """pip saw no version at all: no wheel for this interpreter (Python version, 32-bit, platform)."""
    by_platform = _platform_rule(name, facts)
    if by_platform:
        return by_platform
    span = _python_span(name, ver or "", facts)
    if span:
        return t("structural.b.pip.none_release", dist=name, ver=ver, lo=span[0], hi=span[1]), [ARCH_CHECK]
    if name == "torch" and not ver:
        from . import h7  # tune-h7: which Pythons each torch release covers, and the old CUDA indexes that stop before
        return h7.torch_none(), [ARCH_CHECK]
    return t("structural.b.pip.none", dist=name), [ARCH_CHECK]


def _missing(name: str, ver: str, local: Optional[str], listed: list[str], facts: LogFacts) -> Optional[str]:
    """pip saw versions, but not the one required."""
    want = history.vkey(ver)
    keys = [history.vkey(v) for v in listed if history.vkey(v)]
    if local and local.startswith("cu") and any(history.vkey(v) == want for v in listed) \
            and not any("+cu" in v for v in listed):
        return t("structural.b.pip.no_cuda_index", dist=name, ver=ver, local=local)
    if local and re.fullmatch(r"cu\d{2,3}", local) and any(history.vkey(v) == want for v in listed) \
            and f"{ver}+{local}" not in listed and _built_for(ver, local):
        # tune-h4: the index lists other CUDA builds, not this one (download.pytorch.org/whl and mirrors list only some)
        return t("structural.h4.pip.cuda_index", dist=name, ver=ver, local=local)
    if not keys:
        return None
    span = _python_span(name, ver, facts)
    if want < min(keys):
        oldest = min(listed, key=history.vkey)
        extra = t("structural.b.pip.span", dist=name, ver=ver, lo=span[0], hi=span[1]) if span else ""
        return t("structural.b.pip.too_old", dist=name, ver=ver, oldest=oldest) + extra
    if name == "torch" and history.exists(ver) is False:
        return t("structural.b.pip.never_released", dist=name, ver=ver)
    if want > max(keys):
        return t("structural.b.pip.too_new", dist=name, ver=ver, newest=max(listed, key=history.vkey))
    return t("structural.b.pip.not_listed", dist=name, ver=ver)


def _built_for(ver: str, local: str) -> bool:
    """Whether torch ``ver`` has a ``local`` (cu121) build, where the wheel table knows the release (tune-h4)."""
    rel = wheels.table().release(ver)
    return rel is None or any(local in tags for tags in rel.variants.values())


def analyse(text: str, raw_req: str, facts: LogFacts) -> Optional[tuple[str, str, list]]:
    """(subject, fix summary, commands) for pip's 'no version satisfies raw_req' line, or None when
    the line says too little (the generic answer stands)."""
    m = _REQ.match(raw_req)
    if m is None:
        return None
    name = re.sub(r"[-_.]+", "-", m.group("name")).lower()
    ver, local, listed = m.group("ver"), m.group("local"), _listed(text)
    if listed is None:
        return None
    if not listed:
        summary, commands = _none(name, ver, facts)
        return name, summary, commands
    if not ver:
        by_platform = _platform_rule(name, facts)
        return (name, by_platform[0], by_platform[1]) if by_platform else None
    summary = _missing(name, ver, local, listed, facts)
    return (name, summary, [f"python -m pip index versions {name}"]) if summary else None
