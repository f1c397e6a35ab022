"""What the explain tests of the structural layer share: scan a text, its first answer, an answer's
fix as one text (entry or structural alike, through ``explain.item_fix``), and the healthy check."""

from __future__ import annotations

import io

from flexdoctor.knowledge import explain as kbx


def scan(text: str) -> kbx.Result:
    return kbx.scan(io.BytesIO(text.encode()))


def first(text: str):
    items = scan(text).ordered()
    assert items, text
    return items[0]


def fix_text(item) -> str:
    fix = kbx.item_fix(item)
    return fix.summary + "\n" + "\n".join(fix.commands)


def ident(item) -> str:
    return item.entry.id if hasattr(item, "entry") else f"{item.kind}:{item.subject}"


def healthy(text: str) -> None:
    result = scan(text)
    assert not result.found and not any(a.kind == "unknown" for a in result.answers), \
        [ident(x) for x in result.ordered()]
