"""Output of `flexdoctor explain`: text for people, JSON (sorted keys, versioned) for tools."""

from __future__ import annotations

import json

from .. import __version__
from ..knowledge.explain import Hit, Problem, Result, fix_for
from ..knowledge.structural import Answer
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


def _answer_text(index: int, a: Answer, width: int) -> list[str]:
    # What the log said (its line, the package, versions) is outside text: one visible line each.
    wrap = lambda s: _wrap(for_terminal(s), width, "    ")  # noqa: E731
    out = [f"[{index}] {a.id} {a.kind}: {for_terminal(a.title)}",
           f"    {t('explain.line', line=a.line)}: {for_terminal(_shorten(a.text))}",
           "    " + t("explain.confidence", level=t(f"explain.confidence_{a.confidence}"))]
    out += ["", f"  {t('explain.cause')}:", wrap(a.cause), "", f"  {t('explain.fix')}:", wrap(a.fix.summary)]
    out += [f"    $ {for_terminal(c)}" for c in a.fix.commands]
    said = ", ".join(f"{k} {v}" for k, v in a.facts.items() if k != "conda") + (", conda" if a.facts.get("conda") else "")
    if said:
        out += ["", _wrap(for_terminal(t("explain.read_from_log", facts=said)), width, "  ")]
    if a.package:
        out += [_wrap(for_terminal(t("explain.from_package", package=a.package)), width, "  ")]
    return out


def _shorten(text: str) -> str:
    text = text.strip()
    return text if len(text) <= 300 else text[:299] + "…"


def _item_text(index: int, item, width: int) -> list[str]:
    return _answer_text(index, item, width) if isinstance(item, Answer) else _problem_text(index, item, width)


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
    items = [x for x in result.ordered() if not (isinstance(x, Answer) and x.kind == "unknown")]
    unknown = [a for a in result.answers if a.kind == "unknown"]
    if not items:
        out = [t("explain.none", source=source, lines=result.lines), t("explain.none_hint")]
        for a in unknown:
            out += [""] + _answer_text(1, a, width)
        return "\n".join(out + _notes_text(result, width, 1 + len(unknown))) + "\n"
    n = len(items)
    head = (t("explain.found_one", source=source, lines=result.lines) if n == 1
            else t("explain.found_many", count=n, source=source, lines=result.lines))
    out = [head]
    for i, item in enumerate(items, start=1):
        out += [""] + _item_text(i, item, width)
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
        "kind": "entry",
        "subject": e.id,
        "confidence": "high",
    }


def _answer_dict(a: Answer) -> dict:
    return {
        "id": a.id,
        "symbol": a.kind,
        "title": a.title,
        "rank": a.rank,
        "cause": a.cause,
        "fix": a.fix.to_dict(),
        "applies": None,
        "matches": [{"line": a.line, "text": _shorten(a.text)}],
        "match_count": 1,
        "kind": a.kind,
        "subject": a.subject,
        "confidence": a.confidence,
        "package": a.package,
    }


def _item_dict(item) -> dict:
    return _answer_dict(item) if isinstance(item, Answer) else _problem_dict(item)


def render_json(result: Result, source: str) -> str:
    doc = {
        "schema_version": EXPLAIN_SCHEMA_VERSION,
        "flexdoctor_version": __version__,
        "source": source,
        "lines": result.lines,
        "found": result.found,
        "problems": [_item_dict(x) for x in result.ordered() if not (isinstance(x, Answer) and x.kind == "unknown")],
        "log": result.log.to_dict() if result.log is not None else {},
    }
    unknown = [a for a in result.answers if a.kind == "unknown"]
    if unknown:  # nothing known: the root error, where it came from, what to attach
        doc["unknown"] = _answer_dict(unknown[0])
    if result.notes:  # harmless notices (deprecations and the like): never counted as problems
        doc["notes"] = [_problem_dict(p) for p in result.notes]
    return for_json(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def render(result: Result, source: str, fmt: str = "text", width: int = 100) -> str:
    if fmt == "json":
        return render_json(result, source)
    return render_text(result, source, width)
