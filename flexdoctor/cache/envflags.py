"""The environment switches that turn compile caching off, parsed exactly as each torch and Triton
release parses them (pure: no torch or Triton import).

Read in the released wheels (torch 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.11.0, 2.12.1, 2.13.0,
2.14.1; pytorch main has the same rules as 2.14) and triton 3.1.0 ... 3.8.0:

=====================================  ==============  =================================================
variable                               release         parser (file)
=====================================  ==============  =================================================
TORCHINDUCTOR_FORCE_DISABLE_CACHES     torch <= 2.7    ``os.environ.get(NAME) == "1"``
                                                       (torch/_inductor/config.py)
                                       torch 2.8       ``Config(env_name_force=NAME)``
                                                       (torch/_inductor/config.py)
                                       torch >= 2.9    ``Config(env_name_force=[NAME,
                                                       "TORCH_COMPILE_FORCE_DISABLE_CACHES"])``
                                                       (torch/compiler/config.py)
TORCH_COMPILE_FORCE_DISABLE_CACHES     torch <= 2.8    not read
                                       torch >= 2.9    second in the list above: read only when
                                                       TORCHINDUCTOR_FORCE_DISABLE_CACHES is unset
TORCHINDUCTOR_FX_GRAPH_CACHE           torch <= 2.6    ``os.environ.get(NAME, "1") == "1"``
                                                       (torch/_inductor/config.py, outside fbcode)
                                       torch >= 2.7    ``Config(env_name_force=NAME, default=True)``
TORCHINDUCTOR_FX_GRAPH_CACHE_DEFAULT   torch >= 2.10   ``Config(env_name_default=NAME)`` of the same
                                                       option: used only while the _FX_GRAPH_CACHE
                                                       force variable is unset
TORCHINDUCTOR_AUTOGRAD_CACHE           torch 2.6       ``os.environ.get(NAME, "0") == "1"``: the AOT
                                                       autograd cache is OFF unless set to "1"
                                                       (torch/_functorch/config.py)
                                       torch >= 2.7    ``Config(env_name_force=NAME, default=True)``
TRITON_ALWAYS_COMPILE                  triton <= 3.3   ``os.environ.get(NAME, "0") == "1"``
                                                       (triton/compiler/compiler.py)
                                       triton 3.4      ``knobs.env_bool``: ``value.lower() in
                                                       ("1", "true", "yes", "on", "y")``
                                       triton >= 3.5   ``knobs.env_bool`` -> libtriton
                                                       ``getenv_bool``: same set, case-insensitive
                                                       (measured by calling the real binding)
=====================================  ==============  =================================================

``Config(env_name_force=...)`` reads the variable with torch/utils/_config_module.py
``_read_env_variable``: ``"1"`` -> True, ``"0"`` -> False, any other value -> the raw string, which
the option then holds; the callers test it for truth (``if config.force_disable_caches:``,
``local = config.fx_graph_cache``). So from those releases ``=false`` or ``=no`` FORCES the caches
off, ``=""`` leaves them on, and ``TORCHINDUCTOR_FX_GRAPH_CACHE=false`` keeps the FX graph cache
ON: only ``0`` (or an empty value) turns it off. torch 2.5 reads ``ENABLE_AOT_AUTOGRAD_CACHE``
(default off), not TORCHINDUCTOR_AUTOGRAD_CACHE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from packaging.version import InvalidVersion, Version

FORCE = "TORCHINDUCTOR_FORCE_DISABLE_CACHES"
FORCE2 = "TORCH_COMPILE_FORCE_DISABLE_CACHES"
FX = "TORCHINDUCTOR_FX_GRAPH_CACHE"
FX_DEFAULT = "TORCHINDUCTOR_FX_GRAPH_CACHE_DEFAULT"
AUTOGRAD = "TORCHINDUCTOR_AUTOGRAD_CACHE"
TRITON = "TRITON_ALWAYS_COMPILE"
NAMES = (FORCE, FORCE2, FX, FX_DEFAULT, AUTOGRAD, TRITON)

# Words people use for "off"/"on": a value that reads as one but is parsed as the other is worth saying.
_FALSY_WORDS = {"0", "false", "no", "off", "n", ""}
_TRITON_TRUE = {"1", "true", "yes", "on", "y"}


@dataclass(frozen=True)
class Switch:
    name: str
    value: str
    off: bool  # this release turns a cache off (or Triton's cache lookup off) because of it
    what: str  # all | fxgraph | autograd | triton
    rule: str  # how this release parses it: a cache-enabled.rule_* catalogue key
    read: bool = True  # False: this release does not read the variable at all
    default_off: bool = False  # the cache is off in this release whatever the variable says
    release: str = ""  # "torch 2.11.0" / "triton 3.6.0": the parser applied; "": the newest rules

    @property
    def package(self) -> str:
        """Whose parser reads the variable: ``triton`` or ``torch``."""
        return "triton" if self.what == "triton" else "torch"

    @property
    def surprising(self) -> bool:
        """The value reads as the opposite of what the release does with it."""
        if not self.read or self.default_off:
            return False
        low = self.value.strip().lower()
        if self.what in ("all", "triton"):  # a switch that turns caching OFF when true
            return self.off == (low in _FALSY_WORDS)
        return self.off != (low in _FALSY_WORDS)  # a switch that keeps a cache ON when true


def _v(text: object) -> Optional[Version]:
    if isinstance(text, Version):
        return Version(text.base_version)
    if not text:
        return None
    try:
        return Version(Version(str(text)).base_version)
    except InvalidVersion:
        return None


def _config_truthy(value: str) -> bool:
    """The truth of what torch's Config(env_name_*) holds for ``value`` (_read_env_variable)."""
    if value == "1":
        return True
    if value == "0":
        return False
    return bool(value)


def switches(env: Mapping[str, str], torch_version: object = None,
             triton_version: object = None) -> list[Switch]:
    """Every cache switch set in ``env``, judged for these releases (None: the newest rules)."""
    tv = _v(torch_version)
    trv = _v(triton_version)
    torch_rel = f"torch {tv}" if tv else ""  # "": unknown release, judged by the newest rules
    triton_rel = f"triton {trv}" if trv else ""
    tv = tv or Version("99")
    trv = trv or Version("99")
    out: list[Switch] = []

    def add(name: str, off: bool, what: str, rule: str, **kw) -> None:
        rel = triton_rel if what == "triton" else torch_rel
        out.append(Switch(name, env[name], off, what, rule, release=rel, **kw))

    # -- force-disable: one option, up to two variables
    if tv >= Version("2.9"):
        first = next((n for n in (FORCE, FORCE2) if env.get(n) is not None), None)
        for n in (FORCE, FORCE2):
            if env.get(n) is None:
                continue
            if n != first:
                add(n, False, "all", "rule_shadowed", read=False)
            else:
                add(n, _config_truthy(env[n]), "all", "rule_force_truthy")
    else:
        if env.get(FORCE) is not None:
            if tv >= Version("2.8"):
                add(FORCE, _config_truthy(env[FORCE]), "all", "rule_force_truthy")
            else:
                add(FORCE, env[FORCE] == "1", "all", "rule_force_eq1")
        if env.get(FORCE2) is not None:
            add(FORCE2, False, "all", "rule_not_read", read=False)

    # -- FX graph cache
    if env.get(FX) is not None:
        if tv >= Version("2.7"):
            add(FX, not _config_truthy(env[FX]), "fxgraph", "rule_fx_truthy")
        else:
            add(FX, env[FX] != "1", "fxgraph", "rule_fx_eq1")
    if env.get(FX_DEFAULT) is not None:
        if tv < Version("2.10"):
            add(FX_DEFAULT, False, "fxgraph", "rule_not_read", read=False)
        elif env.get(FX) is not None:
            add(FX_DEFAULT, False, "fxgraph", "rule_fx_default_shadowed", read=False)
        else:
            add(FX_DEFAULT, not _config_truthy(env[FX_DEFAULT]), "fxgraph", "rule_fx_truthy")

    # -- AOT autograd cache
    if env.get(AUTOGRAD) is not None:
        if tv >= Version("2.7"):
            add(AUTOGRAD, not _config_truthy(env[AUTOGRAD]), "autograd", "rule_autograd_truthy")
        elif tv >= Version("2.6"):
            # Off by default in 2.6: the variable can only turn it on, so it is never the cause.
            add(AUTOGRAD, False, "autograd", "rule_autograd_26", default_off=True)
        else:
            add(AUTOGRAD, False, "autograd", "rule_autograd_25", read=False)

    # -- Triton
    if env.get(TRITON) is not None:
        if trv >= Version("3.4"):
            add(TRITON, env[TRITON].lower() in _TRITON_TRUE, "triton", "rule_triton_words")
        else:
            add(TRITON, env[TRITON] == "1", "triton", "rule_triton_eq1")
    return out


def disabled_by(env: Mapping[str, str], torch_version: object = None, triton_version: object = None) -> list[str]:
    """``NAME=value`` for each switch that turns compile caching off for these releases."""
    return [f"{s.name}={s.value}" for s in switches(env, torch_version, triton_version) if s.off]
