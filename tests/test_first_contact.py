"""Issue 21, what a new user hits: each item pinned by a test of the real behaviour.

Item 2 (a harmful fix), item 3 (the wrong interpreter), item 6 (commands that fail or
contradict) and the smaller items of 10 that are not another helper's.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import load_facts
from flexdoctor import checks, runner
from flexdoctor.facts import CacheFacts, CacheLocation, PathStat

ROOT = Path(__file__).resolve().parents[1]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def run_check(check_id: str, facts):
    spec = {s.id: s for s in checks.builtin()}[check_id]
    return runner.run_one(spec, facts)


def flexdoctor(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: int = 300):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHINDUCTOR_", "TRITON_"))}
    e.update(PYTHONPATH=str(ROOT), CI="1")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "flexdoctor", *args], capture_output=True, text=True,
                          env=e, timeout=timeout, cwd=cwd or ROOT)


# ------------------------------------------------------------------ item 2: never chmod a shared folder


def _cache_at(rows, uid: int, kind: str = "inductor"):
    f = load_facts("h100")
    chain = [PathStat(p, owner, mode, role) for p, owner, mode, role in rows]
    loc = CacheLocation(kind=kind, path=rows[0][0], source="TORCHINDUCTOR_CACHE_DIR", exists=True,
                        in_temp=True, owner_uid=rows[0][1], mode=rows[0][2], chain=chain)
    return dataclasses.replace(f, cache=CacheFacts(uid=uid, inductor=loc))


ROOT_DIR = ("/", 0, 0o755, "parent")


@pytest.mark.parametrize("rows", [
    [("/tmp", 0, 0o1777, "target"), ROOT_DIR],
    [("/dev/shm", 0, 0o1777, "target"), ("/dev", 0, 0o755, "parent"), ROOT_DIR],
    [("/var/tmp", 0, 0o1777, "target"), ("/var", 0, 0o755, "parent"), ROOT_DIR],
    [("/scratch", 0, 0o777, "target"), ROOT_DIR],  # any folder right under /: shared by the machine
    [("/home", 0, 0o775, "target"), ROOT_DIR],
    [("/data/shared", 0, 0o1777, "target"), ("/data", 0, 0o755, "parent"), ROOT_DIR],  # sticky: shared
])
def test_fd504_as_root_never_advises_chmod_on_a_shared_folder(rows):
    r = run_check("FD504", _cache_at(rows, uid=0))
    assert r.status.value == "fail"
    assert not any("chmod" in c or "chown" in c for c in r.fix.commands), r.fix.commands
    assert r.fix.kb == "FDE960"
    assert "mkdir -p -m 700 $HOME/.cache/torchinductor" in r.fix.commands
    assert "export TORCHINDUCTOR_CACHE_DIR=$HOME/.cache/torchinductor" in r.fix.commands


def test_fd504_chmod_stays_for_the_users_own_cache_dir():
    rows = [("/home/me/cache", 1000, 0o775, "target"), ("/home/me", 1000, 0o755, "parent"),
            ("/home", 0, 0o755, "parent"), ROOT_DIR]
    r = run_check("FD504", _cache_at(rows, uid=1000))
    assert r.fix.kb == "FDE953" and r.fix.commands == ("chmod go-w /home/me/cache",)


def test_fd504_triton_cache_moves_with_its_own_variable():
    rows = [("/dev/shm", 0, 0o1777, "target"), ("/dev", 0, 0o755, "parent"), ROOT_DIR]
    f = _cache_at(rows, uid=0)
    f = dataclasses.replace(f, cache=CacheFacts(uid=0, inductor=None, triton=dataclasses.replace(
        f.cache.inductor, kind="triton", source="TRITON_CACHE_DIR")))
    r = run_check("FD504", f)
    assert "export TRITON_CACHE_DIR=$HOME/.triton/cache" in r.fix.commands
    assert not any("chmod" in c for c in r.fix.commands)


@pytest.mark.skipif(not IS_ROOT, reason="the harm is root's: as root /tmp is 'yours'")
@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
def test_warm_cache_refusal_as_root_never_prints_chmod_of_a_system_folder(tmp_path, folder):
    if not os.path.isdir(folder):
        pytest.skip(f"no {folder} here")
    before = os.stat(folder).st_mode
    done = flexdoctor("warm-cache", "--device", "cpu", "--preset", "cpu-smoke", "--cache-dir", folder,
                      env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "chmod" not in done.stderr and "FDE960" in done.stderr
    assert "$ mkdir -p -m 700 $HOME/.cache/torchinductor" in done.stderr
    assert os.stat(folder).st_mode == before


# ------------------------------------------------------------------ item 3: the interpreter the user trains with


def _fake_env(root: Path, torch: bool, name: str = "train") -> Path:
    """A venv-shaped folder: pyvenv.cfg, bin/python (a link to this interpreter), and when
    ``torch`` a torch distribution in its site-packages (files only: decided without running it)."""
    env = root / name
    site = env / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True)
    (env / "bin").mkdir()
    (env / "bin" / "python").symlink_to(sys.executable)
    (env / "pyvenv.cfg").write_text(f"home = {os.path.dirname(sys.executable)}\ninclude-system-site-packages = false\n")
    if torch:
        (site / "torch").mkdir()
        (site / "torch" / "version.py").write_text("__version__ = '2.13.0+cpu'\n")
        (site / "torch-2.13.0+cpu.dist-info").mkdir()
    return env


@pytest.fixture
def no_run(monkeypatch):
    """Fail if the choice ran an interpreter: files must decide."""
    from flexdoctor.cli import _interp

    def ran(exe):
        raise AssertionError(f"ran {exe}")

    monkeypatch.setattr(_interp, "_asked_torch", ran)
    return _interp


def test_own_interpreter_without_torch_inspects_the_active_venv(tmp_path, no_run):
    train = _fake_env(tmp_path, torch=True)
    env = {"VIRTUAL_ENV": str(train), "PATH": "/nonexistent"}
    got = no_run.choose(None, environ=env, has_torch=lambda: False)
    assert got.path == str(train / "bin" / "python") and got.why == "VIRTUAL_ENV"
    line = no_run.note(got)
    assert str(train / "bin" / "python") in line and "$VIRTUAL_ENV" in line and "has no torch" in line


def test_conda_then_path_in_order_and_torchless_places_are_named(tmp_path, no_run):
    empty = _fake_env(tmp_path, torch=False, name="empty")
    conda = _fake_env(tmp_path, torch=True, name="conda")
    on_path = _fake_env(tmp_path, torch=True, name="onpath")
    env = {"VIRTUAL_ENV": str(empty), "CONDA_PREFIX": str(conda), "PATH": str(on_path / "bin")}
    got = no_run.choose(None, environ=env, has_torch=lambda: False)
    assert got.why == "CONDA_PREFIX" and got.path == str(conda / "bin" / "python")
    del env["CONDA_PREFIX"]
    got = no_run.choose(None, environ=env, has_torch=lambda: False)
    assert got.why == "python" and got.path == str(on_path / "bin" / "python")
    del env["PATH"]
    got = no_run.choose(None, environ=env, has_torch=lambda: False)
    assert got.why == "self" and got.path == sys.executable
    assert str(empty / "bin" / "python") in no_run.note(got)


def test_own_interpreter_with_torch_stays_the_target(tmp_path, no_run):
    env = {"VIRTUAL_ENV": str(_fake_env(tmp_path, torch=True))}
    got = no_run.choose(None, environ=env, has_torch=lambda: True)
    assert got.path == sys.executable and no_run.note(got) is None


@pytest.mark.skipif(not IS_ROOT, reason="needs a second uid to own the venv")
def test_a_venv_another_user_can_change_is_never_picked(tmp_path, no_run):
    train = _fake_env(tmp_path, torch=True)
    os.chown(train, 65534, 65534)
    os.chown(train / "bin", 65534, 65534)
    got = no_run.choose(None, environ={"VIRTUAL_ENV": str(train), "PATH": "/nonexistent"}, has_torch=lambda: False)
    assert got.why == "self"


def test_python_accepts_a_venv_folder(tmp_path):
    venv = tmp_path / "train"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    done = flexdoctor("facts", "--static", "--format", "json", "--raw", "--python", str(venv))
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(done.stdout)["python"]["executable"] == str(venv / "bin" / "python")
    bad = flexdoctor("check", "--static", "--python", str(tmp_path))
    assert bad.returncode == 2 and "no bin/python" in bad.stderr and "Traceback" not in bad.stderr


_WITHOUT_TORCH = """
import sys
import flexdoctor.cli._interp as i
i.own_has_torch = lambda: False  # flexdoctor installed in a venv of its own, pipx style
from flexdoctor.cli import main
sys.argv = ["flexdoctor"] + sys.argv[1:]
main()
"""


def test_check_says_at_the_top_which_interpreter_it_inspects(tmp_path):
    venv = tmp_path / "train"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    e = {k: v for k, v in os.environ.items() if k not in ("CI", "CONDA_PREFIX")}
    e.update(PYTHONPATH=str(ROOT), VIRTUAL_ENV=str(venv), FLEXDOCTOR_LANG="en", COLUMNS="400")
    done = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH, "check", "--static", "--only", "FD201"],
                          capture_output=True, text=True, env=e, timeout=120)
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"Inspecting {venv}/bin/python") and "$VIRTUAL_ENV" in first, done.stdout + done.stderr
    assert "FD201" in done.stdout and done.returncode == 0


def test_fd201_without_torch_names_the_interpreter_and_the_flag():
    import dataclasses as dc

    f = dc.replace(load_facts("cpu_only"), torch=None)
    r = run_check("FD201", f)
    assert r.message.startswith(f"no torch in {f.python.executable}; ")
    assert "flexdoctor inspects the interpreter your training runs with: --python PATH" in r.message
    assert "--python PATH" in r.fix.summary


# ------------------------------------------------------------------ item 6: commands that run, and agree


def _warm_cache_parses(command: str) -> dict:
    """The options `flexdoctor warm-cache` reads from a printed command, parsed by its own click
    command (a flag it does not know fails here). The comment after `#` is not part of it."""
    import typer.main

    from flexdoctor.cli import app

    argv = shlex.split(command, comments=True)
    assert argv[:2] == ["flexdoctor", "warm-cache"], command
    group = typer.main.get_command(app)
    cmd = group.get_command(None, "warm-cache")
    return cmd.make_context("warm-cache", argv[2:]).params


def _names_configs(params: dict) -> bool:
    """Would warm-cache find something to warm? (Its "nothing to warm" is exit 2.)"""
    keys = ("preset", "dtype", "head_dim", "mask", "score_mod", "seq_len", "run", "import_", "warm_config")
    return any(params.get(k) for k in keys)


def test_no_printed_warm_cache_command_warms_nothing():
    from flexdoctor import knowledge as kb

    for entry in kb._english().values():
        for cmd in entry.commands:
            if cmd.startswith("flexdoctor warm-cache"):
                assert _names_configs(_warm_cache_parses(entry.render().commands[entry.commands.index(cmd)])), \
                    (entry.id, cmd)


def _with_cache(machine: str, manifest=None):
    from flexdoctor.facts import CacheFacts, CacheLocation

    f = load_facts(machine)
    loc = CacheLocation(kind="inductor", path="/home/me/.cache/torchinductor", source="TORCHINDUCTOR_CACHE_DIR",
                        exists=True, in_temp=False, owner_uid=1000, mode=0o700)
    return dataclasses.replace(f, cache=CacheFacts(uid=1000, inductor=loc, manifest=manifest))


@pytest.mark.parametrize("machine", ["h100", "cpu_only"])
def test_fd505_never_warmed_names_a_command_that_warms(machine):
    r = run_check("FD505", _with_cache(machine))
    quoted = [part for i, part in enumerate(r.message.split("`")) if i % 2]
    assert quoted and all(_names_configs(_warm_cache_parses(q)) for q in quoted), r.message


def test_fd505_stale_rewarms_exactly_what_the_manifest_recorded():
    from flexdoctor import workload
    from flexdoctor.facts import CacheManifest

    names = ["bf16 B1 H32/8 L4096 D128 causal fwd+bwd cuda",
             "bf16 B2 H16 L2048/4096 D64 sliding:1024 softcap:30 dynamic max-autotune fullgraph BLOCK_M=64 fwd+bwd cuda"]
    m = CacheManifest(path="/home/me/.cache/torchinductor/flexdoctor-manifest.json", written_at="2026-01-01",
                      fingerprint={"torch": "2.10.0+cu128", "cuda": "12.8", "triton": "3.6.0"}, configs=names)
    r = run_check("FD505", _with_cache("h100", m))
    assert r.status.value == "warn"
    cmds = [c for c in r.fix.commands if c.startswith("flexdoctor warm-cache")]
    assert len(cmds) == 2
    for name, cmd in zip(names, cmds):
        p = _warm_cache_parses(cmd)
        w = workload.make(dtype=p["dtype"][0], head_dim=p["head_dim"][0], heads=p["heads"], kv_heads=p["kv_heads"],
                          seq_len=p["seq_len"][0], kv_len=p["kv_len"], batch=p["batch"], mask=p["mask"][0],
                          score_mod=(p["score_mod"] or ["none"])[0], device=p["device"], backward=p["backward"],
                          mode=(p["mode"] or ["default"])[0], dynamic=bool(p["dynamic"]),
                          fullgraph=bool(p["fullgraph"]),
                          kernel_options=workload.parse_kernel_options(p["kernel_option"] or ()))
        assert w.name == name


@pytest.mark.slow
def test_fd505_rewarm_command_really_warms_on_this_machine(tmp_path):
    from flexdoctor.facts import CacheManifest

    name = "fp32 B1 H2 L128 D16 causal fwd cpu"
    m = CacheManifest(path=str(tmp_path / "m.json"), fingerprint={"torch": "2.12.0+cpu"}, configs=[name])
    cmd = next(c for c in run_check("FD505", _with_cache("cpu_only", m)).fix.commands if "warm-cache" in c)
    argv = shlex.split(cmd)[1:] + ["--cache-dir", str(tmp_path / "cache"), "--jobs", "1"]
    done = flexdoctor(*argv, env={"HOME": str(tmp_path)}, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_extensions_profile_names_a_cuda_build_that_exists():
    from conftest import torch_pin_of
    from flexdoctor import policy

    specs = [s for s in checks.builtin() if s.id == "FD401"]
    report = runner.run(specs, load_facts("cpu_only"), settings=policy.Settings(profile=policy.PROFILES["extensions"]))
    fix = report.results[0].fix
    assert "+cpu" not in fix.summary and "torch 2.13.0" in fix.summary
    install = [c for c in fix.commands if "pip install" in c]
    assert len(install) == 1
    version, variant, _ = torch_pin_of(install[0])
    from flexdoctor import wheels

    assert version == "2.13.0" and variant == wheels.table().release("2.13.0").pypi["linux-x86_64"] == "cu130"


def test_fd402_and_fd403_export_one_cuda_home():
    from flexdoctor.facts import CudaHome

    f = load_facts("h100")
    home = CudaHome(path="/opt/wrapper", source="nvcc", is_dir=True, cuda_h=False, cuda_runtime_h=False, nvcc=None)
    tc = dataclasses.replace(f.toolchain, cuda_home=home, nvcc=None,
                             cuda_installs=["/usr/local/cuda-13.0", "/usr/local/cuda-12.8"])
    f = dataclasses.replace(f, toolchain=tc)
    fd402, fd403 = run_check("FD402", f), run_check("FD403", f)
    exports = {c for r in (fd402, fd403) for c in r.fix.commands if c.startswith("export CUDA_HOME=")}
    assert fd402.status.value == fd403.status.value == "warn"
    assert exports == {"export CUDA_HOME=/usr/local/cuda-13.0"}


def _broken_import(kind: str, detail: str, machine: str = "cpu_only", python: str = "/opt/my envs/train/bin/python"):
    from flexdoctor.facts import ProbeError

    f = load_facts(machine)
    f = dataclasses.replace(f, python=dataclasses.replace(f.python, executable=python, platform="linux"))
    return dataclasses.replace(f, torch_runtime=ProbeError(detail.splitlines()[-1], kind=kind, stage="import torch",
                                                           detail=detail))


def test_broken_import_fixes_run_pip_in_the_inspected_interpreter():
    detail = ("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
              "ImportError: /x/nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: "
              "__nvJitLinkComplete_12_4, version libnvJitLink.so.12")
    r = run_check("FD202", _broken_import("error", detail))
    pythons = [c for c in r.fix.commands if "python" in c]
    assert pythons and all("'/opt/my envs/train/bin/python'" in c for c in pythons), r.fix.commands


@pytest.mark.parametrize("machine", ["cpu_only", "h100"])
def test_import_timeout_is_not_advised_as_a_wrong_build(machine):
    r = run_check("FD202", _broken_import("timeout", "the torch probe did not answer in 60 s", machine))
    assert r.status.value == "fail" and r.fix.kb == "FDE208"
    assert not any("pip install" in c or "--index-url" in c for c in r.fix.commands)
    assert "faulthandler" in r.fix.commands[0] and "'/opt/my envs/train/bin/python'" in r.fix.commands[0]
    assert ("timeout 30 nvidia-smi" in r.fix.commands) == (machine == "h100")


# ------------------------------------------------------------------ item 10: smaller things (facts, bench)


def test_facts_text_prints_modes_in_octal_and_nvcc_once():
    from flexdoctor.facts import CudaHome, Nvcc
    from flexdoctor.render import facts_view

    f = load_facts("h100")
    out = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88"
    nvcc = Nvcc(path="/usr/local/cuda/bin/nvcc", version="13.0", output=out)
    home = CudaHome(path="/usr/local/cuda", source="CUDA_HOME", is_dir=True, cuda_h=True, cuda_runtime_h=True,
                    version="13.0", nvcc=nvcc)
    f = dataclasses.replace(f, toolchain=dataclasses.replace(f.toolchain, nvcc=nvcc, cuda_home=home),
                            cache=_cache_at([("/tmp/c", 0, 0o1777, "target"), ("/", 0, 0o755, "parent")], 0).cache)
    text = facts_view.render(f, fmt="text", redact=False)
    assert text.count("Cuda compilation tools") == 1
    assert "mode: 0o1777 (rwxrwxrwt)" in text and "mode: 0o755 (rwxr-xr-x)" in text
    assert "mode: 1023" not in text and "mode: 493" not in text
    assert all(not ln.startswith("Cuda") for ln in text.splitlines())  # multi-line output stays indented


def test_bench_never_cuts_torchs_refusal_reason():
    from flexdoctor.deep import bench as b
    from flexdoctor.render import bench_view
    from flexdoctor import workload as wl

    reason = ("Flash attention requires q,k,v to have the same last dimension and to be less than or equal "
              "to 256. Got Query.size(-1): 512, Key.size(-1): 512, Value.size(-1): 512 instead.")
    case = b.Case(0, wl.make(device="cuda", batch=1, heads=8, seq_len=1024, head_dim=512, dtype="bfloat16"))
    rep = b.BenchReport(cases=[case], results=[b.Measurement(0, "sdpa-flash", "fwd", "unavailable", reason=reason)],
                        env={"device": "cuda"}, started_at="2026", settings={"reps": 5})
    for width in (100, 200):
        text = bench_view.render_text(rep, color=False, width=width)
        assert "…" not in text
        flat = " ".join(" ".join(text.split()).split())
        assert "Got Query.size(-1): 512, Key.size(-1): 512, Value.size(-1): 512 instead." in flat, text
