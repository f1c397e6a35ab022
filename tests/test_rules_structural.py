"""`flexdoctor rules FDS###`: explain prints "FDS101 shared-library: ..." for an error read by its
shape (knowledge/structural/model.py KINDS); `rules` must print every such ID, and list them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from flexdoctor import text
from flexdoctor.knowledge.structural.model import KINDS
from flexdoctor.render import rules_view

STRUCTURAL = sorted((v[0], kind) for kind, v in KINDS.items() if v[0].startswith("FDS"))


def run(*args: str, lang: str = "en") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(FLEXDOCTOR_LANG=lang)
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_every_structural_id_is_a_kind_here():
    ids = [id_ for id_, _ in STRUCTURAL]
    assert ids[0] == "FDS101" and "FDS112" in ids and ids[-1] == "FDS199" and len(set(ids)) == len(ids)


@pytest.mark.parametrize("id_, kind", STRUCTURAL)
def test_rules_prints_each_structural_kind(id_, kind):
    for ref in (id_, id_.lower(), kind):
        shown = rules_view.render(ref)
        assert shown.startswith(f"{id_} {kind}: {text.t(f'rules-structural.title.{kind}')}\n"), ref
        assert KINDS[kind][1] in shown  # what the answer's subject names
        assert text.t(f"rules-structural.about.{kind}") in shown.replace("\n  ", " ")


def test_the_cli_prints_one_and_lists_them_all():
    done = run("rules", "FDS101")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("FDS101 shared-library: A shared library cannot be loaded\n")
    assert "{lib} cannot be loaded ({what})" in done.stdout  # explain's own title, as it fills it
    listing = run("rules").stdout
    section = listing[listing.index("Errors explain reads by their shape"):]
    for id_, kind in STRUCTURAL:
        assert f"  {id_} {kind} " in section
    assert run("rules", "FDS998").returncode == 2


@pytest.mark.parametrize("lang", ["ja", "pt-BR", "hi"])
def test_the_kinds_speak_each_language(lang):
    done = run("rules", "FDS107", lang=lang)
    assert done.returncode == 0, done.stderr
    text.set_language(lang)
    assert done.stdout.startswith(f"FDS107 cuda-error: {text.t('rules-structural.title.cuda-error')}\n")
    assert text.t("rules-structural.title.cuda-error") != text.english("rules-structural.title.cuda-error")


def test_every_structural_kind_has_its_words_in_every_language():
    """A kind added to KINDS without its rules words broke `rules` in every language."""
    from flexdoctor import text
    from flexdoctor.knowledge.structural.model import KINDS

    for lang in ("en", "ja", "pt-BR", "hi"):
        cat = text.catalog(lang)
        missing = [k for k in KINDS if k != "entry" and not (cat.get(f"rules-structural.title.{k}")
                                                             and cat.get(f"rules-structural.about.{k}"))]
        assert missing == [], (lang, missing)
