"""The structural layer's third round (issue 22, tune-b2): classes of errors read by their shape.

- A compiled module built against another NumPy C ABI (``numpy-abi``): which way the mismatch goes
  (a module built for NumPy 1.x under NumPy 2, or a module built against a newer NumPy than the one
  installed) decides the fix (``numpy<2`` or upgrading the module, against upgrading numpy).
- torch.compile refusing this Python (``dynamo-py``): the first torch whose Dynamo runs on it, from
  ``b2_versions.toml``.
- An error that states its own requirement or install command (``advice``): transformers' "requires
  `accelerate>=0.20.1`", "requires the latest version of bitsandbytes", "X is required for a normal
  functioning of this module, but found X==...", accelerate's "DeepSpeed is not available => install it
  using `pip3 install deepspeed`", "You can install it with pip: `pip install X`".

Every value put in a command is checked to be a plain token first (text from a log is data).
"""

from __future__ import annotations

import re
from typing import Optional

from ...text import t
from .collect import Seen, package_of
from .context import LogFacts
from .history import vkey
from .model import Answer
from .readers import SAFE, SPEC, _answer, _dist_of
from .tables import _load

_TABLE = "b2_versions.toml"
_NOT_OWNERS = {"numpy", "torch", "importlib", "_frozen_importlib"}


# --- NumPy C ABI ------------------------------------------------------------------------------------

def _numpy_direction(g: dict, facts: LogFacts) -> str:
    """``old``: a module built for NumPy 1.x runs under NumPy 2 (or code uses an API NumPy 2 removed);
    ``new``: a module built against a newer NumPy than the one installed; ``either``: not said."""
    if g.get("built") or g.get("arrapi") or g.get("removed"):
        return "old"
    if g.get("mod") and g.get("np"):
        mod, np = int(g["mod"], 16), int(g["np"], 16)
        return "new" if mod > np else "old" if mod < np else "either"
    if g.get("exp") and g.get("got"):
        exp, got = int(g["exp"]), int(g["got"])
        return "new" if exp > got else "old" if exp < got else "either"
    floor = _load(_TABLE)["numpy"]["numpy2_min_python"]
    if facts.python and vkey(facts.python) < vkey(floor):
        return "new"  # NumPy 2 does not run on this Python: the installed numpy is the older one
    return "either"


def _numpy_owner(seen: Seen, facts: LogFacts) -> Optional[str]:
    pkg = package_of(seen.text) or facts.package
    if not pkg or pkg in _NOT_OWNERS:
        return None
    return _dist_of(pkg)


def numpy_abi(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    direction = _numpy_direction(seen.groups, facts)
    owner = _numpy_owner(seen, facts)
    last = _load(_TABLE)["numpy"]["last_1x"]
    upgrade_owner = [f"python -m pip install --upgrade {owner}"] if owner else []
    if direction == "old":
        commands = ['python -m pip install "numpy<2"'] + upgrade_owner
    elif direction == "new":
        commands = ["python -m pip install --upgrade numpy"]
    else:
        commands = ['python -c "import numpy; print(numpy.__version__, numpy.__file__)"']
    what = owner or t("structural.b2.word.affected_module")
    return _answer("version-constraint", "numpy", "high" if direction != "either" else "medium",
                   t("structural.b2.title.numpy"), t(f"structural.b2.cause.numpy_{direction}"),
                   t(f"structural.b2.fix.numpy_{direction}", module=what, last=last), commands, seen, facts, 26,
                   owner)


# --- torch.compile and this Python --------------------------------------------------------------------

def dynamo_python(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    py = seen.groups.get("py", "")
    if not re.fullmatch(r"3\.\d{1,2}", py):
        return None
    since = _load(_TABLE)["dynamo"].get(py)
    older = f"3.{int(py.split('.')[1]) - 1}"
    torch = facts.torch or t("structural.word.installed")
    if since is None:
        return _answer("version-constraint", "python", "medium", t("structural.b2.title.dynamo", py=py),
                       t("structural.b2.cause.dynamo", py=py, torch=torch),
                       t("structural.b2.fix.dynamo_unknown", py=py, older=older), [], seen, facts, 24, "torch")
    return _answer("version-constraint", "python", "high", t("structural.b2.title.dynamo", py=py),
                   t("structural.b2.cause.dynamo", py=py, torch=torch),
                   t("structural.b2.fix.dynamo", py=py, since=since, older=older),
                   [f'python -m pip install --upgrade "torch>={since}"'], seen, facts, 24, "torch")


# --- errors that state their requirement -----------------------------------------------------------

_SPEC_BEFORE = re.compile(r"([A-Za-z][\w.-]{0,60}(?:[<>=!~]=?[\w.*+-]{1,40},?){1,4})\W{0,2}$")


def _requirement(seen: Seen) -> Optional[tuple[str, str]]:
    """(distribution, requirement) the error states, or None."""
    g = seen.groups
    if g.get("pkg"):
        return g["pkg"], f"{g['pkg']}{g['op']}{g['ver']}"
    if g.get("latest"):
        name = g["latest"].rstrip(".:")
        return name, name
    if g.get("dist"):  # "install it using `pip3 install deepspeed`": not installed at all
        return g["dist"], ""
    if g.get("found"):
        m = _SPEC_BEFORE.search(seen.text[max(0, seen.start - 200): seen.start])
        spec = m.group(1).rstrip(",") if m else g["found"]
        return g["found"], spec
    args = [a for a in (g.get("args") or "").split() if not a.startswith("-")]
    if len(args) == 1:
        dist = re.match(r"[A-Za-z0-9][\w.-]*", args[0])
        return (dist.group(0), args[0]) if dist else None
    return None


def advice(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    found = _requirement(seen)
    if found is None:
        return None
    dist, req = found
    if not SAFE.fullmatch(dist) or (req and not SPEC.fullmatch(req)):
        return None
    if not req:  # the error says the package is absent: install it as it says
        return _answer("missing-module", dist.lower(), "high", t("structural.title.module", mod=dist),
                       t("structural.cause.module", mod=dist), t("structural.mod.plain", dist=dist),
                       [f"python -m pip install {dist}"], seen, facts, 30)
    shown = f'"{req}"' if req != dist else req
    return _answer("version-constraint", dist.lower(), "high", t("structural.b2.title.advice", dist=dist),
                   t("structural.b2.cause.advice", dist=dist, req=req), t("structural.b2.fix.advice", dist=dist, req=req),
                   [f"python -m pip install -U {shown}", f"python -m pip show {dist}"], seen, facts, 29)
