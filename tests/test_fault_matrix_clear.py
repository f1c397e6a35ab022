"""clear-cache fault matrix: each case builds a sandbox of user files and caches, runs
``clear-cache --dry-run`` then ``--yes`` (and, where it matters, ``--yes`` again), and proves by
content hash that

- nothing outside the cache entries changed, disappeared or appeared (no lock file either);
- the cache entries that are really torch's / Triton's / ATen's are gone (the cleaner cleans);
- ``--dry-run`` listed exactly what ``--yes`` deleted, and changed nothing itself.

Caches are real where this machine can make them (a CPU torch.compile of flex_attention, once
per session) and shaped exactly as the writers write them otherwise (tests/_caches.py).
HOME, TMPDIR and every cache variable point into the sandbox: the machine's caches are never
touched.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

import _caches as C
from flexdoctor.cache import locations
from flexdoctor.cli import app

pytest.importorskip("torch")

CACHE_VARS = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TRITON_HOME", "PYTORCH_KERNEL_CACHE_PATH",
              "XDG_CACHE_HOME")
HEADER = re.compile(r"^(inductor|triton|aten|manifest): (.*) \(([A-Za-z_]+)\)$")
DELETE = re.compile(r"^  delete (.*?)/?$")


@pytest.fixture(scope="session")
def real(tmp_path_factory):
    return lambda dst, default_dir=False: C.copy_real(tmp_path_factory, dst, default_dir)


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    sb = tmp_path / "sb"
    for d in ("home", "tmp", "work"):
        (sb / d).mkdir(parents=True)
    for var in CACHE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(sb / "home"))
    monkeypatch.setenv("TMPDIR", str(sb / "tmp"))
    monkeypatch.setenv("USER", "me")
    monkeypatch.setenv("LOGNAME", "me")
    monkeypatch.setattr(tempfile, "tempdir", str(sb / "tmp"))
    monkeypatch.chdir(sb / "work")
    return sb


def user_files(top: Path, names: dict) -> None:
    """Write {relative path: text} under top (every file has content: bytes lost would show)."""
    for rel, text in names.items():
        p = top / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


DOCUMENTS = {"report.docx": "quarterly", "notes.txt": "mine", "photo.jpg": "\xff\xd8jpeg", ".env": "SECRET=1",
             "taxes/2024.pdf": "pdf", "taxes/.hidden": "h", "code/model.py": "import torch\n",
             "code/build/kernel.so": "\x7fELF but mine", "data.json": "{}"}


def invoke(*args: str):
    return CliRunner().invoke(app, ["clear-cache", *args], catch_exceptions=False)


def listed(output: str) -> set:
    """The absolute paths a --dry-run listed for deletion."""
    out, root = set(), None
    for line in output.splitlines():
        h = HEADER.match(line)
        if h:
            root = Path(os.path.realpath(h.group(2)))
            continue
        d = DELETE.match(line)
        if d and root is not None:
            out.add(root / d.group(1))
    return out


def under(path: Path, units: set) -> bool:
    return any(path == u or u in path.parents for u in units)


def clear_and_prove(sb: Path, args: tuple, cache_paths: set, must_go: set) -> tuple:
    """Run --dry-run then --yes; prove the three promises; return (dry, yes) results."""
    before = C.snapshot(sb)
    dry = invoke(*args, "--dry-run")
    assert C.snapshot(sb) == before, "--dry-run changed something"
    units = listed(dry.output)
    yes = invoke(*args, "--yes")
    after = C.snapshot(sb)
    assert not set(after) - set(before), f"created: {sorted(set(after) - set(before))}"
    changed = {p for p in after if after[p] != before[p]}
    assert not changed, f"changed: {sorted(changed)}"
    deleted = set(before) - set(after)
    assert deleted <= cache_paths, f"deleted outside the cache entries: {sorted(deleted - cache_paths)}"
    assert must_go <= deleted, f"torch's entries left behind: {sorted(must_go - deleted)[:5]}"
    assert deleted == {p for p in before if under(p, units)}, "--dry-run and --yes disagree"
    assert "Traceback" not in dry.output + yes.output
    return dry, yes


def files(paths: set) -> set:
    return {p for p in paths if p.is_file() and not p.is_symlink()}


# --------------------------------------------------------------------------- shapes from the issue

def test_documents_folder_as_the_aten_cache(sandbox, monkeypatch):
    docs = sandbox / "home" / "Documents"
    user_files(docs, DOCUMENTS)
    kernel = C.aten_kernel(docs)  # one real-shaped kernel among the user's files
    monkeypatch.setenv("PYTORCH_KERNEL_CACHE_PATH", str(docs))
    dry, yes = clear_and_prove(sandbox, (), kernel, kernel)
    assert "kept: not written by torch: report.docx" in dry.output
    assert "kept: hidden, not written by torch: .env" in dry.output
    assert yes.exit_code == 0


def test_documents_folder_with_nothing_of_torch(sandbox, monkeypatch):
    docs = sandbox / "home" / "Documents"
    user_files(docs, DOCUMENTS)
    monkeypatch.setenv("PYTORCH_KERNEL_CACHE_PATH", str(docs))
    dry, yes = clear_and_prove(sandbox, ("--aten",), set(), set())
    assert yes.exit_code == 0 and "nothing to clear" in yes.output
    assert "nothing here was written by torch: is PYTORCH_KERNEL_CACHE_PATH pointing" in dry.output


def test_triton_cache_with_a_long_named_user_folder(sandbox, monkeypatch):
    tri = sandbox / "tri"
    entries = C.triton_cache(tri)
    user_files(tri, {"my_experiment_results_2024/run1.csv": "a,b", "README.md": "mine",
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRST/ckpt.pt": "weights"})
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tri))
    dry, yes = clear_and_prove(sandbox, ("--triton",), entries, files(entries))
    assert "kept: not written by Triton: my_experiment_results_2024" in dry.output
    assert yes.exit_code == 0


def test_inductor_dir_with_two_letter_user_folders_and_dotenv(sandbox, monkeypatch, real):
    proj = sandbox / "proj"
    cache = real(proj)
    user_files(proj, {"db/users.sqlite": "rows", "js/app.js": "let x", "ml/train.py": "fit()", "en/README": "hi",
                      ".env": "TOKEN=1", "ab/notes.md": "two chars, base32 letters"})
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(proj))
    dry, _ = clear_and_prove(sandbox, ("--inductor",), cache, files(cache))
    for d in ("db", "js", "ml", "en", "ab"):
        assert f"kept: holds nothing written by torch: {d}/" in dry.output
    assert "kept: hidden, not written by torch: .env" in dry.output


def test_hidden_files_inside_a_real_cache(sandbox, monkeypatch, real):
    cache_dir = sandbox / "cache"
    cache = real(cache_dir)
    shard = next(p for p in cache_dir.iterdir() if len(p.name) == 2)
    user_files(cache_dir, {".notes": "n", "fxgraph/.keep": "k", f"{shard.name}/.DS_Store": "d",
                           "locks/.mine": "m"})
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    must_go = files(cache) - {p for p in cache if p.parent in (cache_dir / "fxgraph", shard)}
    dry, _ = clear_and_prove(sandbox, ("--inductor",), cache, files(cache) & must_go)
    assert f"kept: hidden, not written by torch: {shard.name}/.DS_Store" in dry.output


@pytest.mark.parametrize("value", ["", " "])
def test_empty_variables_never_mean_the_current_directory(sandbox, monkeypatch, value):
    work = sandbox / "work"
    user_files(work, {**DOCUMENTS, "db/x": "1", "fxgraph/mine.txt": "m", "locks/l.lock": "held",
                      "my_experiment_results_2024/r.csv": "1", ".triton/cache/notes": "n"})
    for var in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "PYTORCH_KERNEL_CACHE_PATH", "TRITON_HOME"):
        monkeypatch.setenv(var, value)
    dry, yes = clear_and_prove(sandbox, (), set(), set())
    if value == "":
        assert "TORCHINDUCTOR_CACHE_DIR is set but empty" in dry.output
        assert yes.exit_code == 1  # refused: torch itself would use the job's cwd


def test_empty_triton_variable_clears_tritons_default_cache_only(sandbox, monkeypatch):
    work = sandbox / "work"
    user_files(work, DOCUMENTS)
    entries = C.triton_cache(sandbox / "home" / ".triton" / "cache")
    monkeypatch.setenv("TRITON_CACHE_DIR", "")
    dry, yes = clear_and_prove(sandbox, ("--triton",), entries, files(entries))
    assert "TRITON_CACHE_DIR is set but empty" in dry.output and yes.exit_code == 0


def test_second_clear_on_an_emptied_cache_is_nothing_to_clear(sandbox, monkeypatch, real):
    cache_dir = sandbox / "tmp" / "torchinductor_me"  # torch's own default, under TMPDIR
    cache = real(cache_dir, default_dir=True) - {cache_dir}  # with precompiled_headers/ when torch made it
    clear_and_prove(sandbox, ("--inductor",), cache, files(cache))
    before = C.snapshot(sandbox)
    again = invoke("--inductor", "--yes")
    assert again.exit_code == 0 and "nothing to clear" in again.output
    assert C.snapshot(sandbox) == before
    assert not list(sandbox.rglob(locations.LOCK_NAME))


@pytest.mark.parametrize("where", ["home", "tmp", "home/.cache", "."])
def test_refused_directories_get_no_lock_and_no_change(sandbox, monkeypatch, where):
    target = sandbox / where if where != "." else Path("/")
    user_files(sandbox / "home", {"keep.txt": "k"})
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(target))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(target))
    before = C.snapshot(sandbox)
    for args in (("--dry-run",), ("--yes",)):
        res = invoke(*args)
        assert res.exit_code == 1 and "refused" in res.output
    assert C.snapshot(sandbox) == before


# --------------------------------------------------------------------------- shapes of our own

def test_symlinks_inside_and_out_of_the_cache(sandbox, monkeypatch, real):
    precious = sandbox / "precious"
    user_files(precious, {"keep.txt": "keep", "sub/deep.txt": "deep"})
    cache_dir = sandbox / "cache"
    cache = real(cache_dir)
    shard = next(p for p in cache_dir.iterdir() if len(p.name) == 2)
    os.symlink(precious, cache_dir / "zz")  # a link at the top, named like a shard
    os.symlink(precious / "keep.txt", shard / f"c{shard.name}{'a' * 49}.py")  # named like code, a link
    os.symlink(precious, cache_dir / "fxgraph" / "qq")
    os.symlink(cache_dir / "fxgraph", sandbox / "shortcut")  # a link from outside into the cache
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    # the shard and fxgraph/ keep a link each: their other files go, they and the links stay
    dry, _ = clear_and_prove(sandbox, ("--inductor",), cache, files(cache))
    assert "kept: a symbolic link (never followed, never deleted): zz" in dry.output


def test_user_file_dropped_into_hash_dirs_of_a_real_cache(sandbox, monkeypatch, real):
    cache_dir = sandbox / "cache"
    cache = real(cache_dir)
    shard = next(p for p in cache_dir.iterdir() if len(p.name) == 2)
    key_dir = next((cache_dir / "fxgraph").glob("*/*"))
    aot_dir = next((cache_dir / "aotautograd").iterdir())
    for d in (shard, key_dir, aot_dir, cache_dir / "locks"):
        (d / "notes.txt").write_text("mine")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    dry, _ = clear_and_prove(sandbox, ("--inductor",), cache, files(cache))
    assert f"kept: not written by torch: {shard.name}/notes.txt" in dry.output
    assert shard.is_dir() and key_dir.is_dir() and not list(shard.glob("c*"))


def test_triton_look_alikes(sandbox, monkeypatch):
    tri = sandbox / "tri"
    entries = C.triton_cache(tri)
    liar = tri / ("Q" * 52)  # base32-named, a group file, but its metadata hash names another dir
    user_files(liar, {"__grp__k.json": '{"child_paths": {"k.json": "x", "k.cubin": "y"}}',
                      "k.json": '{"hash": "' + "ab" * 32 + '"}', "k.cubin": "\x7fELF mine"})
    user_files(tri, {("R" * 52) + "/holiday.jpg": "jpeg",  # 52 chars of base32, no group file
                     ("S" * 51) + "/__grp__x.json": '{"child_paths": {}}',  # 51 chars
                     ("t" * 52) + "/x.so": "\x7fELF",  # lower case: not Triton's alphabet
                     "__grp__top.json": '{"child_paths": {}}', "kernel.cubin": "\x7fELF", "k.ptx": ".version"})
    kernel = next(d for d in tri.iterdir() if (d / "triton_poi_fused_add_0.json").exists())
    (kernel / "mine.txt").write_text("mine")  # a user file inside a real entry
    (kernel / "triton_poi_fused_add_0.ttir").write_text("edited by me")  # listed: still the entry's file
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tri))
    must_go = files(entries) - {kernel / "mine.txt"}
    clear_and_prove(sandbox, ("--triton",), entries, must_go)
    assert (kernel / "mine.txt").read_text() == "mine" and (liar / "k.cubin").exists()


def test_cache_like_names_outside_any_cache_structure(sandbox, monkeypatch, real):
    cache_dir = sandbox / "cache"
    cache = real(cache_dir)
    code = next(p for p in cache.copy() if p.suffix == ".py")
    user_files(cache_dir, {"model.so": "\x7fELF", "kernel.cubin": "\x7fELF", "train.py": "x", "data.json": "{}",
                           "__grp__x.json": "{}", "a" * 64 + ".best_config": "{}", code.name: "import os",
                           f"{code.parent.name}/c{'z' * 51}.py": "wrong shard letters",
                           f"{code.parent.name}/{code.stem}.exe": "unknown extension",
                           "fxgraph/zz/fzz" + "a" * 49 + "/" + "b" * 51: "not a pickle",
                           "aotautograd/a" + "c" * 51 + "/" + "d" * 51: "\x80\x04 no torch here",
                           "cache/" + "e" * 64: '{"other": 1}', "dynamo/code_state_x.pkl": "not pickle",
                           "locks/held.lock": "pid 42", "triton/0/notes.txt": "t", "triton/x/" + "A" * 52 + "/y": "y",
                           locations.MANIFEST_NAME + ".bak": "{}"})
    (cache_dir / code.parent.name / f"{code.stem}.so").write_bytes(b"MZ not an ELF")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    clear_and_prove(sandbox, ("--inductor",), cache, files(cache) - {code.parent / f"{code.stem}.so"})


def test_a_git_repository_used_as_the_cache_dir(sandbox, monkeypatch, real):
    repo = sandbox / "repo"
    user_files(repo, {".git/HEAD": "ref: refs/heads/main", ".git/objects/ab/" + "c" * 38: "blob",
                      ".git/objects/pack/pack-1.pack": "PACK", "ab/module.py": "src", "locks/README": "doc",
                      ".gitignore": "*.so", "fxgraph/README.md": "my notes on fx graphs"})
    cache = real(repo / "compiled")  # the real cache one level down: not the repo's business
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(repo))
    dry, _ = clear_and_prove(sandbox, ("--inductor",), cache, set())
    assert "kept: hidden, not written by torch: .git" in dry.output


def test_unreadable_entries_are_kept_or_reported(sandbox, monkeypatch, real):
    cache_dir = sandbox / "cache"
    cache = real(cache_dir)
    locked = cache_dir / "private"
    user_files(locked, {"secret.txt": "s"})
    shard = next(p for p in cache_dir.iterdir() if len(p.name) == 2)
    unreadable = shard / f"c{shard.name}{'q' * 49}.py"  # torch-shaped: only its content can tell
    unreadable.write_text("x")
    cache.add(unreadable)
    unreadable.chmod(0)
    locked.chmod(0)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    try:
        before = C.snapshot(sandbox)
        res = invoke("--inductor", "--yes")
        assert res.exit_code == 0 and "Traceback" not in res.output
    finally:
        locked.chmod(0o700)
        if unreadable.exists():
            unreadable.chmod(0o600)
    after = C.snapshot(sandbox)
    assert not {p for p in before if p not in cache and after.get(p) != before[p]}
    assert (locked / "secret.txt").read_text() == "s"
    if os.geteuid() != 0:  # root reads anything: then the file is torch-shaped text and goes
        assert unreadable.exists() and "could not be read" in res.output or "content" in res.output


def test_cache_dir_that_is_a_symlink(sandbox, monkeypatch, real):
    real_dir = sandbox / "data" / "inductor"
    cache = real(real_dir)
    link = sandbox / "home" / "cache-link"
    os.symlink(real_dir, link)
    os.symlink(sandbox / "home", sandbox / "home-link")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(link))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(sandbox / "home-link"))  # resolves to the home: refused
    dry, yes = clear_and_prove(sandbox, (), cache - {real_dir}, files(cache))
    assert os.readlink(link) == str(real_dir) and real_dir.is_dir()
    assert "refused" in dry.output and yes.exit_code == 1


def test_fifo_and_control_characters_in_names(sandbox, monkeypatch, real):
    cache_dir = sandbox / "cache"
    cache = real(cache_dir)
    os.mkfifo(cache_dir / "pipe")
    user_files(cache_dir, {"evil\n  delete fxgraph": "x", "tab\there": "y"})
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    dry, _ = clear_and_prove(sandbox, ("--inductor",), cache, files(cache))
    assert "evil\\n  delete fxgraph" in dry.output
    assert "kept: not a regular file or folder: pipe" in dry.output


def test_triton_under_inductor_and_an_overlapping_triton_dir(sandbox, monkeypatch, real):
    cache_dir = sandbox / "cache"
    cache = real(cache_dir) | C.triton_cache(cache_dir / "triton" / "0")
    cache |= {cache_dir / "triton"}
    (cache_dir / "triton" / "0" / "mine.txt").write_text("m")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache_dir / "triton" / "0"))
    dry, yes = clear_and_prove(sandbox, (), cache, files(cache))
    assert "inside" in dry.output and yes.exit_code == 0


def test_aten_cache_with_user_files(sandbox, monkeypatch):
    aten = sandbox / "home" / ".cache" / "torch" / "kernels"  # ATen's default
    kernels = C.aten_kernel(aten) | C.aten_kernel(aten, "gcd_kernel", ptx=True)
    user_files(aten, {"sinc_kernel_arch9.0_nvrtc12.8_sass_1_" + "0" * 39: "short sha",
                      "x_arch9.0_nvrtc12.8_sass_1_" + "f" * 40: "not a binary", "README": "r"})
    dry, _ = clear_and_prove(sandbox, ("--aten",), kernels, kernels)
    assert "kept: named like torch's files but its content is not" in dry.output


def test_manifest_only(sandbox, monkeypatch, real):
    cache_dir = sandbox / "cache"
    real(cache_dir)
    manifest = cache_dir / locations.MANIFEST_NAME
    manifest.write_text('{"format": 1, "flexdoctor_version": "0.1", "fingerprint": {}}')
    (cache_dir / locations.LOCK_NAME).write_text("")  # left by an older flexdoctor
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache_dir))
    gone = {manifest, cache_dir / locations.LOCK_NAME}
    dry, _ = clear_and_prove(sandbox, ("--manifest",), gone, gone)
    assert "kept" not in dry.output  # the cache's own entries are not this plan's business


NEAR_MISSES = ["c" + "a" * 50 + ".py", "c" + "a" * 52 + ".py", "C" + "A" * 51 + ".py", "f" + "b" * 51, "a" * 51,
               "A" * 51, "B" * 53, "0" * 63 + ".best_config", "code_state.pkl", "x.lock", "__grp__", "tmp.pid_1_x",
               "lock", ".1.2.tmp.bak", "fxgraph.txt", "triton", "locks", "cache", "dynamo", "aotautograd",
               "k_arch9.0_nvrtc12.8_sass_1_" + "a" * 39, "ab", "zz", "2a", "AB", "a1", "__pycache__"]


@pytest.mark.parametrize("seed", range(6))
def test_random_user_trees_of_near_miss_names(sandbox, monkeypatch, real, seed):
    """Folder shapes nobody wrote by hand: user trees of names one step from the writers' rules,
    nested at random, in all three caches at once, beside real entries."""
    import random

    rnd = random.Random(seed)
    caches = {"TORCHINDUCTOR_CACHE_DIR": sandbox / "ind", "TRITON_CACHE_DIR": sandbox / "tri",
              "PYTORCH_KERNEL_CACHE_PATH": sandbox / "aten"}
    entries = real(caches["TORCHINDUCTOR_CACHE_DIR"]) | C.triton_cache(caches["TRITON_CACHE_DIR"])
    entries |= C.aten_kernel(caches["PYTORCH_KERNEL_CACHE_PATH"])
    for var, top in caches.items():
        monkeypatch.setenv(var, str(top))
        for _ in range(25):
            depth = rnd.randint(0, 3)
            parts = [rnd.choice(NEAR_MISSES + [p.name for p in top.iterdir()]) for _ in range(depth)]
            path = top.joinpath(*parts, rnd.choice(NEAR_MISSES) + rnd.choice(["", ".txt", ".py", ".so", ".json"]))
            if os.path.lexists(path) or any(p.exists() and not p.is_dir() for p in path.parents):
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(rnd.choice(["mine", "\x7fELF", "{}", "import torch", ".version .target"]))
    clear_and_prove(sandbox, (), entries, {p for p in files(entries) if not (set(p.parents) & _mixed(entries))})


def _mixed(entries: set) -> set:
    """Cache folders a random user file landed in: their own files still go, but the test cannot
    tell in advance which ones (a user file can sit beside them), so it only checks the rest."""
    return {p for p in entries if p.is_dir() and any(c not in entries for c in p.iterdir())}
