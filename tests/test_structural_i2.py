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
