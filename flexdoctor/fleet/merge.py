"""Merge node reports: group nodes by stack, find the majority, name every outlier's differences.

What counts as drift is configurable: ``ignore`` drops a field (``cache``) or loosens a version
field to ``major.minor`` (``python.patch``) or ``major`` (``driver.minor``). Everything here is
pure over :class:`Node` values, so the merge of 2,000 nodes is a dictionary pass.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from .. import __version__
from ..text import Said, t
from .hostlist import host_key, natural_key
from .model import (FIELDS, PRECISIONS, VERSION_FIELDS, BundleMatch, Difference, FileProblem, FleetReport, Group,
                    Node, Outlier)


class IgnoreError(ValueError):
    """An --ignore value (or settings entry) that names no field: a usage error."""


def parse_ignore(specs: Iterable[str]) -> dict:
    """``["python.patch", "cache"]`` -> ``{"python": "patch", "cache": None}`` (None: dropped)."""
    out: dict = {}
    for raw in specs:
        spec = str(raw).strip().lower().replace("-", "_")
        if not spec:
            continue
        name, _, precision = spec.partition(".")
        if name not in FIELDS:
            raise IgnoreError(t("fleet.ignore.unknown_field", name=repr(raw), fields=", ".join(FIELDS)))
        if precision:
            if precision not in PRECISIONS:
                raise IgnoreError(t("fleet.ignore.bad_precision", name=repr(raw)))
            if name not in VERSION_FIELDS:
                raise IgnoreError(t("fleet.ignore.not_version_field", name=repr(raw), fields=", ".join(VERSION_FIELDS),
                                     precision=precision))
            if out.get(name, precision) is None:
                continue  # the whole field is ignored already
            # .minor ignores more than .patch: the looser wins.
            out[name] = "minor" if "minor" in (precision, out.get(name)) else "patch"
        else:
            out[name] = None
    return out


def _loosen(value: Optional[str], precision: str) -> Optional[str]:
    if value is None:
        return None
    head = value.split("+", 1)[0]
    parts = head.split(".")
    keep = 1 if precision == "minor" else 2
    if len(parts) <= keep or not parts[0].isdigit():
        return value
    return ".".join(parts[:keep])


def view(stack: dict, ignore: dict) -> dict:
    """The part of a stack that is compared, after ``ignore``."""
    out = {}
    for name in FIELDS:
        if name in ignore:
            precision = ignore[name]
            if precision is None:
                continue
            out[name] = _loosen(stack.get(name), precision)
        else:
            out[name] = stack.get(name)
    return out


def describe_ignore(ignore: dict) -> tuple:
    return tuple(name if p is None else f"{name}.{p}" for name, p in ignore.items())


def merge(nodes: Sequence[Node], problems: Sequence[FileProblem] = (), ignore: Iterable[str] = (),
          expect: Iterable[str] = (), bundle: Optional[BundleMatch] = None, source: Optional[str] = None,
          gather_error: Optional[Said] = None) -> FleetReport:
    """One fleet report. ``expect``: node names that should have reported (one a line from
    ``scontrol show hostnames``); any without a report is a problem and is kept out."""
    rules = parse_ignore(ignore)
    nodes = sorted(nodes, key=lambda n: natural_key(n.name))
    problems = list(problems)
    have = {host_key(n.name) for n in nodes} | {host_key(p.node) for p in problems if p.node}
    for name in sorted(set(expect), key=natural_key):
        if host_key(name) not in have:
            have.add(host_key(name))
            problems.append(FileProblem(name, "no-report", node=name))

    buckets: dict = {}
    views: dict = {}
    for n in nodes:
        v = view(n.stack, rules)
        views[n.name] = v
        buckets.setdefault(tuple(v.items()), []).append(n.name)
    ordered = sorted(buckets.items(), key=lambda kv: (-len(kv[1]), natural_key(kv[1][0])))
    groups = tuple(Group(id=i + 1, stack=dict(key), nodes=tuple(names)) for i, (key, names) in enumerate(ordered))
    majority = groups[0] if groups else None
    tie = len(groups) > 1 and len(groups[0].nodes) == len(groups[1].nodes)

    outliers = []
    if majority is not None:
        group_of = {name: g.id for g in groups for name in g.nodes}
        for n in nodes:
            if group_of[n.name] == majority.id:
                continue
            v = views[n.name]
            diffs = tuple(Difference(f, majority.stack.get(f), v.get(f)) for f in majority.stack
                          if v.get(f) != majority.stack.get(f))
            outliers.append(Outlier(node=n.name, group=group_of[n.name], differences=diffs))
    return FleetReport(
        nodes=tuple(nodes),
        groups=groups,
        majority=majority.id if majority else None,
        tie=tie,
        outliers=tuple(outliers),
        problems=tuple(sorted(problems, key=lambda p: (p.kind == "foreign", natural_key(p.node or p.path)))),
        fields=tuple(f for f in FIELDS if rules.get(f, "keep") is not None),
        ignored=describe_ignore(rules),
        flexdoctor_version=__version__,
        bundle=bundle,
        gather_error=gather_error,
        source=source,
    )
