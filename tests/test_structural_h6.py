"""The structural readers of tune-h6 (issue 22, cycle 3): serving runtimes, containers and drivers. Lines are
written here in the shape the real code prints them (llama.cpp src/llama-model.cpp / llama-vocab.cpp,
llama-cpp-python llama_cpp/_internals.py, ...), not copied from the corpus; each class has a sibling and a healthy
neighbour."""

from __future__ import annotations

from _explain_items import first_with_fix as first
from _explain_items import frames
from _explain_items import healthy, ident

# --- a GGUF newer than the llama.cpp that loads it ------------------------------------------------------------------

_LOADER = ("llama_model_loader: - kv   0:                       general.architecture str              = {arch}\n"
           "llama_model_load: error loading model: error loading model architecture: unknown model architecture: "
           "'{arch}'\nllama_model_load_from_file_impl: failed to load model\n"
           "common_init_from_params: failed to load model 'model-Q4_K_M.gguf'\nmain: error: unable to load model\n")


def test_gguf_unknown_architecture_asks_for_a_newer_llama_cpp():
    top, fix = first(_LOADER.format(arch="olmo2"))
    assert ident(top) == "version-constraint:llama.cpp"
    assert "newer llama.cpp" in fix and "'olmo2'" in fix, fix
    assert "pull the latest image" in fix and "recipes --install llamacpp" in fix, fix


def test_gguf_sibling_pre_tokenizer_in_llama_cpp_python_gives_its_pip_command():
    log = ("llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer type: "
           "'deepseek-r1-qwen'\nllama_load_model_from_file: failed to load model\n"
           + frames(("/home/u/venv/lib/python3.11/site-packages/llama_cpp/llama.py", "_LlamaModel("),
                    ("/home/u/venv/lib/python3.11/site-packages/llama_cpp/_internals.py", "raise ValueError(...)"))
           + "ValueError: Failed to load model from file: DeepSeek-R1-Distill-Qwen-7B-Q4_K_M.gguf\n")
    top, fix = first(log)
    assert ident(top) == "version-constraint:llama-cpp-python"
    assert "pre-tokenizer 'deepseek-r1-qwen'" in fix or "'deepseek-r1-qwen'" in fix, fix
    assert "pip install --upgrade --force-reinstall --no-cache-dir llama-cpp-python" in fix, fix


def test_gguf_healthy_loader_lines_stay_silent():
    healthy("llama_model_loader: - kv   0:                       general.architecture str              = gemma3\n"
            "print_info: arch             = gemma3\nprint_info: file format = GGUF V3 (latest)\n"
            "load_tensors: offloaded 49/49 layers to GPU\nmain: server is listening on http://127.0.0.1:8080\n")
