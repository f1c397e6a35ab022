"""Standard streams that neither a closed terminal, a reader that went away nor a full disk can
turn into a traceback (installed once by the CLI entry point).

- stdin closed (``<&-``): /dev/null instead, so the command sees a non-interactive, empty input.
- stdout or stderr closed, or the reader gone (EPIPE: ``flexdoctor check | head``): the rest of
  the output vanishes quietly and the command still ends with its own exit code, as other CLIs
  do when their reader stops reading.
- any other write error (stdout on a full disk, ``> /dev/full``): remembered, so the entry point
  says it in one line and exits 2 (an environment error).
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


def guard() -> Output:
    """Install the guards; returns the stdout guard (its ``error`` is for the exit line)."""
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")
    out, err = Output(sys.stdout), Output(sys.stderr)
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    return out
