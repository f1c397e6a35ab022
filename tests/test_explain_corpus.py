"""The explain corpus (tests/data/corpus/<family>/<case>.log + .toml, issue 22): every case well
formed with its thread's URL, train and holdout scores computed, no false alarm on a healthy log, and
a floor on the train score (not on holdout: holdout is the honest number we publish)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from flexdoctor.knowledge import explain as kbx
from flexdoctor.knowledge import score

CORPUS = Path(__file__).parent / "data" / "corpus"
TRAIN_FLOOR = 0.95  # 1215/1253 after rounds 12-14 were opened and tuned (their blind scores: BENCHMARKS.md); rounds 7, 11, 15, 16 sealed


@pytest.fixture(scope="module")
def loaded():
    return score.load(CORPUS)


def test_every_case_is_well_formed(loaded):
    cases, errors = loaded
    assert errors == []
    assert cases
    assert all(c.meta["source"].startswith("https://") for c in cases)


def test_scores_are_computed_per_split_and_train_has_a_floor(loaded):
    cases, _ = loaded
    report = score.score(cases)
    assert "train" in report["splits"]
    for split in ("train", "holdout"):
        if any(c.split == split for c in cases):
            assert report["splits"][split]["cases"] + report["splits"][split]["healthy"] > 0
    train = report["splits"]["train"]
    assert train["score"] is not None and train["score"] >= TRAIN_FLOOR, report["misses"]


def test_no_false_alarm_on_a_healthy_log(loaded):
    """Every healthy log the patterns were written from stays silent. The held-out (sealed) healthy logs are
    measured by the scorer (BENCHMARKS.md), not here: a test that named their false alarms would unseal them."""
    cases, _ = loaded
    report = score.score([c for c in cases if c.healthy and c.split == "train"])
    alarms = [m for m in report["misses"] if m.split(":")[0] not in DISPUTED]
    assert not alarms, alarms


# Healthy logs whose label two collectors gave opposite ways: still counted as false alarms by the scorer (and in
# BENCHMARKS.md), named here so that the test guards every other healthy log.
DISPUTED = {
    # bitsandbytes' warning-only "compiled without GPU support" start-up line: labelled healthy here (its thread's
    # maintainer called it harmless), a problem in bitsandbytes-setup/fluxgym-411 (fixed by upgrading bitsandbytes).
    # FDE726 keeps reporting it.
    "healthy-aj/h1111-torch27-startup-warnings",
}


@pytest.mark.parametrize("meta, bad", [
    ({"source": "github issue 12", "stack": "pytorch", "platform": "linux", "fix": "x", "healthy": True}, "source"),
    ({"source": "https://github.com/a/b/issues/1", "stack": "pytorch", "platform": "linux", "fix": "x",
      "healthy": False}, "[expect]"),
    ({"source": "https://github.com/a/b/issues/1", "stack": "pytorch", "platform": "linux", "fix": "x",
      "healthy": False, "expect": {"kind": "nonsense", "subject": "x", "fix_any": ["y"]}}, "expect.kind"),
    ({"source": "https://github.com/a/b/issues/1", "stack": "cobol", "platform": "linux", "fix": "x",
      "healthy": True}, "stack"),
])
def test_malformed_sidecars_are_named(meta, bad):
    assert any(bad in p for p in score.problems_of(meta, "fam"))


def test_judge_needs_kind_subject_and_fix_of_the_first_answer():
    data = b"RuntimeError: Library libcublas.so.12 is not found or cannot be loaded\n"
    result = kbx.scan(io.BytesIO(data))
    meta = {"healthy": False, "expect": {"kind": "shared-library", "subject": "libcublas.so.12",
                                         "fix_any": ["nvidia-cublas-cu12"]}}
    case = score.Case("f", "train", "c", Path("x.log"), meta)
    assert score.judge(case, result)
    wrong = dict(meta, expect=dict(meta["expect"], fix_any=["nvidia-cudnn-cu12"]))
    assert not score.judge(score.Case("f", "train", "c", Path("x.log"), wrong), result)
    healthy = score.Case("f", "train", "h", Path("x.log"), {"healthy": True})
    assert not score.judge(healthy, result)  # a problem on a healthy log is a false alarm


def test_the_score_command_runs(capsys):
    assert score.main([str(CORPUS)]) == 0
    assert "train: right fix first" in capsys.readouterr().out


def test_round_scores_only_the_families_of_that_round(tmp_path, capsys):
    """`--round N` scores the families whose FAMILY.toml says round = N (each sealed round is published
    on its own); a family without a round is left out of every --round score."""
    for fam, rnd in (("a", 4), ("b", 5), ("c", None)):
        d = tmp_path / fam
        d.mkdir()
        (d / "FAMILY.toml").write_text(f'description = "x"\nsplit = "holdout"\n' + (f"round = {rnd}\n" if rnd else ""))
        (d / "h.log").write_text("Epoch 1: loss 0.5\n")
        (d / "h.toml").write_text('source = "https://github.com/a/b/issues/1"\nstack = "pytorch"\n'
                                  'platform = "linux"\nfix = "none"\nhealthy = true\n')
    assert score.main([str(tmp_path), "--round", "5", "--show-holdout"]) == 0
    out = capsys.readouterr().out
    assert "false alarms 0/1 healthy" in out and "  b:" in out and "  a:" not in out and "  c:" not in out
    assert score.main([str(tmp_path), "--show-holdout"]) == 0
    assert "false alarms 0/3 healthy" in capsys.readouterr().out
