"""The remedy an error states itself, for an error flexdoctor does not know.

Many libraries put the way out in the message: "Try increasing `gpu_memory_utilization`", "Please
install it with ...", "Re-running `torch.load` with `weights_only` set to `False` will likely succeed",
"You can set HOROVOD_WITH_PYTORCH=1", "HINT: ...". When no rule knows an error, the unknown answer
still quotes that sentence (from the root error's line or the line after it, where a message goes on),
as the error's own words: what to try first, before a bug report. A hint on a line that reads as a
warning (a deprecation notice printed next to the error) is not the error's, unless it is the root
error's own line. The sentence is log text: renderers treat it as data, and it never goes into a
command.
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Collector
from .context import LogFacts

# Sentences that state a remedy. They are no units with triggers (their words are everywhere in ordinary
# logs): they are searched only on the root error's line and the line after it (Collector.follow).
_VERBS = (r"(?:increasing|decreasing|reducing|lowering|raising|setting|using|passing|adding|installing|upgrading"
          r"|updating|downgrading|reinstalling|enabling|disabling|running|re-running|specifying|exporting"
          r"|switching|changing|rebuilding|restarting)\b")
_IMPERATIVE = (r"(?:set|use|install|upgrade|update|run|add|pass|reinstall|downgrade|specify|increase|reduce|lower"
               r"|make sure|export|enable|disable|switch|change|rebuild|restart|reboot|try|consider|pin)\b")
HINT_PATTERNS = (
    r"\b(?:[Tt]ry|[Cc]onsider) " + _VERBS,
    r"\b[Pp]lease " + _IMPERATIVE,
    r"\b[Yy]ou (?:can|may|should|need to|must|might want to|will need to) " + _IMPERATIVE,
    r"\b(?:HINT|[Hh]int|[Ss]uggestion|[Ss]olution|[Ww]orkaround)(?::| is to| you can| try)",
    r"\b[Tt]o (?:fix|solve|resolve|work around) this[,:]? ",
    r"\bwill (?:likely|probably) (?:succeed|work|fix|solve|resolve)",
    r"\b(?:reinstall|rebuild|recompile) [\w.-]{1,60}+ with [A-Z][A-Z0-9_]{2,60}+=",
)
HINT = re.compile("|".join(f"(?:{p})" for p in HINT_PATTERNS))
MAX_HINT = 300

_WARNING = re.compile(r"[Ww]arning|WARNING|\bW\d{4} |[Dd]eprecat")
_STOP = re.compile(r"[.!?](?=\s|$)")
_LEAD = re.compile(r"^[\s(\[]{0,3}(?:\d{1,2}[.)\]]|[-*•])?\s{0,3}")


# Where a message wrapped onto the next line goes on after a parenthesis: "... by PyTorch) If reserved ...".
_CLAUSE = re.compile(r"\) (?=[A-Z])")


def _sentence(text: str, start: int, end: int, wrapped: bool = False) -> str:
    """The sentence the hint matched in (``start``:``end``), bounded: from the end of the sentence
    before it (at most 200 characters back) to the end of its own, at most MAX_HINT characters. On a
    ``wrapped`` line (the message's continuation) with no sentence end before the hint, the sentence
    starts after the last closing parenthesis before a capital, not mid-way through the line before."""
    begin = 0
    for m in _STOP.finditer(text, max(0, start - 200), start):
        begin = m.end()
    if wrapped and not begin:
        for m in _CLAUSE.finditer(text, max(0, start - 200), start):
            begin = m.end()
    if start - begin > 200:
        begin = start
    stop = _STOP.search(text, end)
    finish = min(stop.end() if stop else len(text), begin + MAX_HINT)
    cut = "…" if stop is None or finish < stop.end() else ""  # the sentence goes on past what is quoted
    return _LEAD.sub("", text[begin:finish]).strip() + cut


def stated(c: Collector, log: LogFacts) -> Optional[str]:
    """The first remedy the root error's message states (its line, then the line after it), or None."""
    if log.root is None:
        return None
    root, text = log.root[0], log.root[3]
    lines = [(root, text)] + [(n, t) for n, t in c.follow if n == root + 1 and not _WARNING.search(t)]
    for n, line in lines:
        m = HINT.search(line)
        if m is not None:
            hint = _sentence(line, m.start(), m.end(), wrapped=n != root)
            if len(hint) >= 12:
                return hint
    return None


# The words of a remedy that a fix would have to hold to say it too: an env var, a `quoted` name, a key=value.
_KEY = re.compile(r"`([^`\n]{2,80})`|\b([A-Z][A-Z0-9]*_[A-Z0-9_]{2,60})\b|\b([A-Za-z_][\w.]{1,60}=[\w.:'\"-]{1,60})")


def said_already(hint: str, summary: str) -> bool:
    """Whether a fix's ``summary`` already says the remedy ``hint`` states: the whole sentence, or every
    one of its key words (env vars, `quoted` names, key=value settings) when it has some."""
    low = summary.lower()
    if hint.lower() in low:
        return True
    keys = [next(g for g in m.groups() if g) for m in _KEY.finditer(hint)]
    return bool(keys) and all(k.lower() in low for k in keys)
