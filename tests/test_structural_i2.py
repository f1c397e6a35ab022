"""The structural readers and table rows of cov-i2 (issue 22, coverage by frequency: the Hugging Face stack and the UIs
people run it in). Lines are written here in the shape the real code prints them (pytorch_lightning's module layout,
transformers' import_utils/modeling_utils ImportError messages, AUTOMATIC1111's launch_utils), not copied from the
corpus; each class has a sibling and a healthy neighbour that must stay silent."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident

SITE = "/home/ml/.venv/lib/python3.10/site-packages"
WIN = "C:\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages"


# --- pytorch_lightning.utilities.distributed: rank_zero_only moved (1.8.0), the module removed (2.x) --------------------
# CompVis/stable-diffusion#451, googlecolab/colabtools#3728, deforum/deforum-stable-diffusion#1/#290.

def test_lightning_distributed_module_removed_names_the_new_import_and_the_pin():
    log = frames(("/srv/sd/repositories/stable-diffusion-stability-ai/ldm/models/diffusion/ddpm.py",
                  "from pytorch_lightning.utilities.distributed import rank_zero_only")) + \
        "ModuleNotFoundError: No module named 'pytorch_lightning.utilities.distributed'\n"
    top, fix = first(log)
    assert "utilities.rank_zero import rank_zero_only" in fix and "pytorch-lightning<2.0.0" in fix, fix


def test_lightning_rank_zero_only_name_removed_sibling():
    log = frames(("/srv/deforum/src/ldm/models/diffusion/ddpm.py",
                  "from pytorch_lightning.utilities.distributed import rank_zero_only")) + \
        ("ImportError: cannot import name 'rank_zero_only' from 'pytorch_lightning.utilities.distributed' "
         f"({SITE}/pytorch_lightning/utilities/distributed.py)\n")
    top, fix = first(log)
    assert "utilities.rank_zero" in fix and "pytorch-lightning<1.8.0" in fix, fix


def test_lightning_fallback_notice_stays_silent():
    healthy("Pytorch_lightning.distributed not found, attempting pytorch_lightning.rank_zero\n"
            "Launching Web UI with arguments: --xformers\n")


# --- transformers needs accelerate: missing, too old, or in another Python ----------------------------------------------
# transformers utils/import_utils.py ACCELERATE_MIN_VERSION; modeling_utils.py / training_args.py / quantizer messages.
# Threads: QwenLM/Qwen3#173 (accelerate 0.20.3 under transformers 4.37), googlecolab/colabtools#4136, ComfyUI nodes.

def test_device_map_needs_accelerate_names_the_upgrade_and_the_restart():
    log = frames(("/srv/app/load.py", "model = AutoModelForCausalLM.from_pretrained(path, device_map='auto')"),
                 (f"{SITE}/transformers/modeling_utils.py", "raise ImportError(")) + \
        "ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: `pip install accelerate`\n"
    top, fix = first(log)
    assert ident(top) == "version-constraint:accelerate", ident(top)
    assert "pip install -U accelerate" in fix and "restart" in fix, fix


def test_comfy_portable_sibling_names_its_embedded_python_and_the_minimum():
    log = frames((f"{WIN}\\transformers\\models\\auto\\auto_factory.py", "return model_class.from_pretrained("),
                 (f"{WIN}\\transformers\\modeling_utils.py", "raise ImportError(")) + \
        ("ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: "
         "`pip install 'accelerate>=0.26.0'`\n")
    top, fix = first(log)
    assert 'python_embeded\\python.exe -m pip install -U "accelerate>=0.26.0"' in fix, fix


def test_quantizer_wording_is_the_same_class():
    bnb = frames((f"{SITE}/transformers/quantizers/quantizer_bnb_8bit.py", "raise ImportError(")) + \
        ("ImportError: Using `bitsandbytes` 8-bit quantization requires accelerate: `pip install "
         "'accelerate>=0.26.0'`\n")
    top, fix = first(bnb)
    assert ident(top) == "version-constraint:accelerate" and '"accelerate>=0.26.0"' in fix, fix


def test_accelerate_install_hint_in_a_warning_stays_silent():
    healthy("UserWarning: Cannot initialize model with low cpu memory usage because `accelerate` was not found in the "
            "environment. Defaulting to `low_cpu_mem_usage=False`. It is strongly recommended to install `accelerate` "
            "for faster and less memory-intense model loading. You can do so with: pip install accelerate\n"
            "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.52s/it]\n")


# --- AUTOMATIC1111 / Forge: the webui's own Python and flags ------------------------------------------------------------
# README (Python 3.10.6), AUTOMATIC1111/stable-diffusion-webui#16014/#9321 (torch pin without a wheel for 3.11/3.12),
# #1349/#887/#13519 (--precision full --no-half on the CPU).

def test_webui_installer_names_python_310_and_its_knobs():
    log = ("Installing torch and torchvision\n"
           "ERROR: Could not find a version that satisfies the requirement torch==2.1.2 (from versions: 2.4.0, 2.5.0)\n"
           "ERROR: No matching distribution found for torch==2.1.2\n" +
           frames(("/home/u/stable-diffusion-webui/launch.py", "prepare_environment()"),
                  ("/home/u/stable-diffusion-webui/modules/launch_utils.py",
                   "run(f'\"{python}\" -m {torch_command}', \"Installing torch and torchvision\", "
                   "\"Couldn't install torch\", live=True)")) +
           "RuntimeError: Couldn't install torch.\n")
    top, fix = first(log)
    assert "Python 3.10" in fix and "python_cmd" in fix and "TORCH_COMMAND" in fix, fix


def test_webui_half_on_cpu_names_no_half():
    log = frames(("C:\\sd\\stable-diffusion-webui\\modules\\processing.py", "samples_ddim = p.sample("),
                 ("C:\\sd\\stable-diffusion-webui\\venv\\lib\\site-packages\\torch\\nn\\functional.py",
                  "return torch.layer_norm(input, normalized_shape, weight, bias, eps)")) + \
        "RuntimeError: \"LayerNormKernelImpl\" not implemented for 'Half'\n"
    top, fix = first(log)
    assert "--precision full --no-half" in fix, fix


def test_half_on_cpu_outside_the_webui_keeps_the_generic_fix():
    log = frames(("/srv/infer.py", "out = model.generate(**inputs)")) + \
        "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'\n"
    top, fix = first(log)
    assert "--no-half" not in fix and "float32" in fix, fix


def test_webui_launch_notice_stays_silent():
    healthy("Python 3.10.6 (tags/v3.10.6:9c7b4bd, Aug  1 2022, 21:53:49) [MSC v.1932 64 bit (AMD64)]\n"
            "Installing torch and torchvision\n"
            "Successfully installed torch-2.1.2+cu121 torchvision-0.16.2+cu121\n"
            "Launching Web UI with arguments: --xformers\n")
