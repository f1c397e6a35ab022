"""Issue 20 item 5 (and 3's --output, 9's crafted facts files), issue 21 item 1: text from outside
is data in every output, every output is written whatever the encoding, --output never writes
through a link. Real files, a real second uid (setpriv), the real CLI.

The hostile value is a cache path (FD501-FD508 print it, FD504 puts it in a fix command) and a
hostname (JUnit's attribute): ESC sequences, line breaks that paint a fake line, an indented
GitHub workflow command, a legacy ``##[`` command, a backtick fence, ``<!--`` and one byte that
is not UTF-8 (os.fsdecode's surrogate).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import xml.dom.minidom
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import load_facts_dict

FD = [sys.executable, "-m", "flexdoctor"]
EVIL = "/tmp/x\x1b[2J\x1b]0;owned\x07\nall nodes ready\n  ::warning::pwned ##[error]x\r\n```\n<!-- hidden \udcff"
FAKE = "all nodes ready"
HOSTILE_CHARS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\ud800-\udfff]")
XML_CHAR = re.compile("^[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*$")


def run(*args: str, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    e.update({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "FLEXDOCTOR_LANG": "en", "PYTHONIOENCODING": "utf-8"})
    e.update(env or {})
    return subprocess.run(FD + list(args), capture_output=True, timeout=timeout, env=e)


def out(done: subprocess.CompletedProcess) -> str:
    return done.stdout.decode("utf-8")


def hostile(d: dict) -> dict:
    d = copy.deepcopy(d)
    d["host"]["hostname"] = EVIL
    for kind in ("inductor", "triton"):
        d["cache"][kind]["path"] = EVIL
    d["cache"]["inductor"]["mode"] = 0o777  # FD504 fails and prints `chmod go-w <path>`
    return d


@pytest.fixture(scope="module")
def evil_facts(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("evil") / "facts.json"
    path.write_text(json.dumps(hostile(load_facts_dict("h100"))), encoding="utf-8")  # \udcff as JSON's \\udcff
    return path


def runner_lines(text: str) -> list:
    return re.split(r"\r\n|\r|\n", text)


def workflow_commands(text: str) -> list:
    """Lines GitHub's runner would run (actions/runner ActionCommand.TryParseV2 / TryParse)."""
    return [line for line in runner_lines(text) if line.lstrip().startswith("::") or "##[" in line]


def assert_no_outside_line(text: str) -> None:
    assert not HOSTILE_CHARS.search(text), "a raw control character reached the output"
    assert not [line for line in text.splitlines() if line.lstrip().startswith((FAKE, "<!--", "```\n"))]
    assert not workflow_commands(text)


# ---------------------------------------------------------------- every format, the real CLI

def test_text_report_shows_controls_and_paints_no_line(evil_facts):
    done = run("check", "--from-facts", str(evil_facts), "-v")
    text = out(done)
    assert done.returncode == 1, done.stderr
    assert_no_outside_line(text)
    assert "/tmp/x\\x1b[2J\\x1b]0;owned\\x07\\nall nodes ready\\n  ::warning::pwned ##\\[error]x\\r\\n" in text
    assert "\\xff" in text  # the byte that was not UTF-8, as a byte
    assert "$ chmod go-w '/tmp/x\\x1b[2J" in text


def _markdown_tokens(text: str):
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").enable("strikethrough").parse(text)


def assert_markdown_safe(text: str) -> None:
    assert_no_outside_line(text)
    tokens = _markdown_tokens(text)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or ())}
    assert not kinds & {"html_block", "html_inline", "link_open", "image", "heading_open"} - {"heading_open"}
    for fence in (t for t in tokens if t.type == "fence"):
        assert fence.info == "bash"  # every fence is one of ours, closed where we closed it
    chmod = [t for t in tokens if t.type == "fence" and "chmod go-w" in t.content]
    assert len(chmod) == 1 and "<!-- hidden" in chmod[0].content and FAKE in chmod[0].content
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[-1] == "Deep checks" or "GPUs of this node" in headings[-1]  # nothing hidden after the fix


def test_markdown_escapes_html_and_no_value_closes_the_fence(evil_facts):
    done = run("check", "--from-facts", str(evil_facts), "--format", "markdown")
    assert done.returncode == 1, done.stderr
    assert_markdown_safe(out(done))


def test_github_format_annotations_and_step_summary(evil_facts, tmp_path):
    summary = tmp_path / "summary.md"
    done = run("check", "--from-facts", str(evil_facts), "--format", "github",
               env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 1, done.stderr.decode()
    lines = out(done).splitlines()
    ours = [line for line in lines if re.match(r"::(error|warning|notice) title=FD\d{3} ", line)]
    # flexdoctor's own notice of where the settings search stopped (a checkout under /tmp, as on
    # some CI runners): its path is escaped like any annotation's text
    mine = [line for line in lines if line.startswith("::notice title=settings::")]
    for line in mine:
        assert "\x1b" not in line and "##[" not in line and line.count("::") == 2
    report = json.loads(out(run("check", "--from-facts", str(evil_facts), "--format", "json")))
    assert len(ours) == sum(r["status"] in ("warn", "fail", "note") for r in report["results"])
    assert not workflow_commands("\n".join(x for x in lines if x not in ours and x not in mine))
    for line in ours:
        assert "\x1b" not in line and "##[" not in line
    assert_markdown_safe(summary.read_text(encoding="utf-8"))


def test_junit_is_valid_xml_whatever_the_values(evil_facts):
    done = run("check", "--from-facts", str(evil_facts), "--format", "junit")
    assert done.returncode == 1, done.stderr
    doc = out(done)
    assert XML_CHAR.match(doc)
    root = ET.fromstring(doc.encode("utf-8"))
    xml.dom.minidom.parseString(doc.encode("utf-8"))
    assert root.find("testsuite").get("hostname").startswith("/tmp/x\\x1b[2J")
    assert not workflow_commands(doc)


def test_json_keeps_the_data_and_holds_no_command(evil_facts):
    done = run("check", "--from-facts", str(evil_facts), "--format", "json")
    assert done.returncode == 1, done.stderr
    assert json.loads(out(done))["facts"]["host"]["hostname"] == EVIL  # the same data, escaped as JSON
    assert not workflow_commands(out(done)) and not HOSTILE_CHARS.search(out(done))


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github", "junit"])
def test_an_undecodable_byte_never_ends_in_an_internal_error(evil_facts, tmp_path, fmt):
    """One byte that is not UTF-8 in a path: exit 1 with the report (it was exit 2, no report)."""
    target = tmp_path / f"report.{fmt}"
    summary = tmp_path / "summary.md"
    done = run("check", "--from-facts", str(evil_facts), "--format", fmt, "-o", str(target),
               env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 1, done.stderr.decode()
    assert b"internal error" not in done.stderr
    written = target.read_text(encoding="utf-8")
    assert "\\xff" in written or "\\udcff" in written
    if fmt == "github":
        assert "\\xff" in summary.read_text(encoding="utf-8")
    stdout = run("check", "--from-facts", str(evil_facts), "--format", fmt, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert stdout.returncode == 1 and b"internal error" not in stdout.stderr


# ---------------------------------------------------------------- issue 21 item 1: any encoding

@pytest.mark.parametrize("encoding", ["ascii", "cp1252", "latin-1"])
def test_check_prints_the_whole_report_in_any_encoding(encoding):
    facts = Path(__file__).parent / "fixtures" / "facts" / "driver_too_old.json"
    utf8 = run("check", "--from-facts", str(facts))
    done = run("check", "--from-facts", str(facts), env={"PYTHONIOENCODING": encoding})
    assert done.returncode == utf8.returncode == 1
    text = done.stdout.decode(encoding)
    assert len(text.splitlines()) == len(out(utf8).splitlines())
    assert "2 failed" in text and "FD104" in text and "\\u" not in text
    if encoding == "ascii":
        assert re.search(r"^FAIL FD104 ", text, re.M) and re.search(r"^  OK FD", text, re.M)
        assert "marked FAIL" in text
        assert "->" in text  # the fix arrow


def test_every_language_prints_under_ascii():
    facts = Path(__file__).parent / "fixtures" / "facts" / "cpu_only.json"
    for lang in ("en", "ja", "pt-BR", "hi"):
        done = run("check", "--from-facts", str(facts), env={"PYTHONIOENCODING": "ascii", "FLEXDOCTOR_LANG": lang})
        assert done.returncode == 0 and len(done.stdout.decode("ascii").splitlines()) > 5, lang


def test_facts_prints_under_ascii():
    done = run("facts", "--static", env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert "host:" in done.stdout.decode("ascii")


def test_fleet_merge_prints_under_ascii(tmp_path):
    from _fleet_nodes import driver, report_for, write

    reports = {f"gpu{i}": report_for(f"gpu{i}") for i in range(3)}
    reports["gpu3"] = report_for("gpu3", change=driver("535.183.01", "12.2"))  # fails: ✗ in the report
    folder = write(tmp_path / "reports", reports)
    utf8 = run("fleet", "merge", str(folder))
    done = run("fleet", "merge", str(folder), env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == utf8.returncode
    assert "✗" in out(utf8)
    assert len(done.stdout.decode("ascii").splitlines()) == len(out(utf8).splitlines()) > 3


# ---------------------------------------------------------------- crafted facts: renderers survive

def test_a_crafted_facts_file_never_crashes_a_renderer(tmp_path):
    """The JUnit and -v renderers crashed (exit 2) on facts with numbers where strings belong."""
    d = load_facts_dict("h100")
    d["host"]["hostname"] = 12345
    d["timings"] = {"gpu": "slow", "host": None, "interp": [1], "x": True}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(d))
    for args in (["--format", "junit"], ["-v"], ["--format", "markdown"], ["--format", "github"], ["--format", "json"]):
        done = run("check", "--from-facts", str(path), *args)
        assert done.returncode in (0, 1), (args, done.stderr.decode())
        assert b"internal error" not in done.stderr
    junit = out(run("check", "--from-facts", str(path), "--format", "junit"))
    assert ET.fromstring(junit.encode()).find("testsuite").get("hostname") == "12345"


# ---------------------------------------------------------------- plurals

@pytest.mark.parametrize("lang, one, many", [
    ("en", "1 warning,", "2 warnings,"), ("pt-BR", "1 aviso,", "2 avisos,"),
    ("ja", "警告 1、", "警告 2、"), ("hi", "1 warning,", "2 warning,")])
def test_summary_counts_speak_each_language(lang, one, many):
    from flexdoctor import text
    from flexdoctor.facts import Facts
    from flexdoctor.model import Report, Result, Status
    from flexdoctor.render._common import summary_line

    def report(n: int) -> Report:
        results = tuple(Result(f"FD{100 + i}", "x", "t", "gpu", Status.WARN, "m") for i in range(n))
        return Report(results=results, facts=Facts(), flexdoctor_version="0", strict=False, profile="default")

    text.set_language(lang)
    assert one in summary_line(report(1)) and "1 warnings" not in summary_line(report(1))
    assert many in summary_line(report(2))


# ---------------------------------------------------------------- the commands' own lines (cli/*.py)
# What the commands write themselves, outside any report: refusals with their fix commands,
# "running ..." lines, progress, the worker's last words. A folder named like EVIL (everything but
# "/" and NUL can be in a name) reaches each of them; not one may come out raw.

NEEDS_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="needs root (a folder of uid 65534, judged by the root guard)")
EVIL_NAME = EVIL[len("/tmp/"):]


def assert_lines_are_ours(stream: bytes) -> str:
    text = stream.decode("utf-8", "surrogateescape")
    assert_no_outside_line(text)
    assert "\x1b" not in text and "\udcff" not in text
    assert "\\x1b[2J" in text, text  # the outside text is there, shown
    return text


@pytest.fixture
def evil_dir(tmp_path) -> Path:
    folder = tmp_path / EVIL_NAME
    folder.mkdir(mode=0o700)
    tmp_path.chmod(0o755)
    return folder


def test_a_refused_cache_dir_prints_its_fix_as_data(evil_dir):
    """cli/_safety.py printed FD504's fix commands raw: the path's line breaks painted lines."""
    evil_dir.chmod(0o777)
    for args in (["cache", "why", "--cache-dir", str(evil_dir), "--", "true"],
                 ["trace", "--cache-dir", str(evil_dir), "--", "true"]):
        done = run(*args)
        assert done.returncode == 2, done.stderr
        text = assert_lines_are_ours(done.stderr)
        assert "$ chmod go-w '" in text


def test_running_lines_of_cache_why_and_trace_are_data(evil_dir):
    """`cache why` and `trace` say what they run and where: the cache path was printed raw."""
    for args in (["cache", "why", "--cache-dir", str(evil_dir), "--", "true", "a\x1b[2J\n::warning::x"],
                 ["trace", "--cache-dir", str(evil_dir), "--", "true"]):
        done = run(*args)
        assert done.returncode in (0, 1), done.stderr
        assert_lines_are_ours(done.stderr)
        assert_no_outside_line(out(done))


def test_clear_cache_lines_and_its_lock_holder_are_data(evil_dir):
    """clear-cache's plan, and its refusal naming the process that holds the lock (its path and
    command line are outside text)."""
    from test_cache_clear import _inductor

    done = run("clear-cache", "--dry-run", "--cache-dir", str(evil_dir))
    assert done.returncode == 0, done.stderr
    assert_lines_are_ours(done.stdout)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY);"
                               " fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
                               str(evil_dir), "\x1b[2J\n::warning::pwned"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline() == b"held\n"
        _inductor(evil_dir)  # something to clear, so that it takes the lock
        done = run("clear-cache", "--inductor", "--yes", "--cache-dir", str(evil_dir))
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1, done.stderr
    text = assert_lines_are_ours(done.stderr + done.stdout)
    assert str(holder.pid) in text


def test_a_failing_bench_worker_is_quoted_not_obeyed(tmp_path):
    """bench's "could not run" line carried the worker's stderr raw: its lines became lines of ours."""
    wrapper = tmp_path / "python"
    wrapper.write_text("#!/bin/sh\n"
                       "for a in \"$@\"; do case \"$a\" in *_bench_worker.py)\n"
                       "  printf 'boom\\033[2J\\n  ::warning::pwned\\nall nodes ready\\n##[error]x\\n' >&2; exit 3;; esac; done\n"
                       f"exec {shlex.quote(sys.executable)} \"$@\"\n")
    wrapper.chmod(0o755)
    tmp_path.chmod(0o755)
    done = run("bench", "--device", "cpu", "-L", "128", "-d", "64", "--impl", "sdpa-math", "--pass", "fwd",
               "--python", str(wrapper), timeout=300)
    assert done.returncode == 2, done.stderr
    text = done.stderr.decode()
    assert_no_outside_line(text)
    assert "boom" in text and "::warning::pwned" in text  # quoted, indented, never a line of its own


@NEEDS_ROOT
def test_an_interpreter_judged_from_its_files_is_named_as_data(evil_dir):
    """As root, `check --static --python` on an interpreter another user owns: the note that says
    so (cli/_root.py) printed the path raw."""
    python = evil_dir / "python"
    shutil.copy2(sys.executable, python)
    evil_dir.chmod(0o755)
    os.chown(python, 65534, 65534)
    done = run("check", "--static", "--python", str(python))
    assert done.returncode in (0, 1), done.stderr
    assert_lines_are_ours(done.stderr)
