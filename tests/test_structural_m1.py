"""The structural readers of tuner m1 (issue 22, last wave). Lines are written here in the shape the real code prints
them (unsloth's tokenizer_utils.py patch_sft_trainer_tokenizer ``raise RuntimeError(f"Unsloth: Please file a bug
report! Error patching {trainer_name}")``; CPython's and IPython's traceback frames; ComfyUI nodes.py
load_custom_node's "Cannot import {path} module for custom nodes: {e}"; CPython's ModuleNotFoundError), not copied
from the corpus; each class has siblings and a healthy neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import healthy, scan

# --- unsloth / unsloth_zoo / TRL version skew -------------------------------------------------------------------------

_SP = "/opt/conda/envs/ft/lib/python3.11/site-packages"


def _plain(frames: list, exc: str) -> str:
    out = "Traceback (most recent call last):\n  File \"/home/kim/ft.py\", line 2, in <module>\n" \
          "    from unsloth import FastLanguageModel\n"
    for path, fn, code in frames:
        out += f"  File \"{path}\", line 118, in {fn}\n    {code}\n"
    return out + exc + "\n"


# unsloth's own frames at import or patch time (without its "Error patching" message) are not read: that
# pattern's trigger cost explain ~5 % of its throughput and was left out at merge.


def test_trl_trainer_patch_names_the_trl_pin():
    log = _plain([(f"{_SP}/unsloth/tokenizer_utils.py", "<module>",
                   'raise RuntimeError(f"Unsloth: Please file a bug report! Error patching {trainer_name}")')],
                 "RuntimeError: Unsloth: Please file a bug report! Error patching GRPOTrainer")
    top, fix = first(log)
    assert top.subject == "trl" and "GRPOTrainer" in top.title, (top.subject, top.title)
    assert 'trl<0.15.0' in fix and "unsloth_zoo" in fix, fix


def test_unsloth_own_refusal_and_oom_are_not_read_as_skew():
    nogpu = _plain([(f"{_SP}/unsloth/__init__.py", "<module>", "raise NotImplementedError(msg)")],
                   "NotImplementedError: Unsloth: No NVIDIA GPU found? Unsloth currently only supports GPUs!")
    assert all(a.title.find("patching the libraries") < 0 for a in scan(nogpu).answers)
    oom = _plain([(f"{_SP}/unsloth/models/llama.py", "LlamaModel_fast_forward", "hidden = layer(hidden)")],
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    top, _fix = first(oom)
    assert top.kind == "out-of-memory" or "cuda" in str(top.subject).lower(), (top.kind, top.subject)


def test_healthy_unsloth_warning_with_its_path_stays_silent():
    healthy("🦥 Unsloth: Will patch your computer to enable 2x faster free finetuning.\n"
            f"{_SP}/unsloth/models/llama.py:1523: UserWarning: Using a slow tokenizer.\n"
            "  warnings.warn(\n"
            "{'loss': 1.2345, 'grad_norm': 0.51, 'learning_rate': 0.0002, 'epoch': 0.5}\n")


# --- a ComfyUI custom node's missing module ---------------------------------------------------------------------------

def _comfy(root: str, node: str, mod: str) -> str:
    sep = "\\"
    return ("Traceback (most recent call last):\n"
            f"  File \"{root}{sep}nodes.py\", line 2001, in load_custom_node\n"
            "    module_spec.loader.exec_module(module)\n"
            f"  File \"{root}{sep}custom_nodes{sep}{node}{sep}__init__.py\", line 3, in <module>\n"
            f"    import {mod}\n"
            f"ModuleNotFoundError: No module named '{mod}'\n\n"
            f"Cannot import {root}{sep}custom_nodes{sep}{node} module for custom nodes: No module named '{mod}'\n")


def test_comfy_portable_node_lacks_cv2_installs_opencv_with_embedded_python():
    top, fix = first(_comfy(r"D:\ComfyUI_windows_portable\ComfyUI", "ComfyUI-Frame-Tools", "cv2"))
    assert r"python_embeded\python.exe -s -m pip install opencv-python" in fix, fix
    assert "requirements.txt" in fix


def test_comfy_sibling_modules_map_to_their_distributions():
    _top, fix = first(_comfy(r"C:\AI\ComfyUI", "comfy-mask-utils", "skimage"))
    assert "python -m pip install scikit-image" in fix, fix
    _top, fix = first(_comfy(r"C:\AI\ComfyUI", "comfy-yaml-node", "yaml"))
    assert "pyyaml" in fix, fix


# --- text-generation-webui outside its installer env ------------------------------------------------------------------

def test_textgen_run_with_system_python_says_start_windows_bat():
    log = ("Traceback (most recent call last):\n"
           "  File \"D:\\llm\\text-generation-webui\\server.py\", line 9, in <module>\n    import gradio as gr\n"
           "ModuleNotFoundError: No module named 'gradio'\n")
    _top, fix = first(log)
    assert "start_windows.bat" in fix and "cmd_windows.bat" in fix, fix


def test_textgen_linux_sibling_and_inside_the_installer_env():
    log = ("Traceback (most recent call last):\n"
           "  File \"/home/rui/text-generation-webui/modules/models.py\", line 4, in <module>\n    import yaml\n"
           "ModuleNotFoundError: No module named 'yaml'\n")
    _top, fix = first(log)
    assert "start_linux.sh" in fix and "pyyaml" in fix, fix
    log = ("Traceback (most recent call last):\n"
           "  File \"C:\\tg\\text-generation-webui\\modules\\llama_cpp_python_hijack.py\", line 5, in <module>\n"
           "    import llama_cpp\n"
           "  File \"C:\\tg\\installer_files\\env\\Lib\\site-packages\\exllamav2\\__init__.py\", line 3, in <module>\n"
           "    import sentencepiece\n"
           "ModuleNotFoundError: No module named 'sentencepiece'\n")
    _top, fix = first(log)
    assert "cmd_windows.bat" in fix and "installer_files" in fix, fix


def test_other_projects_missing_module_keeps_the_plain_answer():
    log = ("Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 1, in <module>\n"
           "    import requests\nModuleNotFoundError: No module named 'requests'\n")
    _top, fix = first(log)
    assert "start_" not in fix and "python -m pip install requests" in fix, fix
