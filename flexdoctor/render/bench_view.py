"""Output of `flexdoctor bench`: a table with bars per shape (text), JSON (versioned, sorted keys)
or Markdown. Words come from the locale table ([bench] in locale/en.deep.toml and en.bench.toml).
The report is ``deep.bench.BenchReport`` (plain data)."""

from __future__ import annotations

import io
import json
from typing import Optional

from ..deep.bench import MODES, BenchReport, Measurement
from ..text import has, t
from ._escape import for_json, for_markdown, for_terminal, no_commands


def _fmt_bytes(n: Optional[int]) -> str:
    if n is None:
        return "—"
    return f"{n / 2**30:.2f} GiB" if n >= 2**28 else f"{n / 2**20:.0f} MiB"


def _tf(v: Optional[float]) -> str:
    if v is None:
        return "—"
    return f"{v:.1f}" if v >= 1 else f"{v:.3f}"


_STATUSES = ("ok", "oom", "unavailable", "error", "skipped", "timeout", "crash", "pending", "running")


def status_word(m: Measurement) -> str:
    return t(f"bench.status_{m.status}") if m.status in _STATUSES else m.status


def died_reason(m: Measurement) -> Optional[str]:
    """Why an item has no measurement when the worker process died on it, in words; else None."""
    if m.died_in is None:
        return None
    what = t({"timeout": "deep-run.hung", "crash": "deep-run.crashed"}.get(m.status, "deep-run.stopped"))
    line = t("bench.worker_failed", what=what, stage=m.died_in)
    return f"{line}: {m.reason}" if m.reason else line


def reason_text(m: Measurement) -> str:
    """The reason shown beside a status: the worker's death in words, flexdoctor's reason in the
    report's language, or torch's own words."""
    died = died_reason(m)
    if died:
        return died
    if m.reason_code and has(f"worker-reason.{m.reason_code}") and isinstance(m.reason_args, dict):
        return t(f"worker-reason.{m.reason_code}", **m.reason_args)
    return m.reason or ""


def _by_case(report: BenchReport) -> list:
    out = []
    for c in report.cases:
        out.append((c, [r for r in report.results if r.case == c.index]))
    return out


def gap_line(rows: list) -> Optional[str]:
    """eager flex vs compiled flex vs the fastest SDPA backend, fwd+bwd (the gap users care about)."""
    get = {(r.impl, r.mode): r for r in rows}
    eager, comp = get.get(("flex-eager", "fwdbwd")), get.get(("flex-compiled", "fwdbwd"))
    sdpa = [r for r in rows if r.impl.startswith("sdpa-") and r.mode == "fwdbwd" and r.status == "ok"]
    if comp is None or comp.status != "ok" or not sdpa or eager is None:
        return None
    best = min(sdpa, key=lambda r: r.ms)
    if eager.status == "oom":
        return t("bench.gap_oom", compiled=f"{comp.ms:.2f}", sdpa=f"{best.ms:.2f}",
                 sdpa_backend=best.impl[5:])
    if eager.status != "ok":
        return None
    return t("bench.gap", eager=f"{eager.ms:.2f}", compiled=f"{comp.ms:.2f}", sdpa=f"{best.ms:.2f}",
             sdpa_backend=best.impl[5:])


def _bar(ms: float, worst: float, width: int = 24) -> str:
    if worst <= 0:
        return ""
    cells = ms / worst * width
    full = int(cells)
    frac = cells - full
    parts = " ▏▎▍▌▋▊▉"
    tail = parts[int(frac * 8)] if full < width and frac > 0 else ""
    return ("█" * full + tail).rstrip() or "▏"


def header(report: BenchReport) -> str:
    env = report.env
    triton = f" · triton {env['triton']}" if env.get("triton") else ""
    cuda = f" (CUDA {env['cuda']})" if env.get("cuda") and env.get("device") == "cuda" else ""
    return for_terminal(t("bench.header", device=(env.get("device_name") or env.get("device") or "?"),
                          torch=f"{env.get('torch', '?')}{cuda}", triton=triton, when=report.started_at or "?"))


def render_text(report: BenchReport, color: bool = False, width: int = 120) -> str:
    from rich.cells import cell_len
    from rich.table import Table

    from ._common import console as make_console

    buf = io.StringIO()
    console = make_console(file=buf, force_terminal=color, no_color=not color, width=max(width, 100),
                           highlight=False, soft_wrap=False)
    console.print(header(report))
    for case, rows in _by_case(report):
        console.print()
        console.print(for_terminal(case.label()), style="bold")
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
        for col, just in (("col_impl", "left"), ("col_mode", "left"), ("col_ms", "right"), ("col_tflops", "right"),
                          ("col_mem", "right"), ("col_compile", "right")):
            title = t(f"bench.{col}")
            # Terminal cells, not characters: a Japanese title is twice as wide as its length. The
            # implementation names are never cut; the bars and reasons column gives way instead.
            least = max(cell_len(title), 8, *(len(r.impl) for r in rows)) if col == "col_impl" else max(cell_len(title), 8)
            table.add_column(title, justify=just, no_wrap=True, min_width=least)
        # The last column wraps (torch's refusal reasons are long and are the point), never cuts.
        table.add_column(t("bench.col_speed"), overflow="fold", ratio=1)
        worst = max((r.ms for r in rows if r.status == "ok" and r.ms), default=0.0)
        for mode in MODES:
            mode_rows = [r for r in rows if r.mode == mode]
            ok_ms = [r.ms for r in mode_rows if r.status == "ok" and r.ms]
            best = min(ok_ms) if ok_ms else None
            for r in mode_rows:
                if r.status == "ok":
                    ms = f"{r.ms:.3f}"
                    bar = _bar(r.ms, worst)
                    style = "green" if r.ms == best else None
                    if r.impl == "flex-compiled" and r.compiled is False:
                        bar += " " + t("bench.eager_fallback")
                    table.add_row(for_terminal(r.impl), t(f"bench.{mode}"), ms,
                                  _tf(r.tflops), _fmt_bytes(r.peak_bytes),
                                  f"{r.first_call_s:.2f}" if r.first_call_s is not None else "—", bar, style=style)
                else:
                    reason = reason_text(r).strip()
                    why = for_terminal(" ".join(ln.strip() for ln in reason.splitlines() if ln.strip()))
                    table.add_row(for_terminal(r.impl), t(f"bench.{mode}"), "—", "—", "—", "—",
                                  status_word(r) + (f": {why}" if why else ""), style="dim")
        console.print(table)
        gap = gap_line(rows)
        if gap:
            console.print(for_terminal(gap))
    console.print()
    console.print(for_terminal(t("bench.footer", reps=report.settings.get("reps", "?"))), style="dim")
    return no_commands(buf.getvalue())


def render_json(report: BenchReport) -> str:
    return for_json(json.dumps(report.to_dict(), indent=2, sort_keys=True) + "\n")


def render_markdown(report: BenchReport) -> str:
    out = [f"**{for_markdown(header(report))}**", ""]
    cols = [t(f"bench.md_{c}") for c in ("shape", "impl", "fwd_ms", "fwd_tflops", "fwdbwd_ms", "fwdbwd_tflops",
                                         "peak", "first")]
    out.append("| " + " | ".join(cols) + " |")
    out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case, rows in _by_case(report):
        impls = []
        for r in rows:
            if r.impl not in impls:
                impls.append(r.impl)
        for impl in impls:
            f = next((r for r in rows if r.impl == impl and r.mode == "fwd"), None)
            b = next((r for r in rows if r.impl == impl and r.mode == "fwdbwd"), None)
            if all(x is None or x.status == "unavailable" for x in (f, b)):
                continue
            first = max((x.first_call_s for x in (f, b) if x is not None and x.first_call_s is not None), default=None)
            out.append(f"| {for_markdown(case.label(), table=True)} | {for_markdown(impl, table=True)} | "
                       f"{_cell(f, 'ms')} | {_cell(f, 'tf')} | {_cell(b, 'ms')} | "
                       f"{_cell(b, 'tf')} | {_fmt_bytes(b.peak_bytes if b and b.status == 'ok' else None)} | "
                       f"{'—' if first is None else f'{first:.2f}'} |")
    out.append("")
    gaps = [(c, gap_line(rows)) for c, rows in _by_case(report)]
    for c, g in gaps:
        if g:
            out.append(f"- {for_markdown(c.label())}: {for_markdown(g)}")
    out.append("")
    out.append(for_markdown(t("bench.footer", reps=report.settings.get("reps", "?"))))
    return no_commands("\n".join(out) + "\n")


def _cell(m: Optional[Measurement], what: str) -> str:
    if m is None:
        return "—"
    if m.status != "ok":
        return t("bench.md_oom") if m.status == "oom" else for_markdown(status_word(m), table=True)
    v = m.ms if what == "ms" else m.tflops
    return "—" if v is None else (f"{v:.3f}" if what == "ms" else _tf(v))
