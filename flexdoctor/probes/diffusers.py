"""The project tier: a SimpleTuner config (``check --project``) and diffusers' attention dispatcher
as the target interpreter imports it (subprocess, time-boxed, stdlib-only script).

Nothing here imports diffusers, torch or SimpleTuner into flexdoctor. A broken ``import diffusers``
(an invalid ``DIFFUSERS_ATTN_BACKEND``, a torch that does not import) becomes data.
"""

from __future__ import annotations

import os
from typing import Optional, Union

from ..facts import ProbeError, ProjectFacts, from_jsonable
from ..project import ConfigError, DiffusersFacts, ProjectConfig, load_config
from ..project import tables
from ..worker import run as worker_run
from ..worker import script
from .interp import read_result

SCRIPT = script("_diffusers_probe.py")
ENV_KEYS = ("DIFFUSERS_ATTN_BACKEND", "DIFFUSERS_ATTN_CHECKS")


def effective_mechanism(cfg: ProjectConfig) -> str:
    return cfg.text("attention_mechanism") or tables.DEFAULT_MECHANISM


def configured_backend(cfg: Optional[ProjectConfig]) -> Optional[str]:
    """The AttentionBackendName value the config selects through the dispatcher, if any."""
    if cfg is None:
        return None
    return tables.DISPATCHER_BACKENDS.get(effective_mechanism(cfg))


def probe(python: str, config: Union[ProjectConfig, str, None] = None, runtime: bool = True,
          timeout: float = 90.0) -> Optional[ProjectFacts]:
    """None when there is nothing to look at (no --project, no DIFFUSERS_ATTN_* variable).
    ``config``: the config the CLI already parsed, or a path to parse here."""
    cfg = config if isinstance(config, ProjectConfig) else None
    if isinstance(config, str):
        try:
            cfg = load_config(config)
        except ConfigError as exc:
            return ProjectFacts(config=ProbeError.because(exc.reason, kind="error", stage="config", **exc.params))
    env = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    if cfg is not None:
        env.update({k: v for k, v in cfg.env.items() if k in ENV_KEYS})
    if cfg is None and not env:
        return None
    if not runtime:
        return ProjectFacts(config=cfg, diffusers=ProbeError.because("runtime_skipped", kind="skipped"))
    backend = configured_backend(cfg)
    if backend is None and (cfg is None or effective_mechanism(cfg) == tables.DEFAULT_MECHANISM):
        backend = env.get("DIFFUSERS_ATTN_BACKEND") or None  # the default backend diffusers will use
    return ProjectFacts(config=cfg, diffusers=run_script(python, backend, env, timeout))


def run_script(python: str, backend: Optional[str], env_vars: dict, timeout: float) -> DiffusersFacts | ProbeError:
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    env.update(env_vars)
    # Belt and braces: the script enables nothing, but nothing it imports may reach the Hub.
    env.update({"HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1", "DIFFUSERS_VERBOSITY": "error"})
    done = worker_run.run([python, str(SCRIPT), backend or ""], timeout=timeout, env=env)
    data = read_result(done, f"{python} {SCRIPT.name}")
    if isinstance(data, ProbeError):
        return data
    return from_jsonable(DiffusersFacts, data)
