"""warm-cache's result as Markdown (a CI job summary, a pull request): one row per config with its
status, compile time, warm first call, cache hits and its fresh process's wall time and largest
phases; then the problems, and the command for training time with the measurement behind it.
Every value from outside (config names hold kernel options, paths, torch's errors) is escaped."""

from __future__ import annotations

from typing import Any

from ..text import seconds, t
from . import warm_view
from ._escape import code_block, for_markdown, no_commands


def _row(o: Any) -> str:
    p = o.process or {}
    phases = t("warm-trace.sep").join(t("warm-trace.phase", phase=warm_view.phase_word(n), seconds=seconds(v))
                                      for n, v in warm_view.top_phases(p)) if p.get("booted") else ""
    cells = [o.workload.name, warm_view.status_word(o.status()), seconds(warm_view.compile_seconds(o)),
             seconds((o.warm or {}).get("first_call_s")), warm_view._hits((o.warm or {}).get("counters") or {}),
             seconds(p.get("wall_s")), phases]
    return "| " + " | ".join(for_markdown(c, table=True) for c in cells) + " |"


def _problems(result: Any) -> list:
    out = []
    for o in result.outcomes:
        if o.failed:
            error = warm_view._last_line(o.error) or warm_view.status_word("failed")
            out.append("- " + for_markdown(t("warm.failed", name=o.workload.name,
                                             error=(f"{o.error_stage}: " if o.error_stage else "") + error)))
        elif o.hit is False:
            out.append("- " + for_markdown(t("warm.missed", name=o.workload.name,
                                             counters=(o.warm or {}).get("counters"))))
    return out


def render(result: Any) -> str:
    out = [f"### {for_markdown(t('warm-trace.md_title'))}", ""]
    if result.outcomes:
        heads = [t("warm.col_config"), t("warm.col_status"), t("warm.col_compile"), t("warm.col_warm_first"),
                 t("warm.col_hits"), t("warm-trace.md_process"), t("warm-trace.md_phases")]
        out += ["| " + " | ".join(for_markdown(h, table=True) for h in heads) + " |",
                "|" + "|".join(["---", "---"] + ["---:"] * 4 + ["---"]) + "|"]
        out += [_row(o) for o in result.outcomes]
        out.append("")
    problems = _problems(result)
    if problems:
        out += problems + [""]
    hits = [o for o in result.outcomes if o.hit is not None]
    if hits:
        ok = sum(1 for o in hits if o.hit)
        out += [for_markdown(t("warm.hits", ok=ok, total=len(hits), percent=100 * ok // len(hits))), ""]
    out += [f"**{for_markdown(t('warm-trace.md_advice'))}**", ""]
    env = result.training_env
    out += code_block(["export " + " ".join(f"{k}={warm_view.quote(v)}" for k, v in env.items())])
    for line in (warm_view.measured_line(result.measured), warm_view.pool_line(result.measured)):
        if line:
            out += ["", for_markdown(line)]
    return no_commands("\n".join(out) + "\n")
