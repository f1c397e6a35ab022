"""`flexdoctor explain`: streaming matcher, ordering, renderers, CLI exit codes, robustness."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from flexdoctor.cli import app
from flexdoctor.knowledge import explain as kbx
from flexdoctor.render import explain_view

LOGS = Path(__file__).parent / "data" / "logs"
runner = CliRunner()


def scan_bytes(data: bytes) -> kbx.Result:
    return kbx.scan(io.BytesIO(data))


def test_line_numbers_and_text():
    data = b"ok\nstill ok\nRuntimeError: No available kernel. Aborting execution.\n"
    result = scan_bytes(data)
    (p,) = result.problems
    assert p.entry.id == "FDE701"
    assert p.hits[0].line == 3 and "No available kernel" in p.hits[0].text
    assert result.lines == 3


def test_most_fundamental_first():
    data = (b"UserWarning: flex_attention called without torch.compile() - this will use an unfused "
            b"implementation that materializes the full scores matrix instead of generating a fused kernel.\n"
            b"RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
            b"and installed a driver from http://www.nvidia.com/Download/index.aspx\n")
    ids = [p.entry.id for p in scan_bytes(data).problems]
    assert ids.index("FDE102") < ids.index("FDE601")


def test_duplicates_collapse_and_count():
    line = b"AssertionError: Torch not compiled with CUDA enabled\n"
    (p,) = scan_bytes(line * 50).problems
    assert p.count == 50 and len(p.hits) == kbx.MAX_HITS


def test_wrapped_message_joined():
    data = (b"      The detected CUDA version (12.2) mismatches the version that was used to compile\n"
            b"      PyTorch (11.7). Please make sure to use the same CUDA versions.\n")
    (p,) = scan_bytes(data).problems
    assert p.entry.id == "FDE402"
    assert p.hits[0].first_line == 1 and p.hits[0].line == 2


def test_ansi_colours_and_crlf():
    data = b"\x1b[31mRuntimeError: No available kernel. Aborting execution.\x1b[0m\r\n"
    assert [p.entry.id for p in scan_bytes(data).problems] == ["FDE701"]


def test_invalid_utf8_and_nul_bytes():
    data = b"\xff\xfe\x00garbage\x00\nRuntimeError: No available kernel.\x00 Aborting execution.\n\x80\x81"
    result = scan_bytes(data)
    assert result.lines == 3


def test_overlong_line_is_bounded():
    data = b"x" * (kbx.MAX_LINE * 3) + b"\nAssertionError: Torch not compiled with CUDA enabled\n"
    result = scan_bytes(data)
    assert [p.entry.id for p in result.problems] == ["FDE204"]
    assert result.problems[0].hits[0].line == 2


def test_big_stream_is_streamed():
    class Lines(io.RawIOBase):
        """A 1M-line stream produced on the fly, never held in memory."""

        def __init__(self, n):
            self.n = n
            self.buf = bytearray()
            self.peak = 0  # the most bytes this stream ever held

        def readable(self):
            return True

        def readinto(self, b):
            line = b"step 12: loss 0.123 lr 1e-4\n"
            want = min(self.n, (len(b) - len(self.buf)) // len(line) + 1)
            if want > 0:
                self.n -= want
                self.buf += line * want
            self.peak = max(self.peak, len(self.buf))
            chunk = bytes(self.buf[: len(b)])
            del self.buf[: len(b)]
            b[: len(chunk)] = chunk
            return len(chunk)

    lines = Lines(1_000_000)  # 28 MB
    result = kbx.scan(io.BufferedReader(lines))
    assert result.lines == 1_000_000 and not result.found
    assert lines.peak <= kbx.BLOCK + 28  # read in blocks, never the whole stream at once


def test_text_renderer():
    result = scan_bytes((LOGS / "FDE304_no_c_compiler.log").read_bytes())
    text = explain_view.render(result, "x.log")
    assert "FDE304 no-c-compiler" in text and "Cause:" in text and "Fix:" in text
    assert "$ sudo apt-get install -y gcc" in text and "flexdoctor rules FDE304" in text
    assert "line " in text


def test_text_renderer_nothing_found():
    text = explain_view.render(scan_bytes(b"all good\n"), "x.log")
    assert "no known problem" in text and "flexdoctor check" in text and "flexdoctor facts" in text


def test_json_renderer():
    result = scan_bytes((LOGS / "FDE701_sdpa_no_available_kernel_fp32.log").read_bytes())
    doc = json.loads(explain_view.render(result, "x.log", fmt="json"))
    assert doc["schema_version"] == 1 and doc["found"] is True
    ids = [p["id"] for p in doc["problems"]]
    assert "FDE701" in ids and ids.index("FDE703") < ids.index("FDE701")
    p = doc["problems"][ids.index("FDE701")]
    assert {"cause", "fix", "matches", "rank", "symbol", "title", "match_count"} <= set(p)
    assert p["fix"]["kb"] == "FDE701" and p["fix"]["commands"]
    assert all(isinstance(m["line"], int) for m in p["matches"])


def test_cli_file_found(tmp_path):
    result = runner.invoke(app, ["explain", str(LOGS / "FDE603_flex_gqa_heads.log")])
    assert result.exit_code == 0, result.output
    assert "FDE603" in result.output


def test_cli_json_and_output_file(tmp_path):
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["explain", str(LOGS / "FDE901_tmp_noexec.log"), "--format", "json", "-o", str(out)])
    assert result.exit_code == 0
    assert json.loads(out.read_text())["problems"][0]["id"] == "FDE901"


def test_cli_stdin_nothing_found():
    result = runner.invoke(app, ["explain", "-"], input="step 1: loss 0.5\n")
    assert result.exit_code == 1
    assert "flexdoctor check" in result.output


def test_cli_stdin_found():
    result = runner.invoke(app, ["explain", "-"], input="RuntimeError: No available kernel. Aborting execution.\n")
    assert result.exit_code == 0 and "FDE701" in result.output


def test_cli_usage_errors(tmp_path):
    for args in (["explain", str(tmp_path / "missing.log")], ["explain", str(tmp_path)],
                 ["explain", str(LOGS / "FDE603_flex_gqa_heads.log"), "--format", "xml"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output


def test_cli_unreadable_file(tmp_path):
    import os

    f = tmp_path / "secret.log"
    f.write_text("x")
    f.chmod(0)
    if os.access(f, os.R_OK):  # running as root: permissions do not apply
        return
    assert runner.invoke(app, ["explain", str(f)]).exit_code == 2


def test_module_entry_point_pipe():
    proc = subprocess.run([sys.executable, "-m", "flexdoctor", "explain"],
                          input=(LOGS / "FDE102_no_driver.log").read_bytes(), capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"FDE102" in proc.stdout


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=4096))
def test_random_binary_never_crashes(data):
    result = scan_bytes(data)
    explain_view.render(result, "fuzz")
    json.loads(explain_view.render(result, "fuzz", fmt="json"))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_random_text_never_crashes(text):
    result = kbx.scan_text(text)
    explain_view.render(result, "fuzz")
    # With "\n" as the only line boundary (str.splitlines also splits at \r, \x0b, \x1c, \u2028 ...),
    # the text path and the bytes path see the same lines and must agree exactly.
    plain = re.sub("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]", " ", text)
    by_text, by_bytes = kbx.scan_text(plain), scan_bytes(plain.encode("utf-8", "surrogatepass"))
    assert by_text.lines == by_bytes.lines
    assert [(p.entry.id, p.count, p.hits) for p in by_text.problems] == \
        [(p.entry.id, p.count, p.hits) for p in by_bytes.problems]


# Real error lines from the recorded logs, each with the entries it matches on its own.
_MATCHER = kbx.Matcher()
_REAL_LINES = sorted({ln for f in LOGS.glob("*.log") for ln in f.read_text(encoding="utf-8").splitlines()
                      if ln.strip() and _MATCHER.match(kbx.clean(ln.encode()))})
# str.splitlines breaks on these too; a byte stream breaks only on \n, so a log never holds them
# as line breaks (and the two scans may rightly differ on text that does).
_OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_noise = st.text(alphabet=st.characters(blacklist_characters="\n" + _OTHER_BREAKS, blacklist_categories=("Cs",)),
                 max_size=120)


def test_real_lines_are_known():
    assert len(_REAL_LINES) >= 30


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_REAL_LINES), _noise), max_size=30))
def test_streamed_bytes_and_text_find_the_same_problems(lines):
    """A log read as a byte stream (explain FILE, a pipe) and the same log as text agree on every
    problem and where it starts, and a real error line is never lost among random lines."""
    text = "\n".join(lines)
    as_text = kbx.scan_text(text)
    as_bytes = scan_bytes(text.encode("utf-8"))
    assert [(p.entry.id, p.first_line) for p in as_bytes.problems] == \
        [(p.entry.id, p.first_line) for p in as_text.problems]
    found = {p.entry.id for p in as_bytes.problems}
    for line in lines:
        if line in _REAL_LINES:
            alone = {p.entry.id for p in kbx.scan_text(line).problems}
            # an entry may give way to a more specific one found too (its ``overrides``)
            replaced = {old for p in as_bytes.problems for old in p.entry.overrides}
            assert alone - replaced <= found


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([
    b"RuntimeError: No available kernel. Aborting execution.",
    b"AssertionError: Torch not compiled with CUDA enabled",
    b"step 3 loss 0.1", b"\xff\xfe", b"", b"\x00\x00",
]), max_size=30))
def test_random_mixtures_are_ordered(lines):
    result = scan_bytes(b"\n".join(lines))
    keys = [(p.entry.rank, p.first_line, p.entry.id) for p in result.problems]
    assert keys == sorted(keys)
