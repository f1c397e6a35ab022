"""This node's report, exactly as `flexdoctor check --format json` would write it."""

from __future__ import annotations

from typing import Optional


def check_node(python: str, static: bool = False, deep: bool = False, settings=None,
               with_plugins: bool = True) -> dict:
    """Probe this machine and run the checks; the JSON report document (a dict)."""
    from .. import checks, policy, runner
    from ..probes import gather
    from ..render import json_

    settings = settings or policy.Settings()
    specs, problems = checks.all_checks(with_plugins=with_plugins)
    specs = policy.select(specs, settings)
    facts = gather(python, runtime=not static, deep=deep)
    return json_.to_dict(runner.run(specs, facts, plugin_problems=problems, settings=settings))


def settings_for(profile: Optional[str] = None, settings_file=None):
    """The check settings (``[tool.flexdoctor]`` found as `check` finds it) with ``--profile``."""
    from pathlib import Path

    from .. import policy

    if settings_file is not None:
        path = Path(settings_file)
        if not path.is_file():
            raise policy.ConfigError(f"--settings {path}: no such file")
        settings = policy.load(path)
    else:
        found = policy.find_config(Path.cwd())
        settings = policy.load(found) if found else policy.Settings()
    return settings.with_overrides(profile=profile)
