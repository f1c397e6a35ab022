"""Plain data for the project section of Facts: a parsed training config and what the installed
diffusers says. Frozen dataclasses, JSON round-trip through ``flexdoctor.facts``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class ProjectConfig:
    """A SimpleTuner config as SimpleTuner would read it (keys without the leading ``--``)."""

    path: str  # the main config file (config.json, config.toml or config.env)
    format: str  # json | toml | env
    tool: str = "simpletuner"
    # Option name -> value (str, bool, int, float or list), last assignment wins as in argparse.
    options: dict = field(default_factory=dict)
    # Option name -> where it was set: "config.json", "TRAINER_EXTRA_ARGS", "MODEL_FAMILY", ...
    sources: dict = field(default_factory=dict)
    # Environment variables the config's config.env file(s) export to the training process.
    env: dict = field(default_factory=dict)
    env_files: list = field(default_factory=list)
    # How the training process gets launched (train.sh / `simpletuner train`), which decides
    # torch.compile when the config's own dynamo_backend is "no": see simpletuner.launch_facts.
    launch: dict = field(default_factory=dict)

    def get(self, key: str, default=None):
        return self.options.get(key, default)

    def text(self, key: str) -> Optional[str]:
        value = self.options.get(key)
        if value is None or isinstance(value, (list, dict)):
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value).strip()

    def flag(self, key: str) -> bool:
        value = self.options.get(key)
        if isinstance(value, bool):
            return value
        if value is None:
            return False
        return str(value).strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class DiffusersFacts:
    """diffusers in the target interpreter: metadata, then (runtime tier) imported in a subprocess."""

    version: Optional[str] = None  # None: not installed
    location: Optional[str] = None
    imported: Optional[bool] = None  # None: import not attempted (static tier, nothing to ask)
    # `import diffusers.models.attention_dispatch` with the user's environment, as the error line.
    import_error: Optional[str] = None
    import_stage: Optional[str] = None  # "import diffusers" | "import attention_dispatch"
    has_dispatcher: Optional[bool] = None  # models/attention_dispatch.py exists (>= 0.35)
    backends: Optional[list] = None  # AttentionBackendName values, read at run time
    checks_enabled: Optional[bool] = None  # _AttentionBackendRegistry._checks_enabled
    default_backend: Optional[str] = None  # the active backend after import (DIFFUSERS_ATTN_BACKEND)
    # _check_attention_backend_requirements(backend) for the configured backend only.
    requirement_backend: Optional[str] = None
    requirement_checked: bool = False
    requirement_error: Optional[str] = None  # None with requirement_checked: it passed
    env: dict = field(default_factory=dict)  # DIFFUSERS_ATTN_* the probe ran with
    seconds: Optional[float] = None
