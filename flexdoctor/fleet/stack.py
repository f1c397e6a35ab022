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


def node_name(facts: Facts, fallback: Optional[str]) -> Optional[str]:
    host = facts.host
    if ok(host):
        for var in NODE_NAME_VARS:
            value = (host.scheduler or {}).get(var)
            if isinstance(value, str) and value.strip():
                return value.strip()
        if host.hostname:
            return host.hostname
    return fallback


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


def findings_of(report: dict) -> tuple:
    out = []
    for r in report.get("results") or ():
        if not isinstance(r, dict) or r.get("status") not in ("fail", "error"):
            continue
        fix = r.get("fix") if isinstance(r.get("fix"), dict) else {}
        out.append(NodeFinding(id=str(r.get("id", "?")), symbol=str(r.get("symbol", "")),
                               title=str(r.get("title", "")), status=str(r.get("status")),
                               message=str(r.get("message", "")), fix_summary=fix.get("summary"),
                               fix_commands=tuple(str(c) for c in fix.get("commands") or ())))
    # A strict run fails on warnings too: then they are what made the node fail.
    if not out and report.get("ok") is False:
        for r in report.get("results") or ():
            if isinstance(r, dict) and r.get("status") == "warn":
                fix = r.get("fix") if isinstance(r.get("fix"), dict) else {}
                out.append(NodeFinding(id=str(r.get("id", "?")), symbol=str(r.get("symbol", "")),
                                       title=str(r.get("title", "")), status="warn",
                                       message=str(r.get("message", "")), fix_summary=fix.get("summary"),
                                       fix_commands=tuple(str(c) for c in fix.get("commands") or ())))
    return tuple(out)


def node_from_report(report: dict, file: Optional[str] = None, fallback_name: Optional[str] = None) -> Node:
    """A Node from a `check --format json` document (already known to be one)."""
    facts = partial_facts(report.get("facts") or {})
    fp = current_fingerprint(facts)
    cache = facts.cache
    manifest = None
    if ok(cache) and ok(cache.manifest):
        manifest = {"fingerprint": dict(cache.manifest.fingerprint), "configs": list(cache.manifest.configs)}
    summary = report.get("summary") if isinstance(report.get("summary"), dict) else {}
    return Node(
        name=node_name(facts, fallback_name) or "?",
        file=file,
        ok=bool(report.get("ok")) and report.get("exit_code", 0) == 0,
        stack=stack_of(facts, fp),
        findings=findings_of(report),
        counts={k: int(summary.get(k) or 0) for k in ("pass", "warn", "fail", "skip", "error")},
        fingerprint=fp,
        manifest=manifest,
        inductor_dir=cache.inductor.path if ok(cache) else None,
        scheduler=dict(facts.host.scheduler) if ok(facts.host) else {},
        flexdoctor_version=report.get("flexdoctor_version"),
    )
