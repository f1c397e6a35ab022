"""docs/ARCHITECTURE.md stays true: every import in flexdoctor/ runs down the floors it draws.

The floors are read from the ``floors`` block of docs/ARCHITECTURE.md itself, so the document
and this test cannot drift apart. A module may import its own unit (package or top-level
module) and any unit on a lower floor: never one beside it, never one above. Lazy imports inside
functions count the same as imports at the top. Only worker/ starts processes.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator

import pytest

import flexdoctor

PACKAGE = Path(flexdoctor.__file__).resolve().parent
DOC = PACKAGE.parent / "docs" / "ARCHITECTURE.md"
# Modules that belong to another unit than their file name says.
ALIASES = {"cliutil": "cli", "__main__": "cli"}
# Ways to start a process; worker/run.py (through worker/lifetime.py) is the only one allowed.
PROCESS_MODULES = {"subprocess", "multiprocessing", "pty"}
PROCESS_CALLS = re.compile(r"^(system|popen|fork|forkpty|spawn\w*|exec\w*|posix_spawn\w*)$")


def floors() -> dict[str, int]:
    """unit -> floor number, from the ```floors block of docs/ARCHITECTURE.md."""
    block = re.search(r"```floors\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block, "docs/ARCHITECTURE.md has no ```floors block"
    out: dict[str, int] = {}
    for line in block.group(1).splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            for unit in words[1:]:
                assert unit not in out, f"{unit} stands on two floors"
                out[unit] = int(words[0])
    return out


def unit_of(dotted: str) -> str:
    """``flexdoctor.cache.warm`` -> ``cache``; ``flexdoctor.__version__`` (a name) -> ``flexdoctor``."""
    parts = dotted.split(".")
    if len(parts) < 2:
        return "flexdoctor"
    head = parts[1]
    exists = (PACKAGE / head).is_dir() or (PACKAGE / f"{head}.py").is_file()
    if not exists and head.startswith("__"):  # a name the root package defines, not a module
        return "flexdoctor"
    return ALIASES.get(head, head)


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(module: str, is_package: bool, tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, dotted target) for every flexdoctor import in ``tree``, relative ones resolved."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "flexdoctor":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            elif (node.module or "").split(".")[0] == "flexdoctor":
                target = node.module
            else:
                continue
            if node.module:
                yield node.lineno, target
            else:  # from . import a, b: each name may be a module of its own
                for alias in node.names:
                    yield node.lineno, f"{target}.{alias.name}"


def violations(module: str, is_package: bool, source: str, table: dict[str, int]) -> list[str]:
    """Every import in one module that runs against the floors (empty: all is well)."""
    own = unit_of(module)
    if own not in table:
        return [f"{module}: unit {own!r} stands on no floor of docs/ARCHITECTURE.md"]
    out = []
    for line, target in imported(module, is_package, ast.parse(source)):
        other = unit_of(target)
        if other == own:
            continue
        if other not in table:
            out.append(f"{module}:{line} imports {target}: unit {other!r} stands on no floor")
        elif table[other] >= table[own]:
            where = "beside" if table[other] == table[own] else "above"
            out.append(f"{module}:{line} imports {target}: {other} (floor {table[other]}) stands {where} "
                       f"{own} (floor {table[own]})")
    return out


def starts_processes(source: str) -> list[str]:
    """Lines that import a process module or use os.fork/system/popen/spawn*/exec*/... ."""
    out = []
    for node in ast.walk(ast.parse(source)):
        hit = None
        if isinstance(node, ast.Import):
            hit = next((a.name for a in node.names if a.name.split(".")[0] in PROCESS_MODULES), None)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            mod = node.module or ""
            if mod.split(".")[0] in PROCESS_MODULES:
                hit = mod
            elif mod in ("os", "concurrent.futures"):
                hit = next((a.name for a in node.names
                            if PROCESS_CALLS.match(a.name) or a.name == "ProcessPoolExecutor"), None)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "os" and PROCESS_CALLS.match(node.attr):
                hit = f"os.{node.attr}"
            elif node.attr == "ProcessPoolExecutor":
                hit = node.attr
        if hit:
            out.append(f"line {node.lineno}: {hit}")
    return out


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _worker_script(path: Path) -> bool:
    """Scripts the target interpreter runs: they never import flexdoctor (tests/test_worker.py)."""
    return path.parent.name == "worker" and path.name.startswith("_") and path.name != "__init__.py"


# ------------------------------------------------------------------------------------ the rules


def test_every_import_runs_down_the_floors():
    table = floors()
    found = []
    for path in modules():
        found += violations(module_name(path), path.name == "__init__.py", path.read_text(encoding="utf-8"), table)
    assert found == [], "imports against the layering (docs/ARCHITECTURE.md):\n" + "\n".join(found)


def test_only_the_worker_floor_starts_processes():
    found = []
    for path in modules():
        if unit_of(module_name(path)) == "worker":
            continue
        found += [f"{path.relative_to(PACKAGE.parent)} {hit}" for hit in starts_processes(path.read_text())]
    assert found == [], "start processes through flexdoctor.worker.run:\n" + "\n".join(found)


def test_every_unit_in_the_package_has_a_floor():
    table = floors()
    units = {unit_of(module_name(p)) for p in modules() if not _worker_script(p)}
    assert units - set(table) == set()
    assert table["worker"] == 0 and table["cli"] == max(table.values())


# ------------------------------------------------------------------- the checker can say no


@pytest.mark.parametrize("module, is_package, source, expected", [
    ("flexdoctor.cache.warm", False, "from ..probes import gpu\n", "probes (floor 7) stands above cache"),
    ("flexdoctor.probes", True, "def f():\n    from ..deep import deep\n", "deep (floor 7) stands beside probes"),
    ("flexdoctor.worker.run", False, "from .. import text\n", "text (floor 1) stands above worker"),
    ("flexdoctor.text", False, "import flexdoctor.knowledge\n", "knowledge (floor 5) stands above text"),
    ("flexdoctor.newthing", False, "import os\n", "unit 'newthing' stands on no floor"),
    ("flexdoctor.render.x", False, "from ..cli import app\n", "cli (floor 12) stands above render"),
])
def test_the_checker_flags_imports_against_the_layering(module, is_package, source, expected):
    found = violations(module, is_package, source, floors())
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize("module, is_package, source", [
    ("flexdoctor.cli.check", False, "from ..probes import gather\nfrom . import _common\n"),
    ("flexdoctor.probes", True, "from . import cache, gpu\nfrom ..cache import locations\n"),
    ("flexdoctor.checks.gpu", False, "from .. import knowledge as kb\nfrom ..facts import Facts\n"),
    ("flexdoctor.cliutil", False, "from .cli import app\n"),  # cliutil is part of the cli unit
])
def test_the_checker_lets_imports_down_the_floors_pass(module, is_package, source):
    assert violations(module, is_package, source, floors()) == []


@pytest.mark.parametrize("source, bad", [
    ("import subprocess\n", True), ("from multiprocessing import Pool\n", True), ("os.system('x')\n", True),
    ("from os import fork\n", True), ("os.execvp('a', [])\n", True),
    ("from concurrent.futures import ProcessPoolExecutor\n", True),
    ("import os\nos.path.join('a')\n", False), ("from concurrent.futures import ThreadPoolExecutor\n", False),
])
def test_the_process_rule_sees_every_way_to_start_one(source, bad):
    assert bool(starts_processes(source)) is bad


def _resolved(module: str, is_package: bool, source: str) -> list:
    return [t for _, t in imported(module, is_package, ast.parse(source))]


def test_relative_imports_resolve_like_python():
    assert _resolved("flexdoctor.probes", True, "from . import gpu\nfrom ..worker import run\n") == [
        "flexdoctor.probes.gpu", "flexdoctor.worker"]
    assert _resolved("flexdoctor.probes.gpu", False, "from ..facts import X\nfrom .. import __version__\n") == [
        "flexdoctor.facts", "flexdoctor.__version__"]
    assert unit_of("flexdoctor.__version__") == "flexdoctor" and unit_of("flexdoctor.cliutil") == "cli"
