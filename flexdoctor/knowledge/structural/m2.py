"""The structural readers of tuner m2 (issue 22, last wave).

- ``example``: a library's example script newer than the installed library. Hugging Face examples (diffusers,
  transformers, optimum-graphcore) call ``check_min_version("<next>.dev0")`` at import because examples/ tracks the
  main branch: every PyPI release is refused with "This example requires a source install from HuggingFace <Name>
  ..., but the version found is X." The remedy people apply: install the library from source
  (``pip install git+https://github.com/huggingface/<name>``) or take the example from the installed release's tag.
  The pinned form "This example requires a minimum version of Y, but the version found is X." names a release to
  upgrade to.
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import SAFE, _answer, catalogue
from .tables import _load

_say = catalogue("m2")
_FOUND = re.compile(r"but the version found is ([0-9][A-Za-z0-9_.+-]{0,40}?)\.?(?:\s|$)")


def _rows() -> list:
    return _load("m2_tables.toml")["example"]


def _row(name: Optional[str]) -> Optional[dict]:
    name = (name or "").lower()
    return next((r for r in _rows() if r["name"] == name), None)


def _library(seen: Seen, facts: LogFacts) -> Optional[dict]:
    """The library whose example refused to run: named in the source-install form, else the traceback frame
    that raised (``.../site-packages/diffusers/utils/__init__.py``)."""
    row = _row(seen.groups.get("lib"))
    if row is None:
        row = _row(facts.package)
    if row is None:
        row = next((r for r in _rows() for p in reversed(facts.paths) if f"/{r['dist']}/" in p.replace("\\", "/")),
                   None)
    return row


def example(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    row = _library(seen, facts)
    m = _FOUND.search(seen.text)
    found = m.group(1) if m and SAFE.fullmatch(m.group(1)) else None
    need = seen.groups.get("need")
    need = need if need and SAFE.fullmatch(need) else None
    have = _say("example.have", found=found) if found else ""
    if row is None:
        if need is None:
            return None
        return _answer("version-constraint", "example", "high", _say("example.title_any"), _say("example.cause_min"),
                       _say("example.fix_any", need=need) + have, [], seen, facts, 20)
    dist, git = row["dist"], row["git"]
    if need is None:  # the source-install form: the example is from main
        tag = _say("example.tag", dist=dist, found=found) if found else _say("example.tag_any", dist=dist)
        return _answer("version-constraint", dist, "high", _say("example.title_dev", dist=dist),
                       _say("example.cause_dev", dist=dist) + have,
                       _say("example.fix_dev", dist=dist, git=git) + " " + tag,
                       [f"python -m pip install {git}"], seen, facts, 20, package=dist)
    return _answer("version-constraint", dist, "high", _say("example.title_min", dist=dist, need=need),
                   _say("example.cause_min") + have, _say("example.fix_min", dist=dist, need=need, git=git),
                   [f'python -m pip install --upgrade "{dist}>={need}"'], seen, facts, 20, package=dist)


def _example_script(facts: LogFacts) -> bool:
    """The root error's last frame is a script in a repository's examples/ folder (not an installed package)."""
    if not facts.paths:
        return False
    last = facts.paths[-1].replace("\\", "/")
    return "/examples/" in last and "-packages/" not in last


def example_import(seen: Seen, facts: LogFacts, mod: str, name: str) -> Optional[Answer]:
    """``ImportError: cannot import name 'X' from 'diffusers.training_utils'`` raised by a script of the library's
    examples/ folder: the example is from a newer revision (main) than the installed library. None otherwise."""
    row = _row(mod.split(".")[0])
    if row is None or facts.root is None or facts.root[0] != seen.line or not _example_script(facts):
        return None
    dist, git = row["dist"], row["git"]
    return _answer("version-constraint", dist, "high", _say("example.title_name", dist=dist, name=name),
                   _say("example.cause_name", dist=dist, name=name, mod=mod),
                   _say("example.fix_dev", dist=dist, git=git) + " " + _say("example.tag_any", dist=dist),
                   [f"python -m pip install {git}"], seen, facts, 32, package=dist)
