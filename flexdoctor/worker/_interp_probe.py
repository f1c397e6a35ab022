# Run BY THE TARGET INTERPRETER (flexdoctor check --python PATH), stdlib only, Python 3.8+.
# Reports the interpreter and what is installed in it WITHOUT importing torch (which costs
# 3-5 s): package metadata and torch/version.py read as text. Protocol (stdout): the result line
# of _wire.py.
import ast
import os
import re
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
    costs ~30 ms: it pulls in the email package)."""
    from importlib.machinery import PathFinder

    plain = not any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path)
    if plain and all(not os.path.isfile(entry) for entry in sys.path if entry):
        return _Dists()
    try:
        import importlib.metadata as md
    except ImportError:  # Python < 3.8 has no importlib.metadata
        return None
    return md


def _normalize(name):
    """importlib.metadata's ``Prepared.normalize`` (PEP 503 name, then '-' -> '_')."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


class _Dists(object):
    """``version``, ``requires`` and ``distribution(...).locate_file`` of importlib.metadata, for
    distributions in folders on ``sys.path`` (no zip, no custom finder: ``_metadata`` checks), found
    as its ``Lookup`` finds them: the first ``sys.path`` entry that has a ``NAME-*.dist-info`` or
    ``.egg-info`` folder (names compared normalized), or, for an ``.egg`` folder, its ``EGG-INFO``;
    the metadata is that folder's METADATA, else PKG-INFO. Missing: LookupError, as importlib does."""

    def __init__(self):
        self._found = {}

    def _find(self, name):
        key = _normalize(name)
        if key not in self._found:
            self._found[key] = self._search(key)
        if self._found[key] is None:
            raise LookupError(name)
        return self._found[key]

    @staticmethod
    def _search(key):
        for entry in sys.path:
            root = entry or "."
            try:
                names = os.listdir(root)
            except OSError:
                continue
            eggs = []
            egg = os.path.basename(root).lower().endswith(".egg")
            for child in names:
                low = child.lower()
                if low.endswith((".dist-info", ".egg-info")):
                    if _normalize(low.rpartition(".")[0].partition("-")[0]) == key:
                        return root, os.path.join(root, child)
                elif egg and low == "egg-info":
                    base = os.path.basename(root).lower().rpartition(".")[0].partition("-")[0]
                    if base.replace("-", "_") == key:
                        eggs.append(os.path.join(root, child))
            if eggs:
                return root, eggs[0]
        return None

    def _headers(self, name):
        root, info = self._find(name)
        for meta in ("METADATA", "PKG-INFO"):
            try:
                with open(os.path.join(info, meta), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            return _parse_headers(text)
        return []

    def version(self, name):
        for key, value in self._headers(name):
            if key == "version":
                return value
        return None

    def requires(self, name):
        return [value for key, value in self._headers(name) if key == "requires-dist"] or None

    def distribution(self, name):
        return _Located(self._find(name)[0])


class _Located(object):
    def __init__(self, root):
        self._root = root

    def locate_file(self, path):
        return os.path.join(self._root, path)


def _parse_headers(text):
    """(lower-case name, value) of a METADATA / PKG-INFO file's header block, folded lines joined
    (RFC 822, as email.parser reads it); the body after the first blank line is not read."""
    out = []
    for line in text.splitlines():
        if not line:
            break  # only an empty line ends the headers: a blank one with spaces continues a value
        if line[:1] in (" ", "\t") and out:
            out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
        elif ":" in line:
            key, _, value = line.partition(":")
            out.append((key.strip().lower(), value.strip()))
    return out


def _version_py(md):
    """Read torch/version.py as text: assignments only, never executed."""
    try:
        dist = md.distribution("torch")
        path = str(dist.locate_file("torch/version.py"))
    except Exception:
        return None, {}
    values = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
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
    out = {
        "python": {
            "executable": sys.executable,
            "version": "%d.%d.%d" % sys.version_info[:3],
            "implementation": sys.implementation.name,
            "platform": sys.platform,
            "include_dir": include,
            "python_h": bool(include) and os.path.isfile(os.path.join(include, "Python.h")),
            "packages": {},
        },
        "torch": None,
    }
    md = _metadata()
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
