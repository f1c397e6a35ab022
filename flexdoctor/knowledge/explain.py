"""Find known problems in a log or traceback: the engine behind ``flexdoctor explain``.

What is matched (the contract; ``scan_lines`` is its plain reference implementation):
the log is split at ``\\n`` into lines (a line longer than ``MAX_LINE`` bytes is cut there), each
line is cleaned (UTF-8 with replacement, ANSI colours removed, control bytes turned into spaces,
trailing ``\\r`` dropped) and searched with every entry's patterns; a message wrapped over two lines
(pip's and setuptools' indented RuntimeErrors, narrow terminals) is also tried joined with the line
before it, and, when both lines carry the same prefix (timestamp, ``[rank0]:``), joined without the
second copy of that prefix (``_joins``). An entry with ``near`` patterns counts only where one of them
matches within ``near_lines`` lines; ``overrides`` and ``advisory`` apply to the results. Results come back one per entry, most fundamental first (entry ``rank``, then first
line, then ID).

How it is fast (``scan``): the stream is read in blocks of whole lines (memory stays bounded by
``BLOCK`` plus one line), each block is cleaned in one pass and searched with one *trigger* regex
made of a required literal of every pattern (a run of characters every match must contain, read
from the pattern's parse tree, never containing whitespace). Only lines holding a trigger, and the
line after each (for the two-line join), get the exact per-line matching above: a pattern can only
match a line, or a join of two lines, that contains its required literal, because the join puts
whitespace between the lines and the literal has none. Healthy lines therefore cost one C-level
regex scan instead of a Python loop iteration and 70+ pattern searches each.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field, replace
from typing import IO, Iterable, Iterator, Optional

from ..text import t
from ..wheels import explain_context
from . import Entry, entries, structural

try:  # Python 3.11+
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre_parse  # type: ignore[no-redef]

MAX_LINE = 64 * 1024  # bytes of one line that are matched; the rest of a longer line is skipped
MAX_HITS = 5  # lines kept per entry for the report (all are counted)
MAX_TEXT = 300  # characters of a matching line shown
BLOCK = 4 * 1024 * 1024  # bytes read and cleaned at once by scan()
MAX_TRIGGERS_SEEN = 64  # trigger occurrences one line is searched for; beyond, all units are suspects
MEMO_LINE = 2048  # characters of the longest text whose matches are remembered (logs repeat lines)
MEMO_SIZE = 4096  # texts remembered per Matcher; the memo starts over when full
MIN_TRIGGER = 4  # characters of a required literal used as trigger, when the literal has them
# The commonest letters of English text and of training logs alike (and "etaoinsh" never, tests/test_explain_triggers.py):
# a trigger starting with one costs a look at many positions of every log.
COMMON_TEXT = frozenset("etaoinshrdlcum")

_JUNK = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_JUNK_BYTES = bytes(list(range(0x00, 0x09)) + [0x0b, 0x0c] + list(range(0x0e, 0x20)) + [0x7f])
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class Hit:
    line: int  # 1-based number of the (last) line that matched
    text: str  # the matching line(s), cleaned and shortened
    first_line: Optional[int] = None  # set when the match spans two lines

    def to_dict(self) -> dict:
        out = {"line": self.line, "text": self.text}
        if self.first_line is not None:
            out["first_line"] = self.first_line
        return out


@dataclass
class Problem:
    entry: Entry
    hits: list[Hit] = field(default_factory=list)
    count: int = 0
    context: dict = field(default_factory=dict)  # values read from the log by named groups
    lines: list[Hit] = field(default_factory=list)  # every hit, kept only for entries with `near`

    @property
    def first_line(self) -> int:
        return min((h.first_line or h.line) for h in self.hits)

    def add(self, hit: Hit) -> None:
        self.count += 1
        if len(self.hits) < MAX_HITS:
            self.hits.append(hit)


@dataclass(frozen=True)
class Result:
    problems: tuple[Problem, ...]
    lines: int  # lines read
    notes: tuple[Problem, ...] = ()  # advisory entries found: harmless notices, not problems
    answers: tuple = ()  # structural.Answer: errors read by their shape where no entry matched
    log: Optional["structural.LogFacts"] = None  # what the log says about its machine

    @property
    def found(self) -> bool:
        """A known problem: an entry, or a structural answer (the ``unknown`` fallback is not one)."""
        return bool(self.problems) or any(a.kind != "unknown" for a in self.answers)

    def ordered(self) -> list:
        """Every problem and answer, the one ``explain`` puts first first: the entries that matched in
        the failure (they know their error best), then the structural answers, then entries whose
        every match came before the run's last sign of progress (a notice it survived); by rank and
        line within each."""
        region = self.log.region if self.log is not None else 0

        def group(p: Problem) -> int:
            late = p.count > len(p.hits) or max(h.line for h in p.hits) >= region
            if not late:
                return 2
            return next((g for ids, reads, g in _YIELDS if p.entry.id in ids and reads(self, p)), 0)

        items = [(group(p), p.entry.rank, p.first_line, p) for p in self.problems]
        killed = self._killed_after_all()
        items += [(-1 if a is killed else 1 if a.kind != "unknown" else 3, a.rank, a.line, a) for a in self.answers]
        return [x[-1] for x in sorted(items, key=lambda x: x[:3])]

    def _cause_above(self, p: Problem) -> bool:
        """A structural answer, more specific than the wrapper entry ``p``, read on a line above it."""
        return any(a.kind != "unknown" and a.rank < p.entry.rank and a.line < p.first_line for a in self.answers)

    def _killed_after_all(self):
        """A bare ``Killed`` (SIGKILL, the kernel's OOM killer) after every line an entry matched: the
        process outlived those errors (a fatal one would have ended it first), so the kill is the cause."""
        kills = [a for a in self.answers if a.kind == "out-of-memory" and a.text.strip() == "Killed"]
        if not kills or not self.problems:
            return None
        last = kills[-1]
        if any(p.count > len(p.hits) or max(h.line for h in p.hits) >= last.line for p in self.problems):
            return None
        return last if self.answers and self.answers[0] is last else None


# Entries that say only that a build failed ("Command '['ninja', '-v']' returned non-zero exit status"): the
# compiler's error above them, read by the structural layer, is the cause (tune-e3).
_BUILD_WRAPPERS = frozenset({"FDE406"})

# Entries whose fix is for a desktop or server GPU; on a Jetson (L4T) the structural layer names NVIDIA's JetPack
# wheels and libraries instead (tune-e5, structural/e5.py).
_PLATFORM_GENERIC = frozenset({"FDE204", "FDE221"})


# Entries that yield to a more specific structural reading of the same failure: (entry IDs, whether the log holds
# that reading, the group the entry drops to in Result.ordered: 1 after the structural answers, 2 with the survived).
_YIELDS = (
    # tune-e3: "ninja failed" yields to the compiler's own error read above it
    (_BUILD_WRAPPERS, lambda r, p: r._cause_above(p), 1),
    # tune-e5: a CPU wheel / missing CUDA library on a Jetson: the JetPack reading answers
    (_PLATFORM_GENERIC, lambda r, p: any(a.subject == "jetson" for a in r.answers), 1),
    # tune-i7: the CPU torch's frames above the error named the program's own Python: that reading answers
    (frozenset({"FDE204"}), lambda r, p: any(a.kind == "unsupported-op" and a.subject == "cuda"
                                             and a.line < p.first_line for a in r.answers), 1),
    # tune-l2: "driver not loaded" and the kernel refused the unsigned module: that reading first
    (frozenset({"FDE102"}), lambda r, p: any(a.subject == "secure boot" for a in r.answers), 2),
)


def clean(raw: bytes) -> str:
    """One line of bytes as matchable text: UTF-8 with replacement, no colours or control bytes."""
    text = raw.decode("utf-8", errors="replace")
    text = _ANSI.sub("", text)
    return _JUNK.sub(" ", text).rstrip("\r\n")


def _shorten(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def iter_lines(stream: IO[bytes]) -> Iterator[str]:
    """Cleaned lines of a binary stream; a line longer than MAX_LINE is cut, its rest skipped."""
    while True:
        raw = stream.readline(MAX_LINE)
        if not raw:
            return
        if len(raw) == MAX_LINE and not raw.endswith(b"\n"):
            rest = raw
            while rest and not rest.endswith(b"\n"):  # skip the remainder of an overlong line
                rest = stream.readline(MAX_LINE)
        yield clean(raw)


# --- required literals -------------------------------------------------------------------------

_C = _sre_parse  # the op constants are re-exported by the parser module
_IGNORECASE = re.IGNORECASE.value


def _literal_char(c: str) -> bool:
    """Whether ``c`` may be part of a required literal: no whitespace (a two-line join inserts
    some), no U+FFFD (decoding puts it where bytes were invalid), nothing UTF-8 cannot encode."""
    return not c.isspace() and c != "\ufffd" and not "\ud800" <= c <= "\udfff"


def _required(seq, icase: bool) -> Optional[list[tuple[str, bool]]]:
    """A set of (literal, ignorecase) alternatives of which every match of ``seq`` contains one;
    the best such set found, or None. Literals never contain whitespace."""
    best: Optional[list[tuple[str, bool]]] = None

    def offer(cand: Optional[list[tuple[str, bool]]]) -> None:
        nonlocal best
        if cand and (best is None or _set_quality(cand) > _set_quality(best)):
            best = cand

    run: list[str] = []

    def flush() -> None:
        if run:
            offer([("".join(run), icase)])
            run.clear()

    for op, av in seq:
        if op is _C.LITERAL and _literal_char(chr(av)):
            run.append(chr(av))
            continue
        flush()
        if op is _C.SUBPATTERN:
            _group, add, dele, sub = av
            sub_icase = (icase or bool(add & _IGNORECASE)) and not (dele & _IGNORECASE)
            offer(_required(sub, sub_icase))
        elif op is _C.BRANCH:
            alts = [_required(s, icase) for s in av[1]]
            if all(alts):
                offer([lit for alt in alts for lit in alt])  # type: ignore[union-attr]
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", None)) and op is not None:
            lo, _hi, sub = av
            if lo >= 1:
                offer(_required(sub, icase))
        elif op is getattr(_C, "ATOMIC_GROUP", object()):
            offer(_required(av, icase))
    flush()
    return best


# Which literal to search for: the one that costs least to find. A position whose character starts
# some trigger costs the scan a few nanoseconds more; a line holding a trigger costs a visit (the full
# per-line match, tens of microseconds). Both rates are estimated on a sample of ordinary log text.
_SCAN_NS = 130.0
_VISIT_NS = 30000.0


@functools.lru_cache(maxsize=1)
def _sample() -> tuple[str, str, dict, int]:
    from ._log_sample import SAMPLE

    counts: dict = {}
    for c in SAMPLE:
        counts[c] = counts.get(c, 0) + 1
    return SAMPLE, SAMPLE.lower(), counts, len(SAMPLE)


# A floor under the sample's character frequencies (share of log text), so that characters the
# sample happens to under-represent are not mistaken for rare: English letter frequencies scaled to
# logs, where digits, quotes, dots, dashes and brackets are everywhere.
_LOWER_FLOOR = dict(zip("etaoinshrdlcumpwfgykbvxjqz",
                        (0.06, 0.045, 0.04, 0.038, 0.035, 0.034, 0.032, 0.03, 0.03, 0.02, 0.02, 0.02, 0.014,
                         0.02, 0.02, 0.012, 0.011, 0.012, 0.008, 0.012, 0.009, 0.006, 0.003, 0.0015, 0.001,
                         0.002)))


def _char_floor(c: str) -> float:
    if c in _LOWER_FLOOR:  # half the prose rate: log text is a third digits, paths and punctuation
        return _LOWER_FLOOR[c] / 2
    if c == "_":  # identifiers (torch._dynamo, __init__): ~1 % of training logs, not a punctuation's 3 %
        return 0.012
    if c.isdigit() or c in " .,:;'\"-/=()[]{}%|":
        return 0.03
    if "A" <= c <= "Z":
        return 0.0005 if c in "JQXZKYUHGBVW" else 0.003
    return 0.001


@functools.lru_cache(maxsize=None)
def _trigger_cost(trig: str, icase: bool = False) -> float:
    """Estimated cost per character of log searched, of using ``trig`` as a trigger."""
    text, lower, counts, n = _sample()
    firsts = {trig[0], trig[0].lower(), trig[0].upper()} if icase else {trig[0]}
    p_first = sum(max((counts.get(c, 0) + 0.5) / n, _char_floor(c)) for c in firsts)
    hits = lower.count(trig.lower()) if icase else text.count(trig)
    return _SCAN_NS * p_first + _VISIT_NS * (hits + 0.1) / n


@functools.lru_cache(maxsize=None)
def _trigger_of(literal: str, icase: bool = False) -> str:
    """The suffix of a required literal to search for: the cheapest one (see ``_trigger_cost``) that
    keeps at least MIN_TRIGGER characters (or the whole literal when it is shorter)."""
    keep = min(MIN_TRIGGER, len(literal))
    starts = range(0, len(literal) - keep + 1)
    i = min(starts, key=lambda i: (_trigger_cost(literal[i:], icase), i))
    return literal[i:]


def _set_quality(alts: list[tuple[str, bool]]) -> tuple:
    """Higher is better: literals long enough to be specific, then the cheapest to search for."""
    worst_len = min(len(lit) for lit, _ in alts)
    cost = sum(_trigger_cost(_trigger_of(lit, ic), ic) for lit, ic in alts)
    return (worst_len >= MIN_TRIGGER, -cost, worst_len)


def _candidate_sets(seq, icase: bool) -> list[list[tuple[str, bool]]]:
    """Every literal set ``_required`` considers for ``seq`` (each one alone suffices): the raw
    material from which ``Matcher`` chooses, for all patterns together, the cheapest triggers."""
    out: list[list[tuple[str, bool]]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append([("".join(run), icase)])
            run.clear()

    for op, av in seq:
        if op is _C.LITERAL and _literal_char(chr(av)):
            run.append(chr(av))
            continue
        flush()
        if op is _C.SUBPATTERN:
            _group, add, dele, sub = av
            out.extend(_candidate_sets(sub, (icase or bool(add & _IGNORECASE)) and not (dele & _IGNORECASE)))
        elif op is _C.BRANCH:
            alts = [_required(s, icase) for s in av[1]]
            if all(alts):
                out.append([lit for alt in alts for lit in alt])  # type: ignore[union-attr]
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", None)) and op is not None:
            lo, _hi, sub = av
            if lo >= 1:
                out.extend(_candidate_sets(sub, icase))
        elif op is getattr(_C, "ATOMIC_GROUP", object()):
            out.extend(_candidate_sets(av, icase))
    flush()
    return out


@functools.lru_cache(maxsize=None)
def _pattern_sets(pattern: str) -> tuple:
    parsed = _sre_parse.parse(pattern)
    sets = _candidate_sets(parsed, bool(parsed.state.flags & _IGNORECASE))
    return tuple(tuple(s) for s in sets)


def _char_rate(c: str) -> float:
    """Share of log text that is ``c`` (the sample's count, never below the floor)."""
    _text, _lower, counts, n = _sample()
    return max((counts.get(c, 0) + 0.5) / n, _char_floor(c))


def _can_trigger(candidates: list, allowed: int) -> bool:
    """Whether a pattern can trigger with the characters ``allowed``: one of its candidate sets has,
    for each literal, a start among them (a literal's mask: the characters that may start its trigger)."""
    return any(all(m & allowed for m in cand) for cand in candidates)


def _greedy_cover(masks: dict, todo: list, allowed: int, usable: int, rate: dict,
                  strict: bool = False) -> Optional[int]:
    """Characters (a bit mask) added to ``allowed``, from ``usable``, until every pattern of ``todo``
    can trigger: greedy weighted set cover (the most patterns per unit of the character's rate
    first). When ``usable`` cannot cover them all: None if ``strict``, else what it could."""
    todo = [p for p in todo if not _can_trigger(masks[p], allowed)]
    while todo:
        # A candidate set becomes searchable with c when c can start each literal not yet
        # searchable: c must be in the AND of those literals' start masks.
        gain: dict[int, int] = {}
        for p in todo:
            could = 0
            for cand in masks[p]:
                need = -1
                for m in cand:
                    if not m & allowed:
                        need &= m
                could |= need & ~allowed & usable
            b = could
            while b:
                low = b & -b
                gain[low] = gain.get(low, 0) + 1
                b ^= low
        if not gain:
            return None if strict else allowed
        allowed |= max(gain, key=lambda low: (gain[low] / rate[low], -low))
        todo = [p for p in todo if not _can_trigger(masks[p], allowed)]
    return allowed


def _replace_common(masks: dict, sets: dict, allowed: int, rate: dict) -> int:
    """The greedy cover picks a common character when it serves many patterns at once, but the scan
    pays for each position of every chosen character: each chosen one (most common first) is
    replaced by rarer ones when they cover what it covered at a lower total rate."""
    for low in sorted((b for b in rate if allowed & b), key=lambda b: -rate[b]):
        if not allowed & low:
            continue
        rarer = sum(b for b in rate if rate[b] < rate[low])
        without = allowed & ~low
        better = _greedy_cover(masks, [p for p in sets if sets[p]], without, rarer, rate, strict=True)
        if better is not None and sum(rate[b] for b in rate if better & b & ~without) < rate[low]:
            allowed = better
    return allowed


def _usable(masks: dict, todo: list, bit: dict, rate: dict, everything: int) -> int:
    """The characters the cover may choose from: all but the common letters (COMMON_TEXT), plus, for a pattern
    no other character can trigger, the rarest common letter that lets it."""
    usable = everything & ~sum(b for c, b in bit.items() if c in COMMON_TEXT)
    common = sorted((b for c, b in bit.items() if c in COMMON_TEXT), key=lambda b: rate[b])
    for p in todo:
        if not _can_trigger(masks[p], usable):
            usable |= next((b for b in common if _can_trigger(masks[p], usable | b)), everything)
    return usable


def _choose_triggers(patterns: Iterable[str]) -> tuple[dict, dict]:
    """For every pattern, the literal set to trigger on, and for every literal its trigger suffix,
    chosen for all patterns together. The scan pays for every position whose character starts
    some trigger, so the first characters are chosen first, as a small set of rare ones that
    lets every pattern trigger (greedy weighted set cover, then redundant characters dropped);
    then each literal takes, among the suffixes starting with a chosen character, the one that
    occurs least in ordinary log text (fewest lines to visit)."""
    sets = {p: [c for c in _pattern_sets(p) if min(len(lit) for lit, _ in c) >= MIN_TRIGGER]
            for p in patterns}
    chars = sorted({lit[i] for cands in sets.values() for cand in cands for lit, ic in cand if not ic
                    for i in range(len(lit) - MIN_TRIGGER + 1)})
    bit = {c: 1 << i for i, c in enumerate(chars)}

    everything = (1 << len(chars)) - 1

    def starts(lit: str, ic: bool) -> int:
        if ic:  # case-insensitive literals are searched with all case variants: any start will do
            return everything
        mask = 0
        for i in range(len(lit) - MIN_TRIGGER + 1):
            mask |= bit[lit[i]]
        return mask

    masks = {p: [tuple(starts(lit, ic) for lit, ic in cand) for cand in cands] for p, cands in sets.items()}

    rate = {bit[c]: _char_rate(c) for c in chars}
    todo = [p for p in sets if sets[p]]
    # The letters that fill ordinary text are never offered while rarer ones can cover every pattern: the
    # scan pays for each of their positions, and the greedy cover takes one when it serves many patterns.
    allowed = _greedy_cover(masks, todo, 0, _usable(masks, todo, bit, rate, everything), rate)
    for c in sorted(chars, key=_char_rate, reverse=True):  # drop characters no pattern needs
        if allowed & bit[c] and all(_can_trigger(masks[p], allowed & ~bit[c]) for p in sets if sets[p]):
            allowed &= ~bit[c]
    allowed = _replace_common(masks, sets, allowed, rate)

    def trigger(lit: str, ic: bool) -> Optional[str]:
        options = [lit[i:] for i in range(len(lit) - MIN_TRIGGER + 1) if ic or allowed & bit[lit[i]]]
        return min(options, key=lambda t: (_trigger_cost(t, ic) - _SCAN_NS * _char_rate(t[0]), -len(t))) \
            if options else None

    picks: dict = {}
    triggers: dict = {}
    for p, cands in sets.items():
        scored = []
        for cand in cands:
            trigs = [trigger(lit, ic) for lit, ic in cand]
            if all(trigs):
                scored.append((sum(_trigger_cost(t, ic) for t, (_, ic) in zip(trigs, cand)), len(cand), cand, trigs))
        if not scored:  # no long-enough literal: the standalone choice (short triggers)
            best = _required_literals(p)
            if best:
                picks[p] = list(best)
                triggers.update({(lit, ic): _trigger_of(lit, ic) for lit, ic in best})
            continue
        _, _, cand, trigs = min(scored, key=lambda t: t[:2])
        picks[p] = list(cand)
        triggers.update({key: t for key, t in zip(cand, trigs)})
    return picks, triggers


# The trigger choice for the built-in knowledge base is shipped with it (triggers.json, written by
# `python -m flexdoctor.knowledge.triggers`): choosing parses every pattern, half a second at each start.
# It is used only when its key, a hash of the patterns and of what the choice depends on, is the one of
# the patterns at hand; otherwise the choice is made again (same result, slower start).
TRIGGERS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "triggers.json")
TRIGGER_ALGO = 3  # raise when _choose_triggers changes what it picks for the same patterns


def trigger_key(patterns: list[str]) -> str:
    h = hashlib.sha256(f"{TRIGGER_ALGO}\0{MIN_TRIGGER}\0{_SCAN_NS}\0{_VISIT_NS}\0".encode())
    h.update(_sample()[0].encode("utf-8", "surrogatepass"))
    for p in patterns:
        h.update(b"\0" + p.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def trigger_table(patterns: list[str]) -> dict:
    """The trigger choice for ``patterns`` (unique, in order) as triggers.json holds it."""
    picks, triggers = _choose_triggers(patterns)
    return {"key": trigger_key(patterns),
            "picks": [[[lit, ic] for lit, ic in picks[p]] if p in picks else None for p in patterns],
            "triggers": sorted([lit, ic, trig] for (lit, ic), trig in triggers.items())}


def _shipped_triggers(patterns: list[str]) -> Optional[tuple[dict, dict]]:
    try:
        with open(TRIGGERS_FILE, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("key") != trigger_key(patterns) or len(data["picks"]) != len(patterns):
            return None
        picks = {p: [(lit, bool(ic)) for lit, ic in lits] for p, lits in zip(patterns, data["picks"]) if lits}
        return picks, {(lit, bool(ic)): trig for lit, ic, trig in data["triggers"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def choose_triggers(patterns: Iterable[str]) -> tuple[dict, dict]:
    """``_choose_triggers``, from the shipped table when it was made for these patterns."""
    unique = list(dict.fromkeys(patterns))
    return _shipped_triggers(unique) or _choose_triggers(unique)


@functools.lru_cache(maxsize=None)
def _required_literals(pattern: str) -> Optional[tuple[tuple[str, bool], ...]]:
    parsed = _sre_parse.parse(pattern)
    found = _required(parsed, bool(parsed.state.flags & _IGNORECASE))
    return tuple(found) if found else None


def required_literals(pattern: str) -> Optional[list[tuple[str, bool]]]:
    """Literal alternatives (text, ignorecase) one of which every match of ``pattern`` contains."""
    found = _required_literals(pattern)
    return list(found) if found else None


_BMP = None


def _case_variants(c: str) -> list[str]:
    """Characters that ``(?i)c`` matches (sre folds a few non-ASCII ones too, e.g. U+212A for k)."""
    global _BMP
    if _BMP is None:
        _BMP = "".join(chr(i) for i in range(0x10000) if not 0xD800 <= i < 0xE000)
    return sorted(set(re.findall("(?i)" + re.escape(c), _BMP)) | {c})


def _trigger_units(literals: Iterable[tuple[str, bool]], chosen: Optional[dict] = None) -> dict:
    """{first character: set of regex sources for the rest} of every literal's trigger."""
    by_first: dict = {}
    for lit, icase in literals:
        trig = (chosen or {}).get((lit, icase)) or _trigger_of(lit, icase)
        rest = re.escape(trig[1:])
        if icase and rest:
            rest = f"(?i:{rest})"
        for first in (_case_variants(trig[0]) if icase else [trig[0]]):
            by_first.setdefault(first, set()).add(rest)
    return by_first


def _trigger_regex(literals: Iterable[tuple[str, bool]], chosen: Optional[dict] = None) -> re.Pattern:
    """One regex finding any of the literals' triggers in a line (the bytes block finder is
    _block_trigger_regex). Every top-level alternative starts with a plain character, so sre skips
    positions that start none of them at C speed. At a position, longer triggers are tried first:
    the match is the longest trigger starting there."""
    alts = []
    for first, rests in sorted(_trigger_units(literals, chosen).items()):
        rests = sorted(rests, key=lambda r: (-len(r), r))
        alts.append(re.escape(first) + (rests[0] if len(rests) == 1 else "(?:" + "|".join(rests) + ")"))
    return re.compile("|".join(alts))


def _byte_atoms(trig: str, icase: bool) -> list[bytes]:
    """A trigger as regex atoms of one byte each; a case-insensitive character (of a trigger's rest)
    as one atom, the alternation of its case variants."""
    out: list[bytes] = []
    for c in trig:
        variants = [v.encode("utf-8") for v in (_case_variants(c) if icase else [c])]
        if len(variants) == 1:
            out.extend(re.escape(variants[0][k:k + 1]) for k in range(len(variants[0])))
        else:
            out.append(b"(?:" + b"|".join(map(re.escape, variants)) + b")")
    return out


def _block_trigger_regex(literals: Iterable[tuple[str, bool]], chosen: Optional[dict] = None) -> re.Pattern:
    """The bytes regex that finds candidate lines: whether ANY trigger occurs in a line, not which,
    so the triggers go in a trie (a trigger that another one starts with is dropped: the shorter one
    suffices), each position tries one alternative per byte, and the top-level alternatives (one per
    first byte, all plain so sre skips other positions at C speed) come most frequent first."""
    trie: dict = {}
    for lit, icase in literals:
        trig = (chosen or {}).get((lit, icase)) or _trigger_of(lit, icase)
        firsts = [v.encode("utf-8") for v in (_case_variants(trig[0]) if icase else [trig[0]])]
        rest = _byte_atoms(trig[1:], icase) if len(trig) > 1 else []
        for first in firsts:
            path = _byte_atoms(first.decode("utf-8"), False) + rest
            node = trie
            for atom in path:
                if node.get(b"") is True:
                    break  # a shorter trigger already ends here
                node = node.setdefault(atom, {})
            else:
                node.clear()
                node[b""] = True

    def emit(node: dict) -> bytes:
        if node.get(b"") is True:
            return b""
        alts = [atom + emit(child) for atom, child in sorted(node.items())]
        return alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"

    def rate(atom: bytes) -> float:
        return _char_rate(re.sub(rb"\\(.)", rb"\1", atom).decode("latin-1")) if len(atom) <= 2 else 0.0

    tops = sorted(trie.items(), key=lambda kv: (-rate(kv[0]), kv[0]))
    return re.compile(b"|".join(atom + emit(child) for atom, child in tops))


# --- matching -----------------------------------------------------------------------------------


class Matcher:
    """All entries' patterns, found through their required literals.

    A *unit* is one entry's ``patterns`` (kind "main") or its ``near`` patterns (kind "near").
    ``block_trigger`` (bytes) locates candidate lines in a whole block; ``match_units`` checks one
    line: it collects the triggers present in it (overlapping ones included) and searches only the
    units they belong to, which gives exactly the units any of whose patterns matches the line.
    A pattern without a required literal (``loose``) is searched on every line, and sends ``scan``
    down the per-line path: the built-in knowledge base has none (tests/test_explain_engine.py)."""

    def __init__(self, table: Optional[Iterable[Entry]] = None) -> None:
        table = tuple(e for e in (table if table is not None else entries().values()) if e.patterns)
        self.entries = tuple(e for e in table if not e.layer)  # the knowledge base's entries
        self.units: list[tuple[Entry, str, _Regexes]] = []  # compiled when first searched
        for e in table:
            self.units.append((e, "main", _Regexes(e, "main")))
            if e.near:
                self.units.append((e, "near", _Regexes(e, "near")))
        literals: list[tuple[str, bool]] = []
        by_trigger: dict[str, set[int]] = {}
        icase: set[int] = set()  # units with a case-insensitive trigger: checked whenever any trigger is present
        always: set[int] = set()  # units with a loose pattern: always checked
        self.loose: tuple[str, ...] = ()
        unit_patterns = [(i, p) for i, (e, kind, _) in enumerate(self.units)
                         for p in (e.patterns if kind == "main" else e.near)]
        self.patterns = list(dict.fromkeys(p for _, p in unit_patterns))
        picks, chosen = choose_triggers(self.patterns)
        self._chosen = chosen
        for i, p in unit_patterns:
            lits = picks.get(p)
            if not lits:
                self.loose += (p,)
                always.add(i)
                continue
            literals.extend(lits)
            for lit, ic in lits:
                if ic:
                    icase.add(i)
                else:
                    by_trigger.setdefault(chosen[(lit, ic)], set()).add(i)
        # A match of the trigger regex is the longest trigger starting at its position; the shorter
        # triggers that are its prefixes occur there too.
        self._by_trigger = {t: frozenset().union(*(ids for u, ids in by_trigger.items() if t.startswith(u)))
                            for t in by_trigger}
        self._icase = frozenset(icase)
        self._always = frozenset(always)
        self._all = frozenset(range(len(self.units)))
        self._trigger = _trigger_regex(literals, chosen=chosen) if literals else None
        self.block_trigger = _block_trigger_regex(literals, chosen=chosen) if literals else None
        # What a text matches depends on the text alone (and a join's skip set): logs repeat lines
        # (the same warning every step, a traceback per rank), so short texts' answers are kept.
        self._memo: dict = {}
        self._memo_suspects: dict = {}

    def _suspects(self, text: str) -> frozenset:
        """Indexes of the units whose triggers occur in ``text`` (a superset of those that match)."""
        if len(text) > MEMO_LINE:
            return self._find_suspects(text)
        got = self._memo_suspects.get(text)
        if got is None:
            got = _remember(self._memo_suspects, text, self._find_suspects(text))
        return got

    def _find_suspects(self, text: str) -> frozenset:
        out = set(self._always)
        if self._trigger is not None:
            search, by_trigger, icase, pos = self._trigger.search, self._by_trigger, self._icase, 0
            for _ in range(MAX_TRIGGERS_SEEN):
                m = search(text, pos)
                if m is None:
                    return frozenset(out)
                out |= by_trigger.get(m.group(), icase)
                out |= icase
                pos = m.start() + 1
            if search(text, pos) is not None:  # more triggers than a real line has: every unit is a suspect
                return self._all
        return frozenset(out)

    def match_units(self, text: str, skip: Optional[frozenset] = None,
                    suspects: Optional[frozenset] = None) -> list[tuple[Entry, str, dict]]:
        """(entry, kind, named groups of the first matching pattern) for every unit matching ``text``.
        ``skip``: IDs whose main units need no search (for a two-line join: the entries either line
        matched alone); with it, near and structural units are not searched either (joins use neither).
        ``suspects``: the units to search, when the caller knows a superset of them (a join's: its lines')."""
        if len(text) > MEMO_LINE:
            return self._match_units(text, skip, suspects)
        key = (text, skip)
        got = self._memo.get(key)
        if got is None:  # the result does not depend on ``suspects``: any superset gives the same
            got = _remember(self._memo, key, tuple(self._match_units(text, skip, suspects)))
        return list(got)

    def _match_units(self, text: str, skip: Optional[frozenset], suspects: Optional[frozenset]) -> list:
        if suspects is None:
            suspects = self._suspects(text)
        out = []
        for i in sorted(suspects):
            e, kind, regexes = self.units[i]
            if skip is not None and (e.layer or kind == "near" or e.id in skip):
                continue
            for r in regexes:
                m = r.search(text)
                if m is not None:
                    found = _Groups(m.groupdict())
                    found.span = m.span()
                    out.append((e, kind, found))
                    break
        return out

    def match(self, text: str) -> list[Entry]:
        """Entries any of whose patterns matches ``text``, in table order."""
        return [e for e, kind, _ in self.match_units(text) if kind == "main" and not e.layer]


class _Groups(dict):
    """A unit match's named groups, with where it matched: the structural layer's observe takes both from
    here instead of searching the line again."""

    __slots__ = ("span",)


class _Regexes:
    """A unit's compiled patterns, compiled when first searched: a short log triggers few units."""

    __slots__ = ("entry", "kind")

    def __init__(self, entry: Entry, kind: str) -> None:
        self.entry, self.kind = entry, kind

    def __iter__(self):
        return iter(self.entry.regexes if self.kind == "main" else self.entry.near_regexes)


def _remember(memo: dict, key, value):
    """``value``, stored under ``key`` in a memo of at most MEMO_SIZE texts (emptied when full)."""
    if len(memo) >= MEMO_SIZE:
        memo.clear()
    memo[key] = value
    return value


_DEFAULT: list = [None, None]  # [entries table, its Matcher]


def default_matcher() -> Matcher:
    """The Matcher of the whole knowledge base, built once per loaded table."""
    table = entries()
    if _DEFAULT[0] is not table:
        _DEFAULT[:] = [table, Matcher(list(table.values()) + list(structural.units()))]
    return _DEFAULT[1]


_SAFE_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
MAX_NEAR = 10_000  # lines remembered per entry for the near rule


_DECORATION_END = " :]|>)"


def _joins(prev: str, line: str) -> list[str]:
    """A message wrapped over two lines, put back together: the lines joined with one space; and,
    when both lines start with the same decoration (a timestamp, a '[rank0]:' prefix, a logger
    name, ending at a space, colon, bracket or bar), also without the second line's copy of it.
    Every joined text is made of parts of the two lines, so a literal without whitespace in it
    comes from one of them (what the block scanner relies on)."""
    first = prev.rstrip()
    out = [first + " " + line.strip()]
    n = len(os.path.commonprefix([prev, line]))
    while n and prev[n - 1] not in _DECORATION_END:
        n -= 1
    if n >= 3 and prev[:n].strip() and line[n:].strip():
        out.append(first + " " + line[n:].strip())
    return out


class _Scan:
    """State of one scan: the problems found and the exact per-line step of the contract."""

    def __init__(self, matcher: Matcher) -> None:
        self.matcher = matcher
        self.found: dict[str, Problem] = {}
        self.near: dict[str, list[int]] = {}  # entry ID -> lines where one of its near patterns matched
        self.collector = structural.Collector()  # what the structural layer reads (bounded)
        self.taken: dict[str, set] = {}  # entry ID -> lines it matched: a found entry answers there

    def _add(self, e: Entry, hit: Hit, groups: dict, text: str) -> None:
        problem = self.found.get(e.id)
        if problem is None:
            problem = self.found[e.id] = Problem(e)
        problem.add(hit)
        lines = self.taken.setdefault(e.id, set())
        if len(lines) < MAX_NEAR:
            lines.update(range(hit.first_line or hit.line, hit.line + 1))
        if e.near and len(problem.lines) < MAX_NEAR:
            problem.lines.append(hit)
        for key, value in groups.items():
            # Values land in printed commands: only plain version-like tokens are taken.
            if value and key not in problem.context and _SAFE_VALUE.fullmatch(value):
                problem.context[key] = value
        for key, value in _line_context(e.id, text).items():  # values derived from the line (wheels)
            problem.context.setdefault(key, value)

    def visit(self, n: int, line: str, prev: Optional[str], prev_ids: frozenset) -> frozenset:
        """Match line ``n`` alone and joined with ``prev``; returns the IDs it matched."""
        ids: set[str] = set()
        self.collector.visited(n, line)
        suspects = self.matcher._suspects(line)
        for e, kind, groups in self.matcher.match_units(line, suspects=suspects):
            if e.layer:
                self.collector.observe(e, n, line, groups)
                continue
            if kind == "near":
                lines = self.near.setdefault(e.id, [])
                if len(lines) < MAX_NEAR:
                    lines.append(n)
                continue
            ids.add(e.id)
            self._add(e, Hit(n, _shorten(line)), groups, line)
        if prev is not None:
            self.collector.traceback_after(n, prev)
        if prev is not None and prev.strip() and line.strip():
            # A join holds no trigger its two lines do not (triggers have no whitespace; _joins)
            both = suspects | self.matcher._suspects(prev)
            for joined in _joins(prev, line):
                for e, kind, groups in self.matcher.match_units(joined, skip=frozenset(ids) | prev_ids, suspects=both):
                    if e.id in ids:  # matched by the first join already
                        continue
                    ids.add(e.id)
                    self._add(e, Hit(n, _shorten(prev.strip() + " / " + line.strip()), first_line=n - 1), groups,
                              joined)
        return frozenset(ids)


    def _near_ok(self, p: Problem) -> Optional[Problem]:
        """The problem restricted to its hits that have a near line within ``near_lines``, or None."""
        near = self.near.get(p.entry.id)
        if not near:
            return None
        span = p.entry.near_lines
        kept = Problem(p.entry, context=p.context)
        for hit in p.lines:
            lo, hi = (hit.first_line or hit.line) - span, hit.line + span
            if any(lo <= x <= hi for x in near):
                kept.add(hit)
        return kept if kept.count else None

    def result(self, lines: int) -> Result:
        found = []
        for p in self.found.values():
            if p.entry.near:
                p = self._near_ok(p)
                if p is None:
                    continue
            found.append(p)
        replaced = {ref for p in found for ref in p.entry.overrides}
        found = [p for p in found if p.entry.id not in replaced]
        logged = self.collector.logged_errors()  # an optional import's failure, logged with its traceback
        if logged:
            found = [q for q in (_without(p, logged) for p in found) if q is not None]
        key = lambda p: (p.entry.rank, p.first_line, p.entry.id)  # noqa: E731
        problems = sorted((p for p in found if not p.entry.advisory), key=key)
        notes = sorted((p for p in found if p.entry.advisory), key=key)
        taken = set().union(logged, *(self.taken.get(p.entry.id, ()) for p in found))
        self.collector.total = lines
        answers, log = structural.interpret(self.collector, taken, bool(problems))
        for p in problems:
            if p.entry.id in _DRIVER_ENTRIES:
                _driver_context(p.context, log)
        return Result(tuple(problems), lines, tuple(notes), answers, log)


def _without(p: Problem, lines: set) -> Optional[Problem]:
    """The problem without its hits on ``lines``; None when those were all it had."""
    hits = [h for h in p.hits if h.line not in lines]
    if len(hits) == len(p.hits):
        return p
    gone = len(p.hits) - len(hits)
    if not hits and p.count <= gone:
        return None
    return replace(p, hits=hits, count=p.count - gone)


# Entries whose fix names the CUDA torch was built for ({torch_cuda}) and the wheel for the driver
# ({cuda_tag}): "The NVIDIA driver on your system is too old".
_DRIVER_ENTRIES = {"FDE105"}
_NO_WHEEL = "_no_wheel"  # context flag: no torch wheel runs on the log's driver; its pip command is dropped


def _line_context(entry_id: str, text: str) -> dict:
    """``explain_context`` of the wheels table, but never a wheel the log's driver cannot run (a
    wheel runs on a driver of its CUDA major): a driver for CUDA 9.0 or 10.1 runs no torch the table
    knows, so the fix says so instead of naming a cu130 wheel."""
    ctx = explain_context(entry_id, text)
    ctx.update(structural.h4.entry_context(entry_id, text))  # tune-h4: FDE975's driver for the CUDA the image requires
    tag = re.fullmatch(r"cu(\d+)(\d)", ctx.get("cuda_tag", ""))
    driver = ctx.get("driver_cuda")
    if tag and driver and int(tag.group(1)) > int(driver.split(".")[0]):  # minor-version compatibility
        return {"driver_cuda": driver, _NO_WHEEL: "1",  # tune-j2: and the last wheel built for that CUDA, if any
                "cuda_tag": structural.j2.last_wheel(driver) or t("structural.driver.no_wheel", cuda=driver)}
    return ctx


def _driver_context(context: dict, log) -> None:
    """Fill a driver entry's {torch_cuda} from the log (the CUDA torch was built with and the oldest
    driver that runs it), and, when the log does not say the driver's CUDA, name no wheel."""
    if "torch_cuda" not in context:
        floors = structural.errors.driver_floors(log)
        context["torch_cuda"] = (t("structural.driver.torch_cuda", cuda=log.cuda, floors=floors) if log.cuda
                                 else t("structural.driver.torch_cuda_unknown", floors=floors))
    if "cuda_tag" not in context:
        context["cuda_tag"] = t("structural.driver.tag_unknown")
        context[_NO_WHEEL] = "1"


def scan_lines(lines: Iterable[str], matcher: Optional[Matcher] = None) -> Result:
    """The reference implementation: every cleaned line matched in turn (see the module docstring)."""
    state = _Scan(matcher or default_matcher())
    prev: Optional[str] = None
    prev_ids: frozenset = frozenset()
    n = 0
    for n, line in enumerate(lines, start=1):
        prev_ids = state.visit(n, line, prev, prev_ids)
        if structural.has_progress(line):
            state.collector.progress(n)
        prev = line
    return state.result(n)


def fix_for(problem: Problem):
    """The entry's fix for this log: placeholders filled from what the log said (named groups),
    plus every ``log_commands`` command whose placeholders were all read from the log."""
    e = problem.entry
    fix = e.render(**problem.context)
    if problem.context.get(_NO_WHEEL):  # no torch wheel is known to run here: no pip command to print
        fix = type(fix)(summary=fix.summary, commands=tuple(c for c in fix.commands if " pip install " not in c),
                        kb=fix.kb, links=fix.links)
    extra = tuple(_fill_command(c, problem.context) for c in e.log_commands
                  if set(_placeholders(c)) <= set(problem.context))
    if not extra:
        return fix
    return type(fix)(summary=fix.summary, commands=extra + fix.commands, kb=fix.kb, links=fix.links)


def item_fix(item):
    """The fix of any item of ``Result.ordered()``: a structural answer's own, an entry's as filled
    from the log (``fix_for``)."""
    return item.fix if isinstance(item, structural.Answer) else fix_for(item)


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _placeholders(template: str) -> list[str]:
    return _PLACEHOLDER.findall(template)


def _fill_command(template: str, values: dict) -> str:
    return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)


# --- whole blocks -------------------------------------------------------------------------------

_ANSI_B = re.compile(_ANSI.pattern.encode())
_ANSI_B_BEFORE_CONT = re.compile(_ANSI.pattern.encode() + rb"[\x80-\xbf]")
_JUNK_TABLE = bytes(0x20 if b in _JUNK_BYTES else b for b in range(256))


def _clean_block(raw: bytes) -> bytes:
    """``clean`` applied to every line of a block of whole lines at once, staying in bytes: decoding
    a line of the result gives exactly ``clean`` of that line. Colours, control bytes and carriage
    returns are all ASCII, and replacing or dropping them in bytes decodes like doing it in text,
    except where dropping a colour code would join the halves of a broken UTF-8 character: a block
    with a colour code before a continuation byte is cleaned as text instead."""
    if b"\x1b" in raw:  # colour codes go before control bytes (ESC is one) become spaces
        if not raw.isascii() and _ANSI_B_BEFORE_CONT.search(raw):
            raw = _ANSI.sub("", raw.decode("utf-8", errors="replace")).encode("utf-8")
        else:
            raw = _ANSI_B.sub(b"", raw)
    raw = raw.translate(_JUNK_TABLE)  # one pass, cheaper than looking for control bytes first
    while b"\r\n" in raw:  # trailing carriage returns of every line, as str.rstrip("\r\n") drops them
        raw = raw.replace(b"\r\n", b"\n")
    if raw.endswith(b"\r"):  # the last line when it has no newline
        raw = raw.rstrip(b"\r")
    return raw


def _blocks(stream: IO[bytes], size: int) -> Iterator[bytes]:
    """The stream as blocks of whole lines, each ending in ``\\n`` (the last one may not), with every
    line cut to MAX_LINE bytes as ``iter_lines`` cuts it."""
    carry = b""
    skipping = False  # inside an overlong line whose first MAX_LINE bytes were already given
    while True:
        data = stream.read(size)
        if not data:
            if carry:
                yield carry
            return
        if skipping:
            nl = data.find(b"\n")
            if nl < 0:
                continue
            data, skipping = data[nl + 1:], False
        if carry:
            data = carry + data
        last = data.rfind(b"\n")
        body, carry = (data[: last + 1], data[last + 1:]) if last >= 0 else (b"", data)
        if len(carry) > MAX_LINE:  # a line already too long: keep its head, skip the rest
            body += carry[:MAX_LINE] + b"\n"
            carry, skipping = b"", True
        if body:
            yield _cut_long_lines(body)


def _cut_long_lines(body: bytes) -> bytes:
    """Lines of a block (ending in ``\\n``) longer than MAX_LINE bytes, cut to MAX_LINE."""
    if len(body) <= MAX_LINE + 1:
        return body
    pieces: list[bytes] = []
    start = pos = 0
    end = len(body)
    while pos < end:  # each step moves past the last newline within MAX_LINE + 1 bytes
        nl = body.rfind(b"\n", pos, pos + MAX_LINE + 1)
        if nl >= 0:
            pos = nl + 1
            continue
        nl = body.find(b"\n", pos)  # exists: the block ends in a newline
        pieces += [body[start: pos + MAX_LINE], b"\n"]
        start = pos = nl + 1
    if not pieces:
        return body
    pieces.append(body[start:])
    return b"".join(pieces)


def _candidate_starts(body: bytes, finder: re.Pattern) -> list[int]:
    """Start offsets of the lines of ``body`` in which ``finder`` matches, in order."""
    starts: list[int] = []
    search, pos = finder.search, 0
    while True:
        m = search(body, pos)
        if m is None:
            return starts
        at = m.start()
        starts.append(body.rfind(b"\n", 0, at) + 1)
        end = body.find(b"\n", at)
        if end < 0:
            return starts
        pos = end + 1


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


_REDRAW_SPAN = 5


def _note_progress(collector, body: bytes, base: int) -> None:
    """The block's last progress line, and the one before it when the block has it (tqdm's bar redrawn as
    a process dies is told from a bar that moved on by whether another bar lies between it and the error)."""
    progress = structural.last_progress_in(body)
    if progress is None:
        return
    line = base + 1 + body.count(b"\n", 0, progress)
    stop = start = body.rfind(b"\n", 0, progress) + 1
    for _ in range(_REDRAW_SPAN):  # only a bar a few lines above matters (context._exit_redraw)
        start = body.rfind(b"\n", 0, max(start - 1, 0)) + 1
    before = structural.last_progress_in(body, stop, start)
    if before is not None:
        collector.progress(line - body.count(b"\n", before, progress))
    collector.progress(line)


def scan_blocks(blocks: Iterable[bytes], matcher: Optional[Matcher] = None) -> Result:
    """Known problems in blocks of whole lines (see ``_blocks``); the same result as ``scan_lines``
    gives for those lines. Only candidate lines and the line after each are decoded and visited."""
    matcher = matcher or default_matcher()
    state = _Scan(matcher)
    finder = matcher.block_trigger
    base = 0  # lines in the blocks before this one
    last_line: Optional[str] = None  # the previous block's last line, cleaned
    last_ids: frozenset = frozenset()  # its IDs (empty unless it was visited)
    carry_next = False  # the previous block's last line was a candidate: visit this block's first
    for raw in blocks:
        data = _clean_block(raw)
        body = data[:-1] if data.endswith(b"\n") else data
        starts = _candidate_starts(body, finder) if finder is not None else []
        todo: list[int] = [0] if carry_next else []  # line starts to visit, in order, no duplicates
        for s in starts:
            if not todo or todo[-1] < s:
                todo.append(s)
            nxt = body.find(b"\n", s)
            if nxt >= 0:
                todo.append(nxt + 1)
        visited_start, visited_ids = -1, frozenset()
        line_no, counted = base + 1, 0  # the number of the line starting at offset `counted`
        for s in todo:
            line_no += body.count(b"\n", counted, s)
            counted = s
            e = body.find(b"\n", s)
            line = _decode(body[s:] if e < 0 else body[s:e])
            if s == 0:
                prev, prev_ids = last_line, last_ids
            else:
                ps = body.rfind(b"\n", 0, s - 1) + 1
                prev = _decode(body[ps: s - 1])
                prev_ids = visited_ids if ps == visited_start else frozenset()
            visited_ids = state.visit(line_no, line, prev, prev_ids)
            visited_start = s
        _note_progress(state.collector, body, base)
        last_start = body.rfind(b"\n") + 1
        last_line = _decode(body[last_start:])
        last_ids = visited_ids if visited_start == last_start else frozenset()
        carry_next = bool(starts) and starts[-1] == last_start
        base = line_no + body.count(b"\n", counted)  # the number of the block's last line
    return state.result(base)


class _Recoded(io.RawIOBase):
    """A binary stream of UTF-16 or UTF-32 text (what Windows PowerShell 5's ``>`` and ``Out-File`` write:
    UTF-16LE with a byte-order mark), read as UTF-8 bytes."""

    def __init__(self, raw: IO[bytes], encoding: str) -> None:
        super().__init__()
        self._raw, self._pending = raw, b""
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            data = self._raw.read(1 << 16)
            self._pending = self._decoder.decode(data, final=not data).encode("utf-8", "replace")
            if not data:
                break
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


# Byte-order marks of the wide encodings a log may be written in (the UTF-32 ones first: UTF-32LE's
# mark begins with UTF-16LE's), and where the zero bytes of ASCII text fall after the mark (start, step).
# A UTF-8 mark needs nothing: it is an ordinary character in a line.
_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "utf-32", 2, 4), (codecs.BOM_UTF32_BE, "utf-32", 0, 4),
              (codecs.BOM_UTF16_LE, "utf-16", 1, 2), (codecs.BOM_UTF16_BE, "utf-16", 0, 2))
_SNIFF = 512  # bytes looked at to tell a wide log from binary junk that happens to start like a mark


def as_utf8(stream: IO[bytes]) -> IO[bytes]:
    """The stream, read as UTF-8 bytes: a log saved as UTF-16 or UTF-32 (with its byte-order mark, as
    Windows tools write it) is decoded; any other stream is returned as it is. Logs are mostly ASCII, so
    a wide one has zero high bytes in at least a third of its first characters; junk after a mark-like
    start has not, and stays bytes. The start is peeked (files and stdin) or read and sought back."""
    head = _peek(stream)
    for bom, encoding, start, step in _WIDE_BOMS:
        if head.startswith(bom):
            high = head[len(bom) + start::step]
            if high and high.count(0) * 3 >= len(high):
                return io.BufferedReader(_Recoded(stream, encoding), 1 << 20)
            break
    return stream


def _peek(stream: IO[bytes]) -> bytes:
    """The first bytes of the stream, which stays where it was; empty when it can be neither peeked
    nor sought (then it is read as it is)."""
    if hasattr(stream, "peek"):
        return stream.peek(_SNIFF)[:_SNIFF]
    if getattr(stream, "seekable", lambda: False)():
        at = stream.tell()
        head = stream.read(_SNIFF)
        stream.seek(at)
        return head
    return b""


def scan(stream: IO[bytes], matcher: Optional[Matcher] = None, block: int = BLOCK) -> Result:
    """Known problems in a binary stream (a file opened 'rb', or sys.stdin.buffer); a log saved as
    UTF-16 (Windows PowerShell's redirection) is read as the text it holds."""
    matcher = matcher or default_matcher()
    stream = as_utf8(stream)
    if matcher.loose:  # a pattern without a required literal: every line must be searched anyway
        return scan_lines(iter_lines(stream), matcher)
    return scan_blocks(_blocks(stream, block), matcher)


def error_fix(text: str, python: str = "python", torch: Optional[str] = None, cuda: Optional[str] = None):
    """The structural layer's fix for an error text that no knowledge-base entry matches (a failed
    ``import torch``, a failed flex compile), so that ``check`` words it as ``explain`` does; None
    when an entry matches (the caller renders the entry with its own context) or nothing is known.
    ``torch`` and ``cuda`` (the machine's torch and its CUDA) stand in for what a log says about itself;
    ``python`` replaces the bare interpreter in the commands (``--python``)."""
    preamble = f"torch=={torch}\n" if torch and _SAFE_VALUE.fullmatch(torch) else ""
    if cuda and re.fullmatch(r"\d{1,2}\.\d{1,2}", cuda):
        preamble += f"CUDA used to build PyTorch: {cuda}\n"
    result = scan_text(preamble + text)
    if result.problems:
        return None
    answers = [a for a in result.answers if a.kind != "unknown"]
    if not answers:
        return None
    fix = answers[0].fix
    commands = tuple(python + c[len("python"):] if c.startswith("python ") else c for c in fix.commands)
    # kb stays None: a structural answer has no entry for `flexdoctor rules` to print
    return type(fix)(summary=fix.summary, commands=commands, kb=None, links=fix.links)


def scan_text(text: str, matcher: Optional[Matcher] = None) -> Result:
    return scan_lines((clean(line.encode("utf-8", "surrogatepass")) for line in text.splitlines()), matcher)
