"""The typed result of merging node reports: what `fleet merge` and `fleet gather` hand to renderers.

Plain frozen dataclasses, no words (renderers take them from the locale catalogue). A value of
``None`` in a stack means "flexdoctor could not tell" on that node (a probe failed); it differs
from every real value, so such a node is an outlier until its report is complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from ..text import Said
from .hostlist import is_hostname

FLEET_SCHEMA_VERSION = 1

# The stack a node runs, in display order: what the issue calls "GPU model and capability,
# driver, CUDA, torch and its build, Triton, Python, cache fingerprint". GPU count is there
# because "one GPU fell off the bus" is the commonest hardware drift.
FIELDS = ("gpu", "gpu_count", "capability", "driver", "cuda", "torch", "torch_build", "triton", "python",
          "cache")
# Fields that hold dotted versions: `--ignore FIELD.patch` / `FIELD.minor` loosen them.
VERSION_FIELDS = ("driver", "cuda", "torch", "triton", "python")
PRECISIONS = ("minor", "patch")

# Why a file did not give a node report. Node-level kinds make the merge fail (a node that
# cannot be vouched for is kept out of the job); "foreign" files are only listed.
# not-regular: a symbolic link, FIFO, device or folder where a report should be (never opened or
# followed); too-large: over the size limit (never read); bad-name: the name inside the report is
# no host name, or not the one its file name says.
PROBLEM_KINDS = ("missing", "unreadable", "empty", "truncated", "not-json", "unsupported", "duplicate",
                 "no-report", "not-regular", "too-large", "bad-name", "foreign")
NODE_PROBLEMS = ("missing", "unreadable", "empty", "truncated", "not-json", "unsupported", "duplicate",
                 "no-report", "not-regular", "too-large", "bad-name")


@dataclass(frozen=True)
class NodeFinding:
    """One failing (or crashed) check of a node, as its report said it."""

    id: str
    symbol: str
    title: str
    status: str  # fail | error | warn
    message: str
    fix_summary: Optional[str] = None
    fix_commands: tuple = ()


@dataclass(frozen=True)
class Node:
    name: str  # a valid host name: its report's file name (DIR/<node>.json), else the name inside it
    file: Optional[str]  # where the report came from (None: gathered in memory)
    ok: bool  # ready: no result failed (or crashed, or warned under --strict); never the report's own "ok"
    stack: dict  # FIELDS -> str | None
    findings: tuple = ()  # NodeFinding for fail / error results
    counts: dict = field(default_factory=dict)  # pass/warn/fail/skip/error
    fingerprint: dict = field(default_factory=dict)  # what its compile-cache keys hang on
    manifest: Optional[dict] = None  # {"fingerprint": {...}, "configs": [...]} of its warm cache
    inductor_dir: Optional[str] = None
    scheduler: dict = field(default_factory=dict)
    flexdoctor_version: Optional[str] = None


@dataclass(frozen=True)
class FileProblem:
    path: str
    kind: str  # one of PROBLEM_KINDS
    # The parser's or the OS's own words, or flexdoctor's (a Said: English in JSON, words() in text).
    detail: Union[str, Said] = ""
    node: Optional[str] = None  # the node it stands for (a valid host name), when the name tells

    @property
    def excludes_node(self) -> bool:
        return self.kind in NODE_PROBLEMS and is_hostname(self.node)


@dataclass(frozen=True)
class Difference:
    field: str
    expected: Optional[str]  # the majority's value
    actual: Optional[str]


@dataclass(frozen=True)
class Group:
    id: int  # 1 = the largest
    stack: dict  # the compared view (after --ignore)
    nodes: tuple  # names, sorted


@dataclass(frozen=True)
class Outlier:
    node: str
    group: int
    differences: tuple  # Difference


@dataclass(frozen=True)
class BundleNode:
    node: str
    state: str  # warm | import | incompatible | unknown
    differences: tuple = ()  # (label, bundle value, node value) when incompatible


@dataclass(frozen=True)
class BundleMatch:
    path: str
    fingerprint: dict
    fingerprint_id: str
    configs: tuple  # config names the bundle holds
    created_at: Optional[str]
    nodes: tuple  # BundleNode
    ship: tuple = ()  # commands that import it where it is needed
    ship_refused: tuple = ()  # nodes whose report's cache dir no printed command may hold (no ship then)
    error: Optional[str] = None  # the bundle could not be read

    def having(self, state: str) -> list:
        return [n.node for n in self.nodes if n.state == state]


@dataclass(frozen=True)
class FleetReport:
    nodes: tuple  # Node, sorted by name
    groups: tuple  # Group, largest first
    majority: Optional[int]  # the id of the majority group; None: no node report at all
    tie: bool  # the largest groups are equally large: the majority is a guess
    outliers: tuple  # Outlier
    problems: tuple  # FileProblem
    fields: tuple  # the fields compared
    ignored: tuple  # what --ignore / the settings loosened or dropped ("python.patch", "cache")
    flexdoctor_version: str
    bundle: Optional[BundleMatch] = None
    gather_error: Optional[Said] = None  # fleet gather: the collective itself failed or hung
    source: Union[str, Said, None] = None  # the paths merged, or "gather over N ranks (gloo)"

    @property
    def failing(self) -> tuple:
        return tuple(n for n in self.nodes if not n.ok)

    @property
    def majority_group(self) -> Optional[Group]:
        for g in self.groups:
            if g.id == self.majority:
                return g
        return None

    @property
    def node_problems(self) -> tuple:
        return tuple(p for p in self.problems if p.kind in NODE_PROBLEMS)

    @property
    def exclude(self) -> tuple:
        """Host names to keep out of the job: failing nodes, outliers, nodes without a usable report.
        Only valid host names, ever (they go one a line into files that srun, sbatch and kubectl read);
        a node without one is a node problem, so the report fails instead."""
        names = {n.name for n in self.failing} | {o.node for o in self.outliers}
        names |= {p.node for p in self.problems if p.excludes_node}
        return tuple(sorted(x for x in names if is_hostname(x)))

    @property
    def ok(self) -> bool:
        return not (self.failing or self.outliers or self.node_problems or self.gather_error)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def counts(self) -> dict:
        ok_nodes = [n for n in self.nodes if n.ok and n.name not in {o.node for o in self.outliers}]
        named = {p.node for p in self.node_problems if p.node} - {n.name for n in self.nodes}
        unnamed = [p for p in self.node_problems if not p.node]  # each stands for a node too
        return {
            "nodes": len(self.nodes) + len(named) + len(unnamed),
            "reports": len(self.nodes),
            "ok": len(ok_nodes),
            "failing": len(self.failing),
            "outliers": len(self.outliers),
            "groups": len(self.groups),
            "problems": len(self.node_problems),
            "foreign": len([p for p in self.problems if p.kind == "foreign"]),
            "excluded": len(self.exclude),
        }
