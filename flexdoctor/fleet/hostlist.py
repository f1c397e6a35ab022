"""Slurm-style host lists: ``gpu[001-004,007],login1`` for 2,000 names on one line.

Only the last run of digits in a name is ranged (what ``scontrol show hostlist`` does for the
usual ``<prefix><number>`` names); zero padding is kept, so ``gpu009`` and ``gpu010`` share a
range but ``n9`` and ``n009`` do not. The result is valid input for ``srun --nodelist`` and
``scontrol show hostnames``.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

_TAIL = re.compile(r"^(.*?)(\d+)([^\d]*)$")
# A host name as RFC 1123 allows it (labels of letters, digits and inner hyphens, 1-63 characters,
# dot-separated, 253 at most), and as Slurm node names also use it (an inner '_'). Nothing else:
# such a name can never be an option (no leading '-'), a second line, a glob, a host list or a
# terminal control, so it goes into exclude files and printed commands as it is.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")


def is_hostname(name: object) -> bool:
    return isinstance(name, str) and len(name) <= 253 and _HOSTNAME.fullmatch(name) is not None


def same_host(a: str, b: str) -> bool:
    """Do two valid host names name one host? Equal but for case, or one is the other's short name
    (``gpu001`` and ``gpu001.cluster.example.org``: Slurm's %N and a node's FQDN hostname)."""
    a, b = a.lower(), b.lower()
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def host_key(name: Optional[str]) -> Optional[str]:
    """What two names of one host share (host names are not case-sensitive)."""
    return name.lower() if name is not None else None


def natural_key(name: str) -> tuple:
    """Sort ``gpu2`` before ``gpu10``."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def compress(names: Iterable[str]) -> str:
    groups: dict = {}
    singles: list = []
    parsed = []
    padded: set = set()  # (prefix, suffix, width) seen with a leading zero
    for name in sorted(set(names), key=natural_key):
        m = _TAIL.match(name)
        if not m or "[" in name or "," in name:
            singles.append(name)
            continue
        prefix, digits, suffix = m.groups()
        parsed.append((prefix, digits, suffix))
        if digits.startswith("0") and len(digits) > 1:
            padded.add((prefix, suffix, len(digits)))
    for prefix, digits, suffix in parsed:
        # gpu099 and gpu100 are one padded range; n9 and n10 one unpadded range.
        width = len(digits) if (prefix, suffix, len(digits)) in padded else 0
        groups.setdefault((prefix, suffix, width), []).append(int(digits))
    parts = list(singles)
    for (prefix, suffix, width), numbers in groups.items():
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}{suffix}" if width else f"{prefix}{numbers[0]}{suffix}")
            continue
        ranges = []
        start = prev = numbers[0]
        for n in numbers[1:] + [None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            a = f"{start:0{width}d}" if width else str(start)
            b = f"{prev:0{width}d}" if width else str(prev)
            ranges.append(a if start == prev else f"{a}-{b}")
            if n is not None:
                start = prev = n
        parts.append(f"{prefix}[{','.join(ranges)}]{suffix}")
    return ",".join(sorted(parts, key=natural_key))


def expand(hostlist: str) -> list:
    """The names of a host list with one bracketed range per name (the inverse of compress)."""
    out: list = []
    for part in _split_top(hostlist):
        m = re.match(r"^(.*)\[([^\]]+)\](.*)$", part)
        if not m:
            if part:
                out.append(part)
            continue
        prefix, body, suffix = m.groups()
        for item in body.split(","):
            a, _, b = item.partition("-")
            if not a.isdigit() or (b and not b.isdigit()):
                raise ValueError(f"not a host list: {hostlist!r}")
            width = len(a) if a.startswith("0") else 0
            for n in range(int(a), int(b or a) + 1):
                out.append(f"{prefix}{n:0{width}d}{suffix}" if width else f"{prefix}{n}{suffix}")
    return out


def _split_top(text: str) -> list:
    parts, depth, cur = [], 0, ""
    for ch in text.strip():
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return [p for p in parts if p]
