# The wire between flexdoctor and the scripts it runs in the TARGET interpreter. stdlib only,
# Python 3.8+, plain syntax. Imported two ways: by a worker script as a sibling (`import _wire`:
# a script run as a file has its own folder on sys.path, so flexdoctor itself need not be
# importable there) and by flexdoctor as flexdoctor.worker._wire (the parent reads with the same
# constants, in flexdoctor/worker/run.py).
#
# Protocol (stdout, one line each):
#   @@flexdoctor-stage NAME         a step starts; a crash or hang is judged by the last one
#   @@flexdoctor-part [NAME ]JSON   a finished section, kept even if the process dies later
#   @@flexdoctor-result JSON        the end: the one result
import json
import os
import sys
import time
import traceback

STAGE = "@@flexdoctor-stage "
PART = "@@flexdoctor-part "
RESULT = "@@flexdoctor-result "

_CLOCK = {"t0": time.time(), "last": None, "since": None, "times": {}}


def _leave_path():
    """Drop this folder from sys.path once the script has its sibling, so nothing the target
    interpreter imports later (torch, diffusers) can pick up a file from here by its name."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]


if __name__ == "_wire":  # imported by a worker script, not by flexdoctor
    _leave_path()


def stage(name):
    """Announce the step that starts now (and time the one before)."""
    now = time.time()
    if _CLOCK["last"] is not None:
        _CLOCK["times"][_CLOCK["last"]] = round(now - _CLOCK["since"], 3)
    _CLOCK["last"], _CLOCK["since"] = name, now
    _line(STAGE + name)


def last_stage():
    return _CLOCK["last"]


def part(value, name=None):
    """A finished section: ``@@flexdoctor-part NAME JSON`` (or without a name)."""
    head = PART + (name + " " if name else "")
    _line("\n" + head + json.dumps(value, default=str))


def emit(out):
    """The one result line, with the seconds spent in each stage and in all."""
    stage("done")
    out["stage_seconds"] = dict(_CLOCK["times"])
    out["seconds"] = round(time.time() - _CLOCK["t0"], 3)
    _line("\n" + RESULT + json.dumps(out, default=str))


def short_error(exc, limit=4000):
    """``Type: message`` of an exception, at most ``limit`` characters (the end is kept)."""
    lines = traceback.format_exception_only(type(exc), exc)
    return "".join(lines).strip()[-limit:]


def _line(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
