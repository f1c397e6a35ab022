"""The knowledge base as data: IDs, fields, regexes, templates, and every pattern backed by a real log."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flexdoctor import knowledge
from flexdoctor.knowledge.explain import Matcher, scan

LOGS = Path(__file__).parent / "data" / "logs"
ERROR_LOGS = sorted(LOGS.glob("FDE*.log"))
HEALTHY_LOGS = sorted((LOGS / "healthy").glob("*.log"))

# Entries that legitimately match another entry's log: (log entry, other entry) -> why.
CO_MATCHES = {
    # torch.compile's platform check raised: its frame is on the traceback of both refusals
    ("FDE206", "FDE311"): "Dynamo's Python check raises from check_if_dynamo_supported",
    ("FDE309", "FDE311"): "Dynamo's Windows check raises from check_if_dynamo_supported",
    # SDPA's reasons are printed as warnings before "No available kernel"; the deprecated sdp_kernel
    # context manager is what the seed-004 snippet uses.
    ("FDE701", "FDE703"): "the fp32 inputs are why every fused backend refused",
    ("FDE701", "FDE702"): "the snippet uses the deprecated torch.backends.cuda.sdp_kernel",
    ("FDE701", "FDE107"): "on a T4 the flash kernel refuses sm75, which is why no kernel is left",
    ("FDE107", "FDE701"): "select_sdp_backend prints 'Flash attention kernel not used because:' only when no kernel is left",
}

# Every knowledge file: each entry with patterns must be backed by a real log here.
CHECKED_FILES = {p.name for p in (Path(knowledge.__file__).parent).glob("*.toml")}


def body(path: Path) -> bytes:
    """A log without its leading '# source:' comment lines."""
    lines = path.read_bytes().splitlines(keepends=True)
    while lines and lines[0].startswith(b"# "):
        lines.pop(0)
    return b"".join(lines)


def explained(path: Path) -> set[str]:
    import io

    result = scan(io.BytesIO(body(path)))
    return {p.entry.id for p in result.problems + result.notes}


def test_ids_and_fields():
    table = knowledge.entries()
    symbols = set()
    for e in table.values():
        assert re.fullmatch(r"FDE[1-9]\d\d", e.id), e.id
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", e.symbol), e.symbol
        assert e.symbol not in symbols, e.symbol
        symbols.add(e.symbol)
        assert e.title and e.cause and e.fix, e.id
        assert isinstance(e.rank, int)
        for link in e.links:
            assert link.startswith("https://"), (e.id, link)


def test_new_blocks_present():
    ids = set(knowledge.entries())
    for needed in ("FDE601", "FDE602", "FDE608", "FDE701", "FDE704", "FDE801", "FDE802", "FDE803",
                   "FDE804", "FDE901", "FDE902"):
        assert needed in ids


def test_existing_ids_kept():
    for ref in ("FDE101", "FDE105", "FDE108", "FDE203", "FDE206", "FDE301", "FDE303", "FDE304",
                "FDE306", "FDE401", "FDE402", "FDE403", "FDE501"):
        knowledge.get(ref)


@pytest.mark.parametrize("entry", sorted(knowledge.entries().values(), key=lambda e: e.id), ids=lambda e: e.id)
def test_renders_without_error(entry):
    fix = entry.render()
    assert fix.kb == entry.id
    for text in (fix.summary, *fix.commands):
        # Every {placeholder} needs a default, so explain (which has no context) never shows one;
        # other braces (a kernel_options dict in a fix) are text and stay as written.
        assert not re.search(r"\{[A-Za-z_][A-Za-z0-9_]*\}", text), (entry.id, text)


def test_every_log_has_a_source_line():
    for path in ERROR_LOGS + HEALTHY_LOGS:
        first = path.read_text(encoding="utf-8", errors="replace").splitlines()[0]
        assert first.startswith("# source:"), path.name


@pytest.mark.parametrize("path", ERROR_LOGS, ids=lambda p: p.name)
def test_log_is_explained_by_its_entry(path):
    assert path.name[:6] in explained(path)


def _entry_files() -> dict[str, str]:
    from importlib import resources

    from flexdoctor._toml import loads

    out = {}
    for item in resources.files("flexdoctor.knowledge").iterdir():
        if item.name.endswith(".toml"):
            for raw in loads(item.read_text(encoding="utf-8")).get("entry", []):
                out[raw["id"]] = item.name
    return out


_COVERED: set = set()


def _covered() -> set:
    if not _COVERED:
        for path in ERROR_LOGS:
            _COVERED.update(explained(path))
    return _COVERED


@pytest.mark.parametrize("entry", sorted((e for e in knowledge.entries().values() if e.patterns),
                                         key=lambda e: e.id), ids=lambda e: e.id)
def test_every_entry_with_patterns_has_a_log(entry):
    where = _entry_files()[entry.id]
    if entry.id in _covered():
        return
    pytest.fail(f"{entry.id} ({where}) has patterns but no log in tests/data/logs explains it")


def test_checked_entries_have_their_own_log():
    own = {p.name[:6] for p in ERROR_LOGS}
    files = _entry_files()
    missing = [e.id for e in knowledge.entries().values()
               if e.patterns and files[e.id] in CHECKED_FILES and e.id not in own]
    assert missing == []


@pytest.mark.parametrize("path", ERROR_LOGS, ids=lambda p: p.name)
def test_no_unexpected_co_matches(path):
    """Every log against every entry: only its own entry and allow-listed co-matches fire."""
    own = path.name[:6]
    extra = explained(path) - {own}
    unexpected = {other for other in extra if (own, other) not in CO_MATCHES}
    assert not unexpected, f"{path.name} is also matched by {sorted(unexpected)}"


def test_co_match_allow_list_is_used():
    seen = set()
    for path in ERROR_LOGS:
        own = path.name[:6]
        seen |= {(own, other) for other in explained(path) - {own}}
    assert set(CO_MATCHES) <= seen, set(CO_MATCHES) - seen


@pytest.mark.parametrize("path", HEALTHY_LOGS, ids=lambda p: p.name)
def test_healthy_logs_explain_nothing(path):
    """No problem on a healthy log; harmless notices (advisory entries) may come back as notes."""
    import io

    result = scan(io.BytesIO(body(path)))
    assert [p.entry.id for p in result.problems] == []
    assert all(p.entry.advisory for p in result.notes)


def test_harmless_text_matches_nothing():
    matcher = Matcher()
    harmless = [
        "UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.",
        "Epoch 3/10: 100%|██████████| 500/500 [01:02<00:00, 8.01it/s, loss=0.123]",
        "INFO: Using flex attention backend with torch.compile",
        "Successfully installed triton-3.6.0 torch-2.11.0",
        "nvidia-smi: Driver Version: 580.159.04   CUDA Version: 13.0",
        "torch._dynamo hit nothing; compiled 3 graphs",
        "Saved checkpoint to /tmp/torchinductor_alice/ckpt.pt",
    ]
    for line in harmless:
        assert matcher.match(line) == [], line


def test_guide_beliefs_are_answered_truthfully():
    assert "not a real PyTorch error" in knowledge.get("FDE802").title
    assert "sage" in knowledge.get("FDE803").cause and "flex" in knowledge.get("FDE803").cause
    assert "_check_qkv_dtype_bf16_or_fp16" in knowledge.get("FDE804").cause
    assert "not about CUDA" in knowledge.get("FDE801").cause
    assert "warm-cache" in knowledge.get("FDE602").fix
    assert "EFFICIENT_ATTENTION" in knowledge.get("FDE701").fix
    assert "sdpa_kernel" in knowledge.get("FDE702").fix


def test_one_entry_is_read_without_parsing_the_whole_knowledge_base(monkeypatch):
    """get() before anything parsed reads only the file that names the entry, and gives the very
    entry the full table gives, in every language."""
    from flexdoctor import knowledge, text

    for lang in ("en", "ja", "hi"):
        monkeypatch.setattr(text, "_chosen", lang)
        for ref in ("nvidia-driver-too-old", "FDE101", "flex-on-cpu", "rocm-build"):
            knowledge._english.cache_clear()
            knowledge._localized.cache_clear()
            fast = knowledge.get(ref)
            assert knowledge._english.cache_info().currsize == 0  # the whole base was not parsed
            assert fast == knowledge.get(ref) == knowledge.entries()[fast.id]  # now from the full table
    with pytest.raises(KeyError):
        knowledge.get("no-such-entry")


def test_every_entry_read_alone_equals_the_full_table():
    from flexdoctor import knowledge

    full = dict(knowledge._english())
    for eid, entry in full.items():
        for ref in (eid, entry.symbol):
            knowledge._english.cache_clear()
            assert knowledge._one(ref) == entry, ref  # found alone (not None), and the same

