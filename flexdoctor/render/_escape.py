"""Text from outside as data in every output format: the one place that escapes it.

Outside text is anything flexdoctor did not write itself: paths, hostnames, environment values,
node reports, log lines, messages of torch and of other programs, values of a ``--from-facts``
file. The catalogue texts (flexdoctor's own words) hold no control characters and no line
breaks, so a view may escape a whole field (a message, a title, a fix command): what changes is
only ever the outside part of it. Every view calls these functions; tests/test_render_escape.py
holds them to their promises for any string (hypothesis).

``for_terminal`` (text reports, JUnit, every field below): shown, never obeyed. These characters
are written as Python writes them in a string literal, so that they are visible and cannot
act on a terminal, a log viewer or a parser:

- C0 controls U+0000–U+001F (ESC, BEL, backspace, and the line breaks: ``\\n`` ``\\r`` ``\\t``
  by name, the others ``\\xNN``), DEL U+007F and the C1 controls U+0080–U+009F (``\\x9b`` is
  the 8-bit CSI some terminals obey): a value can neither move the cursor, clear the screen,
  set a title or a hyperlink, nor start a line of its own;
- the Unicode line and paragraph separators U+2028/U+2029 and the bidirectional embeddings,
  overrides and isolates U+202A–U+202E, U+2066–U+2069 (text that reads differently than it
  is, "Trojan Source"): ``\\uNNNN``;
- lone surrogates: U+DC80–U+DCFF are the bytes ``os.fsdecode`` could not decode (a file name
  that is not UTF-8), written back as the byte, ``\\xNN``; any other one ``\\uNNNN``;
- the noncharacters U+FFFE and U+FFFF (not allowed in XML).

The result is not a reversible encoding (a backslash is not doubled): it is for people to read.

``no_commands`` (every output that may reach a CI log): GitHub's runner reads each line of a
step's output as a workflow command when the line, with leading white space trimmed, starts
with ``::`` (actions/runner src/Runner.Common/ActionCommand.cs ``TryParseV2``: ``message =
message.TrimStart(); if (!message.StartsWith("::"))``), or when ``##[`` appears anywhere in it
(the legacy form, ``TryParse``: ``message.IndexOf("##[")``); src/Runner.Worker/Handlers/
OutputManager.cs hands it every line holding either. A wrapped line of a text report can start
with any word of a value, so ``no_commands`` runs over the whole output of every view: a line
whose trimmed text starts with ``::`` gets a backslash before it (``\\::``), and every ``##[``
becomes ``##\\[``. flexdoctor's own annotations (``--format github``) are the only lines it
leaves alone.

``for_markdown`` escapes HTML (``& < >``) and the Markdown punctuation that can start markup,
keeping the code spans of flexdoctor's own words (a value cannot open or close one: the spans
are found as CommonMark finds them, so what is code here is code there). ``code_block`` fences
commands with more backticks than any run inside them. ``for_github_data`` and
``for_github_property`` are @actions/toolkit's ``escapeData``/``escapeProperty``
(packages/core/src/command.ts) over ``for_terminal``. ``for_json`` makes the raw characters
above JSON escapes in a document written with ``ensure_ascii=False``.

``encode_fallback`` is the codec error handler (registered as ``"flexdoctor"`` by
cli/_streams.py) for an output whose encoding cannot carry a character: the report's symbols
get readable ASCII (✓ -> OK, → -> ->), undecodable bytes ``\\xNN``, anything else a backslash
escape, so a report is never empty and never an error because of one character.
"""

from __future__ import annotations

import re
from typing import Iterable

_HOSTILE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte that was not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(value: object) -> str:
    """``value`` as one line of plain text: controls, line breaks, bidi overrides and undecodable
    bytes written visibly (see the module's docstring). Any value: a crafted facts file may put a
    number or a list where a string belongs."""
    text = value if isinstance(value, str) else _str(value)
    return _HOSTILE.sub(lambda m: _visible(m.group()), text)


def _str(value: object) -> str:
    try:
        return str(value)
    except Exception:  # an object whose __str__ fails is still shown, not a traceback
        return f"<{type(value).__name__}>"


def rich_text(value: object, style: str = ""):
    """Outside text for rich: a ``Text`` (never read as markup like ``[bold]`` or ``[link=...]``)
    of :func:`for_terminal`."""
    from rich.text import Text

    return Text(for_terminal(value), style=style)


def terminal_line(value: object) -> str:
    """A line a command writes itself (a refusal, a "running ..." line, progress) holding outside
    text: :func:`for_terminal`, then :func:`no_commands` (``##[`` may sit anywhere in a value)."""
    return no_commands(for_terminal(value))


# ---------------------------------------------------------------- CI logs (GitHub workflow commands)

_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")  # where .NET's StreamReader.ReadLine ends a line
_LEADING_COMMAND = re.compile(r"(\s*)::")


def no_commands(text: str) -> str:
    """``text`` (any number of lines) with no line GitHub's runner would read as a workflow
    command: a leading ``::`` (after white space) becomes ``\\::``, ``##[`` becomes ``##\\[``."""
    text = text.replace("##[", "##\\[")
    if "::" not in text:
        return text
    parts = _LINE_BREAK.split(text)  # lines at even indexes, their breaks between
    parts[::2] = [_LEADING_COMMAND.sub(lambda m: m.group(1) + "\\::", line, count=1)
                  if line.lstrip().startswith("::") else line for line in parts[::2]]
    return "".join(parts)


def for_github_data(value: object) -> str:
    """The message of a workflow command: ``escapeData`` over :func:`for_terminal`. A list or
    tuple is lines: each escaped, then joined by flexdoctor's own line breaks (%0A, as the toolkit
    writes them)."""
    lines = value if isinstance(value, (list, tuple)) else [value]
    text = "\n".join(no_commands(for_terminal(line)) for line in lines)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def for_github_property(value: object) -> str:
    """A property of a workflow command (``title=``): ``escapeProperty`` over :func:`for_terminal`."""
    return for_github_data(value).replace(":", "%3A").replace(",", "%2C")


# ---------------------------------------------------------------- Markdown

_BACKTICKS = re.compile(r"`+")
# Punctuation that can start markup inline: emphasis, links and images, tables, GitHub's math ($),
# headings; HTML is cut at "<" (&lt;) and entities at "&" (&amp;). Left alone where CommonMark
# cannot read them as markup, to keep the text readable: "_" between two letters or digits
# (intraword, it neither opens nor closes emphasis), "~" of "~/" after a space (it could only
# open a strikethrough that no other, escaped, "~" closes), ">" after the start of a line.
_MD_PUNCT = re.compile(r"[\\`*\[\]|$#]|(?<![^\W_])_|_(?![^\W_])|~(?!/)|(?<=\S)~")
# What starts a block at the start of a line: a list item, a setext underline or thematic break,
# a quote.
_MD_BLOCK_START = re.compile(r"^(\s*)([-+=](?=\s|$|[-+=])|>|\d{1,9}[.)](?=\s|$))")


def for_markdown(value: object, table: bool = False) -> str:
    """``value`` as inline Markdown text that renders as it reads on GitHub: one line, HTML and
    Markdown punctuation escaped, code spans (matched backtick runs, as CommonMark matches them)
    kept as code. ``table``: also inside code spans, ``|`` is ``\\|`` (GFM splits cells first)."""
    text = for_terminal(value)
    out = []
    for code, piece in _code_spans(text):
        if code and "##[" not in piece and not piece.startswith("```"):  # ``` could open a fence
            out.append(piece.replace("|", "\\|") if table else piece)
        else:
            out.append(_md_text(piece))
    return "".join(out)


def _md_text(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = _MD_PUNCT.sub(lambda m: "\\" + m.group(), text)
    text = text.replace("::", ":\\:")
    return _MD_BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2) if len(m.group(2)) == 1
                               else m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], text)


def _code_spans(text: str) -> list:
    """[(is_code, piece)]: a code span is a backtick run and the next run of the same length
    (CommonMark 6.1); a run with no partner is text."""
    pieces, start = [], 0
    runs = list(_BACKTICKS.finditer(text))
    i = 0
    while i < len(runs):
        opening = runs[i]
        partner = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == len(opening.group())), None)
        if partner is None:
            i += 1
            continue
        if opening.start() > start:
            pieces.append((False, text[start:opening.start()]))
        pieces.append((True, text[opening.start():runs[partner].end()]))
        start = runs[partner].end()
        i = partner + 1
    if start < len(text) or not pieces:
        pieces.append((False, text[start:]))
    return pieces


def code_span(value: object, table: bool = False) -> str:
    """``value`` as inline code: fenced by one backtick more than its longest run (padded with a
    space where CommonMark strips one). A value that would need a fence of three backticks (which
    can open a code block at the start of a line) or that holds ``##[`` is escaped text instead."""
    text = for_terminal(value)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    if not text or longest >= 2 or "##[" in text:
        return for_markdown(text, table=table)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " " and text.strip()) else ""
    return fence + pad + (text.replace("|", "\\|") if table else text) + pad + fence


def code_line(value: object) -> str:
    """A line inside a code block: visible controls, and no workflow command."""
    return no_commands(for_terminal(value))


def code_block(lines: Iterable[object], lang: str = "bash", indent: str = "") -> list:
    """A fenced code block whose fence no line can close: more backticks than any run inside."""
    body = [code_line(x) for x in lines]
    longest = max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [indent + fence + lang, *(indent + line for line in body), indent + fence]


# ---------------------------------------------------------------- JSON

_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def for_json(document: str) -> str:
    """A JSON document (``json.dumps``, indented) as the same data with no raw character of the set
    above (\\uNNNN escapes; json escapes C0 itself) and no ``##[`` (``##\\u005b``). They can only
    stand inside strings, and an indented document's lines start with ``"``, a bracket or a
    value, never ``::``: nothing in it is a workflow command."""
    document = _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", document)
    return document.replace("##[", "##\\u005b")


# ---------------------------------------------------------------- encodings that cannot say it all

ASCII_FALLBACK = {
    "✓": "OK", "✔": "OK", "✗": "FAIL", "✘": "FAIL", "⚠": "!", "→": "->", "←": "<-", "⇒": "=>",
    "—": "--", "–": "-", "…": "...", "·": "*", "•": "*", "“": '"', "”": '"', "‘": "'", "’": "'",
    "≥": ">=", "≤": "<=", "≠": "!=", "×": "x", "±": "+/-", "µ": "u", "°": " deg", "\u00a0": " ",
    "█": "#", "▏": "|", "▎": "|", "▍": "|", "▌": "|", "▋": "|", "▊": "|", "▉": "#",
    "─": "-", "━": "-", "│": "|", "┃": "|", "┌": "+", "┐": "+", "└": "+", "┘": "+", "├": "+",
    "┤": "+", "┬": "+", "┴": "+", "┼": "+", "┏": "+", "┓": "+", "┗": "+", "┛": "+", "┡": "+",
    "┩": "+", "╇": "+", "╍": "-", "⠋": "-", "⠙": "\\", "⠹": "|", "⠸": "/", "⠼": "-", "⠴": "\\",
    "⠦": "|", "⠧": "/", "⠇": "-", "⠏": "\\",
}


def encode_fallback(exc: UnicodeError):
    """Codec error handler: what an encoding cannot carry as readable ASCII (see ASCII_FALLBACK),
    an undecodable byte as ``\\xNN``, anything else backslash-escaped (``\\u30c1``)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for ch in exc.object[exc.start:exc.end]:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch in ASCII_FALLBACK:
            out.append(ASCII_FALLBACK[ch])
        else:
            out.append(ch.encode("ascii", "backslashreplace").decode("ascii"))
    return "".join(out), exc.end


def register() -> str:
    """Register :func:`encode_fallback` as the ``"flexdoctor"`` error handler; returns its name."""
    import codecs

    codecs.register_error("flexdoctor", encode_fallback)
    return "flexdoctor"


_symbols_ascii = False


def set_ascii_symbols(on: bool) -> None:
    """The CLI says, once, that stdout cannot carry the report's symbols (cli/_streams.py): views
    then lay out ASCII icons (OK, WARN, FAIL) instead of having ✓ replaced after the layout."""
    global _symbols_ascii
    _symbols_ascii = on


def ascii_symbols() -> bool:
    return _symbols_ascii


def can_encode(encoding: object, sample: str = "✓✗→") -> bool:
    try:
        sample.encode(str(encoding or "utf-8"))
    except (UnicodeEncodeError, LookupError):
        return False
    return True
