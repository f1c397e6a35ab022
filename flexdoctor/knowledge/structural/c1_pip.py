"""Installer failures and SIGILL, read by their shape (tune-c1, issue 22).

- ``X.whl is not a supported wheel on this platform``: the wheel's own tags (PEP 427 file name:
  ``name-ver(-build)-pytag-abitag-plattag.whl``) against the Python and platform the log shows.
- Resolution conflicts: pip's "The conflict is caused by:" lines (``vllm 0.4.0 depends on torch==2.2.1``),
  uv's "Because X depends on Y and you require Z", conda/libmamba's "package X requires Y, but none of
  the providers can be installed" (src/pip/_internal/resolution/resolvelib/factory.py; astral-sh/uv's
  pubgrub report; conda-libmamba-solver).
- PEP 668 "externally-managed-environment" (pip's own error, Debian/Ubuntu 23.04+, Fedora 38+, Homebrew).
- conda's PackagesNotFoundError.
- pip out of disk space while installing ("Could not install packages due to an OSError: [Errno 28]").
- pip's "THESE PACKAGES DO NOT MATCH THE HASHES" (a truncated or corrupted download, or a stale cache).
- "Illegal instruction" (SIGILL): a binary built for CPU instructions this CPU lacks (AVX/AVX2 ...).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .readers import SAFE, SPEC, _answer
from . import c1

_WHEEL = re.compile(r"(?P<name>[A-Za-z0-9][\w.]{0,100})-(?P<ver>\d[\w.+!]{0,60})(?:-\d\w{0,20})?"
                    r"-(?P<py>[\w.]{1,40})-(?P<abi>[\w.]{1,40})-(?P<plat>[\w.]{1,120})\.whl$")


def _platform_of(tag: str) -> Optional[str]:
    if tag.startswith("win"):
        return "windows"
    if tag.startswith("macosx"):
        return "macos"
    if "linux" in tag:
        return "linux"
    return None if tag == "any" else tag


def _python_of(tag: str) -> Optional[str]:
    m = re.fullmatch(r"cp(\d)(\d{1,2})", tag.split(".")[0])
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel(seen: Seen, facts: LogFacts):
    """A wheel file whose tags do not fit this interpreter."""
    before = seen.text[: seen.start].split()
    m = _WHEEL.match(re.split(r"[\\/]", before[-1])[-1] + ".whl") if before else None
    if m is None:
        return None
    py, plat = _python_of(m.group("py")), _platform_of(m.group("plat"))
    have_plat = "linux" if facts.platform == "wsl2" else facts.platform
    reasons = []
    if py and facts.python and py != facts.python:
        reasons.append(t("structural.c1.pip.wheel_python", py=py, have=facts.python))
    if plat and have_plat and plat != have_plat:
        reasons.append(t("structural.c1.pip.wheel_platform", plat=m.group("plat"), have=have_plat))
    tags = f"{m.group('py')}-{m.group('abi')}-{m.group('plat')}"
    summary = t("structural.c1.fix.wheel", tags=tags, reasons=" ".join(reasons) or t("structural.c1.pip.wheel_check"))
    return _answer("pip-no-distribution", _norm(m.group("name")), "high" if reasons else "medium",
                   t("structural.c1.title.wheel", wheel=m.group(0)[:200]), t("structural.c1.cause.wheel", tags=tags),
                   summary, ["python -m pip debug --verbose"], seen, facts, 26)


_REQ = re.compile(r"[A-Za-z0-9][\w.-]{0,80}")


def resolve(seen: Seen, facts: LogFacts):
    """pip/uv/conda: two requirements that cannot both hold."""
    g = seen.groups
    who, whov, req, other = g.get("who", ""), g.get("whov", ""), g.get("req", ""), g.get("ureq")
    req = req.rstrip(".,;")
    name = _REQ.match(req)
    if name is None or not SPEC.fullmatch(req.replace(" ", "")) or not SAFE.fullmatch(who):
        return None
    subject = _norm(name.group(0))
    if g.get("conda"):
        return _conda_conflict(seen, facts, who, whov, req, subject)
    pinned = f"{who}=={whov.lstrip('=')}" if whov and re.fullmatch(r"=?=?[\w.+!]{1,40}", whov) else who
    commands = [f"python -m pip index versions {who}"] + ([f'python -m pip install "{pinned}"'] if whov else [])
    other = other.rstrip(".,") if other and SPEC.fullmatch(other.rstrip(".,").replace(" ", "")) else None
    summary = t("structural.c1.fix.conflict", who=pinned, req=req, dist=subject,
                other=other or t("structural.c1.word.another_requirement"))
    return _answer("version-constraint", subject, "high", t("structural.c1.title.conflict", who=pinned, req=req),
                   t("structural.c1.cause.conflict", who=pinned, req=req,
                     other=other or t("structural.c1.word.another_requirement")),
                   summary, commands, seen, facts, 26)


def _conda_conflict(seen: Seen, facts: LogFacts, who: str, whov: str, req: str, subject: str):
    py = re.fullmatch(r"python ?>=?(\d\.\d{1,2})(?:[.\w]{0,10})?,<(\d)\.(\d{1,2})(?:\.0a0)?", req)
    commands = []
    if py and int(py.group(3)) > 0:
        newest = f"{py.group(2)}.{int(py.group(3)) - 1}"
        commands = [f"conda create -n {who}-py{newest.replace('.', '')} python={newest} {who}={whov}"]
    return _answer("version-constraint", subject, "high", t("structural.c1.title.conflict", who=f"{who} {whov}", req=req),
                   t("structural.c1.cause.conda_conflict", who=f"{who} {whov}", req=req),
                   t("structural.c1.fix.conda_conflict", who=who, ver=whov, req=req), commands, seen, facts, 26)


def pep668(seen: Seen, facts: LogFacts):
    commands = ["python3 -m venv .venv", ". .venv/bin/activate", "python -m pip install --upgrade pip"]
    if facts.platform == "windows":
        return None  # PEP 668 markers are written by Linux distributions and Homebrew
    return _answer("pip-no-distribution", "externally-managed-environment", "high", t("structural.c1.title.pep668"),
                   t("structural.c1.cause.pep668"), t("structural.c1.fix.pep668"), commands, seen, facts, 26)


def conda_missing(seen: Seen, facts: LogFacts):
    return _answer("pip-no-distribution", "conda-channel", "medium", t("structural.c1.title.conda_missing"),
                   t("structural.c1.cause.conda_missing"), t("structural.c1.fix.conda_missing"),
                   ["conda config --show channels", "conda search -c conda-forge <package>"], seen, facts, 27)


def no_space(seen: Seen, facts: LogFacts):
    tmp = "set TMP=D:\\pip-tmp" if facts.platform == "windows" else "export TMPDIR=$HOME/pip-tmp && mkdir -p $TMPDIR"
    return _answer("pip-no-distribution", "no-space", "high", t("structural.c1.title.no_space"),
                   t("structural.c1.cause.no_space"), t("structural.c1.fix.no_space"),
                   ["python -m pip cache purge", tmp], seen, facts, 26)


def hashes(seen: Seen, facts: LogFacts):
    return _answer("pip-no-distribution", "hash-mismatch", "high", t("structural.c1.title.hashes"),
                   t("structural.c1.cause.hashes"), t("structural.c1.fix.hashes"),
                   ["python -m pip cache purge"], seen, facts, 26)


def sigill(seen: Seen, facts: LogFacts):
    """SIGILL: the CPU met an instruction it does not have. On a Mac, an x86_64 Python under Rosetta."""
    if seen.groups.get("mac") or facts.platform == "macos":
        return _answer("unsupported-op", "cpu-instructions", "medium", t("structural.c1.title.sigill"),
                       t("structural.c1.cause.sigill_mac"), t("structural.c1.fix.sigill_mac"),
                       ['python -c "import platform; print(platform.machine())"'], seen, facts, 60)
    return _answer("unsupported-op", "cpu-instructions", "medium", t("structural.c1.title.sigill"),
                   t("structural.c1.cause.sigill"), t("structural.c1.fix.sigill"),
                   ["grep -o -w -E 'avx|avx2|avx512f|fma|f16c' /proc/cpuinfo | sort -u", "uname -m"], seen, facts, 60)


def installer(seen: Seen, facts: LogFacts):
    """The ``c1-pip`` unit: one reader per pattern, told apart by its named group."""
    g = seen.groups
    for key, reader in (("wheel", wheel), ("pep668", pep668), ("conda", conda_missing), ("nospace", no_space),
                        ("hashes", hashes), ("proto", c1.protobuf)):
        if g.get(key):
            return reader(seen, facts)
    return None


def fatal(seen: Seen, facts: LogFacts):
    """The ``c1-fatal`` unit: a resolver's conflict line or a shell's SIGILL line."""
    g = seen.groups
    return sigill(seen, facts) if g.get("sigill") or g.get("mac") else resolve(seen, facts)
