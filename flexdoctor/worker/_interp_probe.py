# Run BY THE TARGET INTERPRETER (flexdoctor check --python PATH), stdlib only, Python 3.8+.
# Reports the interpreter and what is installed in it WITHOUT importing torch (which costs
# 3-5 s): package metadata and torch/version.py read as text. Protocol (stdout): the result line
# of _wire.py.
import ast
import os
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
    try:
        import importlib.metadata as md
    except ImportError:  # Python < 3.8 has no importlib.metadata
        return None
    return md


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
