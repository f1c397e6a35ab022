"""warm-cache and ``warm-cache --import`` compile into, and load from, only a safe cache: the one
verdict of flexdoctor/safety.py (FD504's), and a missing --cache-dir is created private (0700)."""

from __future__ import annotations

import os
from typing import Optional

import typer

from ..cliutil import usage_error


def _refuse(kind: str, path: str, verdict) -> "typer.Exit":
    from ..checks.cache import unsafe_fix, unsafe_message
    from ..render._escape import terminal_line
    from ..safety import current_uid
    from ..text import t

    uid = current_uid()
    fix = unsafe_fix(kind, verdict, uid)
    exit_ = usage_error(t("warm-safety.unsafe", message=unsafe_message(kind, path, verdict, uid)))
    typer.echo(terminal_line(t("warm-safety.fix", kb=fix.kb, summary=fix.summary)), err=True)
    for cmd in fix.commands:  # a path inside: shown, never obeyed (render/_escape.py)
        typer.echo("    $ " + terminal_line(cmd), err=True)
    return exit_


def guard_cache_dirs(root: str, env: Optional[dict] = None) -> None:
    """Refuse (exit 2, with FD504's fix) an unsafe Inductor cache dir or TRITON_CACHE_DIR; create
    a missing Inductor cache dir with mode 0700. Nothing is created when refusing."""
    from .. import safety
    from ..cache import locations
    from ..text import t

    env = os.environ if env is None else env
    ind = locations.inductor(env)
    if ind.blank:
        raise usage_error(t("warm-safety.blank", var=ind.blank, path=ind.path))
    tri = locations.triton(env)
    checks = [("inductor", root)] + ([("triton", tri.path)] if tri.source == "TRITON_CACHE_DIR" else [])
    for kind, path in checks:
        verdict = safety.verdict(path)
        if not verdict.safe and verdict.reason != "not-checked":
            raise _refuse(kind, path, verdict)
    try:
        safety.make_private_dirs(root)
    except OSError as exc:
        raise usage_error(t("warm-safety.cannot_create", path=root, error=exc.strerror or str(exc)))
    verdict = safety.verdict(root)
    if not verdict.safe and verdict.reason != "not-checked":
        raise _refuse("inductor", root, verdict)
