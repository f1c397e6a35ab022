# Run BY THE TARGET INTERPRETER in a subprocess with a timeout, stdlib only, Python 3.8+.
# Imports torch and asks it what it can do. A segfault, a hang or garbage here must never hurt
# flexdoctor: the parent reads the last "stage" line to say where it died.
# Protocol (stdout): the stage and result lines of _wire.py.
import importlib.util
import os
import sys
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _wire, even under -P / PYTHONSAFEPATH
import _wire  # noqa: E402  (and drops this folder from sys.path again)
from _wire import short_error, stage  # noqa: E402


def main():
    out = {}
    stage("import torch")
    try:
        import torch
    except BaseException as exc:  # SystemExit and friends from broken builds too
        out["import_error"] = short_error(exc)
        out["traceback"] = traceback.format_exc()[-8000:]
        _wire.emit(out)
        return
    out["version"] = str(torch.__version__)
    out["cuda"] = getattr(torch.version, "cuda", None)
    out["hip"] = getattr(torch.version, "hip", None)

    stage("torch.cuda.is_available")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out["cuda_available"] = bool(torch.cuda.is_available())
        except Exception as exc:
            out["cuda_available"] = False
            out["cuda_init_warning"] = short_error(exc)
    msgs = [str(w.message) for w in caught if "CUDA" in str(w.message) or "driver" in str(w.message)]
    if msgs and not out.get("cuda_init_warning"):
        out["cuda_init_warning"] = "\n".join(msgs)[-4000:]

    stage("torch.cuda devices")
    try:
        out["arch_list"] = list(torch.cuda.get_arch_list())
    except Exception:
        out["arch_list"] = None
    devices = []
    if out.get("cuda_available"):
        try:
            out["device_count"] = torch.cuda.device_count()
            for i in range(out["device_count"]):
                p = torch.cuda.get_device_properties(i)
                devices.append(
                    {
                        "index": i,
                        "name": p.name,
                        "capability": "%d.%d" % (p.major, p.minor),
                        "total_memory": int(p.total_memory),
                        "uuid": str(getattr(p, "uuid", "") or "") or None,
                    }
                )
            out["bf16_supported"] = bool(torch.cuda.is_bf16_supported())
        except Exception as exc:
            out["cuda_init_warning"] = short_error(exc)
    else:
        out["device_count"] = 0
    out["devices"] = devices
    try:
        out["cudnn_version"] = torch.backends.cudnn.version()
    except Exception:
        out["cudnn_version"] = None
    try:
        out["mps_available"] = bool(torch.backends.mps.is_available())
    except Exception:
        out["mps_available"] = None

    stage("import triton")
    if importlib.util.find_spec("triton") is not None:
        try:
            import triton

            out["triton_version"] = getattr(triton, "__version__", None)
        except BaseException as exc:
            out["triton_import_error"] = short_error(exc)

    stage("import flex_attention")
    try:
        from torch.nn.attention.flex_attention import flex_attention  # noqa: F401

        out["flex_importable"] = True
    except BaseException as exc:
        out["flex_importable"] = False
        out["flex_import_error"] = short_error(exc)
    _wire.emit(out)


if __name__ == "__main__":
    main()
    # The result is written and flushed: end here. Finalizing an interpreter that imported torch
    # (its atexit handlers, tearing down thousands of modules) costs a good part of the import
    # again (torch 2.13 CPU: `import torch` then os._exit took 0.75x the time of a plain exit),
    # and the parent waits for this process to end, not only for its result line.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
