"""warm-cache's result as JSON: a versioned contract (flexdoctor/schema/warm.schema.json), in
English. Per config: its status, its compile process's wall time, and the fresh verification
process timed phase by phase (the phases add up to its wall time); then the advice for training
time with the measurement behind it."""

from __future__ import annotations

import json
import shlex
from typing import Any, Optional

from .. import __version__
from ..cache.warm import SCHEMA_VERSION
from ._escape import for_json


def _verify(o: Any) -> Optional[dict]:
    if not o.warm:
        return None
    w, p = o.warm, o.process or {}
    return {"ok": bool(w.get("ok")), "hit": o.hit, "first_call_s": w.get("first_call_s"),
            "counters": w.get("counters") or {}, "wall_s": p.get("wall_s"),
            "phases": [{"name": ph["name"], "seconds": ph["seconds"], "measured": ph["measured"]}
                       for ph in p.get("phases") or []],
            "pool": p.get("pool"), "pool_s": p.get("pool_s")}


def _config(o: Any) -> dict:
    return {"name": o.workload.name, "workload": o.workload.to_dict(), "status": o.status(),
            "compile_s": (o.cold or {}).get("wall_s"), "first_call_cold_s": (o.cold or {}).get("first_call_s"),
            "error": o.error, "error_stage": o.error_stage, "knowledge": list(o.kb), "verify": _verify(o)}


def _advice(result: Any) -> dict:
    env = result.training_env
    command = "export " + " ".join(f"{k}={shlex.quote(str(v))}" for k, v in env.items())
    m = result.measured
    return {"env": env, "command": command, "measured": m.to_dict() if m is not None else None}


def to_dict(result: Any) -> dict:
    hits = [o for o in result.outcomes if o.hit is not None]
    plan = result.plan
    return {
        "schema_version": SCHEMA_VERSION, "flexdoctor_version": __version__, "kind": "flexdoctor-warm-cache",
        "cache_dir": plan.env.cache_dir, "cache_source": plan.env.cache_source, "jobs": plan.jobs,
        "verified": result.verified, "failed": result.failed, "configs": [_config(o) for o in result.outcomes],
        "hits": {"ok": sum(1 for o in hits if o.hit), "total": len(hits)},
        "compile_wall_s": result.compile_wall_s, "verify_wall_s": result.verify_wall_s,
        "advice": _advice(result), "run": result.run, "export": result.export,
        "manifest_path": result.manifest_path, "write_errors": [str(e) for e in result.write_errors],
    }


def render(result: Any) -> str:
    return for_json(json.dumps(to_dict(result), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
