"""Pieces every human-readable renderer shares."""

from __future__ import annotations

import functools
import unicodedata

from ..checks.base import AREAS
from ..model import Report, Result, Status
from ..text import t
from ._escape import ascii_symbols

ICONS = {Status.PASS: "✓", Status.NOTE: "i", Status.WARN: "!", Status.FAIL: "✗", Status.SKIP: "-", Status.ERROR: "E"}
# Results whose fix is shown: the problems, and notes (a tip says how).
WITH_FIX = (Status.FAIL, Status.WARN, Status.ERROR, Status.NOTE)
# Where the output cannot carry ✓ and ✗ (PYTHONIOENCODING=ascii, a cp1252 agent): words, laid
# out as such (the icon column is as wide as the widest).
ASCII_ICONS = {Status.PASS: "OK", Status.NOTE: "NOTE", Status.WARN: "WARN", Status.FAIL: "FAIL", Status.SKIP: "-",
               Status.ERROR: "ERR"}


def icons() -> dict:
    """The status icons this output can carry (``_escape.ascii_symbols``)."""
    return ASCII_ICONS if ascii_symbols() else ICONS


def grouped(report: Report) -> list[tuple[str, list[Result]]]:
    order = {a: i for i, a in enumerate(AREAS)}
    areas: dict[str, list[Result]] = {}
    for r in report.results:
        areas.setdefault(r.area, []).append(r)
    return sorted(areas.items(), key=lambda kv: order.get(kv[0], len(order)))


def settings_lines(report: Report) -> list[str]:
    """Which settings file the report was judged under, then a line per file not used (and the
    folder where the search stopped), each with why. Paths are shown with controls escaped."""
    from ..policy import why_text
    from .clear_view import show

    used = report.settings
    if used is None:
        return []
    if used.path is None:
        head = t("settings-trust.none")
    else:
        head = t("settings-trust.given" if used.source == "--settings" else "settings-trust.found", path=show(used.path))
    notes = [t("settings-trust.note_stopped" if n.kind == "stopped" else "settings-trust.note_not_used",
               path=show(n.path), why=show(why_text(n))) for n in used.notes]
    return [head, *notes]


def count_words(key: str, count: int) -> str:
    """``{count} <noun>`` from ``<key>_one`` or ``<key>_other``: the catalogue of each language
    says what its words do with a number (Japanese and Hindi keep one form; English and Portuguese
    inflect at exactly one)."""
    return t(f"{key}_{'one' if count == 1 else 'other'}", count=count)


def summary_line(report: Report) -> str:
    c = report.counts()
    line = t("report-count.summary", passed=count_words("report-count.passed", c["pass"]),
             warned=count_words("report-count.warned", c["warn"]),
             failed=count_words("report-count.failed", c["fail"]),
             skipped=count_words("report-count.skipped", c["skip"]),
             errors=count_words("report-count.errors", c["error"]))
    return line + (t("levels.summary_notes", count=c["note"]) if c.get("note") else "")


# Japanese line breaking (kinsoku): no line starts with closing punctuation or a small kana, and
# none ends with an opening bracket.
_NO_LINE_START = frozenset("、。，．・：；？！）」』】〉》〕］｝ーぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ々〜"
                           ",.:;!?)]}%")
_NO_LINE_END = frozenset("（「『【〈《〔［｛([{")


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _pieces(text: str) -> list[str]:
    """``text`` cut where a line may break: after spaces, and between two characters of which one
    is wide (CJK text has no spaces between words)."""
    out: list[str] = []
    cur = ""
    for ch in text:
        if cur:
            prev = cur[-1]
            if prev.isspace() and not ch.isspace():
                out.append(cur)
                cur = ""
            elif (not ch.isspace() and not prev.isspace() and (_wide(prev) or _wide(ch))
                  and ch not in _NO_LINE_START and prev not in _NO_LINE_END):
                out.append(cur)
                cur = ""
        cur += ch
    if cur:
        out.append(cur)
    return out


def console(**kwargs: object):
    """A rich Console that measures text as terminals draw it (``terminal_widths``): every view
    and progress line makes its console here. Where the output cannot carry the symbols
    (``_escape.ascii_symbols``), rich draws its tables with ASCII (it does when its file's
    encoding is not UTF: a view's StringIO has none)."""
    from rich.console import Console

    terminal_widths()
    # Strings are never markup ([bold], [link=...]), emoji codes (:fire:) or highlighted: what a
    # view prints holds paths and messages from outside (render/_escape.py).
    for off in ("markup", "emoji", "highlight"):
        kwargs.setdefault(off, False)
    if ascii_symbols():
        return _ascii_console()(**kwargs)
    return Console(**kwargs)


@functools.lru_cache(maxsize=1)
def _ascii_console():
    from rich.console import Console

    class AsciiConsole(Console):
        @property
        def encoding(self) -> str:
            return "ascii"

    return AsciiConsole


def terminal_widths() -> None:
    """rich measures text as terminals draw it (Devanagari vowel signs: see render/cells.py).
    Installed where a console is made (``console``) and where text is wrapped, not at start-up:
    a JSON report never imports rich."""
    from . import cells

    cells.install()


def _breaks(line: str, room: int) -> list[int]:
    """Offsets in ``line`` (no newline) where a new line starts, so each fits ``room`` cells."""
    from rich.cells import cell_len, chop_cells

    terminal_widths()

    breaks: list[int] = []
    start = pos = 0  # the current line starts at ``start``; ``pos``: where the next piece starts
    for piece in _pieces(line):
        if cell_len(line[start:pos + len(piece)].rstrip()) > room and line[start:pos].strip():
            breaks.append(pos)
            start = pos
        while cell_len(line[start:pos + len(piece)].rstrip()) > room:  # longer than a line (a URL)
            head = chop_cells(line[start:pos + len(piece)], room)[0]
            start += len(head)
            breaks.append(start)
        pos += len(piece)
    return breaks


def wrap(text: str, width: int, indent: str = "") -> str:
    """``text`` filled to ``width`` terminal cells (what ``textwrap.fill`` does by characters), each
    line starting with ``indent``. Cells, not characters: a CJK character takes two cells, a
    Devanagari vowel sign none, so Japanese and Hindi lines fit the terminal like English ones;
    CJK text, which has no spaces, breaks between characters (not before 。、 or a closing bracket)."""
    from rich.cells import cell_len

    terminal_widths()
    room = max(width - cell_len(indent), 10)
    lines: list[str] = []
    for paragraph in text.split("\n"):
        paragraph = paragraph.strip()
        cuts = [0, *_breaks(paragraph, room), len(paragraph)]
        lines += [paragraph[a:b].strip() for a, b in zip(cuts, cuts[1:])] or [""]
    return "\n".join(indent + ln if ln else ln for ln in lines)


def wrap_rich(text, width: int):
    """A rich ``Text`` wrapped like :func:`wrap` (styles kept): rich itself breaks only at spaces,
    so a Japanese sentence would jump whole to the next line and leave the one above half empty."""
    from rich.text import Text

    out = []
    for line in text.split("\n", allow_blank=True):
        pieces = line.divide(_breaks(line.plain, max(width, 10)))
        for piece in pieces:
            piece.rstrip()
            out.append(piece)
    return Text("\n").join(out)
