"""Shared test helpers. Keep additive: other test modules may add functions here."""

from __future__ import annotations

import json
from pathlib import Path

FACTS_DIR = Path(__file__).parent / "fixtures" / "facts"


def facts_fixture_names() -> list[str]:
    """Names (file stems) of every recorded-facts fixture, sorted."""
    return sorted(p.stem for p in FACTS_DIR.glob("*.json"))


def load_facts_dict(name: str) -> dict:
    return json.loads((FACTS_DIR / f"{name}.json").read_text(encoding="utf-8"))


def load_facts(name: str):
    """A recorded-facts fixture as a Facts object."""
    from flexdoctor.facts import Facts

    return Facts.from_dict(load_facts_dict(name))


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _english_reports(monkeypatch):
    """Reports in English whatever the developer's locale (LANG=ja_JP… would change every golden).

    Language tests opt out by setting FLEXDOCTOR_LANG themselves or calling ``set_language``.
    """
    from flexdoctor import text

    monkeypatch.setenv("FLEXDOCTOR_LANG", "en")
    text.set_language(None)
    yield
    text.set_language(None)


# ------------------------------------------------------------------ printed pip commands (wheels)


def parse_pip_install(command: str):
    """A printed ``... pip install ...`` command split as a POSIX shell would (shlex) and parsed by
    pip's own ``install`` option parser: unknown flags or a flag without its value fail the test.
    Returns (options, requirement strings)."""
    import shlex

    from pip._internal.commands import create_command

    argv = shlex.split(command)
    assert "install" in argv, command
    i = argv.index("install")
    assert i > 0 and argv[i - 1] == "pip", f"not a pip install command: {command}"
    options, args = create_command("install", isolated=True).parse_args(argv[i + 1:])  # no pip.conf / PIP_*
    return options, args


def torch_pin_of(command: str):
    """(torch version pinned with ==, wheel variant from --index-url or None, companions) of a
    printed torch install command; every requirement must parse as a PEP 508 requirement."""
    from packaging.requirements import Requirement

    from flexdoctor import wheels

    options, args = parse_pip_install(command)
    reqs = [Requirement(a) for a in args]
    torch = [r for r in reqs if r.name == "torch"]
    assert len(torch) == 1, command
    pins = [s.version for s in torch[0].specifier if s.operator == "=="]
    variant = None  # PyPI (pip's default index)
    if options.index_url.startswith(wheels.INDEX + "/"):
        variant = options.index_url[len(wheels.INDEX) + 1:]
    else:
        assert options.index_url == "https://pypi.org/simple", command
    return (pins[0] if pins else None), variant, [r for r in reqs if r.name != "torch"]


def has_cuda() -> bool:
    """A CUDA GPU torch can use here (GPU tests skip without one)."""
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def needs_cuda() -> list:
    """The marks of a module of GPU tests: ``pytestmark = needs_cuda()`` (torch is imported only
    when such a module is collected)."""
    return [pytest.mark.gpu, pytest.mark.skipif(not has_cuda(), reason="needs a CUDA GPU")]

