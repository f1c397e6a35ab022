"""The structural readers of cov15 builder i7 (issue 22): "CUDA is not usable", answered in the program's own Python.
Lines are written here in the shape the real code prints them (torch/cuda/__init__.py _lazy_init's
raise AssertionError("Torch not compiled with CUDA enabled"); ComfyUI's comfy/model_management.py and Fooocus'
ldm_patched/modules/model_management.py import-time get_torch_device()), not copied from the corpus; each layout has
siblings and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import healthy

_ASSERT = '    raise AssertionError("Torch not compiled with CUDA enabled")\nAssertionError: Torch not compiled with CUDA enabled\n'


def _torch_frames(site: str, sep: str = "\\") -> str:
    init = sep.join([site, "torch", "cuda", "__init__.py"])
    return (f'  File "{init}", line 1001, in current_device\n    _lazy_init()\n'
            f'  File "{init}", line 403, in _lazy_init\n')


def _tb(site: str, sep: str = "\\") -> str:
    return "Traceback (most recent call last):\n" + _torch_frames(site, sep) + _ASSERT


def test_comfy_portable_reinstalls_into_python_embeded():
    _top, fix = first(_tb(r"E:\AI\ComfyUI_windows_portable\python_embeded\Lib\site-packages"))
    assert r".\python_embeded\python.exe -s -m pip install --force-reinstall torch" in fix, fix
    assert "update_comfyui_and_python_dependencies" in fix, fix
    assert "download.pytorch.org/whl/cu" in fix, fix


def test_webui_venv_on_windows_uses_the_venv_python():
    _top, fix = first(_tb(r"D:\stable-diffusion-webui\venv\lib\site-packages"))
    assert r"venv\Scripts\python.exe -m pip install --force-reinstall torch" in fix, fix
    assert "TORCH_COMMAND" in fix, fix


def test_linux_venv_sibling_uses_bin_python():
    _top, fix = first(_tb("/home/me/kohya_ss/venv/lib/python3.10/site-packages", "/"))
    assert "venv/bin/python -m pip install --force-reinstall torch" in fix, fix


def test_textgen_installer_env_and_conda_env_siblings():
    _top, fix = first(_tb(r"C:\text-generation-webui\installer_files\env\Lib\site-packages"))
    assert r"installer_files\env\python.exe -m pip" in fix, fix
    _top, fix = first(_tb("/home/me/miniconda3/envs/fooocus/lib/python3.10/site-packages", "/"))
    assert "conda run -n fooocus python -m pip install" in fix, fix


def test_no_program_python_leaves_the_generic_entry():
    _top, fix = first(_tb("/usr/lib/python3/dist-packages", "/"))
    assert "python_embeded" not in fix and "venv" not in fix, fix


def test_paste_cut_at_comfy_device_probe():
    text = ("Traceback (most recent call last):\n"
            '  File "D:\\ComfyUI_windows_portable\\ComfyUI\\comfy\\model_management.py", line 221, in <module>\n'
            "    total_vram = get_total_memory(get_torch_device()) / (1024 * 1024)\n")
    _top, fix = first(text)
    assert r".\python_embeded\python.exe -s -m pip install" in fix, fix


def test_paste_cut_at_lazy_init_frames_linux_venv():
    text = "Traceback (most recent call last):\n" + _torch_frames("/srv/app/.venv/lib/python3.12/site-packages", "/")
    _top, fix = first(text)
    assert ".venv/bin/python -m pip install --force-reinstall torch" in fix, fix


def test_healthy_comfy_start_up_is_silent():
    healthy("** Python executable: D:\\ComfyUI_windows_portable\\python_embeded\\python.exe\n"
            "Total VRAM 12282 MB, total RAM 32560 MB\npytorch version: 2.6.0+cu126\nDevice: cuda:0 NVIDIA GeForce RTX 4070 : "
            "cudaMallocAsync\nStarting server\n")
