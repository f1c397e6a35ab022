"""What the explain tests of the structural layer share: scan a text, its first answer (alone, or with
its fix as one text: entry or structural alike, through ``explain.item_fix``), a traceback of frames,
and the healthy check."""

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


def first_with_fix(text: str):
    """The first answer and its fix as one text."""
    top = first(text)
    return top, fix_text(top)


def frames(*pairs: tuple[str, str], line: int = 210) -> str:
    """A traceback whose frames are (path, code) pairs, outermost first."""
    out = "Traceback (most recent call last):\n"
    for path, code in pairs:
        out += f'  File "{path}", line {line}, in fn\n    {code}\n'
    return out


def ident(item) -> str:
    return item.entry.id if hasattr(item, "entry") else f"{item.kind}:{item.subject}"


def healthy(text: str) -> None:
    result = scan(text)
    assert not result.found and not any(a.kind == "unknown" for a in result.answers), \
        [ident(x) for x in result.ordered()]
