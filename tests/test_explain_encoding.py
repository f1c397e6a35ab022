"""Logs saved in a wide encoding (issue 22's "the mix people actually paste"): Windows PowerShell 5's `>`
and Out-File write UTF-16LE with a byte-order mark, so a Windows user's `python train.py > log.txt 2>&1`
holds no byte a UTF-8 pattern can match. explain reads such a file as the text it holds."""

from __future__ import annotations

import codecs
import io
import subprocess
import sys

import pytest

from flexdoctor.knowledge import explain

LOG = ("Traceback (most recent call last):\r\n  File \"C:\\\\train\\\\run.py\", line 3, in <module>\r\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "23.65 GiB of which 1.2 GiB is free. Of the allocated memory 20.1 GiB is allocated by PyTorch, and 1.9 GiB "
       "is reserved by PyTorch but unallocated.\r\nPrécision: 日本語 ✓\r\n")


def _kinds(result) -> list:
    return [(getattr(i, "kind", None) or i.entry.id) for i in result.ordered()]


@pytest.mark.parametrize("data", [
    LOG.encode("utf-16"),  # the platform's order, with its mark
    codecs.BOM_UTF16_LE + LOG.encode("utf-16-le"),
    codecs.BOM_UTF16_BE + LOG.encode("utf-16-be"),
    LOG.encode("utf-32"),
    codecs.BOM_UTF8 + LOG.encode("utf-8"),
])
@pytest.mark.parametrize("block", [7, 4096])  # odd blocks split the wide characters
def test_a_wide_log_reads_like_its_utf8_text(data, block):
    want = explain.scan(io.BytesIO(LOG.encode("utf-8")))
    got = explain.scan(io.BytesIO(data), block=block)
    assert _kinds(want) and _kinds(got) == _kinds(want)
    assert got.lines == want.lines


@pytest.mark.parametrize("data", [b"", b"a", b"\xff", b"\xff\xfe", b"ab\ncd", b"\xff\xfegarbage\x80 no zero bytes"])
def test_short_and_plain_streams_are_read_as_they_are(data):
    stream, got = explain.as_utf8(io.BytesIO(data)), b""
    while chunk := stream.read(3):
        got += chunk
    assert got == data


def test_the_cli_explains_a_powershell_redirected_log(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(LOG.encode("utf-16"))
    for args, stdin in (([str(path)], None), (["-"], path.read_bytes())):
        out = subprocess.run([sys.executable, "-m", "flexdoctor", "explain", "--format", "json", *args],
                             input=stdin, capture_output=True, timeout=120)
        assert out.returncode == 0, out.stderr  # a problem was found
        assert b"out-of-memory" in out.stdout
