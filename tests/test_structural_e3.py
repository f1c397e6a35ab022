"""The structural layer's fifth round (issue 22, tune-e3): building CUDA/C++ extensions from source (nvcc's
host compiler check, GPU architectures nvcc/ptxas do not know, missing headers, the linker, CMake without nvcc).
Every line here is written for these tests in the shape the real tools print (crt/host_config.h, nvcc, ptxas,
GNU ld, lld, MSVC link, CMake's CMakeDetermineCUDACompiler.cmake), not copied from the corpus."""

from __future__ import annotations

import pytest

from _explain_items import first as first_item
from _explain_items import first_with_fix as first
from _explain_items import fix_text, healthy, ident


NINJA_TB = ("ninja: build stopped: subcommand failed.\nTraceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/cpp_extension.py", line 2104, in _run_ninja_build\n'
            "    subprocess.run(\n"
            "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
            "RuntimeError: Error compiling objects for extension\n")
GCC = ("/usr/local/cuda-12.1/bin/../targets/x86_64-linux/include/crt/host_config.h:143:2: error: #error -- unsupported "
       "GNU version! gcc versions later than 12 are not supported! The nvcc flag '-allow-unsupported-compiler' can be "
       "used to override this version check; however, using an unsupported host compiler may cause compilation "
       "failure or incorrect run time execution. Use at your own risk.\n")


def test_gcc_too_new_names_the_gcc_the_toolkit_takes_before_ninja():
    top, fix = first("FAILED: build/selective_scan.o\n" + GCC + "  143 | #error -- unsupported GNU version!\n" + NINJA_TB)
    assert ident(top) == "version-constraint:gcc"
    assert "sudo apt-get install -y gcc-12 g++-12" in fix and "CC=gcc-12 CXX=g++-12" in fix
    assert "gcc 13: CUDA 12.4" in fix and "-allow-unsupported-compiler" in fix and "risk" in fix


def test_gcc_sibling_versions_and_conda():
    line = GCC.replace("later than 12", "later than 9")
    top, fix = first("conda activate build\n(build) $ pip install apex\n" + line)
    assert ident(top) == "version-constraint:gcc" and "gcc-9 g++-9" in fix and "gcc 10: CUDA 11.1" in fix


def test_clang_too_new():
    line = ("/usr/local/cuda/include/crt/host_config.h:151:2: error: #error -- unsupported clang version! clang version "
            "must be less than 16 and greater than 3.2 . The nvcc flag '-allow-unsupported-compiler' can be used\n")
    top, fix = first(line)
    assert ident(top) == "version-constraint:clang" and "clang-15" in fix


def test_msvc_outside_the_range():
    line = ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\include\\crt/host_config.h(157): fatal error "
            "C1189: #error:  -- unsupported Microsoft Visual Studio version! Only the versions between 2017 and 2022 "
            "(inclusive) are supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this.\n")
    top, fix = first(line)
    assert ident(top) == "version-constraint:msvc"
    assert "Microsoft.VisualStudio.2022.BuildTools" in fix and "vcvarsall.bat x64" in fix


def test_ninja_entry_still_first_without_a_cause_above():
    top, _ = first("[1/2] c++ -c a.cpp\n" + NINJA_TB)
    assert ident(top) == "FDE406"


@pytest.mark.parametrize("sm,first_cuda", [("89", "11.8"), ("86", "11.1"), ("120", "12.8"), ("121", "12.9")])
def test_ptxas_value_not_defined_names_the_first_toolkit(sm, first_cuda):
    top, fix = first(f"ptxas fatal   : Value 'sm_{sm}' is not defined for option 'gpu-name'\n" + NINJA_TB)
    if sm in ("120", "121"):  # Triton's bundled ptxas reads the same; its entries keep those lines
        assert ident(top).startswith("FDE")
        return
    assert ident(top) == "version-constraint:nvcc" and f"CUDA {first_cuda} or newer" in fix
    assert f"/usr/local/cuda-{first_cuda}" in fix


def test_removed_arch_says_leave_it_out():
    text = ("/usr/local/cuda-12.4/bin/nvcc -gencode arch=compute_35,code=sm_35 -c k.cu\n"
            "nvcc fatal   : Unsupported gpu architecture 'compute_35'\n")
    top, fix = first(text)
    assert ident(top) == "version-constraint:nvcc"
    assert "TORCH_CUDA_ARCH_LIST" in fix and "CUDA 11.8 or older" in fix


@pytest.mark.parametrize("hdr,pkg", [("nvtx3/nvToolsExt.h", "cuda-nvtx-12-4"), ("thrust/complex.h", "cuda-cccl-12-4"),
                                     ("nvml.h", "cuda-nvml-dev-12-4"), ("cufile.h", "libcufile-dev-12-4")])
def test_cuda_header_names_the_component_package(hdr, pkg):
    text = (f"CUDA used to build PyTorch: 12.4\n/usr/local/cuda/bin/nvcc -c src/kernel.cu -o build/kernel.o\n"
            f"src/common.h:40:10: fatal error: {hdr}: No such file or directory\n")
    top, fix = first(text)
    assert ident(top) == f"shared-library:{hdr}" and f"sudo apt-get install -y {pkg}" in fix


def test_cuda_header_without_a_version_gives_the_conda_package():
    top, fix = first("csrc/ops.cu:3:10: fatal error: nvtx3/nvToolsExt.h: No such file or directory\n")
    assert "conda install -c nvidia cuda-nvtx-dev" in fix and "apt-get" not in fix


def test_submodule_header_says_fetch_submodules():
    text = "rasterizer_impl.cu:23:10: fatal error: glm/glm.hpp: No such file or directory\ncompilation terminated.\n"
    top, fix = first(text)
    assert ident(top) == "shared-library:glm/glm.hpp" and "git submodule update --init --recursive" in fix


def test_unknown_header_is_not_read_as_cuda():
    top = first_item("foo.c:1:10: fatal error: mylib/private.h: No such file or directory\n")
    assert ident(top) != "shared-library:mylib/private.h"


@pytest.mark.parametrize("line,lib", [("/usr/bin/ld: cannot find -lcudart: No such file or directory", "cudart"),
                                      ("ld.lld: error: unable to find library -lcublas", "cublas"),
                                      ("x86_64-conda-linux-gnu/bin/ld: cannot find -lcuda", "cuda")])
def test_linker_cannot_find_a_cuda_library(line, lib):
    top, fix = first(line + "\ncollect2: error: ld returned 1 exit status\n")
    assert ident(top) == f"shared-library:-l{lib}" and "LIBRARY_PATH" in fix
    assert ("lib64/stubs" in fix) == (lib == "cuda")


def test_msvc_link_cannot_open_cudart_lib():
    top, fix = first("LINK : fatal error LNK1181: cannot open input file 'cudart.lib'\n")
    assert ident(top) == "shared-library:-lcudart" and "%CUDA_PATH%" in fix


def test_relocation_needs_fpic():
    text = ("/usr/bin/ld: /opt/deps/lib/libz.a(deflate.o): relocation R_X86_64_32 against `.rodata.str1.1' can not be "
            "used when making a shared object; recompile with -fPIC\n/usr/bin/ld: final link failed: bad value\n")
    top, fix = first(text)
    assert ident(top) == "shared-library:-fPIC" and "CMAKE_POSITION_INDEPENDENT_CODE=ON" in fix


def test_cmake_without_nvcc_for_llama_cpp():
    text = ("  CMake Error at vendor/llama.cpp/ggml/src/ggml-cuda/CMakeLists.txt:4 (project):\n"
            "    No CMAKE_CUDA_COMPILER could be found.\n\n  -- Configuring incomplete, errors occurred!\n"
            "  ERROR: Failed building wheel for llama-cpp-python\n")
    top, fix = first(text)
    assert ident(top) == "pip-no-distribution:nvcc" and "CUDACXX=/usr/local/cuda/bin/nvcc" in fix
    assert "llama-cpp-python/whl/cu124" in fix


def test_cmake_default_architecture():
    text = ("CMake Error at /usr/share/cmake-3.27/Modules/CMakeDetermineCUDACompiler.cmake:277 (message):\n"
            "  Failed to detect a default CUDA architecture.\n\n  Compiler output:\n")
    top, fix = first(text)
    assert ident(top) == "version-constraint:nvcc" and "CMAKE_CUDA_ARCHITECTURES" in fix


def test_healthy_build_lines_stay_silent():
    healthy("-- The CUDA compiler identification is NVIDIA 12.4.131\n"
            "-- Detecting CUDA compiler ABI info - done\n"
            "-- Check for working CUDA compiler: /usr/local/cuda/bin/nvcc - skipped\n"
            "[12/40] /usr/local/cuda/bin/nvcc -ccbin g++-12 -gencode arch=compute_89,code=sm_89 -c a.cu\n"
            "nvcc warning : The -std=c++17 flag is not supported with the configured host compiler.\n"
            "warning: relocation in read-only section `.text'; recompile with -fPIC may help\n"
            "Successfully built mamba-ssm causal-conv1d\n")
