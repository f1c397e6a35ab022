"""The fast block scanner of `explain` against its per-line reference: same problems, same hits,
same line numbers, for any input; and the required-literal analysis it rests on."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flexdoctor import knowledge
from flexdoctor.knowledge import explain as kbx

LOGS = Path(__file__).parent / "data" / "logs"
ALL_LOGS = sorted(LOGS.glob("**/*.log"))


def signature(result: kbx.Result) -> tuple:
    return result.lines, [(p.entry.id, p.count, [h.to_dict() for h in p.hits]) for p in result.problems]


def reference(data: bytes) -> kbx.Result:
    return kbx.scan_lines(kbx.iter_lines(io.BytesIO(data)))


def fast(data: bytes, block: int = kbx.BLOCK) -> kbx.Result:
    return kbx.scan(io.BytesIO(data), block=block)


def definition(text: str) -> list[str]:
    """What Matcher.match must return: every entry any of whose patterns matches, in table order."""
    return [e.id for e in kbx.default_matcher().entries if any(r.search(text) for r in e.regexes)]


# --- the real logs ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name)
def test_real_logs_same_as_reference(path):
    data = path.read_bytes()
    want = signature(reference(data))
    assert signature(fast(data)) == want
    assert signature(fast(data, block=97)) == want  # lines and joins across block boundaries


def test_match_is_the_definition_on_every_log_line_and_join():
    m = kbx.default_matcher()
    for path in ALL_LOGS:
        lines = list(kbx.iter_lines(io.BytesIO(path.read_bytes())))
        for prev, line in zip([""] + lines, lines):
            for text in (line, prev.rstrip() + " " + line.strip()):
                assert [e.id for e in m.match(text)] == definition(text), (path.name, text)


# --- generated logs -----------------------------------------------------------------------------

def _fragments() -> list[bytes]:
    """Pieces that exercise the engine: error lines of every kind (whole and cut in two at a
    space), healthy lines, colours, carriage returns, control bytes, broken UTF-8."""
    out = [b"step 12: loss 0.123 lr 1e-4", b"", b"   ", b"\x1b[31m", b"\x1b[0m", b"\r", b"\r\r", b"\x00",
           b"\x0c", b"\xe2\x82", b"\xac", b"\xff", "█▌ 45%|".encode(), b"\t", b"[rank0]: ", b"E1123 12:00:00 "]
    for path in sorted(LOGS.glob("FDE*.log"))[::3]:
        for line in path.read_bytes().splitlines():
            if line.startswith(b"# ") or not line.strip():
                continue
            out.append(line[:200])
            cut = line.find(b" ", len(line) // 2)
            if cut > 0:
                out += [line[:cut], line[cut:]]
            break
    return out


FRAGMENTS = _fragments()
pieces = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.just(b"\n"), st.just(b"\n      "),
                            st.binary(max_size=8)), max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces, st.integers(min_value=1, max_value=300))
def test_generated_logs_same_as_reference(parts, block):
    data = b"".join(parts)
    assert signature(fast(data, block=block)) == signature(reference(data))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces, st.integers(min_value=1, max_value=120), st.integers(min_value=8, max_value=90))
def test_long_lines_cut_like_reference(monkeypatch_free, block, max_line):
    data = b"".join(monkeypatch_free)
    saved = kbx.MAX_LINE
    kbx.MAX_LINE = max_line
    try:
        assert signature(fast(data, block=block)) == signature(reference(data))
    finally:
        kbx.MAX_LINE = saved


def test_scan_text_agrees_with_bytes_when_only_newlines_split():
    text = "ok\n  RuntimeError: No available kernel.\n  Aborting execution.\n\x1b[31mTorch not compiled with CUDA enabled\n"
    assert signature(kbx.scan_text(text)) == signature(fast(text.encode()))


# --- required literals --------------------------------------------------------------------------

@pytest.mark.parametrize("pattern, allowed", [
    (r"No available kernel\.\s*Aborting execution", [{"No"}, {"available"}, {"kernel."}, {"Aborting"}, {"execution"}]),
    (r"(foo|barbaz) quux", [{"quux"}, {"foo", "barbaz"}]),
    (r"(fooo|barbaz)\d", [{"fooo", "barbaz"}]),
    (r"(?:abc)?defg", [{"defg"}]),
    (r"x(?:abcd)+", [{"abcd"}, {"x"}]),
    (r"(?i)Permission", [{"Permission"}]),
    (r"a[bc]d+ (efgh|ijkl)?", [{"a"}, {"d"}]),
])
def test_required_literals(pattern, allowed):
    lits = kbx.required_literals(pattern)
    assert lits is not None
    assert {lit for lit, _ in lits} in allowed


def test_required_literals_none_and_case():
    assert kbx.required_literals(r"\d+\s+[a-z]*") is None
    assert kbx.required_literals(r"(?i)error: fooo") == [("error:", True)] or all(
        ic for _, ic in kbx.required_literals(r"(?i)error: fooo"))
    assert all(not ic for _, ic in kbx.required_literals(r"Error: fooo"))


def test_every_builtin_pattern_has_a_trigger():
    """No pattern sends explain down the slow per-line path, and every trigger is specific enough."""
    m = kbx.default_matcher()
    assert m.loose == ()
    for e in knowledge.entries().values():
        for p in e.patterns:
            lits = kbx.required_literals(p)
            assert lits, (e.id, p)
            assert all(len(kbx._trigger_of(lit, ic)) >= kbx.MIN_TRIGGER for lit, ic in lits), (e.id, p, lits)


def test_icase_trigger_finds_every_case():
    entry = knowledge.Entry(id="FDE999", symbol="x", title="x", cause="x", fix="x", patterns=(r"(?i)kelvin sense",))
    m = kbx.Matcher([entry])
    for text in ("KELVIN SENSE", "kelvin sense", "\u212aelvin \u017fense"):  # sre folds K-sign and long s
        assert re.search(r"(?i)kelvin sense", text)
        assert [e.id for e in m.match(text)] == ["FDE999"], text
        assert [p.entry.id for p in kbx.scan(io.BytesIO(("ok\n" + text + "\n").encode()), m).problems] == ["FDE999"]


def test_loose_pattern_still_found():
    entry = knowledge.Entry(id="FDE998", symbol="y", title="y", cause="y", fix="y", patterns=(r"\d{3}\s\d{3}",))
    m = kbx.Matcher([entry])
    assert m.loose
    assert [p.entry.id for p in kbx.scan(io.BytesIO(b"a\ncall 555 123 now\n"), m).problems] == ["FDE998"]


def test_memo_gives_the_same_matches_and_stays_bounded(monkeypatch):
    """Repeated lines are matched from a memo: the answer is the one a fresh search gives, a caller
    changing its list changes nothing remembered, long texts are not kept, and the memo is bounded."""
    from flexdoctor.knowledge import explain as E

    m = E.Matcher(list(E.entries().values()) + list(E.structural.units()))  # a fresh one: its own memo
    line = "RuntimeError: CUDA error: an illegal memory access was encountered"
    fresh = [(e.id, k, g) for e, k, g in m._match_units(line, None, None)]
    assert fresh, "the line must match something for this test to mean anything"
    first = m.match_units(line)
    first.clear()
    again = [(e.id, k, g) for e, k, g in m.match_units(line)]
    assert again == fresh
    assert m.match_units(line, skip=frozenset(e for e, _, _ in fresh)) == \
        m._match_units(line, frozenset(e for e, _, _ in fresh), None)
    long = line + " " * E.MEMO_LINE
    assert m.match_units(long) == m._match_units(long, None, None)
    assert (long, None) not in m._memo and long not in m._memo_suspects
    monkeypatch.setattr(E, "MEMO_SIZE", 8)
    for i in range(50):
        m.match_units(f"{line} {i}")
    assert len(m._memo) <= 8 and len(m._memo_suspects) <= 8
