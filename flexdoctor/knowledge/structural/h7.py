"""The structural layer's readers of tune-h7 (issue 22, round 10 train): installing and platforms (h7_tables.toml).

- ``poetry``: poetry's installer found no file of a locked package for this interpreter/platform ("Unable to find
  installation candidates for torch (2.5.1)", poetry/installation/chooser.py). Why, from the package and version alone:
  a torch local version (+cpu, +cu121) that exists only on download.pytorch.org for Linux/Windows; the nvidia-*-cuNN
  wheels torch 1.13 required without platform markers; a torch release whose wheels cover other Pythons (poetry env use)
  and, from 2.3, no Intel Mac.
- ``sigill``: a process killed by SIGILL in gdb or a shell: on ARMv8.0 boards, the torch aarch64 releases that executed
  ARMv8.1 LSE atomics (ldaddal ...) and the release before them; the faulting instruction read from gdb's disassembly.
"""

from __future__ import annotations

import re
from typing import Optional

from ... import wheels
from . import history
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue
from .tables import _load

_PKG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,100}")
_VER = re.compile(r"\d{1,4}(?:\.\d{1,6}){0,3}(?:(?:a|b|rc|\.post|\.dev)\d{1,8})?(?:\+[\w.]{1,40})?")


_say = catalogue("h7")


def _table() -> dict:
    return _load("h7_tables.toml")  # _load caches each file


# --- poetry: no installation candidates ------------------------------------------------------------------------------

def _cuda_wheel(name: str) -> Optional[dict]:
    return next((r for r in _table()["cuda_wheel"] if name.startswith(r["prefix"]) and name.endswith(tuple(r["suffixes"]))),
                None)


def _span(ver: str, platform: str) -> Optional[str]:
    span = history.python_range(ver, platform)
    return f"{history.pyname(span[0])}-{history.pyname(span[1])}" if span else None


def _torch_words(ver: str, platform: Optional[str] = None) -> tuple[str, list]:
    """Why poetry found no torch ``ver`` wheel, from the release's own facts, and the commands."""
    pub = ver.split("+")[0]
    local = ver.partition("+")[2]
    last_x86 = _table()["poetry"]["macos_x86_last"]
    commands = ["poetry env info", 'python -c "import platform, sys; print(sys.version, platform.machine())"']
    if local:
        from . import i4  # tune-i4: a newer Python than the local build's wheels, first unless the log is macOS's
        words, py = _say("poetry.torch_local", ver=ver, pub=pub, local=local), i4.poetry_python(ver, platform)
        return (" ".join(w for w in (words, py) if w) if platform == "macos"
                else " ".join(w for w in (py, words) if w)), commands
    linux = _span(pub, "linux-x86_64")
    if linux is None:
        return _say("poetry.torch_unknown", ver=ver), commands
    other = _span(pub, "macos-arm64") or linux
    words = _say("poetry.torch_python", ver=pub, linux=linux, newest=other.split("-")[1])
    if history.vkey(pub) > history.vkey(last_x86):
        words += " " + _say("poetry.torch_intel_mac", ver=pub, last=last_x86)
    return words, commands + [f"poetry env use {other.split('-')[1]}"]


def poetry(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    name, ver = g.get("pkg") or "", g.get("ver") or ""
    if not _PKG.fullmatch(name) or not _VER.fullmatch(ver):
        return None
    name = re.sub(r"[-_.]+", "-", name).lower()
    row = _cuda_wheel(name)
    if name == "torch":
        fix, commands = _torch_words(ver, facts.platform)
    elif row is not None:
        fix, commands = _say("poetry.cuda_wheel", dist=name, ver=ver, marked=row["torch_marked"]), \
            ["poetry show --tree torch", "poetry lock"]
    else:
        fix, commands = _say("poetry.other", dist=name, ver=ver), \
            ["poetry env info", f"python -m pip download --no-deps {name}=={ver} -d /tmp/probe"]
    return _answer("version-constraint", name, "high" if name == "torch" or row else "medium",
                   _say("poetry.title", dist=name, ver=ver), _say("poetry.cause", dist=name, ver=ver),
                   fix + " " + _say("poetry.relock"), commands, seen, facts, 24, package=name)


# --- SIGILL: an instruction the CPU lacks ----------------------------------------------------------------------------

def _insn(mnemonic: str) -> Optional[dict]:
    """The [[arm_insn]] row of an AArch64 mnemonic (ldaddal -> LSE): its stem plus the a/al/l and b/h suffixes."""
    m = re.fullmatch(r"([a-z]{2,6}?)(?:a|al|l)?(?:b|h)?", mnemonic)
    stems = {mnemonic, m.group(1)} if m else {mnemonic}
    return next((r for r in _table()["arm_insn"] if stems & set(r["stems"])), None)


def _previous(ver: str) -> Optional[str]:
    """The newest torch release of the series before ``ver``'s (2.4.0 -> 2.3.1), from torch's release history."""
    key = history.vkey(ver)[:2]
    known = [r for r in history._old()] + [r.version for r in wheels.table().releases]
    older = [r for r in known if history.vkey(r)[:2] < key]
    return max(older, key=history.vkey) if older else None


def _arm_words(facts: LogFacts) -> tuple[str, list]:
    arm = _table()["armv80"]
    ver = facts.torch_release
    row = next((r for r in _table()["arm_regression"] if ver and r["torch"] == ver), None)
    known = ", ".join(r["torch"] for r in _table()["arm_regression"])
    if row:
        fix = _say("sigill.fix_known", ver=ver, prev=row["prev"], cores=arm["cores"], boards=arm["boards"])
        return fix, [f"python -m pip install torch=={row['prev']}", "grep -m1 -i features /proc/cpuinfo"]
    prev = _previous(ver) if ver else None
    fix = _say("sigill.fix_torch", ver=ver, prev=prev, cores=arm["cores"], boards=arm["boards"], known=known) if prev \
        else _say("sigill.fix_any", cores=arm["cores"], boards=arm["boards"], known=known)
    commands = [f"python -m pip install torch=={prev}"] if prev else []
    return fix, commands + ["grep -m1 -i features /proc/cpuinfo", "uname -m"]


def sigill(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    insn = g.get("insn")
    row = _insn(insn) if insn else None
    if insn and row is None:
        return None  # an instruction of no table: the generic reading (c1.sigill) stands
    if not insn and not g.get("gdb") and not facts.torch_release:
        return None  # a shell's bare "Illegal instruction" with no torch named: c1.sigill answers
    fix, commands = _arm_words(facts)
    cause = _say("sigill.cause_insn", insn=insn, feature=row["feature"], arch=row["arch"]) if row \
        else _say("sigill.cause")
    return _answer("unsupported-op", "cpu-instructions", "high" if row else "medium", _say("sigill.title"), cause,
                   fix, commands, seen, facts, 18 if row else 55, package="torch")


# --- bitsandbytes before 0.43 on native Windows ---------------------------------------------------------------------

def bnb_windows(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    binary = g.get("dll") or g.get("sure") or ""
    first = _table()["bnb_windows"]["first"]
    commands = ["python -m pip uninstall -y bitsandbytes bitsandbytes-windows",
                f'python -m pip install -U "bitsandbytes>={first}"',
                'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"',
                "python -m bitsandbytes"]
    case = "dll" if g.get("dll") else "so"
    return _answer("version-constraint", "bitsandbytes", "high", _say("bnb.title", first=first),
                   _say(f"bnb.cause_{case}", binary=binary, first=first), _say("bnb.fix", first=first),
                   commands, seen, facts, 14, package="bitsandbytes")


# --- a download.pytorch.org CUDA index that does not exist ---------------------------------------------------------

def _indexes() -> set:
    tags = set(_table()["pyindex"]["old"])
    for rel in wheels.table().releases:
        for variants in rel.variants.values():
            tags |= {tag for tag in variants if tag.startswith("cu")}
    return tags


def _nearest(want: int, tags) -> Optional[str]:
    """The CUDA tag to use for a wanted cuXYZ: the newest of the same major not above it, else the newest below it."""
    nums = sorted(int(tag[2:]) for tag in tags if re.fullmatch(r"cu\d{2,3}", tag))
    same = [n for n in nums if n <= want and len(str(n)) == len(str(want)) and str(n)[:-1] == str(want)[:-1]]
    below = [n for n in nums if n <= want]
    best = (same or below or [None])[-1]
    return f"cu{best}" if best else None


def pyindex(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    tag = "cu" + (seen.groups.get("cu") or "")
    if not re.fullmatch(r"cu\d{2,3}", tag) or int(tag[2:]) < _table()["pyindex"]["oldest"] or tag in _indexes():
        return None  # an index that exists (or one too old to judge): pip's own answer stands
    ver = facts.torch_release
    rel = wheels.table().release(ver) if ver else None
    tags = set().union(*rel.variants.values()) if rel else _indexes()
    best = _nearest(int(tag[2:]), tags)
    if best is None:
        return None
    url = "https://download.pytorch.org/whl/"
    vision = history.companions(ver)[0] if ver else None
    spec = f"torch=={ver}" + (f" torchvision=={vision}" if vision else "") if ver else "torch torchvision"
    cuda = f"{tag[2:-1]}.{tag[-1]}"
    return _answer("version-constraint", "torch", "high", _say("pyindex.title", tag=tag, url=url + tag),
                   _say("pyindex.cause", tag=tag, cuda=cuda),
                   _say("pyindex.fix", best=best, url=url + best, cuda=cuda, bcuda=f"{best[2:-1]}.{best[-1]}",
                        which=(f"torch {ver}" if rel else "torch")),
                   [f"python -m pip install {spec} --index-url {url}{best}", "nvidia-smi"], seen, facts, 16, package="torch")


def _first_for(py: tuple) -> Optional[str]:
    """The first torch release with a Linux wheel for CPython ``py`` (torch's release history)."""
    known = list(history._old()) + [r.version for r in wheels.table().releases]
    having = [r for r in known if (span := history.python_range(r)) and span[0] <= py <= span[1]]
    return min(having, key=history.vkey) if having else None


def torch_none() -> str:
    """pip saw no torch at all (tune-h7, for pipdist): the Pythons each torch release first covers, and the old CUDA
    indexes that stop before them."""
    old = _table()["pyindex_old"]
    span = history.python_range(old["last_torch"])
    newest = max(history.python_range(r.version)[1] for r in wheels.table().releases)
    starts = [(py, _first_for(py)) for py in ((3, minor) for minor in range(span[1][1] + 1, newest[1] + 1))]
    firsts = ", ".join(f"Python {history.pyname(py)}: torch {rel}" for py, rel in starts if rel)
    return _say("pip.torch_none", tag=old["last_tag"], last=old["last_torch"], py=history.pyname(span[1]),
                firsts=firsts, older=f"{span[1][0]}.{span[1][1] - 1}")


# --- a BLAS/LAPACK routine undefined ---------------------------------------------------------------------------------

def blas(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    sym = seen.groups.get("blas") or ""
    row = _table()["blas"]
    commands = [f"sudo apt-get install -y {row['apt']}"] if facts.platform in (None, "linux", "wsl2") else []
    if facts.conda or not commands:
        commands.append(f"conda install -c conda-forge {row['conda']}")
    return _answer("undefined-symbol", "blas", "high", _say("blas.title", sym=sym), _say("blas.cause", sym=sym),
                   _say("blas.fix", apt=row["apt"], conda=row["conda"]), commands, seen, facts, 19)
