"""``[tool.flexdoctor.fleet]`` (pyproject.toml) or ``[fleet]`` (flexdoctor.toml): what counts as drift.

    [tool.flexdoctor.fleet]
    ignore = ["python.patch", "driver.patch"]   # fields (or version precision) not compared

The table is found like the check settings (this directory or a parent); ``--settings FILE``
names one. Command-line ``--ignore`` adds to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from .. import policy
from ..text import t
from .merge import IgnoreError, parse_ignore

KEYS = ("ignore",)


def load(path: Optional[Path] = None, cwd: Optional[Path] = None) -> tuple:
    """``(ignore list, source file or None)``. Raises policy.ConfigError on a bad file or value."""
    if path is not None:
        if not path.is_file():
            raise policy.ConfigError(t("cli.no_such_file", what=f"--settings {path}"))
        found: Optional[Path] = path
    else:
        found = policy.find_config(cwd or Path.cwd())
    if found is None:
        return [], None
    table = policy._table(found).get("fleet")
    where = f"{found} [tool.flexdoctor.fleet]" if found.name == "pyproject.toml" else f"{found} [fleet]"
    if table is None:
        return [], None
    if not isinstance(table, dict):
        raise policy.ConfigError(t("fleet.settings.not_table", where=where))
    unknown = [k for k in table if k not in KEYS]
    if unknown:
        raise policy.ConfigError(t("settings.unknown_key", where=where, key=unknown[0], known=", ".join(KEYS)))
    ignore = table.get("ignore", [])
    if isinstance(ignore, str):
        ignore = [ignore]
    if not isinstance(ignore, list) or not all(isinstance(v, str) for v in ignore):
        raise policy.ConfigError(t("fleet.settings.ignore_not_list", where=where))
    try:
        parse_ignore(ignore)
    except IgnoreError as exc:
        raise policy.ConfigError(t("cli.file_error", what=f"{where}: ignore", error=exc))
    return list(ignore), str(found)
