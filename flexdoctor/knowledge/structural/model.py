"""What the structural layer answers: one ``Answer`` per error it read, and the ``kind`` vocabulary.

The kind vocabulary is the contract shared with the corpus (tests/data/corpus/*/*.toml ``[expect]``)
and the JSON output; ``flexdoctor.knowledge.score`` documents how subjects are compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...model import Fix

# kind -> (stable ID, what ``subject`` names). IDs are forever, like FD### and FDE###.
KINDS = {
    "entry": ("FDE", "a fingerprint entry of the knowledge base: its ID, e.g. FDE221"),
    "shared-library": ("FDS101", "the library file that failed to load, e.g. libcudnn.so.9, cudnn64_9.dll"),
    "undefined-symbol": ("FDS102", "the symbol's class: torch, cuda, libstdc++, glibc, python, mkl, other"),
    "missing-module": ("FDS103", "the module imported, e.g. flash_attn"),
    "import-name": ("FDS104", "module.name that could not be imported from an installed module"),
    "version-constraint": ("FDS105", "the package whose version does not fit, e.g. torch"),
    "pip-no-distribution": ("FDS106", "the requirement pip could not satisfy, e.g. flash-attn"),
    "cuda-error": ("FDS107", "the cudaError_t name, e.g. cudaErrorIllegalAddress"),
    "nccl-error": ("FDS108", "the ncclResult_t name, e.g. ncclSystemError"),
    "windows-error": ("FDS109", "the Windows error number or NTSTATUS, e.g. 126, 0xC0000005"),
    "triton-resources": ("FDS110", "the resource Triton ran out of, e.g. shared memory"),
    "out-of-memory": ("FDS111", "the device that ran out of memory: cuda, mps, xpu, cpu"),
    "unsupported-op": ("FDS112", "the backend that lacks the operation: mps, rocm, cpu"),
    "shared-memory": ("FDS113", "the shared memory that ran out: /dev/shm"),
    "launcher": ("FDS114", "what the distributed launch failed at: address in use, connect"),
    "slurm": ("FDS115", "what Slurm refused or stopped: gres, nodeconf, account, partition, time, memory, oom"),
    "unknown": ("FDS199", "the exception type of the root error, e.g. KeyError"),
}

CONFIDENCE = ("high", "medium", "low")


@dataclass(frozen=True)
class Answer:
    """One error read by its shape: what failed (``kind``, ``subject``), how sure the reading is,
    and the fix filled from the tables and from what the log says (versions, platform, installer)."""

    kind: str
    subject: str
    confidence: str  # high: a table row named it; medium: the shape is clear, the fix generic; low: unknown
    title: str
    cause: str
    fix: Fix
    line: int
    text: str
    rank: int = 40
    package: Optional[str] = None  # the installed package the failing code lives in (traceback frames)
    facts: dict = field(default_factory=dict)  # what was read from the log: versions, platform, installer

    @property
    def id(self) -> str:
        return KINDS[self.kind][0]
