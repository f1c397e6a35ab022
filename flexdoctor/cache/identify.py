"""What torch, Inductor, Triton and ATen write into their caches, by name AND content.

clear-cache deletes only what a rule here identifies; everything else (hidden files, unknown
names, symbolic links, a folder holding anything unidentified) is kept and reported. A rule
is a function ``(directory, children) -> {name: verdict}`` where a verdict is ``FILE`` (this
regular file is the writer's), another rule (a directory of the writer's: look inside with
that rule), or a reason word for keeping it. Each pattern cites the code that writes it.

Sources read for these rules:
- torch 2.13.0 (the wheel): torch/_inductor/codecache.py (``get_path``, ``write``,
  ``write_atomic``, ``FxGraphCache``, ``get_lock_dir``, ``CacheBase.get_local_cache_path``),
  torch/_inductor/cache_key.py (key strategies), torch/_functorch/_aot_autograd/
  autograd_cache.py (``AOTAutogradCache``), torch/_inductor/runtime/autotune_cache.py
  (``.best_config``), torch/_dynamo/pgo.py (``code_state_*.pkl``),
  torch/_inductor/runtime/cache_dir_utils.py (``triton/<device>``). The same layout is in
  torch 2.4-2.12 (FACTS §10); where older releases differ the rule says so.
- triton 3.6.0 and 3.8.0 (the wheels): triton/runtime/cache.py (``FileCacheManager``,
  ``_base32``, ``put_group``), triton/compiler/compiler.py (the metadata group of a kernel),
  triton/runtime/build.py (launcher modules), triton/runtime/autotuner.py (``.autotune.json``);
  triton at commit 10852d2e (before knobs.py) for the lock file of older releases.
- pytorch aten/src/ATen/native/cuda/jit_utils.cpp at commit 002a5676
  (``jit_pwise_function``: the NVRTC/jiterator kernel file names).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from typing import Callable, Optional

from . import locations

FILE = "file"  # the verdict for a regular file the writer wrote
Rule = Callable[[str, list], dict]

HEAD_BYTES = 4096
JSON_LIMIT = 64 << 20  # larger "JSON" is not something these writers produce; keep it

# torch/_inductor/cache_key.py: CacheKeyStrategy.digest, base32 of a sha256 cut to 51 chars, lower
# case; CODE ("c"), FX_GRAPH ("f") prefixes; autograd_cache.py keys are "a" + the same digest.
B32 = "[a-z2-7]"
SHARD = re.compile(rf"^{B32}{{2}}$")  # codecache.get_path: cache_dir()/basename[1:3]
CODE_FILE = re.compile(rf"^c{B32}{{51}}((?:\.[A-Za-z0-9_]+)+)$")  # codecache.write: <key>.<ext>
DIGEST = re.compile(rf"^{B32}{{51}}$")  # FxGraphCache._write_to_local_cache: sha256_hash(content)
FX_KEY = re.compile(rf"^f{B32}{{51}}$")  # fxgraph/<key[1:3]>/<key>
AOT_KEY = re.compile(rf"^a{B32}{{51}}$")  # aotautograd/<key>
# codecache.write_atomic: path.parent / f".{os.getpid()}.{threading.get_ident()}.tmp"
ATOMIC_TMP = re.compile(r"^\.\d+\.\d+\.tmp$")
# autotune_cache.py _make_local_cache_key: <sha256 hex>.best_config (2.6+); torch 2.4/2.5 wrote
# os.path.splitext(<kernel .py>)[0] + ".best_config", i.e. c<51>.best_config.
BEST_CONFIG = re.compile(rf"^(?:[0-9a-f]{{64}}|c{B32}{{51}})\.best_config$")
LOCK_FILE = re.compile(r"^[A-Za-z0-9_.-]+\.lock$")  # get_lock_dir()/<key>.lock (filelock: empty)
SYSTEM_HASH = re.compile(r"^[0-9a-f]{64}$")  # CacheBase.get_local_cache_path: cache/<system hash>
CODE_STATE = re.compile(r"^code_state_.+\.pkl(\.tmp|\.lock)?$")  # pgo.code_state_path + write_local_impl
DEVICE = re.compile(r"^\d+$")  # cache_dir_utils.triton_cache_dir: triton/<device index>

# triton/runtime/cache.py: get_cache_manager(key) -> FileCacheManager(_base32(key)), base32 of a
# sha256 without "=" padding: 52 chars of A-Z2-7. Releases before _base32 used the hex key.
TRITON_ENTRY = re.compile(r"^(?:[A-Z2-7]{52}|[0-9a-f]{64})$")
TRITON_TMP = re.compile(r"^tmp\.pid_\d+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# triton/runtime/build.py compile_module_from_src: f"{name}{sysconfig EXT_SUFFIX}"; older f"{name}.so"
TRITON_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.cpython-[A-Za-z0-9_.-]+|\.abi3)?\.so$")
GROUP_PREFIX = "__grp__"  # FileCacheManager.put_group: __grp__<metadata file name>

# jit_utils.cpp jit_pwise_function: <kernel>_arch<major>.<minor> (ROCm: _arch<gcnArchName>)
# _nvrtc<major>.<minor>_<sass|ptx>_<code length>_<sha1 of the code>; "_tmp_<pid>" while written.
ATEN_KERNEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*_arch(?:\d+\.\d+|gfx[0-9a-z]+(?::[a-z_]+[+-])*)"
                         r"_nvrtc\d+\.\d+_(?:sass|ptx)_\d+_[0-9a-f]{40}(?:_tmp_\d+)?$")

# Extensions Inductor gives generated files (codecache.write callers: py, cpp, main.cpp,
# wrapper.cpp, kernel.cpp, h, txt, json, S/asm consts, cubin/hsaco/spv/fatbin binaries, so, o),
# with what their content must look like.
TEXT_EXT = {"py", "cpp", "cc", "c", "h", "hpp", "cu", "cuh", "S", "s", "asm", "ll", "llir", "ttir", "ttgir",
            "source", "ptx", "json", "txt", "log", "amdgcn"}
ELF = b"\x7fELF"
MACHO = (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe")  # Inductor on macOS
MAGIC_EXT = {"so": (ELF,) + MACHO, "o": (ELF,) + MACHO, "pyd": (b"MZ",), "dll": (b"MZ",),
             "cubin": (ELF,), "hsaco": (ELF,), "spv": (b"\x03\x02\x23\x07",), "gch": (b"gpch",),
             "fatbin": (b"\x50\xed\x55\xba",)}


# --------------------------------------------------------------------------- content

def head(path: str, size: int = HEAD_BYTES) -> Optional[bytes]:
    """The first bytes of a regular file, never following a symlink; None when unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        chunks, left = [], size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def is_text(data: Optional[bytes]) -> bool:
    if data is None or b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3  # a character cut by the end of the head
    return True


def load_json(path: str) -> object:
    """The parsed JSON of a file, or None (unreadable, too large, not JSON)."""
    try:
        if os.lstat(path).st_size > JSON_LIMIT:
            return None
    except OSError:
        return None
    data = head(path, JSON_LIMIT)
    try:
        return json.loads(data.decode("utf-8")) if data is not None else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def is_pickle(data: Optional[bytes]) -> bool:
    """pickle protocol 2-5 (torch pickles its cache entries with the default protocol)."""
    return data is not None and len(data) >= 2 and data[0] == 0x80 and 2 <= data[1] <= 5


def empty(entry: os.DirEntry) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_size == 0
    except OSError:
        return False


def keep(entry: os.DirEntry) -> str:
    return "hidden" if entry.name.startswith(".") else "unknown"


def code_content_ok(path: str, ext: str) -> Optional[bool]:
    """Does the file look like Inductor's output for its extension? None: an extension we do not know."""
    if ext in MAGIC_EXT:
        data = head(path, 8)
        return data is not None and data.startswith(MAGIC_EXT[ext])  # startswith takes the tuple
    if ext in TEXT_EXT:
        return is_text(head(path))
    return None


def _verdict(ok: Optional[bool], entry: os.DirEntry) -> str:
    if ok:
        return FILE
    return keep(entry) if ok is None else "content"


# --------------------------------------------------------------------------- Inductor

def code_dir(path: str, children: list) -> dict:
    """<root>/<2 chars>/: generated code named c<51>.<ext> by codecache.write, whose chars [1:3]
    name this directory; kernels' .best_config; write_atomic's leftovers."""
    shard = os.path.basename(path)
    out = {}
    for c in children:
        m = CODE_FILE.match(c.name)
        if c.is_dir(follow_symlinks=False):
            out[c.name] = keep(c)
        elif m and c.name[1:3] == shard:
            out[c.name] = _verdict(code_content_ok(c.path, m.group(1).rsplit(".", 1)[-1]), c)
        elif BEST_CONFIG.match(c.name):
            out[c.name] = FILE if isinstance(load_json(c.path), dict) else "content"
        elif ATOMIC_TMP.match(c.name):
            out[c.name] = FILE
        else:
            out[c.name] = keep(c)
    return out


def _digest(data: bytes) -> str:
    # codecache.sha256_hash = COMPACT_CACHE_KEY_STRATEGY.key: base32(sha256)[:51].lower()
    return base64.b32encode(hashlib.sha256(data).digest())[:51].decode("ascii").lower()


def _graph_entry(path: str, name: str) -> bool:
    """A torch pickle (cheap: its first bytes), else a file named by the sha256 of its content."""
    start = head(path, 512)
    if is_pickle(start) and b"torch" in start:
        return True
    data = head(path, JSON_LIMIT)
    return data is not None and _digest(data) == name


def graph_entries(path: str, children: list) -> dict:
    """fxgraph/<2>/<key>/ and aotautograd/<key>/: entries named by the sha256 of their pickled
    content (torch 2.13 FxGraphCache._write_to_local_cache, AOTAutogradCache); releases that named
    them otherwise still pickled a torch object."""
    out = {}
    for c in children:
        if c.is_file(follow_symlinks=False) and DIGEST.match(c.name):
            out[c.name] = FILE if _graph_entry(c.path, c.name) else "content"
        elif c.is_file(follow_symlinks=False) and ATOMIC_TMP.match(c.name):
            out[c.name] = FILE
        else:
            out[c.name] = keep(c)
    return out


def _dirs_matching(pattern: "re.Pattern", rule: Rule, same_shard: bool = False) -> Rule:
    def container(path: str, children: list) -> dict:
        shard = os.path.basename(path)
        out = {}
        for c in children:
            ok = c.is_dir(follow_symlinks=False) and pattern.match(c.name)
            out[c.name] = rule if ok and (not same_shard or c.name[1:3] == shard) else keep(c)
        return out
    return container


fx_shard = _dirs_matching(FX_KEY, graph_entries, same_shard=True)
fxgraph = _dirs_matching(SHARD, fx_shard)
aotautograd = _dirs_matching(AOT_KEY, graph_entries)


def locks(path: str, children: list) -> dict:
    """locks/<key>.lock: filelock's lock files, created empty (O_TRUNC) and never written."""
    return {c.name: FILE if c.is_file(follow_symlinks=False) and LOCK_FILE.match(c.name) and empty(c)
            else keep(c) for c in children}


def local_cache(path: str, children: list) -> dict:
    """cache/<system hash>: CacheBase.update_local_cache writes {"system": ..., "cache": ...}."""
    out = {}
    for c in children:
        if c.is_file(follow_symlinks=False) and SYSTEM_HASH.match(c.name):
            data = load_json(c.path)
            out[c.name] = FILE if isinstance(data, dict) and {"system", "cache"} <= set(data) else "content"
        else:
            out[c.name] = keep(c)
    return out


def dynamo(path: str, children: list) -> dict:
    """dynamo/code_state_<key>.pkl (automatic-dynamic PGO), with its .lock and .tmp."""
    out = {}
    for c in children:
        m = c.is_file(follow_symlinks=False) and CODE_STATE.match(c.name)
        if not m:
            out[c.name] = keep(c)
        elif m.group(1) == ".lock":
            out[c.name] = FILE if empty(c) else "content"
        else:
            out[c.name] = FILE if is_pickle(head(c.path, 2)) else "content"
    return out


def _manifest_ok(path: str) -> bool:
    from .manifest import READS  # every manifest format this flexdoctor wrote (1: before compile options)

    data = load_json(path)
    return isinstance(data, dict) and data.get("format") in READS and "flexdoctor_version" in data


def flexdoctor_file(entry: os.DirEntry) -> Optional[str]:
    """flexdoctor's own files in an Inductor root: the manifest, its temporary file
    (manifest.write: mkstemp(prefix=".flexdoctor-manifest.", suffix=".tmp")) and the lock file
    older flexdoctor releases created. None: not flexdoctor's."""
    if not entry.is_file(follow_symlinks=False):
        return None
    if entry.name == locations.MANIFEST_NAME:
        return FILE if _manifest_ok(entry.path) else "content"
    if entry.name == locations.LOCK_NAME:
        return FILE if empty(entry) else "content"
    if entry.name.startswith(".flexdoctor-manifest.") and entry.name.endswith(".tmp"):
        return FILE
    return None


# cache/keys.py: flexdoctor-keys/fx-<FX graph key>.json, written through mkstemp(prefix=".flexdoctor-key.",
# suffix=".tmp") and os.replace.
KEYS_FILE = re.compile(rf"^fx-(f{B32}{{51}})\.json$")


def flexdoctor_keys(path: str, children: list) -> dict:
    """flexdoctor-keys/ (cache/keys.py, for `flexdoctor cache why`): one JSON file per FX graph
    warm-cache compiled, ``{"format": 1, "key": <the key in its name>, ...}``, and keys.record's
    temporary files."""
    from .keys import FORMAT

    out = {}
    for c in children:
        m = KEYS_FILE.match(c.name)
        if not c.is_file(follow_symlinks=False):
            out[c.name] = keep(c)
        elif m:
            data = load_json(c.path)
            ok = isinstance(data, dict) and data.get("format") == FORMAT and data.get("key") == m.group(1)
            out[c.name] = FILE if ok else "content"
        elif c.name.startswith(".flexdoctor-key.") and c.name.endswith(".tmp"):
            out[c.name] = FILE
        else:
            out[c.name] = keep(c)
    return out


def precompiled_headers(path: str, children: list) -> dict:
    """precompiled_headers/ (codecache._precompile_header, always under the *default* cache dir,
    even when TORCHINDUCTOR_CACHE_DIR is set): write(..., extension="h", specified_dir=_HEADER_DIR)
    gives c<51>.h, gcc's precompiled c<51>.h.gch beside it, and locks/<key>.lock."""
    out = {}
    for c in children:
        m = CODE_FILE.match(c.name)
        if c.is_dir(follow_symlinks=False):
            out[c.name] = locks if c.name == "locks" else keep(c)
        elif m and m.group(1) in (".h", ".h.gch"):
            out[c.name] = _verdict(code_content_ok(c.path, m.group(1).rsplit(".", 1)[-1]), c)
        else:
            out[c.name] = keep(c)
    return out


INDUCTOR_DIRS: dict = {"fxgraph": fxgraph, "aotautograd": aotautograd, "locks": locks,
                       "cache": local_cache, "dynamo": dynamo, "precompiled_headers": precompiled_headers}


# Other names torch 2.13 writes under cache_dir(), rarely and not for flex_attention: kept, with
# a reason that says so, because their entries are not checked one by one. cpp_builder
# install_gcc_via_conda (gcc/), triton_heuristics (unhashed_kernel_inputs/), aoti_eager.py,
# autoheuristic.py, codegen/cutlass/utils.py (torch_cutlass/), compiler_bisector.py (bisect/),
# runtime/cutedsl_cache.py (cutedsl_compile_cache/), runtime/caching/interfaces.py (memoizer_cache.*).
TORCH_UNCHECKED = {"gcc", "unhashed_kernel_inputs", "aoti_eager", "autoheuristic", "torch_cutlass", "bisect",
                   "cutedsl_compile_cache", "memoizer_cache.json", "memoizer_cache.lock"}


def inductor_root(path: str, children: list) -> dict:
    """The Inductor cache dir: the directories Inductor names, two-char code dirs, flexdoctor's files."""
    out = {}
    for c in children:
        is_dir = c.is_dir(follow_symlinks=False)
        if is_dir and c.name == "triton":
            out[c.name] = triton_devices
        elif is_dir and c.name in INDUCTOR_DIRS:
            out[c.name] = INDUCTOR_DIRS[c.name]
        elif is_dir and c.name == locations.KEYS_NAME:
            out[c.name] = flexdoctor_keys
        elif is_dir and SHARD.match(c.name):
            out[c.name] = code_dir
        elif c.name in TORCH_UNCHECKED:
            out[c.name] = "unchecked"
        else:
            out[c.name] = flexdoctor_file(c) or keep(c)
    return out


def manifest_only(path: str, children: list) -> dict:
    """Only flexdoctor's own files (clear-cache --manifest: the manifest and the warmed keys of
    flexdoctor-keys/): the rest is not this plan's business."""
    out = {c.name: v for c in children if (v := flexdoctor_file(c)) == FILE}
    for c in children:
        if c.name == locations.KEYS_NAME and c.is_dir(follow_symlinks=False):
            out[c.name] = flexdoctor_keys
    return out


# --------------------------------------------------------------------------- Triton

def _base32(hex_key: str) -> Optional[str]:
    # triton/runtime/cache.py _base32: b32encode(bytes.fromhex(key)).decode().rstrip("=")
    try:
        return base64.b32encode(bytes.fromhex(hex_key)).decode("ascii").rstrip("=")
    except ValueError:
        return None


def _group_members(entry_dir: str, group: os.DirEntry, names: set) -> set:
    """The files a verified group file vouches for (itself included), or nothing.

    compiler.py writes the metadata JSON (whose "hash" is the sha256 hex the directory is named
    by, as _base32 or, before it, as hex) and then put_group(<metadata name>, {file: path}).
    """
    data = load_json(group.path)
    children = data.get("child_paths") if isinstance(data, dict) else None
    listed = set(children) if isinstance(children, (dict, list)) else set()  # list: RemoteCacheManager
    meta_name = group.name[len(GROUP_PREFIX):]
    if not listed or meta_name not in names:
        return set()
    meta = load_json(os.path.join(entry_dir, meta_name))
    key = meta.get("hash") if isinstance(meta, dict) else None
    name = os.path.basename(entry_dir)
    if not isinstance(key, str) or name not in (key, _base32(key)):
        return set()
    return {group.name, meta_name} | {n for n in listed if isinstance(n, str) and n in names}


def _triton_file(entry: os.DirEntry) -> str:
    """A file of a Triton entry that no group file lists."""
    if TRITON_MODULE.match(entry.name):  # build.py: a compiled launcher / utils module
        data = head(entry.path, 4)
        return FILE if data is not None and data.startswith(ELF) else "content"
    if entry.name.endswith(".autotune.json"):  # autotuner.py check_disk_cache
        data = load_json(entry.path)
        return FILE if isinstance(data, dict) and "configs_timings" in data else "content"
    if entry.name == "lock":  # FileCacheManager.lock_path; older releases held a FileLock on it
        return FILE if empty(entry) else "content"
    return keep(entry)


def triton_tmp(path: str, children: list) -> dict:
    """tmp.pid_<pid>_<uuid4>/ that FileCacheManager.put writes through and removes (left by a crash)."""
    return {c.name: FILE if c.is_file(follow_symlinks=False) else keep(c) for c in children}


def triton_entry(path: str, children: list) -> dict:
    """<52-char base32 key>/: one kernel's files, vouched for by its verified group file, or a
    compiled launcher module, or autotuning results."""
    names = {c.name for c in children if c.is_file(follow_symlinks=False)}
    members: set = set()
    for c in children:
        if c.is_file(follow_symlinks=False) and c.name.startswith(GROUP_PREFIX):
            members |= _group_members(path, c, names)
    out = {}
    for c in children:
        if c.is_dir(follow_symlinks=False):
            out[c.name] = triton_tmp if TRITON_TMP.match(c.name) else keep(c)
        elif c.name in members:
            out[c.name] = FILE
        else:
            out[c.name] = _triton_file(c)
    return out


def triton_root(path: str, children: list) -> dict:
    """Triton's cache dir ($TRITON_CACHE_DIR, ~/.triton/cache, or Inductor's triton/<device>)."""
    return {c.name: triton_entry if c.is_dir(follow_symlinks=False) and TRITON_ENTRY.match(c.name)
            else keep(c) for c in children}


triton_devices = _dirs_matching(DEVICE, triton_root)


# --------------------------------------------------------------------------- ATen

def _kernel_binary(data: Optional[bytes]) -> bool:
    """What nvrtcGetCUBIN (an ELF) or nvrtcGetPTX (PTX text: .version/.target) return."""
    if data is None:
        return False
    if data.startswith(ELF):
        return True
    return is_text(data) and b".version" in data and b".target" in data


def aten_root(path: str, children: list) -> dict:
    """ATen's NVRTC/jiterator kernel cache: one file per kernel, named as jit_pwise_function does."""
    out = {}
    for c in children:
        if c.is_file(follow_symlinks=False) and ATEN_KERNEL.match(c.name):
            data = head(c.path)
            partial = "_tmp_" in c.name and data == b""
            out[c.name] = FILE if partial or _kernel_binary(data) else "content"
        else:
            out[c.name] = keep(c)
    return out


ROOT_RULES: dict = {"inductor": inductor_root, "triton": triton_root, "aten": aten_root,
                    "manifest": manifest_only}
