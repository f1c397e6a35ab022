"""The check interface: a pure function ``Facts -> Finding | None`` with a stable ID.

A check is declared with :func:`check`::

    @check("FD101", "gpu-present", area="gpu")
    def gpu_present(facts: Facts) -> Finding | None:
        '''What it checks: ...

        Why it matters: ...

        How to fix: ...
        '''

Returning None means pass with the catalog's ``<symbol>.pass`` text. Raise :class:`Skip`
(``require(facts.x)`` does) when the facts it needs are missing. The docstring is the
documentation ``flexdoctor rules ID`` prints; titles and messages come from the locale catalog
(``flexdoctor/locale/en.toml``) under the check's symbol. Third-party checks use the same
decorator and are registered through the ``flexdoctor.checks`` entry-point group.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Callable, Optional

from ..facts import Facts
from ..model import Finding, Fix, Status
from ..text import has, t

CheckFunc = Callable[[Facts], Optional[Finding]]

ID_RE = re.compile(r"^FD\d{3}$")
SYMBOL_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
AREAS = ("platform", "gpu", "torch", "compiler", "toolchain", "cache", "diffusers", "deep", "multigpu", "plugin")
DOC_HEADINGS = ("What it checks:", "Why it matters:", "How to fix:")


@dataclass(frozen=True)
class CheckSpec:
    id: str
    symbol: str
    area: str
    func: CheckFunc
    # Plugins may carry their own title instead of a catalog entry.
    title_text: Optional[str] = None

    @property
    def title(self) -> str:
        if self.title_text:
            return self.title_text
        return t(f"{self.symbol}.title")

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.func.__doc__ or "")

    def problems(self) -> list[str]:
        """Why this spec is not a valid check (empty when it is): used for plugins and tests."""
        out = []
        if not ID_RE.match(self.id):
            out.append(t("plugin-load.bad_id", id=repr(self.id)))
        if not SYMBOL_RE.match(self.symbol):
            out.append(t("plugin-load.bad_symbol", symbol=repr(self.symbol)))
        if self.area not in AREAS:
            out.append(t("plugin-load.bad_area", area=repr(self.area), areas=", ".join(AREAS)))
        for heading in DOC_HEADINGS:
            if heading not in self.doc:
                out.append(t("plugin-load.no_heading", heading=heading))
        if not self.title_text and not has(f"{self.symbol}.title"):
            out.append(t("plugin-load.no_title", symbol=self.symbol))
        return out


_DECLARED: list[CheckSpec] = []


def check(id: str, symbol: str, area: str, title: Optional[str] = None) -> Callable[[CheckFunc], CheckFunc]:
    def wrap(func: CheckFunc) -> CheckFunc:
        spec = CheckSpec(id=id, symbol=symbol, area=area, func=func, title_text=title)
        func.spec = spec  # type: ignore[attr-defined]
        _DECLARED.append(spec)
        return func

    return wrap


# Small constructors so check bodies read as judgements, and every word comes from the catalog.
def _finding(status: Status, key: str, fix: Optional[Fix], details, kw) -> Finding:
    return Finding(status=status, message=t(key, **kw), fix=fix, details=tuple(details))


def passed(key: str, *, details=(), **kw) -> Finding:
    return _finding(Status.PASS, key, None, details, kw)


def note(key: str, fix: Optional[Fix] = None, *, details=(), **kw) -> Finding:
    """Worth knowing, nothing breaks and nothing is lost here: never fails, even under --strict
    (a profile or the settings' severity table can raise it to warn or fail)."""
    return _finding(Status.NOTE, key, fix, details, kw)


def warn(key: str, fix: Optional[Fix] = None, *, details=(), **kw) -> Finding:
    return _finding(Status.WARN, key, fix, details, kw)


def fail(key: str, fix: Optional[Fix] = None, *, details=(), **kw) -> Finding:
    return _finding(Status.FAIL, key, fix, details, kw)


def skip(key: str, **kw) -> Finding:
    return _finding(Status.SKIP, key, None, (), kw)
