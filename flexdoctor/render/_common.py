"""Pieces every human-readable renderer shares."""

from __future__ import annotations

from ..checks.base import AREAS
from ..model import Report, Result, Status
from ..text import t

ICONS = {Status.PASS: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.SKIP: "-", Status.ERROR: "E"}


def grouped(report: Report) -> list[tuple[str, list[Result]]]:
    order = {a: i for i, a in enumerate(AREAS)}
    areas: dict[str, list[Result]] = {}
    for r in report.results:
        areas.setdefault(r.area, []).append(r)
    return sorted(areas.items(), key=lambda kv: order.get(kv[0], len(order)))


def summary_line(report: Report) -> str:
    c = report.counts()
    return t("report.summary", passed=c["pass"], warned=c["warn"], failed=c["fail"],
             skipped=c["skip"], errors=c["error"])
