"""Output of `flexdoctor cache why`: text for people, JSON (sorted keys, versioned) for tools."""

from __future__ import annotations

import json
import shlex
import textwrap

from .. import __version__
from .clear_view import show
from ..cache.why import SCHEMA_VERSION, Difference, Verdict, WhyResult
from ..cache.why import warm_command as why_warm_command
from ..text import t
from ._escape import for_json, for_terminal, no_commands

ICONS = {"hit": "✓", "miss": "✗", "bypass": "!", "uncached": "-"}
MAX_DIFFERENCES = 12


def warm_command(result: WhyResult) -> str:
    """The warm-cache command that warms exactly what ``result.command`` compiles."""
    return why_warm_command(result)


def _shorter(path: str) -> str:
    """Paths inside an installed package from the package down (torch/nn/attention/...)."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path




def _reason_text(v: Verdict, reason: str) -> str:
    if reason == "bypass":
        return t("why.reason.bypass", reason=show("; ".join(r for r in v.bypass if r)) or "?")
    if reason == "aot_bypass":
        return t("why.reason.aot_bypass", reason=show("; ".join(r for r in v.bypass if r)) or "?")
    if reason in ("entry_gone", "entry_unusable"):
        return t(f"why.reason.{reason}", label=show(v.closest or "?"))
    if reason == "whole_model":
        return t("why.reason.whole_model", frame=show(v.frame or "?"))
    return t(f"why.reason.{reason}")


def _value(d: Difference, value: str) -> str:
    if d.kind == "dynamic":
        return t("why.value.dynamic", symbols=value) if value else t("why.value.static")
    if d.kind == "system" and not value:
        return t("why.value.hash_only")
    return value


def _diff_lines(v: Verdict, wrap) -> list[str]:
    out = []
    for d in v.differences[:MAX_DIFFERENCES]:
        kind = t(f"why.kind.{d.kind}")
        label = t(f"why.name.{d.word}", **d.args) if d.word else d.name
        if d.kind in ("graph", "mod_code"):
            out.append(f"      {kind} ({label}):" if d.warmed or d.now else f"      {kind}: {label}")
            out += [f"        - {show(ln)}" for ln in (d.warmed or "").splitlines() if ln]
            out += [f"        + {show(ln)}" for ln in (d.now or "").splitlines() if ln]
        elif d.word == "inputs_other":
            out += wrap(f"{kind}: {show(label)}", "      ", "        ")
        else:
            out += wrap(f"{kind}: {show(label)}: {show(_value(d, d.warmed))} -> {show(_value(d, d.now))}", "      ",
                        "        ")
    if len(v.differences) > MAX_DIFFERENCES:
        out.append("      " + t("why.more", count=len(v.differences) - MAX_DIFFERENCES))
    return out


def _verdict_text(v: Verdict, wrap) -> list[str]:
    where = t("why.where", where=show(_shorter(v.where))) if v.where else ""
    title = (t("why.graph", id=show(v.compile_id or ""), frame=show(v.frame or "?"), where=where) if v.compile_id
             else t("why.graph_unknown"))
    rank = t("why.rank", rank=v.rank) if v.rank is not None else ""
    status = t(f"why.via.{v.via}") if v.status == "hit" and v.via else t("why.status." + v.status)
    head = f"{ICONS.get(v.status, '?')} {rank}{title}: {status}"
    out = [head]
    for lk in v.lookups:
        detail = t("why.detail", detail=lk["detail"]) if lk.get("detail") and lk["detail"] != lk["state"] else ""
        words = {"cache": t(f"why.cache.{lk['cache']}"), "state": lk["state"], "detail": detail,
                 "cache_key": (lk.get("key") or "-")[:12]}
        back = lk.get("backward")
        line = (t("why.lookup_nodir", **words) if back is None
                else t("why.lookup", direction=t(f"why.direction.{'backward' if back else 'forward'}"), **words))
        out.append("    " + line)
    for reason in v.reasons:
        if reason == "differs":
            continue
        out += wrap(_reason_text(v, reason), "    ", "      ")
    if v.closest and "differs" in v.reasons:
        src = t(f"why.source.{v.closest_source}") if v.closest_source in ("config", "run") else "?"
        out += wrap(t("why.closest", label=v.closest, source=src, count=len(v.differences)), "    ", "      ")
        out += _diff_lines(v, wrap)
    return out


def wrapper(width: int):
    width = max(60, min(width, 120))

    def wrap(text: str, first: str, rest: str) -> list[str]:
        return textwrap.wrap(for_terminal(text), width, initial_indent=first, subsequent_indent=rest,
                             break_long_words=False, break_on_hyphens=False) or [first.rstrip()]

    return wrap


def section_lines(result: WhyResult, wrap) -> list[str]:
    """The verdicts, their summary and the fix: what `cache why` says after its header, and the
    cache section of `flexdoctor trace`."""
    out = []
    if result.problem:
        out.append("")
        out += wrap("! " + t(f"why.problem.{result.problem}", what=", ".join(result.disabled_by),
                             count=result.compiles), "", "  ")
    for v in result.verdicts:
        out.append("")
        out += _verdict_text(v, wrap)
    if result.verdicts:
        c = result.counts()
        out += ["", t("why.summary", hit=c["hit"], miss=c["miss"], bypass=c["bypass"], total=len(result.verdicts))]
        if c["miss"]:
            out += [t("why.fix"), f"  $ {warm_command(result)}"]  # never wrapped: it is copied as it is
    return out


def render_text(result: WhyResult, width: int = 100) -> str:
    wrap = wrapper(width)
    cmd = " ".join(shlex.quote(str(a)) for a in result.command)
    out = [t("why.header", command=cmd)]
    if result.error:
        out.append(t("why.failed", error=result.error))
    elif result.seconds is not None:
        out.append(t("why.ran", seconds=f"{result.seconds:.1f}", code=result.returncode))
    out.append(t("why.cache_dir", path=result.cache_dir, source=result.cache_source))
    if result.torch_version:
        out.append(t("why.torch", version=result.torch_version))
    out.append(t("why.warmed", count=result.warmed) if result.warmed else t("why.warmed_none", version=__version__))
    out += section_lines(result, wrap)
    if result.trace_dir:
        out.append(t("why.trace_kept", path=result.trace_dir))
    # Commands, paths, torch's reasons and graph code are outside text: each line shown as one
    # visible line (a line break inside a value is \n), none a workflow command.
    return no_commands("\n".join(for_terminal(line) for line in out) + "\n")


def _verdict_dict(v: Verdict) -> dict:
    return {
        "compile_id": v.compile_id,
        "rank": v.rank,
        "frame": v.frame,
        "filename": v.filename,
        "line": v.line,
        "status": v.status,
        "via": v.via,
        "lookups": v.lookups,
        "reasons": list(v.reasons),
        "bypass_reasons": [r for r in v.bypass if r],
        "whole_model": v.whole_model,
        "closest": v.closest,
        "closest_source": v.closest_source,
        "differences": [{"kind": d.kind, "name": d.name, "warmed": d.warmed, "now": d.now, "word": d.word,
                         "args": dict(d.args)} for d in v.differences],
    }


def section_dict(result: WhyResult) -> dict:
    """The cache section as data (`cache why --format json` and `trace --format json`)."""
    return {
        "cache_dir": result.cache_dir,
        "cache_source": result.cache_source,
        "torch_version": result.torch_version,
        "trace_files": result.trace_files,
        "compiles": result.compiles,
        "warmed_graphs": result.warmed,
        "problem": result.problem,
        "disabled_by": list(result.disabled_by),
        "summary": result.counts(),
        "graphs": [_verdict_dict(v) for v in result.verdicts],
        "fix": warm_command(result) if result.counts()["miss"] else None,
    }


def render_json(result: WhyResult) -> str:
    doc = {
        "schema_version": SCHEMA_VERSION,
        "flexdoctor_version": __version__,
        "command": list(result.command),
        "returncode": result.returncode,
        "error": result.error,
        "seconds": result.seconds,
        "trace_dir": result.trace_dir,
        **section_dict(result),
    }
    return for_json(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def render(result: WhyResult, fmt: str = "text", width: int = 100) -> str:
    if fmt == "json":
        return render_json(result)
    return render_text(result, width)
