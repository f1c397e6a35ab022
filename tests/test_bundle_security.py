"""Issue 20 item 1 ("bundles are code") and issue 21 item 5 ("verified but slow"): a crafted
`warm-cache --import` bundle, made with torch's OWN serializer and zipped in flexdoctor's bundle
layout, runs nothing and writes nothing outside the cache dir; a bundle someone else owns or can
write, or that sits in a folder others can write, is refused before torch starts; the --sha256 pin
and the size limits hold; an import is verified only when its first call is timed as fast as the
exporter's. Every CLI case here failed on the code before (run against /work/main: the payload
ran, the absolute and ../ keys wrote outside, the 0666 bundle imported with exit 0, the bomb was
inflated)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the crafted bundles are made with torch's own serializer")

FD = [sys.executable, "-m", "flexdoctor"]
KEY_F = "f" + "a" * 51  # hash-shaped FX-graph key
KEY_A = "a" + "b" * 51


def fd(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    return subprocess.run(FD + list(args), capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)


def mega(groups: list) -> bytes:
    """Bytes exactly as torch.compiler.save_cache_artifacts writes them: torch's own
    AppendingByteSerializer and _serialize_single_cache over (type, [artifact]) groups."""
    from torch._inductor.codecache import InductorCacheArtifact
    from torch.compiler._cache import _serialize_single_cache
    from torch.utils._appending_byte_serializer import AppendingByteSerializer

    ser = AppendingByteSerializer(serialize_fn=_serialize_single_cache)
    ser.extend([(kind, [InductorCacheArtifact(k, c) for k, c in items]) for kind, items in groups])
    return ser.to_bytes()


def bundle(path: Path, blobs: list, mode: int = 0o644) -> Path:
    """A zip in flexdoctor's bundle layout (cache/warm.py write_bundle): metadata + artifacts/NNN.bin."""
    meta = {"format": 1, "flexdoctor_version": "test", "created_at": "2026-01-01T00:00:00+00:00",
            "fingerprint": {"torch": str(torch.__version__), "device": "cpu"}, "configs": [], "first_call_s": {}}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i, blob in enumerate(blobs):
            zf.writestr(f"artifacts/{i:03d}.bin", blob)
        zf.writestr("flexdoctor-bundle.json", json.dumps(meta))
    path.chmod(mode)
    return path


class _Payload:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _refused(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for w in words:
        assert w in lines[0], lines[0]


def _files(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


# --------------------------------------------------------------------------- crafted contents

def test_a_pickle_payload_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "PWNED"
    blob = mega([("inductor", [(KEY_F, pickle.dumps(_Payload(marker), protocol=4))])])
    b = bundle(tmp_path / "evil.zip", [blob])
    done = fd("warm-cache", "--import", str(b), "--cache-dir", str(tmp_path / "cache"))
    _refused(done, "would call", "system", "--import")
    assert not marker.exists()
    assert [f for f in _files(tmp_path / "cache") if not f.startswith("flexdoctor")] == []


@pytest.mark.parametrize("key", ["ABS", "../../escaped/" + "0" * 64 + ".best_config", "xx/../../" + "0" * 64])
def test_a_key_that_leaves_the_cache_dir_writes_nothing(tmp_path, key):
    outside = tmp_path / "outside" / ("0" * 64 + ".best_config")
    key = str(outside) if key == "ABS" else key
    blob = mega([("autotune", [(key, b'{"XBLOCK": 64}')])])
    b = bundle(tmp_path / "evil.zip", [blob])
    cache = tmp_path / "a" / "b" / "cache"
    done = fd("warm-cache", "--import", str(b), "--cache-dir", str(cache))
    _refused(done, "key", "not hash-shaped")
    assert not outside.exists() and not (tmp_path / "a" / "escaped").exists()
    assert _files(tmp_path / "a") == []


def test_an_unknown_artifact_type_is_refused(tmp_path):
    blob = mega([("precompile", [("some/where", b"\x80\x04N.")]), ("evil", [(KEY_F, b"\x80\x04N.")])])
    b = bundle(tmp_path / "odd.zip", [blob])
    _refused(fd("warm-cache", "--import", str(b), "--cache-dir", str(tmp_path / "cache")),
             "of type precompile", "never writes")


def test_a_blob_that_is_not_torch_format_is_refused(tmp_path):
    b = bundle(tmp_path / "junk.zip", [b"\x00" * 100])
    _refused(fd("warm-cache", "--import", str(b), "--cache-dir", str(tmp_path / "cache")), "mega-cache format")


# --------------------------------------------------------------------------- who wrote it

def test_a_bundle_others_can_write_is_refused(tmp_path):
    b = bundle(tmp_path / "shared.zip", [mega([("inductor", [(KEY_F, b"\x80\x04N.")])])], mode=0o666)
    os.chmod(b, 0o666)  # the umask may have masked it
    _refused(fd("warm-cache", "--import", str(b), "--cache-dir", str(tmp_path / "cache")),
             "can be written by others", "0o666")


def test_a_bundle_in_a_folder_others_can_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    b = bundle(shared / "flex-cache.zip", [mega([("inductor", [(KEY_F, b"\x80\x04N.")])])])
    _refused(fd("warm-cache", "--import", str(b), "--cache-dir", str(tmp_path / "cache")), str(shared), "0o777")


def test_a_bundle_directly_in_sticky_tmp_is_refused(tmp_path):
    if stat.S_IMODE(os.stat("/tmp").st_mode) != 0o1777:
        pytest.skip("/tmp is not mode 1777 here")
    handle, name = tempfile.mkstemp(dir="/tmp", suffix=".zip")
    os.close(handle)
    try:
        b = bundle(Path(name), [mega([("inductor", [(KEY_F, b"\x80\x04N.")])])])
        _refused(fd("warm-cache", "--import", str(b), "--cache-dir", str(tmp_path / "cache")),
                 "sticky bit does not help")
    finally:
        os.unlink(name)


def test_a_bundle_owned_by_another_user_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("chown to another uid needs root (CI runs as root)")
    b = bundle(tmp_path / "theirs.zip", [mega([("inductor", [(KEY_F, b"\x80\x04N.")])])])
    os.chown(b, 65534, 65534)
    _refused(fd("warm-cache", "--import", str(b), "--cache-dir", str(tmp_path / "cache")), "owned by uid 65534")


def test_a_link_or_fifo_in_place_of_the_bundle_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "pipe.zip"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    _refused(fd("warm-cache", "--import", str(fifo), "--cache-dir", str(tmp_path / "cache"), timeout=60),
             "not a regular file")
    assert time.monotonic() - t0 < 30
    if os.geteuid() == 0:  # a link owned by another user, named as the bundle: its owner can re-point it
        real = bundle(tmp_path / "real.zip", [mega([("inductor", [(KEY_F, b"\x80\x04N.")])])])
        link = tmp_path / "link.zip"
        link.symlink_to(real)
        os.lchown(link, 65534, 65534)
        _refused(fd("warm-cache", "--import", str(link), "--cache-dir", str(tmp_path / "cache")), "symbolic link")


# --------------------------------------------------------------------------- the pin and the sizes

def test_sha256_pin_refuses_other_content(tmp_path):
    b = bundle(tmp_path / "b.zip", [mega([("inductor", [(KEY_F, b"\x80\x04N.")])])])
    real = hashlib.sha256(b.read_bytes()).hexdigest()
    _refused(fd("warm-cache", "--import", str(b), "--sha256", "0" * 64, "--cache-dir", str(tmp_path / "c")),
             "sha256 is " + real, "not the pinned " + "0" * 64)
    _refused(fd("warm-cache", "--import", str(b), "--sha256", "xyz", "--cache-dir", str(tmp_path / "c")),
             "64 hexadecimal")


def _bomb(path: Path, inflated: int = 1 << 30) -> Path:
    """A real zip bomb: ~1 MB on disk, ``inflated`` bytes of zeros once inflated."""
    meta = {"format": 1, "fingerprint": {"torch": str(torch.__version__)}, "configs": []}
    zero = bytes(1 << 20)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("flexdoctor-bundle.json", json.dumps(meta))
        with zf.open("artifacts/000.bin", "w", force_zip64=True) as member:
            for _ in range(inflated >> 20):
                member.write(zero)
    path.chmod(0o644)
    return path


MEASURE = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, "
           "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


@pytest.mark.parametrize("command", ["import", "fleet"])
def test_a_zip_bomb_is_refused_quickly_with_bounded_memory(tmp_path, command):
    bomb = _bomb(tmp_path / "bomb.zip")
    assert bomb.stat().st_size < 2 << 20
    if command == "import":
        argv = FD + ["warm-cache", "--import", str(bomb), "--cache-dir", str(tmp_path / "cache")]
    else:
        (tmp_path / "reports").mkdir()
        argv = FD + ["fleet", "merge", str(tmp_path / "reports"), "--bundle", str(bomb)]
    done = fd(*argv[len(FD):], timeout=120)
    assert done.returncode == 2 and "over the limit" in done.stderr and "Traceback" not in done.stderr, done.stderr
    t0 = time.monotonic()
    peak_kib = int(subprocess.run([sys.executable, "-c", MEASURE] + argv, capture_output=True, text=True,
                                  timeout=120).stdout.strip())
    assert time.monotonic() - t0 < 60
    assert peak_kib < 400 * 1024, f"peak {peak_kib} KiB: the bomb was inflated"


def test_a_member_that_inflates_past_its_declared_size_is_cut_off(tmp_path):
    """A zip directory can lie about sizes: the member is read in chunks and never past what it
    declared (cache/bundlefile.read_member)."""
    from flexdoctor.cache import bundlefile

    path = tmp_path / "lying.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("flexdoctor-bundle.json", json.dumps({"fingerprint": {}}))
        zf.writestr("artifacts/000.bin", bytes(8 << 20))
    data = bytearray(path.read_bytes())
    # Shrink the declared size in the member's central-directory entry (offset 24) to 1000 bytes.
    entry = data.find(b"PK\x01\x02")
    while data[entry + 46:entry + 46 + 17] != b"artifacts/000.bin":
        entry = data.find(b"PK\x01\x02", entry + 4)
    data[entry + 24:entry + 28] = (1000).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with bundlefile.open_bundle(str(path)) as b:
        with pytest.raises(bundlefile.Refused):
            list(b.artifacts())


# --------------------------------------------------------------------------- the parser itself

def test_real_torch_bytes_round_trip_byte_for_byte(tmp_path):
    from flexdoctor.cache import megacache

    autotune_key = "ab/" + "0" * 64 + ".best_config"
    data = mega([("inductor", [(KEY_F, pickle.dumps({"x": [1, 2]}, protocol=4))]),
                 ("aot_autograd", [(KEY_A, pickle.dumps(set(), protocol=4))]),
                 ("autotune", [(autotune_key, b'{"XBLOCK": 64}')])])
    blob, artifacts = megacache.checked(data, str(tmp_path))
    assert blob == data
    assert [(a.type, a.key) for a in artifacts] == [("inductor", KEY_F), ("aot_autograd", KEY_A),
                                                     ("autotune", autotune_key)]


def test_the_torch_2_7_layout_is_read_too(tmp_path):
    """torch 2.7 wrote one record per artifact with an enum type and no checksum; keys as UTF-8."""
    from flexdoctor.cache import megacache

    def s(b: bytes) -> bytes:
        return len(b).to_bytes(8, "big") + b

    body = (1).to_bytes(8, "big") + (0).to_bytes(8, "big") + s(KEY_F.encode()) + s(b"\x80\x04N.")
    layout, artifacts = megacache.parse(body)
    assert layout == megacache.Layout(checksum=False, enum_records=True)
    assert artifacts == [megacache.Artifact("inductor", KEY_F, b"\x80\x04N.")]
    assert megacache.serialize(layout, artifacts) == body
    evil = (1).to_bytes(8, "big") + (1).to_bytes(8, "big") + s(b"/etc/x.best_config") + s(b"{}")
    with pytest.raises(megacache.BadArtifacts):
        megacache.checked(evil, str(tmp_path))


def test_pickle_screen_tracks_the_memo():
    """STACK_GLOBAL operands fetched back from the memo are still seen."""
    from flexdoctor.cache import megacache

    class P:
        def __reduce__(self):
            return (os.system, ("true",))

    data = pickle.dumps([P(), P()], protocol=4)  # the second refers to the memoised global
    with pytest.raises(megacache.BadArtifacts):
        megacache.screen_pickle(data, KEY_F)
    megacache.screen_pickle(pickle.dumps({"a": (1, 2.0, "x", b"y")}, protocol=4), KEY_F)


# --------------------------------------------------------------------------- "verified" means timed

@pytest.mark.parametrize("exported, imported, verdict", [
    (1.6, 11.6, "slow"),  # CPU: the mega-cache does not carry CPU Inductor's .so (FACTS §11)
    (1.0, 1.24, "fast"),  # H100, the same bundle (FACTS §11)
    (0.3, 1.5, "fast"),  # 5x, but only 1.2 s: noise of another machine
    (0.4, 2.5, "slow"),
    (None, 1.0, "untimed"), (1.0, None, "untimed"),
])
def test_import_speed_judge(exported, imported, verdict):
    from flexdoctor.cache.warm import import_speed

    assert import_speed(exported, imported) == verdict


def _imported(exported, warm_first):
    from flexdoctor import workload
    from flexdoctor.cache.warm import Outcome

    w = workload.make(device="cpu", dtype="float32", heads=2, seq_len=128, head_dim=16, mask="causal")
    return Outcome(w, state="done", imported=True, exported_first_call_s=exported,
                   warm={"ok": True, "first_call_s": warm_first,
                         "counters": {"fxgraph_cache_hit": 1, "fxgraph_cache_miss": 0}})


def test_a_slow_import_is_not_verified_and_says_both_times():
    from types import SimpleNamespace

    from flexdoctor.cache.warm import WarmResult
    from flexdoctor.render import warm_view

    slow = _imported(1.6, 11.6)
    assert slow.status() == "imported (slow)"
    env = SimpleNamespace(cache_dir="/c", temporary=False, fingerprint=None, gpu_count=0)
    plan = SimpleNamespace(steps=(), env=env, run_argv=None, jobs=1, already_warm=[])
    result = WarmResult(plan, [slow], verified=True)
    assert result.failed
    text = warm_view.render(result, width=200)
    assert "imported (slow)" in text and "11.6 s against 1.6 s" in text and ".so" in text
    assert "warm (verified)" not in text
    assert _imported(1.0, 1.24).status() == "warm (verified)"
    assert _imported(None, 1.0).status() == "imported (not timed)"


def test_force_rows_are_not_already_warm():
    from flexdoctor import workload
    from flexdoctor.cache.warm import Outcome

    w = workload.make(device="cpu")
    hit = {"ok": True, "counters": {"fxgraph_cache_hit": 1, "fxgraph_cache_miss": 0}, "first_call_s": 1.0}
    assert Outcome(w, state="done", cold=hit, warm=hit).status() == "already warm"
    assert Outcome(w, state="done", cold=hit, warm=hit, forced=True).status() == "warm (verified)"
    assert Outcome(w, state="compiled", cold=hit, forced=True).status() == "compiled"


def test_one_compile_shows_one_time_in_progress_table_and_summary():
    from types import SimpleNamespace

    from flexdoctor import workload
    from flexdoctor.cache.warm import Outcome, WarmResult
    from flexdoctor.render import warm_view

    w = workload.make(device="cpu")
    cold = {"ok": True, "first_call_s": 28.0, "wall_s": 36.2, "started": 100.0,
            "counters": {"fxgraph_cache_hit": 0, "fxgraph_cache_miss": 1}}
    out = Outcome(w, state="compiled", cold=cold, wall_s=36.2, started=100.0)
    lines: list = []
    warm_view.LiveView([out], None, live=False, echo=lines.append).update()
    assert lines and lines[-1].endswith("in 36.20 s")
    env = SimpleNamespace(cache_dir="/c", temporary=False, fingerprint=None, gpu_count=0)
    plan = SimpleNamespace(steps=(), env=env, run_argv=None, jobs=1, already_warm=[])
    text = warm_view.render(WarmResult(plan, [out], verified=False, compile_wall_s=36.9), width=200)
    assert "36.20" in text and "warm-up: 36.20 s" in text and "28.00" not in text and "36.9" not in text


def test_cache_dir_that_is_a_file_is_a_usage_error_before_compiling(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    done = fd("warm-cache", "--preset", "cpu-smoke", "--cache-dir", str(f), timeout=120)
    _refused(done, "is not a folder")
    assert "compiling" not in done.stderr


def test_pickle_screen_takes_torch_memory_formats_and_nothing_through_them():
    """A GPU entry's tensor metadata holds torch.contiguous_format, which pickle saves as the dotted
    name torch.contiguous_format under torch._utils (H100, torch 2.11: every bundle was refused).
    A dotted name is judged as the trusted root's own attribute, one step only."""
    import torch

    from flexdoctor.cache import megacache

    megacache.screen_pickle(pickle.dumps([torch.contiguous_format, torch.channels_last, torch.float16],
                                         protocol=4), KEY_F)
    for module, name in [("torch._utils", "os.system"), ("torch._utils", "torch.load"),
                         ("torch._utils", "torch.os.system"), ("os", "torch.float16"),
                         ("torch._utils", "torch.__import__"), ("torch._utils", "torch._load_from_bytes")]:
        assert not megacache._allowed(module, name), (module, name)


REAL_H100_BUNDLE = Path(__file__).parent / "data" / "bundles" / "h100-torch2.11-llm-causal.zip"


def test_a_real_h100_bundle_passes_the_screen(tmp_path):
    """Recorded on the H100 (torch 2.11+cu130, Python 3.12, `warm-cache --preset llm-causal
    --export`): its entries name inspect.Signature and call getattr for bound methods
    (AutotuneCache().save_cache_hook) and enum members; the screen refused every GPU bundle."""
    import zipfile

    from flexdoctor.cache import megacache

    with zipfile.ZipFile(REAL_H100_BUNDLE) as zf:
        blob, artifacts = megacache.checked(zf.read("artifacts/000.bin"), str(tmp_path))
    assert {a.type for a in artifacts} >= {"inductor", "aot_autograd"}


def _ops(*parts: bytes) -> bytes:
    return b"\x80\x04" + b"".join(parts) + b"."


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _str(s: str) -> bytes:
    return b"\x8c" + bytes([len(s)]) + s.encode()


@pytest.mark.parametrize("payload", [
    # getattr(<a module reached through torch>, "execv"): a module is no class
    _ops(_global("builtins", "getattr"), _global("torch._utils", "os"), _str("execv"), b"\x86R"),
    # a chain: getattr(getattr(cls, "x"), "y")
    _ops(_global("builtins", "getattr"), _global("builtins", "getattr"), _global("collections", "Counter"),
         _str("x"), b"\x86R", _str("y"), b"\x86R"),
    # a private or dangerous name on a built object
    _ops(_global("builtins", "getattr"), _global("collections", "Counter"), b")\x81", _str("_private"), b"\x86R"),
    _ops(_global("builtins", "getattr"), _global("collections", "Counter"), b")\x81", _str("system"), b"\x86R"),
    # getattr called with anything but (owner, name)
    _ops(_global("builtins", "getattr"), _global("collections", "Counter"), b"\x85R"),
    # a class outside the allow-list
    _ops(_global("builtins", "getattr"), _global("os", "PathLike"), _str("x"), b"\x86R"),
])
def test_getattr_is_taken_only_in_torchs_own_shapes(payload):
    from flexdoctor.cache import megacache

    with pytest.raises(megacache.BadArtifacts):
        megacache.screen_pickle(payload, KEY_F)


def test_getattr_for_a_bound_method_and_an_enum_member_passes():
    import collections
    import inspect

    from flexdoctor.cache import megacache

    megacache.screen_pickle(_ops(_global("builtins", "getattr"), _global("collections", "Counter"), b")\x81",
                                 _str("most_common"), b"\x86R"), KEY_F)
    megacache.screen_pickle(_ops(_global("builtins", "getattr"), _global("inspect", "_ParameterKind"),
                                 _str("POSITIONAL_ONLY"), b"\x86R"), KEY_F)
    megacache.screen_pickle(pickle.dumps([inspect.Parameter.POSITIONAL_ONLY, collections.Counter().most_common],
                                         protocol=4), KEY_F)  # 3.11 calls the enum, 3.12 uses getattr
