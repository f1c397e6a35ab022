"""Languages: how the language is chosen, and that every translation covers every English text."""

from __future__ import annotations

import pytest

from flexdoctor import knowledge, text
from flexdoctor.locale import audit

TRANSLATIONS = [lang for lang in text.available() if lang != "en"]


@pytest.mark.parametrize("tag, expected", [
    ("ja_JP.UTF-8", "ja"), ("ja", "ja"), ("JA_jp", "ja"),
    ("pt_BR.UTF-8", "pt-BR"), ("pt-br", "pt-BR"), ("pt_PT.UTF-8", "pt-BR"), ("pt", "pt-BR"),
    ("hi_IN.UTF-8", "hi"), ("hi", "hi"),
    ("en_US.UTF-8", "en"), ("C", "en"), ("C.UTF-8", "en"), ("POSIX", "en"),
])
def test_locale_tags_name_a_catalogue(tag, expected):
    if expected not in text.available():
        pytest.skip(f"no {expected} catalogue yet")
    assert text.normalize(tag) == expected


@pytest.mark.parametrize("tag", ["fr_FR.UTF-8", "xx", "de", "klingon@tlh", ""])
def test_unknown_languages_are_english_without_error(tag, monkeypatch):
    monkeypatch.setenv("FLEXDOCTOR_LANG", tag)
    assert text.language() == "en"
    assert text.t("gpu-present.title") == text.catalog("en")["gpu-present.title"]


def test_precedence_flag_then_flexdoctor_lang_then_posix_variables(monkeypatch):
    other = TRANSLATIONS[0] if TRANSLATIONS else None
    if other is None:
        pytest.skip("no translation yet")
    for var in ("FLEXDOCTOR_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert text.language() == "en"
    monkeypatch.setenv("LANG", other)
    assert text.language() == other
    monkeypatch.setenv("LC_MESSAGES", "C")
    assert text.language() == "en"          # LC_MESSAGES before LANG
    monkeypatch.setenv("LC_ALL", other)
    assert text.language() == other         # LC_ALL before LC_MESSAGES
    monkeypatch.setenv("FLEXDOCTOR_LANG", "en")
    assert text.language() == "en"          # FLEXDOCTOR_LANG before the POSIX variables
    text.set_language(other)
    assert text.language() == other         # --lang before everything


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_every_english_text_is_translated_with_the_same_placeholders(lang):
    report = audit.audit(lang)
    assert report["missing"] == [], f"{lang}: untranslated keys (python -m flexdoctor.locale {lang})"
    assert report["placeholders"] == [], f"{lang}: placeholders differ from English"


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_translated_knowledge_keeps_ids_patterns_and_commands(lang):
    text.set_language(lang)
    translated = knowledge.entries()
    text.set_language("en")
    english = knowledge.entries()
    assert translated.keys() == english.keys()
    for eid, entry in english.items():
        other = translated[eid]
        assert (other.symbol, other.patterns, other.commands, other.links) == \
               (entry.symbol, entry.patterns, entry.commands, entry.links)
        assert other.title != entry.title or eid.startswith("FDE0"), f"{lang}: {eid} title not translated"


def test_audit_reports_missing_and_mismatched_placeholders(monkeypatch):
    fake = {"gpu-present.title": "GPU", "gpu-present.pass": "{count} GPU", "gone.key": "x"}
    real = text.catalog
    monkeypatch.setattr(text, "catalog", lambda lang: fake if lang == "xx" else real(lang))
    report = audit.audit("xx")
    assert "gpu-present.pass" in report["placeholders"]       # English fills {count} {names} {driver} {cuda}
    assert "gpu-present.none" in report["missing"]
    assert report["extra"] == ["gone.key"]
    assert any(k.startswith("kb.FDE") for k in report["missing"])


def test_locale_tool_exits_1_for_an_incomplete_language(capsys):
    from flexdoctor.locale.__main__ import main

    assert main(["no-such-lang"]) == 1
    assert "no catalogue" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["rules", "--lang", "{lang}"], ["--lang", "{lang}", "rules"]])
@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_lang_option_on_the_command_and_before_it(argv, lang):
    from typer.testing import CliRunner

    from flexdoctor.cli import app

    result = CliRunner().invoke(app, [a.format(lang=lang) for a in argv])
    assert result.exit_code == 0, result.output
    assert text.catalog(lang)["gpu-present.title"] in result.output
    assert text.catalog("en")["gpu-present.title"] not in result.output


def test_unknown_lang_option_is_english_without_error():
    from typer.testing import CliRunner

    from flexdoctor.cli import app

    result = CliRunner().invoke(app, ["rules", "--lang", "tlh"])
    assert result.exit_code == 0, result.output
    assert text.catalog("en")["gpu-present.title"] in result.output


# ------------------------------------------------------------------ words that are data until shown


@pytest.fixture
def speak():
    """Switch the report language for one test, back to the environment's afterwards."""
    yield text.set_language
    text.set_language(None)


def test_knowledge_applies_and_word_defaults_are_catalogue_keys():
    words = knowledge.english_words()
    assert words["kb.FDE608.applies"] == knowledge._english()["FDE608"].applies
    assert words["kb.FDE302.defaults.requirement"] == "the version in torch's Requires-Dist"
    assert "kb.FDE302.defaults.python" not in words  # code, not words: never translated
    assert knowledge._english()["FDE101"].applies is None and "kb.FDE101.applies" not in words


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_translated_defaults_fill_the_translated_fix(lang, speak):
    english = knowledge._english()["FDE302"]
    speak(lang)
    entry = knowledge.get("FDE302")
    assert entry.applies == english.applies  # FDE302 has none
    assert entry.defaults["requirement"] == text.catalog(lang)["kb.FDE302.defaults.requirement"]
    assert entry.defaults["python"] == english.defaults["python"]
    assert text.catalog(lang)["kb.FDE302.defaults.requirement"] in entry.render().summary
    assert knowledge.get("FDE608").applies == text.catalog(lang)["kb.FDE608.applies"]


def test_translate_must_name_a_default():
    from flexdoctor._toml import loads

    raw = loads('[[entry]]\nid = "FDE999"\nsymbol = "x"\ntitle = "t"\ncause = "c"\nfix = "{a}"\n'
                'translate = ["b"]\n[entry.defaults]\na = "code"\n')["entry"][0]
    entry = knowledge.Entry(**{**raw, "translate": tuple(raw["translate"])})
    assert [n for n in entry.translate if n not in entry.defaults] == ["b"]  # what _english() refuses


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_probe_errors_are_worded_in_the_report_language(lang, speak):
    from flexdoctor.checks._util import probe_error_text
    from flexdoctor.facts import Facts, ProbeError

    err = ProbeError.because("crashed", kind="crash", program="/usr/bin/python3 _torch_probe.py", signal="SIGSEGV")
    assert err.message == "/usr/bin/python3 _torch_probe.py crashed (SIGSEGV)"  # the JSON keeps English
    assert Facts.from_dict(Facts(torch_runtime=err).to_dict()).torch_runtime == err  # reason/args round-trip
    speak(lang)
    said = probe_error_text(err)
    assert said == text.catalog(lang)["probe-error.crashed"].format(**err.args)
    assert "SIGSEGV" in said and "_torch_probe.py" in said
    # A ProbeError that only carries another program's words (an import error, an old recording).
    assert probe_error_text(ProbeError("ImportError: libcudart.so.12", kind="import-error")) == \
        "ImportError: libcudart.so.12"


@pytest.mark.parametrize("lang", ["en", *TRANSLATIONS])
def test_a_check_missing_its_facts_skips_in_words(lang, speak):
    from flexdoctor import checks, runner
    from flexdoctor.facts import Facts, ProbeError

    speak(lang)
    spec = checks.find("FD101", checks.builtin())
    absent = runner.run_one(spec, Facts(gpu=None))
    assert absent.status.value == "skip"
    assert absent.message == text.t("skip.unavailable", what=text.t("needs.gpu"))
    failed = runner.run_one(spec, Facts(gpu=ProbeError.because("probe_timeout", kind="timeout", probe="gpu",
                                                                 seconds="5")))
    assert failed.message == text.t("skip.failed", what=text.t("needs.gpu"),
                                    reason=text.t("probe-error.probe_timeout", probe="gpu", seconds="5"))


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_usage_errors_speak_the_language(lang):
    from typer.testing import CliRunner

    from flexdoctor.cli import app

    try:
        result = CliRunner().invoke(app, ["--lang", lang, "check", "--format", "yaml"])
        assert result.exit_code == 2
        choices = "text, json, markdown, github, junit"
        said = text.catalog(lang)["cli.error.format"].format(value="yaml", choices=choices)
        assert text.catalog(lang)["cli.usage_error"].format(message=said) in result.output
    finally:
        text.set_language(None)


def test_locale_tool_is_quiet_when_its_reader_goes_away():
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m flexdoctor.locale en | head -c 1", shell=True,
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_wrapping_counts_terminal_cells():
    from rich.cells import cell_len

    from flexdoctor.render._common import wrap

    ja = "ドライバーが対応する CUDA 向けにビルドされた torch のホイール（cu126）をインストールしてください。" * 3
    lines = wrap(ja, 40, "  ").splitlines()
    assert all(cell_len(ln) <= 40 for ln in lines) and len(lines) > 4
    assert not any(ln.lstrip().startswith(("、", "。", "）")) for ln in lines)  # kinsoku
    assert "".join(ln.strip() for ln in lines).replace(" ", "") == ja.replace(" ", "")
    hi = "NVIDIA driver को ऐसे driver पर अपग्रेड करें जो CUDA 13.0 सपोर्ट करे, या वह torch wheel इंस्टॉल करें"
    assert all(cell_len(ln) <= 30 for ln in wrap(hi, 30).splitlines())


def test_a_placeholder_may_be_named_key():
    """t()'s own parameter is positional-only: settings errors fill {key} (the settings key)."""
    assert "'profle'" in text.t("settings.unknown_key", where="pyproject.toml", key="profle", known="profile")
    assert "'profle'" in text.english("settings.unknown_key", where="x", key="profle", known="y")


@pytest.mark.parametrize("lang", ["en", *TRANSLATIONS])
def test_no_key_is_written_in_two_files(lang):
    """Files of one language are merged: a key in two of them would silently hide one text."""
    from importlib import resources

    from flexdoctor._toml import loads

    where: dict = {}
    for item in resources.files("flexdoctor.locale").iterdir():
        name = item.name
        if name == f"{lang}.toml" or (name.startswith(f"{lang}.") and name.endswith(".toml")):
            flat: dict = {}
            text._flatten(loads(item.read_text(encoding="utf-8")), flat)
            for key in flat:
                where.setdefault(key, []).append(name)
    assert {k: v for k, v in where.items() if len(v) > 1} == {}


# --------------------------------------------------------------------------- the catalogue reader

def test_fast_catalogue_reader_equals_the_toml_parser_on_every_catalogue():
    from pathlib import Path

    from flexdoctor import _toml, text

    files = sorted((Path(text.__file__).parent / "locale").glob("*.toml"))
    assert len(files) > 40
    fast_read = 0
    for f in files:
        source = f.read_text(encoding="utf-8")
        flat: dict = {}
        text._flatten(_toml.loads(source), flat)
        fast = text._simple_catalogue(source)
        if fast is not None:
            fast_read += 1
            assert fast == flat, f.name
    assert fast_read >= len(files) - 2  # the catalogues are written in the simple form


@pytest.mark.parametrize("source", [
    'a = """multi\nline"""\n',           # a multi-line string
    'a = "x"\na = "y"\n',                # a key twice (the TOML parser reports it)
    '[t]\na = "x"\n[t]\nb = "y"\n',     # a table twice
    'a = "x"\n[a.b]\nc = "y"\n',         # a table under a text
    'a.b = "x"\n',                       # a dotted key
    '"quoted key" = "x"\n',              # a quoted key
    'a = "\\u00e9"\n',                   # a \\u escape
    'a = "\\e"\n',                       # an escape TOML 1.0 does not have
    'a = 3\n',                           # not a text
    'a = "x" b\n',                       # garbage after the value
    'a = "x"\rb = "y"\n',                # a lone \r is no TOML newline
    'a = "x"\x0bb = "y"\n',              # nor \x0b (str.splitlines would split there)
    '# \x01\na = "x"\n',                  # a control character in a comment
])
def test_fast_catalogue_reader_leaves_anything_else_to_the_toml_parser(source):
    from flexdoctor import text

    assert text._simple_catalogue(source) is None


def test_fast_catalogue_reader_reads_the_simple_form():
    from flexdoctor import _toml, text

    source = ('# comment\n\n[a.b]  # why\nx = "tab\\there \\"q\\" \\\\ back"   # note\n'
              "y = 'lit \\\\n eral'\n  z=\"\"\n[c]\nw = \"ja: キャッシュ\"\n")
    flat: dict = {}
    text._flatten(_toml.loads(source), flat)
    assert text._simple_catalogue(source) == flat == {
        "a.b.x": 'tab\there "q" \\ back', "a.b.y": "lit \\\\n eral", "a.b.z": "", "c.w": "ja: キャッシュ"}


@pytest.mark.parametrize("source", ['# c\u2028k = "v"\n', '# x\u2029[t]\nk = "v"\n', 'a = "x"\r\nb = "y"\r\n',
                                    'a = "x\u2028y"\n'])
def test_fast_catalogue_reader_splits_lines_as_toml_does(source):
    from flexdoctor import _toml, text

    flat: dict = {}
    text._flatten(_toml.loads(source), flat)
    assert text._simple_catalogue(source) == flat

