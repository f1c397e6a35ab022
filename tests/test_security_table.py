"""docs/SECURITY.md's tables name, for every input, the test that proves what flexdoctor does about
it. A test renamed or removed would leave a row that proves nothing: every test the test column
names must exist.

How the column names tests: ``tests/test_x.py::test_y`` or ``test_x.py::test_y``; ``::test_z`` and a
bare ``test_z`` in the same cell or a later row of the same section mean the file named last in
that section; ``tests/test_x.py``: ``test_a``, ``test_b`` lists several of one file; a bare file
is the whole file. ``[param]`` after a name picks a parametrized case (the function must exist).
A section that names no file at all means any file under tests/.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SECURITY = ROOT / "docs" / "SECURITY.md"

# A test file, or a test name (not the stem of a file name).
_TOKEN = re.compile(r"(?:tests/)?(?P<file>test_\w+\.py)|(?P<name>test_\w+)\b(?!\.py)")


@lru_cache(maxsize=None)
def _tests_in(file: str) -> frozenset:
    """Names of the test functions in tests/FILE (module level and in classes)."""
    tree = ast.parse((TESTS / file).read_text(encoding="utf-8"))
    return frozenset(node.name for node in ast.walk(tree)
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"))


def _cells(line: str) -> list:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def table_rows(text: str) -> list:
    """(section heading, test cell) for each row of each table."""
    rows, section, header = [], "", None
    for line in text.splitlines():
        if line.startswith("#"):
            section, header = line.lstrip("# ").strip(), None
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if set(line) <= set("|- :"):
            continue
        column = header.index("test") if "test" in header else -1
        rows.append((section, cells[column] if len(cells) == len(header) else cells[-1]))
    return rows


def named_tests(rows: list) -> list:
    """(section, file or None, name or None) for every test the column names."""
    out, last_file, last_section = [], None, None
    for section, cell in rows:
        if section != last_section:
            last_file, last_section = None, section
        for m in _TOKEN.finditer(cell):
            if m.group("file"):
                last_file = m.group("file")
                following = cell[m.end():m.end() + 2]
                if following != "::":
                    out.append((section, last_file, None))
            else:
                out.append((section, last_file, m.group("name")))
    return out


def missing(named: list) -> list:
    every = sorted(p.name for p in TESTS.glob("test_*.py"))
    bad = []
    for section, file, name in named:
        if file is not None and not (TESTS / file).is_file():
            bad.append(f"{section}: tests/{file} does not exist")
        elif name is None:
            continue
        elif file is not None and name not in _tests_in(file):
            bad.append(f"{section}: {file}::{name} does not exist")
        elif file is None and not any(name in _tests_in(f) for f in every):
            bad.append(f"{section}: {name} is in no file under tests/")
    return bad


def test_every_test_the_threat_model_names_exists():
    rows = table_rows(SECURITY.read_text(encoding="utf-8"))
    named = named_tests(rows)
    assert len(rows) > 50 and len(named) >= len(rows)
    assert not [cell for _section, cell in rows if not _TOKEN.search(cell)], "a row names no test"
    assert missing(named) == []


def test_the_parser_catches_a_missing_name():
    """The check itself can fail: a renamed test, a wrong file, a name with no file."""
    rows = [("A", "`tests/test_safety.py::test_private_cache_is_safe`, `::test_no_such_thing`"),
            ("A", "`::test_recorded_rows_owners` (carried over)"),
            ("B", "`test_no_such_file.py::test_x`"), ("C", "`test_private_cache_is_safe`"),
            ("D", "`test_nowhere_at_all`"), ("E", "`tests/test_safety.py`: `test_recorded_rows_owners`, `test_gone`")]
    assert missing(named_tests(rows)) == [
        "A: test_safety.py::test_no_such_thing does not exist",
        "B: tests/test_no_such_file.py does not exist",
        "D: test_nowhere_at_all is in no file under tests/",
        "E: test_safety.py::test_gone does not exist",
    ]
