"""`flexdoctor facts`: the gathered facts as text or JSON, home directory shown as ~."""

from __future__ import annotations

import json
import os
from typing import Any

from ..facts import Facts, ProbeError
from ..text import t
from ._escape import for_json, for_terminal, no_commands


def _home_to_tilde(value: Any, home: str) -> Any:
    if isinstance(value, str) and home and home != "/":
        return value.replace(home, "~")
    if isinstance(value, list):
        return [_home_to_tilde(v, home) for v in value]
    if isinstance(value, dict):
        return {k: _home_to_tilde(v, home) for k, v in value.items()}
    return value


def redacted(facts: Facts) -> dict:
    return _home_to_tilde(facts.to_dict(), os.path.expanduser("~").rstrip("/"))


def _lines(value: Any, indent: int) -> list[str]:
    pad = "  " * indent
    out: list[str] = []
    if isinstance(value, dict):
        if set(value) == {"probe_error"}:
            err = value["probe_error"]
            said = _probe_error_text(err)
            kind = err.get("kind", "error")
            if err.get("stage"):
                out.append(pad + for_terminal(t("facts-view.unknown_during", kind=kind, stage=err["stage"], message=said)))
            else:
                out.append(pad + for_terminal(t("facts-view.unknown", kind=kind, message=said)))
            if err.get("detail"):
                out += [f"{pad}  | {for_terminal(line)}" for line in str(err["detail"]).splitlines()[-8:]]
            return out
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{for_terminal(k)}:")
                out += _lines(v, indent + 1)
            elif k == "mode" and isinstance(v, int) and not isinstance(v, bool):
                out.append(f"{pad}{k}: {_mode(v)}")
            elif isinstance(v, str) and "\n" in v.strip():  # nvcc's output: indented under its key
                out.append(f"{pad}{k}:")
                out += [f"{pad}  | {line}" for line in v.strip().splitlines()]
            else:
                out.append(f"{pad}{for_terminal(k)}: {_scalar(v)}")
        return out
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and item:
                sub = _lines(item, indent + 1)
                out.append(f"{pad}- " + sub[0].strip())
                out += sub[1:]
            else:
                out.append(f"{pad}- {_scalar(item)}")
        return out
    return [f"{pad}{_scalar(value)}"]


def _mode(bits: int) -> str:
    """Permission bits as people read them: 0o1777 (rwxrwxrwt), never the decimal 1023."""
    import stat

    return f"{bits:#o} ({stat.filemode(bits)[1:]})"


def _once(data: dict) -> dict:
    """The nvcc that CUDA_HOME holds is usually the one on PATH: print its output once."""
    tc = data.get("toolchain")
    home = tc.get("cuda_home") if isinstance(tc, dict) else None
    if isinstance(home, dict) and isinstance(home.get("nvcc"), dict) and home["nvcc"] == tc.get("nvcc"):
        home = {**home, "nvcc": t("facts-view.same_nvcc", path=home["nvcc"].get("path", "?"))}
        data = {**data, "toolchain": {**tc, "cuda_home": home}}
    return data


def _probe_error_text(err: dict) -> str:
    from ..checks._util import probe_error_text

    try:
        return probe_error_text(ProbeError(**err))
    except TypeError:  # a field this version does not know
        return str(err.get("message", ""))


def _scalar(v: Any) -> str:
    if v is None:
        return "—"
    if v is True:
        return t("facts-view.yes")
    if v is False:
        return t("facts-view.no")
    if v == [] or v == {}:
        return t("facts-view.none")
    return for_terminal(v)


def render(facts: Facts, fmt: str = "text", redact: bool = True) -> str:
    data = redacted(facts) if redact else facts.to_dict()
    if fmt == "json":
        return for_json(json.dumps(data, indent=2, sort_keys=True) + "\n")
    data = _once(data)
    order = ["host", "gpu", "python", "torch", "torch_runtime", "toolchain", "timings"]
    out = [t("facts-view.header", version=facts.flexdoctor_version, collected=facts.collected_at), ""]
    for key in order + [k for k in data if k not in order]:
        if key in ("schema_version", "flexdoctor_version", "collected_at"):
            continue
        out.append(f"{for_terminal(key)}:")
        value = data.get(key)
        out += _lines(value, 1) if isinstance(value, (dict, list)) else [f"  {_scalar(value)}"]
        out.append("")
    return no_commands("\n".join(out))
