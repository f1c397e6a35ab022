"""Read node reports from files and directories. A bad file is a :class:`FileProblem`, never an
exception: one node that died while writing its report must not stop the merge of a thousand."""

from __future__ import annotations

import json
import os
import re
from typing import Iterable, Optional

from ..model import REPORT_SCHEMA_VERSION
from ..text import Said
from .model import FileProblem, Node
from .stack import node_from_report

# A node report is ~20 KB; anything far larger is not one (and must not be read into memory).
MAX_BYTES = 16 << 20
_HOSTNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


def _node_guess(path: str) -> Optional[str]:
    """DIR/<node>.json names its node (the Slurm recipe writes %N.json); other names do not."""
    stem = os.path.basename(path)
    if not stem.lower().endswith(".json"):
        return None
    stem = stem[: -len(".json")]
    return stem if _HOSTNAME.match(stem) else None


def expand_paths(paths: Iterable[str]) -> tuple[list, list]:
    """Files to read (a directory stands for its ``*.json`` files, not recursive, hidden ones
    skipped: an interrupted atomic write leaves ``.<name>.tmp``), and the paths that are missing."""
    files: list = []
    problems: list = []
    for p in paths:
        if os.path.isdir(p):
            try:
                names = sorted(n for n in os.listdir(p) if n.lower().endswith(".json") and not n.startswith("."))
            except OSError as exc:
                problems.append(FileProblem(p, "unreadable", exc.strerror or str(exc)))
                continue
            files += [os.path.join(p, n) for n in names]
        elif os.path.lexists(p):
            files.append(p)
        else:
            problems.append(FileProblem(p, "missing", node=_node_guess(p)))
    return files, problems


def classify(path: str, data: bytes) -> tuple[Optional[dict], Optional[FileProblem]]:
    """The report in ``data``, or why it is not one."""
    guess = _node_guess(path)
    if not data.strip():
        return None, FileProblem(path, "empty", node=guess)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, FileProblem(path, "not-json", Said.of("fleet.detail.not_utf8"))
    try:
        doc = json.loads(text)
    except ValueError as exc:
        stripped = text.rstrip()
        pos = getattr(exc, "pos", 0)
        cut = stripped.startswith("{") and (pos >= len(stripped) - 1 or str(exc).startswith("Unterminated"))
        if cut:
            return None, FileProblem(path, "truncated", str(exc), node=guess)
        # Text that is not JSON, where a report should be: the node printed an error instead.
        first = stripped.splitlines()[0][:200] if stripped else ""
        return None, FileProblem(path, "not-json", first, node=guess)
    return validate(path, doc)


def validate(path: str, doc: object) -> tuple[Optional[dict], Optional[FileProblem]]:
    """``doc`` if it is a node report this flexdoctor reads, else why not."""
    guess = _node_guess(path)
    if not isinstance(doc, dict):
        return None, FileProblem(path, "foreign", Said.of("fleet.detail.json_type", type=type(doc).__name__))
    if doc.get("kind") == "flexdoctor-fleet":
        return None, FileProblem(path, "foreign", Said.of("fleet.detail.fleet_report"))
    if "results" not in doc or "facts" not in doc:
        if "schema_version" in doc and "host" in doc and "gpu" in doc:
            return None, FileProblem(path, "foreign", Said.of("fleet.detail.facts_not_report"))
        return None, FileProblem(path, "foreign", Said.of("fleet.detail.no_results"))
    if doc.get("schema_version") != REPORT_SCHEMA_VERSION or not isinstance(doc.get("facts"), dict) \
            or not isinstance(doc.get("results"), list):
        detail = Said.of("fleet.detail.schema", version=repr(doc.get("schema_version")),
                         supported=REPORT_SCHEMA_VERSION)
        return None, FileProblem(path, "unsupported", detail, node=guess)
    return doc, None


def read_one(path: str) -> tuple[Optional[Node], Optional[FileProblem]]:
    try:
        if os.path.isdir(path) or not (os.path.isfile(path) or os.path.islink(path)):
            return None, FileProblem(path, "foreign", Said.of("fleet.detail.not_regular"))
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None, FileProblem(path, "missing", node=_node_guess(path))
    except OSError as exc:
        return None, FileProblem(path, "unreadable", exc.strerror or str(exc), node=_node_guess(path))
    if len(data) > MAX_BYTES:
        return None, FileProblem(path, "foreign", Said.of("fleet.detail.too_large", size=MAX_BYTES >> 20))
    doc, problem = classify(path, data)
    if problem is not None:
        return None, problem
    try:
        return node_from_report(doc, file=path, fallback_name=_node_guess(path)), None
    except Exception as exc:  # a report of a shape no version wrote: name the file, go on
        return None, FileProblem(path, "unsupported", f"{type(exc).__name__}: {exc}", node=_node_guess(path))


def read_reports(paths: Iterable[str]) -> tuple[list, list]:
    """Nodes and problems from files and directories (duplicates: the first report of a name
    wins, the others are problems, and the node is kept out of the job: which one is true?)."""
    files, problems = expand_paths(paths)
    nodes: list = []
    for path in files:
        node, problem = read_one(path)
        if problem is not None:
            problems.append(problem)
        else:
            nodes.append(node)
    return dedupe(nodes, problems)


def from_documents(docs: Iterable[tuple]) -> tuple[list, list]:
    """Nodes and problems from in-memory reports: ``(label, dict | None)`` pairs (fleet gather)."""
    nodes: list = []
    problems: list = []
    for label, doc in docs:
        doc, problem = validate(label, doc)
        if problem is None:
            try:
                nodes.append(node_from_report(doc, file=None, fallback_name=label))
                continue
            except Exception as exc:
                problem = FileProblem(label, "unsupported", f"{type(exc).__name__}: {exc}", node=label)
        problems.append(problem)
    return dedupe(nodes, problems)


def dedupe(nodes: list, problems: list) -> tuple[list, list]:
    seen: dict = {}
    out: list = []
    for n in nodes:
        if n.name in seen:
            first = seen[n.name].file
            detail = (Said.of("fleet.detail.duplicate", file=first) if first
                      else Said.of("fleet.detail.duplicate_gathered"))
            problems.append(FileProblem(n.file or n.name, "duplicate", detail, node=n.name))
            continue
        seen[n.name] = n
        out.append(n)
    return out, problems
