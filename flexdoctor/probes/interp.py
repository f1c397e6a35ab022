"""The target interpreter and its installed packages, without importing torch."""

from __future__ import annotations

import os
import sys

from ..facts import ProbeError, PythonFacts, TorchStaticFacts, from_jsonable
from ..worker import run as worker_run
from ..worker import script
from ..worker.run import tail

SCRIPT = script("_interp_probe.py")


def probe(python: str, timeout: float = 15.0) -> tuple[PythonFacts | ProbeError, TorchStaticFacts | ProbeError | None]:
    """Returns (python facts, torch facts); torch is None when torch is not installed."""
    return observe(python, timeout)[:2]


def observe(python: str, timeout: float = 15.0) -> tuple:
    """``probe``'s two answers and why the interpreter was not started (None when it was): running
    as root, one a non-root user can change is read from its files only (``read_files``)."""
    from .. import safety

    refusal = safety.root_refusal([python])
    if refusal is not None:
        return read_files(python, refusal)
    return (*_started(python, timeout), None)


def _started(python: str, timeout: float) -> tuple:
    if _same_interpreter(python):
        # The script is stdlib-only and imports nothing it reports on, so running it here
        # gives the same answer as a subprocess, ~0.1 s sooner.
        from ..worker import _interp_probe

        return _parse(_interp_probe.collect())
    done = worker_run.run([python, str(SCRIPT)], timeout=timeout)
    err = failure(done, f"{python} {SCRIPT.name}")
    if err is not None:
        return err, err
    data = worker_run.read(done.stdout).result()
    if data is None:
        bad = ProbeError.because("not_probe_json", kind="garbage", detail=tail(done.stdout + done.stderr),
                                 program=f"{python} {SCRIPT.name}")
        return bad, bad
    return _parse(data)


def read_files(python: str, refusal) -> tuple:
    """What ``probe`` says, for an interpreter that is not started (``refusal``: the safety Verdict
    why not): its layout and metadata read from its files, never executed. A third item says why
    it was not started (English: ``probes.gather`` puts it in the runtime facts)."""
    from .. import safety
    from ..worker import _interp_probe

    why = safety.describe(refusal, english=True)
    layout = safety.interpreter_layout(python)
    if layout is None:
        err = ProbeError.because("root_not_started", kind="error", python=python, why=why)
        return err, err, why
    data = _interp_probe.collect_files(os.path.abspath(python), layout.full_version or layout.version,
                                       list(layout.path), layout.include_dir)
    return (*_parse(data), why)


# Every Python answers this, 2.x included (no f-string, no print function).
_VERSION = "import sys; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"


def version(python: str, timeout: float = 30.0) -> tuple | ProbeError:
    """The interpreter's (major, minor, micro), also for one too old to run the probe scripts."""
    done = worker_run.run([python, "-c", _VERSION], timeout=timeout)
    err = failure(done, python)
    if err is not None:
        return err
    try:
        return tuple(int(part) for part in done.stdout.strip().split("."))
    except ValueError:
        return ProbeError.because("not_a_version", kind="garbage", detail=tail(done.stdout + done.stderr) or None,
                                  python=python, output=repr(tail(done.stdout, 1)))


def _parse(data: dict):
    py = from_jsonable(PythonFacts, data["python"])
    torch = from_jsonable(TorchStaticFacts, data["torch"]) if data.get("torch") else None
    return py, torch


def _same_interpreter(python: str) -> bool:
    """True only when ``python`` would start with this process's own ``sys.prefix``.

    The same file is not enough: a venv's ``bin/python`` is usually a symlink to the base
    interpreter, yet run as itself it reads the venv's ``pyvenv.cfg`` and sees the venv's
    packages. So the executable must be the same file AND resolve to the same prefix, by the
    rule CPython's ``site.venv()`` applies to the path it was started as: a ``pyvenv.cfg``
    beside the executable or in its parent directory makes that parent the prefix.
    """
    if sys.flags.isolated:
        return False
    try:
        if not os.path.samefile(python, sys.executable):
            return False
        target = _venv_prefix(python)
        if target is None:  # a base interpreter: we must not be running inside a venv
            return sys.prefix == sys.base_prefix
        return os.path.samefile(target, sys.prefix)
    except OSError:
        return False


def _venv_prefix(executable: str) -> str | None:
    """The venv ``executable`` belongs to when started by that path (site.venv()), or None."""
    exe_dir = os.path.dirname(os.path.abspath(executable))
    prefix = os.path.dirname(exe_dir)
    for d in (exe_dir, prefix):
        if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
            return prefix
    return None


def failure(done: worker_run.Completed, program: str, stage: str | None = None) -> ProbeError | None:
    """A ProbeError for a subprocess that did not exit 0, or None. ``program``: what ran, as a
    command line (``/usr/bin/python3 _torch_probe.py``): data, not words."""
    if done.start_error:
        return ProbeError.because("start_failed", kind="error", stage=stage, program=program, error=done.start_error)
    if done.timed_out:
        return ProbeError.because("timeout", kind="timeout", stage=stage, detail=tail(done.stderr) or None,
                                  program=program)
    if done.signal_name:
        return ProbeError.because("crashed", kind="crash", stage=stage, detail=tail(done.stderr) or None,
                                  program=program, signal=done.signal_name)
    if done.returncode != 0:
        return ProbeError.because("exit_status", kind="error", stage=stage, detail=tail(done.stderr) or None,
                                  program=program, status=done.returncode)
    return None


def read_result(done: worker_run.Completed, program: str):
    """The JSON result of a probe script speaking the stage/result line protocol
    (see _torch_probe.py), or a ProbeError naming the last stage it reached."""
    wire = worker_run.read(done.stdout)
    stage = wire.stage
    if wire.result_text is None:
        return failure(done, program, stage=stage) or ProbeError.because(
            "no_result", kind="garbage", stage=stage, detail=tail(done.stdout + done.stderr) or None,
            program=program)
    data = wire.result()
    if data is None:
        return ProbeError.because("garbage", kind="garbage", stage=stage, detail=tail(wire.result_text),
                                  program=program)
    return data
