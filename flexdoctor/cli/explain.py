"""The `explain` command: the known problems in a log or traceback, with cause, fix and commands."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Optional

import typer
from typing_extensions import Annotated

from ..cliutil import usage_error as _usage_error
from ..cliutil import write as _write
from ..text import t
from ._common import OutputOpt


def _stdin():
    """stdin as a binary stream. At a terminal: a one-line prompt on stderr, and the paste read up to
    the first end-of-file (one Ctrl-D), since the block reader would ask the terminal again after a
    short read and need a second one (issue 21.10)."""
    import io

    if not sys.stdin.isatty():
        return sys.stdin.buffer
    sys.stderr.write(t("explain.prompt") + "\n")
    sys.stderr.flush()
    chunks = []
    while True:
        chunk = sys.stdin.buffer.raw.read(65536) if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer.read1(65536)
        if not chunk:
            break
        chunks.append(chunk)
    return io.BytesIO(b"".join(chunks))


def explain(
    file: Annotated[Optional[str], typer.Argument(metavar="[FILE|-]", help="Log or traceback to read; - or "
                                                  "nothing reads stdin.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="text (default) or json.")] = "text",
    output: OutputOpt = None,
) -> None:
    """Explain the known problems in a log or traceback: cause, fix, commands.

    Reads the whole log (any size, streamed; binary junk is tolerated) and reports every known
    problem found, most fundamental first.

    Examples:

      flexdoctor explain train.log

      python train.py 2>&1 | flexdoctor explain

      flexdoctor explain crash.txt --format json
    """
    from ..knowledge import explain as kb_explain
    from ..render import explain_view
    from ..text import t

    if fmt not in ("text", "json"):
        raise _usage_error(t("cli.error.format", value=fmt, choices="text or json"))
    if file in (None, "-"):
        if file is None and sys.stdin.isatty():
            raise _usage_error(t("cli.error.explain_input"))
        source = t("explain.stdin")
        try:
            result = kb_explain.scan(_stdin())
        except OSError as exc:
            raise _usage_error(t("cli.error.stdin", error=exc.strerror or exc))
    else:
        source = file
        if os.path.isdir(file):
            raise _usage_error(t("cli.error.is_dir", path=file))
        try:
            with open(file, "rb") as stream:
                result = kb_explain.scan(stream)
        except OSError as exc:
            raise _usage_error(t("cli.error.file", path=file, error=exc.strerror or exc))
    text = explain_view.render(result, source, fmt=fmt, width=shutil.get_terminal_size((100, 24)).columns)
    _write(text, output)
    raise typer.Exit(0 if result.found else 1)


