"""Running as root, flexdoctor starts nothing a non-root user can change (issue 20, item 2).

A real second uid (65534, through ``setpriv``) plants what an attacker would in the places it can
write: a ``.pth`` file in a venv's site-packages, a ``sitecustomize.py`` on PYTHONPATH, a symbolic
link to the interpreter, FIFOs where metadata should be, a check plugin. flexdoctor runs as root and
must never run any of it: ``check --static`` judges such an interpreter from its files only (the
report still comes), every other command exits 2 with one line, a plugin is not loaded. Markers
written by the planted code prove what ran. Skips without root or setpriv.
"""

from __future__ import annotations

import json
import os
import shutil
import site as site_module
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from flexdoctor import safety
from flexdoctor.worker import run as worker_run

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="needs root and setpriv (a real second uid plants the files)")


def _nobody(*argv: str) -> None:
    subprocess.run(AS_NOBODY + list(argv), check=True, timeout=30)


@pytest.fixture
def box():
    """A folder root owns (0755) under /tmp: uid 65534 can reach what we hand to it, nothing else."""
    path = Path(tempfile.mkdtemp(prefix="fd-rootguard-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _venv(where: Path, system_site: bool = True) -> Path:
    args = [sys.executable, "-m", "venv", "--without-pip", str(where)]
    if system_site:
        args.insert(4, "--system-site-packages")
    subprocess.run(args, check=True, timeout=120)
    if system_site:  # a venv of a venv sees only the base's packages: add the running Python's (a .pth)
        (_site(where) / "aaa-layered.pth").write_text("\n".join(site_module.getsitepackages()) + "\n")
    return where


def _site(venv: Path) -> Path:
    return next(venv.glob("lib/python3*/site-packages"))


# flexdoctor itself starts with -E -s (this checkout first on its path, no PYTHON* variables, no
# user site), so that what a test plants for the processes flexdoctor starts (PYTHONPATH, HOME's
# user site) never runs in flexdoctor's own start-up: only flexdoctor's doing can run it.
# FD_TEST_SYSPATH: folders for flexdoctor's own path only (where a test puts a plugin).
_ENTRY = (f"import os, sys; sys.path[:0] = [{str(ROOT)!r}] + os.environ.get('FD_TEST_SYSPATH', '').split(os.pathsep)"
          "; from flexdoctor.cli import main; main()")


def _flexdoctor(*args: str, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    full = {**os.environ, "FLEXDOCTOR_LANG": "en", "CI": "1", **(env or {})}
    return subprocess.run([sys.executable, "-E", "-s", "-c", _ENTRY, *args], capture_output=True, text=True,
                          timeout=timeout, env=full, cwd="/")


def _plant_pth(site: Path, marker: Path) -> None:
    """uid 65534 owns the site folder and writes a .pth whose import line leaves ``marker``."""
    os.chown(site, NOBODY, NOBODY)
    line = f"import os; open({str(marker)!r}, 'w').write(str(os.geteuid()))\n"
    _nobody("sh", "-c", f"printf '%s' \"$0\" > {site}/zz-evil.pth", line)


# ------------------------------------------------------------------------ the runner's gate (anywhere)


def test_the_gate_is_asked_before_every_start_and_its_refusal_is_data(tmp_path):
    marker = tmp_path / "ran"
    asked = []
    worker_run.set_gate(lambda argv, env: asked.append(argv) or "not this one")
    try:
        done = worker_run.run(["sh", "-c", f"touch {marker}"], timeout=10)
    finally:
        worker_run.set_gate(None)
    assert asked == [["sh", "-c", f"touch {marker}"]]
    assert done.refused and done.start_error == "not this one" and done.returncode is None
    assert not marker.exists()
    assert worker_run.run(["sh", "-c", f"touch {marker}"], timeout=10).returncode == 0 and marker.exists()


def test_the_layout_is_read_from_files_as_cpython_finds_it(tmp_path):
    venv = _venv(tmp_path / "v")
    layout = safety.interpreter_layout(str(venv / "bin" / "python"), env={"PATH": os.defpath})
    assert layout.venv_cfg == str(venv / "pyvenv.cfg") and layout.prefix == str(venv)
    assert layout.version == "%d.%d" % sys.version_info[:2]
    assert layout.base_prefix == os.path.realpath(sys.base_prefix)
    assert str(_site(venv)) in layout.site_dirs  # the venv's own, then (system site) the base's
    assert any(p.endswith(f"python{layout.version}") for p in layout.path)  # the standard library
    fake = tmp_path / "odd" / "bin" / "python3.99"  # no lib/python3.99/os.py anywhere above it
    fake.parent.mkdir(parents=True)
    shutil.copy("/bin/true", fake)
    assert safety.interpreter_layout(str(fake)) is None
    v = safety.interpreter_verdict(str(fake), uid=os.geteuid())
    assert not v.safe and v.reason == "unknown-layout"


# ------------------------------------------------------------------------ as root, with a second uid


@needs_root
def test_check_static_reads_an_interpreter_a_user_can_change_from_its_files_only(box):
    venv = _venv(box / "v")
    marker = box / "pth-ran"
    _plant_pth(_site(venv), marker)
    done = _flexdoctor("check", "--static", "--profile", "default", "--skip", "FD5", "--format", "json",
                       "--python", str(venv / "bin" / "python"))
    assert not marker.exists(), "the .pth file ran as root"
    assert done.returncode in (0, 1), done.stderr
    assert "judged from its files only and not started" in done.stderr
    assert str(_site(venv)) in done.stderr and f"is owned by uid {NOBODY}, not root" in done.stderr
    facts = json.loads(done.stdout)["facts"]
    assert facts["python"]["version"].startswith("%d.%d" % sys.version_info[:2])
    not_run = facts["torch_runtime"]["probe_error"]
    assert not_run["reason"] == "root_files_only" and f"uid {NOBODY}" in not_run["args"]["why"]
    import torch

    assert facts["torch"]["version"] == torch.__version__  # read from the base's site-packages, as the venv sees it


@needs_root
@pytest.mark.parametrize("command", [
    ("check",), ("check", "--deep"), ("facts",), ("bench", "--device", "cpu", "-L", "128", "-d", "16"),
    ("warm-cache", "--device", "cpu", "--dtype", "fp32", "--head-dim", "16", "--seq-len", "128"),
], ids=lambda c: " ".join(c[:2]))
def test_every_other_command_refuses_with_one_line(box, command):
    venv = _venv(box / "v")
    marker = box / "pth-ran"
    _plant_pth(_site(venv), marker)
    done = _flexdoctor(*command, "--python", str(venv / "bin" / "python"))
    assert not marker.exists(), "the .pth file ran as root"
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to start" in lines[0] and "Traceback" not in done.stderr


@needs_root
def test_a_sitecustomize_on_a_writable_pythonpath_is_never_run(box):
    shared = box / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    marker = box / "sitecustomize-ran"
    _nobody("sh", "-c", f"echo \"open({str(marker)!r}, 'w')\" > {shared}/sitecustomize.py")
    done = _flexdoctor("facts", env={"PYTHONPATH": str(shared)})
    assert not marker.exists()
    assert done.returncode == 2 and f"{shared} can be written by others (mode 0o777)" in done.stderr


@needs_root
def test_a_usercustomize_in_a_users_home_is_never_run(box):
    """root started with a user's HOME (sudo without -H): that user's site folder is on the path."""
    if not site_module.ENABLE_USER_SITE:
        pytest.skip(f"{sys.executable} reads no user site folder (a venv without system site packages)")
    home = box / "home"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    site = f"{home}/.local/lib/python%d.%d/site-packages" % sys.version_info[:2]
    marker = box / "usercustomize-ran"
    _nobody("sh", "-c", f"mkdir -p {site} && echo \"open({str(marker)!r}, 'w')\" > {site}/usercustomize.py")
    done = _flexdoctor("facts", env={"HOME": str(home)})
    assert not marker.exists()
    assert done.returncode == 2 and f"uid {NOBODY}, not root" in done.stderr
    done = _flexdoctor("facts", "--static", "--format", "json", env={"HOME": str(home)})
    assert done.returncode == 0 and json.loads(done.stdout)["torch_runtime"]["probe_error"]["reason"] == "root_files_only"


@needs_root
def test_a_link_another_user_owns_is_not_followed_into_a_start(box):
    link_dir = box / "links"
    link_dir.mkdir()
    os.chown(link_dir, NOBODY, NOBODY)
    _nobody("ln", "-s", sys.executable, str(link_dir / "python3"))
    done = _flexdoctor("facts", "--python", str(link_dir / "python3"))
    assert done.returncode == 2 and f"the symbolic link {link_dir}/python3 is owned by uid {NOBODY}" in done.stderr
    os.symlink(sys.executable, link_dir / "python")  # root's own link, in a folder uid 65534 can change
    done = _flexdoctor("facts", "--python", str(link_dir / "python"))
    assert done.returncode == 2 and f"{link_dir} is owned by uid {NOBODY}, not root" in done.stderr


@needs_root
def test_fifos_planted_as_metadata_never_hang_the_file_only_read(box):
    venv = _venv(box / "v", system_site=False)
    site = _site(venv)
    os.chown(site, NOBODY, NOBODY)
    _nobody("mkdir", "-p", f"{site}/torch-2.99.0.dist-info", f"{site}/torch")
    _nobody("mkfifo", f"{site}/torch-2.99.0.dist-info/METADATA", f"{site}/torch/version.py")
    _nobody("sh", "-c", f"printf '[flexdoctor.checks]\\nx = evil:check\\n' > {site}/torch-2.99.0.dist-info/entry_points.txt")
    t0 = time.monotonic()
    done = _flexdoctor("check", "--static", "--profile", "default", "--format", "json",
                       "--python", str(venv / "bin" / "python"), timeout=120)
    assert time.monotonic() - t0 < 60 and done.returncode in (0, 1), done.stderr
    assert stat.S_ISFIFO(os.lstat(site / "torch" / "version.py").st_mode)


@needs_root
def test_the_users_own_command_line_runs_but_not_through_a_python_a_user_can_change(box):
    venv = _venv(box / "v")
    marker = box / "pth-ran"
    _plant_pth(_site(venv), marker)
    cache = box / "cache"
    for args in (("warm-cache", "--cache-dir", str(cache), "--run", f"{venv}/bin/python -c pass"),
                 ("cache", "why", "--cache-dir", str(cache), "--", f"{venv}/bin/python", "-c", "pass"),
                 ("trace", "--cache-dir", str(cache), "--", f"{venv}/bin/python", "-c", "pass")):
        done = _flexdoctor(*args)
        assert done.returncode == 2 and "refusing to run" in done.stderr, (args, done.stderr)
        assert not marker.exists()
    ran = box / "command-ran"  # the same command line through root's own Python runs as asked
    done = _flexdoctor("cache", "why", "--cache-dir", str(cache), "--", sys.executable, "-c", f"open({str(ran)!r}, 'w')")
    assert ran.exists() and "refusing" not in done.stderr, done.stderr


PLUGIN = textwrap.dedent('''
    import os
    open(os.environ["FD_PLUGIN_MARKER"], "w").write("loaded")
    from flexdoctor.checks import check
    from flexdoctor.model import Finding, Status

    @check("FD990", "planted-check", area="plugin", title="Planted")
    def planted(facts):
        """What it checks: nothing.

        Why it matters: nothing.

        How to fix: nothing.
        """
        return Finding(Status.PASS, "planted")
''')


def _plugin_dir(where: Path) -> Path:
    where.mkdir()
    (where / "fdplanted.py").write_text(PLUGIN)
    info = where / "fdplanted-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fdplanted\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[flexdoctor.checks]\nplanted = fdplanted:planted\n")
    return where


@needs_root
def test_as_root_a_plugin_loads_only_from_files_no_other_user_can_change(box):
    marker = box / "plugin-ran"
    theirs = _plugin_dir(box / "theirs")
    for p in [theirs, *theirs.rglob("*")]:
        os.chown(p, NOBODY, NOBODY)
    env = {"FD_TEST_SYSPATH": str(theirs), "FD_PLUGIN_MARKER": str(marker)}
    done = _flexdoctor("check", "--static", "--profile", "default", "--format", "json", env=env)
    assert not marker.exists(), "a plugin another user owns was imported as root"
    assert "not loaded as root" in done.stdout
    ours = _plugin_dir(box / "ours")  # the same plugin, root's own: it loads (the test can tell)
    env["FD_TEST_SYSPATH"] = str(ours)
    _flexdoctor("check", "--static", "--profile", "default", "--format", "json", env=env)
    assert marker.read_text() == "loaded"
