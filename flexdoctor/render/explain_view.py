"""Output of `flexdoctor explain`: text for people, JSON (sorted keys, versioned) for tools."""

from __future__ import annotations

import json

from .. import __version__
from ..knowledge.explain import Hit, Problem, Result, fix_for
from ..text import t
from ._common import wrap as _wrap
from ._escape import for_json, for_terminal, no_commands

EXPLAIN_SCHEMA_VERSION = 1


def _where(hit: Hit) -> str:
    if hit.first_line is not None:
        return t("explain.lines", first=hit.first_line, line=hit.line)
    return t("explain.line", line=hit.line)


def _problem_text(index: int, p: Problem, width: int) -> list[str]:
    e = p.entry
    fix = fix_for(p)
    # Log lines, and the fix filled from them, are outside text: one visible line each.
    wrap = lambda s: _wrap(for_terminal(s), width, "    ")  # noqa: E731  (terminal cells: CJK and Devanagari fit)
    out = [f"[{index}] {e.id} {e.symbol}: {for_terminal(e.title)}"]
    for h in p.hits:
        out.append(f"    {_where(h)}: {for_terminal(h.text)}")
    if p.count > len(p.hits):
        out.append("    " + t("explain.more_lines", count=p.count))
    out += ["", f"  {t('explain.cause')}:", wrap(e.cause), "", f"  {t('explain.fix')}:", wrap(fix.summary)]
    out += [f"    $ {for_terminal(c)}" for c in fix.commands]
    if e.applies:
        out += ["", _wrap(f"{t('explain.applies')}: {for_terminal(e.applies)}", width, "  ")]
    out += ["", "  " + t("explain.see", id=e.id)] + [f"  {for_terminal(link)}" for link in e.links]
    return out


def _notes_text(result: Result, width: int, start: int) -> list[str]:
    if not result.notes:
        return []
    out = ["", t("explain.notes_head", count=len(result.notes))]
    for i, p in enumerate(result.notes, start=start):
        out += [""] + _problem_text(i, p, width)
    return out


def render_text(result: Result, source: str, width: int = 100) -> str:
    return no_commands(_text(result, for_terminal(source), max(40, min(width, 120)) - 4))


def _text(result: Result, source: str, width: int) -> str:
    if not result.found:
        out = [t("explain.none", source=source, lines=result.lines), t("explain.none_hint")]
        return "\n".join(out + _notes_text(result, width, 1)) + "\n"
    n = len(result.problems)
    head = (t("explain.found_one", source=source, lines=result.lines) if n == 1
            else t("explain.found_many", count=n, source=source, lines=result.lines))
    out = [head]
    for i, p in enumerate(result.problems, start=1):
        out += [""] + _problem_text(i, p, width)
    out += _notes_text(result, width, n + 1)
    return "\n".join(out) + "\n"


def _problem_dict(p: Problem) -> dict:
    e = p.entry
    fix = fix_for(p)
    return {
        "id": e.id,
        "symbol": e.symbol,
        "title": e.title,
        "rank": e.rank,
        "cause": e.cause,
        "fix": fix.to_dict(),
        "applies": e.applies,
        "matches": [h.to_dict() for h in p.hits],
        "match_count": p.count,
    }


def render_json(result: Result, source: str) -> str:
    doc = {
        "schema_version": EXPLAIN_SCHEMA_VERSION,
        "flexdoctor_version": __version__,
        "source": source,
        "lines": result.lines,
        "found": result.found,
        "problems": [_problem_dict(p) for p in result.problems],
    }
    if result.notes:  # harmless notices (deprecations and the like): never counted as problems
        doc["notes"] = [_problem_dict(p) for p in result.notes]
    return for_json(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def render(result: Result, source: str, fmt: str = "text", width: int = 100) -> str:
    if fmt == "json":
        return render_json(result, source)
    return render_text(result, source, width)
