"""The structural layer's data tables (``structural/*.toml``), read once. Data, not words."""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Optional

from ..._toml import loads as toml_loads


@functools.lru_cache(maxsize=None)
def _load(name: str) -> dict:
    return toml_loads(resources.files(__name__.rsplit(".", 1)[0]).joinpath(name).read_text(encoding="utf-8"))


def libraries() -> list[dict]:
    return _load("libraries.toml")["library"]


def modules() -> list[dict]:
    return _load("modules.toml")["module"]


def cuda_errors() -> list[dict]:
    return _load("cuda_errors.toml")["error"]


def cuda_asserts() -> list[dict]:
    return _load("cuda_errors.toml")["assert"]


def nccl_errors() -> list[dict]:
    return _load("nccl.toml")["error"]


def windows_errors() -> list[dict]:
    return _load("winerror.toml")["error"]


def windows_statuses() -> list[dict]:
    return _load("winerror.toml")["status"]


_SEP = re.compile(r"[_\-.0-9]")


def library_row(stem: str) -> Optional[dict]:
    """The row whose name is the longest one ``stem`` starts with, followed by nothing or by a
    separator or digit (``cudnn_ops_infer`` -> cudnn, ``cudart64`` -> cudart, ``c10_cuda`` -> c10_cuda)."""
    low = stem.lower()
    best, best_len = None, -1
    for row in libraries():
        for name in row["names"]:
            if low.startswith(name) and (len(low) == len(name) or _SEP.match(low[len(name)])) and len(name) > best_len:
                best, best_len = row, len(name)
    return best


def module_row(module: str) -> Optional[dict]:
    """The row for ``module`` (``flash_attn.cute.interface`` -> flash_attn.cute, else flash_attn)."""
    rows = {r["module"]: r for r in modules()}
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        row = rows.get(".".join(parts[:n]))
        if row is not None:
            return row
    return None


@functools.lru_cache(maxsize=None)
def cuda_by_text() -> dict:
    return {r["text"].rstrip(".").lower(): r for r in cuda_errors()}


@functools.lru_cache(maxsize=None)
def cuda_by_name() -> dict:
    return {r["name"].lower(): r for r in cuda_errors()}


@functools.lru_cache(maxsize=None)
def cuda_by_code() -> dict:
    return {int(r["code"]): r for r in cuda_errors()}


def cuda_driver_name(name: str) -> str:
    """CUDA_ERROR_ILLEGAL_ADDRESS -> cudaErrorIllegalAddress (the runtime name of the same code)."""
    body = name[len("CUDA_ERROR_"):] if name.upper().startswith("CUDA_ERROR_") else name
    camel = "".join(w.capitalize() for w in body.lower().split("_"))
    aliases = {"LaunchFailed": "LaunchFailure", "NotFound": "SymbolNotFound", "InvalidImage": "InvalidKernelImage",
               "NoBinaryForGpu": "NoKernelImageForDevice", "OutOfMemory": "MemoryAllocation",
               "NotInitialized": "InitializationError", "InvalidHandle": "InvalidResourceHandle",
               "LaunchTimeout": "LaunchTimeout", "Deinitialized": "CudartUnloading", "Assert": "Assert"}
    return "cudaError" + aliases.get(camel, camel)
