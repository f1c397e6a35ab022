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


def plugins() -> tuple[list[CheckSpec], list[PluginProblem]]:
    from importlib.metadata import entry_points

    from ..text import t
    from . import base

    found: list[CheckSpec] = []
    problems: list[PluginProblem] = []
    try:
        eps = entry_points(group="flexdoctor.checks")
    except TypeError:  # Python 3.9
        eps = entry_points().get("flexdoctor.checks", [])
    taken = {s.id for s in builtin()}
    for ep in eps:
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
