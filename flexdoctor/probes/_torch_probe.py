# Run BY THE TARGET INTERPRETER in a subprocess with a timeout, stdlib only, Python 3.8+.
# Imports torch and asks it what it can do. A segfault, a hang or garbage here must never hurt
# flexdoctor: the parent reads the last "stage" line to say where it died.
# Protocol (stdout): lines "@@flexdoctor-stage NAME" as work starts, then one line
# "@@flexdoctor-result JSON" at the end.
import importlib.util
import json
import sys
import time
import traceback
import warnings

STAGE = "@@flexdoctor-stage "
RESULT = "@@flexdoctor-result "


_T = {"last": None, "since": time.time(), "stages": {}}


def stage(name):
    now = time.time()
    if _T["last"] is not None:
        _T["stages"][_T["last"]] = round(now - _T["since"], 3)
    _T["last"], _T["since"] = name, now
    sys.stdout.write(STAGE + name + "\n")
    sys.stdout.flush()


def short_error(exc):
    lines = traceback.format_exception_only(type(exc), exc)
    return "".join(lines).strip()[-4000:]


def main():
    t0 = time.time()
    out = {}
    stage("import torch")
    try:
        import torch
    except BaseException as exc:  # SystemExit and friends from broken builds too
        out["import_error"] = short_error(exc)
        out["traceback"] = traceback.format_exc()[-8000:]
        emit(out, t0)
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
    emit(out, t0)


def emit(out, t0):
    stage("done")
    out["stage_seconds"] = _T["stages"]
    out["seconds"] = round(time.time() - t0, 3)
    sys.stdout.write("\n" + RESULT + json.dumps(out, default=str) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
