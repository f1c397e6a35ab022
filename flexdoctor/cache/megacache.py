"""torch's mega-cache bytes (``torch.compiler.save_cache_artifacts``), read without torch and
without unpickling anything, so that ``warm-cache --import`` can refuse a crafted bundle before
torch sees it.

The layout (torch/utils/_appending_byte_serializer.py and torch/compiler/_cache.py, read in
torch 2.13.0; the older layouts from the public history of the same files):

- ``[crc32 of the rest: 4 bytes][u64 version = 1]`` then records, every integer a big-endian
  u64 and every string ``[u64 length][base64 of UTF-8]`` (torch 2.8+ writes the checksum and
  base64); the earlier writer (``BytesWriter(preallocate_size)``) had no checksum and wrote
  strings as plain UTF-8.
- records, torch 2.8+ (``_serialize_single_cache``): ``[str type][u64 count]`` then ``count`` x
  ``[str key][bytes content]``; torch 2.7 (``CacheArtifact.serialize`` with the
  ``CacheArtifactType`` enum): ``[u64 type: 0 inductor, 1 autotune, 2 aot_autograd, 3 pgo][str
  key][bytes content]``. A type string is at least 4 bytes long and an enum value at most 3, so
  the first word of a record tells the two apart.

Where each type writes its key (``populate_cache`` in 2.13; the 2.7 ``deserialize``):
``inductor`` -> ``fxgraph/<key[1:3]>/<key>/`` (FxGraphCache._write_to_local_cache; the key is
``f`` + 51 base32 characters, cache_key.FX_GRAPH_CACHE_KEY_STRATEGY), ``aot_autograd`` ->
``aotautograd/<key>/`` (``a`` + 51), ``autotune`` -> ``os.path.join(cache_dir(), key)`` with the key
``<kernel folder>/<sha256 hex>.best_config`` (AutotuneCache._artifact_key_from_local_cache_key): an
absolute or ``..`` key writes anywhere. ``pgo`` (a free-text job key, pickled code state) and
``precompile`` (DynamoCache, a path) are never written by ``warm-cache --export`` and are refused,
as is any other type.

Contents: ``autotune`` is JSON (RemoteCacheJsonSerde); ``inductor`` and ``aot_autograd`` are
pickles that torch loads on every cache hit, and their graphs carry generated Python source that
runs then. No inspection can make that safe: a bundle is code, trusted only for who wrote it
(``bundlefile``) and the ``--sha256`` pin. :func:`screen_pickle` is a first screen on top (the
pickle may name only torch, sympy and a few plain-data classes), not a sandbox.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
import pickletools
import re
import zlib
from dataclasses import dataclass
from typing import Iterator

VERSION = 1
ENUM_TYPES = {0: "inductor", 1: "autotune", 2: "aot_autograd", 3: "pgo"}
KEY_SHAPES = {
    "inductor": re.compile(r"f[a-z2-7]{51}"),
    "aot_autograd": re.compile(r"a[a-z2-7]{51}"),
    "autotune": re.compile(r"[A-Za-z0-9]{2,64}/[0-9a-f]{64}\.best_config"),
}
MAX_ARTIFACTS = 100_000
MAX_AUTOTUNE_BYTES = 1 << 20


class BadArtifacts(ValueError):
    """The blob is not what ``warm-cache --export`` writes. ``reason`` is a stable word (words in
    locale/en.bundle-security.toml ``bundle-refused.<reason>``), ``args`` its values."""

    def __init__(self, reason: str, **args: object):
        super().__init__(f"{reason}: {args}")
        self.reason, self.args_ = reason, args


@dataclass(frozen=True)
class Layout:
    checksum: bool  # crc32 in front, strings in base64 (torch 2.8+)
    enum_records: bool  # torch 2.7: one record per artifact, its type an enum value


@dataclass(frozen=True)
class Artifact:
    type: str
    key: str
    content: bytes


class _Reader:
    def __init__(self, data: bytes, start: int, b64: bool):
        self.data, self.i, self.b64 = data, start, b64

    def done(self) -> bool:
        return self.i == len(self.data)

    def u64(self) -> int:
        if self.i + 8 > len(self.data):
            raise BadArtifacts("truncated")
        value = int.from_bytes(self.data[self.i:self.i + 8], "big")
        self.i += 8
        return value

    def raw(self) -> bytes:
        size = self.u64()
        if size > len(self.data) - self.i:
            raise BadArtifacts("truncated")
        out = self.data[self.i:self.i + size]
        self.i += size
        return out

    def text(self, limit: int = 4096) -> str:
        raw = self.raw()
        if len(raw) > limit:
            raise BadArtifacts("bad-string")
        try:
            return (base64.b64decode(raw, validate=True) if self.b64 else raw).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise BadArtifacts("bad-string") from None


def layout_of(data: bytes) -> Layout:
    if len(data) >= 12 and int.from_bytes(data[4:12], "big") == VERSION \
            and zlib.crc32(data[4:]).to_bytes(4, "big") == data[:4]:
        checksum = True
    elif len(data) >= 8 and int.from_bytes(data[:8], "big") == VERSION:
        checksum = False
    else:
        raise BadArtifacts("not-mega-cache")
    start = 12 if checksum else 8
    first = int.from_bytes(data[start:start + 8], "big") if len(data) >= start + 8 else 4
    return Layout(checksum, first in ENUM_TYPES)


def _records(reader: _Reader, layout: Layout) -> Iterator[Artifact]:
    while not reader.done():
        if layout.enum_records:
            code = reader.u64()
            if code not in ENUM_TYPES:
                raise BadArtifacts("unknown-type", type=str(code))
            yield Artifact(ENUM_TYPES[code], reader.text(), reader.raw())
            continue
        kind, count = reader.text(64), reader.u64()
        if count > MAX_ARTIFACTS:
            raise BadArtifacts("truncated")
        for _ in range(count):
            yield Artifact(kind, reader.text(), reader.raw())


def parse(data: bytes) -> tuple:
    """(Layout, [Artifact]) of a mega-cache blob; BadArtifacts for anything else."""
    layout = layout_of(data)
    reader = _Reader(data, 12 if layout.checksum else 8, layout.checksum)
    return layout, list(_records(reader, layout))


def _word(value: str) -> str:
    """A value from the bundle as it may be shown: printable ASCII only, at most 80 characters."""
    return "".join(c if 32 < ord(c) < 127 else "?" for c in value[:80])


def check_key(artifact: Artifact, cache_dir: str) -> None:
    """The key is hash-shaped for its type and lands inside ``cache_dir``."""
    shape = KEY_SHAPES.get(artifact.type)
    if shape is None:
        raise BadArtifacts("unknown-type", type=_word(artifact.type))
    if not shape.fullmatch(artifact.key):
        raise BadArtifacts("bad-key", type=artifact.type, key=_word(artifact.key))
    rel = {"inductor": os.path.join("fxgraph", artifact.key[1:3], artifact.key),
           "aot_autograd": os.path.join("aotautograd", artifact.key)}.get(artifact.type, artifact.key)
    root = os.path.realpath(cache_dir)
    target = os.path.realpath(os.path.join(root, rel))
    if os.path.commonpath([root, target]) != root:
        raise BadArtifacts("bad-key", type=artifact.type, key=_word(artifact.key))


def check_content(artifact: Artifact) -> None:
    if artifact.type == "autotune":
        try:
            ok = len(artifact.content) <= MAX_AUTOTUNE_BYTES and isinstance(json.loads(artifact.content), dict)
        except (ValueError, RecursionError):
            ok = False
        if not ok:
            raise BadArtifacts("bad-content", type=artifact.type, key=artifact.key)
        return
    screen_pickle(artifact.content, artifact.key)


# --------------------------------------------------------------------------- the pickle screen

# What torch's own cache entries name besides torch.* (read from real entries of torch 2.13,
# CPU): plain data containers. Everything else outside torch, sympy and triton is refused, and so
# are names that reach past a module (``a.b``) and callables that load code or touch files.
PLAIN = {
    "builtins": {"set", "frozenset", "list", "dict", "tuple", "slice", "complex", "bytearray", "range", "int",
                 "float", "str", "bytes", "bool", "object"},
    "collections": {"OrderedDict", "defaultdict", "Counter", "deque"},
    "copyreg": {"_reconstructor"},
    "_codecs": {"encode"},
    "functools": {"partial"},
    "enum": {"Enum", "IntEnum"},
    "pathlib": {"PosixPath", "PurePosixPath", "Path"},
    # A GPU entry keeps a kernel's signature (H100, torch 2.11, Python 3.12): plain data classes.
    "inspect": {"Signature", "Parameter", "_ParameterKind", "_empty"},
}
# Python 3.12 pickles an enum member as getattr(EnumClass, "NAME"): getattr is taken only in
# exactly that shape (an allowed global, a public name, called at once; see _getattr_calls).
GETATTR = ("builtins", "getattr")
TRUSTED_ROOTS = ("torch", "sympy", "triton")
DANGEROUS = {"CDLL", "cdll", "PyDLL", "pydll", "LibraryLoader", "import_module", "load_inline", "load",
             "load_library", "write_atomic", "system", "popen", "Popen", "exec", "eval", "compile",
             "getattr", "setattr", "__import__", "run", "call", "check_call", "check_output", "spawn",
             "open", "remove", "rmtree", "unlink", "rename", "replace", "write", "loads", "_load_from_bytes"}
_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING",
            "STRING"}


def _allowed(module: str, name: str) -> bool:
    # pickle names some objects by a dotted path from the first module that reaches them:
    # torch.contiguous_format (its __reduce__ says "torch.contiguous_format") is saved as
    # torch._utils / torch.contiguous_format, torch._utils holding `import torch` (pickle.whichmodule).
    # Only one step back into a trusted root is accepted, judged as that root's own attribute.
    root, dot, rest = name.partition(".")
    if dot and module.split(".")[0] in TRUSTED_ROOTS and root in TRUSTED_ROOTS and "." not in rest:
        return all(p.isidentifier() for p in module.split(".")) and _allowed(root, rest)
    if name in DANGEROUS or not name.isidentifier():
        return False
    if module in PLAIN:
        return name in PLAIN[module]
    return module.split(".")[0] in TRUSTED_ROOTS and all(p.isidentifier() for p in module.split("."))


def _globals(content: bytes) -> Iterator[tuple]:
    """(module, name) of every GLOBAL / STACK_GLOBAL, tracking the memo as the Unpickler would;
    a STACK_GLOBAL whose operands are not plain strings yields (None, None)."""
    memo: dict = {}
    recent: list = []  # values of the latest pushes, strings or None
    for op, arg, _ in pickletools.genops(io.BytesIO(content)):
        name = op.name
        if name in ("GLOBAL", "INST"):
            module, _, attr = str(arg).partition(" ")
            yield module, attr
            recent.append(None)
        elif name in ("EXT1", "EXT2", "EXT4"):  # copyreg's extension registry: refused outright
            yield None, None
        elif name in ("PROTO", "FRAME"):  # framing: the stack is untouched
            continue
        elif name == "STACK_GLOBAL":
            yield (recent[-2], recent[-1]) if len(recent) >= 2 else (None, None)
            recent.append(None)
        elif name in _STRINGS:
            recent.append(arg if isinstance(arg, str) else None)
        elif name == "MEMOIZE":
            memo[len(memo)] = recent[-1] if recent else None
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[arg] = recent[-1] if recent else None
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            recent.append(memo.get(arg))
        else:
            recent.append(None)
        del recent[:-2]


_MARK = object()
_PASS_FIRST = {"BUILD", "APPEND", "APPENDS", "SETITEM", "SETITEMS", "ADDITEMS", "MEMOIZE", "PUT", "BINPUT",
               "LONG_BINPUT"}  # ops whose result is their first operand, changed in place


def _pop(stack: list, before: list) -> list:
    """The operands an opcode takes off the symbolic stack (a mark and the slice above it as one)."""
    if pickletools.markobject in before:
        at = len(stack) - 1 - stack[::-1].index(_MARK)  # ValueError: no mark (a broken stream)
        above = stack[at + 1:]
        del stack[at:]
        k = before.index(pickletools.markobject)
    else:
        above, k = None, len(before)
    if k > len(stack):
        raise ValueError("stack underflow")
    taken = stack[len(stack) - k:] if k else []
    del stack[len(stack) - k:]
    return taken + ([("T", above)] if above is not None else [])


def _result(name: str, arg, taken: list):
    """The symbolic value an opcode pushes: a string, ("G", module, name), ("T", items),
    ("O", callable) for an object built by a call, ("A",) for an attribute fetched; else None."""
    if name in _STRINGS:
        return arg if isinstance(arg, str) else None
    if name == "GLOBAL":
        module, _, attr = str(arg).partition(" ")
        return ("G", module, attr)
    if name == "STACK_GLOBAL":
        return ("G", taken[0], taken[1]) if all(isinstance(x, str) for x in taken) else None
    if name in ("TUPLE1", "TUPLE2", "TUPLE3", "EMPTY_TUPLE"):
        return ("T", list(taken))
    if name == "TUPLE":
        return taken[-1]
    if name in ("REDUCE", "NEWOBJ", "NEWOBJ_EX", "OBJ", "INST"):
        return ("A",) if taken and taken[0] == ("G",) + GETATTR and name == "REDUCE" else ("O", taken[0] if taken else None)
    if name in _PASS_FIRST:
        return taken[0]
    return None


def _getattr_ok(args) -> bool:
    """getattr(owner, "name") as torch's entries use it: a bound method of an object the pickle built
    (``AutotuneCache().save_cache_hook``), or a member of an allowed class (Python 3.12 enums)."""
    if not (isinstance(args, tuple) and args[0] == "T" and len(args[1]) == 2):
        return False
    owner, attr = args[1]
    if not (isinstance(attr, str) and attr.isidentifier() and not attr.startswith("_") and attr not in DANGEROUS):
        return False
    if isinstance(owner, tuple) and owner[0] == "O":
        return True
    return (isinstance(owner, tuple) and owner[0] == "G" and isinstance(owner[1], str) and isinstance(owner[2], str)
            and _allowed(owner[1], owner[2]) and owner[2] != owner[2].lower())  # a class, not a module


def _getattr_calls(content: bytes) -> bool:
    """Whether every call of builtins.getattr in the stream has the shape ``_getattr_ok`` takes,
    read by running the pickle machine on symbolic values (nothing is imported or called)."""
    stack: list = []
    memo: dict = {}
    for op, arg, _ in pickletools.genops(io.BytesIO(content)):
        name = op.name
        if name in ("GET", "BINGET", "LONG_BINGET"):
            stack.append(memo.get(arg))
            continue
        if name == "MARK":
            stack.append(_MARK)
            continue
        taken = _pop(stack, op.stack_before)
        if name == "REDUCE" and taken[0] == ("G",) + GETATTR and not _getattr_ok(taken[1]):
            return False
        if name in ("MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"):
            memo[len(memo) if name == "MEMOIZE" else arg] = taken[0]
        value = _result(name, arg, taken)
        stack.extend([value] * len(op.stack_after))
    return True


def screen_pickle(content: bytes, key: str) -> None:
    if content[:1] != b"\x80" or content[1:2] not in (b"\x02", b"\x03", b"\x04", b"\x05"):
        raise BadArtifacts("bad-content", type="pickle", key=key)
    try:
        named = list(_globals(content))
        getattr_ok = GETATTR not in named or _getattr_calls(content)
    except (ValueError, EOFError, IndexError) as exc:  # pickletools: a truncated or invalid opcode stream
        raise BadArtifacts("bad-content", type="pickle", key=key) from exc
    for module, name in named:
        if (module, name) == GETATTR and getattr_ok:
            continue
        if not (isinstance(module, str) and isinstance(name, str) and _allowed(module, name)):
            raise BadArtifacts("foreign-code", key=key, name=_word(f"{module}.{name}"))


def check(artifacts: list, cache_dir: str) -> None:
    seen = set()
    for a in artifacts:
        check_key(a, cache_dir)
        if (a.type, a.key) in seen:
            raise BadArtifacts("duplicate", type=a.type, key=a.key)
        seen.add((a.type, a.key))
        check_content(a)


# --------------------------------------------------------------------------- writing back

def _str(out: bytearray, value: str, b64: bool) -> None:
    raw = value.encode("utf-8")
    _bytes(out, base64.b64encode(raw) if b64 else raw)


def _bytes(out: bytearray, value: bytes) -> None:
    out += len(value).to_bytes(8, "big")
    out += value


def serialize(layout: Layout, artifacts: list) -> bytes:
    """The checked artifacts written back in the layout they came in: what torch reads is exactly
    what was checked (no second parser to disagree with)."""
    out = bytearray(4 if layout.checksum else 0)
    out += VERSION.to_bytes(8, "big")
    if layout.enum_records:
        codes = {v: k for k, v in ENUM_TYPES.items()}
        for a in artifacts:
            out += codes[a.type].to_bytes(8, "big")
            _str(out, a.key, layout.checksum)
            _bytes(out, a.content)
    else:
        groups: dict = {}
        for a in artifacts:
            groups.setdefault(a.type, []).append(a)
        for kind, items in groups.items():
            _str(out, kind, layout.checksum)
            out += len(items).to_bytes(8, "big")
            for a in items:
                _str(out, a.key, layout.checksum)
                _bytes(out, a.content)
    if layout.checksum:
        out[:4] = zlib.crc32(bytes(out[4:])).to_bytes(4, "big")
    return bytes(out)


def checked(data: bytes, cache_dir: str) -> tuple:
    """(blob torch may load, [Artifact]) or BadArtifacts."""
    layout, artifacts = parse(data)
    if not artifacts:
        raise BadArtifacts("empty")
    check(artifacts, cache_dir)
    return serialize(layout, artifacts), artifacts


def summary(artifacts: list) -> dict:
    out: dict = {}
    for a in artifacts:
        out[a.type] = out.get(a.type, 0) + 1
    return out

