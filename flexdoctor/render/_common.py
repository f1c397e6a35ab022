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


def human_bytes(n) -> str:
    """1536 -> '1.5 KiB'; None -> '?' (sizes in tables and summary lines)."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(n)


def seconds(v) -> str:
    return "—" if v is None else f"{v:.2f}"
