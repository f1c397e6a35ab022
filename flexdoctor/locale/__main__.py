"""``python -m flexdoctor.locale [LANG…]``: what each translation still lacks (for translators).

Exit 1 when a language misses a key or fills other placeholders than English; stale keys that
English no longer has are listed but do not fail. See docs/TRANSLATING.md.
"""

from __future__ import annotations

import sys

from ..text import available
from .audit import audit, english_words


def main(argv: list[str]) -> int:
    langs = argv or [lang for lang in available() if lang != "en"]
    english = english_words()
    failed = False
    for lang in langs:
        if lang not in available():
            print(f"{lang}: no catalogue (flexdoctor/locale/{lang}.toml); known: {', '.join(available())}")
            failed = True
            continue
        report = audit(lang)
        done = len(english) - len(report["missing"])
        print(f"{lang}: {done}/{len(english)} texts translated")
        for kind in ("missing", "placeholders", "extra"):
            for key in report[kind]:
                print(f"  {kind:<12} {key}: {english.get(key, '')[:90]!r}" if kind != "extra" else f"  {kind:<12} {key}")
        failed = failed or bool(report["missing"] or report["placeholders"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
