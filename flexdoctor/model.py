"""Results of checks and the report that renderers turn into text, JSON and the rest."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

from .facts import Facts

REPORT_SCHEMA_VERSION = 1


class Status(str, enum.Enum):
    """The levels of a result (README "Levels"): pass; note (worth knowing, nothing breaks and
    nothing is lost: never fails, not even under --strict); warn (something will break or cost
    you: fails under --strict); fail (will not work: exit 1); skip (does not apply here);
    error (the check itself crashed: exit 1)."""

    PASS = "pass"
    NOTE = "note"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """Severity order used to combine per-GPU findings: the worst wins."""
        return _RANK[self]


_RANK = {Status.SKIP: 0, Status.PASS: 1, Status.NOTE: 2, Status.WARN: 3, Status.ERROR: 4, Status.FAIL: 5}


@dataclass(frozen=True)
class Fix:
    """How to fix a finding: a sentence and copy-pasteable commands (data, not prose in code)."""

    summary: str
    commands: tuple[str, ...] = ()
    kb: Optional[str] = None  # knowledge-base entry the fix comes from
    links: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "summary": self.summary,
            "commands": list(self.commands),
            "kb": self.kb,
            "links": list(self.links),
        }


@dataclass(frozen=True)
class Finding:
    """What a check returns: a status, one sentence, an optional fix, optional detail lines."""

    status: Status
    message: str
    fix: Optional[Fix] = None
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    id: str
    symbol: str
    title: str
    area: str
    status: Status
    message: str
    fix: Optional[Fix] = None
    details: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "symbol": self.symbol,
            "title": self.title,
            "area": self.area,
            "status": self.status.value,
            "message": self.message,
            "fix": self.fix.to_dict() if self.fix else None,
            "details": list(self.details),
        }


@dataclass(frozen=True)
class SettingsNote:
    """A settings file not used, or the folder where the settings search stopped, and why.

    ``kind``: ``not-used`` (a file) or ``stopped`` (a folder); ``reason``: a safety.Verdict word
    (foreign-owner, writable-by-others, parent-foreign-owner, parent-writable,
    link-foreign-owner, cannot-inspect); ``offender``: the path that makes it unsafe."""

    kind: str
    path: str
    reason: str
    offender: str
    owner: Optional[int] = None
    mode: Optional[int] = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "path": self.path, "reason": self.reason, "offender": self.offender,
                "owner": self.owner, "mode": None if self.mode is None else oct(self.mode)}


@dataclass(frozen=True)
class SettingsUsed:
    """Which settings file a report was judged under: ``source`` is ``--settings`` (named on the
    command line), ``search`` (found in the current folder or a parent) or ``none`` (defaults)."""

    path: Optional[str] = None
    source: str = "none"
    notes: tuple[SettingsNote, ...] = ()

    def to_dict(self) -> dict:
        return {"path": self.path, "source": self.source, "notes": [n.to_dict() for n in self.notes]}


@dataclass(frozen=True)
class Report:
    results: tuple[Result, ...]
    facts: Facts
    flexdoctor_version: str
    strict: bool = False
    profile: Optional[str] = None
    settings: Optional[SettingsUsed] = None

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Status}
        for r in self.results:
            out[r.status.value] += 1
        return out

    def fails(self, result: Result) -> bool:
        """Does this result make the run fail (exit 1)? A failure, a check that crashed, or a
        warning under --strict (a note never fails). The one place this rule lives: the exit code and every renderer
        (text verdict, GitHub annotation level, JUnit failure) ask here."""
        return result.status in (Status.FAIL, Status.ERROR) or (self.strict and result.status == Status.WARN)

    @property
    def failed(self) -> bool:
        """True when the run should exit 1 (see :meth:`fails`)."""
        return any(self.fails(r) for r in self.results)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0
