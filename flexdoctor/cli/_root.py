"""Running as root, flexdoctor starts nothing a non-root user can change (docs/SECURITY.md, "The
target interpreter and root"). The decision is flexdoctor.safety's (``root_refusal``: the ownership
walk over the program and, for a Python, everything it runs at start-up); this module hands it to
the one runner as its gate, and gives the commands their one-line refusal (exit 2).

Commands that start the target interpreter call :func:`require_safe_python` once; ``check
--static`` and ``facts --static`` pass ``files_ok``: the interpreter is then judged from its files
(probes/interp.py reads them without starting it) and a note says so. ``warm-cache --run`` and
``cache why`` call :func:`require_safe_command` for the user's own command line.
"""

from __future__ import annotations

import os
from typing import Optional

import typer

from ..cliutil import usage_error

_CACHE: dict = {}


def _gate(argv: list, env: dict) -> Optional[str]:
    """worker.run's gate: None, or (English: it becomes facts) why ``argv`` is not started."""
    from .. import safety
    from ..text import english

    key = (tuple(argv[:1]), env.get("PATH"), env.get("PYTHONPATH"), env.get("PYTHONHOME"),
           env.get("PYTHONUSERBASE"), env.get("PYTHONNOUSERSITE"), env.get("HOME"))
    if key not in _CACHE:  # safe stays safe for this run: no non-root user can change what was judged
        try:
            v = safety.root_refusal(argv, env)
        except Exception as exc:  # a judge that fails refuses
            return english("root-guard.refused", program=argv[0] if argv else "", why=f"{type(exc).__name__}: {exc}")
        _CACHE[key] = None if v is None else english("root-guard.refused", program=argv[0], why=safety.describe(v, english=True))
    return _CACHE[key]


def install() -> None:
    """Called by the entry point before anything starts: as root, every start asks the gate."""
    from .. import safety
    from ..worker import run

    if safety.current_uid() == safety.ROOT_UID:
        run.set_gate(_gate)


def require_safe_python(target: str, files_ok: bool = False) -> bool:
    """As root, refuse (exit 2, one line) to run ``target`` when a non-root user can change what it
    runs; with ``files_ok`` say instead that it is judged from its files only. True then."""
    from .. import safety
    from ..text import t

    v = safety.root_refusal([target])
    if v is None:
        return False
    if files_ok:
        from ..render._escape import terminal_line

        typer.echo(terminal_line(t("root-guard.files_only", program=target, why=safety.describe(v))), err=True)
        return True
    raise usage_error(t("root-guard.refuse_python", program=target, why=safety.describe(v)))


def require_safe_command(argv: list, env: Optional[dict] = None) -> None:
    """As root, refuse (exit 2, one line) a command line whose program (or, for a Python, what it
    runs at start-up) a non-root user can change. The arguments are the user's own choice."""
    from .. import safety
    from ..text import t

    v = safety.root_refusal(list(argv), os.environ if env is None else env)
    if v is not None:
        raise usage_error(t("root-guard.refuse_command", program=argv[0], why=safety.describe(v)))
