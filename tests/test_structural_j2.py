"""The structural readers of tuner j2 (issue 22, round 12 train). Lines are written here in the shape the real code
prints them (pip's req_uninstall.py / exceptions.py LegacyDistutilsInstall and UninstallMissingRecord;
stable-diffusion-webui's modules/launch_utils.py git_clone and git's "fatal: repository ... not found"; transformers'
AttributeError on a Cache member), not copied from the corpus; each class has siblings and healthy neighbours."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import healthy, ident

_PIP_HEAD = ("Installing collected packages: PyYAML, tokenizers\n"
             "  Attempting uninstall: PyYAML\n"
             "    Found existing installation: PyYAML 5.3.1\n")


# --- pip: an installed copy with no record of its files -------------------------------------------------------------

def test_distutils_install_gets_ignore_installed_and_a_venv():
    top, fix = first(_PIP_HEAD + "ERROR: Cannot uninstall 'PyYAML'. It is a distutils installed project and thus we "
                     "cannot accurately determine which files belong to it which would lead to only a partial "
                     "uninstall.\n")
    assert ident(top) == "pip-no-distribution:pyyaml"
    assert "python -m pip install --ignore-installed pyyaml" in fix and "venv" in fix, fix


def test_new_pip_distutils_wording_on_conda_offers_conda_create():
    log = ("(base) C:\\Users\\ana>pip install -U numba\n" + _PIP_HEAD.replace("PyYAML", "llvmlite") +
           "error: uninstall-distutils-installed-package\n\n"
           "\u00d7 Cannot uninstall llvmlite 0.36.0\n"
           "\u2570\u2500> It is a distutils installed project and thus we cannot accurately determine which files "
           "belong to it which would lead to only a partial uninstall.\n")
    top, fix = first(log)
    assert ident(top) == "pip-no-distribution:llvmlite"
    assert "--ignore-installed llvmlite" in fix, fix


def test_debian_record_file_missing_names_the_os_package():
    log = ("error: uninstall-no-record-file\n\n"
           "\u00d7 Cannot uninstall PyJWT 2.3.0\n"
           "\u2570\u2500> The package's contents are unknown: no RECORD file was found for PyJWT.\n\n"
           "hint: The package was installed by debian. You should check if it can uninstall the package.\n")
    top, fix = first(log)
    assert ident(top) == "pip-no-distribution:pyjwt"
    assert "--ignore-installed pyjwt" in fix and "apt remove python3-pyjwt" in fix, fix


def test_successful_uninstalls_stay_silent():
    healthy(_PIP_HEAD + "    Uninstalling PyYAML-5.3.1:\n      Successfully uninstalled PyYAML-5.3.1\n"
            "Successfully installed PyYAML-6.0.1 tokenizers-0.15.2\n")


# --- a launcher's git clone of a repository that is gone -------------------------------------------------------------

_WEBUI = ("Python 3.10.11 (tags/v3.10.11:7d4cc5a, Apr  5 2023, 00:38:17) [MSC v.1929 64 bit (AMD64)]\n"
          "Version: v1.10.1\n"
          "Cloning Stable Diffusion into C:\\sd\\webui\\repositories\\stable-diffusion-stability-ai...\n"
          "Cloning into 'C:\\sd\\webui\\repositories\\stable-diffusion-stability-ai'...\n"
          "remote: Repository not found.\n"
          "fatal: repository 'https://github.com/Stability-AI/stablediffusion.git/' not found\n")


def test_removed_stable_diffusion_repo_gets_the_override_variable_and_fork():
    top, fix = first(_WEBUI + "Traceback (most recent call last):\n"
                     '  File "C:\\sd\\webui\\launch.py", line 48, in <module>\n    main()\n')
    assert ident(top) == "launcher:STABLE_DIFFUSION_REPO"
    assert "set STABLE_DIFFUSION_REPO=https://github.com/w-e-w/stablediffusion.git" in fix and "webui-user.bat" in fix


def test_runtime_error_of_the_linux_launcher_uses_export():
    log = ("fatal: could not read Username for 'https://github.com': No such device or address\n"
           "Traceback (most recent call last):\n"
           '  File "/home/ana/stable-diffusion-webui/modules/launch_utils.py", line 116, in run\n'
           '    raise RuntimeError("\\n".join(error_bits))\n'
           "RuntimeError: Couldn't clone Stable Diffusion.\n"
           "Error code: 128\n")
    top, fix = first(log)
    assert ident(top) == "launcher:STABLE_DIFFUSION_REPO"
    assert "export STABLE_DIFFUSION_REPO=https://github.com/w-e-w/stablediffusion.git" in fix, fix


def test_sibling_repo_names_its_own_variable():
    top, fix = first("Traceback (most recent call last):\n"
                     '  File "/home/ana/stable-diffusion-webui/modules/launch_utils.py", line 116, in run\n'
                     '    raise RuntimeError("\\n".join(error_bits))\n'
                     "RuntimeError: Couldn't fetch K-diffusion.\n")
    assert ident(top) == "launcher:K_DIFFUSION_REPO"
    assert "K_DIFFUSION_REPO" in fix and "w-e-w" not in fix, fix


def test_platform_unknown_gives_both_launcher_files():
    top, fix = first(_WEBUI)
    assert "webui-user.bat / webui-user.sh" in fix and "set STABLE" in fix and "export STABLE" in fix, fix


def test_other_missing_repository_is_read_as_gone_or_private():
    top, fix = first("Cloning into 'nodes'...\nremote: Repository not found.\n"
                     "fatal: repository 'https://github.com/someone/gone-nodes.git/' not found\n")
    assert ident(top) == "launcher:git-repository"
    assert "git ls-remote https://github.com/someone/gone-nodes.git/" in fix, fix


def test_cloning_progress_stays_silent():
    healthy("Cloning Stable Diffusion into /home/ana/webui/repositories/stable-diffusion-stability-ai...\n"
            "Cloning into '/home/ana/webui/repositories/stable-diffusion-stability-ai'...\n"
            "Resolving deltas: 100% (311/311), done.\n")


# --- transformers: a Cache member a release removed -----------------------------------------------------------------

def _generate(attr: str, cls: str = "DynamicCache") -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/ana/.venv/lib/python3.11/site-packages/transformers/generation/utils.py", line 2215, '
            "in generate\n"
            "    model_inputs = self.prepare_inputs_for_generation(input_ids, **model_kwargs)\n"
            '  File "/home/ana/.cache/huggingface/modules/transformers_modules/org/Model-7B/abc123/modeling_model.py", '
            "line 1401, in prepare_inputs_for_generation\n"
            f"    x = past_key_values.{attr}()\n"
            f"AttributeError: '{cls}' object has no attribute '{attr}'\n")


def test_get_max_length_pins_below_its_removal_and_names_remote_code():
    top, fix = first(_generate("get_max_length"))
    assert ident(top) == "import-name:DynamicCache.get_max_length"
    assert 'transformers<4.49' in fix and "trust_remote_code=False" in fix, fix


def test_sibling_cache_and_v5_removal():
    top, fix = first(_generate("to_legacy_cache", cls="HybridCache"))
    assert ident(top) == "import-name:HybridCache.to_legacy_cache"
    assert 'transformers<5.0' in fix, fix


def test_seen_tokens_asks_for_an_older_transformers_without_a_number():
    top, fix = first(_generate("seen_tokens"))
    assert "Downgrade transformers" in fix and "transformers<" not in fix, fix


def test_deprecation_warning_stays_silent():
    healthy("/home/ana/.venv/lib/python3.11/site-packages/transformers/cache_utils.py:443: FutureWarning: The "
            "`seen_tokens` attribute is deprecated and will be removed in v4.41. Use the `cache_position` model input "
            "instead.\n  warnings.warn(\n")


# --- apt: NVIDIA packages from a repository that does not fit the system -------------------------------------------

_APT_HEAD = ("Reading package lists... Done\nBuilding dependency tree... Done\nReading state information... Done\n"
             "Some packages could not be installed. This may mean that you have\n"
             "requested an impossible situation or if you are using the unstable\n"
             "distribution that some required packages have not yet been created\n"
             "or been moved out of Incoming.\n"
             "The following information may help to resolve the situation:\n\n"
             "The following packages have unmet dependencies:\n")
_HELD = "E: Unable to correct problems, you have held broken packages.\n"


def test_dependency_on_nvidia_cuda_meta_package_points_at_nvidias_repository():
    top, fix = first("$ sudo apt-get install rocm-nvidia-bridge\n" + _APT_HEAD +
                     " rocm-nvidia-bridge : Depends: cuda-drivers (>= 525) but it is not installable\n"
                     "                      Depends: libfoo-nvidia but it is not installable\n" + _HELD)
    assert ident(top) == "version-constraint:cuda-drivers"
    assert "developer.nvidia.com" in fix and "cuda-drivers" in fix, fix


def test_ubuntu_built_driver_on_debian_names_debians_driver():
    top, fix = first("# apt-get install nvidia-driver-550\n" + _APT_HEAD +
                     " libnvidia-gl-550 : Depends: libc6 (>= 2.35) but 2.36-9+deb12u4 is to be installed\n"
                     " nvidia-utils-550 : Depends: libc6 (>= 2.38) but 2.36-9+deb12u4 is to be installed\n" + _HELD)
    assert ident(top) == "version-constraint:libc6"
    assert "Debian 12" in fix and "non-free" in fix and "debian12" in fix, fix


def test_old_cuda_version_on_a_newer_release_asks_for_a_cuda_built_for_it():
    top, fix = first(_APT_HEAD + " cuda-nvcc-10-2 : Depends: libgcc1 but it is not installable\n" + _HELD)
    assert ident(top) == "version-constraint:libgcc1"
    assert "newer CUDA version" in fix and "CUDA 10.2" in fix, fix


def test_half_done_install_asks_for_fix_broken_without_package_names():
    top, fix = first("You might want to run 'apt-get -f install' to correct these:\n"
                     "The following packages have unmet dependencies:\n"
                     " cuda-toolkit-12-4 : Depends: cuda-nvcc-12-4 (>= 12.4.131) but it is not going to be installed\n"
                     "E: Unmet dependencies. Try 'apt-get -f install' with no packages (or specify a solution).\n")
    assert ident(top) == "version-constraint:apt-get -f install"
    assert "sudo apt-get -f install" in fix and "with no package names" in fix, fix


def test_successful_apt_install_stays_silent():
    healthy("Reading package lists... Done\nBuilding dependency tree... Done\n"
            "The following additional packages will be installed:\n  libnvidia-compute-550 nvidia-utils-550\n"
            "Setting up nvidia-utils-550 (550.120-0ubuntu0.22.04.1) ...\n"
            "Processing triggers for libc-bin (2.35-0ubuntu3.8) ...\n")


def test_paste_stopping_at_the_calling_frame_still_reads_the_removed_member():
    log = _generate("get_max_length").rsplit("AttributeError", 1)[0]
    top, fix = first(log)
    assert ident(top) == "import-name:Cache.get_max_length"
    assert "transformers<4.49" in fix, fix


def test_calling_frame_of_another_error_is_not_read():
    log = _generate("get_max_length").rsplit("AttributeError", 1)[0] + "RuntimeError: CUDA error: out of memory\n"
    top, _fix = first(log)
    assert ident(top) != "import-name:Cache.get_max_length"


# --- a paste that stops inside torch's CUDA initialisation (answered by tune-i7's cut reader since the merge) -----------

_PORTABLE = "C:\\ComfyUI_windows_portable"


def _comfy_start(deeper: bool) -> str:
    out = ("Traceback (most recent call last):\n"
           f'  File "{_PORTABLE}\\ComfyUI\\main.py", line 147, in <module>\n    import execution\n'
           f'  File "{_PORTABLE}\\ComfyUI\\comfy\\model_management.py", line 230, in <module>\n'
           "    total_vram = get_total_memory(get_torch_device()) / (1024 * 1024)\n")
    if deeper:
        out += (f'  File "{_PORTABLE}\\python_embeded\\Lib\\site-packages\\torch\\cuda\\__init__.py", line 1026, '
                "in current_device\n    _lazy_init()\n"
                f'  File "{_PORTABLE}\\python_embeded\\Lib\\site-packages\\torch\\cuda\\__init__.py", line 310, '
                "in _lazy_init\n")
    return out


def test_comfy_start_cut_before_the_error_reinstalls_cuda_torch_into_python_embeded():
    top, fix = first(_comfy_start(True))
    assert ident(top) == "unsupported-op:cuda"
    assert ("python_embeded\\python.exe -s -m pip install --force-reinstall torch torchvision torchaudio "
            "--index-url https://download.pytorch.org/whl/cu") in fix, fix
    top, fix = first(_comfy_start(False))  # only ComfyUI's frame: the environment's Python is not named
    assert ident(top) == "unsupported-op:cuda" and "--index-url https://download.pytorch.org/whl/cu" in fix, fix


def test_lazy_init_frame_with_its_error_line_leaves_it_to_that_errors_reader():
    log = (_comfy_start(True) + "    raise AssertionError(\"Torch not compiled with CUDA enabled\")\n"
           "AssertionError: Torch not compiled with CUDA enabled\n")
    top, _fix = first(log)
    assert "the paste stops inside" not in getattr(top, "title", "") and "the paste stops inside" not in \
        getattr(getattr(top, "entry", None), "title", ""), ident(top)


# --- GPU out of memory: ComfyUI's message-only report; while loading the weights --------------------------------------

_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 7.63 GiB "
        "of which 21.06 MiB is free. Process 4242 has 7.60 GiB memory in use.\n")


def test_oom_while_moving_weights_to_the_gpu_leads_with_quantized_loading():
    log = ("Traceback (most recent call last):\n"
           '  File "/home/ana/chat.py", line 9, in <module>\n    model = model.to("cuda")\n'
           '  File "/home/ana/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1340, in to\n'
           "    return self._apply(convert)\n"
           '  File "/home/ana/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 927, in _apply\n'
           "    param_applied = fn(param)\n" + _OOM)
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda"
    assert fix.startswith("It ran out while the model's weights") and "load_in_4bit" in fix and "GGUF" in fix, fix


def test_oom_during_compute_keeps_the_generic_reading():
    log = ("Traceback (most recent call last):\n"
           '  File "/home/ana/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1736, in _call_impl\n'
           "    return forward_call(*args, **kwargs)\n"
           '  File "/home/ana/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward\n'
           "    return F.linear(input, self.weight, self.bias)\n" + _OOM)
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda" and "weights were being put" not in fix, fix


def test_comfy_message_only_oom_report_gets_comfys_knobs():
    log = ("2025-03-02 10:11:12,345 - root - ERROR - !!! Exception during processing !!! Allocation on device \n"
           "2025-03-02 10:11:12,346 - root - ERROR - Traceback (most recent call last):\n"
           '  File "/srv/ComfyUI/execution.py", line 327, in execute\n'
           "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n")
    top, fix = first(log)
    assert ident(top) == "out-of-memory:cuda" and "--lowvram" in fix, fix


def test_comfy_model_loading_notices_stay_silent():
    healthy("Requested to load FluxClipModel_\nloaded completely 9.5 GB 4777.53 MB True\n"
            "Requested to load Flux\nloaded partially 5632.0 5631.99 0\n100%|##########| 20/20 [00:41<00:00,  2.07s/it]\n"
            "Prompt executed in 52.31 seconds\n")


# --- a driver for an old CUDA: the last torch wheel built for it ----------------------------------------------------

def _too_old(found: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/ana/run.py", line 3, in <module>\n    torch.zeros(1).cuda()\n'
            f"RuntimeError: The NVIDIA driver on your system is too old (found version {found}). Please update your "
            "GPU driver by downloading and installing a new version from the URL: "
            "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch "
            "version that has been compiled with your version of the CUDA driver.\n")


def test_driver_for_cuda_10_2_names_the_last_cu102_wheel():
    _top, fix = first(_too_old("10020"))
    assert "torch==1.12.1+cu102 torchvision==0.13.1+cu102" in fix and "preinstalled torch" in fix, fix


def test_driver_for_a_cuda_without_a_known_last_wheel_keeps_update_the_driver():
    _top, fix = first(_too_old("9000"))
    assert "+cu90" not in fix and "update the driver" in fix, fix


# --- the driver not loaded after an automatic update (entry FDE102's fix, tune-j2 sentence) ------------------------

def test_driver_not_loaded_names_unattended_upgrades_and_the_hold():
    _top, fix = first("$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                      "Make sure that the latest NVIDIA driver is installed and running.\n")
    assert "unattended-upgrades" in fix and "apt-mark hold" in fix and "Package-Blacklist" in fix, fix
