"""Which nodes a warmed-cache bundle (``warm-cache --export``) fits, and how to ship it.

A bundle's entries are hit only by the same torch (version and build), Triton, CUDA/HIP and GPU
name (FACTS §3, the keyed parts of the fingerprint). Per node: ``warm`` (its cache already holds
every config of the bundle for this environment), ``import`` (the bundle fits; `warm-cache
--import` on the node makes its first step start warm), ``incompatible`` (another torch, Triton,
CUDA or GPU: importing would add entries nothing ever hits) or ``unknown`` (its report does not
say which torch it runs).
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Sequence

from ..cache import manifest as mf
from ..cache.bundlefile import Refused
from ..cache.plan import PlanError
from ..cache.warm import bundle_workload, read_bundle_meta
from .hostlist import compress
from .model import BundleMatch, BundleNode, Node


class BundleError(ValueError):
    """The --bundle file is missing or not a flexdoctor cache bundle (a usage error)."""


def read(path: str) -> tuple:
    """(metadata, sha256): only the metadata is read, as data (nothing in a bundle runs here), with
    the size limits of cache/bundlefile.py (a zip bomb is refused before it is inflated)."""
    from ..text import t

    try:
        return read_bundle_meta(path)
    except Refused as exc:
        raise BundleError(t("warm-bundle.fleet_refused", why=exc.text())) from None


def _config_names(meta: dict) -> tuple:
    names = []
    for c in meta.get("configs") or ():
        if not isinstance(c, dict):
            continue
        try:
            names.append(bundle_workload(c).name)
        except (TypeError, ValueError, PlanError):
            continue
    return tuple(sorted(set(names)))


def state_of(node: Node, fp: dict, configs: tuple) -> BundleNode:
    if not node.fingerprint.get("torch"):
        return BundleNode(node.name, "unknown")
    diffs = mf.compare(fp, node.fingerprint)
    if diffs:
        return BundleNode(node.name, "incompatible", tuple((label, str(a), str(b)) for label, a, b in diffs))
    m = node.manifest
    if m and not mf.compare(fp, m.get("fingerprint") or {}) and not mf.compare(m.get("fingerprint") or {},
                                                                                  node.fingerprint):
        if set(configs) <= set(m.get("configs") or ()):
            return BundleNode(node.name, "warm")
    return BundleNode(node.name, "import")


# A cache dir from a node's report fit for a printed command: absolute (it cannot read as an
# option), normalised (no "." or ".." part, no "//"), and only letters, digits, white space and
# "._+@%,=:~-" between the slashes: no shell syntax, quote, line break or control, even before
# shlex.quote puts it in one argument.
_PLAIN_DIR = re.compile(r"/[\w.+@%,=:~ /-]*")


def plain_dir(value: object) -> bool:
    """``value`` (outside text: a node report's cache dir) may stand in a printed command."""
    if not isinstance(value, str) or not _PLAIN_DIR.fullmatch(value) or "//" in value:
        return False
    return not any(part in (".", "..") for part in value.split("/"))


def unfit_dirs(nodes: Sequence[Node]) -> tuple:
    """Names of the nodes whose report gives a cache dir no printed command may hold."""
    return tuple(n.name for n in nodes if n.inductor_dir is not None and not plain_dir(n.inductor_dir))


def ship_commands(path: str, nodes: Sequence[Node], sha256: str = "") -> tuple:
    """Commands that import the bundle where it is needed, runnable as printed; pinned to the
    content read here (``--sha256``), so a bundle changed on the shared disk is refused. None
    (``()``) when a node's report gives a cache dir that is not a plain absolute path
    (:func:`unfit_dirs`): a report's words are data, never an option or shell syntax."""
    if not nodes or unfit_dirs(nodes):
        return ()
    bundle = shlex.quote(os.path.abspath(path))
    dirs = {n.inductor_dir for n in nodes}
    cache = f" --cache-dir {shlex.quote(dirs.pop())}" if len(dirs) == 1 and None not in dirs else ""
    pin = f" --sha256 {sha256}" if sha256 else ""
    command = f"flexdoctor warm-cache --import {bundle}{pin}{cache}"
    if all(n.scheduler.get("SLURM_JOB_ID") or n.scheduler.get("SLURMD_NODENAME") for n in nodes):
        hosts = shlex.quote(compress(n.name for n in nodes))
        return (f"srun --nodelist={hosts} --nodes={len(nodes)} --ntasks-per-node=1 {command}",)
    return (command,)


def match(path: str, nodes: Sequence[Node]) -> BundleMatch:
    meta, sha256 = read(path)
    fp = dict(meta.get("fingerprint") or {})
    configs = _config_names(meta)
    states = tuple(state_of(n, fp, configs) for n in nodes)
    needing = [n for n, s in zip(nodes, states) if s.state == "import"]
    return BundleMatch(path=path, fingerprint=fp, fingerprint_id=mf.fingerprint_id(fp), configs=configs,
                       created_at=meta.get("created_at"), nodes=states, ship=ship_commands(path, needing, sha256),
                       ship_refused=unfit_dirs(needing))
