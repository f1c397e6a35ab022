"""Profiles and project configuration: which checks run and how severe their findings are.

A profile answers one question CI asks:

- ``default``: an interactive look at this machine (no GPU is a warning, toolkit issues warn).
- ``gpu``: a GPU runner before training. Everything runs; no GPU, or a GPU torch cannot use,
  is a failure.
- ``image``: building a container image on a machine without a GPU. torch, Triton, compilers,
  headers and the cache must be ready; checks that need a GPU are skipped, not failed.
- ``extensions``: building flash-attn or other CUDA extensions. nvcc and CUDA_HOME problems
  become failures.

Project configuration lives in ``[tool.flexdoctor]`` of pyproject.toml or in flexdoctor.toml
(top level), found in the current directory or its parents::

    [tool.flexdoctor]
    profile = "gpu"
    select = ["FD1", "torch-version"]      # IDs, ID prefixes or symbols; default: all
    ignore = ["FD401"]
    strict = false
    [tool.flexdoctor.severity]
    nvcc-found = "fail"                     # fail | warn | ignore (for non-passing results)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from ._toml import TOMLDecodeError
from ._toml import loads as toml_loads
from .model import Result, Status
from .text import t


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    skip_areas: tuple[str, ...] = ()
    skip_ids: tuple[str, ...] = ()
    severity: dict = field(default_factory=dict)  # ID -> "fail" | "warn" | "ignore"
    # Checks this profile cannot do without: a skip of one (the facts it needs say the job
    # cannot work, e.g. FD401 on a torch without CUDA) is a failure here.
    required: tuple[str, ...] = ()


PROFILES = {
    p.name: p
    for p in (
        Profile("default", "an interactive look at this machine"),
        Profile(
            "gpu",
            "a GPU runner before training: everything runs, a missing or unusable GPU fails",
            severity={"FD101": "fail"},
        ),
        Profile(
            "image",
            "a container image build without a GPU: torch, Triton, compilers and headers must be "
            "ready; GPU checks are skipped, not failed",
            skip_areas=("gpu",),
            skip_ids=("FD204", "FD205", "FD307"),
        ),
        Profile(
            "extensions",
            "building flash-attn or CUDA extensions: nvcc and CUDA_HOME problems fail",
            severity={"FD401": "fail", "FD402": "fail", "FD403": "fail"},
            required=("FD401",),
        ),
    )
}

VALID_SEVERITY = ("fail", "warn", "ignore")
CONFIG_KEYS = ("profile", "select", "ignore", "strict", "severity")
# Tables other features own: [tool.flexdoctor.warm] is warm-cache's, [tool.flexdoctor.fleet] fleet's.
OTHER_TABLES = ("warm", "fleet")


class ConfigError(ValueError):
    """A bad configuration file or value: the message names the file and the key."""


@dataclass(frozen=True)
class Settings:
    profile: Profile = PROFILES["default"]
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    strict: bool = False
    severity: dict = field(default_factory=dict)
    source: Optional[str] = None  # the file the settings came from

    def with_overrides(self, profile: Optional[str] = None, strict: Optional[bool] = None,
                       select: Iterable[str] = (), ignore: Iterable[str] = ()) -> "Settings":
        out = self
        if profile is not None:
            out = dataclasses.replace(out, profile=get_profile(profile, "--profile"))
        if strict:
            out = dataclasses.replace(out, strict=True)
        if select:
            out = dataclasses.replace(out, select=tuple(select))
        if ignore:
            out = dataclasses.replace(out, ignore=out.ignore + tuple(ignore))
        return out


def get_profile(name: str, where: str) -> Profile:
    if name not in PROFILES:
        raise ConfigError(t("settings.unknown_profile", where=where, name=repr(name), choices=", ".join(PROFILES)))
    return PROFILES[name]


def find_config(start: Path) -> Optional[Path]:
    """flexdoctor.toml, or a pyproject.toml with [tool.flexdoctor], in ``start`` or a parent."""
    for d in [start, *start.parents]:
        own = d / "flexdoctor.toml"
        if own.is_file():
            return own
        py = d / "pyproject.toml"
        if py.is_file():
            try:
                if "flexdoctor" in toml_loads(py.read_text(encoding="utf-8")).get("tool", {}):
                    return py
            except (TOMLDecodeError, OSError, UnicodeDecodeError):
                return py  # let load() report the broken file precisely
    return None


def _table(path: Path) -> dict:
    try:
        data = toml_loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(t("settings.unreadable", where=path, error=exc.strerror or exc))
    except UnicodeDecodeError:
        raise ConfigError(t("settings.not_utf8", where=path))
    except TOMLDecodeError as exc:
        raise ConfigError(t("settings.bad_toml", where=path, error=exc))
    # pyproject.toml keeps settings under [tool.flexdoctor]; any other file may use that table
    # too (copied from a pyproject) or put the keys at the top level.
    tool = data.get("tool")
    if isinstance(tool, dict) and "flexdoctor" in tool:
        return tool["flexdoctor"]
    if path.name == "pyproject.toml":
        return {}
    return data


def _names(value: object, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(t("settings.not_names", where=where, key=key))
    return tuple(v.strip() for v in value)


def load(path: Path) -> Settings:
    table = _table(path)
    prefix = "[tool.flexdoctor]" if path.name == "pyproject.toml" else ""
    where = f"{path} {prefix}".strip()
    unknown = [k for k in table if k not in CONFIG_KEYS and k not in OTHER_TABLES]
    if unknown:
        raise ConfigError(t("settings.unknown_key", where=where, key=unknown[0],
                            known=", ".join(CONFIG_KEYS + OTHER_TABLES)))
    s = Settings(source=str(path))
    if "profile" in table:
        if not isinstance(table["profile"], str):
            raise ConfigError(t("settings.profile_not_string", where=where))
        s = dataclasses.replace(s, profile=get_profile(table["profile"], f"{where} 'profile'"))
    if "select" in table:
        s = dataclasses.replace(s, select=_names(table["select"], "select", where))
    if "ignore" in table:
        s = dataclasses.replace(s, ignore=_names(table["ignore"], "ignore", where))
    if "strict" in table:
        if not isinstance(table["strict"], bool):
            raise ConfigError(t("settings.strict_not_bool", where=where))
        s = dataclasses.replace(s, strict=table["strict"])
    if "severity" in table:
        sev = table["severity"]
        if not isinstance(sev, dict):
            raise ConfigError(t("settings.severity_not_table", where=where))
        for k, v in sev.items():
            if v not in VALID_SEVERITY:
                raise ConfigError(t("settings.bad_severity", where=where, key=k, value=repr(v),
                                    choices=", ".join(VALID_SEVERITY)))
        s = dataclasses.replace(s, severity=dict(sev))
    return s


def matches(name: str, check_id: str, symbol: str) -> bool:
    """An ID (FD401), an ID prefix (FD4, FD40) or a symbol (nvcc-found)."""
    n = name.strip().lower()
    return n == symbol or (n.startswith("fd") and check_id.lower().startswith(n))


def validate_names(settings: Settings, specs) -> None:
    for key, names in (("select", settings.select), ("ignore", settings.ignore),
                       ("severity", tuple(settings.severity))):
        for n in names:
            if not any(matches(n, s.id, s.symbol) for s in specs):
                where = settings.source or t("settings.command_line")
                raise ConfigError(t("settings.unknown_check", where=where, key=key, name=repr(n)))


def select(specs: list, settings: Settings) -> list:
    """The checks to run: ``select`` (default all) minus ``ignore``."""
    return [
        s for s in specs
        if (not settings.select or any(matches(n, s.id, s.symbol) for n in settings.select))
        and not any(matches(n, s.id, s.symbol) for n in settings.ignore)
    ]


def skipped_by_profile(spec, settings: Settings) -> bool:
    p = settings.profile
    return spec.area in p.skip_areas or spec.id in p.skip_ids


def apply(result: Result, settings: Settings) -> Optional[Result]:
    """The result after the profile's and the configuration's severities; None when ignored.

    Severities only re-grade findings (warn/fail): a pass stays a pass, a skip a skip (except a
    skip of a check the profile requires, which fails), and a crashed check stays an error.
    """
    if result.status == Status.SKIP and result.id in settings.profile.required:
        return dataclasses.replace(result, status=Status.FAIL,
                                   message=t("profile.required", message=result.message,
                                             profile=settings.profile.name))
    level = settings.profile.severity.get(result.id)
    for key, value in settings.severity.items():
        if matches(key, result.id, result.symbol):
            level = value
    if level is None or result.status not in (Status.WARN, Status.FAIL):
        return result
    if level == "ignore":
        return None
    return dataclasses.replace(result, status=Status(level))
