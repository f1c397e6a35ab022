"""Profiles and project configuration: which checks run and how severe their findings are.

A profile answers one question CI asks:

- ``default``: an interactive look at this machine (no GPU and no CUDA toolkit are notes; a
  broken toolkit warns).
- ``gpu``: a GPU runner before training. Everything runs; no GPU, or a GPU torch cannot use,
  is a failure.
- ``image``: building a GPU container image on a machine without a GPU. torch must be a CUDA
  build (a CPU-only wheel fails), Triton installed at torch's pin (read from metadata), compilers,
  headers and the cache ready; checks that need the GPU itself are skipped, not failed. For an
  image meant for CPUs only, use ``default``.
- ``extensions``: building flash-attn or other CUDA extensions. nvcc and CUDA_HOME problems
  become failures.

Project configuration lives in ``[tool.flexdoctor]`` of pyproject.toml or in flexdoctor.toml
(top level), found in the current directory or its parents, or named with ``--settings FILE``.
Settings are trusted like code (they choose what fails): a file counts only if the user or root
owns it and no one else can write it, nor rename or re-point a folder on the way to it
(safety.verdict, the cache's walk); the upward search stops at a folder someone else owns or
can write (safety.folder_verdict), like git's safe.directory. What was not used, and where the
search stopped, is kept on the Settings (``used``) and every report shows it::

    [tool.flexdoctor]
    profile = "gpu"
    select = ["FD1", "torch-version"]      # IDs, ID prefixes or symbols; default: all
    ignore = ["FD401"]
    strict = false
    [tool.flexdoctor.severity]
    nvcc-found = "fail"                     # fail | warn | note | ignore (for findings)
"""

from __future__ import annotations

import dataclasses
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from . import safety
from ._toml import TOMLDecodeError
from ._toml import loads as toml_loads
from .model import Result, SettingsNote, SettingsUsed, Status
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
            "a GPU container image built without a GPU: torch must be a CUDA build and Triton its "
            "pin, compilers and headers ready; checks that need the GPU itself are skipped, not failed",
            skip_areas=("gpu",),
            skip_ids=("FD205", "FD307"),
            # A CPU-only torch (FD204's note without a GPU) in an image built for GPUs is the
            # classic mistake this profile exists to catch. A CPU image: use the default profile.
            severity={"FD204": "fail"},
        ),
        Profile(
            "extensions",
            "building flash-attn or CUDA extensions: nvcc and CUDA_HOME problems fail",
            severity={"FD401": "fail", "FD402": "fail", "FD403": "fail"},
            required=("FD401",),
        ),
    )
}

VALID_SEVERITY = ("fail", "warn", "note", "ignore")
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
    used: SettingsUsed = SettingsUsed()  # that file, how it was chosen, and what was not used

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


@dataclass(frozen=True)
class Search:
    """What the upward search found: the settings file to use (or None), and the notes on files
    not used and on the folder where it stopped."""

    path: Optional[Path] = None
    notes: tuple = ()  # SettingsNote


def _note(kind: str, path: Path, v: "safety.Verdict") -> SettingsNote:
    return SettingsNote(kind, str(path), v.reason, v.path, v.uid, v.mode)


def untrusted(path: Path, uid: Optional[int] = None) -> Optional[SettingsNote]:
    """Why the settings file ``path`` must not be used (a ``not-used`` note), or None when the
    user or root owns it and the folders on the way to it, and no one else can write any of them."""
    v = safety.verdict(str(path), uid)
    return None if v.safe else _note("not-used", path, v)


def read_trusted(path: Path) -> str:
    """The text of a trusted settings file; ConfigError when it is not one. The file is opened
    without blocking (a FIFO cannot stall the run) and must be the regular file the walk judged."""
    note = untrusted(path)
    if note is not None:
        raise ConfigError(t("settings-trust.refused_error", path=path, why=why_text(note)))
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ConfigError(t("settings-trust.not_a_file", path=path))
        return fh.read().decode("utf-8")


def why_text(note: SettingsNote) -> str:
    """Why a settings file or folder was not trusted, in the user's words (render/ and errors)."""
    mode = "" if note.mode is None else oct(note.mode)[2:]
    return t(f"settings-trust.why.{note.reason}", offender=note.offender, owner=note.owner,
             uid=safety.current_uid(), mode=mode)


def _candidate(d: Path, uid: Optional[int] = None) -> Optional[Path]:
    """flexdoctor.toml, else a pyproject.toml that has a [tool.flexdoctor] table, in ``d``."""
    own = d / "flexdoctor.toml"
    if own.is_file():
        return own
    py = d / "pyproject.toml"
    if not py.is_file():
        return None
    if untrusted(py, uid) is not None:  # never parsed: named in a note if it looks like it has the table
        return py if _mentions_flexdoctor_unread(py) else None
    try:
        return py if "flexdoctor" in toml_loads(read_trusted(py)).get("tool", {}) else None
    except (ConfigError, TOMLDecodeError, OSError, UnicodeDecodeError):
        return py  # let load() report the broken file precisely


def _mentions_flexdoctor_unread(py: Path) -> bool:
    """An untrusted pyproject.toml is never parsed; it is named in a note only when a plain
    look at its bytes shows a [tool.flexdoctor] table (regular file, first 1 MiB)."""
    try:
        fd = os.open(py, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    with os.fdopen(fd, "rb") as fh:
        return stat.S_ISREG(os.fstat(fh.fileno()).st_mode) and b"tool.flexdoctor" in fh.read(1 << 20)


# A file in a folder the search stopped at is judged by that folder.
_PARENT = {"foreign-owner": "parent-foreign-owner", "writable-by-others": "parent-writable",
           "cannot-inspect": "cannot-inspect"}


def search(start: Path, uid: Optional[int] = None) -> Search:
    """The settings file for a run started in ``start``: the nearest candidate in it or a parent.
    The search stops at a folder another user owns or anyone else can write (noting it, and a
    candidate file there, which is not read); a nearest candidate that is not trusted is noted
    and not used, and the search ends there too (an outer file is not what the project meant)."""
    for d in [start, *start.parents]:
        v = safety.folder_verdict(str(d), uid)
        if not v.safe:
            notes = [_note("stopped", d, v)]
            for name in ("flexdoctor.toml", "pyproject.toml"):
                if os.path.lexists(d / name) and (name == "flexdoctor.toml" or _mentions_flexdoctor_unread(d / name)):
                    notes.append(_note("not-used", d / name, dataclasses.replace(v, reason=_PARENT[v.reason])))
            return Search(None, tuple(notes))
        cand = _candidate(d, uid)
        if cand is not None:
            note = untrusted(cand, uid)
            return Search(cand) if note is None else Search(None, (note,))
    return Search(None)


def find_config(start: Path) -> Optional[Path]:
    """The trusted settings file :func:`search` finds from ``start``, or None."""
    return search(start).path


def discover(start: Optional[Path] = None) -> "Settings":
    """The settings of a run in ``start`` (default: the current folder), with what was used."""
    try:
        start = start or Path.cwd()
    except OSError:  # the current folder was removed: nothing to search
        return Settings()
    found = search(start)
    if found.path is None:
        return Settings(used=SettingsUsed(None, "none", found.notes))
    s = load(found.path)
    return dataclasses.replace(s, used=SettingsUsed(str(found.path), "search", found.notes))


def _table(path: Path) -> dict:
    try:
        data = toml_loads(read_trusted(path))
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
    s = Settings(source=str(path), used=SettingsUsed(str(path), "--settings"))
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


def near_names(name: str, specs) -> list:
    """Check IDs and symbols spelled like ``name`` (difflib), closest first."""
    import difflib

    known = [x for s in specs for x in (s.id, s.symbol)]
    return difflib.get_close_matches(name.strip(), known, n=3, cutoff=0.6) or \
        difflib.get_close_matches(name.strip().upper(), known, n=3, cutoff=0.6)


def check_flag_names(flag: str, names: Iterable[str], specs) -> None:
    """``--only``/``--skip`` values must name checks: a usage error naming the flag, the unknown
    name and the nearest real ones (never the settings' internal keys)."""
    for n in names:
        if not any(matches(n, s.id, s.symbol) for s in specs):
            near = near_names(n, specs)
            if near:
                raise ConfigError(t("settings-names.flag_near", flag=flag, name=repr(n), near=", ".join(near)))
            raise ConfigError(t("settings-names.flag", flag=flag, name=repr(n)))


def validate_names(settings: Settings, specs) -> None:
    for key, names in (("select", settings.select), ("ignore", settings.ignore),
                       ("severity", tuple(settings.severity))):
        for n in names:
            if not any(matches(n, s.id, s.symbol) for s in specs):
                where = settings.source or t("settings.command_line")
                near = near_names(n, specs)
                if near:
                    raise ConfigError(t("settings-names.setting_near", where=where, key=key, name=repr(n),
                                        near=", ".join(near)))
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

    Severities only re-grade findings (note/warn/fail): a pass stays a pass, a skip a skip (except a
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
    if level is None or result.status not in (Status.NOTE, Status.WARN, Status.FAIL):
        return result
    if level == "ignore":
        return None
    return dataclasses.replace(result, status=Status(level))
