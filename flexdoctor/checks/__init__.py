"""The check registry: built-in checks (explicit list, sorted by ID) plus third-party checks
from the ``flexdoctor.checks`` entry-point group, validated on load.

A plugin entry point names a function decorated with :func:`flexdoctor.checks.base.check`
(or a module of them). A plugin that fails to import or declares an invalid check becomes an
``error`` result (FD000-style ``plugin-load``), never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .base import CheckSpec, check  # noqa: F401  (re-exported for plugins)

_BUILTIN_MODULES = ("platform", "gpu", "torch", "compiler", "toolchain", "cache", "deep", "diffusers", "multigpu")


@dataclass(frozen=True)
class PluginProblem:
    name: str
    message: str


def builtin() -> list[CheckSpec]:
    import importlib

    from . import base

    for name in _BUILTIN_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    specs = {s.id: s for s in base._DECLARED if s.func.__module__.startswith(__name__ + ".")}
    return sorted(specs.values(), key=lambda s: s.id)


GROUP = "flexdoctor.checks"


def _maybe_declared(group: str = GROUP) -> bool:
    """Whether any distribution on ``sys.path`` may declare entry points of ``group``: a plain scan
    of the ``*.dist-info`` / ``*.egg-info`` folders importlib.metadata reads (its ``Lookup``), for
    the text ``[group]`` in their entry_points.txt. It spares the common case, no plugin at all, the
    import of importlib.metadata and the parsing of every installed distribution's metadata (a
    third of ``check --static``). False only when sure: a zip on the path, or a finder of
    distributions other than the standard one, answers True and importlib.metadata decides."""
    import sys
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return True
    for entry in sys.path:
        found = _declaring(entry, group)
        if found is None or found:
            return True
    return False


def _declaring(entry: str, group: str = GROUP) -> Optional[list]:
    """The metadata folders in the ``sys.path`` folder ``entry`` whose entry_points.txt names
    ``group`` (read as data, never blocking on a FIFO); None for a zip or egg file on the path."""
    import os

    from ..safety import read_small

    root = entry or "."
    try:
        names = os.listdir(root)
    except NotADirectoryError:
        return None  # a zip or egg file: importlib.metadata reads inside it
    except OSError:
        return []
    egg = os.path.basename(root).lower().endswith(".egg")
    needle = f"[{group}]"
    found = []
    for name in names:
        low = name.lower()
        if low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info"):
            text = read_small(os.path.join(root, name, "entry_points.txt"))
            if text is not None and needle in text:
                found.append(os.path.join(root, name))
    return found


def _entry_points(root: bool) -> tuple:
    """(the entry points of the group, problems). As root only from the ``sys.path`` folders the
    ownership walk passes: from any other nothing is loaded, and each declaration there is named."""
    from importlib.metadata import distributions, entry_points

    if not root:
        try:
            return list(entry_points(group=GROUP)), []
        except TypeError:  # Python 3.9
            return list(entry_points().get(GROUP, [])), []
    import os
    import sys

    from .. import safety
    from ..text import t

    safe, problems = [], []
    for entry in sys.path:
        v = safety.verdict(os.path.abspath(entry or "."))
        if v.safe:
            safe.append(entry)
            continue
        for meta in _declaring(entry) or ():
            problems.append(PluginProblem(os.path.basename(meta), t("plugin-load.root_refused", target=meta,
                                                                    why=safety.describe(v))))
    return [ep for dist in distributions(path=safe) for ep in dist.entry_points if ep.group == GROUP], problems


def _root_refusal(ep) -> Optional[str]:
    """As root, why ``ep`` must not be loaded (a non-root user can change its files), or None."""
    from .. import safety
    from ..text import t

    dist_path = getattr(getattr(ep, "dist", None), "_path", None)
    v = safety.module_verdict(ep.module, extra=(str(dist_path),) if dist_path else (), uid=safety.ROOT_UID)
    return None if v.safe else t("plugin-load.root_refused", target=ep.value, why=safety.describe(v))


def plugins() -> tuple[list[CheckSpec], list[PluginProblem]]:
    if not _maybe_declared():
        return [], []
    from .. import safety
    from ..text import t
    from . import base

    found: list[CheckSpec] = []
    root = safety.current_uid() == safety.ROOT_UID
    eps, problems = _entry_points(root)
    taken = {s.id for s in builtin()}
    for ep in eps:
        refusal = _root_refusal(ep) if root else None
        if refusal:
            problems.append(PluginProblem(ep.name, refusal))
            continue
        before = len(base._DECLARED)
        try:
            obj = ep.load()
        except Exception as exc:
            problems.append(PluginProblem(ep.name, t("plugin-load.not_loaded", target=ep.value,
                                                     error=f"{type(exc).__name__}: {exc}")))
            continue
        new = base._DECLARED[before:]
        spec: Optional[CheckSpec] = getattr(obj, "spec", None)
        if spec is not None and spec not in new:
            new.append(spec)
        if not new:
            problems.append(PluginProblem(ep.name, t("plugin-load.no_check", target=ep.value)))
        for s in new:
            bad = s.problems()
            if s.id in taken:
                bad.append(t("plugin-load.id_taken", id=s.id))
            if bad:
                problems.append(PluginProblem(ep.name, f"{s.id} {s.symbol}: " + "; ".join(bad)))
            else:
                taken.add(s.id)
                found.append(s)
    return found, problems


def all_checks(with_plugins: bool = True) -> tuple[list[CheckSpec], list[PluginProblem]]:
    specs = builtin()
    problems: list[PluginProblem] = []
    if with_plugins:
        extra, problems = plugins()
        specs = sorted(specs + extra, key=lambda s: s.id)
    return specs, problems


def find(ref: str, specs: list[CheckSpec]) -> Optional[CheckSpec]:
    ref_l = ref.strip().lower()
    for s in specs:
        if s.id.lower() == ref_l or s.symbol == ref_l:
            return s
    return None
