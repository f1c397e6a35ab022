"""Standard streams that neither a closed terminal, a reader that went away nor a full disk can
turn into a traceback (installed once by the CLI entry point).

- stdin closed (``<&-``): /dev/null instead, so the command sees a non-interactive, empty input.
- stdout or stderr closed, or the reader gone (EPIPE: ``flexdoctor check | head``): the rest of
  the output vanishes quietly and the command still ends with its own exit code, as other CLIs
  do when their reader stops reading.
- any other write error (stdout on a full disk, ``> /dev/full``): remembered, so the entry point
  says it in one line and exits 2 (an environment error).
- an encoding that cannot carry a character (``PYTHONIOENCODING=ascii``, a cp1252 agent, an old
  cluster locale; a file name that is not UTF-8 even on UTF-8): never an error. The streams
  write through the ``"flexdoctor"`` codec error handler (render/_escape.py ``encode_fallback``):
  the report's symbols in readable ASCII (✓ -> OK), an undecodable byte as ``\\xNN``, anything
  else backslash-escaped; and the views lay out ASCII icons when stdout cannot carry ✓ and ✗.
  (A UnicodeEncodeError is a ValueError: it used to be taken for "written after close", and the
  whole report vanished with the exit code kept.)
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Optional

_QUIET = (errno.EPIPE, errno.EBADF)


class Output:
    """A proxy for sys.stdout or sys.stderr that turns write errors into state."""

    def __init__(self, stream):
        self._stream = stream
        self.gone = stream is None
        self.error: Optional[OSError] = None

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except UnicodeEncodeError:  # a stream we could not set the error handler on
                return self.write(_encodable(text, getattr(self._stream, "encoding", None)))
            except (OSError, ValueError) as exc:  # ValueError: written after close
                self._fail(exc)
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except (OSError, ValueError) as exc:
                self._fail(exc)

    def isatty(self) -> bool:
        return not self.gone and self._stream.isatty()

    def __getattr__(self, name: str):
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)

    def _fail(self, exc: Exception) -> None:
        self.gone = True
        if isinstance(exc, OSError) and exc.errno not in _QUIET:
            self.error = exc
        try:  # the interpreter flushes the real stream once more at exit: let that succeed
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass


def _encodable(text: str, encoding: Optional[str]) -> str:
    from ..render._escape import register

    enc = encoding or "utf-8"
    try:
        return text.encode(enc, register()).decode(enc)
    except LookupError:
        return text.encode("ascii", register()).decode("ascii")


def _never_unencodable(stream) -> None:
    """Write what the stream's encoding cannot carry through the fallback handler."""
    from ..render._escape import register

    try:
        stream.reconfigure(errors=register())
    except (AttributeError, ValueError, OSError, LookupError):
        pass  # not a TextIOWrapper (a test's capture): Output.write falls back itself


def guard() -> Output:
    """Install the guards; returns the stdout guard (its ``error`` is for the exit line)."""
    from ..render._escape import can_encode, set_ascii_symbols

    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            _never_unencodable(stream)
    if sys.stdout is not None:
        set_ascii_symbols(not can_encode(getattr(sys.stdout, "encoding", None)))
    out, err = Output(sys.stdout), Output(sys.stderr)
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    return out
