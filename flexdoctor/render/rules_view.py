"""`flexdoctor rules [ID]`: the check list, the knowledge base, or one entry in full."""

from __future__ import annotations

from typing import Optional

from .. import checks, knowledge
from ..knowledge.structural.model import KINDS
from ..text import has, t
from ._common import wrap
from ._escape import no_commands

WIDTH = 96  # terminal cells, not characters: see _common.wrap


def _listing() -> str:
    specs, _ = checks.all_checks()
    out = [t("rules.checks")]
    for s in specs:
        out.append(f"  {s.id}  {s.symbol:<24} {s.title}")
    out += ["", t("rules.knowledge")]
    for e in sorted(knowledge.entries().values(), key=lambda e: e.id):
        out.append(f"  {e.id} {e.symbol:<30} {e.title}")
    out += ["", t("rules-structural.heading")]
    for kind, id_ in _structural():
        out.append(f"  {id_} {kind:<30} {t(f'rules-structural.title.{kind}')}")
    out += ["", t("rules.one")]
    return "\n".join(out) + "\n"


def _entry(e: knowledge.Entry) -> str:
    fix = e.render()
    out = [f"{e.id} {e.symbol}: {e.title}", ""]
    out += [t("rules.cause"), wrap(e.cause, WIDTH, "  "), "", t("rules.fix"), wrap(fix.summary, WIDTH, "  ")]
    if fix.commands:
        out += [""] + [f"  $ {c}" for c in fix.commands]
    if e.patterns:
        out += ["", t("rules.patterns")] + [f"  {p}" for p in e.patterns]
    if e.applies:
        out += ["", wrap(t("rules.applies", applies=e.applies), WIDTH)]
    if e.links:
        out += ["", t("rules.sources")] + [f"  {link}" for link in e.links]
    return "\n".join(out) + "\n"


# The words explain uses for a kind (locale/en.structural.toml): its title and, where there is one
# for the kind as a whole, its cause; placeholders ({lib}) stay visible, the log fills them.
_EXPLAIN_WORDS = {
    "shared-library": "lib", "undefined-symbol": "symbol", "missing-module": "module", "import-name": "import_name",
    "version-constraint": "version", "pip-no-distribution": "pip", "cuda-error": "cuda", "nccl-error": "nccl",
    "windows-error": "windows", "triton-resources": "triton", "out-of-memory": "oom", "unsupported-op": "unsupported",
    "unknown": "unknown",
}


def _structural() -> list:
    """(kind, FDS###) of explain's structural layer, by ID (knowledge/structural/model.py KINDS;
    "entry" is the knowledge base's FDE### itself)."""
    return sorted(((kind, v[0]) for kind, v in KINDS.items() if v[0].startswith("FDS")), key=lambda kv: kv[1])


def _structural_kind(ref: str):
    """The kind ``ref`` names (FDS101, fds101 or shared-library), or None."""
    word = ref.strip().lower()
    return next((kind for kind, id_ in _structural() if word in (id_.lower(), kind)), None)


def _kind(kind: str) -> str:
    id_, subject = KINDS[kind]
    out = [f"{id_} {kind}: {t(f'rules-structural.title.{kind}')}", t("rules-structural.area"), ""]
    out += [t("rules-structural.what"), wrap(t(f"rules-structural.about.{kind}"), WIDTH, "  ")]
    out += ["", t("rules-structural.subject"), wrap(subject, WIDTH, "  ")]
    words = _EXPLAIN_WORDS.get(kind)
    if words and has(f"structural.title.{words}"):
        out += ["", t("rules-structural.shown"), wrap(t(f"structural.title.{words}"), WIDTH, "  ")]
    if words and has(f"structural.cause.{words}"):
        out += ["", t("rules-structural.cause"), wrap(t(f"structural.cause.{words}"), WIDTH, "  ")]
    return "\n".join(out) + "\n"


def _check_header(id_: str, symbol: str, title: str, area: str) -> str:
    return f"{id_} {symbol}: {title}\n{t('rules.area', area=area)}\n\n"


# FD000's documentation, as a check's docstring would be (docstrings are the rules' reference
# text and stay English, like --help).
PLUGIN_LOAD_DOC = """What it checks: every entry point in the `flexdoctor.checks` group imports and declares valid
checks (FD### id not taken, kebab-case symbol, known area, docstring with the three headings).

Why it matters: a broken plugin must not crash the doctor or hide the built-in checks; it is
reported as an error result instead, and `check` exits 1.

How to fix: fix or uninstall the plugin named in the message, or run `flexdoctor check --no-plugins`.
"""


def render(ref: Optional[str]) -> str:
    return no_commands(_render(ref))


def _render(ref: Optional[str]) -> str:
    if not ref:
        return _listing()
    if ref.strip().lower() in ("fd000", "plugin-load"):
        return _check_header("FD000", "plugin-load", t("plugin-load.title"), "plugin") + PLUGIN_LOAD_DOC
    specs, _ = checks.all_checks()
    spec = checks.find(ref, specs)
    if spec is not None:
        return _check_header(spec.id, spec.symbol, spec.title, spec.area) + f"{spec.doc}\n"
    kind = _structural_kind(ref)
    if kind is not None:
        return _kind(kind)
    return _entry(knowledge.get(ref))
