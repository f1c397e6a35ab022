"""`flexdoctor rules [ID]`: the check list, the knowledge base, or one entry in full."""

from __future__ import annotations

import textwrap
from typing import Optional

from .. import checks, knowledge


def _listing() -> str:
    specs, _ = checks.all_checks()
    out = ["Checks (flexdoctor check):"]
    for s in specs:
        out.append(f"  {s.id}  {s.symbol:<24} {s.title}")
    out += ["", "Knowledge base (fixes used by check, and by explain):"]
    for e in sorted(knowledge.entries().values(), key=lambda e: e.id):
        out.append(f"  {e.id} {e.symbol:<30} {e.title}")
    out += ["", "Print one in full: flexdoctor rules ID"]
    return "\n".join(out) + "\n"


def _entry(e: knowledge.Entry) -> str:
    wrap = lambda s: textwrap.fill(s, 96, initial_indent="  ", subsequent_indent="  ")  # noqa: E731
    out = [f"{e.id} {e.symbol}: {e.title}", ""]
    out += ["Cause:", wrap(e.cause), "", "Fix:", wrap(e.render().summary)]
    fix = e.render()
    if fix.commands:
        out += [""] + [f"  $ {c}" for c in fix.commands]
    if e.patterns:
        out += ["", "Recognised error text (regular expressions):"] + [f"  {p}" for p in e.patterns]
    if e.applies:
        out += ["", f"Applies to: {e.applies}"]
    if e.links:
        out += ["", "Sources:"] + [f"  {link}" for link in e.links]
    return "\n".join(out) + "\n"


PLUGIN_LOAD = """FD000 plugin-load: Third-party check plugins load
(area: plugin)

What it checks: every entry point in the `flexdoctor.checks` group imports and declares valid
checks (FD### id not taken, kebab-case symbol, known area, docstring with the three headings).

Why it matters: a broken plugin must not crash the doctor or hide the built-in checks; it is
reported as an error result instead, and `check` exits 1.

How to fix: fix or uninstall the plugin named in the message, or run `flexdoctor check --no-plugins`.
"""


def render(ref: Optional[str]) -> str:
    if not ref:
        return _listing()
    if ref.strip().lower() in ("fd000", "plugin-load"):
        return PLUGIN_LOAD
    specs, _ = checks.all_checks()
    spec = checks.find(ref, specs)
    if spec is not None:
        return f"{spec.id} {spec.symbol}: {spec.title}\n(area: {spec.area})\n\n{spec.doc}\n"
    return _entry(knowledge.get(ref))
