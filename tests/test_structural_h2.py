"""The structural readers of tune-h2 (issue 22, cycle 2 of rounds 8-9): protobuf's refusal of old generated code in
both spellings, torch.distributed used without a process group or without the launcher's environment, a checkpoint
sharded for another model-parallel size, ZeRO-3's partitioned parameters used outside the engine, onnxruntime-gpu's
CUDA provider built for another CUDA major, and a macOS process of the wrong architecture. Lines are written here in
the shape the real code prints (sources in the comments and in flexdoctor/knowledge/structural/h2_tables.toml), not
copied from the corpus; each class has a sibling and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident

SITE = "/opt/conda/lib/python3.10/site-packages"


# --- protobuf >= 4 refusing _pb2.py files from protoc < 3.19 ----------------------------------------------------------

_PROTO_TAIL = ("If this call came from a _pb2.py file, your generated code is out of date and must be regenerated with "
               "protoc >= 3.19.0.\nIf you cannot immediately regenerate your protos, some other possible workarounds "
               "are:\n 1. Downgrade the protobuf package to 3.20.x or lower.\n 2. Set "
               "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python (but this will use pure-Python parsing and will be much "
               "slower).\n")


def _proto(spelling: str) -> str:
    return frames(("/srv/app/infer.py", "import onnx"), (f"{SITE}/onnx/onnx_ml_pb2.py", "_descriptor.EnumDescriptor("),
                  (f"{SITE}/google/protobuf/descriptor.py", "_message.Message._CheckCalledFromGeneratedFile()")) + (
        f"TypeError: Descriptors {spelling} be created directly.\n" + _PROTO_TAIL)


def test_protobuf_4_21_spelling_cannot_not_is_read():
    # protobuf 4.21.x's descriptor.py printed "cannot not" (fangfufu/Linux-Fake-Background-Webcam#179 on 4.21.1)
    top, fix = first(_proto("cannot not"))
    assert ident(top) == "version-constraint:protobuf", ident(top)
    assert "protobuf==3.20.3" in fix and "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python" in fix, fix


def test_protobuf_later_spelling_still_read():
    top, fix = first(_proto("cannot"))
    assert ident(top) == "version-constraint:protobuf" and "protobuf==3.20.3" in fix, fix


def test_protobuf_healthy_neighbour_stays_silent():
    # protobuf 5.28's runtime_version.py warns (and goes on) when gencode is older than the runtime
    healthy("Successfully installed protobuf-4.21.1\n"
            f"{SITE}/google/protobuf/runtime_version.py:112: UserWarning: Protobuf gencode version 5.27.2 is older "
            "than the runtime version 5.28.3 at tensorboard/compat/proto/tensor.proto. Please avoid checked-in "
            "Protobuf gencode that can be obsolete.\n  warnings.warn(\n")
