"""The check registry and the data it leans on: IDs, symbols, docstrings, catalog keys, KB refs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import flexdoctor.checks as checks_pkg
from flexdoctor import knowledge
from flexdoctor.checks import builtin
from flexdoctor.checks.base import AREAS, DOC_HEADINGS, ID_RE, SYMBOL_RE
from flexdoctor.text import catalog, has

SPECS = builtin()
CHECKS_DIR = Path(checks_pkg.__file__).parent
RUNNER = CHECKS_DIR.parent / "runner.py"
CATALOG_CALLS = {"passed", "warn", "fail", "skip", "t"}


def _trees(paths):
    return {p.name: ast.parse(p.read_text(encoding="utf-8"), filename=str(p)) for p in paths}


CHECK_TREES = _trees(sorted(CHECKS_DIR.glob("*.py")))


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _first_arg_strings(node: ast.Call) -> list[str]:
    """Literal strings a call's first argument can be (a constant or either side of `a if c else b`)."""
    if not node.args:
        return []
    arg = node.args[0]
    options = [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]
    return [o.value for o in options if isinstance(o, ast.Constant) and isinstance(o.value, str)]


def _catalog_keys_used() -> set[tuple[str, str]]:
    keys = set()
    symbols = {s.symbol for s in SPECS} | {"common"}
    trees = {**CHECK_TREES, **_trees([RUNNER])}
    for fname, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node) in CATALOG_CALLS:
                keys.update((fname, k) for k in _first_arg_strings(node))
            # Keys picked from a table ({"crash": "torch-importable.crash", ...}) are plain strings.
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                m = re.fullmatch(r"([a-z0-9-]+)\.[a-z0-9_]+", node.value)
                if m and m.group(1) in symbols:
                    keys.add((fname, node.value))
    return keys


def _kb_refs_used() -> set[tuple[str, str]]:
    refs = set()
    for fname, tree in CHECK_TREES.items():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("fix", "get") and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "kb"):
                refs.update((fname, r) for r in _first_arg_strings(node))
    return refs


# ------------------------------------------------------------------------- the registry


def test_builtin_checks_exist_and_are_sorted():
    assert len(SPECS) >= 20
    assert [s.id for s in SPECS] == sorted(s.id for s in SPECS)


def test_ids_and_symbols_are_unique():
    ids = [s.id for s in SPECS]
    symbols = [s.symbol for s in SPECS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert len(symbols) == len(set(symbols)), sorted(s for s in symbols if symbols.count(s) > 1)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_id_symbol_area_format(spec):
    assert ID_RE.match(spec.id), spec.id
    assert re.fullmatch(r"FD[1-9]\d\d", spec.id), spec.id  # FD0xx is reserved (FD000 plugin-load)
    assert SYMBOL_RE.match(spec.symbol), spec.symbol
    assert spec.area in AREAS


def test_id_hundreds_follow_the_area():
    # FD1xx gpu, FD2xx torch, FD3xx compiler, FD4xx toolchain, FD6xx platform, FD9xx the GPUs of a
    # node together (see the check modules).
    prefix = {"gpu": "FD1", "torch": "FD2", "compiler": "FD3", "toolchain": "FD4", "platform": "FD6",
              "multigpu": "FD9"}
    for spec in SPECS:
        if spec.area in prefix:
            assert spec.id.startswith(prefix[spec.area]), (spec.id, spec.area)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_docstring_has_the_three_headings_in_order(spec):
    doc = spec.doc
    positions = [doc.find(h) for h in DOC_HEADINGS]
    assert all(p >= 0 for p in positions), f"{spec.id} docstring lacks one of {DOC_HEADINGS}"
    assert positions == sorted(positions), f"{spec.id} docstring headings out of order"
    assert doc.startswith(DOC_HEADINGS[0])
    for heading, nxt in zip(DOC_HEADINGS, DOC_HEADINGS[1:] + ("",)):
        section = doc.split(heading, 1)[1].split(nxt, 1)[0] if nxt else doc.split(heading, 1)[1]
        assert len(section.strip()) > 10, f"{spec.id}: '{heading}' section is empty"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_every_check_has_a_catalog_title(spec):
    assert has(f"{spec.symbol}.title"), f"no {spec.symbol}.title in the locale catalog"
    assert spec.title.strip()


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_spec_is_valid_as_a_plugin_would_be(spec):
    assert spec.problems() == []


# ------------------------------------------------------------------------- catalog and knowledge base


def test_catalog_keys_used_by_checks_exist():
    used = _catalog_keys_used()
    assert len(used) > 50  # the scan found the calls
    missing = sorted(f"{fname}: {key}" for fname, key in used if not has(key))
    assert missing == []


def test_catalog_has_no_unused_check_sections():
    symbols = {s.symbol for s in SPECS}
    sections = {k.split(".", 1)[0] for k in catalog("en")}
    check_like = {s for s in sections if f"{s}.title" in catalog("en") and s not in ("plugin-load",)}
    assert check_like - symbols == set(), "catalog titles for checks that do not exist"


def test_kb_entries_referenced_by_checks_exist():
    used = _kb_refs_used()
    assert len(used) > 15
    missing = []
    for fname, ref in sorted(used):
        try:
            knowledge.get(ref)
        except KeyError:
            missing.append(f"{fname}: {ref}")
    assert missing == []


def test_kb_entries_are_well_formed():
    entries = knowledge.entries()
    symbols = [e.symbol for e in entries.values()]
    assert len(symbols) == len(set(symbols))
    for entry in entries.values():
        assert re.fullmatch(r"FDE\d{3}", entry.id), entry.id
        assert SYMBOL_RE.match(entry.symbol), entry.symbol
        assert entry.title and entry.cause and entry.fix
        for pattern in entry.patterns:
            re.compile(pattern)
