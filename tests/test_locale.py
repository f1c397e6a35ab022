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
