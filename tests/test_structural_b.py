"""The structural layer's second round (issue 22, tune-b): pip's reasons read against the versions it
lists, extension ABI owners and fixes by install rule, unregistered companion operators, transformers'
check_imports, the importing package, and the new fingerprint entries (torch.compile on Windows, CUDA
op builders, ninja failures, SageAttention per-SM kernels, corrupt checkpoints). Every line here is
written for these tests in the shape the real tools print (not copied from the corpus)."""

from __future__ import annotations

import pytest

from flexdoctor.knowledge.structural import abi, history, tables

from _explain_items import first, fix_text, scan


def first_fix(text: str) -> str:
    return fix_text(first(text)).lower()


def first_id(text: str) -> str:
    top = scan(text).ordered()[0]
    return top.entry.id if hasattr(top, "entry") else top.kind


# --- pip: no matching distribution ----------------------------------------------------------------

PIP = ("ERROR: Could not find a version that satisfies the requirement {req} (from versions: {versions})\n"
       "ERROR: No matching distribution found for {req}\n")


@pytest.mark.parametrize("req, versions, want", [
    # too new a Python for an old torch: the list starts above the request
    ("torch==1.12.1", "2.0.0, 2.0.1, 2.1.0", "newer torch"),
    ("torch==1.12.1", "2.0.0, 2.0.1, 2.1.0", "python 3.7 to 3.10"),
    # sibling: another package, same shape
    ("numpy==1.19.5", "1.21.0, 1.22.0, 1.26.4", "newer numpy"),
    # a release that never existed (torch went 1.13 -> 2.0)
    ("torch==1.14.0", "1.11.0, 1.12.0, 1.12.1, 1.13.0, 1.13.1", "does not exist"),
    # a CUDA-tagged build asked of an index without them
    ("torch==2.0.1+cu117", "1.13.1, 2.0.0, 2.0.1, 2.1.0", "download.pytorch.org/whl/cu117"),
    ("torchaudio==2.0.2+cu118", "2.0.1, 2.0.2", "mps"),
    # nothing at all for this interpreter: pinned torch -> its Python range; unpinned -> 64-bit
    ("torch==1.8.1+cu111", "none", "python 3.6 to 3.9"),
    ("torch", "none", "64-bit"),
    ("torchvision", "none", "64-bit"),
    # a platform rule from modules.toml
    ("triton", "none", "triton-windows"),
    ("vllm", "none", "linux only"),
])
def test_pip_no_distribution_reads_the_listed_versions(req, versions, want):
    assert want in first_fix(PIP.format(req=req, versions=versions))


def test_pip_version_in_range_but_not_listed_is_not_called_a_python_problem():
    fix = first_fix(PIP.format(req="diffusers==0.27.5", versions="0.27.0, 0.27.1, 0.27.2, 0.28.0"))
    assert "does not exist for this python" in fix and "newer python" not in fix


def test_torch_history_knows_releases_python_ranges_and_pairs():
    assert history.exists("1.13.1") and history.exists("2.5.1") and history.exists("1.15.0") is False
    assert history.exists("99.0.0") is None  # newer than the tables: may exist
    assert history.python_range("2.1.2") == ((3, 8), (3, 11))
    assert history.companions("1.12.1") == ("0.13.1", "0.12.1")
    assert history.companions("2.5.1+cu124") == ("0.20.1", "2.5.1")  # from the wheel table


# --- extension ABI: the owner from the binary's path, the fix by its install rule -------------------

@pytest.mark.parametrize("line, want", [
    # apex module at the top of site-packages
    ("ImportError: /usr/lib/python3.10/site-packages/mlp_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
     "_ZN3c104cuda20getCurrentCUDAStreamEa", "rebuild apex"),
    # a path that is not site-packages: the module file's own name
    ("ImportError: /build/install/amp_C.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN2at5emptyEv",
     "rebuild apex"),
    # mmcv's _ext under a folder named after the package
    ("ImportError: /data/envs/det/mmcv/_ext.cpython-39-x86_64-linux-gnu.so: undefined symbol: "
     "_ZN2at4_ops5zeros4callEv", "mim install mmcv"),
    # PyG
    ("OSError: /home/u/venv/lib/python3.10/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: "
     "_ZN3c1017RegisterOperatorsD1Ev", "data.pyg.org"),
    # torchaudio: lockstep with torch
    ("OSError: /usr/lib/python3.9/site-packages/torchaudio/lib/libtorchaudio.so: undefined symbol: "
     "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs", "reinstall torchaudio matching torch"),
])
def test_undefined_torch_symbol_is_fixed_by_the_owners_install_rule(line, want):
    assert want in first_fix(line)


def test_pair_pin_comes_from_torch_history_for_old_torch():
    log = ("torch==1.12.1+cu113\n"
           "OSError: /usr/lib/python3.8/site-packages/torchaudio/lib/libtorchaudio.so: undefined symbol: "
           "_ZNK3c107SymBool10guard_boolEPKcl\n")
    assert "torchaudio==0.12.1 --index-url https://download.pytorch.org/whl/cu113" in first_fix(log)


def test_owner_prefers_a_known_module():
    assert abi.owner("/x/site-packages/fused_dense_cuda.cpython-311-x86_64-linux-gnu.so: ") == "fused_dense_cuda"
    assert abi.owner("/opt/app/vendor/_torch_sox.cpython-36m-x86_64-linux-gnu.so: ") == "_torch_sox"
    assert abi.owner("/opt/app/mylib/_impl.so: ") is None


@pytest.mark.parametrize("line, want", [
    ("RuntimeError: operator torchvision::roi_align does not exist", "matching torch"),
    ("RuntimeError: No such operator torchaudio::sox_io_load_audio_file", "reinstall torchaudio"),
])
def test_companion_operator_not_registered(line, want):
    assert first_id(line) == "undefined-symbol"
    assert want in first_fix(line)


def test_torchs_own_operator_namespaces_are_not_blamed_on_a_companion():
    result = scan("RuntimeError: operator aten::_fused_sdp_choice does not exist\n")
    assert not [a for a in result.answers if a.rank == 20]


# --- modules ------------------------------------------------------------------------------------

def test_transformers_check_imports_names_the_package():
    line = ("ImportError: This modeling file requires the following packages that were not found in your "
            "environment: mamba_ssm. Run `pip install mamba_ssm`")
    assert "mamba-ssm --no-build-isolation" in first_fix(line)


def test_a_package_importing_an_optional_module_is_named():
    log = ("Traceback (most recent call last):\n"
           '  File "/srv/app/run.py", line 3, in <module>\n'
           "    import peft\n"
           '  File "/srv/venv/lib/python3.11/site-packages/peft/tuners/lora/bnb.py", line 5, in <module>\n'
           "    import bitsandbytes as bnb\n"
           "ModuleNotFoundError: No module named 'bitsandbytes'\n")
    fix = first_fix(log)
    assert "pip install bitsandbytes" in fix and "upgrade peft" in fix


def test_user_code_importing_a_module_names_no_importer():
    log = ("Traceback (most recent call last):\n"
           '  File "/srv/app/run.py", line 3, in <module>\n'
           "    import einops\n"
           "ModuleNotFoundError: No module named 'einops'\n")
    assert "upgrade" not in first_fix(log)


def test_module_table_covers_the_ecosystem():
    for module, dist in [("transformers", "transformers"), ("sentencepiece", "sentencepiece"), ("cv2", "opencv-python"),
                         ("torch_sparse", "torch-sparse"), ("fused_layer_norm_cuda", "NVIDIA apex"), ("mmcv", "mmcv")]:
        assert tables.module_row(module)["dist"] == dist


# --- entries ------------------------------------------------------------------------------------

@pytest.mark.parametrize("log, entry, want", [
    ("RuntimeError: Windows not yet supported for inductor\n", "FDE309", "wsl"),
    ("  File \"C:\\venv\\lib\\site-packages\\torch\\_dynamo\\eval_frame.py\", line 375, in check_if_dynamo_supported\n",
     "FDE311", "accelerate config"),
    ("AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)\n", "FDE404", "cuda_home"),
    ("/src/kernels/attn.cu:4:10: fatal error: cublas_v2.h: No such file or directory\n", "FDE405", "cuda toolkit"),
    ("subprocess.CalledProcessError: Command '['ninja', '-v', '-j', '8']' returned non-zero exit status 1.\n",
     "FDE406", "error:"),
    ("AssertionError: SM90 kernel is not available. Make sure you GPUs with compute capability 9.0.\n", "FDE725",
     "torch_cuda_arch_list"),
    ("_pickle.UnpicklingError: invalid load key, '<'.\n", "FDE807", "download again"),
    ("RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory\n", "FDE807",
     "download again"),
    ("RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found "
     "at https://github.com/openai/triton\n", "FDE301", "triton-windows"),
])
def test_new_entries_come_first(log, entry, want):
    assert first_id(log) == entry
    assert want in first_fix(log)


@pytest.mark.parametrize("healthy", [
    "UserWarning: TORCH_CUDA_ARCH_LIST is not set, all archs for visible cards are included for compilation.\n",
    "[WARNING] async_io requires the dev libaio .so object and headers but these were not found.\n",
    "Successfully installed torch-2.5.1 torchvision-0.20.1 torchaudio-2.5.1\n",
    "Using sage attention\nRequirement already satisfied: triton-windows<3.3 in c:\\venv\\lib\\site-packages\n",
    "[1/3] /usr/local/cuda/bin/nvcc -c attn.cu -o attn.cuda.o\n[3/3] c++ attn.cuda.o -shared -o fused.so\n",
])
def test_healthy_lines_raise_nothing(healthy):
    assert not scan(healthy).found
