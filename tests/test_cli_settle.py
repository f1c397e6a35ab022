"""The entry point waits for its own threads before the interpreter ends: a preload thread still
importing modules while Python finalizes can crash it (SIGSEGV). Seen as `check --static` with a bad
settings key exiting -11 about one run in twelve: the usage error came while the preload ran."""

from __future__ import annotations

import time

from flexdoctor import text
from flexdoctor.cli import _common


def test_settle_waits_for_the_preload_thread(monkeypatch):
    real = text.catalog

    def slow(lang):
        time.sleep(0.5)
        return real(lang)

    monkeypatch.setattr(text, "catalog", slow)
    thread = _common.preload("json")
    _common.settle(timeout=10.0)
    assert not thread.is_alive()
