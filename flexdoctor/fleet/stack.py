"""One node's report -> a :class:`Node`: its name, its stack, its failing findings, its cache.

Only the facts sections the stack needs are rebuilt as typed facts (host, gpu, python, torch,
torch_runtime, cache): the cache fingerprint then comes from the very function FD505 uses, so
`fleet merge` and `check` can never disagree about whether a cache is warm.
"""

from __future__ import annotations

from typing import Optional

from ..cache import manifest as mf
from ..checks.cache import current_fingerprint
from ..facts import (CacheFacts, Facts, GpuFacts, HostFacts, PythonFacts, TorchRuntimeFacts, TorchStaticFacts,
                     from_jsonable, ok)
from .model import FIELDS, Node, NodeFinding

# Environment variables (recorded in facts.host.scheduler) that name the node, best first.
# FLEXDOCTOR_NODE_NAME is for Kubernetes, where the pod's hostname is not the node's name: the
# manifests in contrib/k8s set it from the downward API (spec.nodeName).
NODE_NAME_VARS = ("FLEXDOCTOR_NODE_NAME", "SLURMD_NODENAME")

_SECTIONS = {"host": HostFacts, "gpu": GpuFacts, "python": PythonFacts, "torch": TorchStaticFacts,
             "torch_runtime": TorchRuntimeFacts, "cache": CacheFacts}


def partial_facts(data: dict) -> Facts:
    """The sections of a facts document the fleet needs, typed; the rest left out (None)."""
    kw = {}
    for name, tp in _SECTIONS.items():
        value = data.get(name)
        try:
            kw[name] = from_jsonable(tp, value) if isinstance(value, dict) else None
        except (TypeError, KeyError, AttributeError, ValueError):
            kw[name] = None  # a section of another shape: "could not tell", like a probe error
    facts = Facts(**kw)
    return facts


def reported_name(facts: Facts) -> Optional[str]:
    """The name a report gives its node (outside text: fleet/load.py checks it before it is used)."""
    host = facts.host
    if ok(host):
        for var in NODE_NAME_VARS:
            value = (host.scheduler or {}).get(var) if isinstance(host.scheduler, dict) else None
            if isinstance(value, str) and value.strip():
                return value.strip()
        if isinstance(host.hostname, str) and host.hostname:
            return host.hostname
    return None


def _version_part(text: Optional[str]) -> Optional[str]:
    return text.split("+", 1)[0] if isinstance(text, str) else None


def stack_of(facts: Facts, fingerprint: dict) -> dict:
    """FIELDS -> value as a short string, or None where the node's probes could not tell."""
    out: dict = dict.fromkeys(FIELDS)
    gpu = facts.gpu
    if ok(gpu):
        if gpu.nvml == "ok":
            names = sorted({d.name for d in gpu.devices})
            out["gpu"] = " + ".join(names) if names else "none"
            out["gpu_count"] = str(len(gpu.devices))
            out["capability"] = ",".join(sorted({d.compute_capability for d in gpu.devices})) or "-"
            out["driver"] = gpu.driver_version
        elif gpu.nvml in ("no-library", "driver-not-loaded") and not gpu.device_nodes:
            out["gpu"], out["gpu_count"], out["capability"], out["driver"] = "none", "0", "-", "-"
    torch = facts.torch
    if ok(torch):
        out["torch"] = _version_part(torch.version)
        out["cuda"] = torch.cuda or (f"HIP {torch.hip}" if torch.hip else "cpu")
        out["torch_build"] = (torch.git_version or "")[:12] or None
    elif facts.torch is None and ok(facts.python):
        out["torch"] = out["cuda"] = out["torch_build"] = "not installed"
    out["triton"] = fingerprint.get("triton") or ("none" if ok(facts.python) else None)
    if ok(facts.python):
        out["python"] = facts.python.version
    out["cache"] = cache_state(facts, fingerprint)
    return out


def cache_state(facts: Facts, fingerprint: dict) -> Optional[str]:
    """``warm <id> (N configs)``, ``stale <id>``, ``cold``, ``disabled`` or None (unknown)."""
    cache = facts.cache
    if not ok(cache):
        return None
    if cache.disabled_by:
        return "disabled"
    m = cache.manifest
    if m is None:
        return "cold"
    if not ok(m):
        return "unreadable"
    fid = mf.fingerprint_id(m.fingerprint)[:8]
    if mf.compare(m.fingerprint, fingerprint):
        return f"stale {fid}"
    return f"warm {fid} ({len(m.configs)} configs)"


STATUSES = ("pass", "note", "warn", "fail", "skip", "error")


class MalformedReport(ValueError):
    """A report whose results prove nothing: none at all, or one that is not a check result."""


def _strings(value: object) -> tuple:
    return tuple(str(c) for c in value) if isinstance(value, list) else ()


def _finding(r: dict) -> NodeFinding:
    fix = r.get("fix") if isinstance(r.get("fix"), dict) else {}
    summary = fix.get("summary")
    return NodeFinding(id=str(r.get("id", "?")), symbol=str(r.get("symbol", "")), title=str(r.get("title", "")),
                       status=r["status"], message=str(r.get("message", "")),
                       fix_summary=str(summary) if summary else None, fix_commands=_strings(fix.get("commands")))


def verdict(report: dict) -> tuple:
    """``(ready, failing findings, counts)`` from the report's results, never from its summary or its
    own ``ok``: a report saying ``"ok": true`` over a failed check is not ready. The node's own
    verdict can only make it worse (a strict run fails on its warnings: then they are the findings)."""
    results = report.get("results")
    if not isinstance(results, list) or not results:
        raise MalformedReport("no check results")
    counts = dict.fromkeys(STATUSES, 0)
    for r in results:
        if not isinstance(r, dict) or r.get("status") not in STATUSES:
            raise MalformedReport("a result without a known status")
        counts[r["status"]] += 1
    strict = report.get("strict") is True
    failing = [r for r in results if r["status"] in ("fail", "error") or (strict and r["status"] == "warn")]
    own_failure = report.get("ok") is False or report.get("exit_code") not in (0, None)
    if not failing and own_failure:
        failing = [r for r in results if r["status"] == "warn"]
    ready = not failing and not own_failure
    return ready, tuple(_finding(r) for r in failing), counts


def node_from_report(report: dict, name: str, file: Optional[str] = None, facts: Optional[Facts] = None) -> Node:
    """A Node named ``name`` (already checked: a valid host name) from a `check --format json`
    document (already known to be one). MalformedReport: its results prove nothing."""
    facts = facts if facts is not None else partial_facts(report.get("facts") or {})
    ready, findings, counts = verdict(report)
    fp = current_fingerprint(facts)
    cache = facts.cache
    manifest = None
    if ok(cache) and ok(cache.manifest):
        manifest = {"fingerprint": dict(cache.manifest.fingerprint), "configs": list(cache.manifest.configs)}
    version = report.get("flexdoctor_version")
    return Node(
        name=name,
        file=file,
        ok=ready,
        stack=stack_of(facts, fp),
        findings=findings,
        counts=counts,
        fingerprint=fp,
        manifest=manifest,
        inductor_dir=cache.inductor.path if ok(cache) else None,
        scheduler=dict(facts.host.scheduler) if ok(facts.host) else {},
        flexdoctor_version=version if isinstance(version, str) else None,
    )
