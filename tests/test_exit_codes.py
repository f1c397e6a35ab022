"""One exit-code contract for every command: 0 ok, 1 findings or a refusal, 2 usage or environment
error (128+N after signal N: tests/test_lifetime.py). Each case runs the real command line and
asserts its code, one `flexdoctor: error:` line (or none, where the contract says quiet) and
never a traceback or an "internal error": those are for true bugs only.
"""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import flexdoctor

REPO = Path(flexdoctor.__file__).resolve().parent.parent
DEEP = 100_000  # far past any parser's recursion limit


def fd(*args: str, cwd: Path, stdin=subprocess.DEVNULL, shell_tail: str = "", env: dict | None = None,
       preexec=None) -> subprocess.CompletedProcess:
    """Run ``python -m flexdoctor ARGS`` (through sh when ``shell_tail`` redirects a stream)."""
    e = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")}
    e.update(PYTHONPATH=str(REPO), CI="1", FLEXDOCTOR_LANG="en", **(env or {}))
    argv = [sys.executable, "-m", "flexdoctor", *args]
    if shell_tail:
        argv = ["sh", "-c", " ".join(_quote(a) for a in argv) + " " + shell_tail]
    return subprocess.run(argv, cwd=cwd, env=e, stdin=stdin, capture_output=True, text=True, timeout=300,
                          preexec_fn=preexec)


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def _exe(path: Path, body: str) -> Path:
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(scope="module")
def box(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("exit")
    (d / "deep.json").write_text("[" * DEEP + "]" * DEEP)
    (d / "deep.toml").write_text("a = " + "[" * DEEP + "]" * DEEP + "\n")
    (d / "deep").mkdir()
    (d / "deep" / "pyproject.toml").write_text("a = " + "[" * DEEP + "]" * DEEP + "\n")
    (d / "not-utf8.json").write_bytes(b"\xff\xfe{}")
    (d / "a-dir").mkdir()
    from flexdoctor.cache import manifest as mf  # something clear-cache would delete: a real manifest

    root = str(d / "cache")
    from flexdoctor.cache.fingerprint import Fingerprint

    mf.write(root, mf.merge(None, Fingerprint(torch="2.13.0", device="cpu"), [], set(), root, flexdoctor.__version__))
    # Python 2.7 as flexdoctor meets it: -c answers, a Python 3 script is a SyntaxError.
    _exe(d / "python2", "#!/bin/sh\nif [ \"$1\" = \"-c\" ]; then printf '2.7.18'; exit 0; fi\n"
                        "echo 'SyntaxError: invalid syntax' >&2; exit 1\n")
    return d


def assert_one_error_line(done: subprocess.CompletedProcess, code: int, needle: str = "") -> None:
    assert done.returncode == code, (done.returncode, done.stdout[-500:], done.stderr[-1500:])
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("flexdoctor: error:")]
    assert len(errors) == 1 and needle in errors[0], done.stderr


USAGE = [  # (args, words the one error line must hold)
    (["check", "--format", "yaml"], "--format yaml"),
    (["check", "--only", "FD999"], "FD999"),
    (["check", "--deep", "--static"], "--deep"),
    (["check", "--python", "/nonexistent/python3"], "no such executable"),
    (["check", "--from-facts", "missing.json"], "missing.json"),
    (["check", "--from-facts", "a-dir"], "a-dir"),
    (["check", "--from-facts", "not-utf8.json"], "not-utf8.json"),
    (["check", "--from-facts", "deep.json"], "nested too deeply"),
    (["check", "--static", "--settings", "deep.toml"], "nested too deeply"),
    (["check", "--static", "--config", "missing-config.json"], "--config"),
    (["check", "--static", "--output", "no-such-dir/report.txt"], "no such directory"),
    (["facts", "--format", "yaml"], "--format yaml"),
    (["facts", "--deep", "--static"], "--deep"),
    (["rules", "FD999"], "FD999"),
    (["explain", "missing.log"], "missing.log"),
    (["explain", "a-dir"], "a-dir"),
    (["explain", "--format", "yaml", "missing.log"], "--format yaml"),
    (["warm-cache"], "nothing to warm"),
    (["warm-cache", "--preset", "nope"], "nope"),
    (["warm-cache", "--dtype", "fp8", "--cache-dir", "c"], "fp8"),
    (["warm-cache", "--preset", "cpu-smoke", "--jobs", "0", "--cache-dir", "c"], "--jobs"),
    (["warm-cache", "--preset", "cpu-smoke", "--timeout", "0", "--cache-dir", "c"], "--timeout"),
    (["warm-cache", "--config", "missing.toml"], "missing.toml"),
    (["warm-cache", "--config", "deep.toml"], "nested too deeply"),
    (["warm-cache", "--import", "missing.zip", "--cache-dir", "c"], "missing.zip"),
    (["warm-cache", "--import", "deep.json", "--cache-dir", "c"], "not a flexdoctor cache bundle"),
    (["warm-cache", "--run", "", "--cache-dir", "c"], "--run"),
    (["clear-cache", "--cache-dir", "no-such-dir"], "no-such-dir"),
    (["clear-cache", "--manifest", "--cache-dir", "cache"], "--yes"),  # not interactive: needs --yes
    (["bench", "--format", "yaml"], "--format yaml"),
    (["bench", "--device", "tpu"], "--device tpu"),
    (["bench", "--seq-len", "abc"], "abc"),
    (["bench", "--heads", "16", "--kv-heads", "5"], "--kv-heads"),
]


@pytest.mark.parametrize("args, needle", USAGE, ids=[" ".join(a) for a, _ in USAGE])
def test_usage_errors_exit_2_with_one_line(box, args, needle):
    assert_one_error_line(fd(*args, cwd=box), 2, needle)


@pytest.mark.parametrize("command", [["check", "--static"], ["check"], ["facts", "--static"],
                                     ["warm-cache", "--preset", "cpu-smoke", "--cache-dir", "c"], ["bench"]])
def test_an_interpreter_too_old_for_the_worker_is_an_environment_error(box, command):
    done = fd(*command, "--python", str(box / "python2"), cwd=box)
    assert_one_error_line(done, 2, "Python 2.7.18 is too old")


def test_a_program_that_is_not_python_is_an_environment_error(box):
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", "c", "--python", "/bin/false", cwd=box)
    assert_one_error_line(done, 2, "not a working Python interpreter")


def test_a_nested_pyproject_found_on_the_way_up_is_a_usage_error(box):
    assert_one_error_line(fd("check", "--static", cwd=box / "deep"), 2, "nested too deeply")


def test_unknown_command_and_option_are_usage_errors(box):
    for args in (["no-such-command"], ["check", "--no-such-option"]):
        done = fd(*args, cwd=box)
        assert done.returncode == 2 and "Traceback" not in done.stderr


def test_caches_turned_off_is_an_environment_error(box):
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", "c", cwd=box,
              env={"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"})
    assert_one_error_line(done, 2, "TORCHINDUCTOR_FORCE_DISABLE_CACHES")


# ----------------------------------------------------------------- stdin, stdout, a full disk


def test_closed_stdin_is_not_interactive(box):
    done = fd("explain", cwd=box, stdin=None, shell_tail="<&-")
    assert done.returncode == 1 and "no known problem" in done.stdout, done.stderr  # empty input, not a crash
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    done = fd("check", "--from-facts", "-", cwd=box, stdin=None, shell_tail="<&-")
    assert_one_error_line(done, 2, "--from-facts -")
    done = fd("clear-cache", "--manifest", "--cache-dir", "cache", cwd=box, stdin=None, shell_tail="<&-")
    assert_one_error_line(done, 2, "--yes")


@pytest.mark.parametrize("args, code", [(["rules"], 0), (["rules", "FD999"], 2),
                                         (["check", "--static", "--format", "json"], None)])
def test_a_reader_that_goes_away_is_quiet_and_the_code_stands(box, args, code):
    e = {**os.environ, "PYTHONPATH": str(REPO), "CI": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "flexdoctor", *args], cwd=box, env=e, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader is gone before flexdoctor writes a byte: EPIPE
    err = proc.stderr.read()
    proc.wait(timeout=300)
    assert "Traceback" not in err and "internal error" not in err and "BrokenPipe" not in err, err
    if code is None:  # check: its own verdict, as if the output had been read
        assert proc.returncode in (0, 1)
    else:
        assert proc.returncode == code


def test_closed_stdout_is_quiet(box):
    done = fd("rules", cwd=box, shell_tail=">&-")
    assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_a_full_disk_is_one_line_exit_2(box):
    assert_one_error_line(fd("rules", cwd=box, shell_tail=">/dev/full"), 2, "No space left on device")


def _small_files():
    """A write limit the kernel enforces on every file this process writes (EFBIG, like ENOSPC)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="POSIX file size limits")
def test_a_manifest_that_cannot_be_written_shows_the_results_then_one_line(box, tmp_path):
    # The target interpreter answers the fingerprint at once; the --run command is real.
    fake = _exe(tmp_path / "python", "#!/bin/sh\ncase \"$1\" in\n  *_warm_worker.py) echo '@@flexdoctor-result "
                "{\"ok\": true, \"fingerprint\": {\"torch\": \"2.13.0\", \"device\": \"cpu\"}}' ;;\n"
                f"  *) exec {sys.executable} \"$@\" ;;\nesac\n")
    cache = tmp_path / "cache"
    done = fd("warm-cache", "--python", str(fake), "--run", f"{sys.executable} -c pass", "--no-verify",
              "--cache-dir", str(cache), cwd=box, preexec=_small_files)
    assert_one_error_line(done, 2, "could not write")
    assert "--run: first run" in done.stdout  # the results came first
    assert [p.name for p in cache.iterdir() if "manifest" in p.name] == []  # no half-written manifest


def test_every_command_documents_the_contract_in_its_help(box):
    from flexdoctor.cli import app

    commands = [c.name for c in app.registered_commands]
    assert set(commands) >= {"check", "facts", "rules", "explain", "warm-cache", "clear-cache", "bench"}
    for name in commands:
        done = fd(name, "--help", cwd=box)
        assert done.returncode == 0 and "Exit codes:" in done.stdout and "128+N" in done.stdout, name
