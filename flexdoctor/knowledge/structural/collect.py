"""What the structural layer keeps while explain scans a log: the shapes found, and what the log says
about itself (versions, platform, installer, traceback frames, exception lines). Memory is bounded:
the failure that matters is at the end of a log, so only the last observations of each sort are kept.

``progress`` marks lines that show a run going on (a tqdm rate, a logged loss): an error before the
last such line was survived, so the structural layer reads only what comes after it (the failure
region). The explain scanner reports the last progress line (``PROGRESS`` below, found with a C-level
``bytes.find``), the same way for its block scanner and its per-line reference.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Optional

PROGRESS = (b"it/s]", b"s/it]", b"'loss':", b"loss=", b"'train_loss':", b"| loss ")
KEEP = 400  # observations of each sort kept (the last ones)


@dataclass(frozen=True)
class Seen:
    uid: str
    line: int
    text: str
    groups: dict
    start: int  # where the pattern matched in ``text``
    end: int


@dataclass
class Collector:
    shapes: deque = field(default_factory=lambda: deque(maxlen=KEEP))
    # (line, text) of the line after an exception or error line, as explain visits it (it visits the line
    # after every candidate): where a message goes on, and its remedy may stand (remedy.stated)
    follow: deque = field(default_factory=lambda: deque(maxlen=KEEP))
    error_at: int = 0  # the last line that held an exception or error line
    frames: deque = field(default_factory=lambda: deque(maxlen=KEEP))  # (line, path)
    exceptions: deque = field(default_factory=lambda: deque(maxlen=KEEP))  # (line, exc, msg, text)
    tracebacks: deque = field(default_factory=lambda: deque(maxlen=KEEP))  # line numbers
    errors: deque = field(default_factory=lambda: deque(maxlen=KEEP))  # (line, text) of error: lines
    versions: dict = field(default_factory=dict)  # torch, cuda, cutag, python, driver_cuda, nvcc, ... (last seen)
    platforms: Counter = field(default_factory=Counter)
    conda: bool = False
    last_progress: int = 0
    before_progress: int = 0  # the progress line before the last one
    logged: deque = field(default_factory=lambda: deque(maxlen=KEEP))  # tracebacks an optional import's notice logged
    launcher_failed: int = 0  # the last line where a launcher reported a failed worker
    total: int = 0  # lines in the log (set by the scan when it ends)
    _pathed: int = -1  # the last line a shape's _path read

    def observe(self, entry, line: int, text: str, found: dict) -> None:
        """A context or shape unit matched line ``line``; ``found``: the match's named groups, with its ``span``
        (the Matcher's: the line is not searched again)."""
        span = found.span
        uid = entry.symbol
        groups = {k: v for k, v in found.items() if v is not None}
        if uid == "ctx-torch" and "torch" in groups and not _word_start(text, span[0]):
            return  # "mytorch==1.0", "foo-torch-2.0": not torch
        if entry.layer == "shape":
            self.shapes.append(Seen(uid, line, text, groups, span[0], span[1]))
            if line != self._pathed:  # a line several shapes match is read for its paths once
                self._pathed = line
                self._path(text)
        else:
            self._context(uid, line, text, groups)

    def _context(self, uid: str, line: int, text: str, groups: dict) -> None:
        if uid in ("ctx-wsl", "ctx-rocm"):
            self.platforms[uid[4:]] += 1
        elif uid == "ctx-platform":
            self.platforms[platform_hint(text) or "linux"] += 1
        elif uid == "ctx-frame":
            path = groups.get("path", "")
            self.frames.append((line, path))
            self._path(path)
        elif uid == "ctx-traceback":
            self.tracebacks.append(line)
        elif uid == "ctx-launcher":
            self.launcher_failed = line
        elif uid in ("ctx-exception", "ctx-what"):
            self.exceptions.append((line, groups.get("exc", "c10::Error"), groups.get("msg", ""), text.strip()))
            self.error_at = line
        elif uid == "ctx-error":
            self.errors.append((line, text.strip()))
            self.error_at = line
        else:
            self._version(text, groups)

    def _version(self, text: str, groups: dict) -> None:
        if "torch_have" in groups:
            self.versions["torch"] = groups["torch_have"]
        elif "torch" in groups and "you have" not in text and "requires" not in text:
            self.versions["torch"] = groups["torch"]
        for key in ("cuda", "driver_cuda", "nvcc"):
            if key in groups:
                self.versions[key] = groups[key]
        if "cutag" in groups:
            self.versions["cutag"] = groups["cutag"][1:]
        if "cudir" in groups:
            self.versions["cudir"] = groups["cudir"]
        py = groups.get("py") or groups.get("pypath") or (("3." + groups["cp"]) if "cp" in groups else None)
        if py:
            self.versions["python"] = py if "." in py else py[0] + "." + py[1:]

    def _path(self, text: str) -> None:
        """Platform and installer from the paths a line shows (frames, failing files)."""
        hint = platform_hint(text)
        if hint:
            self.platforms[hint] += 1
        if _CONDA.search(text):
            self.conda = True
        py = _PYPATH.search(text)  # .../python3.11/site-packages/...: the Python that ran it
        if py:
            digits = py.group(1).replace(".", "")
            self.versions["python"] = digits[0] + "." + digits[1:]

    def visited(self, line: int, text: str) -> None:
        """A line explain visits: kept when it follows an exception or error line (where a message goes on)."""
        if self.error_at and line == self.error_at + 1:
            self.follow.append((line, text))

    def traceback_after(self, line: int, prev: str) -> None:
        """A traceback at ``line``: kept as logged when the line above is an optional import's notice
        (``logger.warning("A matching Triton is not available, some optimizations will not be enabled",
        exc_info=True)``, xformers/__init__.py): the run goes on without the optional part."""
        if self.tracebacks and self.tracebacks[-1] == line and _NOTICE.search(prev):
            self.logged.append(line)

    def logged_errors(self) -> set:
        """The exception lines that end the logged tracebacks (an import error, right after its frames),
        taken out of ``exceptions``: they are the notice's, not the run's failure."""
        out = set()
        for tb in self.logged:
            after = [e for e in self.exceptions if tb < e[0] <= tb + _LOGGED_SPAN]
            nxt = [t for t in self.tracebacks if tb < t]
            if after and (not nxt or after[0][0] < nxt[0]) and _OPTIONAL_EXC.fullmatch(after[0][1].split(".")[-1]):
                out.add(after[0][0])
        if out:
            kept = [e for e in self.exceptions if e[0] not in out]
            self.exceptions.clear()
            self.exceptions.extend(kept)
        return out

    def progress(self, line: int) -> None:
        if line > self.last_progress:
            self.before_progress, self.last_progress = self.last_progress, line


# An optional part's notice, the line a logged traceback follows: "A matching Triton is not available, some
# optimizations will not be enabled" (xformers), "... could not be imported ..., falling back to ...".
_NOTICE = re.compile(r"(?:not available|could not be (?:imported|loaded)|[Ff]ailed to (?:import|load))"
                     r"[^\n]{0,160}?(?:will not be|won't be|disabled|[Ff]alling back|[Ff]allback)")
_OPTIONAL_EXC = re.compile(r"ModuleNotFoundError|ImportError|AttributeError")
_LOGGED_SPAN = 40  # lines of frames a logged traceback may hold


_CONDA = re.compile(r"[\\/](?:ana|mini)conda3[\\/]|[\\/](?:miniforge3|mambaforge|micromamba)[\\/]|/opt/conda/"
                    r"|[\\/]envs[\\/][\w.-]{1,100}[\\/](?:lib|Lib)[\\/]")


_PYPATH = re.compile(r"[\\/][Pp]ython(3\.?\d{1,2})[\\/](?:site|dist)-packages")


def platform_hint(text: str) -> Optional[str]:
    """windows / macos / linux from a path in ``text``, or None."""
    if re.search(r"\b[A-Za-z]:\\|\\(?:site|dist)-packages\\|\.dll\b|win_amd64|WinError", text):
        return "windows"
    if re.search(r"/Users/\w|/opt/homebrew/|/Library/Frameworks/|/private/var/folders/|\.dylib\b|macosx_1\d|[Dd]arwin",
                 text):
        return "macos"
    if re.search(r"/home/\w|/usr/|/opt/|/root/|/(?:site|dist)-packages/|/workspace/|linux", text):
        return "linux"
    return None


def _word_start(text: str, i: int) -> bool:
    """Whether a word starting at ``i`` (optionally after "py"/"Py") is not part of a longer name."""
    if text[max(0, i - 2):i].lower() == "py":
        i -= 2
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_-")


def has_progress(text: str) -> bool:
    for p in PROGRESS:
        marker, start = p.decode(), 0
        while True:
            at = text.find(marker, start)
            if at < 0:
                break
            if _real(text, at, marker):
                return True
            start = at + 1
    return False


def _real(text, at: int, marker) -> bool:
    """A tqdm rate counts only with a number before it ("9.50it/s]", not the "?it/s]" of a bar that
    never moved, which tqdm prints again when an exception closes it)."""
    return marker[-5:] not in (b"it/s]", "it/s]") or (at > 0 and text[at - 1:at].isdigit())


def last_progress_in(body: bytes, stop: Optional[int] = None, start: int = 0) -> Optional[int]:
    """Offset of the last progress marker in ``body`` (from ``start``, before ``stop``), or None."""
    best = start - 1
    for p in PROGRESS:
        end = len(body) if stop is None else stop
        while True:  # only after the best so far: a marker before it cannot be the last
            at = body.rfind(p, best + 1, end)
            if at < 0 or _real(body, at, p):
                break
            end = at + len(p) - 1
        best = max(best, at)
    return best if best >= start else None


_PKG = re.compile(r"[\\/](?:site|dist)-packages[\\/](?P<pkg>[A-Za-z0-9_.-]{1,100})")


def package_of(path: str) -> Optional[str]:
    """The top-level package a path lies in (``.../site-packages/flash_attn/x.py`` -> flash_attn)."""
    m = None
    for m in _PKG.finditer(path):
        pass
    if m is None:
        return None
    pkg = m.group("pkg")
    if pkg.endswith((".py", ".so", ".pyd")) or pkg.endswith(".dist-info"):
        pkg = re.split(r"[.]", pkg, 1)[0]
    return pkg or None
