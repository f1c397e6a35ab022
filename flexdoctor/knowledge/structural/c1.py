"""The structural layer's round-4 readers of tune-c1 (issue 22): packaging, imports and API drift.

- A name (or a submodule) a library release removed or first added (``c1-name``): ``cannot import name
  'X' from 'pkg'``, ``module 'pkg' has no attribute 'X'``, ``No module named 'pkg.sub'``, ``'Cls' object has
  no attribute 'X'``, read against ``c1_names.toml`` (which release removed/added it, what the calling
  package's fixed release is, with sources). The calling package is the last traceback frame outside the
  library itself: a package is upgraded (or the library pinned below the removing release); the user's own
  code is told what to use instead. A standard-library removal is answered only when the log's Python is
  not older than the release that removed it.
- A file of the user's that shadows a package (``c1-name``, its "partially initialized" pattern): "partially initialized module 'X'" or
  "cannot import name 'N' from 'X' (/home/u/proj/X.py)" where ``X.py`` lies outside site-packages and the
  interpreter's own library: rename it and delete its __pycache__.
- protobuf's "Descriptors cannot be created directly" (``c1-pip``'s ``proto`` pattern).

Installer failures (pip, uv, conda) and SIGILL are in ``c1_pip.py``. Every value put in a command is
checked to be a plain token first (text from a log is data); paths from the log go only in text.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from ...text import t
from .collect import Seen, package_of
from .context import LogFacts
from .history import vkey
from . import l1  # tune-l1
from .readers import SAFE, _answer, _dist_of, _shown
from .tables import _load

_IDENT = re.compile(r"[A-Za-z_]\w{0,99}(?:\.[A-Za-z_]\w{0,99}){0,8}")
_SITE = re.compile(r"[\\/](?:site|dist)-packages[\\/]|[\\/][Ll]ib[\\/]python\d|[\\/]Lib[\\/]|[\\/]lib[\\/]python3[\\/]")


@functools.lru_cache(maxsize=1)
def _index() -> dict:
    """(module, name or None, is_object) -> row."""
    out = {}
    for row in _load("c1_names.toml")["row"]:
        obj = bool(row.get("object"))
        for name in row.get("names") or [None]:
            out[(row["module"], name, obj)] = row
    return out


def lookup(mod: str, name: Optional[str], obj: bool = False) -> Optional[dict]:
    """The row for ``mod.name`` (or the dotted module ``mod`` itself, or any parent module of it)."""
    rows = _index()
    if name is not None:
        return rows.get((mod, name, obj))
    parts = mod.split(".")
    for n in range(len(parts), 0, -1):
        row = rows.get((".".join(parts[:n]), None, False))
        if row is not None:
            return row
    return None


def _own(row: dict, pkg: str) -> bool:
    top = row["module"].split(".")[0]
    return pkg in (top, row["dist"], row["dist"].replace("-", "_")) or (row["dist"] == "pillow" and pkg == "PIL")


def caller(row: dict, facts: LogFacts) -> tuple[bool, Optional[str]]:
    """(whether any frame was seen, the installed package whose code uses the name): the last traceback
    frame that is not the library's own code. (True, None): the user's own code."""
    for path in reversed(facts.paths):
        if path.startswith("<"):
            continue  # <frozen importlib._bootstrap>, <string>, <stdin>
        pkg = package_of(path)
        if pkg is None:
            return True, None
        if pkg in ("importlib", "_frozen_importlib") or _own(row, pkg):
            continue
        return True, pkg
    return False, None


def _too_new_python(row: dict, facts: LogFacts) -> bool:
    """A standard-library removal read on a Python older than the release that removed it is not that."""
    return row["dist"] == "python" and bool(facts.python) and vkey(facts.python) < vkey(row["removed"])


def name_answer(seen: Seen, facts: LogFacts):
    g = seen.groups
    if g.get("partial"):
        return shadow(seen, facts)
    mod, name = g.get("mod") or g.get("cls") or "", g.get("name")
    if not _IDENT.fullmatch(mod) or (name is not None and not _IDENT.fullmatch(name)):
        return None
    found = _shadow_from_message(seen, facts, mod, name)
    if found is not None:
        return found
    row = lookup(mod, name, bool(g.get("cls")))
    if row is None or ("removed" in row and _too_new_python(row, facts)):
        return None
    subject = f"{mod}.{name}" if name else mod
    kind = "missing-module" if name is None else "import-name"
    _frames, pkg = caller(row, facts)
    dist = _dist_of(pkg) if pkg else None
    dist = dist if dist and SAFE.fullmatch(dist) else None
    shown = (_shown(pkg) or pkg) if pkg else None
    shown = shown if shown and SAFE.fullmatch(shown) else None
    summary, commands = (_removed(row, subject, dist, shown, facts) if "removed" in row
                         else _added(row, subject, shown))
    summary, commands = l1.removed_more(row, bool(_frames), pkg is None, summary, commands, facts)  # tune-l1
    key = "removed" if "removed" in row else "added"
    title = t(f"structural.c1.title.{key}", what=subject, dist=row["dist"], ver=row.get(key))
    cause = t(f"structural.c1.cause.{key}", what=subject, dist=row["dist"], ver=row.get(key),
              caller=shown or t("structural.c1.word.your_code"))
    return _answer(kind, subject, "high", title, cause, summary, commands, seen, facts, 29 if name is None else 31,
                   dist or row["dist"])


def _pin(row: dict, facts: LogFacts) -> Optional[str]:
    """The pin below the removing release, where one can be installed as printed: not for Python, nor for
    a library torch pins (triton) or one whose old releases stopped at an old Python (torch < 2)."""
    if row["dist"] == "python" or row.get("pin") is False:
        return None
    if row.get("pin_python_max") and facts.python and vkey(facts.python) > vkey(row["pin_python_max"]):
        return None  # no release below `removed` has wheels for this Python
    return f'python -m pip install "{row["dist"]}<{row["removed"]}"'


def _removed(row: dict, subject: str, dist: Optional[str], name: Optional[str], facts: LogFacts) -> tuple[str, list]:
    """``dist``: the calling package's pip name (None where it has none, e.g. NVIDIA apex); ``name``: how
    users call it (None: the user's own code)."""
    ver, lib, use = row["removed"], row["dist"], row.get("use") or t("structural.c1.word.its_docs")
    fixed = (row.get("importers") or {}).get(dist or name or "")
    pin = _pin(row, facts)
    pins = [pin] if pin else []
    or_pin = (" " + t("structural.c1.fix.or_pin", dist=lib, ver=ver)) if pin else ""
    if name is None:
        key = "removed_python_code" if lib == "python" else "removed_code"
        return t(f"structural.c1.fix.{key}", what=subject, dist=lib, ver=ver, use=use) + or_pin, pins
    if fixed == "git":
        return t("structural.c1.fix.removed_unfixed", caller=name, what=subject, dist=lib, ver=ver, use=use), \
            ([f"python -m pip show {dist}"] if dist else []) + pins
    key = ("removed_python" if lib == "python" else "removed_caller") + ("_fixed" if fixed else "")
    text = t(f"structural.c1.fix.{key}", caller=name, what=subject, dist=lib, ver=ver, req=f"{name}>={fixed}") + or_pin
    upgrade = ([f'python -m pip install --upgrade "{dist}>={fixed}"' if fixed else f"python -m pip install --upgrade {dist}"]
               if dist else [])
    return text, (pins + upgrade) if dist == "torch" else upgrade + pins  # a pin first rather than moving torch


def _added(row: dict, subject: str, dist: Optional[str]) -> tuple[str, list]:
    lib, ver = row["dist"], row["added"]
    other = dist if dist and SAFE.fullmatch(dist) and dist != lib else None
    key = "added_torch" if lib == "torch" else "added"
    text = t(f"structural.c1.fix.{key}", what=subject, dist=lib, ver=ver,
             caller=other or t("structural.c1.word.the_calling_code"))
    return text, [f'python -m pip install --upgrade "{lib}>={ver}"', f"python -m pip show {lib}"]


# --- a file of the user's shadowing a package ------------------------------------------------------------

_MSG_PATH = re.compile(r"\((?P<path>[^()\n]{1,500}\.py)\)\s*$")


def _user_file(path: str, top: str) -> bool:
    """``path`` is a file named like the module ``top`` that is neither installed nor Python's own."""
    base = re.split(r"[\\/]", path)[-1]
    return base == f"{top}.py" and not _SITE.search(path)


def _shadow_from_message(seen: Seen, facts: LogFacts, mod: str, name: Optional[str]):
    """``cannot import name 'pipeline' from 'transformers' (/home/u/transformers.py)``."""
    m = _MSG_PATH.search(seen.text)
    top = mod.split(".")[0]
    if m is None or "." in mod or not _user_file(m.group("path"), top):
        return None
    return _shadow(seen, facts, top, m.group("path"), f"{mod}.{name}" if name else mod)


def shadow(seen: Seen, facts: LogFacts):
    """``partially initialized module 'torch' has no attribute 'randn'`` with ``torch.py`` of the user's
    among the frames (or in the message): that file is imported instead of the package."""
    mod = seen.groups.get("partial", "")
    if not _IDENT.fullmatch(mod):
        return None
    top = mod.split(".")[0]
    m = _MSG_PATH.search(seen.text)
    paths = ([m.group("path")] if m else []) + list(reversed(facts.paths))
    path = next((p for p in paths if _user_file(p, top)), None)
    if path is None:
        return None  # a real circular import inside an installed package: not this reading
    name = seen.groups.get("name")
    return _shadow(seen, facts, top, path, f"{mod}.{name}" if name else mod)


def _shadow(seen: Seen, facts: LogFacts, top: str, path: str, subject: str):
    folder = re.split(r"[\\/][^\\/]*$", path)[0] or path
    cache = folder + ("\\__pycache__" if "\\" in path else "/__pycache__")
    return _answer("import-name", subject, "high", t("structural.c1.title.shadow", mod=top, path=path[:300]),
                   t("structural.c1.cause.shadow", mod=top, path=path[:300]),
                   t("structural.c1.fix.shadow", mod=top, path=path[:300], cache=cache[:300]),
                   [f'python -c "import {top}; print({top}.__file__)"'], seen, facts, 20, None)


# --- protobuf ---------------------------------------------------------------------------------------

def protobuf(seen: Seen, facts: LogFacts):
    """protobuf >= 4 (upb) refusing _pb2 modules generated by an old protoc."""
    env = ("set PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python" if facts.platform == "windows"
           else "export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python")
    pkg = facts.package if facts.package and facts.package not in ("google", "protobuf") else None
    dist = _dist_of(pkg) if pkg else None
    dist = dist if dist and SAFE.fullmatch(dist) else None
    commands = [f"python -m pip install --upgrade {dist}"] if dist else []
    commands += ['python -m pip install "protobuf==3.20.3"', env]
    return _answer("version-constraint", "protobuf", "high", t("structural.c1.title.protobuf"),
                   t("structural.c1.cause.protobuf", pkg=dist or t("structural.c1.word.a_package")),
                   t("structural.c1.fix.protobuf", pkg=dist or t("structural.c1.word.the_package_pb2")),
                   commands, seen, facts, 25, dist)
