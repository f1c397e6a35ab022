"""click's usage errors in the report's language (cli/_click_errors.py): the entry point runs typer
with standalone_mode=False and words them; exit codes stay click's (2), no traceback ever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def fd(*args: str, lang: str = "en"):
    env = dict(os.environ, PYTHONPATH=str(ROOT), FLEXDOCTOR_LANG=lang, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True,
                          env=env, timeout=60)


CASES = [  # argv, English, Japanese
    (["chek"], "Error: No such command 'chek'. Did you mean 'check'", "エラー: そのようなコマンドはない: 'chek'。もしかして"),
    (["check", "--bogus"], "Error: No such option: --bogus", "そのようなオプションはない: --bogus"),
    (["check", "--format"], "Error: Option '--format' requires an argument.", "オプション '--format' には値が必要。"),
    (["check", "extra"], "Error: Got unexpected extra argument(s) (extra)", "余分な引数がある（extra）"),
    (["warm-cache", "--jobs", "x"], "Error: Invalid value for '--jobs' / '-j': 'x' is not a valid int",  # click's words (int/integer)
     "'--jobs' / '-j' の値が不正: 'x' は整数ではない。"),
    (["fleet", "merge"], "Error: Missing argument 'DIR|FILE...'.", "引数 'DIR|FILE...' が指定されていない。"),
]


@pytest.mark.parametrize("argv,english,japanese", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_usage_errors_in_english_and_japanese(argv, english, japanese):
    en, ja = fd(*argv), fd(*argv, lang="ja")
    for done in (en, ja):
        assert done.returncode == 2 and "Traceback" not in done.stderr and done.stdout == ""
    assert english in en.stderr
    assert japanese in ja.stderr and "Error:" not in ja.stderr
    if argv != ["check", "--format"]:  # click gives that one no context: no usage line
        assert "Usage: " in ja.stderr  # the usage line is --help's, which stays English
        assert "ヘルプは '" in ja.stderr and "Try '" not in ja.stderr


def test_lang_on_a_command_line_click_could_not_parse():
    """--lang is honoured even when the error comes before its callback ran."""
    for argv in (["--lang", "pt-BR", "chek"], ["check", "--bogus", "--lang=pt-BR"]):
        done = fd(*argv)
        assert done.returncode == 2 and done.stderr.splitlines()[-1].startswith("Erro: "), done.stderr


def test_help_version_and_no_arguments_keep_their_exit_codes():
    assert fd("--help").returncode == 0 and fd("check", "--help").returncode == 0
    assert fd("--version").stdout.strip().startswith("flexdoctor ")
    for argv in ([], ["fleet"], ["cache"]):  # no_args_is_help: the help, exit 2 as click gives it
        done = fd(*argv)
        assert done.returncode == 2 and "Usage: " in (done.stdout + done.stderr) and "Traceback" not in done.stderr


def test_a_command_exit_code_comes_through():
    """typer.Exit(n) raised by a command is returned by typer in non-standalone mode: still n."""
    done = fd("check", "--from-facts", str(ROOT / "tests" / "fixtures" / "facts" / "driver_mismatch.json"))
    assert done.returncode == 1 and "FD101" in done.stdout
    done = fd("rules", "FD101")
    assert done.returncode == 0


def test_message_of_an_unknown_click_error_is_kept_as_click_wrote_it(monkeypatch):
    from flexdoctor import text
    from flexdoctor.cli import _click_errors as ce

    monkeypatch.setattr(text, "_chosen", "ja")

    exc = ce.exceptions().UsageError("something click says")
    assert ce.message(exc) == "something click says"
    bad = ce.exceptions().BadParameter("'q' is fancy.", param_hint="'--x'")
    assert ce.message(bad) == "'--x' の値が不正: 'q' is fancy."  # the frame translated, click's detail kept
    assert ce.language_from(["check", "--", "--lang", "ja"]) is None
    assert ce.language_from(["--lang", "hi", "chek"]) == "hi"


def test_an_aborted_prompt_is_one_line_and_exit_1(monkeypatch, capsys):
    """Ctrl-D at clear-cache's confirmation prompt: typer raises Abort; one line, exit 1, as before."""
    import typer

    import flexdoctor.cli as cli

    def abort(*a, **k):
        raise typer.Abort()

    monkeypatch.setattr(cli, "app", abort)
    monkeypatch.setattr(cli, "_only_the_command", lambda argv: None)
    monkeypatch.setattr(sys, "argv", ["flexdoctor", "clear-cache"])
    assert cli._invoke() == 1
    assert capsys.readouterr().err.strip() == "Aborted!"  # typer's own words, as before
