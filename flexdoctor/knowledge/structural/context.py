"""What a log says about the machine it came from, and where its failure is: read from the
collector after the scan. Every value is None when the log does not say it (never a guess)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .collect import Collector, package_of

# Exceptions that only report another one: the root error is the exception under them.
WRAPPERS = {"ChildFailedError", "CalledProcessError", "SystemExit", "KeyboardInterrupt", "ProcessExitedException",
            "ProcessRaisedException", "BrokenProcessPool", "DistBackendError"}


@dataclass(frozen=True)
class LogFacts:
    torch: Optional[str] = None  # "2.5.1+cu124"
    cuda_major: Optional[int] = None  # of the torch build (its +cuXYZ tag or "CUDA used to build PyTorch")
    cuda: Optional[str] = None  # "12.4"
    python: Optional[str] = None  # "3.11"
    platform: Optional[str] = None  # linux | windows | macos | wsl2
    rocm: bool = False
    conda: bool = False
    region: int = 0  # the failure region starts after this line (the last sign of progress)
    root: Optional[tuple] = None  # (line, exception type, message, text) of the root error
    package: Optional[str] = None  # the package the root error came from (its last traceback frame)
    paths: tuple = ()  # the traceback frames' file paths from the failure region to the root error
    jetson: tuple = ()  # tune-e5: what the log says of a Jetson (the e5-jetson shapes' groups), () when none

    @property
    def torch_release(self) -> Optional[str]:
        return self.torch.split("+")[0] if self.torch else None

    @property
    def cuda_tag(self) -> Optional[str]:
        m = re.search(r"\+(cu\d+)", self.torch or "")
        return m.group(1) if m else None

    def to_dict(self) -> dict:
        out = {"torch": self.torch, "cuda": self.cuda, "python": self.python, "platform": self.platform,
               "conda": self.conda or None}
        return {k: v for k, v in out.items() if v}


def _cuda(c: Collector, torch: Optional[str]) -> tuple[Optional[int], Optional[str]]:
    v = c.versions
    tag = re.search(r"\+cu(\d+)(\d)$", torch or "") or re.fullmatch(r"cu(\d+)(\d)", v.get("cutag", ""))
    if tag:
        return int(tag.group(1)), f"{tag.group(1)}.{tag.group(2)}"
    if v.get("cuda"):
        return int(v["cuda"].split(".")[0]), v["cuda"]
    if v.get("cudir"):
        return int(v["cudir"]), None
    return None, None


def _platform(c: Collector) -> Optional[str]:
    p = c.platforms
    if p["wsl"]:
        return "wsl2"
    for name in ("windows", "macos", "linux"):
        if p[name]:
            return name
    return None


def _root(c: Collector, region: int) -> Optional[tuple]:
    """The last exception line after ``region`` that is not a wrapper; else the first error: line."""
    found = [e for e in c.exceptions if e[0] >= region]
    real = [e for e in found if e[1].split(".")[-1] not in WRAPPERS]
    if real or found:
        return (real or found)[-1]
    errors = [e for e in c.errors if e[0] >= region]
    if errors:
        line, text = errors[0]
        return (line, "error", text, text)
    return None


def _package(c: Collector, root: Optional[tuple], region: int) -> Optional[str]:
    if root is None:
        return None
    frames = [(line, path) for line, path in c.frames if region <= line <= root[0]]
    for _line, path in reversed(frames):
        pkg = package_of(path)
        if pkg:
            return pkg
    return package_of(root[3])


# The last line of an uncaught exception as Python prints it: "torch.OutOfMemoryError: CUDA out of memory".
_UNCAUGHT = re.compile(r"[A-Za-z_][\w.]{0,100}(?:Error|Exception): ")


def _exit_redraw(c: Collector) -> int:
    """Where the failure region starts: after the last progress, unless that progress is a progress
    bar redrawn as the program died (tqdm closes its bar on exit): the log's last lines, right after
    the final exception. Then the region starts at that exception's traceback."""
    last = c.last_progress
    if not last or not c.total or last < c.total - 1:
        return last
    # the exception right above the bar (its message may wrap over lines), no other bar between them
    before = [e for e in c.exceptions if max(last - 4, c.before_progress) < e[0] < last]
    if not before or any(e[0] > last for e in c.exceptions):
        return last
    exc = before[-1][0]
    starts = [tb for tb in c.tracebacks if tb <= exc]
    frames = [line for line, _path in c.frames if exc - 4 <= line < exc]
    if not starts and not frames:
        # A crash prints its traceback (or its frames): without one, the bar may be real progress, unless
        # the excerpt is the uncaught exception's own last line and the bar redrawn under it ends the log.
        return max(exc - 1, 0) if last >= c.total and _UNCAUGHT.match(before[-1][3]) else last
    start = starts[-1] if starts else frames[0]
    for line, _path in reversed(c.frames):  # a pasted excerpt without its "Traceback" line: its first frame
        if not starts and line < start and start - line <= 3:
            start = line
    return max(start - 1, 0)


def facts(c: Collector, region: Optional[int] = None) -> LogFacts:
    """What the log says; ``region``: where the failure region starts (default: the last progress)."""
    torch = c.versions.get("torch")
    major, cuda = _cuda(c, torch)
    region = _exit_redraw(c) if region is None else region
    root = _root(c, region)
    py = c.versions.get("python")
    return LogFacts(torch=torch, cuda_major=major, cuda=cuda, python=py, platform=_platform(c),
                    rocm=bool(c.platforms["rocm"]) or "rocm" in (torch or ""), conda=c.conda, region=region,
                    root=root, package=_package(c, root, region),
                    paths=tuple(p for line, p in c.frames if root is not None and region <= line <= root[0]),
                    jetson=tuple(s.groups for s in c.shapes if s.uid == "e5-jetson"))
