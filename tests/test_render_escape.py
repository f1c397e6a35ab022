"""Issue 20 item 5: flexdoctor/render/_escape.py keeps its promises for ANY string (hypothesis).

For every text: no control character, ESC or line break survives ``for_terminal``; no line of
``no_commands`` is a GitHub workflow command (as actions/runner parses them); Markdown from
``for_markdown`` renders (markdown-it, CommonMark + GFM tables) to exactly the text it was given,
with no HTML and no markup; no line can close ``code_block``'s fence; JUnit values are XML 1.0.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from flexdoctor.render import _escape as esc

# Text biased towards what attacks are made of, plus any code point at all.
NASTY = ["\x1b[2J", "\x1b]8;;http://x\x1b\\", "\n", "\r", "\r\n", "\x9b", "\u2028", "\u202e", "\udcff",
         "\ud800", "::", "::warning::", "::error title=x::", "##[", "##[error]", "`", "```", "````", "~~~",
         "<!--", "-->", "<script>", "&lt;", "&", "|", "\\", "*", "_", "[", "](", "$", "# ", "- ", "1. ",
         " ", "\t", "\u3000", "\u00a0", "\x85", "\ufffe", "\x00", "[bold]", "[/]", "[link=x]"]
texts = st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=8)), max_size=14).map("".join)
RELAXED = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# What the runner parses (actions/runner src/Runner.Common/ActionCommand.cs), line by line as
# StreamReader.ReadLine splits them (\r, \n, \r\n).
def runner_lines(text: str) -> list:
    return re.split(r"\r\n|\r|\n", text)


def is_command(line: str) -> bool:
    return line.lstrip().startswith("::") or "##[" in line  # .NET TrimStart ⊆ str.lstrip


HOSTILE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")
XML_CHAR = re.compile("^[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*$")


@RELAXED
@given(texts)
def test_for_terminal_leaves_no_control_and_no_line_break(s):
    out = esc.for_terminal(s)
    assert not HOSTILE.search(out)
    assert len(runner_lines(out)) == 1 and "\x1b" not in out
    if "\x1b" in s:
        assert "\\x1b" in out


def test_for_terminal_spells_what_it_escapes():
    assert esc.for_terminal("a\x1b[2Jb\nc\td\udcffe\u202e\x9b") == "a\\x1b[2Jb\\nc\\td\\xffe\\u202e\\x9b"
    assert esc.for_terminal(42) == "42" and esc.for_terminal(["x"]) == "['x']"
    assert esc.for_terminal("日本語 हिन्दी\u200d") == "日本語 हिन्दी\u200d"  # words, joiners untouched


@RELAXED
@given(texts)
def test_no_commands_leaves_no_workflow_command(s):
    out = esc.no_commands(s)
    assert not any(is_command(line) for line in runner_lines(out))
    assert out.count("\n") == s.count("\n")  # the lines stay the lines


def test_no_commands_keeps_ordinary_text():
    assert esc.no_commands("c10::Error at::cuda x :: y") == "c10::Error at::cuda x :: y"
    assert esc.no_commands("  ::warning::x") == "  \\::warning::x"
    assert esc.no_commands("see ##[error]") == "see ##\\[error]"


def _runner_parse_v2(line: str):
    """ActionCommand.TryParseV2, as the runner does it (command, properties, data)."""
    line = line.lstrip()
    assert line.startswith("::")
    end = line.index("::", 2)
    info, data = line[2:end], line[end + 2:]
    name, _, props = info.partition(" ")
    unprop = {}
    for p in filter(None, props.strip().split(",")):
        k, _, v = p.partition("=")
        if not v:  # Split(..., RemoveEmptyEntries): "title=" is no property
            continue
        for a, b in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
            v = v.replace(a, b)
        unprop[k] = v
    for a, b in (("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
        data = data.replace(a, b)
    return name, unprop, data


@RELAXED
@given(texts, st.lists(texts, min_size=1, max_size=4))
def test_a_github_annotation_is_one_command_that_says_exactly_the_text(title, lines):
    from flexdoctor.render.github import annotation

    line = annotation("warning", title, lines)
    assert len(runner_lines(line)) == 1
    name, props, data = _runner_parse_v2(line)
    assert name == "warning"
    # The runner trims the properties (cmdInfo...Trim()): a title's trailing blanks are not kept.
    assert props.get("title", "") == esc.no_commands(esc.for_terminal(title)).rstrip()
    assert data.split("\n") == [esc.no_commands(esc.for_terminal(x)) for x in lines]
    assert "##[" not in line


def _markdown():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _inline_text(tokens) -> tuple[str, set]:
    """The text a reader sees, and every token type, of rendered inline Markdown."""
    seen, out = set(), []
    for tok in tokens:
        for child in tok.children or ():
            seen.add(child.type)
            if child.type in ("text", "code_inline"):
                out.append(child.content)
            elif child.type == "softbreak":
                out.append("\n")
    return "".join(out), seen


@RELAXED
@given(texts)
def test_for_markdown_renders_exactly_the_text_and_nothing_else(s):
    md = "prefix " + esc.for_markdown(s) + " suffix"
    tokens = _markdown().parse(md)
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    text, seen = _inline_text(tokens)
    assert seen <= {"text", "code_inline"}, seen  # no HTML, link, emphasis, image
    if "code_inline" not in seen:  # a code span drops one space at each end: compare text alone
        assert text == "prefix " + esc.for_terminal(s) + " suffix"
    assert not any(is_command(line) for line in runner_lines(md))


@pytest.mark.parametrize("s", ["a_b_c _x_ __y__ x_", "~/a and ~/b", "a~b~c ~~d~~", "snake_case*x* **y**",
                               "1. x", "0.1.0", "- x", "---", "> q", "=", "+ y", "<!-- x -->", "&lt;b&gt;",
                               "`a` `` b ` `` ```c``` x`y", "$x$ $$y$$", "[l](http://e) ![i](x)",
                               "path\\with\\backslashes\\`", "| a | b |", "# h", "x ::warning::y"])
def test_for_markdown_examples_render_as_they_read(s):
    test_for_markdown_renders_exactly_the_text_and_nothing_else.hypothesis.inner_test(s)
    tokens = _markdown().parse(esc.for_markdown(s) + "\n")
    assert tokens[0].type == "paragraph_open", s


@RELAXED
@given(texts, texts)
def test_for_markdown_in_a_table_keeps_its_cell(a, b):
    md = "| x | y |\n|---|---|\n| " + esc.for_markdown(a, table=True) + " | " + esc.for_markdown(b, table=True) + " |\n"
    tokens = _markdown().parse(md)
    cells = [t for t in tokens if t.type == "td_open"]
    assert len(cells) == 2
    for tok in tokens:
        for child in tok.children or ():
            assert child.type in ("text", "code_inline"), child.type


@RELAXED
@given(st.lists(texts, min_size=1, max_size=5))
def test_no_line_closes_a_code_block(lines):
    block = esc.code_block(lines)
    md = "\n".join(["before", "", *block, "", "after"]) + "\n"
    tokens = _markdown().parse(md)
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1
    assert fences[0].content.split("\n")[:-1] == [esc.code_line(x) for x in lines]
    assert tokens[-2].content == "after"
    assert not any(is_command(line) for line in runner_lines(md))


def test_a_backtick_fence_in_a_value_does_not_close_the_block():
    block = esc.code_block(["chmod go-w '/tmp/x", "```", "<!-- hidden"])
    assert block[0] == "````bash" and block[-1] == "````"


@RELAXED
@given(texts)
def test_xml_of_any_value_is_well_formed_xml_1_0(s):
    el = ET.Element("testcase", name=esc.for_terminal(s))
    el.text = esc.for_terminal(s) + "\n" + esc.for_terminal(s)
    doc = ET.tostring(el, encoding="unicode")
    assert XML_CHAR.match(doc)
    back = ET.fromstring(doc)
    assert back.get("name") == esc.for_terminal(s)
    import xml.dom.minidom

    xml.dom.minidom.parseString(doc.encode("utf-8"))


@RELAXED
@given(texts)
def test_for_json_is_the_same_data_without_raw_controls(s):
    import json

    # A high surrogate followed by a low one is, once escaped, a pair that JSON reads as one
    # character: JSON cannot tell them apart. Outside text never holds a high surrogate (bytes
    # decoded with surrogateescape give U+DC80-U+DCFF only), so the data is the same for it.
    assume(not re.search("[\ud800-\udbff]", s))
    doc = esc.for_json(json.dumps({"v": s}, ensure_ascii=False))
    assert not HOSTILE.search(doc)
    assert json.loads(doc) == {"v": s}


@pytest.mark.parametrize("encoding", ["ascii", "cp1252", "latin-1", "utf-8"])
@RELAXED
@given(s=texts)
def test_any_text_encodes_with_the_fallback_handler(encoding, s):
    esc.register()
    data = (s + " ✓ ✗ → … 日本").encode(encoding, "flexdoctor")
    text = data.decode(encoding)
    if encoding != "utf-8":
        assert "OK FAIL ->" in text
    assert "\\u65e5" in text or "日" in text


def test_rich_never_reads_markup_in_escaped_text():
    """Outside text reaches rich only as Text (or markup=False): `[bold]` stays on the page."""
    from flexdoctor.render._common import console

    import io

    buf = io.StringIO()
    con = console(file=buf, width=80, no_color=True)
    con.print(esc.rich_text("[bold]x[/] [link=http://e]y[/link]"))
    assert buf.getvalue().strip() == "[bold]x[/] [link=http://e]y[/link]"


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(["pass", "warn", "fail", "skip", "error"]), texts, texts, texts,
                          st.lists(texts, max_size=2)), min_size=1, max_size=4))
def test_every_check_report_format_keeps_any_value_as_data(rows):
    """Outside text in every field of a Result, through every format of the check report."""
    import json

    from flexdoctor.facts import Facts
    from flexdoctor.model import Fix, Report, Result, Status
    from flexdoctor.render import Format, renderer

    results = tuple(Result(f"FD{100 + i}", "sym", title, "gpu", Status(status), message,
                           Fix(summary, tuple(commands)), details=(summary,))
                    for i, (status, title, message, summary, commands) in enumerate(rows))
    report = Report(results=results, facts=Facts(), flexdoctor_version="0")
    for fmt in Format:
        text = renderer(fmt)(report, verbose=True, width=80, color=False, step_summary="")
        text.encode("utf-8")
        ours = [x for x in runner_lines(text) if fmt == Format.github and re.match(r"::(error|warning) title=FD\d+ ", x)]
        assert not [x for x in runner_lines(text) if is_command(x) and x not in ours]
        if fmt in (Format.text, Format.markdown, Format.github):
            assert not HOSTILE.search(text.replace("\n", ""))
        if fmt == Format.markdown:
            tokens = _markdown().parse(text)
            kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or ())}
            assert not kinds & {"html_block", "html_inline", "link_open", "image", "em_open", "strong_open", "s_open"} - (
                {"strong_open"} if "strong_open" in kinds and _only_our_bold(tokens) else set())
            assert all(t.info == "bash" for t in tokens if t.type == "fence")
        if fmt == Format.junit:
            assert XML_CHAR.match(text)
            ET.fromstring(text.encode("utf-8"))
        if fmt == Format.json:
            assert json.loads(text)["results"][0]["message"] == rows[0][2]


def _only_our_bold(tokens) -> bool:
    """Bold appears only where the view writes it: "**FD1xx sym**:" before a fix."""
    for tok in tokens:
        kids = tok.children or []
        for i, child in enumerate(kids):
            if child.type == "strong_open" and not (i + 1 < len(kids) and re.fullmatch(r"FD\d+ sym", kids[i + 1].content)):
                return False
    return True
