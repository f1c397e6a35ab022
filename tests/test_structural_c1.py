"""The structural layer's round 4, tune-c1 (issue 22): names a library release removed or added, a user's
file shadowing a package, protobuf's generated code, installer failures (pip, uv, conda) and SIGILL.
Every line here is written for these tests in the shape CPython, pip, uv and conda print (not copied
from the corpus); each class has a sibling case and a healthy line that must stay silent."""

from __future__ import annotations

import pytest

from _explain_items import first_with_fix as first
from _explain_items import fix_text, healthy, ident, scan


def _tb(path: str, code: str) -> str:
    return f'Traceback (most recent call last):\n  File "{path}", line 12, in <module>\n    {code}\n'


SITE = "/srv/venv/lib/python3.11/site-packages"


# --- names removed by a library release ----------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    # a package that still imports the removed name: upgrade it, or pin the library below the release
    (_tb(f"{SITE}/diffusers/utils/dynamic_modules_utils.py", "from huggingface_hub import cached_download")
     + f"ImportError: cannot import name 'cached_download' from 'huggingface_hub' ({SITE}/huggingface_hub/__init__.py)\n",
     ['python -m pip install --upgrade diffusers', 'huggingface_hub<0.26.0']),
    (_tb(f"{SITE}/gradio/oauth.py", "from huggingface_hub import HfFolder")
     + "ImportError: cannot import name 'HfFolder' from 'huggingface_hub'\n", ["huggingface_hub<1.0.0", "upgrade gradio"]),
    # a sibling name of the same removal
    (_tb(f"{SITE}/asteroid/models/base.py", "from huggingface_hub import url_to_filename")
     + "ImportError: cannot import name 'url_to_filename' from 'huggingface_hub'\n", ["huggingface_hub<0.26.0"]),
    (_tb(f"{SITE}/gensim/matutils.py", "from scipy.linalg import triu")
     + "ImportError: cannot import name 'triu' from 'scipy.linalg'\n", ['"gensim>=4.3.3"', "scipy<1.13.0"]),
    (_tb(f"{SITE}/bitsandbytes/triton/int8_matmul_mixed_dequantize.py", "from triton.ops.matmul_perf_model import x")
     + "ModuleNotFoundError: No module named 'triton.ops'\n", ['"bitsandbytes>=0.45.1"']),
    (_tb(f"{SITE}/torch/utils/cpp_extension.py", "from pkg_resources import packaging")
     + "ImportError: cannot import name 'packaging' from 'pkg_resources'\n", ["setuptools<70.0.0"]),
    (_tb(f"{SITE}/mmcv/utils/version.py", "import pkg_resources")
     + "ModuleNotFoundError: No module named 'pkg_resources'\n", ["setuptools<82.0.0"]),
    (_tb("/home/u/.local/lib/python3.10/site-packages/remote/modeling_x.py", "from transformers.pytorch_utils import x")
     + "ImportError: cannot import name 'is_torch_greater_or_equal_than_1_13' from 'transformers.pytorch_utils'\n",
     ["transformers<4.48.0"]),
])
def test_a_removed_name_names_the_release_and_the_caller(text, want):
    top, fix = first(text)
    assert ident(top).startswith(("import-name:", "missing-module:")), ident(top)
    for w in want:
        assert w.lower() in fix.lower(), fix


def test_numpy_alias_in_own_code_says_what_to_use():
    text = (_tb("/home/u/proj/train.py", "x = np.zeros(3, dtype=np.float)")
            + '  File "/home/u/.venv/lib/python3.10/site-packages/numpy/__init__.py", line 305, in __getattr__\n'
            "AttributeError: module 'numpy' has no attribute 'float'.\n"
            "`np.float` was a deprecated alias for the builtin `float`. To avoid this error in existing code, use "
            "`float` by itself.\n")
    top, fix = first(text)
    assert "Your code" in fix and "builtin float" in fix and 'numpy<1.24.0' in fix, fix
    # the sibling alias, on a Python no numpy < 1.24 has wheels for: no pin printed
    text312 = text.replace("python3.10", "python3.12").replace("'float'", "'int'").replace("np.float", "np.int")
    top, fix = first(text312)
    assert ident(top) == "import-name:numpy.int" and "numpy<1.24" not in fix, fix


def test_pillow_constant_and_method_removed_in_10():
    top, fix = first(_tb("/home/u/app/thumbs.py", "im.resize((64, 64), Image.ANTIALIAS)")
                     + "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'\n")
    assert "LANCZOS" in fix and "pillow<10.0.0" in fix, fix
    top, fix = first(_tb("/home/u/app/label.py", "w, h = font.getsize(text)")
                     + "AttributeError: 'FreeTypeFont' object has no attribute 'getsize'\n")
    assert "getbbox" in fix, fix


def test_torch_six_is_the_callers_upgrade_not_a_torch_pin():
    top, fix = first(_tb("/usr/local/lib/python3.10/dist-packages/apex/amp/_initialize.py", "from torch._six import inf")
                     + "ModuleNotFoundError: No module named 'torch._six'\n")
    assert "apex" in fix and "torch<2" not in fix, fix


@pytest.mark.parametrize("text, want", [
    (_tb("/home/u/venv/lib/python3.10/site-packages/yaml/constructor.py", "collections.Hashable")
     + "AttributeError: module 'collections' has no attribute 'Hashable'\n", "python -m pip install --upgrade pyyaml"),
    (_tb("/home/u/venv/lib/python3.12/site-packages/pkg_resources/__init__.py", "pkgutil.ImpImporter")
     + "AttributeError: module 'pkgutil' has no attribute 'ImpImporter'. Did you mean: 'zipimporter'?\n",
     "python -m pip install --upgrade setuptools"),
    (_tb("/home/u/venv/lib/python3.12/site-packages/oldpkg/loader.py", "import imp")
     + "ModuleNotFoundError: No module named 'imp'\n", "Python 3.12 removed"),
])
def test_a_standard_library_removal_upgrades_the_package_using_it(text, want):
    top, fix = first(text)
    assert want in fix, fix


def test_a_standard_library_removal_is_not_read_on_an_older_python():
    # Python 3.9 still has collections.Mapping: the name is missing for another reason (not this reading)
    text = (_tb("/home/u/venv/lib/python3.9/site-packages/lib/x.py", "from collections import Mapping")
            + "ImportError: cannot import name 'Mapping' from 'collections'\n")
    top, fix = first(text)
    assert "3.10 removed" not in fix, fix


@pytest.mark.parametrize("text, want", [
    (_tb(f"{SITE}/transformers/utils/generic.py", "_torch_pytree.register_pytree_node(")
     + "AttributeError: module 'torch.utils._pytree' has no attribute 'register_pytree_node'. "
       "Did you mean: '_register_pytree_node'?\n", '"torch>=2.2.0"'),
    (_tb(f"{SITE}/diffusers/models/attention_dispatch.py", "from torch.nn.attention.flex_attention import x")
     + "ModuleNotFoundError: No module named 'torch.nn.attention.flex_attention'\n", "torch>=2.5"),
    (_tb(f"{SITE}/onnx/onnx_pb.py", "from google.protobuf.internal import builder")
     + "ImportError: cannot import name 'builder' from 'google.protobuf.internal'\n", '"protobuf>=3.20.0"'),
])
def test_a_name_added_later_upgrades_the_library(text, want):
    top, fix = first(text)
    assert want in fix, fix


def test_a_caught_import_error_is_no_problem():
    healthy("A matching Triton is not available, some optimizations will not be enabled.\n"
            "Error caught was: No module named 'triton.ops'\nloading model... done\n")


# --- a user's file shadowing a package -----------------------------------------------------------------

def test_a_file_named_like_the_package_is_renamed():
    text = ('Traceback (most recent call last):\n  File "/home/u/work/numpy.py", line 1, in <module>\n'
            '    import numpy as np\n  File "/home/u/work/numpy.py", line 2, in <module>\n    a = np.array([1])\n'
            "AttributeError: partially initialized module 'numpy' has no attribute 'array' (most likely due to a "
            "circular import)\n")
    top, fix = first(text)
    assert "/home/u/work/numpy.py" in fix and "__pycache__" in fix and "numpy.__file__" in fix, fix


def test_shadow_windows_import_error_form():
    text = ('Traceback (most recent call last):\n  File "D:\\lab\\diffusers.py", line 1, in <module>\n'
            "ImportError: cannot import name 'DiffusionPipeline' from partially initialized module 'diffusers' "
            "(most likely due to a circular import) (D:\\lab\\diffusers.py)\n")
    top, fix = first(text)
    assert "D:\\lab\\diffusers.py" in fix and "D:\\lab\\__pycache__" in fix, fix


def test_shadow_plain_import_error_with_the_users_file_path():
    top, fix = first("ImportError: cannot import name 'AutoModel' from 'transformers' (/home/u/transformers.py)\n")
    assert "Rename /home/u/transformers.py" in fix, fix


def test_a_circular_import_inside_a_package_is_not_a_shadow():
    text = (_tb(f"{SITE}/somepkg/__init__.py", "from .core import x")
            + "ImportError: cannot import name 'x' from partially initialized module 'somepkg.core' (most likely due "
              f"to a circular import) ({SITE}/somepkg/core.py)\n")
    items = scan(text).ordered()
    assert not any("Rename" in fix_text(i) for i in items)


# --- protobuf ----------------------------------------------------------------------------------------

def test_protobuf_descriptors_pin_or_pure_python():
    text = (_tb(f"{SITE}/tensorboard/compat/proto/tensor_pb2.py", "from tensorboard.compat.proto import x")
            + "TypeError: Descriptors cannot be created directly.\n"
            "If this call came from a _pb2.py file, your generated code is out of date and must be regenerated with "
            "protoc >= 3.19.0.\n")
    top, fix = first(text)
    assert "protobuf==3.20.3" in fix and "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python" in fix, fix
    assert "--upgrade tensorboard" in fix, fix


# --- installers ------------------------------------------------------------------------------------------

def test_wheel_for_another_python():
    text = ("Python 3.12.4\nERROR: sageattention-2.1.1-cp311-cp311-linux_x86_64.whl is not a supported wheel on "
            "this platform.\n")
    top, fix = first(text)
    assert ident(top) == "pip-no-distribution:sageattention" and "CPython 3.11" in fix and "3.12" in fix, fix


def test_wheel_for_another_platform():
    text = ('  File "C:\\Users\\a\\x.py", line 1\nERROR: flash_attn-2.7.0-cp311-cp311-linux_x86_64.whl is not a '
            "supported wheel on this platform.\n")
    top, fix = first(text)
    assert "linux_x86_64" in fix and "windows" in fix, fix


@pytest.mark.parametrize("text, want", [
    ("ERROR: Cannot install sglang==0.3.0 and torch==2.5.0 because these package versions have conflicting "
     "dependencies.\n\nThe conflict is caused by:\n    The user requested torch==2.5.0\n"
     "    sglang 0.3.0 depends on torch==2.4.0\n", 'python -m pip install "sglang==0.3.0"'),
    ("  × No solution found when resolving dependencies:\n  ╰─▶ Because flash-attn==2.6.3 depends on torch>=2.2 and you "
     "require torch==2.1.0, we can conclude that your requirements are unsatisfiable.\n", "torch==2.1.0"),
    ("LibMambaUnsatisfiableError: Encountered problems while solving:\n  - package pytorch-2.0.1-py3.11_cuda11.8_cudnn8."
     "7.0_0 requires python >=3.11,<3.12.0a0, but none of the providers can be installed\n", "python=3.11"),
])
def test_resolution_conflicts_name_both_requirements(text, want):
    top, fix = first(text)
    assert want in fix, fix


def test_pep668_says_venv():
    text = ("$ pip install xformers\nerror: externally-managed-environment\n\n× This environment is externally managed\n")
    top, fix = first(text)
    assert "python3 -m venv .venv" in fix and "break-system-packages" in fix, fix


def test_conda_packages_not_found():
    text = ("PackagesNotFoundError: The following packages are not available from current channels:\n\n"
            "  - pytorch-cuda=11.8\n")
    top, fix = first(text)
    assert "-c pytorch -c nvidia" in fix, fix


def test_pip_out_of_space_is_not_the_compile_cache():
    text = ("Installing collected packages: nvidia-cublas-cu12, torch\n"
            "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n")
    top, fix = first(text)
    assert "TMPDIR" in fix and "pip cache purge" in fix and "clear-cache" not in fix, fix
    # the compile cache's own error still reads as the compile cache
    top, fix = first("OSError: [Errno 28] No space left on device: '/tmp/torchinductor_u/fx_graph'\n")
    assert "clear-cache" in fix, fix


def test_hash_mismatch_purges_the_cache():
    text = ("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the "
            "package versions, please update the hashes.\n")
    top, fix = first(text)
    assert "python -m pip cache purge" in fix and "--no-cache-dir" in fix, fix


def test_successful_pip_output_is_healthy():
    healthy("Collecting torch==2.5.1\n  Downloading torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl (906.4 MB)\n"
            "Requirement already satisfied: filelock in ./venv/lib/python3.11/site-packages (from torch) (3.16.1)\n"
            "Successfully installed torch-2.5.1\n")


# --- SIGILL -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, want", [
    ('$ python -c "import torch"\nIllegal instruction (core dumped)\n', "avx2"),
    ("./run.sh: line 4:  4242 Illegal instruction     (core dumped) python serve.py\n", "avx2"),
    ("zsh: illegal hardware instruction  python app.py\n", "arm64"),
])
def test_sigill_reads_the_cpu(text, want):
    top, fix = first(text)
    assert ident(top) == "unsupported-op:cpu-instructions" and want in fix, fix


def test_the_word_illegal_in_a_healthy_line_is_silent():
    healthy("INFO validator: illegal instruction count 0 (ok)\nepoch 1 done\n")
