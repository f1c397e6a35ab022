"""Run checks over facts: a check that raises becomes an ``error`` result, Skip becomes ``skip``."""

from __future__ import annotations

import traceback
from typing import Optional

from . import __version__
from .checks import CheckSpec, PluginProblem
from .checks._util import skip_text
from .facts import Facts, Skip
from .model import Finding, Report, Result, Status
from .policy import Settings, apply, skipped_by_profile
from .text import has, t


def run_one(spec: CheckSpec, facts: Facts) -> Result:
    try:
        title = spec.title
    except Exception:
        title = spec.symbol
    try:
        finding = spec.func(facts)
        if finding is None:
            finding = Finding(Status.PASS, t(f"{spec.symbol}.pass") if has(f"{spec.symbol}.pass") else t("common.ok"))
        if not isinstance(finding, Finding):
            raise TypeError(f"check returned {type(finding).__name__}, not Finding")
    except Skip as exc:
        finding = Finding(Status.SKIP, skip_text(exc))
    except Exception as exc:
        tb = traceback.format_exc().strip().splitlines()[-3:]
        finding = Finding(Status.ERROR, t("common.check_crashed", error=f"{type(exc).__name__}: {exc}"),
                          details=tuple(tb))
    return Result(spec.id, spec.symbol, title, spec.area, finding.status, finding.message,
                  finding.fix, finding.details)


def run(
    specs: list[CheckSpec],
    facts: Facts,
    plugin_problems: Optional[list[PluginProblem]] = None,
    settings: Optional[Settings] = None,
) -> Report:
    """Run ``specs`` over ``facts`` under a profile/configuration (default: the default profile)."""
    settings = settings or Settings()
    results = []
    for spec in specs:
        if skipped_by_profile(spec, settings):
            results.append(Result(spec.id, spec.symbol, spec.title, spec.area, Status.SKIP,
                                  t("profile.skipped", profile=settings.profile.name)))
            continue
        r = apply(run_one(spec, facts), settings)
        if r is not None:
            results.append(r)
    for p in plugin_problems or ():
        results.append(Result("FD000", "plugin-load", t("plugin-load.title"), "plugin", Status.ERROR,
                              t("plugin-load.error", name=p.name, error=p.message)))
    return Report(results=tuple(results), facts=facts, flexdoctor_version=__version__,
                  strict=settings.strict, profile=settings.profile.name, settings=settings.used)
