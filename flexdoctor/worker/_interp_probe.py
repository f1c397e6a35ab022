# Run BY THE TARGET INTERPRETER (flexdoctor check --python PATH), stdlib only, Python 3.8+.
# Reports the interpreter and what is installed in it WITHOUT importing torch (which costs
# 3-5 s): package metadata and torch/version.py read as text. Protocol (stdout): the result line
# of _wire.py.
import ast
import os
import re
import stat
import sys
import sysconfig

PACKAGES = (
    "torch",
    "triton",
    "pytorch-triton",
    "pytorch-triton-rocm",
    "triton-rocm",
    "triton-windows",
    "flash-attn",
    "flash-attn-3",
    "flash-attn-4",
    "flash_attn_3",
    "xformers",
    "diffusers",
    "transformers",
    "accelerate",
    "sageattention",
    "nvidia-ml-py",
    "pynvml",
    "nvidia-cuda-runtime-cu12",
    "nvidia-cuda-runtime",
    "nvidia-cuda-nvcc-cu12",
    "nvidia-cudnn-cu12",
    "nvidia-cudnn-cu13",
)


def _metadata():
    """What reads the installed distributions: :class:`_Dists` (a plain scan, ~1 ms) where it is
    sure to answer as importlib.metadata does, else importlib.metadata itself (its import alone
    costs ~30 ms: it pulls in the email package). None before Python 3.8 (no importlib.metadata:
    the packages are not reported, as before)."""
    if sys.version_info < (3, 8):
        return None
    from importlib.machinery import PathFinder

    plain = not any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path)
    if plain and all(not os.path.isfile(entry) for entry in sys.path if entry):
        return _Dists()
    import importlib.metadata as md

    return md


def _normalize(name):
    """importlib.metadata's ``Prepared.normalize`` (PEP 503 name, then '-' -> '_')."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


class _Dists(object):
    """``version``, ``requires`` and ``distribution(...).locate_file`` of importlib.metadata, for
    distributions in folders on ``sys.path`` (no zip, no custom finder: ``_metadata`` checks), found
    as its ``Lookup`` finds them: the first ``sys.path`` entry holding a ``NAME-*.dist-info`` or
    ``.egg-info`` (folder or, from distutils and old setup.py installs, a single file; names compared
    normalized), or for an ``.egg`` folder its ``EGG-INFO``. The metadata is read as
    ``PathDistribution.metadata`` reads it (METADATA, else PKG-INFO, else the .egg-info file itself;
    an empty one counts as missing) and parsed as email's compat32 parser does (``_parse_headers``).
    A missing distribution raises LookupError, unreadable metadata an exception: as importlib."""

    def __init__(self, path=None, fallback=True):
        # path: the folders to read (default sys.path); fallback: ask importlib.metadata about the
        # rare metadata it words differently per Python (never for an interpreter not started).
        self._index = None
        self._path = sys.path if path is None else path
        self._fallback = fallback

    def _find(self, name):
        if self._index is None:
            self._index = self._scan(self._path)
        found = self._index.get(_normalize(name))
        if found is None:
            raise LookupError(name)
        return found

    @staticmethod
    def _scan(path):
        """Normalized name -> its metadata path, each ``sys.path`` folder listed once: the first
        folder that has the name wins, and in a folder a ``.dist-info``/``.egg-info`` (the first
        listed) wins over an ``.egg``'s EGG-INFO, as in importlib.metadata's ``Lookup.search``."""
        index = {}
        for entry in path:
            try:
                names = os.listdir(entry or ".")
            except OSError:
                continue
            infos, eggs = {}, {}
            egg = os.path.basename(entry).lower().endswith(".egg")
            for child in names:
                low = child.lower()
                if low.endswith((".dist-info", ".egg-info")):
                    infos.setdefault(_normalize(low.rpartition(".")[0].partition("-")[0]), os.path.join(entry, child))
                elif egg and low == "egg-info":
                    base = os.path.basename(entry).lower().rpartition(".")[0].partition("-")[0]
                    eggs.setdefault(base.replace("-", "_"), os.path.join(entry, child))
            for key, path in list(infos.items()) + list(eggs.items()):
                index.setdefault(key, path)
        return index

    def _headers(self, name):
        info = self._find(name)
        for meta in ("METADATA", "PKG-INFO", ""):
            path = os.path.join(info, meta) if meta else info
            text = _read_text(path, strict=True)  # strict UTF-8, as importlib's read_text
            if text:
                return _parse_headers(text)
        return []

    def version(self, name):
        found = [value for key, value in self._headers(name) if key == "version"]
        if any("\n" in value for value in found) and self._fallback:
            return _importlib().version(name)  # a folded value: re-indented differently per Python
        return found[0] if found else None

    def requires(self, name):
        found = [value for key, value in self._headers(name) if key == "requires-dist"]
        if self._fallback and (any("\n" in value for value in found) or (
                not found and os.path.isfile(os.path.join(self._find(name), "requires.txt")))):
            return _importlib().requires(name)  # folded, or an egg-info's requires.txt (converted)
        return found or None

    def distribution(self, name):
        return _Located(os.path.dirname(self._find(name)))


def _read_text(path, strict=False, cap=1 << 22):
    """A regular file's text, or None: opened without blocking (a FIFO planted where metadata
    should be never hangs the probe), at most ``cap`` bytes (4 MiB). ``strict``: undecodable
    UTF-8 raises, as importlib.metadata's read_text does."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, cap)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "strict" if strict else "replace")


def _importlib():
    """importlib.metadata, for the rare metadata whose reading changes between Python releases."""
    import importlib.metadata as md

    return md


class _Located(object):
    def __init__(self, root):
        self._root = root

    def locate_file(self, path):
        return os.path.join(self._root, path)


# email.feedparser's header line: a name of printable ASCII but ':' (no space), or a continuation;
# and its line splitting (NLCRE_crack: \r\n, \r, \n; not str.splitlines' \x0b, \x1c, \u2028...).
_HEADER = re.compile(r"^(From |[\041-\071\073-\176]*:|[\t ])")
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _parse_headers(text):
    """(lower-case name, value) of the header block as email's compat32 parser leaves it (what
    importlib.metadata's ``metadata[name]`` returns): lines split at \\r\\n, \\r or \\n only; the
    block ends at an empty line or at the first line that is no header; a value keeps its trailing
    blanks and, when folded, its line breaks and indentation (only the last line break is dropped);
    a continuation with no header before it (first line, after a "From " or ":x" line) is ignored."""
    out = []
    current = None
    for line in _LINES.findall(text):
        if not _HEADER.match(line):
            break  # an empty line too: it matches neither a header nor a continuation
        if line[0] in " \t":
            if current is not None:
                current.append(line)
            continue
        current = None
        if line.startswith("From ") or line.startswith(":"):
            continue  # an envelope line or a header without a name: skipped, as feedparser does
        name, _, value = line.partition(":")
        current = [value.lstrip(" \t")]
        out.append((name.lower(), current))
    return [(name, "".join(parts).rstrip("\r\n")) for name, parts in out]


def _version_py(md):
    """Read torch/version.py as text: assignments only, never executed."""
    try:
        dist = md.distribution("torch")
        path = str(dist.locate_file("torch/version.py"))
    except Exception:
        return None, {}
    values = {}
    try:
        tree = ast.parse(_read_text(path) or "")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return os.path.dirname(path), values
    for node in tree.body:
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        if isinstance(target, ast.Name):
            try:
                values[target.id] = ast.literal_eval(value)
            except ValueError:
                pass
    return os.path.dirname(path), values


def collect():
    include = sysconfig.get_paths().get("include")
    return _report(sys.executable, "%d.%d.%d" % sys.version_info[:3], sys.implementation.name, include,
                   _metadata())


def collect_files(executable, version, path, include):
    """What ``collect`` says, for a CPython that is NOT started (flexdoctor runs as root and a
    non-root user can change what it would run): ``version`` and ``path`` (its sys.path folders)
    come from its files (flexdoctor.safety.interpreter_layout); metadata is read, never run."""
    return _report(executable, version, "cpython", include, _Dists(path, fallback=False))


def _report(executable, version, implementation, include, md):
    out = {
        "python": {
            "executable": executable,
            "version": version,
            "implementation": implementation,
            "platform": sys.platform,
            "include_dir": include,
            "python_h": bool(include) and os.path.isfile(os.path.join(include, "Python.h")),
            "packages": {},
        },
        "torch": None,
    }
    if md is not None:
        for name in PACKAGES:
            try:
                out["python"]["packages"][name] = md.version(name)
            except Exception:
                pass
        if "torch" in out["python"]["packages"]:
            location, values = _version_py(md)
            triton_req = None
            try:
                for req in md.requires("torch") or ():
                    head = req.split(";")[0].strip()
                    if head.startswith(("triton", "pytorch-triton")):
                        triton_req = req.strip()  # keep the marker: it may be Linux-only
                        break
            except Exception:
                pass
            out["torch"] = {
                "version": out["python"]["packages"]["torch"],
                "location": location,
                "cuda": values.get("cuda"),
                "hip": values.get("hip"),
                "git_version": values.get("git_version"),
                "debug": values.get("debug"),
                "triton_requirement": triton_req,
            }
    return out


def main():
    # Only when run as a script (flexdoctor also imports this module and calls collect()).
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # even under -P / PYTHONSAFEPATH
    import _wire

    _wire.emit(collect())


if __name__ == "__main__":
    main()
