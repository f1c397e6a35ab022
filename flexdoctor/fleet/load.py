"""Read node reports from files and directories. A bad file is a :class:`FileProblem`, never an
exception: one node that died while writing its report must not stop the merge of a thousand.

A node report is outside data: the node wrote it, or anyone who can write the reports folder.
So (docs/SECURITY.md, "Node reports"):

- a file is opened without following a link (``O_NOFOLLOW``), without blocking (``O_NONBLOCK``:
  a FIFO never hangs the merge) and read only if it is a regular file under the size limit;
  nothing of a file that is no report is ever shown (the parser's words, never the file's);
- a node is named by its file (``DIR/<node>.json``: Slurm's ``%N``, the collector's node name);
  the name inside the report is used only if it is a valid host name that agrees with the file
  name (or where the file name is none); otherwise the node is kept out under its file name and
  the file is a ``bad-name`` problem;
- readiness comes from the results (fleet/stack.py), never the report's own ``ok``;
- two reports for one host are one ``duplicate`` problem for that host, which is kept out.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from typing import Iterable, Optional

from ..model import REPORT_SCHEMA_VERSION
from ..text import Said
from .hostlist import host_key, is_hostname, same_host
from .model import FileProblem, Node
from .stack import MalformedReport, node_from_report, partial_facts, reported_name

# A node report is ~20 KB (~60 KB with --deep on 8 GPUs); anything far larger is not one and is not read.
MAX_BYTES = 16 << 20
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def file_node(path: str) -> Optional[str]:
    """DIR/<node>.json names its node (the Slurm recipe writes %N.json) when <node> is a host name."""
    stem = os.path.basename(path)
    if not stem.lower().endswith(".json"):
        return None
    stem = stem[: -len(".json")]
    return stem if is_hostname(stem) else None


def shown(value: object) -> str:
    """A name from a report as a problem row shows it: printable ASCII only, at most 64 characters."""
    text = value if isinstance(value, str) else repr(value)
    return ascii(text[:64]) + ("..." if len(text) > 64 else "")


def expand_paths(paths: Iterable[str]) -> tuple:
    """Files to read (a directory stands for its ``*.json`` files, not recursive, hidden ones
    skipped: an interrupted atomic write leaves ``.<name>.tmp``), and the paths that are missing.
    A file named twice (a directory and a file in it) is read once."""
    files: list = []
    problems: list = []
    seen: set = set()

    def add(path: str) -> None:
        key = (os.path.realpath(os.path.dirname(os.path.abspath(path))), os.path.basename(path))
        if key not in seen:
            seen.add(key)
            files.append(path)

    for p in paths:
        if os.path.isdir(p):
            try:
                names = sorted(n for n in os.listdir(p) if n.lower().endswith(".json") and not n.startswith("."))
            except OSError as exc:
                problems.append(FileProblem(p, "unreadable", exc.strerror or str(exc)))
                continue
            for n in names:
                add(os.path.join(p, n))
        elif os.path.lexists(p):
            add(p)
        else:
            problems.append(FileProblem(p, "missing", node=file_node(p)))
    return files, problems


def read_bytes(path: str) -> tuple:
    """``(bytes, None)`` or ``(None, FileProblem)``. Never follows a link, never blocks on a FIFO,
    never opens a device, never reads past MAX_BYTES."""
    node = file_node(path)
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        return None, FileProblem(path, "missing", node=node)
    except OSError as exc:
        return None, FileProblem(path, "unreadable", exc.strerror or str(exc), node=node)
    if not stat.S_ISREG(before.st_mode):  # a link (not followed), FIFO, socket, device or folder
        return None, FileProblem(path, "not-regular", _what(before.st_mode), node=node)
    if before.st_size > MAX_BYTES:
        return None, FileProblem(path, "too-large", Said.of("fleet.detail.too_large", size=MAX_BYTES >> 20), node=node)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since the lstat
            return None, FileProblem(path, "not-regular", Said.of("fleet.detail.link"), node=node)
        kind = "missing" if exc.errno == errno.ENOENT else "unreadable"
        return None, FileProblem(path, kind, "" if kind == "missing" else (exc.strerror or str(exc)), node=node)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            return None, FileProblem(path, "not-regular", Said.of("fleet.detail.replaced"), node=node)
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        return None, FileProblem(path, "unreadable", exc.strerror or str(exc), node=node)
    finally:
        os.close(fd)
    if size > MAX_BYTES:
        return None, FileProblem(path, "too-large", Said.of("fleet.detail.too_large", size=MAX_BYTES >> 20), node=node)
    return b"".join(chunks), None


def _what(mode: int) -> Said:
    if stat.S_ISLNK(mode):
        return Said.of("fleet.detail.link")
    if stat.S_ISFIFO(mode):
        return Said.of("fleet.detail.fifo")
    if stat.S_ISDIR(mode):
        return Said.of("fleet.detail.directory")
    return Said.of("fleet.detail.not_regular")


def parse(label: str, data: bytes, node: Optional[str] = None) -> tuple:
    """``(JSON value, None)`` or ``(None, FileProblem)``. A problem carries the parser's words, never
    the file's: a file that is no report may hold anything (a secret a link pointed at)."""
    if not data.strip():
        return None, FileProblem(label, "empty", node=node)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, FileProblem(label, "not-json", Said.of("fleet.detail.not_utf8"), node=node)
    try:
        return json.loads(text), None
    except RecursionError:  # [[[[... a hundred thousand deep
        return None, FileProblem(label, "not-json", Said.of("fleet.detail.too_deep"), node=node)
    except ValueError as exc:
        stripped = text.rstrip()
        pos = getattr(exc, "pos", 0)
        cut = stripped.startswith("{") and (pos >= len(stripped) - 1 or str(exc).startswith("Unterminated"))
        # JSONDecodeError's own words: "Expecting value: line 1 column 1 (char 0)", no content.
        words = getattr(exc, "msg", "") and f"{exc.msg}: line {exc.lineno} column {exc.colno}"
        return None, FileProblem(label, "truncated" if cut else "not-json", words, node=node)


class Judge:
    """Raw facts files (``facts --format json --raw``) are judged here as ``check --from-facts``
    judges them: check's own runner, the check settings of the merge, no plugins."""

    def __init__(self, settings=None) -> None:
        self.settings = settings
        self._specs = None

    def __call__(self, facts) -> dict:
        from .. import checks, policy, runner

        settings = self.settings if self.settings is not None else policy.Settings()
        if self._specs is None:
            self._specs = policy.select(checks.all_checks(with_plugins=False)[0], settings)
        report = runner.run(self._specs, facts, settings=settings)
        return {"ok": not report.failed, "exit_code": report.exit_code, "strict": report.strict,
                "results": [r.to_dict() for r in report.results]}


def validate(label: str, doc: object, node: Optional[str] = None, judge: Optional[Judge] = None) -> tuple:
    """``(report, facts, None)`` if ``doc`` is a node report this flexdoctor reads (or raw facts,
    judged), else ``(None, None, FileProblem)``."""
    if not isinstance(doc, dict):
        return None, None, FileProblem(label, "foreign", Said.of("fleet.detail.json_type", type=type(doc).__name__))
    if doc.get("kind") == "flexdoctor-fleet":
        return None, None, FileProblem(label, "foreign", Said.of("fleet.detail.fleet_report"))
    if "results" not in doc and "facts" not in doc and "host" in doc and "gpu" in doc and "schema_version" in doc:
        return _judge_facts(label, doc, node, judge or Judge())
    if "results" not in doc or "facts" not in doc:
        return None, None, FileProblem(label, "foreign", Said.of("fleet.detail.no_results"))
    if doc.get("schema_version") != REPORT_SCHEMA_VERSION or not isinstance(doc.get("facts"), dict) \
            or not isinstance(doc.get("results"), list):
        return None, None, FileProblem(label, "unsupported", _schema(doc), node=node)
    return doc, partial_facts(doc["facts"]), None


def _schema(doc: dict) -> Said:
    version = doc.get("schema_version")
    return Said.of("fleet.detail.schema", version=version if isinstance(version, int) else "?",
                   supported=REPORT_SCHEMA_VERSION)


def _judge_facts(label: str, doc: dict, node: Optional[str], judge: Judge) -> tuple:
    from ..facts import Facts

    try:
        facts = Facts.load(doc)
    except (ValueError, RecursionError):  # its words may quote the file: say only that it is unreadable
        return None, None, FileProblem(label, "unsupported", Said.of("fleet.detail.facts_unreadable"), node=node)
    return {**judge(facts), "facts": doc, "schema_version": REPORT_SCHEMA_VERSION}, facts, None


def name_node(label: str, file_name: Optional[str], inside: Optional[str]) -> tuple:
    """``(name, None)`` or ``(None, FileProblem)``: the file name wins; the name inside counts only
    when it is a valid host name agreeing with it (or when there is no file name)."""
    if inside is not None and not is_hostname(inside):
        return None, FileProblem(label, "bad-name", Said.of("fleet.detail.bad_name", name=shown(inside)),
                                 node=file_name)
    if file_name is None:
        if inside is None:
            return None, FileProblem(label, "bad-name", Said.of("fleet.detail.no_name"))
        return inside, None
    if inside is not None and not same_host(inside, file_name):
        return None, FileProblem(label, "bad-name", Said.of("fleet.detail.other_name", name=inside), node=file_name)
    return file_name, None


def to_node(label: str, doc: object, file_name: Optional[str], file: Optional[str],
            judge: Optional[Judge] = None) -> tuple:
    """A parsed JSON value -> ``(Node, None)`` or ``(None, FileProblem)``."""
    report, facts, problem = validate(label, doc, file_name, judge)
    if problem is not None:
        return None, problem
    name, problem = name_node(label, file_name, reported_name(facts))
    if problem is not None:
        return None, problem
    try:
        return node_from_report(report, name, file=file, facts=facts), None
    except MalformedReport as exc:
        return None, FileProblem(label, "unsupported", Said.of("fleet.detail.malformed", what=str(exc)), node=name)
    except Exception as exc:  # a report of a shape no version wrote: name the file (not its words), go on
        return None, FileProblem(label, "unsupported", Said.of("fleet.detail.malformed", what=type(exc).__name__),
                                 node=name)


def read_one(path: str, judge: Optional[Judge] = None) -> tuple:
    data, problem = read_bytes(path)
    if problem is not None:
        return None, problem
    node = file_node(path)
    doc, problem = parse(path, data, node)
    if problem is not None:
        return None, problem
    return to_node(path, doc, node, path, judge)


def read_reports(paths: Iterable[str], settings=None) -> tuple:
    """Nodes and problems from files and directories (``settings``: the check settings raw facts
    files are judged with)."""
    files, problems = expand_paths(paths)
    nodes: list = []
    judge = Judge(settings)
    for path in files:
        node, problem = read_one(path, judge)
        if problem is not None:
            problems.append(problem)
        else:
            nodes.append(node)
    return settle(nodes, problems)


def from_documents(docs: Iterable[tuple], settings=None) -> tuple:
    """Nodes and problems from reports that arrived over the wire (fleet gather): ``(label, value)``
    pairs, the value the JSON bytes a rank sent (or an already parsed value). No file name: the
    name inside must be a valid host name."""
    nodes: list = []
    problems: list = []
    judge = Judge(settings)
    for label, value in docs:
        if isinstance(value, (bytes, bytearray)):
            value, problem = parse(label, bytes(value))
            if problem is not None:
                problems.append(problem)
                continue
        node, problem = to_node(label, value, None, None, judge)
        if problem is not None:
            problems.append(problem)
        else:
            nodes.append(node)
    return settle(nodes, problems)


def settle(nodes: list, problems: list) -> tuple:
    """One entry per host: a host with two or more reports (good or bad) is one ``duplicate``
    problem naming every file, and is kept out of the job (which report is true?)."""
    by: dict = {}
    for item in list(nodes) + [p for p in problems if p.node]:
        key = host_key(item.name if isinstance(item, Node) else item.node)
        by.setdefault(key, []).append(item)
    out_nodes = [n for n in nodes if len(by[host_key(n.name)]) == 1]
    out_problems = [p for p in problems if not p.node or len(by[host_key(p.node)]) == 1]
    for items in by.values():
        if len(items) > 1:
            first = items[0]
            name = first.name if isinstance(first, Node) else first.node
            files = [(x.file if isinstance(x, Node) else x.path) for x in items]
            where = [f for f in files if f] or [None]
            detail = (Said.of("fleet.detail.duplicates", count=len(items), files=", ".join(f for f in files if f))
                      if where[0] else Said.of("fleet.detail.duplicate_gathered"))
            out_problems.append(FileProblem(where[0] or name, "duplicate", detail, node=name))
    return out_nodes, out_problems
