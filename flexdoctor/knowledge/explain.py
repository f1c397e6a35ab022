"""Find known problems in a log or traceback: the engine behind ``flexdoctor explain``.

The log is streamed line by line from a binary stream (any size; invalid UTF-8, NUL bytes and
other binary junk are tolerated), so memory stays bounded by one line (itself capped at
``MAX_LINE`` bytes) plus the hits kept per entry. Each line is matched against every entry's
patterns; a message wrapped over two lines (pip's and setuptools' indented RuntimeErrors, narrow
terminals) is also tried joined with the line before it. Results come back one per entry, most
fundamental first (entry ``rank``, then first line, then ID).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import IO, Iterable, Iterator, Optional

from ..wheels import explain_context
from . import Entry, entries

MAX_LINE = 64 * 1024  # bytes of one line that are matched; the rest of a longer line is skipped
MAX_HITS = 5  # lines kept per entry for the report (all are counted)
MAX_TEXT = 300  # characters of a matching line shown

_JUNK = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class Hit:
    line: int  # 1-based number of the (last) line that matched
    text: str  # the matching line(s), cleaned and shortened
    first_line: Optional[int] = None  # set when the match spans two lines

    def to_dict(self) -> dict:
        out = {"line": self.line, "text": self.text}
        if self.first_line is not None:
            out["first_line"] = self.first_line
        return out


@dataclass
class Problem:
    entry: Entry
    hits: list[Hit] = field(default_factory=list)
    count: int = 0
    context: dict = field(default_factory=dict)  # placeholder values read from the log (wheels.explain_context)

    @property
    def first_line(self) -> int:
        return min((h.first_line or h.line) for h in self.hits)

    def add(self, hit: Hit) -> None:
        self.count += 1
        if len(self.hits) < MAX_HITS:
            self.hits.append(hit)


@dataclass(frozen=True)
class Result:
    problems: tuple[Problem, ...]
    lines: int  # lines read

    @property
    def found(self) -> bool:
        return bool(self.problems)


def clean(raw: bytes) -> str:
    """One line of bytes as matchable text: UTF-8 with replacement, no colours or control bytes."""
    text = raw.decode("utf-8", errors="replace")
    text = _ANSI.sub("", text)
    return _JUNK.sub(" ", text).rstrip("\r\n")


def _shorten(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def iter_lines(stream: IO[bytes]) -> Iterator[str]:
    """Cleaned lines of a binary stream; a line longer than MAX_LINE is cut, its rest skipped."""
    while True:
        raw = stream.readline(MAX_LINE)
        if not raw:
            return
        if len(raw) == MAX_LINE and not raw.endswith(b"\n"):
            rest = raw
            while rest and not rest.endswith(b"\n"):  # skip the remainder of an overlong line
                rest = stream.readline(MAX_LINE)
        yield clean(raw)


class Matcher:
    """All entries' patterns, with one combined regex as a cheap pre-filter per line."""

    def __init__(self, table: Optional[Iterable[Entry]] = None) -> None:
        self.entries = tuple(e for e in (table if table is not None else entries().values()) if e.patterns)
        self._any = re.compile("|".join(f"(?:{p})" for e in self.entries for p in e.patterns)) if self.entries else None

    def match(self, text: str) -> list[Entry]:
        if self._any is None or not self._any.search(text):
            return []
        return [e for e in self.entries if any(r.search(text) for r in e.regexes)]


def scan_lines(lines: Iterable[str], matcher: Optional[Matcher] = None) -> Result:
    """Match cleaned lines; see the module docstring."""
    matcher = matcher or Matcher()
    found: dict[str, Problem] = {}
    prev: Optional[str] = None
    prev_ids: set[str] = set()
    n = 0
    for n, line in enumerate(lines, start=1):
        ids: set[str] = set()
        for e in matcher.match(line):
            ids.add(e.id)
            found.setdefault(e.id, Problem(e)).add(Hit(n, _shorten(line)))
            found[e.id].context.update(explain_context(e.id, line))
        if prev is not None and prev.strip() and line.strip():
            joined = prev.rstrip() + " " + line.strip()
            for e in matcher.match(joined):
                if e.id in ids or e.id in prev_ids:
                    continue
                ids.add(e.id)
                found.setdefault(e.id, Problem(e)).add(
                    Hit(n, _shorten(prev.strip() + " / " + line.strip()), first_line=n - 1))
        prev, prev_ids = line, ids
    problems = sorted(found.values(), key=lambda p: (p.entry.rank, p.first_line, p.entry.id))
    return Result(tuple(problems), n)


def scan(stream: IO[bytes], matcher: Optional[Matcher] = None) -> Result:
    """Known problems in a binary stream (a file opened 'rb', or sys.stdin.buffer)."""
    return scan_lines(iter_lines(stream), matcher)


def scan_text(text: str, matcher: Optional[Matcher] = None) -> Result:
    return scan_lines((clean(line.encode("utf-8", "surrogatepass")) for line in text.splitlines()), matcher)
