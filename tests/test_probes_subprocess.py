"""Real subprocesses: fake target interpreters and fake toolchains must become clean results.

Each fake is a real executable. Whatever it does (raise, hang, segfault, print garbage), the
probe returns a ProbeError and the report renders without a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from flexdoctor import checks, runner
from flexdoctor.facts import CudaHome, Facts, ProbeError
from flexdoctor.model import Status
from flexdoctor.probes import gather, toolchain, torch_runtime
from flexdoctor.render import Format, renderer

FIXTURES = Path(__file__).parent / "fixtures" / "facts"


def _exe(path: Path, body: str) -> Path:
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fake_python(tmp_path: Path, torch_probe_behaviour: str) -> Path:
    """An interpreter that is the real one, except when it runs flexdoctor's torch probe."""
    lines = [
        "#!/bin/bash",
        'case "$1" in',
        f"  *_torch_probe.py) {torch_probe_behaviour} ;;",
        f'  *) exec {sys.executable} "$@" ;;',
        "esac",
    ]
    return _exe(tmp_path / "python", "\n".join(lines) + "\n")


def broken_torch_dir(tmp_path: Path, init: str) -> Path:
    pkg = tmp_path / "site" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(init)
    return tmp_path / "site"


def run_checks(facts: Facts):
    return {r.id: r for r in runner.run(checks.builtin(), facts).results}


def assert_clean_report(facts: Facts):
    report = runner.run(checks.builtin(), facts)
    for fmt in Format:
        out = renderer(fmt)(report)
        if fmt == Format.json:
            json.loads(out)  # the user's own import traceback may be kept as data in facts
        else:
            assert "Traceback (most recent call last)" not in out
    assert all(r.status != Status.ERROR for r in report.results), [
        (r.id, r.message) for r in report.results if r.status == Status.ERROR
    ]
    return report


def test_import_raises(tmp_path):
    site = broken_torch_dir(
        tmp_path, "raise ImportError('libcudnn.so.9: cannot open shared object file: No such file or directory')\n"
    )
    py = fake_python(tmp_path, f'PYTHONPATH={site} exec {sys.executable} "$@"')
    rt = torch_runtime.probe(str(py), timeout=60)
    assert isinstance(rt, ProbeError)
    assert rt.kind == "import-error" and rt.stage == "import torch"
    assert "libcudnn.so.9" in rt.message
    facts = gather(str(py))
    r = run_checks(facts)["FD202"]
    assert r.status == Status.FAIL
    assert "libcudnn.so.9" in r.message
    assert_clean_report(facts)


def test_import_hangs(tmp_path):
    py = fake_python(tmp_path, 'echo "@@flexdoctor-stage import torch"; exec sleep 60')
    facts = gather(str(py), timeouts={"torch_runtime": 2})
    rt = facts.torch_runtime
    assert isinstance(rt, ProbeError) and rt.kind == "timeout"
    assert rt.stage == "import torch"
    r = run_checks(facts)["FD202"]
    assert r.status == Status.FAIL and "import torch" in r.message
    assert_clean_report(facts)


def test_segfault_during_cuda_init(tmp_path):
    script = (
        "import os, signal, sys;"
        "print('@@flexdoctor-stage import torch');"
        "print('@@flexdoctor-stage torch.cuda.is_available'); sys.stdout.flush();"
        "os.kill(os.getpid(), signal.SIGSEGV)"
    )
    py = fake_python(tmp_path, f'exec {sys.executable} -c "{script}"')
    facts = gather(str(py))
    rt = facts.torch_runtime
    assert isinstance(rt, ProbeError) and rt.kind == "crash"
    assert "SIGSEGV" in rt.message and rt.stage == "torch.cuda.is_available"
    r = run_checks(facts)["FD202"]
    assert r.status == Status.FAIL and "torch.cuda.is_available" in r.message
    assert_clean_report(facts)


@pytest.mark.parametrize("output", ["hello from a sitecustomize\n", "@@flexdoctor-result {not json\n", ""])
def test_garbage_output(tmp_path, output):
    (tmp_path / "out.txt").write_text(output)
    py = fake_python(tmp_path, f"cat {tmp_path / 'out.txt'}; exit 0")
    facts = gather(str(py))
    rt = facts.torch_runtime
    assert isinstance(rt, ProbeError) and rt.kind == "garbage"
    assert run_checks(facts)["FD202"].status == Status.FAIL
    assert_clean_report(facts)


def test_interpreter_that_is_not_python(tmp_path):
    py = _exe(tmp_path / "python", "#!/bin/sh\necho not a python; exit 3\n")
    facts = gather(str(py), timeouts={"torch_runtime": 10})
    assert isinstance(facts.python, ProbeError)
    assert isinstance(facts.torch_runtime, ProbeError)
    assert_clean_report(facts)


def test_cli_with_broken_interpreter_has_no_traceback(tmp_path):
    site = broken_torch_dir(tmp_path, "raise OSError('libtorch_cuda.so: cannot open shared object file')\n")
    py = fake_python(tmp_path, f'PYTHONPATH={site} exec {sys.executable} "$@"')
    done = subprocess.run(
        [sys.executable, "-m", "flexdoctor", "check", "--python", str(py), "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    data = json.loads(done.stdout)  # facts keep the user's own import traceback, as data
    fd202 = next(r for r in data["results"] if r["id"] == "FD202")
    assert fd202["status"] == "fail" and "libtorch_cuda.so" in fd202["message"]


# ----------------------------------------------------------------- toolchain fakes


@pytest.fixture
def clean_toolchain_env(monkeypatch, tmp_path):
    for var in ("CUDA_HOME", "CUDA_PATH", "CC", "CXX", "TRITON_LIBCUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    return bin_dir


def test_nvcc_other_version(clean_toolchain_env):
    _exe(clean_toolchain_env / "nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 11.8, V11.8.89'\n")
    n = toolchain.nvcc()
    assert n.version == "11.8" and n.path.endswith("/nvcc")


def test_nvcc_prints_nothing(clean_toolchain_env):
    _exe(clean_toolchain_env / "nvcc", "#!/bin/sh\nexit 0\n")
    n = toolchain.nvcc()
    assert n is not None and n.version is None


def test_nvcc_fails(clean_toolchain_env):
    _exe(clean_toolchain_env / "nvcc", "#!/bin/sh\necho 'nvcc: error while loading shared libraries' >&2; exit 127\n")
    n = toolchain.nvcc()
    assert isinstance(n, ProbeError) and n.reason == "exit_status" and n.args["status"] == 127
    assert "exited with status 127" in n.message and "error while loading shared libraries" in n.detail


def test_nvcc_hangs(clean_toolchain_env):
    _exe(clean_toolchain_env / "nvcc", "#!/bin/sh\nexec sleep 60\n")
    n = toolchain.nvcc(timeout=1)
    assert isinstance(n, ProbeError) and n.kind == "timeout" and n.reason == "timeout"
    assert "did not finish in time" in n.message


def test_cuda_home_is_a_file(clean_toolchain_env, monkeypatch, tmp_path):
    f = tmp_path / "not-a-dir"
    f.write_text("")
    monkeypatch.setenv("CUDA_HOME", str(f))
    home = toolchain.cuda_home()
    assert home == CudaHome(path=str(f), source="CUDA_HOME", is_dir=False, cuda_h=False, cuda_runtime_h=False)


def test_cuda_home_empty_dir(clean_toolchain_env, monkeypatch, tmp_path):
    d = tmp_path / "cuda"
    d.mkdir()
    monkeypatch.setenv("CUDA_HOME", str(d))
    home = toolchain.cuda_home()
    assert home.is_dir and not home.cuda_h and home.version is None


def test_cuda_home_from_nvcc_parent(clean_toolchain_env, tmp_path):
    root = tmp_path / "cuda-12.8"
    (root / "bin").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "include" / "cuda.h").write_text("#define CUDA_VERSION 12080\n")
    (root / "include" / "cuda_runtime.h").write_text("")
    _exe(root / "bin" / "nvcc", "#!/bin/sh\necho 'release 12.8, V12.8.93'\n")
    os.environ["PATH"] = f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}"
    home = toolchain.cuda_home()
    assert home.source == "nvcc" and home.path == str(root)
    assert home.cuda_h and home.cuda_runtime_h and home.version == "12.8"


def test_cc_env_points_nowhere(clean_toolchain_env, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    cc = toolchain.c_compiler()
    assert cc.source == "CC" and cc.path is None


def test_toolchain_checks_on_gpu_fixture(clean_toolchain_env, monkeypatch, tmp_path):
    """Real probes of broken toolchains, judged on a GPU machine's recorded facts."""
    base = Facts.from_dict(json.loads((FIXTURES / "h100.json").read_text()))
    _exe(clean_toolchain_env / "nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 11.8, V11.8.89'\n")
    f = tmp_path / "file"
    f.write_text("")
    monkeypatch.setenv("CUDA_HOME", str(f))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    facts = dataclasses.replace(base, toolchain=toolchain.probe())
    r = run_checks(facts)
    assert r["FD401"].status == Status.PASS  # nvcc found...
    assert r["FD402"].status == Status.WARN  # ...but 11.8 against torch's CUDA 13
    assert r["FD403"].status == Status.WARN and "not a directory" in r["FD403"].message
    assert r["FD304"].status == Status.FAIL and "/nonexistent/cc" in r["FD304"].message
    assert_clean_report(facts)


# --------------------------------------------------------------------------- NVML without pynvml

def test_gpu_probe_shortcut_says_what_pynvml_says(monkeypatch):
    """Without libnvidia-ml.so.1 the GPU probe answers before importing pynvml, word for word as
    pynvml's own nvmlInit failure (with the GPU driver installed the shortcut is not taken)."""
    import ctypes

    from flexdoctor.probes import gpu

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
        pytest.skip("the NVIDIA driver's NVML is installed here")
    except OSError:
        pass
    fast = gpu.probe()
    assert fast.nvml == "no-library" and fast.nvml_error == gpu.LIBRARY_NOT_FOUND
    monkeypatch.setattr(gpu, "_no_library", lambda: False)  # the pynvml path
    assert gpu.probe() == fast


def test_gpu_probe_shortcut_only_on_a_failed_dlopen(monkeypatch):
    import ctypes

    from flexdoctor.probes import gpu

    calls = []
    monkeypatch.setattr(ctypes, "CDLL", lambda name: calls.append(name) or object())
    assert gpu._no_library() is False and calls == ["libnvidia-ml.so.1"]
    monkeypatch.setattr(gpu.sys, "platform", "win32")
    assert gpu._no_library() is False and calls == ["libnvidia-ml.so.1"]  # Windows: pynvml decides


def test_hostname_without_socket_is_sockets_answer():
    import socket

    from flexdoctor.probes import host

    assert host._hostname() == socket.gethostname()
