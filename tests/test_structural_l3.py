"""The structural readers of tuner l3 (issue 22, round 13 train leftovers). Lines are written here in the shape the
real code prints them (Triton's python/triton/common/build.py and python/triton/runtime/build.py _build with
subprocess.check_call; Slurm's srun "Unable to create step for job %u: %m"; UCX's "Caught signal %d (%s)" and
CPython's faulthandler; the NVIDIA container CLI's "load library failed"; torch extensions' undefined symbols), not
copied from the corpus; each class has siblings and a healthy neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import healthy, ident

# --- Triton's C launcher ---------------------------------------------------------------------------------------------

_SITE = "/home/ana/venv/lib/python3.11/site-packages"


def _triton3(cc_cmd: str) -> str:
    return ("Traceback (most recent call last):\n"
            "  File \"/home/ana/train.py\", line 12, in <module>\n"
            "    out = kernel[grid](x, y, n)\n"
            f"  File \"{_SITE}/triton/backends/nvidia/driver.py\", line 66, in __init__\n"
            "    mod = compile_module_from_src(Path(os.path.join(dirname, \"driver.c\")).read_text(), \"cuda_utils\")\n"
            f"  File \"{_SITE}/triton/backends/nvidia/driver.py\", line 50, in compile_module_from_src\n"
            "    so = _build(name, src_path, tmpdir, library_dirs(), include_dir, libraries)\n"
            f"  File \"{_SITE}/triton/runtime/build.py\", line 50, in _build\n"
            "    ret = subprocess.check_call(cc_cmd)\n"
            "  File \"/usr/lib/python3.11/subprocess.py\", line 413, in check_call\n"
            "    raise CalledProcessError(retcode, cmd)\n"
            f"subprocess.CalledProcessError: Command '{cc_cmd}' returned non-zero exit status 1.\n")


def test_triton3_launcher_build_says_libcuda_python_h_and_a_cuda_torch():
    cmd = ("['/usr/bin/gcc', '/tmp/tmpa1b2c3/main.c', '-O3', '-shared', '-fPIC', '-Wno-psabi', '-o', "
           "'/tmp/tmpa1b2c3/cuda_utils.cpython-311-x86_64-linux-gnu.so', '-lcuda', '-L" + _SITE +
           "/triton/backends/nvidia/lib', '-L/lib/x86_64-linux-gnu', '-I" + _SITE +
           "/triton/backends/nvidia/include', '-I/tmp/tmpa1b2c3', '-I/usr/include/python3.11']")
    top, fix = first(_triton3(cmd))
    assert ident(top) == "shared-library:libcuda.so", ident(top)
    assert "TRITON_LIBCUDA_PATH" in fix and "Python.h" in fix and "python3.11-dev" in fix, fix
    assert "torch.version.cuda" in fix and "ldconfig -p | grep libcuda" in fix


def test_triton2_launcher_with_only_frames_left_and_a_dynamo_wrapper_still_reads_the_build():
    log = (f"  File \"{_SITE}/triton/compiler.py\", line 1661, in _init_handles\n"
           "    bin.c_wrapper = _build(...)\n"
           f"  File \"{_SITE}/triton/common/build.py\", line 103, in _build\n"
           "    ret = subprocess.check_call(cc_cmd)\n"
           "  File \"/usr/lib/python3.11/subprocess.py\", line 413, in check_call\n"
           "    raise CalledProcessError(retcode, cmd)\n"
           "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n")
    top, fix = first(log)
    assert ident(top) == "shared-library:libcuda.so", ident(top)
    assert "TRITON_LIBCUDA_PATH" in fix and "Python.h" in fix, fix


def test_triton_launcher_on_wsl_points_at_usr_lib_wsl_lib():
    cmd = ("['/usr/bin/gcc', '/tmp/tmpq/main.c', '-O3', '-I/usr/local/cuda/include', '-I/usr/include/python3.10', "
           "'-I/tmp/tmpq', '-shared', '-fPIC', '-lcuda', '-o', '/tmp/tmpq/cuda_utils.cpython-310-x86_64-linux-gnu.so', "
           "'-L/usr/lib/wsl/lib']")
    log = "Linux DESKTOP-7 5.15.153.1-microsoft-standard-WSL2 #1 SMP x86_64 GNU/Linux\n" + _triton3(cmd)
    _top, fix = first(log)
    assert "/usr/lib/wsl/lib" in fix, fix


def test_the_compilers_own_message_leads_when_the_log_has_it():
    cmd = "['/usr/bin/gcc', '/tmp/tmpz/main.c', '-O3', '-shared', '-fPIC', '-lcuda', '-o', '/tmp/tmpz/x.so']"
    log = "/tmp/tmpz/main.c:5:10: fatal error: Python.h: No such file or directory\ncompilation terminated.\n"
    top, _fix = first(log + _triton3(cmd))
    assert ident(top) != "shared-library:libcuda.so", ident(top)


def test_a_caught_launcher_failure_and_other_gcc_commands_stay_silent():
    healthy(f"  File \"{_SITE}/triton/runtime/build.py\", line 50, in _build\n"
            "    ret = subprocess.check_call(cc_cmd)\n"
            "INFO: Triton launcher built in 0.8 s\n" + "step 1 done\n" * 80)
    healthy("subprocess.check_call(['/usr/bin/gcc', 'main.c', '-O3'])  # build the helper\n")


# --- Slurm job steps -------------------------------------------------------------------------------------------------

def test_a_step_refused_inside_a_job_says_the_inherited_slurm_variables():
    top, fix = first("srun: error: Unable to create step for job 5120331: Invalid generic resource (gres) "
                     "specification\n")
    assert ident(top) == "slurm:gres", ident(top)
    assert "SLURM_" in fix and "login node" in fix and "env | grep ^SLURM_" in fix, fix


def test_a_step_sibling_node_configuration_also_names_the_outer_job():
    top, fix = first("srun: error: Unable to create step for job 77: Requested node configuration is not available\n")
    assert ident(top) == "slurm:nodeconf", ident(top)
    assert "SLURM_" in fix and "outside the job" in fix, fix


def test_a_job_refused_at_submission_keeps_the_plain_gres_answer():
    top, fix = first("sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification\n")
    assert ident(top) == "slurm:gres", ident(top)
    assert "inherit" not in fix, fix


# --- SIGBUS ----------------------------------------------------------------------------------------------------------

def test_ucx_caught_signal_7_is_shared_memory():
    top, fix = first("[a1b2c3d4e5f6:412  :0:488] Caught signal 7 (Bus error: nonexistent physical address)\n"
                     "==== backtrace (tid:    488) ====\n 0 0x0000000000042520 __sigaction()  ???:0\n")
    assert ident(top) == "shared-memory:/dev/shm", ident(top)
    assert "--shm-size" in fix, fix


def test_faulthandler_bus_error_is_shared_memory_and_other_signals_are_not():
    top, _fix = first("Fatal Python error: Bus error\n\nThread 0x00007f0b (most recent call first):\n")
    assert ident(top) == "shared-memory:/dev/shm", ident(top)
    healthy("[host:1:0:2] Caught signal 2 (Interrupt)\nINFO: shutting down\n")


# --- edits to other readers' fixes -----------------------------------------------------------------------------------

def test_docker_without_nvml_names_docker_desktop_rootless_and_the_toolkit():
    log = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
           "runtime create failed: runc create failed: unable to start container process: error during container init: "
           "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
           "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
           "object file: no such file or directory: unknown.\n")
    _top, fix = first(log)
    assert "docker context use default" in fix and "sudo" in fix and "nvidia-container-toolkit" in fix, fix
    assert "Docker Desktop" in fix and "rootless" in fix


def test_a_torch_extension_built_for_another_torch_says_reinstall_it_matching_torch():
    log = ("ImportError: /venv/lib/python3.11/site-packages/causal_conv1d_cuda.cpython-311-x86_64-linux-gnu.so: "
           "undefined symbol: "
           "_ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEENS2_8optionalINS2_10ScalarTypeEEENS6_INS2_6LayoutEEENS6_"
           "INS2_6DeviceEEENS6_IbEE\n")
    _top, fix = first(log)
    assert fix.startswith("Reinstall causal-conv1d") and "matching torch" in fix, fix
