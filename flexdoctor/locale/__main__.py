"""``python -m flexdoctor.locale [LANG…]``: what each translation still lacks (for translators).

Exit 1 when a language misses a key or fills other placeholders than English; stale keys that
English no longer has are listed but do not fail. See docs/TRANSLATING.md.
"""

from __future__ import annotations

import os
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


class _Quiet:
    """stdout that stops writing, without a traceback, once its reader went away
    (``python -m flexdoctor.locale ja | head``); the audit still ends with its own exit code."""

    def __init__(self, stream):
        self._stream, self.gone = stream, False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.gone = True
        # The interpreter flushes the real stdout once more at exit: let that reach /dev/null.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)


def _run(argv: list[str]) -> int:
    out = sys.stdout = _Quiet(sys.stdout)
    code = main(argv)
    out.flush()
    return code


if __name__ == "__main__":
    sys.exit(_run(sys.argv[1:]))
