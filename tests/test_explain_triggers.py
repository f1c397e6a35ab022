"""explain's block finder pays for every position of a log whose character starts some trigger, so the
triggers must not start with the letters that fill ordinary logs. Round 5's patterns once pulled in 't'
and 'u' (the greedy cover took a common letter that served many patterns at once) and cut throughput on
healthy logs from ~50 to ~27 MB/s; nothing but a benchmark noticed. This guards the choice itself."""

from __future__ import annotations

from flexdoctor.knowledge import explain as kbx

COMMON = set("etaoinsh")  # the most frequent letters of English text and of training logs alike


def test_no_trigger_starts_with_a_common_letter():
    m = kbx.default_matcher()
    patterns = [r.pattern for _, _, regexes in m.units for r in regexes]
    _picks, triggers = kbx._choose_triggers(patterns)
    starts = {t[0] for (lit, icase), t in triggers.items() if not icase}
    assert not starts & COMMON, sorted(starts & COMMON)



def test_the_shipped_trigger_choice_is_the_one_the_patterns_give():
    """triggers.json spares every start the choice (half a second); a Matcher uses it only when its key is the
    patterns' own, so a stale file costs time, not answers. Regenerate: python -m flexdoctor.knowledge.triggers"""
    import json

    from flexdoctor.knowledge import triggers

    with open(kbx.TRIGGERS_FILE, encoding="utf-8") as f:
        shipped = json.load(f)
    fresh = triggers.current()
    assert shipped["key"] == fresh["key"], "stale: run python -m flexdoctor.knowledge.triggers"
    assert shipped == json.loads(json.dumps(fresh)), "same key, other choice: raise explain.TRIGGER_ALGO"


def test_a_matcher_of_other_patterns_chooses_its_own_triggers(tmp_path, monkeypatch):
    """A table the shipped key does not fit (a subset, a plugin's entries) or a broken file: the choice is made."""
    import json

    patterns = kbx.default_matcher().patterns
    assert kbx.choose_triggers(patterns) == kbx._choose_triggers(patterns)  # the shipped table, used
    some = patterns[:40]
    assert kbx.choose_triggers(some) == kbx._choose_triggers(some)  # not the shipped key: chosen again
    bad = tmp_path / "triggers.json"
    bad.write_text(json.dumps({"key": kbx.trigger_key(some), "picks": [[["x", 2, 3]]] * len(some)}))
    monkeypatch.setattr(kbx, "TRIGGERS_FILE", str(bad))
    assert kbx.choose_triggers(some) == kbx._choose_triggers(some)  # a damaged file: chosen again
