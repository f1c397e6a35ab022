"""The structural readers of tuner k2 (issue 22, round 13 train). Lines are written here in the shape the real code
prints them (Kitware CMake's CMakeDetermineCompilerId.cmake and cmGlobalVisualStudio10Generator.cxx, MSBuild's MSB4019;
mamba/libmamba's solver problems; transformers' tokenization_utils_base.py get_chat_template and processing_utils.py,
vLLM's chat_utils.py), not copied from the corpus; each class has siblings and a healthy neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames, healthy, ident

# --- CUDA's Visual Studio (MSBuild) integration ----------------------------------------------------------------------

_CMAKE = ("-- The CXX compiler identification is MSVC 19.39.33523.0\n"
          "-- Found CUDAToolkit: C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4/include (found version "
          "\"12.4.131\")\n"
          "CMake Error at C:/Program Files/CMake/share/cmake-3.28/Modules/CMakeDetermineCompilerId.cmake:529 (message):\n"
          "  No CUDA toolset found.\n"
          "Call Stack (most recent call first):\n"
          "  C:/Program Files/CMake/share/cmake-3.28/Modules/CMakeDetermineCUDACompiler.cmake:135 "
          "(CMAKE_DETERMINE_COMPILER_ID)\n"
          "  ggml/src/ggml-cuda/CMakeLists.txt:25 (enable_language)\n"
          "-- Configuring incomplete, errors occurred!\n")


def test_no_cuda_toolset_says_copy_msbuildextensions_into_buildcustomizations():
    top, fix = first(_CMAKE)
    assert ident(top) == "shared-library:CUDA X.Y.props", ident(top)
    assert "MSBuildExtensions" in fix and "BuildCustomizations" in fix and "Visual Studio Integration" in fix, fix
    assert "v170" in fix and "CMakeCache.txt" in fix


def test_msbuild_missing_cuda_props_names_its_cuda_version():
    log = ('C:\\src\\kernels\\kernels.vcxproj(38,5): error MSB4019: The imported project "C:\\Program Files\\Microsoft '
           'Visual Studio\\2022\\BuildTools\\MSBuild\\Microsoft\\VC\\v170\\BuildCustomizations\\CUDA 12.1.props" was not '
           'found. Confirm that the expression in the Import declaration "$(VCTargetsPath)\\BuildCustomizations\\CUDA '
           '12.1.props" is correct, and that the file exists on disk.\n')
    top, fix = first(log)
    assert ident(top) == "shared-library:CUDA 12.1.props", ident(top)
    assert "CUDA\\v12.1\\extras\\visual_studio_integration\\MSBuildExtensions" in fix, fix
    assert "visual_studio_integration_12.1" in fix


def test_custom_cuda_toolset_without_integration_files():
    log = ("CMake Error at CMakeLists.txt:3 (project):\n  Generator\n\n    Visual Studio 17 2022\n\n  given toolset\n\n"
           "    cuda=D:/CUDA/v12.6\n\n  cannot detect Visual Studio integration files in path\n\n"
           "    D:/CUDA/v12.6/extras/visual_studio_integration/MSBuildExtensions\n")
    top, fix = first(log)
    assert top.kind == "shared-library" and "BuildCustomizations" in fix


def test_cuda_toolset_words_in_a_status_line_stay_silent():
    healthy("-- Found CUDAToolkit: C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4/include (found version "
            "\"12.4.131\")\n-- The CUDA compiler identification is NVIDIA 12.4.131\n"
            "-- Check for working CUDA compiler: nvcc.exe - skipped\n-- Configuring done (4.2s)\n")


# --- conda's virtual packages ----------------------------------------------------------------------------------------

def test_nothing_provides_cuda_says_conda_override_cuda_with_the_build_cuda():
    log = ("Could not solve for environment specs\nEncountered problems while solving:\n"
           "  - nothing provides __cuda needed by pytorch-2.1.2-cuda118py311h7e1b8a9_300\n\n"
           "The environment can't be solved, aborting the operation\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:__cuda"
    assert "CONDA_OVERRIDE_CUDA=11.8" in fix and "ENV CONDA_OVERRIDE_CUDA" in fix, fix


def test_libmamba2_missing_on_the_system():
    log = ("error    libmamba Could not solve for environment specs\n"
           "    The following package could not be installed\n"
           "    └─ pytorch-gpu >=2.3 is not installable because it requires\n"
           "       └─ pytorch [2.3.0|2.3.1], which requires\n"
           "          └─ __cuda >=12, which is missing on the system.\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:__cuda" and "CONDA_OVERRIDE_CUDA=12.0" in fix, fix


def test_constraint_above_the_driver_says_update_the_driver_with_its_version():
    log = ("Encountered problems while solving:\n"
           "  - package cudatoolkit-11.8.0-h4ba93d1_12 has constraint __cuda >=11 conflicting with __cuda-10.1-0\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:__cuda"
    assert "Update the NVIDIA driver" in fix and "cudatoolkit=10.1" in fix and "450.80.02" not in fix, fix
    assert "410" not in fix and "CUDA 11.0 needs driver" in fix, fix


def test_glibc_sibling_names_its_override():
    log = ("Encountered problems while solving:\n"
           "  - package libgcc-ng-13.2.0-h77fa898_7 has constraint __glibc >=2.17 conflicting with __glibc-2.12-0\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:__glibc" and "CONDA_OVERRIDE_GLIBC" in fix and "2.12" in fix, fix


def test_virtual_package_listing_stays_silent():
    healthy("$ conda info\n     active environment : base\n       virtual packages : __archspec=1=x86_64\n"
            "                          __cuda=12.4=0\n                          __glibc=2.35=0\n"
            "                          __linux=5.15.0=0\n                          __unix=0=0\n")


# --- chat templates --------------------------------------------------------------------------------------------------

_TOK = ("ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template "
        "argument was passed! For information about writing templates and setting the tokenizer.chat_template "
        "attribute, please see the documentation at https://huggingface.co/docs/transformers/main/en/chat_templating")
_TF = "/opt/venv/lib/python3.11/site-packages/transformers/tokenization_utils_base.py"


def test_script_on_a_base_tokenizer_says_instruct_or_chat_template():
    log = frames(("/home/kim/sft.py", "text = tok.apply_chat_template(msgs, tokenize=False)"),
                 (_TF, "chat_template = self.get_chat_template(chat_template, tools)")) + _TOK + "\n"
    top, fix = first(log)
    assert ident(top) == "unsupported-op:chat_template"
    assert "Instruct" in fix and "tokenizer.chat_template =" in fix and "chat_template=" in fix, fix


def test_vllm_server_says_chat_template_flag():
    log = frames(("/opt/venv/lib/python3.11/site-packages/vllm/entrypoints/openai/serving_chat.py", "request_prompts = "
                  "await self._preprocess_chat(...)"),
                 ("/opt/venv/lib/python3.11/site-packages/vllm/entrypoints/chat_utils.py", "raise ValueError(")) + (
        "ValueError: As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat "
        "template if the tokenizer does not define one.\n")
    _top, fix = first(log)
    assert fix.startswith("Serve the instruct") and "--chat-template" in fix and "/v1/completions" in fix, fix


def test_processor_sibling_and_old_wording():
    _top, fix = first("ValueError: No chat template is set for this processor. Please either set the `chat_template` "
                      "attribute, or provide a chat template as an argument.\n")
    assert "processor.chat_template =" in fix, fix
    top, _fix = first("ValueError: Cannot use apply_chat_template() because tokenizer.chat_template is not set and no "
                      "template argument was passed!\n")
    assert ident(top) == "unsupported-op:chat_template"


def test_eval_harness_class_named():
    log = frames(("/work/opencompass/opencompass/models/huggingface_above_v4_33.py", "messages = [self.tokenizer."
                  "apply_chat_template(m, add_generation_prompt=True, tokenize=False) for m in messages]"),
                 (_TF, "chat_template = self.get_chat_template(chat_template, tools)")) + _TOK + "\n"
    _top, fix = first(log)
    assert "HuggingFaceBaseModel" in fix, fix


def test_chat_template_notice_stays_silent():
    healthy("INFO 05-02 10:11:12 serving_chat.py:77] Using supplied chat template:\n"
            "INFO 05-02 10:11:12 serving_chat.py:78] {% for message in messages %}...\n"
            "tokenizer_config.json: 100%|██████████| 50.5k/50.5k [00:00<00:00, 3.1MB/s]\n")
