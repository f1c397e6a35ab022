"""Write the shipped trigger choice of the built-in knowledge base: ``python -m flexdoctor.knowledge.triggers``.

explain's Matcher chooses, for every pattern, the literal it is triggered on (explain._choose_triggers).
The choice depends only on the patterns, so it is made once here and shipped as triggers.json; a Matcher
uses it when its key matches the patterns at hand and chooses again otherwise.
tests/test_explain_triggers.py fails while the shipped file is not the one these patterns give.
"""

from __future__ import annotations

import json
import sys

from . import explain


def current() -> dict:
    """The table the built-in patterns give now."""
    return explain.trigger_table(explain.default_matcher().patterns)


def write(path: str = explain.TRIGGERS_FILE) -> dict:
    table = current()
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(table, ensure_ascii=False, indent=0, sort_keys=True) + "\n")
    return table


def main() -> int:
    table = write()
    print(f"{explain.TRIGGERS_FILE}: {len(table['picks'])} patterns, {len(table['triggers'])} trigger literals")
    return 0


if __name__ == "__main__":
    sys.exit(main())
