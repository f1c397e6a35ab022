"""Adversarial inputs for one regular expression, built from its parse tree, and the two tests of
tests/test_explain_linear.py rest on: a timing ratio (search time at n and 8n) and a static look at
the shapes that make Python's backtracking matcher superlinear.

Why these inputs: ``re.search`` tries every start position, and from each one a repeat runs as far
as its characters go. A pattern is superlinear when many start positions each run far: a leading
``\\w+`` on a long word (every position starts a run to the word's end), a literal prefix followed
by ``.*`` repeated along a line (every copy scans to the end), ``A.*B.*C`` (every A times every B).
So the inputs are: long runs of what each repeat eats, with and without the text before it; every
prefix of a matching example repeated (repeated triggers, repeated partial matches); runs of common
characters. Branches are expanded: each alternative is attacked as if it were the whole pattern.
"""

from __future__ import annotations

import re
import time

try:  # Python 3.11+
    from re import _parser as sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as sre  # type: ignore[no-redef]

MAXREPEAT = sre.MAXREPEAT
_REPEATS = tuple(op for op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)) if op)
_CANDIDATES = "a0_A/ .'\"-:\\,()[]=\tz9Z"
_CATEGORY = {
    sre.CATEGORY_DIGIT: re.compile(r"\d"), sre.CATEGORY_NOT_DIGIT: re.compile(r"\D"),
    sre.CATEGORY_SPACE: re.compile(r"\s"), sre.CATEGORY_NOT_SPACE: re.compile(r"\S"),
    sre.CATEGORY_WORD: re.compile(r"\w"), sre.CATEGORY_NOT_WORD: re.compile(r"\W"),
}
MAX_ITEM_LISTS = 24  # alternatives expanded per pattern


def _in_class(items, c: str) -> bool:
    negate = False
    hit = False
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            hit = hit or c == chr(av)
        elif op is sre.RANGE:
            hit = hit or av[0] <= ord(c) <= av[1]
        elif op is sre.CATEGORY:
            rx = _CATEGORY.get(av)
            hit = hit or bool(rx and rx.match(c))
    return hit != negate


def _accepts(op, av, c: str) -> bool:
    """Whether a one-character node accepts ``c``."""
    if op is sre.LITERAL:
        return c == chr(av)
    if op is sre.NOT_LITERAL:
        return c != chr(av)
    if op is sre.ANY:
        return c != "\n"
    if op is sre.IN:
        return _in_class(av, c)
    return False


def eaters(op, av) -> list[str]:
    """The candidate characters a one-character node accepts (empty for other nodes)."""
    if op is sre.LITERAL:
        return [chr(av)]
    return [c for c in _CANDIDATES if _accepts(op, av, c)]


def example(seq) -> str:
    """A short string that ``seq`` (very likely) matches: minimal repeats, first alternatives."""
    out = []
    for op, av in seq:
        if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
            got = eaters(op, av)
            out.append(got[0] if got else "a")
        elif op is sre.SUBPATTERN:
            out.append(example(av[-1]))
        elif op is getattr(sre, "ATOMIC_GROUP", None):
            out.append(example(av))
        elif op is sre.BRANCH:
            out.append(example(av[1][0]))
        elif op in _REPEATS:
            lo, _hi, sub = av
            out.append(example(sub) * lo)
    return "".join(out)


def _flat(seq) -> list:
    """The pattern as a flat list of items: non-repeated groups opened."""
    out: list = []
    for op, av in seq:
        if op is sre.SUBPATTERN:
            out += _flat(av[-1])
        elif op is getattr(sre, "ATOMIC_GROUP", None):
            out += _flat(av)
        else:
            out.append((op, av))
    return out


def item_lists(seq) -> list[list]:
    """The flat item lists of the pattern, one per combination of branch alternatives (capped)."""
    todo, done = [_flat(seq)], []
    while todo and len(done) < MAX_ITEM_LISTS:
        items = todo.pop(0)
        at = next((i for i, (op, _) in enumerate(items) if op is sre.BRANCH), None)
        if at is None:
            done.append(items)
            continue
        for alt in items[at][1][1]:
            todo.append(items[:at] + _flat(alt) + items[at + 1:])
    return done


def _fill(unit: str, n: int) -> str:
    if not unit:
        return ""
    return (unit * (n // len(unit) + 1))[:n]


def _repeat_eaters(av) -> list[str]:
    lo, hi, sub = av
    if len(sub) == 1 and sub[0][0] in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
        return eaters(*sub[0])[:4] or ["a"]
    return [example(sub) or "a"]


def inputs(pattern: str, n: int) -> dict[str, str]:
    """Named adversarial texts of about ``n`` characters for ``pattern``."""
    parsed = sre.parse(pattern)
    out: dict[str, str] = {}
    for c in "a A 0 _ / . : ' -".split() + [" "]:
        out[f"run {c!r}"] = c * n
    out["words"] = _fill("ab ", n)
    for k, items in enumerate(item_lists(parsed)):
        pieces = [example([it]) for it in items]
        for i in range(1, len(items) + 1):
            prefix = "".join(pieces[:i])
            if not prefix:
                continue
            out[f"alt{k} prefix{i} repeated"] = _fill(prefix, n)
            out[f"alt{k} prefix{i} repeated spaced"] = _fill(prefix + " ", n)
            if len(prefix) > 1:
                out[f"alt{k} prefix{i}-1 repeated"] = _fill(prefix[:-1], n)
        for i, (op, av) in enumerate(items):
            if op not in _REPEATS or av[1] is not MAXREPEAT and av[1] < 1000:
                continue
            head = "".join(pieces[:i])
            for e in _repeat_eaters(av):
                out[f"alt{k} repeat{i} {e!r} run"] = head + _fill(e, n - len(head))
                out[f"alt{k} repeat{i} {e!r} runs repeated"] = _fill(head + e * 8, n)
                out[f"alt{k} repeat{i} {e!r} long runs repeated"] = _fill(head + e * 256, n)
    return out


def best_time(rx: re.Pattern, text: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        rx.search(text)
        best = min(best, time.perf_counter() - t0)
    return best


# --- static shapes ---------------------------------------------------------------------------------

def _unbounded(op, av) -> bool:
    return op in _REPEATS and (av[1] is MAXREPEAT or av[1] >= 1000)


def _anywhere(seq, here) -> bool:
    """Whether ``here(op, av)`` holds at some node of the parse tree, groups, branches and repeats
    included."""
    for op, av in seq:
        if here(op, av):
            return True
        if op is sre.SUBPATTERN and _anywhere(av[-1], here):
            return True
        if op is sre.BRANCH and any(_anywhere(s, here) for s in av[1]):
            return True
        if op in _REPEATS and _anywhere(av[2], here):
            return True
    return False


def _contains_unbounded(seq) -> bool:
    return _anywhere(seq, _unbounded)


def nested_quantifiers(seq) -> bool:
    """An unbounded repeat whose body holds another unbounded repeat: ``(a+)+``, ``(\\w+\\s?)*``."""
    return _anywhere(seq, lambda op, av: _unbounded(op, av) and _contains_unbounded(av[2]))


def leading_run(seq) -> bool:
    """Some alternative starts with an unbounded repeat of a character class that is not pinned
    by an anchor or lookbehind: every position of a long run then starts a scan to its end."""
    for items in item_lists(seq):
        for op, av in items:
            if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
                break  # anchored or pinned by a lookaround: fine
            if _unbounded(op, av):
                if av[0] >= 1 or len(items) > 1:
                    return True
                break
            if op in _REPEATS and av[0] == 0:
                continue  # an optional item: the next one may start the match
            break
    return False
