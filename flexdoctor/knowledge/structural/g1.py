"""The structural layer's readers of tune-g1 (issue 22, round 8): API drift in calls.

- ``kwarg``: Python's "X() got an unexpected keyword argument 'Y'" (also "X.__init__()", and Python < 3.10's bare
  "__init__()"). X and Y are read from the message; g1_tables.toml [[kwarg]] says which package owns X and the release
  that added, renamed, moved or removed Y (sources per row: release tags diffed, the PRs that made the change). The
  remedy depends on who is old: the user's call (rename Y / move it into the config class / upgrade to the release
  that added it), or an installed package in the last frame that calls another one (upgrade the caller, or pin the
  callee below the release that removed Y). A callee the table does not know still gets a reading that names the
  package owning it (the table's callee names, a dotted name) or the calling package from the frames, never a version.
- ``signature``: "X() missing N required positional argument(s)" and "X() takes N positional arguments but M were
  given": the same reading without a table (the argument lists of two releases differ).

Text from a log is data: X and Y go into a fix only as identifiers (checked), a package only as a PEP 508 name.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from ...text import t
from . import history
from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import DIST, _answer, frame_package
from .tables import _load

_IDENT = re.compile(r"[A-Za-z_]\w{0,99}")
_CALLEE = re.compile(r"([A-Za-z_][\w.]{0,200})$")
_DUNDER = ("__init__", "__new__", "__call__")
_EATEN = ("init", "new", "call")  # tune-i5: a dunder whose underscores Markdown ate ("Class.init()")


@functools.lru_cache(maxsize=1)
def _rows() -> tuple:
    return tuple(_load("g1_tables.toml")["kwarg"])


@functools.lru_cache(maxsize=1)
def _owners() -> dict:
    """callee name -> the package that defines it (every callee the table names)."""
    return {c: r["package"] for r in _rows() for c in r["callees"]}


def callee(seen: Seen) -> tuple[str, str]:
    """(the name as printed, the callee's own name): "SFTTrainer.__init__" -> SFTTrainer, "Accelerator.save" -> save,
    "__init__" -> "" (Python < 3.10 does not say whose)."""
    if seen.text[seen.start:seen.start + 10] == "TypeError:":
        return "", ""  # msgspec's wording names no callee
    m = _CALLEE.search(seen.text[max(0, seen.start - 200):seen.start])
    full = m.group(1).strip(".") if m else ""
    parts = [p for p in full.split(".") if p]
    if parts and (parts[-1] in _DUNDER or (parts[-1] in _EATEN and len(parts) > 1 and parts[-2][:1].isupper())):
        parts = parts[:-1]
    name = parts[-1] if parts else ""
    return (full if _IDENT.fullmatch(full.replace(".", "_")) else ""), (name if _IDENT.fullmatch(name or "-") else "")


def _row(arg: str, name: str) -> tuple[Optional[dict], bool]:
    """The table row for this argument and callee, and whether the callee itself was named in it."""
    rows = [r for r in _rows() if arg in r["arg"]]
    exact = [r for r in rows if name and name in r["callees"]]
    if exact:
        return exact[0], True
    owner = _owners().get(name)
    loose = [r for r in rows if r.get("any") and owner in (None, r["package"])]
    if not loose:
        return None, False
    # no callee named (Python < 3.10's "__init__()", msgspec's wording): a distinctive argument is the row's own
    return loose[0], not name


def _mod(dist: str) -> str:
    return dist.replace("-", "_").lower()


def call_site(paths) -> Optional[str]:
    """The last traceback frame that is not a decorator passing the call through (g1_tables.toml [[passthrough]])."""
    skip = tuple(r["path"] for r in _load("g1_tables.toml")["passthrough"])
    for p in reversed(paths):
        if not p.replace("\\", "/").endswith(skip):
            return p
    return None


def caller(facts: LogFacts) -> Optional[str]:
    """The installed package the failing call was made from (the last traceback frame), None for the user's code."""
    site = call_site(facts.paths)
    return None if site is None else frame_package(site)


def _short(shown: str) -> str:
    """"TrainingArguments.__init__" -> "TrainingArguments" (the name users write)."""
    parts = shown.split(".")
    return ".".join(parts[:-1]) if len(parts) > 1 and parts[-1] in _DUNDER else shown


def _older(have: Optional[str], since: str) -> Optional[bool]:
    if not have:
        return None
    return history.vkey(have) < history.vkey(since)


def _upgrade(pkg: str, since: str, facts: LogFacts) -> str:
    spec = f'"{pkg}>={since}"'
    if pkg == "torch":
        index = f" --index-url https://download.pytorch.org/whl/{facts.cuda_tag}" if facts.cuda_tag else ""
        return f"python -m pip install --upgrade {spec}{index}"
    if pkg == "flash-attn":
        return f"python -m pip install --upgrade {spec} --no-build-isolation"
    return f"python -m pip install --upgrade {spec}"


# --- unexpected keyword argument ------------------------------------------------------------------------------

def kwarg(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.root is not None and abs(seen.line - facts.root[0]) > 1:
        return None  # only the error the run died of
    arg = seen.groups.get("arg") or ""
    full, name = callee(seen)
    if not _IDENT.fullmatch(arg):
        return None
    row, exact = _row(arg, name)
    shown = full or name or "__init__"
    if row is not None and not name and row["callees"]:
        shown = row["callees"][0]  # Python < 3.10 names no class: the row's (its argument is distinctive)
    if row is None:
        return _generic("kwarg", shown, name, arg, seen, facts)
    return _table_answer(row, exact, shown, arg, seen, facts)


def _table_answer(row: dict, exact: bool, shown: str, arg: str, seen: Seen, facts: LogFacts) -> Answer:
    pkg, action = row["package"], row["action"]
    who = caller(facts)
    lib = who if who and _mod(who) != _mod(pkg) else None
    removed = row.get("removed", "")
    pin = f'pip install "{pkg}<{removed}"' if removed and exact else t("structural.g1.word.pin", pkg=pkg)
    v = {"callee": _short(shown), "arg": arg, "pkg": pkg, "new": row.get("new") or t("structural.g1.word.nothing"),
         "since": row.get("since", ""), "removed": removed or "?", "caller": lib or "", "pin": pin}
    commands = [f"python -m pip show {pkg}" + (f" {lib}" if lib else "")]
    if action == "added":
        case = _added_case(row, lib, who, pkg, facts)
        if case in ("upgrade", "caller_needs"):
            commands.append(_upgrade(pkg, row["since"], facts))
        elif case == "old_callee" and exact:
            commands.append(f'python -m pip install "{pkg}<{row["since"]}"')
    else:
        case = "caller" if lib else action + ("" if exact else "_any")
        if lib:
            commands.append(f"python -m pip install --upgrade {lib}")
        if row.get("removed") and exact:
            commands.append(f'python -m pip install "{pkg}<{row["removed"]}"')
    fix = t(f"structural.g1.kw.fix_{case}", **v)
    if case == "caller" and action == "rename" and row.get("new"):
        fix += " " + t("structural.g1.kw.caller_rename", **v)  # the user's own call may pass the old name too
    title = t("structural.g1.kw.title", callee=shown, arg=arg, pkg=pkg)
    cause = t(f"structural.g1.kw.cause_{action}", **v) if exact or action == "added" else \
        t("structural.g1.kw.cause_any", **v)
    return _answer("version-constraint", pkg, "high" if exact else "medium", title, cause, fix, commands, seen, facts,
                   16, package=pkg)


def _added_case(row: dict, lib: Optional[str], who: Optional[str], pkg: str, facts: LogFacts) -> str:
    """Who is old when an argument a release added is refused: the installed ``pkg``, or (the caller lies in ``pkg``
    itself, or torch is new enough) the code that defines the callee."""
    if pkg == "torch" and _older(facts.torch_release, row["since"]) is False:
        return "replaced"  # torch is new enough: something replaced torch's function (a patch, a backend)
    if row.get("caller_newer") and who and _mod(who) == _mod(pkg):
        return "old_callee"
    return "caller_needs" if lib else "upgrade"


def _generic(kind: str, shown: str, name: str, arg: str, seen: Seen, facts: LogFacts,
             detail: str = "") -> Optional[Answer]:
    """No row: the package that owns the callee (the table's callee names, a dotted name), else the calling package
    from the frames; the remedy is the versions those packages require, never a made-up number."""
    shown = _short(shown)
    owner = _owners().get(name)
    if owner is None and "." in shown:
        head = shown.split(".")[0]
        owner = head if head[:1].islower() and DIST.fullmatch(head) and head not in ("self", "cls") else None
    who = caller(facts)
    lib = who if who and (owner is None or _mod(who) != _mod(owner)) else None
    if owner is None and lib is None:
        case = "code"
    elif lib:
        case = "lib"
    else:
        case = "owner"
    pkg = owner or t("structural.g1.word.owner", callee=shown)
    commands = [f"python -m pip show {p}" for p in (lib, owner) if p] + (["python -m pip check"] if lib else [])
    title = t(f"structural.g1.{kind}.title", callee=shown, arg=arg, detail=detail)
    return _answer("version-constraint", owner or lib or shown, "medium", title,
                   t(f"structural.g1.gen.cause_{case}", callee=shown, pkg=pkg, caller=lib or ""),
                   t(f"structural.g1.gen.fix_{case}", callee=shown, pkg=pkg, caller=lib or ""), commands, seen, facts,
                   38, package=owner or lib)


# --- missing / extra positional arguments ---------------------------------------------------------------------------

def signature(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.root is None or seen.line != facts.root[0]:
        return None  # only the error the run died of
    full, name = callee(seen)
    if not full:
        return None
    g = seen.groups
    if g.get("missing"):
        arg = g.get("arg") if _IDENT.fullmatch(g.get("arg") or "-") else ""
        detail = t("structural.g1.sig.missing", n=g["missing"], arg=arg)
    else:
        detail = t("structural.g1.sig.takes", n=g.get("n", "?"), m=g.get("m", "?"))
    return _generic("sig", full, name, "", seen, facts, detail)
