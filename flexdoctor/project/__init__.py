"""Training projects flexdoctor understands (SimpleTuner configs) and what they ask of diffusers.

Pure and stdlib-only: reading a config never imports SimpleTuner, diffusers or torch.
"""

from __future__ import annotations

from .model import DiffusersFacts, ProjectConfig
from .simpletuner import ConfigError, find_config, load_config

__all__ = ["ConfigError", "DiffusersFacts", "ProjectConfig", "find_config", "load_config"]
