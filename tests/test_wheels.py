"""The torch wheel table (flexdoctor/wheels/torch_wheels.toml) and the advice derived from it.

Every command flexdoctor prints to install torch must run as printed: the (torch, variant) pair
exists, has a wheel for the user's OS, CPU and Python, carries every GPU's architecture and runs
on the driver (or the advice says which driver it needs). The matrix test checks that for every
recommendation against a brute-force search of the table; the network test (opt-in,
FLEXDOCTOR_NETWORK_TESTS=1) checks the table against the real indexes.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import urllib.request
from importlib import metadata

import pytest

from conftest import facts_fixture_names, load_facts, load_facts_dict, parse_pip_install, torch_pin_of
from flexdoctor import checks, knowledge, runner, wheels
from flexdoctor.facts import Facts
from flexdoctor.knowledge import explain as kb_explain

T = wheels.table()
NEWEST = T.releases[0]

DRIVERS = (None, "11.4", "11.8", "12.2", "12.4", "12.8", "12.9", "13.0", "13.2")
GPUS = ((5, 0), (6, 0), (6, 1), (7, 0), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (10, 3),
        (11, 0), (12, 0), (12, 1))
PYTHONS = ((3, 8), (3, 10), (3, 12), (3, 15))
KEEPS = (None, "2.4.1", "2.8.0", "2.11.0", "2.15.0")


def _driver_major(driver):
    return None if driver is None else int(driver.split(".")[0])


def _fits(release, tag, variant, m: wheels.Machine, *, driver=True, arch=True) -> bool:
    """Brute-force reference: does this pair fit the machine? Written from the rules, not the code."""
    if m.python is not None and not release.python_ok(m.python, m.platform):
        return False
    if not m.platform.startswith("macos") and not tag.startswith({"cuda": "cu", "rocm": "rocm", "cpu": "cpu"}[m.kind]):
        return False
    if arch and m.kind == "cuda":
        for cc in m.gpu_ccs:
            if not wheels.carries(variant.archs, cc):
                return False
    major = _driver_major(m.driver_cuda)
    if driver and tag.startswith("cu") and major is not None and int(tag[2:-1]) > major:
        return False
    return True


def _all_fitting(m, **kw):
    return [(r, tag) for r in T.releases for tag, v in r.variants.get(m.platform, {}).items() if _fits(r, tag, v, m, **kw)]


# ------------------------------------------------------------------------------------- the table


def test_table_is_complete_and_consistent():
    versions = [r.version for r in T.releases]
    assert versions == sorted(versions, key=lambda v: tuple(int(x) for x in v.split(".")), reverse=True)
    assert {"2.4.0", "2.7.1", "2.11.0", "2.12.0", "2.14.1", "2.15.0"} <= set(versions)
    for r in T.releases:
        assert set(r.variants) == set(wheels.PLATFORMS), r.version
        for platform in wheels.PLATFORMS:
            # The build PyPI ships is one of the listed builds (also on the pytorch index).
            assert r.pypi[platform] in r.variants[platform], (r.version, platform)
            for tag, v in r.variants[platform].items():
                assert re.fullmatch(r"cu\d{3}|cpu|rocm\d+(\.\d+)+", tag), tag
                if v.cuda is not None:
                    assert v.cuda[0] in T.drivers, f"no driver floor for {tag}"
                    assert v.archs, f"{r.version} {platform} {tag} carries no arch"
                else:
                    assert not v.archs
        assert r.triton and r.triton.startswith("triton")
        assert r.variants["macos-arm64"].keys() == {"cpu"}
        assert all(t == "cpu" for t in r.variants["windows-x86_64"] if not t.startswith("cu"))
        # Windows wheels carry no PTX ("+PTX available on linux builds only").
        assert not any(a.startswith("compute_") for v in r.variants["windows-x86_64"].values() for a in v.archs)


def test_the_facts_issue_12_is_about():
    """torch 2.12 and later publish no cu128 wheels (the command that failed); cu118 stops at
    2.7.1; 2.15 drops cu126, so Maxwell/Pascal/Volta have no 2.15 wheel."""
    assert T.newest_with("linux-x86_64", "cu128").version == "2.11.0"
    assert T.newest_with("linux-x86_64", "cu118").version == "2.7.1"
    assert T.newest_with("linux-x86_64", "cu121").version == "2.5.1"
    assert T.newest_with("linux-x86_64", "cu124").version == "2.6.0"
    assert T.newest_with("linux-x86_64", "cu129").version == "2.8.0"
    assert T.release("2.13.0").variant("linux-x86_64", "cu128") is None
    assert T.release("2.15.0").variant("linux-x86_64", "cu126") is None
    assert not any(wheels.carries(v.archs, (7, 0)) for v in T.release("2.15.0").variants["linux-x86_64"].values())
    # Default PyPI builds, read from the wheels' Requires-Dist.
    assert T.release("2.10.0").pypi["linux-x86_64"] == "cu128"
    assert T.release("2.11.0").pypi["linux-x86_64"] == "cu130"
    assert T.release("2.11.0").pypi["linux-aarch64"] == "cu130"
    assert T.release("2.10.0").pypi["linux-aarch64"] == "cpu"
    assert T.release("2.15.0").pypi["linux-x86_64"] == "cu132"
    # NVIDIA's minor-version compatibility floors.
    assert (T.drivers[11].linux, T.drivers[11].windows) == ("450.80.02", "452.39")
    assert (T.drivers[12].linux, T.drivers[12].windows) == ("525.60.13", "528.33")
    assert T.drivers[13].allows("580.65.06", "linux-x86_64") and not T.drivers[13].allows("575.57.08", "linux-x86_64")


def _installed_torch_file(relpath: str):
    try:
        dist = metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        return None, None
    path = dist.locate_file(relpath)
    return dist.version, (path if os.path.exists(str(path)) else None)


def test_table_agrees_with_the_installed_torch():
    """The torch installed here ships its own copy of the release arch lists
    (torch/cuda/__init__.py PYTORCH_RELEASES_CODE_CC, 2.13+; read as text, torch is not imported)
    and its Triton pin: the table agrees with both."""
    import ast

    installed, path = _installed_torch_file("torch/cuda/__init__.py")
    if path is None:
        pytest.skip("torch is not installed here")
    release = T.release(installed)
    if release is None:
        pytest.skip(f"torch {installed} is not a release in the table")
    codes = None
    for node in ast.parse(open(path, encoding="utf-8").read()).body:
        target = getattr(node, "target", None) or (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "PYTORCH_RELEASES_CODE_CC":
            codes = ast.literal_eval(node.value)
    if codes is None:
        pytest.skip(f"torch {installed} has no PYTORCH_RELEASES_CODE_CC")
    compared = 0
    for cuda, by_arch in codes.items():
        tag = "cu" + cuda.replace(".", "")
        for host, platform in (("x86_64", "linux-x86_64"), ("aarch64", "linux-aarch64")):
            v = release.variant(platform, tag)
            if v is None:
                continue  # e.g. "12.9": a nightly-only build in 2.13, not published for the release
            sm = {int(a[3:]) for a in v.archs if a.startswith("sm_")}
            assert sm == set(by_arch[host]), (installed, platform, tag)
            compared += 1
    assert compared >= 4
    reqs = [r for r in (metadata.requires("torch") or []) if r.startswith("triton")]
    if reqs:  # a +cpu wheel requires no Triton
        assert reqs[0].split(";")[0].replace(" ", "") == release.triton


@pytest.mark.parametrize(("arch", "cc", "runs"), [
    ("sm_80", (8, 6), True), ("sm_86", (8, 9), True), ("sm_80", (8, 7), False), ("sm_87", (8, 7), True),
    ("sm_90", (10, 0), False), ("sm_90a", (9, 0), True), ("sm_90a", (9, 1), False), ("sm_100", (10, 3), True),
    ("sm_120", (12, 1), True), ("sm_100", (11, 0), False), ("compute_120", (13, 0), True),
    ("compute_120", (10, 0), False), ("sm_50", (6, 1), False), ("sm_60", (6, 1), True), ("sm_100f", (10, 3), True),
])
def test_arch_runs(arch, cc, runs):
    assert wheels.arch_runs(arch, cc) is runs


# --------------------------------------------------------------------------------- the advice


_pin_of = functools.lru_cache(maxsize=None)(torch_pin_of)  # pip's parser is slow; commands repeat


def _check_advice(m: wheels.Machine, keep, advice, where: str) -> None:
    fitting = _all_fitting(m)
    if advice is None:
        assert not _all_fitting(m, driver=False, arch=False), f"{where}: a pair exists but none was advised"
        return
    rel, var = advice.release, advice.variant
    # The pair exists for this OS and CPU, and has a wheel for the Python.
    assert T.release(rel.version) is rel and rel.variant(m.platform, var.tag) is var, where
    assert m.python is None or rel.python_ok(m.python, m.platform), where
    strict = (rel, var.tag) in fitting
    if fitting:
        assert strict and advice.needs_driver is None and not advice.missing_archs, f"{where}: {fitting[:3]}"
        kept = [p for p in fitting if keep and p[0].key == wheels._version_key(keep)]
        best = max(p[0].key for p in (kept or fitting))
        assert rel.key == best, f"{where}: advised {rel.version}, newest fitting {best}"
    elif advice.missing_archs:
        # Nothing published for this OS and Python carries some GPU's arch: said so, never hidden.
        assert not _all_fitting(m, driver=False), where
        assert set(advice.missing_archs) == {cc for cc in m.gpu_ccs if not wheels.carries(var.archs, cc)}, where
        assert (advice.needs_driver is None) == _fits(rel, var.tag, var, m, arch=False), where
    else:
        # Nothing runs on this driver: the advised pair carries the archs and names its driver.
        assert advice.needs_driver is not None and all(wheels.carries(var.archs, cc) for cc in m.gpu_ccs), where
        assert var.cuda[0] > _driver_major(m.driver_cuda) and advice.needs_driver.cuda_major == var.cuda[0], where
    # The command pip would be given: flags pip knows, a requirement that parses, an index that
    # has this build of this release.
    command = f"python -m pip install --force-reinstall {advice.pip_args()}"
    version, tag, _ = _pin_of(command)
    assert version == rel.version
    if m.platform.startswith("macos"):
        assert tag is None, where
    else:
        assert tag == var.tag and rel.variant(m.platform, tag) is not None, where


def test_matrix_of_machines():
    count = 0
    for platform, driver, cc, python, keep in itertools.product(wheels.PLATFORMS, DRIVERS, GPUS, PYTHONS, KEEPS):
        if platform.startswith("macos") and (driver or cc != GPUS[0]):
            continue  # no NVIDIA GPU on a Mac
        kind = "cpu" if platform.startswith("macos") else "cuda"
        m = wheels.Machine(platform=platform, driver_cuda=driver, gpu_ccs=() if kind == "cpu" else (cc,),
                           python=python, kind=kind)
        advice = wheels.recommend(m, keep=keep)
        _check_advice(m, keep, advice, f"{platform} driver={driver} sm={cc} py={python} keep={keep}")
        count += 1
    assert count > 5000


def test_mixed_gpus_and_cpu_machines():
    for platform, ccs, python in itertools.product(("linux-x86_64", "windows-x86_64", "linux-aarch64"),
                                                  (((7, 0), (12, 0)), ((8, 0), (9, 0)), ((7, 5), (10, 0))),
                                                  ((3, 10), (3, 12))):
        m = wheels.Machine(platform=platform, driver_cuda="13.0", gpu_ccs=ccs, python=python)
        _check_advice(m, None, wheels.recommend(m), f"{platform} {ccs} {python}")
    for platform in wheels.PLATFORMS:
        m = wheels.Machine(platform=platform, python=(3, 12), kind="cpu")
        advice = wheels.recommend(m, keep="2.9.1")
        assert advice.torch == "2.9.1" and advice.variant.tag == "cpu"


def test_keeps_the_release_and_switches_only_the_build():
    m = wheels.Machine(driver_cuda="12.2", gpu_ccs=((8, 0),), python=(3, 11))
    advice = wheels.recommend(m, keep="2.11.0")
    assert (advice.torch, advice.variant.tag) == ("2.11.0", "cu126")
    # torch 2.13 on a CUDA 11.4 driver: no 2.13 build runs there; the newest that does is cu118's.
    m = wheels.Machine(driver_cuda="11.4", gpu_ccs=((8, 0),), python=(3, 11))
    advice = wheels.recommend(m, keep="2.13.0")
    assert (advice.torch, advice.variant.tag) == ("2.7.1", "cu118")
    # The installed build is kept for a plain reinstall when it fits.
    m = wheels.Machine(driver_cuda="13.0", gpu_ccs=((9, 0),), python=(3, 12))
    assert wheels.recommend(m, keep="2.11.0", prefer="cu128").variant.tag == "cu128"
    assert wheels.recommend(m, keep="2.11.0").variant.tag == "cu130"


def test_driver_upgrade_is_named_when_nothing_runs():
    # Python 3.15 has wheels only from torch 2.15, which needs a CUDA 13 driver.
    m = wheels.Machine(driver_cuda="12.8", gpu_ccs=((9, 0),), python=(3, 15))
    advice = wheels.recommend(m)
    assert advice.torch == "2.15.0" and advice.needs_driver is T.drivers[13]


def test_companions_follow_torch():
    m = wheels.Machine(platform="windows-x86_64", driver_cuda="12.7", gpu_ccs=((8, 6),), python=(3, 11),
                       companions=("torchvision", "torchaudio"))
    advice = wheels.recommend(m, keep="2.6.0")
    assert advice.spec() == "torch==2.6.0 torchvision==0.21.0 torchaudio==2.6.0"
    advice = wheels.recommend(m)  # newest: 2.14.1; torchaudio's last release needs no pin
    assert advice.spec() == f"torch=={advice.torch} torchvision=={advice.release.torchvision}"
    m = wheels.Machine(driver_cuda="13.0", gpu_ccs=((9, 0),), python=(3, 12), companions=("torchvision",))
    assert wheels.recommend(m, keep="2.15.0").spec() == "torch==2.15.0 torchvision"


# ------------------------------------------------------------------------ what flexdoctor prints


def _torch_commands(result) -> list[str]:
    """The fix commands of a result that install torch (a `torch` requirement, not pytorch-triton)."""
    out = []
    for c in (result.fix.commands if result.fix else ()):
        if "pip install" in c and any(re.match(r"torch(?:[=<>~! ]|$)", a) for a in parse_pip_install(c)[1]):
            out.append(c)
    return out


@pytest.mark.parametrize("name", facts_fixture_names())
def test_every_printed_torch_command_fits_the_machine(name):
    facts = load_facts(name)
    from flexdoctor.checks import _util as u

    m = u.machine(facts)
    for r in runner.run(checks.builtin(), facts).results:
        for command in _torch_commands(r):
            version, tag, companions = torch_pin_of(command)
            assert version, f"{name} {r.id}: torch not pinned in {command!r}"
            rel = T.release(version)
            assert rel is not None, f"{name} {r.id}: torch {version} is not a release"
            if m.platform.startswith("macos"):
                assert tag is None
                continue
            variant = rel.variant(m.platform, tag)
            assert variant is not None, f"{name} {r.id}: no {tag} build of torch {version} for {m.platform}"
            if variant.kind == "cuda" and m.gpu_ccs:
                assert all(wheels.carries(variant.archs, cc) for cc in m.gpu_ccs), f"{name} {r.id}: {command}"
                assert wheels.runs_on_driver(variant, m), f"{name} {r.id}: {command}"
            for c in companions:
                pin = getattr(rel, c.name)
                assert pin is None or str(c.specifier) == f"=={pin}", f"{name} {r.id}: {c}"


def test_rocm_reinstall_stays_on_rocm():
    d = load_facts_dict("rocm")
    d["torch_runtime"] = {"probe_error": {"kind": "crash", "message": "Segmentation fault", "stage": "import torch"}}
    facts = Facts.from_dict(d)
    from flexdoctor.checks import _util as u

    ctx = u.wheel_context(facts, same_build=True)
    assert ctx["index_args"].endswith("/whl/rocm6.4") and ctx["torch_spec"] == "torch==2.8.0"


def test_knowledge_defaults_are_real_commands():
    """explain prints entries with their defaults: every pip command parses, and a torch index in
    one names a build that the newest release satisfying the requirement has."""
    from packaging.requirements import Requirement

    seen = 0
    for entry in knowledge.entries().values():
        for command in entry.render().commands:
            if "pip install" not in command:
                continue
            options, args = parse_pip_install(command)
            reqs = [Requirement(a) for a in args if "{" not in a]
            torch = [r for r in reqs if r.name == "torch"]
            if torch and options.index_url.startswith(wheels.INDEX):
                tag = options.index_url.rsplit("/", 1)[1]
                newest = T.newest_with("linux-x86_64", tag)
                assert newest is not None and torch[0].specifier.contains(newest.version), (entry.id, command)
                seen += 1
    assert seen >= 9


def test_explain_reads_the_driver_from_the_log():
    log = ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
           "Please update your GPU driver by downloading and installing a new version from the URL: "
           "http://www.nvidia.com/Download/index.aspx\n")
    result = kb_explain.scan_text(log)
    problem = next(p for p in result.problems if p.entry.id == "FDE105")
    fix = problem.entry.render(**problem.context)
    version, tag, _ = torch_pin_of(next(c for c in fix.commands if "pip install" in c))
    assert (version, tag) == ("2.7.1", "cu118")  # CUDA 11.4 driver: cu118 is the only CUDA 11 build left
    result = kb_explain.scan_text(log.replace("11040", "12020"))
    problem = next(p for p in result.problems if p.entry.id == "FDE105")
    version, tag, _ = torch_pin_of(next(c for c in problem.entry.render(**problem.context).commands if "pip" in c))
    assert tag.startswith("cu12") and version == T.newest_with("linux-x86_64", tag).version


# --------------------------------------------------------------------- against the real indexes

network = pytest.mark.skipif(os.environ.get("FLEXDOCTOR_NETWORK_TESTS") != "1",
                             reason="network test: set FLEXDOCTOR_NETWORK_TESTS=1 to check the table against the indexes")

_WHEEL_PLATFORM = {"linux-x86_64": r"(?:manylinux[\w.]*|linux)_x86_64", "linux-aarch64": r"(?:manylinux[\w.]*|linux)_aarch64",
                   "windows-x86_64": r"win_amd64", "macos-arm64": r"macosx_\d+_\d+_arm64"}


def _get(url: str, accept: str = "text/html") -> str:
    req = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "flexdoctor-tests"})
    with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310 - fixed https URLs
        return resp.read().decode("utf-8", "replace")


@network
@pytest.mark.network
def test_every_listed_build_is_on_the_pytorch_index():
    pages: dict[str, str] = {}
    missing = []
    for rel in T.releases:
        for platform, variants in rel.variants.items():
            if platform.startswith("macos"):
                continue
            for tag in variants:
                if tag not in pages:
                    pages[tag] = _get(f"{wheels.INDEX}/{tag}/torch/")
                # CPU wheels for aarch64 carried no "+cpu" label before 2.10 (test-infra#7589).
                label = rf"(?:(?:%2B|\+){re.escape(tag)})" + ("?" if tag == "cpu" else "")
                pattern = rf"torch-{re.escape(rel.version)}{label}-[^\"<]*{_WHEEL_PLATFORM[platform]}\.whl"
                if not re.search(pattern, pages[tag]):
                    missing.append(f"{rel.version}+{tag} {platform}")
    assert not missing, "listed but not on download.pytorch.org: " + ", ".join(missing)


def _pypi_files(name: str) -> dict:
    return json.loads(_get(f"https://pypi.org/simple/{name}/", "application/vnd.pypi.simple.v1+json"))


def _pypi_requires(name: str, version: str) -> list[str]:
    """Requires-Dist of the Linux x86_64 CPython 3.12 wheel of name==version on PyPI, as pip itself
    reads it (``pip install --dry-run --report``: the metadata file, or the wheel where the index
    has none). Nothing is installed."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
               "--only-binary=:all:", "--python-version", "3.12", "--target", os.path.join(tmp, "t"),
               "--index-url", "https://pypi.org/simple", "--report", report, "--quiet",
               "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64",
               "--platform", "manylinux1_x86_64", f"{name}=={version}"]
        # Only PyPI: no constraints, local wheel folders or extra indexes from the pip configuration.
        env = {**os.environ, "PIP_CONSTRAINT": os.devnull, "PIP_FIND_LINKS": "", "PIP_EXTRA_INDEX_URL": ""}
        subprocess.run(cmd, check=True, capture_output=True, timeout=600, env=env)
        with open(report, encoding="utf-8") as f:
            meta = json.load(f)["install"][0]["metadata"]
    return [r.replace(" ", "").replace("(", "").replace(")", "") for r in meta.get("requires_dist", [])]


@network
@pytest.mark.network
def test_pypi_releases_pins_and_defaults():
    from packaging.requirements import Requirement

    page = _pypi_files("torch")
    published = {v for v in page["versions"] if re.fullmatch(r"2\.(\d+)\.\d+", v) and int(v.split(".")[1]) >= 4}
    assert published == {r.version for r in T.releases}, "the table and PyPI list different torch releases"
    for rel in T.releases:
        requires = _pypi_requires("torch", rel.version)
        assert any(r.startswith(rel.triton) for r in requires), (rel.version, rel.triton, requires)
        runtime = [r for r in requires if r.startswith(("nvidia-cuda-runtime-cu12==", "cuda-toolkit"))]
        cuda = re.search(r"==(\d+)\.(\d+)", runtime[0])
        assert rel.pypi["linux-x86_64"] == f"cu{cuda.group(1)}{cuda.group(2)}", rel.version
        for name in ("torchvision", "torchaudio"):
            pin = getattr(rel, name)
            if pin:
                reqs = [Requirement(r) for r in _pypi_requires(name, pin)]
                torch_reqs = [r for r in reqs if r.name == "torch"]
                assert (torch_reqs and torch_reqs[0].specifier.contains(rel.version)) or \
                    (name == "torchaudio" and not torch_reqs), (name, pin, [str(r) for r in torch_reqs])


# ------------------------------------------------------------- every other printed pip command


@pytest.mark.parametrize("name", facts_fixture_names())
def test_every_printed_pip_command_parses(name):
    """Flags pip knows, requirements that parse, on every machine fixture."""
    from packaging.requirements import Requirement

    for r in runner.run(checks.builtin(), load_facts(name)).results:
        for command in (r.fix.commands if r.fix else ()):
            if "pip install" in command:
                _, args = parse_pip_install(command)
                assert args, f"{name} {r.id}: nothing to install in {command!r}"
                for a in args:
                    Requirement(a)


def test_explained_logs_print_commands_pip_accepts():
    from pathlib import Path

    from packaging.requirements import Requirement

    logs = sorted((Path(__file__).parent / "data" / "logs").glob("*.log"))
    assert logs
    for log in logs:
        with open(log, "rb") as f:
            result = kb_explain.scan(f)
        for p in result.problems:
            for command in p.entry.render(**p.context).commands:
                if "pip install" in command:
                    _, args = parse_pip_install(command)
                    for a in args:
                        Requirement(a)


def test_triton_for_windows_follows_torch():
    assert wheels.triton_requirement("2.13.0", "windows-x86_64") == "triton-windows<3.8"
    assert wheels.triton_requirement("2.7.1", "windows-x86_64") == "triton-windows<3.4"
    assert wheels.triton_requirement("2.4.1", "windows-x86_64") is None  # no triton-windows 3.0.x on PyPI
    assert wheels.triton_requirement("2.11.0") == "triton==3.6.0"
    r = {x.id: x for x in runner.run(checks.builtin(), load_facts("windows_rtx3080")).results}
    for check_id in ("FD601", "FD301"):
        command = next(c for c in r[check_id].fix.commands if "pip install" in c)
        assert command.endswith('-m pip install "triton-windows<3.3"'), command  # torch 2.6.0 -> triton 3.2
        assert "'" not in command  # cmd.exe takes single quotes literally


@network
@pytest.mark.network
def test_printed_package_names_exist_on_pypi():
    from packaging.requirements import Requirement

    names = {"triton", "triton-windows", "torchvision", "torchaudio"}
    for entry in knowledge.entries().values():
        for command in entry.render().commands:
            if "pip install" in command:
                names |= {Requirement(a).name for a in parse_pip_install(command)[1]}
    for name in sorted(names):
        page = _get(f"https://pypi.org/simple/{name}/")
        assert "<a " in page, f"{name} has no files on PyPI"


def test_extension_reinstall_commands():
    """FDE758: flash-attn rebuilt against the installed torch, FlashAttention-3 from its source
    (PyPI's flash_attn_3 0.0.0 is a placeholder), xformers matched to the installed torch build."""
    from packaging.requirements import Requirement

    from flexdoctor.checks import deep

    facts = load_facts("h100")
    for package, dist in (("flash_attn_3", "flash_attn_3"), ("flash_attn_interface", "flash_attn_3"),
                          ("flash-attn", "flash-attn"), ("xformers", "xformers")):
        name, args = deep._reinstall(facts, package)
        assert name == dist
        options, reqs = parse_pip_install(f"python -m pip install {args}")
        assert Requirement(reqs[0]).name.replace("_", "-") == dist.replace("_", "-")
        if dist == "xformers":
            assert reqs[1] == "torch==2.11.0" and options.index_url.endswith("/whl/cu130")
        else:
            assert options.build_isolation is False  # --no-build-isolation: the build sees the installed torch


def _nvidia_gpu() -> bool:
    """Without importing torch (slow) where there is no NVIDIA driver at all."""
    if not (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0")):
        return False
    try:
        import torch

        return torch.cuda.is_available() and torch.version.cuda is not None
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _nvidia_gpu(), reason="needs an NVIDIA GPU")
def test_installed_build_carries_what_the_table_says():
    """On a GPU machine: the arch list of the installed torch build is the table's, and the GPU
    and driver here get a pair that fits them."""
    import platform as pyplatform
    import sys

    import torch

    version = torch.__version__.split("+")[0]
    release = T.release(version)
    if release is None:
        pytest.skip(f"torch {torch.__version__} is not a release in the table")
    tag = "cu" + torch.version.cuda.replace(".", "")
    plat = wheels.platform_of(sys.platform, pyplatform.machine())
    variant = release.variant(plat, tag)
    assert variant is not None, f"the table lacks {version}+{tag} on {plat}"
    assert sorted(torch.cuda.get_arch_list()) == sorted(variant.archs)
    from flexdoctor import probes  # the real probes, as `flexdoctor check` runs them
    from flexdoctor.checks import _util as u

    facts = probes.gather(sys.executable, runtime=False)

    m = u.machine(facts)
    advice = wheels.recommend(m, keep=version)
    _check_advice(m, version, advice, f"this machine: {m}")
    assert advice.torch == version  # the installed release runs here, so it is kept
