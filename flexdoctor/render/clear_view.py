"""Text view of a clear-cache plan and outcome (cache/clear.py). Plain lines, no markup: paths
are printed as they are, with control characters escaped so a file name cannot forge a line
(render/_escape.py), and no line is a CI workflow command."""

from __future__ import annotations

from ..text import has, t
from ._escape import for_terminal, no_commands

LIST_LIMIT = 10  # units and kept entries shown outside --dry-run (which lists them all)


def size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(n)


def show(text: object) -> str:
    """``text`` with control characters, line breaks and undecodable bytes written visibly
    (``\\x1b``, ``\\n``, ``\\xff``: render/_escape.py ``for_terminal``)."""
    return for_terminal(text)


def _rel(unit_or_kept, is_dir: bool) -> str:
    return show(unit_or_kept.rel) + ("/" if is_dir else "")


def _state_lines(cp) -> list:
    if cp.state == "refused":
        return [t(f"clear.refused.{cp.why}", **{k: show(str(v)) for k, v in cp.why_args.items()})]
    if cp.state == "off":
        return [t(f"clear.state.{cp.why}")]
    if cp.state in ("absent", "empty", "with-inductor", "inside"):
        return [t(f"clear.state.{cp.state}", **{k: show(str(v)) for k, v in cp.why_args.items()})]
    return [t("clear.size", count=len(cp.units), size=size(cp.bytes))]


def _note(cp, word: str, args: dict) -> str:
    writer = t(f"clear.writer.{cp.kind}")
    if word == "blank" and has(f"clear.note.blank_{args.get('var')}"):
        return t(f"clear.note.blank_{args['var']}")
    return t(f"clear.note.{word}", writer=writer, **args)


def _kept_line(cp, k) -> str:
    why = t(f"clear.kept_why.{k.reason}", writer=t(f"clear.writer.{cp.kind}"))
    return t("clear.kept", why=why, rel=_rel(k, k.reason in ("empty", "mixed")))


def cache_lines(cp, list_all: bool) -> list:
    head = t("clear.cache", kind=cp.kind, path=show(cp.path), source=cp.source) if cp.path else \
        t("clear.cache_nopath", kind=cp.kind, source=cp.source)
    lines = [head] + _state_lines(cp)
    lines += [_note(cp, word, args) for word, args in cp.notes]
    units = cp.units if list_all else cp.units[:LIST_LIMIT]
    lines += [t("clear.delete", rel=_rel(u, u.is_dir)) for u in units]
    if len(cp.units) > len(units):
        lines.append(t("clear.more_delete", count=len(cp.units) - len(units)))
    kept = cp.kept if list_all else cp.kept[:LIST_LIMIT]
    lines += [_kept_line(cp, k) for k in kept]
    if len(cp.kept) > len(kept):
        lines.append(t("clear.more_kept", count=len(cp.kept) - len(kept)))
    return [no_commands(line) for line in lines]


def plan_lines(plan, dry_run: bool) -> list:
    """The plan: every cache, what goes and what stays (all of it in a dry run)."""
    lines = [t("clear.heading_dry" if dry_run else "clear.heading")]
    for cp in plan.caches:
        lines += cache_lines(cp, list_all=dry_run)
    if not plan.count:
        lines.append(t("clear.nothing"))
    elif dry_run:
        lines.append(t("clear.would_free", size=size(plan.bytes), count=plan.count))
    return lines


def outcome_lines(outcome) -> list:
    lines = [t("clear.freed", size=size(outcome.freed), bytes=outcome.freed, count=outcome.deleted)]
    problems = []
    for co in outcome.caches:
        for rel, word, detail in co.errors:
            key = "clear.changed" if word == "changed" else "clear.not_deleted"
            problems.append(t(key, rel=show(rel), detail=show(detail)))
        problems += [t("clear.left", rel=show(rel)) for rel in co.left]
    lines += problems[:LIST_LIMIT]
    if len(problems) > LIST_LIMIT:
        lines.append(t("clear.more_errors", count=len(problems) - LIST_LIMIT))
    return [no_commands(line) for line in lines]


def holder(h, path: str) -> str:
    """Who holds the cache (cache/clear.py Holder): a warm-cache or another clear-cache, with its
    pid and command line when known."""
    kind = "warm" if h.kind == "warm-cache" else "clear"
    if h.pid is None:
        return no_commands(t("clear.warm_running" if kind == "warm" else "clear-lock.clear", path=show(path)))
    return no_commands(t(f"clear-lock.{kind}_pid", path=show(path), pid=h.pid, command=show(h.command or "?")))


def prompt(plan) -> str:
    return t("clear.prompt", count=plan.count, size=size(plan.bytes))
