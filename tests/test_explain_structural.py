"""The structural layer of explain (issue 22): errors read by their shape, fixes filled from the
tables and from what the log says, never from a guess; survived notices and warnings not counted."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from flexdoctor.knowledge import explain as kbx
from flexdoctor.knowledge.structural import demangle, readers, tables

LOGS = Path(__file__).parent / "data" / "logs"


def first(text: str):
    result = kbx.scan(io.BytesIO(text.encode()))
    items = result.ordered()
    assert items, text
    return items[0]


def answer(text: str, kind: str):
    """The structural answer of ``kind`` (an entry may come first where it knows the error)."""
    result = kbx.scan(io.BytesIO(text.encode()))
    found = [a for a in result.answers if a.kind == kind]
    assert found, (text, [getattr(x, "kind", None) or x.entry.id for x in result.ordered()])
    return found[0]


def fix_text(a) -> str:
    return a.fix.summary + "\n" + "\n".join(a.fix.commands)


# --- shared libraries: the pip package per CUDA major (CUDA 13's unsuffixed names) ----------------

@pytest.mark.parametrize("line, subject, want", [
    ("RuntimeError: Library libcublas.so.12 is not found or cannot be loaded", "libcublas.so.12", "nvidia-cublas-cu12"),
    ("RuntimeError: Library libcublas.so.11 is not found or cannot be loaded", "libcublas.so.11", "nvidia-cublas-cu11"),
    ("OSError: libcudart.so.13: cannot open shared object file: No such file or directory", "libcudart.so.13",
     '"nvidia-cuda-runtime"'),
    ("OSError: libcufft.so.11: cannot open shared object file: No such file", "libcufft.so.11", "nvidia-cufft-cu12"),
    ("ImportError: libnvJitLink.so.13: cannot open shared object file", "libnvJitLink.so.13", '"nvidia-nvjitlink"'),
])
def test_cuda_library_names_the_package_of_its_cuda_major(line, subject, want):
    a = first(line + "\n")
    assert (a.kind, a.subject) == ("shared-library", subject)
    assert want in fix_text(a)


def test_cudnn_major_is_cudnns_and_cuda_major_comes_from_the_log():
    a = first("torch==2.9.1+cu130\nCould not load library libcudnn_ops.so.9. Error: libcudnn_ops.so.9: cannot open\n")
    assert "nvidia-cudnn-cu13==9.*" in fix_text(a)
    unknown = first("Could not load library libcudnn_ops.so.9. Error: libcudnn_ops.so.9: cannot open\n")
    assert "nvidia-cudnn-cu12" in unknown.fix.summary and "nvidia-cudnn-cu13" in unknown.fix.summary
    assert not any("pip install" in c for c in unknown.fix.commands)  # no CUDA major in the log: no guess


def test_libraries_that_pip_does_not_provide():
    driver = first("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n")
    assert "driver" in driver.fix.summary and "nvidia-smi" in driver.fix.commands
    gl = first("ImportError: libGL.so.1: cannot open shared object file: No such file or directory\n")
    assert "sudo apt-get install -y libgl1" in gl.fix.commands
    log = ('OSError: [WinError 126] The specified module could not be found. Error loading '
           '"C:\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.\n')
    result = kbx.scan(io.BytesIO(log.encode()))
    assert result.ordered()[0].entry.id == "FDE526"  # the entry knows a DLL of torch whose VC++ runtime is missing
    assert result.answers == ()  # and the line is its: no second reading
    other = answer(log.replace("torch\\lib\\fbgemm.dll", "onnxruntime\\capi\\onnxruntime.dll").replace(
        "WinError 126", "WinError 126"), "shared-library")
    assert other.subject == "onnxruntime.dll"


def test_a_windows_error_that_is_not_a_missing_dll_is_the_cause():
    a = first('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
              '"C:\\x\\torch\\lib\\cufft64_11.dll" or one of its dependencies.\n')
    assert (a.kind, a.subject) == ("windows-error", "1455")


# --- symbols and ABI --------------------------------------------------------------------------------

def test_demangler_names_whose_symbol_it_is():
    assert demangle.demangle("_ZN3c105ErrorC2ENS_14SourceLocationESs") == "c10::Error::Error"
    assert demangle.demangle("_ZNK2at10TensorBase8data_ptrIfEEPT_v") == "at::TensorBase::data_ptr"
    assert demangle.demangle("cudaGetDriverEntryPointByVersion") is None
    assert readers.symbol_class("_ZN3c105ErrorC2ENS_14SourceLocationESs") == "torch"
    assert readers.symbol_class("cudaGetDriverEntryPointByVersion") == "cuda"
    assert readers.symbol_class("PyUnicode_AsUTF8") == "python"
    assert readers.symbol_class("iJIT_NotifyEvent") == "mkl"
    assert readers.symbol_class("", "GLIBCXX_3.4.30") == "libstdc++"
    assert readers.symbol_class("", "GLIBC_2.32") == "glibc"


def test_extension_built_for_another_torch_names_the_package():
    a = first("ImportError: /x/lib/python3.10/site-packages/mamba_ssm/selective_scan_cuda.cpython-310-x86_64-linux-gnu"
              ".so: undefined symbol: _ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE\n")
    assert (a.kind, a.subject, a.package) == ("undefined-symbol", "torch", "mamba_ssm")
    assert "mamba-ssm" in fix_text(a) and "--no-build-isolation" in fix_text(a)


def test_glibcxx():
    a = first("ImportError: /lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found "
              "(required by /home/u/miniconda3/envs/x/lib/python3.10/site-packages/foo.so)\n")
    assert (a.kind, a.subject) == ("undefined-symbol", "libstdc++")
    assert "conda install -c conda-forge libstdcxx-ng" in a.fix.commands


# --- modules ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("log, subject, want", [
    ("ModuleNotFoundError: No module named 'cv2'\n", "cv2", "python -m pip install opencv-python"),
    ("ModuleNotFoundError: No module named 'flash_attn'\n", "flash_attn", "flash-attn --no-build-isolation"),
    ("ModuleNotFoundError: No module named 'flash_attn.cute'\n", "flash_attn.cute", "flash-attn-4"),
    ("ModuleNotFoundError: No module named 'apex'\n", "apex", "git clone https://github.com/NVIDIA/apex"),
    ('torch==2.7.1+cu128\n  File "C:\\ComfyUI\\main.py", line 1\nImportError: No module named \'triton\'\n',
     "triton", '"triton-windows<3.4"'),
    ('torch==2.7.1+cu128\n  File "/home/u/main.py", line 1\nImportError: No module named \'triton\'\n',
     "triton", '"triton==3.3.1"'),
])
def test_missing_module_names_its_distribution_and_platform_rule(log, subject, want):
    a = first(log)
    assert (a.kind, a.subject) == ("missing-module", subject)
    assert want in fix_text(a)


def test_vllm_on_windows_is_linux_only():
    a = first('  File "C:\\Users\\me\\app.py", line 1\nModuleNotFoundError: No module named \'vllm\'\n')
    assert "WSL" in a.fix.summary and a.fix.commands == ()


# --- tables ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, name", [
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cudaErrorIllegalAddress"),
    ("RuntimeError: CUDA error: device-side assert triggered", "cudaErrorAssert"),
    ("Warp CUDA error 36: API call is not supported in the installed CUDA driver", "cudaErrorCallRequiresNewerDriver"),
    ("RuntimeError: Triton Error [CUDA]: misaligned address", "cudaErrorMisalignedAddress"),
    ("cuInit failed: CUDA_ERROR_SYSTEM_NOT_READY", "cudaErrorSystemNotReady"),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
     "CUBLAS_STATUS_NOT_INITIALIZED"),
])
def test_cuda_errors_by_text_name_and_code(line, name):
    a = first(line + "\n")
    assert (a.kind, a.subject) == ("cuda-error", name)


def test_every_cuda_row_is_reachable_by_its_text():
    from flexdoctor import knowledge

    for row in tables.cuda_errors():
        line = f"RuntimeError: CUDA error: {row['text']}\n"
        if knowledge.match_text(line):
            continue  # an entry knows this one (no kernel image, driver too old, ...): it answers
        assert answer(line, "cuda-error").subject == row["name"]


def test_nccl_class_and_its_environment_causes():
    a = first("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error "
              "(run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n")
    assert (a.kind, a.subject) == ("nccl-error", "ncclSystemError")
    assert "export NCCL_DEBUG=INFO" in a.fix.commands and "/dev/shm" in fix_text(a)


def test_triton_resources_oom_and_unsupported():
    tri = first("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, "
                "Hardware limit: 232448. Reducing block sizes or `num_stages` may help.\n")
    assert tri.entry.id == "FDE608"  # the entry knows flex's shared memory
    other = first("triton.runtime.errors.OutOfResources: out of resource: threads, Required: 2048, Hardware limit: 1024\n")
    assert (other.kind, other.subject) == ("triton-resources", "threads")
    oom = first("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n")
    assert (oom.kind, oom.subject) == ("out-of-memory", "cuda")
    half = first("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'\n")
    assert (half.kind, half.subject) == ("unsupported-op", "cpu")


def test_pip_versions_and_conflicts():
    a = first("ERROR: Could not find a version that satisfies the requirement flash_attn==2.7.4 (from versions: none)\n"
              "ERROR: No matching distribution found for flash_attn==2.7.4\n")
    assert (a.kind, a.subject) == ("pip-no-distribution", "flash-attn")
    b = first("xformers 0.0.28.post3 requires torch==2.5.1, but you have torch 2.6.0 which is incompatible.\n")
    assert (b.kind, b.subject) == ("version-constraint", "torch")
    assert 'python -m pip install "torch==2.5.1"' in b.fix.commands


# --- what is not a failure, and what is unknown ----------------------------------------------------------

def test_a_survived_error_is_not_read():
    log = ("Traceback (most recent call last):\n  File \"/x/site-packages/foo/a.py\", line 1\n"
           "ModuleNotFoundError: No module named 'peft'\n"
           " 10%|#         | 10/100 [00:01<00:09, 9.50it/s]\n"
           " 20%|##        | 20/100 [00:02<00:08, 9.50it/s]\n"
           " 30%|###       | 30/100 [00:03<00:07, 9.50it/s]\n")  # the bar moved on: the run survived
    result = kbx.scan(io.BytesIO(log.encode()))
    assert result.answers == () and not result.found


def test_a_bar_redrawn_at_exit_after_the_traceback_is_no_survival():
    """tqdm redraws its bar as the process dies: one bar line right after the traceback ends the log."""
    log = ("Traceback (most recent call last):\n  File \"/x/site-packages/foo/a.py\", line 1\n"
           "ModuleNotFoundError: No module named 'peft'\n"
           " 10%|#         | 10/100 [00:01<00:09, 9.50it/s]\n")
    assert first(log).subject == "peft"


def test_a_bar_redrawn_under_an_uncaught_exceptions_last_line_is_no_survival():
    """A pasted excerpt without the traceback: the exception's last line (its message wrapped over three
    lines) and tqdm's bar redrawn as the process died, ending the log."""
    log = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 6.00 GiB total\n"
           "capacity; 5.24 GiB already allocated; 0 bytes free; 5.29 GiB reserved in total by PyTorch) If\n"
           "reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n"
           "steps:   0%|          | 1/2100 [00:03<2:05:34,  3.59s/it, loss=0.473]\n")
    assert first(log).kind == "out-of-memory"


@pytest.mark.parametrize("log", [
    # the run went on after the error: more output follows the bar
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
     "steps:   1%|          | 21/2100 [00:13<09:05,  3.81it/s]\n"
     "saving checkpoint to out/step-21\n"),
    # a logged (caught) error inside a line, not an uncaught exception's last line
    ("[trainer] skipped batch 7 (RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB)\n"
     "steps:   1%|          | 21/2100 [00:13<09:05,  3.81it/s]\n"),
])
def test_a_bar_after_an_error_the_run_outlived_is_progress(log):
    assert not kbx.scan(io.BytesIO(log.encode())).found


def test_a_bar_that_never_moved_is_no_progress():
    log = ("RuntimeError: Library libcublas.so.12 is not found or cannot be loaded\n"
           "  0%|          | 0/349 [00:00<?, ?it/s]\n")
    assert first(log).subject == "libcublas.so.12"


def test_a_warning_is_not_a_failure():
    log = ("A matching Triton is not available, some optimizations will not be enabled\n"
           "Error caught was: No module named 'triton'\nStarting server\n")
    result = kbx.scan(io.BytesIO(log.encode()))
    assert not result.found and result.answers == ()


_XF_NOTICE = ("A matching Triton is not available, some optimizations will not be enabled\n"
              "Traceback (most recent call last):\n"
              "  File \"C:\\sd\\venv\\lib\\site-packages\\xformers\\__init__.py\", line 57, in _is_triton_available\n"
              "    import triton  # noqa\n"
              "ModuleNotFoundError: No module named 'triton'\n")


def test_an_optional_imports_notice_with_its_traceback_is_no_failure():
    """xformers logs Triton's import failure as a warning with exc_info=True (xformers/__init__.py) and runs on."""
    log = "Total VRAM 12288 MB\n" + _XF_NOTICE + "xformers version: 0.0.28.post3\nUsing xformers attention\nStarting server\n"
    result = kbx.scan(io.BytesIO(log.encode()))
    assert not result.found and result.answers == ()


def test_a_notices_traceback_does_not_hide_a_later_failure():
    """The notice, then a real failure of the same kind later: that one is still read."""
    tail = ("step 1\ntorch._inductor.exc.TritonMissing: Cannot find a working triton installation. Either the "
            "package is not installed or it is too old.\n")
    top = first(_XF_NOTICE + tail)
    assert top.entry.symbol == "triton-missing" and [h.line for h in top.hits] == [7]


def test_a_notice_above_a_traceback_of_another_error_hides_nothing():
    log = ("Flash attention is not available, falling back to SDPA\nTraceback (most recent call last):\n"
           "  File \"/x/site-packages/foo/a.py\", line 1, in f\n"
           "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert kbx.scan(io.BytesIO(log.encode())).found


_CUT = ('Traceback (most recent call last):\n  File "/home/u/proj/train.py", line 12, in <module>\n    model = load()\n'
        '  File "/home/u/.venv/lib/python3.10/site-packages/frob/models.py", line 88, in load\n'
        '    return Frob.from_file(path)\n')


def test_a_paste_that_stops_inside_a_traceback_says_its_error_line_is_missing():
    top = first(_CUT)
    assert top.kind == "unknown" and top.subject == "truncated traceback" and top.package == "frob"
    assert "frob/models.py" in top.cause and "tee" in top.fix.summary
    assert not kbx.scan(io.BytesIO(_CUT.encode())).found  # a note to the user, not a known problem


@pytest.mark.parametrize("log", [
    _CUT + "RuntimeError: frob file is corrupt\n",  # the error line is there: it is the root error
    _CUT + "step 1 loss 0.5\n" * 5,  # the run went on after the frames: no paste cut there
    "A matching Triton is not available, some optimizations will not be enabled\nTraceback (most recent call last):\n"
    '  File "C:\\v\\site-packages\\xformers\\__init__.py", line 57, in _is_triton_available\n    import triton\n'
    "ModuleNotFoundError: No module named 'triton'\n",  # a notice's logged traceback, whole
])
def test_a_whole_traceback_or_one_the_run_outlived_is_not_cut(log):
    assert all(a.subject != "truncated traceback" for a in kbx.scan(io.BytesIO(log.encode())).answers)


def test_unknown_still_gives_root_error_package_and_what_to_attach():
    log = ("Traceback (most recent call last):\n"
           "  File \"/home/u/.venv/lib/python3.11/site-packages/peft/tuners/lora.py\", line 5, in f\n"
           "KeyError: 'base_model.model.layers'\n")
    result = kbx.scan(io.BytesIO(log.encode()))
    assert not result.found
    (a,) = result.answers
    assert (a.kind, a.subject, a.confidence, a.package) == ("unknown", "KeyError", "low", "peft")
    assert "flexdoctor facts" in a.fix.commands and a.facts["python"] == "3.11"


@pytest.mark.parametrize("path", sorted((LOGS / "healthy").glob("*.log")), ids=lambda p: p.name)
def test_healthy_logs_get_no_answer(path):
    result = kbx.scan(open(path, "rb"))
    assert result.answers == ()


def test_entries_that_matched_in_the_failure_come_first():
    result = kbx.scan(open(LOGS / "FDE601_flex_eager_oom.log", "rb"))
    assert result.ordered()[0].entry.id == "FDE601"


def test_text_from_the_log_never_becomes_a_command():
    for line in ("ImportError: lib$(id).so.1: cannot open shared object file",
                 "ModuleNotFoundError: No module named 'x;rm'",
                 "foo 1.0 requires torch>=$(id), but you have torch 2.0 which is incompatible."):
        result = kbx.scan(io.BytesIO((line + "\n").encode()))
        for a in result.answers:
            assert not any("$(" in c or ";rm" in c for c in a.fix.commands), (line, a.fix.commands)


def test_sigkill_is_host_memory_and_windows_has_no_nccl():
    log = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\ntrain.py FAILED\n"
           "  exitcode  : -9 (pid: 4321)\n  traceback : Signal 9 (SIGKILL) received by PID 4321\n")
    a = first(log)
    assert (a.kind, a.subject) == ("out-of-memory", "cpu")
    b = first("RuntimeError: Distributed package doesn't have NCCL built in\n")
    assert (b.kind, b.subject) == ("unsupported-op", "nccl") and "gloo" in b.fix.summary


ALL = sorted(LOGS.glob("**/*.log")) + sorted((LOGS.parent / "corpus").glob("*/*.log"))


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_block_scanner_reads_shapes_like_the_per_line_reference(path):
    data = path.read_bytes()
    ref = kbx.scan_lines(kbx.iter_lines(io.BytesIO(data)))
    for block in (kbx.BLOCK, 97):
        got = kbx.scan(io.BytesIO(data), block=block)
        assert [(a.kind, a.subject, a.line) for a in got.answers] == [(a.kind, a.subject, a.line) for a in ref.answers]
        assert got.log == ref.log


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = [b"Traceback (most recent call last):", b'  File "/h/u/lib/python3.11/site-packages/peft/a.py", line 1',
           b"RuntimeError: Library libcublas.so.12 is not found or cannot be loaded", b" 10%|#  | 1/9 [00:01, 9.50it/s]",
           b"{'loss': 0.5}", b"KeyError: 'x'", b"ImportError: libGL.so.1: cannot open shared object file",
           b"torch==2.5.1+cu124", b"\r", b"\x1b[31m", b"  0%|  | 0/9 [00:00<?, ?it/s]", b"\xff"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.just(b"\n")), max_size=30), st.integers(1, 200))
def test_generated_logs_read_alike_in_blocks_and_lines(parts, block):
    data = b"".join(parts)
    ref = kbx.scan_lines(kbx.iter_lines(io.BytesIO(data)))
    got = kbx.scan(io.BytesIO(data), block=block)
    assert [(a.kind, a.subject, a.line) for a in got.answers] == [(a.kind, a.subject, a.line) for a in ref.answers]
    assert got.log == ref.log
