"""Fleet preflight: merge the node reports of a job (or gather them over torch.distributed) into
one report that names the nodes that will break the job, and why.

    reports (check --format json, one per node) -> load -> Node (stack, failing findings)
        -> merge (groups, majority, outliers, problems, bundle match) -> FleetReport -> render/fleet_*

``gather`` runs inside a torchrun job: one rank per node checks its node, the reports travel to
rank 0 over the job's own process group, and rank 0 merges them.
"""

from __future__ import annotations

from typing import Iterable, Optional

from .model import FleetReport


def merge_paths(paths: Iterable[str], ignore: Iterable[str] = (), expect: Iterable[str] = (),
                bundle: Optional[str] = None, settings=None) -> FleetReport:
    """Read reports from files and directories and merge them (``fleet merge``). ``settings``:
    the check settings (policy.Settings) raw facts files are judged with, as `check --from-facts`."""
    from . import bundle as bundle_mod
    from .load import read_reports
    from .merge import merge

    paths = list(paths)
    nodes, problems = read_reports(paths, settings)
    match = bundle_mod.match(bundle, nodes) if bundle else None
    return merge(nodes, problems, ignore=ignore, expect=expect, bundle=match, source=" ".join(paths))
