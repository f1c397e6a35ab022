"""The structural layer's round-5 readers of tune-f2 (issue 22): Windows (spawn) multiprocessing and DataLoader
workers, open-file and disk limits (which folder), TLS certificates and HTTP 429, API drift between two installed
packages, cuDNN runtime mismatches, kernel faults under a kernel library's frames. Lines are written here in the shape
the real code prints (Python's multiprocessing/spawn.py, torch/utils/data/dataloader.py, ssl, requests, pip,
torch/backends/cudnn/__init__.py, the CUDA runtime), not copied from the corpus; each class has a sibling and a
healthy line that must stay silent."""

from __future__ import annotations

from _explain_items import first as first_item
from _explain_items import first_with_fix as first
from _explain_items import frames as _frames
from _explain_items import fix_text, healthy, ident


def frames(*pairs: tuple[str, str]) -> str:
    return _frames(*pairs, line=120)


SITE = "/srv/env/lib/python3.11/site-packages"
WIN = r"C:\Users\me\venv\Lib\site-packages"
WINLIB = r"C:\Python311\Lib"


# --- Windows (spawn) multiprocessing --------------------------------------------------------------------

def test_starting_workers_at_import_time_is_the_main_guard():
    log = frames((WINLIB + r"\multiprocessing\spawn.py", "_check_not_importing_main()")) + (
        "RuntimeError:\n        An attempt has been made to start a new process before the\n"
        "        current process has finished its bootstrapping phase.\n")
    top, fix = first(log)
    assert ident(top) == "launcher:spawn-main"
    assert 'if __name__ == "__main__":' in fix and "num_workers=0" in fix


def test_a_broken_pipe_while_spawning_a_dataloader_worker_is_the_main_guard():
    log = frames((WIN + r"\torch\utils\data\dataloader.py", "w.start()"),
                 (WINLIB + r"\multiprocessing\popen_spawn_win32.py", "reduction.dump(process_obj, to_child)"),
                 (WINLIB + r"\multiprocessing\reduction.py", "ForkingPickler(file, protocol).dump(obj)")) + \
        "BrokenPipeError: [Errno 32] Broken pipe\n"
    top, fix = first(log)
    assert ident(top) == "launcher:spawn-pipe" and "num_workers=0" in fix


def test_a_broken_pipe_on_linux_is_not_read_as_spawn():
    log = frames(("/srv/app/serve.py", "sys.stdout.write(out)")) + "BrokenPipeError: [Errno 32] Broken pipe\n"
    top = first_item(log)
    assert not ident(top).startswith("launcher:spawn")


def test_a_dataloader_worker_that_exited_says_num_workers_0_and_shm():
    log = frames((f"{SITE}/torch/utils/data/dataloader.py", "raise RuntimeError(f'DataLoader worker ...') from e")) + \
        "RuntimeError: DataLoader worker (pid(s) 3917, 3918) exited unexpectedly\n"
    top, fix = first(log)
    assert ident(top) == "launcher:spawn-worker"
    assert "num_workers=0" in fix and "--shm-size" in fix


# --- open files and disk space ---------------------------------------------------------------------------

def test_too_many_open_files_under_torch_multiprocessing_is_the_file_system_strategy():
    log = frames((f"{SITE}/torch/multiprocessing/reductions.py", "fd = df.detach()"),
                 ("/usr/lib/python3.11/multiprocessing/resource_sharer.py", "c = Client(address)")) + \
        "OSError: [Errno 24] Too many open files\n"
    top, fix = first(log)
    assert ident(top) == "out-of-memory:file-descriptors"
    assert "set_sharing_strategy('file_system')" in fix and "ulimit -n" in fix


def test_too_many_open_files_elsewhere_is_ulimit():
    log = frames(("/srv/app/index.py", "open(p)")) + "OSError: [Errno 24] Too many open files: '/data/shard_0999.bin'\n"
    top, fix = first(log)
    assert "ulimit -n" in fix and "set_sharing_strategy" not in fix


def test_no_space_in_the_hf_cache_is_hf_home_not_the_compile_cache():
    log = frames((f"{SITE}/huggingface_hub/file_download.py", "http_get(")) + \
        "OSError: [Errno 28] No space left on device: '/home/u/.cache/huggingface/hub/models--x/blobs/ab.incomplete'\n"
    top, fix = first(log)
    assert ident(top) == "out-of-memory:disk" and "HF_HOME" in fix and "TORCHINDUCTOR" not in fix


def test_no_space_without_a_path_reads_the_frames():
    # an OSError without a path is FDE952's (the compile cache entry); another exception's line is read here
    log = frames((f"{SITE}/huggingface_hub/file_download.py", "http_get(")) + \
        "RuntimeError: [Errno 28] No space left on device\n"
    assert "HF_HOME" in first(log)[1]


def test_no_space_in_dev_shm_and_in_tmp():
    shm = frames(("/srv/app/x.py", "f.write(b)")) + "OSError: [Errno 28] No space left on device: '/dev/shm/torch_1'\n"
    assert "--shm-size" in first(shm)[1]
    tmp = frames(("/srv/app/x.py", "f.write(b)")) + "OSError: [Errno 28] No space left on device: '/tmp/tmpab12/x'\n"
    assert "TMPDIR" in first(tmp)[1]


def test_no_space_in_the_inductor_cache_stays_the_cache_entry():
    top, fix = first("OSError: [Errno 28] No space left on device: '/tmp/torchinductor_u/fx_graph'\n")
    assert "TORCHINDUCTOR_CACHE_DIR" in fix


# --- TLS and HTTP 429 -------------------------------------------------------------------------------------

SSL = "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate in certificate chain (_ssl.c:1000)"


def test_pip_behind_a_tls_proxy_is_pip_global_cert_first():
    log = ("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection "
           f"broken by 'SSLError(SSLCertVerificationError(1, '{SSL}'))': /simple/numpy/\n"
           "Could not fetch URL https://pypi.org/simple/numpy/: There was a problem confirming the ssl certificate: "
           f"HTTPSConnectionPool(host='pypi.org', port=443): (Caused by SSLError(SSLCertVerificationError(1, '{SSL}'))) - skipping\n"
           "ERROR: Could not find a version that satisfies the requirement numpy (from versions: none)\n"
           "ERROR: No matching distribution found for numpy\n")
    top, fix = first(log)
    assert ident(top) == "launcher:tls-certificate"
    assert "pip config set global.cert" in fix and "trusted-host" not in fix


def test_huggingface_hub_and_torch_hub_get_their_ca_variables():
    hf = frames((f"{SITE}/huggingface_hub/file_download.py", "r = _request_wrapper("),
                (f"{SITE}/requests/adapters.py", "raise SSLError(e, request=request)")) + \
        f"requests.exceptions.SSLError: HTTPSConnectionPool(host='huggingface.co', port=443): ({SSL})\n"
    assert "REQUESTS_CA_BUNDLE" in first(hf)[1]
    hub = frames((f"{SITE}/torch/hub.py", "u = urlopen(req)"), ("/usr/lib/python3.11/urllib/request.py", "raise URLError(err)")) + \
        f"urllib.error.URLError: <urlopen error {SSL}>\n"
    assert "SSL_CERT_FILE" in first(hub)[1]


def test_hf_429_is_log_in_and_retry_later():
    log = frames((f"{SITE}/huggingface_hub/utils/_http.py", "response.raise_for_status()")) + (
        "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
        "https://huggingface.co/api/models/org/model/revision/main\n")
    top, fix = first(log)
    assert ident(top) == "launcher:http-429" and "HF_TOKEN" in fix


def test_a_retry_warning_that_recovered_is_healthy():
    healthy("WARNING: Retrying (Retry(total=4)) after connection broken by 'SSLError(SSLCertVerificationError(1, "
            f"'{SSL}'))': /simple/numpy/\nCollecting numpy\nSuccessfully installed numpy-2.1.3\n")


# --- API drift between two installed packages ---------------------------------------------------------

def test_an_unexpected_keyword_between_two_packages_names_both():
    log = frames(("/srv/app/run.py", "pipe = StableDiffusionPipeline.from_pretrained(p)"),
                 (f"{SITE}/diffusers/pipelines/pipeline_loading_utils.py", "loaded = load_method(name, **kwargs)"),
                 (f"{SITE}/transformers/modeling_utils.py", "model = cls(config, *model_args, **model_kwargs)")) + \
        "TypeError: CLIPTextModel.__init__() got an unexpected keyword argument 'offload_state_dict'\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:transformers"
    assert "python -m pip show diffusers transformers" in fix


def test_a_missing_positional_argument_between_two_packages():
    log = frames((f"{SITE}/trl/trainer/sft_trainer.py", "super().__init__(model=model)"),
                 (f"{SITE}/transformers/trainer.py", "self.callback_handler = CallbackHandler(callbacks)")) + \
        "TypeError: CallbackHandler.__init__() missing 1 required positional argument: 'processing_class'\n"
    assert "pip show trl transformers" in first(log)[1]


def test_an_unexpected_keyword_in_user_code_alone_stays_unknown():
    # tune-g1: no pair of packages, so not f2's reading; g1's table (transformers 4.46 renamed it) answers instead
    log = frames(("/srv/app/run.py", "t = Trainer(model=m, tokenizer=tok)")) + \
        "TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'\n"
    top = first_item(log)
    assert "processing_class=" in top.fix.summary and "pip install --upgrade" not in " ".join(top.fix.commands)


# --- cuDNN runtime mismatch --------------------------------------------------------------------------

def test_cudnn_runtime_mismatch_names_both_versions_and_the_wheel():
    log = ("torch 2.5.1+cu124\n" + frames((f"{SITE}/torch/nn/modules/conv.py", "return F.conv2d(input, weight)")) +
           "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found runtime "
           "version (8, 9, 7). PyTorch already comes bundled with cuDNN. Looks like your LD_LIBRARY_PATH contains "
           "incompatible version of cudnn. Please either remove it from the path or install cudnn (9, 1, 0)\n")
    top, fix = first(log)
    assert ident(top) == "shared-library:cudnn"
    assert "LD_LIBRARY_PATH" in fix and "nvidia-cudnn-cu12==9.1.0.*" in fix


def test_cudnn_status_version_mismatch():
    log = frames((f"{SITE}/torch/nn/modules/conv.py", "return F.conv2d(input, weight)")) + \
        "RuntimeError: cuDNN error: CUDNN_STATUS_VERSION_MISMATCH\n"
    assert ident(first_item(log)) == "shared-library:cudnn"


# --- kernel faults ---------------------------------------------------------------------------------

def test_misaligned_address_under_flash_attn_names_flash_attn():
    log = frames((f"{SITE}/flash_attn/flash_attn_interface.py", "out = flash_attn_gpu.fwd(q, k, v)")) + (
        "RuntimeError: CUDA error: misaligned address\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
    top, fix = first(log)
    assert ident(top) == "cuda-error:cudaErrorMisalignedAddress"
    assert "flash-attn" in fix and "CUDA_LAUNCH_BLOCKING=1" in fix and "xid" in fix.lower()


def test_triton_illegal_instruction_names_triton_and_no_package_claims_none():
    log = frames((f"{SITE}/triton/compiler/compiler.py", "self._init_handles()")) + \
        "RuntimeError: Triton Error [CUDA]: an illegal instruction was encountered\n"
    assert "pip install -U torch" in first(log)[1]
    bare = frames(("/srv/app/train.py", "loss.backward()")) + "RuntimeError: CUDA error: unspecified launch failure\n"
    top, fix = first(bare)
    assert ident(top) == "cuda-error:cudaErrorLaunchFailure" and "Upgrade" not in fix


def test_healthy_lines_stay_silent():
    healthy("[W socket.cpp:663] warning: Too many open files would be reached soon; raising the limit\n"
            "UserWarning: This DataLoader will create 8 worker processes in total.\n"
            "Epoch 1: 100%|##########| 50/50 [00:10<00:00,  4.9it/s, loss=0.31]\n")


def test_a_triton_kernel_of_liger_names_liger_not_triton():
    log = frames((f"{SITE}/liger_kernel/ops/rms_norm.py", "_rms_norm_forward_kernel[(n_rows,)]("),
                 (f"{SITE}/triton/runtime/jit.py", "kernel.run(grid_0, grid_1)")) + \
        "RuntimeError: Triton Error [CUDA]: misaligned address\n"
    assert "Upgrade liger-kernel" in first(log)[1]


def test_a_builtin_called_with_a_new_keyword_is_not_read_as_drift():
    log = frames((f"{SITE}/accelerate/hooks.py", "output = module._old_forward(*args)"),
                 (f"{SITE}/transformers/integrations/sdpa_attention.py", "F.scaled_dot_product_attention(q, k, v, enable_gqa=True)")) + \
        "TypeError: scaled_dot_product_attention() got an unexpected keyword argument 'enable_gqa'\n"
    # tune-g1: not the accelerate/transformers pair; g1's table reads torch's builtin (enable_gqa from torch 2.5)
    assert ident(first_item(log)) == "version-constraint:torch"


def test_the_spawned_childs_eoferror_is_the_main_guard_but_a_torch_load_eoferror_is_not():
    child = frames((WINLIB + r"\multiprocessing\spawn.py", "self = reduction.pickle.load(from_parent)")) + \
        "EOFError: Ran out of input\n"
    assert ident(first_item(child)) == "launcher:spawn-pipe"
    load = frames((f"{SITE}/torch/serialization.py", "magic_number = pickle_module.load(f)")) + "EOFError: Ran out of input\n"
    assert not ident(first_item(load)).startswith("launcher:spawn")


def test_a_local_collate_function_that_cannot_be_pickled():
    log = frames((f"{SITE}/torch/utils/data/dataloader.py", "w.start()"),
                 ("/usr/lib/python3.12/multiprocessing/reduction.py", "ForkingPickler(file, protocol).dump(obj)")) + \
        "AttributeError: Can't get local object 'main.<locals>.collate'\n"
    top, fix = first(log)
    assert ident(top) == "launcher:spawn-pickle" and "top level" in fix


def test_git_behind_a_tls_proxy_is_http_sslcainfo():
    log = ("  Running command git clone --filter=blob:none --quiet https://github.com/org/repo.git /tmp/pip-req-build-x\n"
           "  fatal: unable to access 'https://github.com/org/repo.git/': SSL certificate problem: self-signed certificate "
           "in certificate chain\n  error: subprocess-exited-with-error\n")
    assert "http.sslCAInfo" in first(log)[1]


def test_pips_own_no_space_report_is_read_once():
    from _explain_items import scan
    log = "Collecting torch\nERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n"
    assert not any(a.kind == "out-of-memory" and a.subject == "disk" for a in scan(log).answers)
