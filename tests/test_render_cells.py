"""Hindi text is measured as terminals draw it (one cell per spacing vowel sign), so tables align."""

from __future__ import annotations

import unicodedata

from flexdoctor.render import cells


def _wcwidth(text: str) -> int:
    """glibc/tmux's count: combining marks Mn/Me and format Cf are 0, wide/fullwidth 2, else 1."""
    total = 0
    for ch in text:
        if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def test_devanagari_vowel_signs_take_a_cell_after_install():
    from rich.cells import cell_len

    cells.install()
    cells.install()  # twice is harmless
    for text in ("मौजूद है", "कारण", "समाधान: ड्राइवर अपग्रेड करें", "कैश डायरेक्टरी", "キャッシュ ok", "plain ascii"):
        assert cell_len(text) == _wcwidth(text), text


def test_a_hindi_table_keeps_its_borders_in_line():
    from rich.console import Console
    from rich.table import Table

    cells.install()
    table = Table("जाँच", "परिणाम")
    for row in (("GPU मौजूद है", "ठीक"), ("ड्राइवर का वर्ज़न", "पुराना है"), ("कैश", "लिखने योग्य नहीं")):
        table.add_row(*row)
    console = Console(width=60, record=True, no_color=True, force_terminal=False)
    console.print(table)
    lines = [line for line in console.export_text().splitlines() if line.strip()]
    widths = {_wcwidth(line) for line in lines}
    assert len(widths) == 1, lines                      # every row as wide as the borders, on a real terminal
    borders = {tuple(i for i, ch in enumerate(_expand(line)) if ch in "│┃┏┓┗┛┡┩└┘┌┐├┤") for line in lines}
    assert len({b[-1] for b in borders if b}) == 1      # the right border is one column for every line


def _expand(line: str) -> str:
    """The line as a terminal lays it out: a placeholder per cell."""
    out = []
    for ch in line:
        if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        out.append(ch)
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            out.append(" ")
    return "".join(out)
