"""The time line of `flexdoctor trace --timeline FILE`: one self-contained HTML file (inline SVG
and CSS, no script, nothing fetched), one row per process, one coloured box per phase segment.
Every piece of text from outside (the command, frame names, paths, torch's words) is escaped."""

from __future__ import annotations

import html
import math

from ..timing import PHASES
from ..trace import TraceResult
from . import trace_view

COLORS = {
    "interpreter": "#9e9e9e", "script": "#cfd8dc", "import_torch": "#7e57c2", "import_compiler": "#b39ddb",
    "pool_start": "#ffb300", "dynamo": "#42a5f5", "cache": "#26c6da", "compile": "#ef5350",
    "kernel_load": "#ff7043", "first_forward": "#66bb6a", "first_backward": "#2e7d32", "later_steps": "#a5d6a7",
    "exit_pool": "#ffa000", "exit_atexit": "#ffe082", "exit_teardown": "#8d6e63", "other": "#eeeeee",
}
WIDTH, LABEL, ROW, TOP = 1100, 190, 30, 30
MIN_PX = 0.25  # segments narrower than this are not drawn (they still count in the totals)


def _e(text: object) -> str:
    """Text as HTML: control characters written as \\xNN (trace_view.show), markup escaped."""
    return html.escape(trace_view.show(str(text)), quote=True)


def _step(span: float) -> float:
    """A round tick interval giving about eight ticks over ``span`` seconds."""
    raw = max(span / 8.0, 1e-3)
    base = 10 ** math.floor(math.log10(raw))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= raw)


def _rows(result: TraceResult) -> list:
    m = result.measurement
    shown = [p for p in m.processes if p.role in ("launcher", "main", "rank")] or m.processes[:1]
    return [p for p in shown if p.segments]


def _axis(span: float, plot: float, height: int) -> list:
    out = []
    step = _step(span)
    k = 0
    while k * step <= span + 1e-9:
        x = LABEL + k * step / span * plot
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{height}" class="grid"/>'
                   f'<text x="{x:.1f}" y="{TOP - 10}" class="tick">{k * step:g} s</text>')
        k += 1
    return out


def _row(p, y: int, origin: float, span: float, plot: float) -> list:
    out = [f'<text x="{LABEL - 8}" y="{y + ROW / 2 + 4:.1f}" class="label">{_e(trace_view.who(p))}</text>']
    for phase, t0, t1 in p.segments:
        x0 = LABEL + (t0 - origin) / span * plot
        w = (t1 - t0) / span * plot
        if w < MIN_PX:
            continue
        tip = f"{trace_view.t('trace.phase.' + phase)}: {t0 - origin:.3f}-{t1 - origin:.3f} s ({t1 - t0:.3f} s)"
        out.append(f'<rect x="{x0:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 6}" fill="{COLORS.get(phase, "#999")}">'
                   f'<title>{_e(tip)}</title></rect>')
    return out


def svg(result: TraceResult) -> str:
    rows = _rows(result)
    origin = result.measurement.spawn or min((p.start or 0.0) for p in rows) if rows else 0.0
    end = max((p.exit or origin) for p in rows) if rows else origin + 1.0
    span = max(end - origin, 1e-3)
    plot = WIDTH - LABEL - 20
    height = TOP + ROW * max(len(rows), 1) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" role="img">']
    parts += _axis(span, plot, height - 10)
    for i, p in enumerate(rows):
        parts += _row(p, TOP + i * ROW, origin, span, plot)
    parts.append("</svg>")
    return "\n".join(parts)


def _legend(result: TraceResult) -> str:
    workers = result.measurement.workers()
    p = max(workers, key=lambda w: w.wall or 0.0) if workers else None
    items = []
    for phase in PHASES:
        seconds = p.seconds(phase) if p else 0.0
        if seconds <= 0:
            continue
        items.append(f'<li><span class="sw" style="background:{COLORS[phase]}"></span>'
                     f'{_e(trace_view.t("trace.phase." + phase))} <b>{seconds:.2f} s</b></li>')
    return "<ul class=\"legend\">" + "".join(items) + "</ul>"


def _list(title: str, lines: list) -> str:
    if not lines:
        return ""
    return f"<h2>{_e(title)}</h2><ul>" + "".join(f"<li>{_e(x)}</li>" for x in lines) + "</ul>"


STYLE = """body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:18px}h2{font-size:15px;margin-top:22px}code{background:#f4f4f4;padding:1px 4px}
.grid{stroke:#e0e0e0}.tick{font-size:11px;fill:#666;text-anchor:middle}
.label{font-size:12px;text-anchor:end;fill:#333}.legend{list-style:none;padding:0}
.legend li{display:inline-block;margin:2px 14px 2px 0}.sw{display:inline-block;width:12px;height:12px;
margin-right:5px;vertical-align:-1px}"""


def render(result: TraceResult) -> str:
    m = result.measurement
    findings = [trace_view.finding_text(f) for f in result.findings]
    advice = [trace_view.advice_text(a) + (f"  [{a.command}]" if a.command else "") for a in result.advice]
    head = trace_view.t("trace.header", command=" ".join(str(a) for a in result.command))
    wall = trace_view.t("trace.ran", seconds=trace_view._s(m.wall), code=m.returncode) if m.wall else ""
    return "\n".join([
        "<!DOCTYPE html>", '<html><head><meta charset="utf-8">', f"<title>{_e(head)}</title>",
        f"<style>{STYLE}</style></head><body>", f"<h1>{_e(head)}</h1>", f"<p>{_e(wall)}</p>",
        svg(result), _legend(result),
        _list(trace_view.t("trace.title.findings"), findings or [trace_view.t("trace.title.findings_none")]),
        _list(trace_view.t("trace.title.advice"), advice),
        "</body></html>", ""])
