"""Issue 13: no function in flexdoctor/ over about 80 lines without a comment saying why it is long."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "flexdoctor"
LIMIT = 80


def _long_functions():
    for path in sorted(PACKAGE.rglob("*.py")):
        src = path.read_text(encoding="utf-8")
        comments = {tok.start[0]: tok.string for tok in tokenize.generate_tokens(io.StringIO(src).readline)
                    if tok.type == tokenize.COMMENT}
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > LIMIT:
                    why = [c for line, c in comments.items() if node.lineno <= line <= node.end_lineno
                           and "long" in c.lower()]
                    yield f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} ({length} lines)", why


def test_long_functions_say_why():
    unexplained = [where for where, why in _long_functions() if not why]
    assert not unexplained, "functions over 80 lines without a '# ... long ...' comment saying why: " + \
        ", ".join(unexplained)
