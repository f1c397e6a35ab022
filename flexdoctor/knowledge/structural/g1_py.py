"""The structural layer's readers of tune-g1 (issue 22, round 8): an interpreter too old (or too new) for a package,
and torch without a usable NumPy.

- ``pyold``: a package's own code uses what this Python lacks, read where it fails in site-packages: "unsupported
  operand type(s) for |: 'type' and 'NoneType'" (PEP 604 unions, 3.10), "'type' object is not subscriptable" (PEP 585
  generics, 3.9), "for |: 'dict' and 'dict'" (PEP 584, 3.9), a SyntaxError inside an installed package (match,
  except*, PEP 701 f-strings: newer syntax than this Python). g1_tables.toml [[python]] says which Python each needs.
- ``pyreq``: pip's "Package 'X' requires a different Python: A not in 'SPEC'" (pip/_internal/resolution/.../
  requirements.py): a Python that satisfies SPEC, or let pip choose the release of X that supports this one.
- ``stdlib``: "cannot import name 'TypeAlias' from 'typing'", "No module named 'tomllib'": a standard-library name newer
  than this Python (g1_tables.toml [[stdlib]], the Python docs' "Added in version"), with its backport.
- ``numpy``: torch's "Numpy is not available" (torch/csrc/utils/tensor_numpy.cpp): NumPy missing, or a NumPy 2 under a
  torch built for 1.x; "numpy<2" fixes both up to Python 3.12 (g1_tables.toml [numpy_unavailable]).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen
from .context import LogFacts
from .history import vkey
from .model import Answer
from .readers import DIST, _answer, frame_package
from .tables import _load

_TYPES = frozenset({"type", "NoneType", "_GenericAlias", "GenericAlias", "_SpecialGenericAlias", "_UnionGenericAlias",
                    "_SpecialForm", "_LiteralGenericAlias", "_CallableGenericAlias", "ABCMeta", "EnumMeta", "str"})


def _needs(what: str) -> str:
    return next(r["needs"] for r in _load("g1_tables.toml")["python"] if r["what"] == what)


def _site_package(facts: LogFacts) -> Optional[str]:
    """The installed package of the last traceback frame (where the code that needs a newer Python lies)."""
    return frame_package(facts.paths[-1]) if facts.paths else None


def _what(seen: Seen) -> Optional[str]:
    g = seen.groups
    if g.get("l"):
        pair = {g["l"], g.get("r", "")}
        if pair == {"dict"}:
            return "pep584"
        return "pep604" if pair <= _TYPES and pair & {"type", "NoneType", "_GenericAlias", "GenericAlias",
                                                       "_SpecialGenericAlias", "_UnionGenericAlias"} else None
    if g.get("sub"):
        return "pep585"
    return "syntax" if g.get("syn") is not None else None


def pyold(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    if facts.root is None or abs(seen.line - facts.root[0]) > 1:
        return None  # only the error the run died of
    what = _what(seen)
    pkg = _site_package(facts)
    if what is None or (pkg is None and what != "pep604"):
        return None  # a subscript or a SyntaxError in the user's own code is a bug there, not this Python
    needs = _needs(what)
    py = facts.python
    dist = pkg.replace("_", "-") if pkg else None
    if what == "syntax" and py and vkey(py) >= vkey(needs):
        if vkey(py) >= (3, 12):
            return _too_new(dist or "", py, seen, facts, pkg)  # nothing newer to need: old code on a new Python
        needs = f"3.{vkey(py)[1] + 1}"
    elif py and vkey(py) >= vkey(needs):
        return None  # this Python has the feature: the error means something else
    v = {"pkg": dist or t("structural.g1.py.your_code"), "py": py or t("structural.g1.py.this_python"),
         "needs": needs, "what": t(f"structural.g1.py.what_{what}")}
    commands = ["python --version"] + ([f"python -m pip show {dist}"] if dist else [])
    case = "pkg" if dist else "code"
    return _answer("version-constraint", "python", "high" if what != "syntax" else "medium",
                   t("structural.g1.py.title", **v), t(f"structural.g1.py.cause_{what}", **v),
                   t(f"structural.g1.py.fix_{case}", **v), commands, seen, facts, 22, package=pkg)


def pyreq(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    pkg, py, spec = g.get("pkg", ""), g.get("py", ""), g.get("spec", "")
    if not (DIST.fullmatch(pkg) and re.fullmatch(r"[\d.]{1,20}", py)
            and re.fullmatch(r"[<>=!~,.\d* ]{1,60}", spec)):
        return None
    v = {"pkg": pkg, "py": py, "spec": spec}
    return _answer("version-constraint", "python", "high", t("structural.g1.req.title", **v),
                   t("structural.g1.req.cause", **v), t("structural.g1.req.fix", **v),
                   ["python --version", f"python -m pip install {pkg}"], seen, facts, 22, package=pkg)


def numpy(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = _load("g1_tables.toml")["numpy_unavailable"]
    new_py = bool(facts.python) and vkey(facts.python) > vkey(row["last_1x_python"])
    commands = ['python -c "import numpy; print(numpy.__version__)"']
    commands.append("python -m pip install --upgrade numpy torch" if new_py else 'python -m pip install "numpy<2"')
    case = "newpy" if new_py else "any"
    return _answer("version-constraint", "numpy", "high", t("structural.g1.np.title"), t("structural.g1.np.cause"),
                   t(f"structural.g1.np.fix_{case}", py=facts.python or ""), commands, seen, facts, 27,
                   package="torch")


def _too_new(dist: str, py: str, seen: Seen, facts: LogFacts, pkg: Optional[str]) -> Answer:
    """A SyntaxError inside an installed package on the newest Python: code older than this Python (Python 2 syntax,
    a name that became a keyword), not code that needs a newer one."""
    v = {"pkg": dist, "py": py}
    return _answer("version-constraint", "python", "medium", t("structural.g1.py.title_new", **v),
                   t("structural.g1.py.cause_new", **v), t("structural.g1.py.fix_new", **v),
                   ["python --version", f"python -m pip install --upgrade {dist}"], seen, facts, 22, package=pkg)


def _stdlib_row(mod: str, name: str) -> Optional[dict]:
    for row in _load("g1_tables.toml")["stdlib"]:
        if row["module"] == mod and (name in row["names"] or (not name and not row["names"])):
            return row
    return None


def stdlib(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    mod, name = seen.groups.get("mod", ""), seen.groups.get("name", "")
    row = _stdlib_row(mod, name)
    if row is None or (facts.python and vkey(facts.python) >= vkey(row["added"])):
        return None  # unknown, or this Python has it (then the name is shadowed or misspelt: not this class)
    pkg = _site_package(facts)
    dist = pkg.replace("_", "-") if pkg else None
    what = f"{mod}.{name}" if name else mod
    v = {"pkg": dist or t("structural.g1.py.your_code"), "py": facts.python or t("structural.g1.py.this_python"),
         "needs": row["added"], "what": what, "backport": row.get("backport", "")}
    case = "pkg" if dist else ("backport" if row.get("backport") else "code")
    fix = t("structural.g1.py.fix_pkg", **v) if dist else t(f"structural.g1.std.fix_{case}", **v)
    commands = ["python --version"] + ([f"python -m pip show {dist}"] if dist else
                                       [f"python -m pip install {row['backport']}"] if row.get("backport") else [])
    return _answer("version-constraint", "python", "high", t("structural.g1.py.title", **v),
                   t("structural.g1.std.cause", **v), fix, commands, seen, facts, 22, package=pkg)
