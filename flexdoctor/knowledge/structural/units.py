"""The patterns of the structural layer, as units the explain engine searches with the knowledge base.

Two layers: ``shape`` patterns find an error by its form (a library that does not load, an undefined
symbol, a CUDA error, ...); ``context`` patterns read what the log says about itself (torch, CUDA and
Python versions, the platform, conda, traceback frames, exception lines). Both go through the same
trigger scan as the fingerprint entries: every pattern has a required literal (tests hold them to it),
so a healthy line still costs one C-level scan. Every pattern is linear on any line (bounded repeats,
no leading runs: tests/test_explain_linear.py); names longer than a bound are read in Python from the
matched line, never by a regex that would start at every position.
"""

from __future__ import annotations

import functools

from .. import Entry

_NAME = r"[\w+.-]{1,120}"
# tune-h4: "E " + spaces is pytest's prefix of the failure's lines ("E       RuntimeError: ...").
_EXC = (r"^\s*(?:E {1,12})?(?:> ?|`{1,3}|\*\*)?(?:\[rank\d{1,5}\]:\s*)?(?:[A-Za-z_]\w{0,60}\.){0,8}"  # a Markdown quote/code/bold
        r"(?P<exc>[A-Za-z_]\w{0,80}?(?:Error|Exception|Failed|Failure)|Exception)"  # raise Exception("..."): bare
        r"(?:\*\*)?(?:: ?(?P<msg>[^\n]{0,2000}))?$")

_TORCH_V = r"\d{1,2}\.\d{1,3}(?:\.\d{1,3})?(?:\+(?:cu\d{2,3}|cpu|rocm\d{1,2}(?:\.\d{1,2}){0,2}|xpu))?"

# (id, layer, patterns)
UNITS = (
    # --- shapes -------------------------------------------------------------------------------------
    ("so-missing", "shape", (
        r"\.so(?:\.\d{1,4}){0,4}: cannot open shared object file",
        r"error while loading shared libraries: (?P<lib>" + _NAME + r")",
        r"Could not load library (?P<lib>" + _NAME + r")",
        r"Could not locate (?P<lib>[\w+.-]{1,120}\.dll)",
        r"Library (?P<lib>" + _NAME + r") is not found or cannot be loaded",
        r"Unable to load any of \{(?P<lib>[\w+.-]{1,120})",
        r"Error loading \"(?P<path>[^\"\n]{1,500})\" or one of its dependencies",
        r"Library not loaded: (?P<path>[@\w/.+-]{1,500})",
        r"DLL load failed while importing (?P<mod>\w{1,120})",
        r"lib(?P<stem>\w{1,80})\.so(?:\.\d{1,4}){0,4} (?:not found|No such file)",
        # vLLM's pynccl / cupy: "Failed to load NCCL library from libnccl.so.2"
        r"Failed to load (?:NCCL|CUDA|cuDNN|cuBLAS) library from (?P<lib>" + _NAME + r")",
        # the same with a path ("... from /usr/lib/x86_64-linux-gnu/libnccl.so.2 .", VLLM_NCCL_SO_PATH)
        r"Failed to load (?:NCCL|CUDA|cuDNN|cuBLAS) library from (?P<path>/[\w/.+-]{1,500})",
    )),
    ("symbol", "shape", (
        r"undefined symbol: (?P<sym>[\w.$@]{1,4000})",
        r"[Ss]ymbol not found: (?P<sym>[\w.$@]{1,4000})",
        r"version `(?P<ver>(?:GLIBCXX|GLIBC|CXXABI|GCC)_[\d.]{1,20})' not found",
        r"undefined reference to `(?P<sym>[^'`\n]{1,4000})'",
        r"procedure entry point (?P<sym2>[\w@?$]{1,300}) could not be located",
    )),
    ("module", "shape", (
        r"No module named '(?P<mod>[\w.]{1,200})'",
        r"cannot import name '(?P<name>\w{1,200})' from '(?P<mod>[\w.]{1,200})'",
        r" is not installed\. Please install it",
        r"(?P<tool>Ninja) is required to load C\+\+ extensions",
        r"module '(?P<mod>[\w.]{1,200})' has no attribute '(?P<name>\w{1,200})'",
    )),
    ("version", "shape", (
        r"requires (?P<pkg>[A-Za-z][\w.-]{0,80})(?P<spec>(?:[<>=!~]=?[\w.*+-]{1,40},?){1,4}), but you have "
        r"(?P<have_pkg>[\w.-]{1,80}) (?P<have>[\w.+-]{1,40}) which is incompatible",
        r"built (?:for|with|against) (?P<what>[A-Za-z][\w-]{0,40}) ?(?P<built>\d{1,3}\.\d{1,3}(?:\.\d{1,3})?)"
        r"[^\n]{0,120}?(?:you have|but (?:found|got|the current|your)|installed(?: version)? is) (?P<have>\d{1,3}\.\d{1,3}(?:\.\d{1,3})?)",
        r"requires (?P<pkg2>torch|PyTorch|transformers|diffusers|accelerate|triton|xformers|numpy|python|Python) ?"
        r"(?P<op>>=|==|~=|>|<=|<) ?(?P<ver>\d{1,3}(?:\.\d{1,4}){0,3})",
        # transformers' requires_backends / import checks quote the requirement in backticks, for any
        # package: "Using the `Trainer` with `PyTorch` requires `accelerate>=0.20.1`", "Using
        # `bitsandbytes` 4-bit quantization requires `bitsandbytes>=0.43.1`" (transformers/utils/import_utils.py,
        # quantizers/quantizer_bnb_4bit.py); the backticks make the name safe to take from any package.
        r"requires `(?P<pkg2>[A-Za-z][\w.-]{0,60})(?P<op>>=|==|~=)(?P<ver>\d{1,3}(?:\.\d{1,4}){0,3})`",
    )),
    ("pip", "shape", (
        r"No matching distribution found for (?P<req>[^\s]{1,200})",
        r"Could not find a version that satisfies the requirement (?P<req>[^\s]{1,200})",
        r"requires a different Python: (?P<py>[\d.]{1,20}) not in '(?P<spec>[^'\n]{1,100})'",
        r"\.whl is not a supported wheel on this platform",
        r"Failed (?:building wheel for|to build) (?P<build>[A-Za-z0-9][\w.-]{0,100})",
        r"Microsoft Visual C\+\+ 14\.0 or greater is required",
    )),
    ("cuda", "shape", (
        r"CUDA error: (?P<text>[^\n]{1,200})",
        # a kernel library's own check with its source file: "CUDA error (/src/flash-attention/hopper/
        # flash_fwd_launch_template.h:198): an illegal memory access was encountered" (flash-attn's CHECK_CUDA)
        r"CUDA error \((?P<src>[^)\n]{1,300})\): (?P<text2>[^\n]{1,200})",
        r"(?P<name>cudaError[A-Z]\w{1,60})",
        r"(?P<dname>CUDA_ERROR_[A-Z_]{2,60})",
        r"CUDA (?:driver )?error (?P<code>\d{1,4})\b",
        r"(?:Triton Error \[CUDA\]|CUDA driver error|CUDA Error|CUDA call failed[^\n]{0,80}?): (?P<text2>[^\n]{1,200})",
        r"(?P<lib_status>CUBLAS_STATUS_[A-Z_]{2,40}|CUDNN_STATUS_[A-Z_]{2,40})",
        # torch < 1.5 (THC): "cuda runtime error (35) : CUDA driver version is insufficient ..."
        # (tune-f1: its message too; THC's codes are CUDA <= 10.0's numbering, renumbered in 10.1: 6 was LaunchTimeout)
        r"cuda runtime error \((?P<code>\d{1,4})\) ?:(?: (?P<thc>[^\n:]{1,200}))?",
        # c10/cuda/CUDAFunctions.cpp: "Unexpected error from cudaGetDeviceCount(). ... Error 802: ..."
        r"cudaGetDeviceCount\(\)[^\n]{0,200}? Error (?P<code>\d{1,4}): ",
        # torch's "CUDA initialization: CUDA unknown error - ..." (is_available() is False after it)
        r"CUDA initialization: (?:CUDA )?(?P<text3>[^\n]{1,200})",
    )),
    ("nccl", "shape", (
        r"(?P<name>nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|InProgress))",
        r"NCCL error in: [^\n]{0,300}?, (?P<text>unhandled system error|unhandled cuda error|internal error|invalid argument"
        r"|invalid usage|remote process exited or there was a network error)",
        # NCCL init.cc: two ranks of one communicator on one GPU -> WARN, then ncclInvalidUsage (always fatal)
        r"(?P<dup>Duplicate GPU detected) : rank \d{1,6} and rank \d{1,6} both on CUDA device",
        r"NCCL WARN (?P<warn>[^\n]{1,300})",
    )),
    ("winerror", "shape", (
        r"\[WinError (?P<code>\d{1,5})\]",
        r"Error code (?P<num>\d{1,5})\b", r"\(?0x(?P<num>C0000[0-9A-Fa-f]{3})\b",
        # Rust's std::io::Error (safetensors, tokenizers): "<system message> (os error 1455)"; on Linux the
        # number is an errno, so the reader takes it only on Windows or above every errno (errors.windows)
        r"\(os error (?P<oscode>\d{1,5})\)",
        # the system message without its number: "DLL load failed while importing X: The paging file is
        # too small for this operation to complete." (the loader's FormatMessage text, winerror.toml)
        r"DLL load failed while importing \w{1,120}: (?P<wintext>[^\n]{1,200})",
        r"(?P<wintext>The paging file is too small for this operation)",
    )),
    ("triton-res", "shape", (
        r"out of resource: (?P<res>[a-z][\w ]{0,40}?), Required: (?P<req>\d{1,12}), Hardware limit: (?P<lim>\d{1,12})",
        r"OutOfResources: out of resource: (?P<res2>[a-z][\w ]{0,40}?)(?:,|$)",
    )),
    ("oom", "shape", (
        r"(?P<dev>CUDA|HIP|XPU|MPS backend) out of memory",
        r"DefaultCPUAllocator: (?:not enough memory|can't allocate memory)",
        r"OutOfMemoryError: (?P<dev2>CUDA|HIP|XPU)?",
        r"exitcode\s{0,8}: -9\b", r"Signal 9 \(SIGKILL\) received", r"^Killed$",  # one literal-led pattern each
        # torch-directml's allocator (ComfyUI --directml, AMD/Intel GPUs on Windows)
        r"Could not allocate tensor with \d{1,20} bytes\. There is not enough (?P<dml>GPU video memory)",
    )),
    ("unsupported", "shape", (
        r"not (?:currently )?implemented for (?:the )?'?(?P<backend>MPS|mps|XPU|HIP|ROCm|CPU|CUDA)'? (?:device|backend)",
        r"\"(?P<op>\w{1,120})\" not implemented for '(?P<dtype>\w{1,40})'",
        r" is not supported on (?P<backend2>MPS|ROCm|HIP|XPU|CPU)\b",
        r"Could not run '(?P<op2>[\w:.]{1,120})' with arguments from the '(?P<backend3>\w{1,40})' backend",
        r"Distributed package doesn't have (?P<nccl>NCCL) built in",
    )),
    # Shared memory: DataLoader workers hand batches over in /dev/shm (torch/csrc/CudaIPCTypes, ATen
    # MapAllocator.cpp: "unable to write to file </torch_...>", "unable to open shared memory object",
    # "unable to mmap N bytes from file"), torch/utils/data/_utils/signal_handling.py ("DataLoader worker
    # (pid N) is killed by signal: Bus error"), csrc/DataLoader.cpp ("Unexpected bus error encountered in
    # worker ... insufficient shared memory (shm)"); NCCL's shm transport ("Error while creating shared
    # memory segment /dev/shm/nccl-..."). Docker gives a container 64 MB of /dev/shm by default.
    ("shm", "shape", (
        r"is killed by signal: (?P<sig>Bus error|Killed|Segmentation fault|Aborted|Terminated)",
        r"insufficient shared memory \(shm\)",
        r"unable to (?:write to file|open shared memory object|mmap \d{1,20} bytes from file) </torch_",
        r"creating shared memory segment (?P<seg>/dev/shm/)",
        r"/dev/shm[^\n]{0,200}?No space left on device",
    )),
    # Rendezvous of torch.distributed (c10d TCPStore, torch/csrc/distributed/c10d/socket.cpp: "The server
    # socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)", "The client socket
    # has failed to connect to host:port (errno: 110 - Connection timed out)", libuv's "port: 29500, ...
    # name: EADDRINUSE"), older c10d ("connect() timed out"), torchrun's elastic rendezvous errors.
    ("rdzv", "shape", (
        r"server socket has failed to (?:bind to|listen on)",
        r"name: EADDRINUSE",
        r"client socket has failed to connect to",
        r"connect\(\) timed out\. Original timeout was",
        r"(?P<rdzv>RendezvousConnectionError|RendezvousTimeoutError)",
    )),
    # Slurm (src/common/slurm_errno.c texts after "sbatch: error: Batch job submission failed: " or
    # "srun: error: Unable to allocate resources: "; site job_submit plugins' own "sbatch: error:" lines;
    # slurmstepd's cgroup OOM and cancel notices). Consequences ("task 3: Exited with exit code 1") are
    # read by the reader and answer nothing: the cause is another line.
    ("slurm", "shape", (
        r"(?P<tool>sbatch|srun|salloc): error: (?P<msg>[^\n]{1,300})",
        r"slurmstepd: error: [^\n]{0,120}?(?P<oomkill>oom-kill event|out-of-memory handler)",
        r"slurmstepd: error: \*\*\* (?:JOB|STEP) [\d.]{1,20} ON \S{1,100} CANCELLED AT \S{1,40} DUE TO (?P<cancel>TIME LIMIT)",
    )),
    # ATen's device-side asserts: "Indexing.cu:1231: indexSelectSmallIndex: block: [31,0,0], thread: [116,0,0]
    # Assertion `srcIndex < srcSelectDimSize` failed." (the condition names what was out of range).
    ("cuda-assert", "shape", (
        r"\.cuh?:\d{1,6}: [^\n]{0,300}?Assertion `(?P<cond>[^`\n]{1,300})` failed",
    )),
    # Two copies of one CUDA library: the copy the loader found is not the one the caller was built
    # against. glibc's versioned-symbol errors ("undefined symbol: cublasLtGetStatusString, version
    # libcublasLt.so.11"; "symbol free_gemm_select version libcublasLt.so.11 not defined in file
    # libcublasLt.so.11 with link time reference") and a CUDA library's own symbol missing from an older
    # copy ("libtorch_cuda.so: undefined symbol: ncclCommRegister": NCCL older than 2.19).
    ("so-mismatch", "shape", (
        r"undefined symbol: (?P<sym>\w{1,200}), version (?P<lib>lib[\w+.-]{1,100})",
        r"symbol (?P<sym>\w{1,200}) version (?P<lib>lib[\w+.-]{1,100}) not defined in file (?P<file>lib[\w+.-]{1,100})",
        r"undefined symbol: (?P<sym>(?:nccl|cublas|cudnn|cusparse|cufft|curand|cusolver|nvJitLink|__nvJitLink)[A-Z_]\w{0,200})",
    )),
    # A package's compiled core is missing: "No module named 'torch._C'" (also torchvision._C, mmcv._ext,
    # pytorch3d._C): a source checkout or an unzipped wheel shadows the installed package, or the install is broken.
    ("compiled-missing", "shape", (
        r"No module named '(?P<mod>[\w.]{1,200}\.(?:_C|_ext))'",
    )),
    # A CUDA extension built where there is no CUDA: flash-attn's setup.py ("flash_attn was requested, but
    # nvcc was not found"), torch.utils.cpp_extension ("CUDA_HOME environment variable is not set"). On
    # macOS no CUDA exists at all: the package cannot be installed there (errors.cuda_build).
    ("cuda-build", "shape", (
        r" was requested, but nvcc was not found",  # the name before it: readers.word_before
        r"CUDA_HOME environment variable is not set",
    )),
    # A ROCm kernel library that does not know this GPU's gfx target: aiter's chip table ("KeyError:
    # 'gfx1151'"), Composable Kernel's static asserts ("1 error generated when compiling for gfx1100."),
    # flash-attn's ROCm setup.py allow-list ("One of GPU archs of ['gfx908'] is invalid or not supported").
    ("rocm-arch", "shape", (
        r"KeyError: '(?P<gfx>gfx[0-9a-f]{3,5})'",
        r"errors? generated when compiling for (?P<gfx>gfx[0-9a-f]{3,5})",
        r"GPU archs? of \[[^\]\n]{0,100}?'(?P<gfx>gfx[0-9a-f]{3,5})'[^\n]{0,80}?not supported",
    )),
    # --- context --------------------------------------------------------------------------------------
    # torch's version as logs state it: collect_env and `transformers-cli env` ("PyTorch version: 2.5.1"),
    # ComfyUI ("pytorch version: 2.5.1+cu124"), pip freeze ("torch==2.5.1"), wheel and dist-info names
    # ("torch-2.5.1+cu124-cp311-..."), xformers' "(you have 2.1.0+cu121)". A bare "torch" is no trigger:
    # it is on every traceback frame of a healthy log's warnings.
    ("ctx-torch", "context", (
        # one literal-led pattern per spelling (PyTorch, pytorch, Torch, ...), the longest first: a match
        # starts at the word's start, which Collector.observe checks ("mytorch version" is not torch)
        *(lead + r" [Vv]ersion(?: \(GPU\?\))?:? {0,4}v?(?P<torch>" + _TORCH_V + r")(?![\w.])"
          for lead in ("PyTorch", "Pytorch", "pyTorch", "pytorch", "Torch", "torch")),
        r"torch==(?P<torch>" + _TORCH_V + r")(?![\w])",
        r"torch-(?P<torch>" + _TORCH_V + r")(?![\w])",
    )),
    ("ctx-cuda", "context", (
        r"CUDA used to build PyTorch: (?P<cuda>\d{1,2}\.\d)",
        r"(?P<cutag>\+cu(?:11|12|13)\d)\b",
        r"[\\/]nvidia[\\/]cu(?P<cudir>1[23])[\\/]lib",
        r"CUDA Version: (?P<driver_cuda>\d{1,2}\.\d)",
        r"[Cc]uda compilation tools, release (?P<nvcc>\d{1,2}\.\d)",
    )),
    ("ctx-python", "context", (
        r"Python(?: [Vv]ersion)?:? (?P<py>3\.\d{1,2})\.\d{1,3}\b",
    )),
    # WSL's own kernel and driver folder, and a Windows user folder mounted by WSL's drvfs (/mnt/c/Users/...)
    ("ctx-wsl", "context", (r"microsoft-standard-WSL", r"/usr/lib/wsl/", r"\bWSL2?\b", r"/mnt/[c-z]/Users/")),
    ("ctx-rocm", "context", (r"\+rocm\d", r"ROCm", r"HIP error", r"amdgpu")),
    ("ctx-platform", "context", (r"win_amd64|python_embeded|\bWinError\b",
                                 r"macosx_1\d|[Dd]arwin|/opt/homebrew/|/private/var/folders/")),
    ("ctx-frame", "context", (r"File \"(?P<path>[^\"\n]{1,500})\", line \d{1,7}",)),
    ("ctx-traceback", "context", (r"Traceback \(most recent call last\)",)),
    # A launcher reporting that a worker failed (srun, torchrun/elastic, deepspeed, accelerate): the
    # cause is in a rank's lines, possibly before another rank's later progress.
    ("ctx-launcher", "context", (
        r"srun: error: [^\n]{0,200}?Exited with exit code [1-9]",
        r"ChildFailedError",
        r"exits with return code = -?[1-9]",
        r"failed \(exitcode: -?[1-9]",
    )),
    ("ctx-exception", "context", (_EXC,)),
    ("ctx-what", "context", (r"what\(\): {0,4}(?P<msg>[^\n]{1,2000})",)),
    ("ctx-error", "context", (
        r"^(?:[^\s:]{1,300}:\d{1,7}(?::\d{1,5})?: )?(?:fatal )?error(?: [A-Z]{1,4}\d{1,5})?: (?P<msg>[^\n]{1,1000})$",
        r"^\s*ERROR: (?P<msg2>[^\n]{1,1000})$",
    )),

    # --- tune-b
    ("ext-op", "shape", (
        r"operator (?P<ns>\w{1,60})::(?P<op>\w{1,120}) does not exist",
        r"No such operator (?P<ns>\w{1,60})::(?P<op>\w{1,120})",
    )),
    ("module-b", "shape", (
        # transformers' check_imports (dynamic_module_utils.py) for remote modeling code
        r"requires the following packages that were not found in your environment: (?P<mod>[\w.]{1,200})",
    )),
    # --- tune-b2
    # A compiled module built against another NumPy C ABI (numpy/_core/include/numpy/_multiarray_api.h
    # and numpy/core/code_generators' import_array messages; Cython's size check in the module init).
    ("numpy-abi", "shape", (
        r"compiled using NumPy (?P<built>1)\.x cannot be run in",
        r"(?P<arrapi>_ARRAY_API not found)",
        r"module compiled against (?P<what>API|ABI) version (?P<mod>0x[0-9a-fA-F]{1,10}) but this version of numpy is "
        r"(?P<np>0x[0-9a-fA-F]{1,10})",
        r"numpy\.(?P<obj>dtype|ufunc|ndarray|flatiter) size changed, may indicate binary incompatibility\. "
        r"Expected (?P<exp>\d{1,5}) from C header, got (?P<got>\d{1,5}) from PyObject",
        r"numpy\.core\.(?P<failed>multiarray|_multiarray_umath|umath) failed to import",
        r"(?P<removed>was removed in the NumPy 2\.0 release)",
    )),
    # torch.compile refusing this Python: torch/_dynamo/eval_frame.py check_if_dynamo_supported (2.0: "Python
    # 3.11+ not yet supported for torch.compile"), torch/__init__.py compile() (2.1-2.3: "Dynamo is not
    # supported on Python 3.12+"; 2.4-2.9: "torch.compile is not supported on Python 3.N+").
    ("dynamo-py", "shape", (
        r"(?:Dynamo|torch\.compile) is not (?:yet )?supported on Python (?P<py>3\.\d{1,2})\+",
        r"Python (?P<py>3\.\d{1,2})\+ (?:is )?not yet supported for torch\.compile",
    )),
    # An error whose own words state the requirement or the install command (transformers' import_utils
    # and require_version, accelerate's state checks, diffusers/peft/trl dependency checks).
    ("advice", "shape", (
        r"requires `(?P<pkg>[A-Za-z][\w.-]{0,60}) ?(?P<op>>=|==|~=|>)(?P<ver>\d{1,4}(?:\.\d{1,4}){0,3})`",
        r"requires the latest version of (?P<latest>[A-Za-z][\w.-]{0,60})",
        r" is required for a normal functioning of this module, but found (?P<found>[A-Za-z][\w.-]{0,60})==",
        r"is not available => install it using `pip3? install (?P<dist>[A-Za-z][\w.-]{0,60})`",
        *(lead + r":? `pip3? install (?P<args>[^`\n]{1,200})`"  # one literal-led pattern per lead-in
          for lead in ("You can install it with pip", "Please install it with", "please install it with", "Please run",
                       "please run", "Install it with", "install it with", "Install it using", "install it using")),
    )),
    # --- tune-b3
    # No C/C++ compiler: torch/_inductor/cpp_builder.py check_compiler_exist_windows ("Compiler: cl is not
    # found."), torch/_inductor/exc.py InvalidCxxCompiler ("No working C++ compiler found"), setuptools'
    # _distutils/_msvccompiler.py ("Microsoft Visual C++ 14.0 or greater is required"), distutils spawn
    # ("error: command 'gcc' failed: No such file or directory").
    ("compiler", "shape", (
        r"Compiler: (?P<cc>[\w.+-]{1,40}|\{compiler\}) is not found",
        r"(?P<msvc>Microsoft Visual C\+\+ \d{1,2}\.\d{1,2}) (?:or greater )?is required",
        r"No working C\+\+ compiler found",
        r"error: command '(?P<cc>cl\.exe|cl|gcc|g\+\+|cc|c\+\+|clang\+\+|clang|x86_64-linux-gnu-gcc"
        r"|x86_64-linux-gnu-g\+\+|aarch64-linux-gnu-gcc)' failed: No such file or directory",
    )),
    # A CUDA extension built without nvcc, read on every platform but macOS (errors.cuda_build answers there).
    ("nvcc", "shape", (
        r" was requested, but nvcc was not found",  # the name before it: readers.word_before
        r"CUDA_HOME environment variable is not set",
    )),
    # pip's summary of a failed source build, for CUDA extensions (modules.toml rules needs-torch, linux-cuda, torch-pair):
    # the compiler's own error, when the log has it, is read by the shapes above and ranks first.
    ("build-failed", "shape", (
        r"Running setup\.py install for (?P<dist>[A-Za-z][\w.-]{0,60}) \.\.\. error",
        r"Building wheel for (?P<dist>[A-Za-z][\w.-]{0,60}) \((?:setup\.py|pyproject\.toml)\) \.\.\. error",
        r"Failed building wheel for (?P<dist>[A-Za-z][\w.-]{0,60})",
        r"Failed to build (?P<dist>[A-Za-z][\w.-]{0,60})$",
    )),
    # ptxas older than the PTX it is given (Triton with a system ptxas, a JIT toolchain behind the code
    # generator): "ptxas ... fatal   : Unsupported .version 8.6; current version is '8.5'".
    ("ptxas-old", "shape", (
        r"Unsupported \.version (?P<ptx>\d{1,2}\.\d{1,2}); current version is '(?P<have>\d{1,2}\.\d{1,2})'",
    )),
    # A missing module whose line was cut before its closing quote (a notebook's rendered traceback).
    ("module-b3", "shape", (
        r"^ModuleNotFoundError: No module named '(?P<mod>[A-Za-z_][\w.]{0,199})$",
    )),
    # An error inside torch.compile's compiler (Inductor): its wrapper exceptions and codegen's own log line.
    # torch/_dynamo/exc.py BackendCompilerFailed ("backend='inductor' raised:"), torch/_inductor/exc.py
    # InductorError / LoweringException, torch/_inductor/scheduler.py ("Error in codegen for ...").
    ("inductor-internal", "shape", (
        r"BackendCompilerFailed: backend='inductor' raised",
        r"torch\._inductor\.exc\.(?P<exc>InductorError|LoweringException): (?P<inner>[A-Za-z]\w{0,60}(?:Error|Exception))",
        r"\] Error in codegen for (?P<node>[A-Za-z]\w{0,60})",
    )),
    # torchvision/torchaudio's own check (torchvision/extension.py _check_cuda_version): "Detected that PyTorch
    # and torchvision were compiled with different CUDA major versions. PyTorch has CUDA Version=11.8 and
    # torchvision has CUDA Version=12.1."
    ("pair-cuda", "shape", (
        r"PyTorch and (?P<dist>torchvision|torchaudio) were compiled with different CUDA (?:major )?versions\. "
        r"PyTorch has CUDA Version=(?P<cuda>\d{1,2}\.\d{1,2})",
    )),
    # An extension JIT-built by torch.utils.cpp_extension.load (DeepSpeed ops, ...) into torch's extension
    # cache (TORCH_EXTENSIONS_DIR, default ~/.cache/torch_extensions/<py>_<cu>/<name>/): reused by name after
    # torch changed, it misses torch's symbols.
    ("jit-ext", "shape", (
        r"torch_extensions[\\/](?P<tag>py\d{2,3}_(?:cu\d{2,4}|cpu))[\\/](?P<name>\w{1,80})[\\/][\w.-]{1,120}\.(?:so|pyd): "
        r"undefined symbol: (?P<sym>_ZN(?:3c10|2at|5torch)\w{0,400})",
    )),
    # --- tune-c1
    # A file of the user's named like the package it imports (CPython's "partially initialized module" wording
    # for an import cycle, Objects/moduleobject.c module_getattro and Python/ceval.c import_from: first, so it
    # is read before the plain forms), then a name or submodule a library release removed or first added
    # (c1_names.toml, with sources): "cannot import name 'X' from 'pkg'", "module 'pkg' has no attribute 'X'",
    # "No module named 'pkg.sub'", "'Cls' object has no attribute 'X'".
    ("c1-name", "shape", (
        r"partially initialized module '(?P<partial>[\w.]{1,200})'(?: has no attribute '(?P<name>\w{1,200})')?",
        r"cannot import name '(?P<name>\w{1,200})' from '(?P<mod>[\w.]{1,200})'",
        r"module '(?P<mod>[\w.]{1,200})' has no attribute '(?P<name>\w{1,200})'",
        r"No module named '(?P<mod>[\w.]{1,200})'",
        r"'(?P<cls>[A-Z]\w{0,80})' object has no attribute '(?P<name>\w{1,200})'",
    )),
    # Installers' own error lines: pip (a wheel whose tags do not fit, src/pip/_internal/commands/install.py;
    # PEP 668; out of disk while installing; hash mismatch, src/pip/_internal/exceptions.py HashErrors),
    # conda's PackagesNotFoundError, and protobuf >= 4 refusing old generated code (python/google/protobuf/
    # descriptor.py: "Descriptors cannot be created directly.").
    ("c1-pip", "shape", (
        r"(?P<wheel>\.whl) is not a supported wheel on this platform",
        r"error: (?P<pep668>externally-managed-environment)",
        r"(?P<conda>PackagesNotFoundError): The following packages are not available from current channels",
        r"Could not install packages due to an OSError: \[Errno 28\] (?P<nospace>No space left on device)",
        r"(?P<hashes>THESE PACKAGES DO NOT MATCH THE HASHES)",
        r"(?P<proto>Descriptors cannot (?:not )?be created directly)",  # 4.21.x printed "cannot not" (fangfufu/Linux-Fake-Background-Webcam#179, 4.21.1)
    )),
    # Lines that exist only when something failed, with no error word of their own (_fatal takes them):
    # resolution conflicts (pip's "The conflict is caused by:" lines, resolvelib/factory.py; uv's pubgrub
    # report; conda-libmamba-solver's problem lines) and SIGILL as shells report it (bash/sh "Illegal
    # instruction (core dumped)", zsh on macOS "illegal hardware instruction").
    ("c1-fatal", "shape", (
        r"^\s{1,8}(?P<who>[A-Za-z0-9][\w.-]{0,80}) (?P<whov>\d[\w.+!]{0,40}) depends on (?P<req>[A-Za-z0-9][^\s;]{0,200})",
        r"Because (?P<who>[A-Za-z0-9][\w.-]{0,80}?)(?P<whov>==[\w.+!]{1,40})? depends on (?P<req>[A-Za-z0-9][^\s]{0,200}) "
        r"and you require (?P<ureq>[^\s]{1,200})",
        r"package (?P<who>[A-Za-z0-9][\w.-]{0,80}?)-(?P<whov>\d[\w.]{0,40})-[\w.]{1,80} requires "
        r"(?P<req>[^,\n]{1,80}(?:,[^,\n]{1,40})?)(?P<conda>, but none of the providers can be installed)",
        r"^(?P<sigill>Illegal instruction)(?: \(core dumped\))?\s{0,4}$",
        r" (?P<sigill>Illegal instruction)(?<=\d Illegal instruction)\s{1,12}(?:\(core dumped\) )?",  # "<pid> Illegal ..."
        r"(?P<mac>illegal hardware instruction)",
    )),
    # --- tune-c4
    # GPU faults the NVIDIA kernel module logs (NVIDIA's Xid catalog, c4_hardware.toml): "NVRM: Xid (PCI:0000:3b:00):
    # 79, pid=..., GPU has fallen off the bus." (older drivers: "NVRM: Xid (0000:01:00): 3, ..."), "NVRM: GPU at
    # PCI:0000:3b:00: ... has fallen off the bus", and nvidia-smi's "Unable to determine the device handle for
    # GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU".
    ("c4-xid", "shape", (
        r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\): (?P<xid>\d{1,3}),",
        r"NVRM: GPU (?:at )?(?:PCI:)?(?P<pci2>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?:? (?:GPU )?has fallen off the bus",
        r"device handle for GPU ?(?:[0-9a-fA-F]{4})?(?P<pci3>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d): (?P<lost>GPU is lost)",
    )),
    # No usable GPU: torch/cuda/__init__.py _lazy_init ("No CUDA GPUs are available", cudaErrorNoDevice), torch/xpu
    # ("No XPU devices are available."), a shell without nvidia-smi (bash's "nvidia-smi: command not found", dash's
    # "nvidia-smi: not found", Ubuntu's command-not-found "Command 'nvidia-smi' not found, but can be installed
    # with:", cmd.exe's "'nvidia-smi' is not recognized as an internal or external command").
    ("c4-nogpu", "shape", (
        r"No CUDA GPUs are available",
        r"No (?P<xpu>XPU) devices are available",
        r"(?P<smi>nvidia-smi): (?:command )?not found",
        r"Command '(?P<smi2>nvidia-smi)' not found",
        r"'(?P<smi3>nvidia-smi)' is not recognized as an internal or external command",
    )),
    # Text read or printed with the locale's codec (Windows code pages, ascii under LANG=C): codecs' own messages.
    ("c4-codec", "shape", (
        r"Unicode(?P<dir>Decode|Encode)Error: '(?P<codec>[\w-]{1,20})' codec can't (?:decode|encode) (?:byte|character)",
    )),
    # Windows: os.symlink without SeCreateSymbolicLinkPrivilege (huggingface_hub's cache), paths over MAX_PATH
    # (WinError 206; pip's "HINT: This error might have occurred since this system does not have Windows Long Path
    # support enabled"; "[Errno 2] No such file or directory: 'C:\\...'" on a path longer than 260 characters).
    ("c4-win", "shape", (
        r"\[WinError (?P<code>1314)\] A required privilege is not held",
        r"\[WinError (?P<code>206)\]",
        r"does not have (?P<hint>Windows Long Path support) enabled",
        r"\[Errno 2\] No such file or directory: '(?P<winpath>[A-Za-z]:\\{1,2}[^'\n]{200,4000})'",
    )),
    # macOS: dyld's "(mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64'))" (older:
    # "mach-o, but wrong architecture"); aten/src/ATen/mps/MPSDevice.mm MPS_ERROR_RUNTIME_TOO_LOW ("The MPS backend
    # is supported on MacOS 12.3+.", later "13.0+", "14.0+"); MPS ops given a CPU tensor (OperationUtils.mm).
    ("c4-mac", "shape", (
        r"incompatible architecture \(have '(?P<have>x86_64|arm64e?)', need '(?P<need>x86_64|arm64e?)'",
        # (tune-h2) newer dyld: "(have (arm64), need (x86_64h))"; x86_64h is the slice an Intel (Haswell+) Mac asks for
        r"incompatible architecture \(have \((?P<have>x86_64h?|arm64e?)\), need \((?P<need>x86_64h?|arm64e?)\)\)",
        r"(?P<wrong>mach-o, but wrong architecture)",
        r"MPS backend is supported on Mac ?OS (?P<macos>\d{2}(?:\.\d{1,2})?)\+",
        r"(?P<placeholder>Placeholder storage has not been allocated on MPS device)",
    )),
    # ROCm: rocBLAS's Tensile host ("rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat:
    # No such file or directory for GPU arch : gfx1103", also ": Illegal seek"); MIOpen's status codes and its
    # own error lines ("MIOpen(HIP): Error [Compile] ...").
    ("c4-rocm", "shape", (
        r"rocBLAS error: Cannot read [^\n]{0,400}?TensileLibrary[\w.]{0,40}: [^\n]{1,60}? for GPU arch ?: ?(?P<gfx>gfx[0-9a-f]{3,5})",
        r"(?P<miopen>miopenStatus(?:UnknownError|InternalError|NotImplemented|BadParm|AllocFailed|NotInitialized))",
        r"MIOpen(?:\(HIP\))?: Error \[(?P<mstage>\w{1,40})\]",
    )),
    # --- tune-c2
    # DistributedDataParallel's own errors (torch/nn/parallel/distributed.py, torch/csrc/distributed/c10d/
    # reducer.cpp): unused parameters (and the names TORCH_DISTRIBUTED_DEBUG=DETAIL adds on the next line),
    # a parameter marked ready twice (reentrant checkpointing), static_graph violated, Lightning's wording,
    # no process group (distributed_c10d.py _get_default_group), device_ids / module placement.
    ("c2-ddp", "shape", (
        r"Expected to have finished reduction in the prior (?P<unused>iteration)",
        r"(?P<names>Parameters which did not receive grad for rank) (?P<rank>\d{1,6}): (?P<params>[\w., ]{1,2000})",
        r"(?P<twice>Expected to mark a variable ready only once)",
        r"(?P<twice>has been marked as ready twice)",
        r"(?P<static>Your training graph has changed in this iteration)",
        r"(?P<lightning>not used in producing the loss returned by training_step)",
        # (tune-h2) the raising frame's own source line in torch < 1.8, where a paste stops before "AssertionError: ..."
        r"^\s{1,8}\"(?P<sure>(?P<pg>Default process group is not initialized))\"\s{0,4}$",
        r"(?P<pg>Default process group (?:has not been|is not) initialized)",  # torch < 1.8: "is not" (_check_default_pg)
        r"(?P<devids>device_ids can only be None or contain a single element)",
        r"(?P<placement>DistributedDataParallel device_ids and output_device arguments only work with) "
        r"[^\n]{0,200}?and module parameters \{(?P<devs>[^}\n]{1,200})\}",
        r"(?P<placement>DistributedDataParallel's input module must be on the same type of devices)",
        r"(?P<frozen>DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient)",
    )),
    # A GPU index beyond the visible GPUs (cudaErrorInvalidDevice 101, HIP's twin, torch's own assertion).
    ("c2-ordinal", "shape", (
        r"error: invalid device ordinal",  # "CUDA error: ", "HIP error: ", "CUDA driver error: "
        r"(?P<name>cudaErrorInvalidDevice|hipErrorInvalidDevice|CUDA_ERROR_INVALID_DEVICE)\b",
        r"AssertionError: Invalid device id",
    )),
    # torch/cuda/__init__.py _lazy_init (and torch/xpu/__init__.py): CUDA used in a process forked after
    # the parent had initialised it: "Cannot re-initialize CUDA in forked subprocess. To use CUDA with
    # multiprocessing, you must use the 'spawn' start method".
    ("c2-fork", "shape", (
        r"Cannot re-initialize (?P<dev>CUDA|XPU|MTIA|NPU) in forked subprocess",
    )),
    # NCCL's own reasons (NVIDIA/nccl src/bootstrap.cc "Bootstrap : no socket interface found", net_ib.cc
    # "NET/IB : Got completion from peer X with error 12" / "with status=IBV_WC_RETRY_EXC_ERR(12)",
    # ibvwrap.cc "Call to ibv_reg_mr failed", socket.cc "socketProgressOpt: Call to recv from X failed :
    # Connection reset by peer"), Gloo's TCP transport (third_party/gloo/gloo/transport/tcp/pair.cc
    # "Connection closed by peer [addr]:port") and the c10d store's DistNetworkError.
    ("c2-nccl", "shape", (
        r"(?P<ifname>: no socket interface found)",  # "Bootstrap : ...", "NET/ND : ... for out-of-band connections"
        r"NET/IB ?: Got completion from peer [^\n]{0,160}? with (?:error |status=)(?:IBV_WC_\w{1,30}\()?(?P<wc>\d{1,3})",
        r"ibv_(?P<verb>\w{1,40}) failed",
        # (a reset or broken pipe is a peer that exited: NCCL's remote-error reading answers those)
        r"Call to (?:recv|send|connect) (?:from|to) \S{1,120} failed ?: (?P<sock>Connection refused|Connection timed out"
        r"|No route to host)",
        r"gloo[\\/]transport[\\/]tcp[\\/]\w{1,40}\.cc:\d{1,6}\] (?P<gloo>Connection closed by peer|Read error"
        r"|Connection reset by peer|Timed out waiting)",
        r"(?P<store>DistNetworkError|DistStoreError): [^\n]{0,200}?(?:Connection reset by peer|Broken pipe|Connection closed by peer)",
        # ProcessGroupNCCL's abort report: "NCCL communicator was aborted on rank 3. Original reason for failure
        # was: NCCL error: remote process exited or there was a network error, NCCL version 2.19.3" (nccl.toml's rows)
        r"NCCL error: (?P<text>unhandled system error|unhandled cuda error|internal error|invalid argument|invalid usage"
        r"|remote process exited or there was a network error)",
    )),
    # A launcher's report that a worker died of a signal (torchrun/elastic, deepspeed, accelerate); the
    # rendezvous closed under a joining agent (torch/distributed/elastic/rendezvous/api.py).
    ("c2-launch", "shape", (
        r"exitcode\s{0,8}: (?P<code>-?\d{1,3}) \(pid: \d{1,10}\)",
        r"failed \(exitcode: (?P<code>-?\d{1,3})\) local_rank: (?P<lr>\d{1,6})",
        r"exits with return code = (?P<code>-?\d{1,3})",
        r"died with <Signals\.(?P<signame>SIG[A-Z]{2,6}): (?P<sig>\d{1,2})>",
        r"(?P<closed>RendezvousClosedError)",
    )),
    # DeepSpeed's CPU optimizers whose op did not build or load (deepspeed/ops/adam/cpu_adam.py __del__:
    # "'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'"); FSDP's flat parameter checks
    # (torch/distributed/fsdp/_flat_param.py _validate_tensors_to_flatten); accelerate's prepare_model
    # refusing a quantized model placed on another device or offloaded (accelerate/accelerator.py).
    ("c2-train", "shape", (
        r"'(?P<ds>DeepSpeedCPU(?:Adam|Adagrad|Lion))' object has no attribute 'ds_opt_\w{1,40}'",
        r"Must flatten tensors with uniform dtype but got (?P<a>torch\.\w{1,20}) and (?P<b>torch\.\w{1,20})",
        r"Must flatten tensors with uniform (?P<rg>`requires_grad`) when `use_orig_params=False`",
        r"You can't train a model that has been loaded in (?P<bits>[\w -]{1,20}?) precision on a (?P<other>different device)",
        r"You can't train a model that has been loaded in (?P<bits>[\w -]{1,20}?) precision with (?P<offload>CPU or disk offload)",
    )),
    # vLLM's KV cache and parallel checks (vllm/worker/worker.py raise_if_cache_size_invalid, vllm/v1/core/
    # kv_cache_utils.py check_enough_kv_cache_memory, vllm/v1/worker/gpu_worker.py's startup check,
    # vllm/config.py verify_with_parallel_config), SGLang's memory pool (model_runner.py "Not enough memory.
    # Please try to increase --mem-fraction-static."), and CUDA graph capture failing under either engine.
    ("c2-serve", "shape", (
        r"(?P<noblocks>No available memory for the cache blocks)",
        r"max seq len \((?P<want>\d{1,9})\) is larger than the maximum number of tokens that can be stored in KV cache "
        r"\((?P<fit>\d{1,9})\)",
        r"estimated maximum model length is (?P<est>[\d,]{1,12})",
        r"(?P<needed>KV cache is needed, which is larger than the available KV cache memory)",
        r"Free memory on device [^\n]{0,40}?\((?P<free>[\d.]{1,8})/(?P<total>[\d.]{1,8}) GiB\) on startup is less than "
        r"desired GPU memory utilization \((?P<util>[\d.]{1,6})",
        r"(?P<sglang>Not enough memory\. Please try to increase --mem-fraction-static)",
        r"Total number of attention heads \((?P<heads>\d{1,5})\) must be divisible by tensor parallel size \((?P<tp>\d{1,4})\)",
        r"(?P<capture>operation not permitted when stream is capturing)",
        r"(?P<capture>operation failed due to a previous error during capture)",
        r"(?P<capture>cudaErrorStreamCapture\w{1,30})",
    )),
    # --- tune-c3
    # Two tensors of one op in different dtypes or on different devices (ATen's checks: TensorIterator /
    # ScalarType "expected scalar type X but found Y", LinearAlgebra.cpp addmm "expected mat1 and mat2 to have
    # the same dtype, but got: float != c10::Half" (2.1+: "mat1 and mat2 must have the same dtype, but got
    # Float and Half"), Convolution.cpp check_input_same_type_as_parameters "Input type (X) and weight type
    # (Y) should be the same", loss checks "Found dtype Long but expected Float", TensorIterator's
    # "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!" (2.6+:
    # "... but got index is on cpu, different from other tensors on cuda:0"), cudnn RNN's "Input and parameter
    # tensors are not at the same device", MPS's "Placeholder storage has not been allocated on MPS device!",
    # FakeTensor's "Unhandled FakeTensor Device Propagation for aten.mm.default, found two different devices").
    ("c3-mismatch", "shape", (
        r"expected scalar type (?P<want>\w{1,20}) but found (?P<got>\w{1,20})",
        r"both vectors to have same dtype, but found (?P<got>\w{1,20}) and (?P<want>\w{1,20})",
        # "mat1 and mat2 / self and mat2 / ... must have the same dtype, but got Half and Float" (2.1+): the first is the input
        r" must have the same dtype, but got (?P<got>\w{1,20}) and (?P<want>\w{1,20})",
        r" to have the same dtype, but got: (?P<got>[\w:]{1,30}(?: int)?) != (?P<want>[\w:]{1,30}(?: int)?)",
        r"mixed dtype \(CPU\): (?P<nodtypes>expect parameter to have scalar type of|all inputs must share same datatype)",
        r"(?P<nodtypes>mat1 and mat2 must have the same dtype)$",
        # flash-attn's TORCH_CHECK(k.dtype() == q_dtype, ...), xformers' fmha input check
        r"(?P<nodtypes>(?:query and key|query and value) must have the same dtype)",
        r"(?P<nodtypes>Query/Key/Value should (?:all )?have the same dtype)",
        r"expected dtype (?P<want>\w{1,20}) but got dtype (?P<got>\w{1,20})",
        r"requires the source and destination dtypes match, got (?P<want>\w{1,20}) for the destination and "
        r"(?P<got>\w{1,20}) for the source",
        r"expected self and source to have same dtypes but got (?P<want>\w{1,20}) and (?P<got>\w{1,20})",
        r"value cannot be converted to type (?:at::|c10::)?(?P<ovf>\w{1,20}) without overflow",
        # torch 1.x: "Expected tensor for argument #1 'input' to have the same type as tensor for argument #2
        # 'weight'; but type torch.cuda.HalfTensor does not equal torch.cuda.FloatTensor", "... the same device
        # as ...; but device 1 does not equal 0", "expected device cuda:0 but got device cpu"
        r"to have the same type as tensor for argument #\d{1,2} '\w{1,40}'; but type (?P<conv>(?P<got>[\w.]{1,40})) "
        r"does not equal (?P<want>[\w.]{1,40})",
        r"to have the same device as tensor for argument #\d{1,2} '\w{1,40}'; but device (?P<dev1>\d{1,3}) does not "
        r"equal (?P<dev2>\d{1,3})",
        r"expected device (?P<want_dev>[\w:]{1,20}) but got device (?P<got_dev>[\w:]{1,20})",
        r"(?P<conv>Input) type \((?P<got>[\w.:]{1,40})\) and (?:weight|bias) type \((?P<want>[\w.:]{1,40})\) should be the same",
        r"Found dtype (?P<got>\w{1,20}) but expected (?P<want>\w{1,20})",
        r"Expected object of scalar type (?P<want>\w{1,20}) but got scalar type (?P<got>\w{1,20})",
        r"result type (?P<got>\w{1,20}) can't be cast to the desired output type (?P<want>\w{1,20})",
        r"Expected tensor for argument #\d{1,2} '\w{1,40}' to have (?:one of the following )?scalar types?:? "
        r"(?P<want>\w{1,20})[^;\n]{0,60}; but got (?P<got>[\w.]{1,40}) instead",
        r"Expected (?P<mask>attn_mask) dtype to be bool or float or to match query dtype, but got attn_mask\.dtype: "
        r"(?P<got>[\w:]{1,20}(?: int)?) and {1,3}query\.dtype: (?P<want>[\w:]{1,20})",
        # tune-j1: raised only (TORCH_CHECK), so "sure" also when pasted alone in an issue
        r"(?P<sure>Expected all tensors to be on the same device), but found at least two devices, (?P<dev1>[\w:]{1,20}) and "
        r"(?P<dev2>[\w:]{1,20})!",
        r"Expected all tensors to be on the same device, but got \w{1,40} is on (?P<got_dev>[\w:]{1,20}), different "
        r"from other tensors on (?P<want_dev>[\w:]{1,20})",
        r"Input and parameter tensors are not at the same device, found input tensor at (?P<got_dev>[\w:]{1,20}) and "
        r"parameter tensor at (?P<want_dev>[\w:]{1,20})",
        r"Expected object of device type (?P<want_dev>\w{1,10}) but got device type (?P<got_dev>\w{1,10})",
        r"Tensor for argument #\d{1,2} '\w{1,40}' is on (?P<got_dev>CPU|GPU)[^,\n]{0,20}, but expected (?:it|them) "
        r"to be on (?P<want_dev>CPU|GPU)",
        r"Placeholder storage has not been allocated on (?P<mps>MPS) device",
        r"Device Propagation for [\w.]{1,80}, found two different devices (?P<dev1>[\w:]{1,20}), (?P<dev2>[\w:]{1,20})",
        r"Tensor on device (?P<got_dev>[\w:]{1,20}) is not on the expected device (?P<want_dev>[\w:]{1,20})!",
        r"indices should be either on cpu or on the same device as the indexed tensor \((?P<idx_dev>[\w:]{1,20})\)",
        r"can't convert (?P<numpy_dev>[\w:]{1,20}) device type tensor to numpy",
        r"(?P<numpy_grad>Can't call numpy\(\) on Tensor that requires grad)",
        r"(?P<load_nocuda>Attempting to deserialize object on a CUDA device) but torch\.cuda\.is_available\(\) is False",
        r"Attempting to deserialize object on CUDA device (?P<load_count>\d{1,3}) but torch\.cuda\.device_count\(\) is",
        r"(?P<meta_copy>Cannot copy out of meta tensor); no data",
        # transformers modeling_utils.py PreTrainedModel.to/cuda on quantized models; accelerate big_modeling.py
        r"`\.(?P<quant_to>to|cuda)` is not supported for (?:`[48]-bit`|HQQ-quantized)",
        r"(?P<offloaded>You can't move a model that has some modules offloaded to cpu or disk)",
        # aten/src/ATen/core/Generator.h check_generator: a generator on another device than the tensors (a global
        # torch.set_default_device("cuda") makes DataLoader's randperm CUDA while its generator stays on the CPU)
        r"Expected a '(?P<generator>\w{1,10})' device type for generator but found '\w{1,10}'",
    )),
    # Dynamo at run time: torch/_dynamo/exc.py Unsupported (a graph break that fullgraph=True, torch.export or a
    # higher-order op such as flex_attention's score_mod cannot take) and UserError; torch/fx/_symbolic_trace.py
    # ("Detected that you are using FX to symbolically trace a dynamo-optimized function"); torch/_inductor/
    # cudagraph_trees.py ("accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run").
    ("c3-dynamo", "shape", (
        # only as the line's own exception (c3.dynamo checks what precedes it: nothing, or a [rankN]: prefix)
        r"torch\._dynamo\.exc\.(?P<dexc>Unsupported|UserError|UncapturedHigherOrderOpError): (?P<dmsg>[^\n]{1,500})",
        r"Detected that you are using FX to (?P<fx>symbolically trace) a dynamo-optimized function",
        r"accessing tensor output of (?P<cg>CUDAGraphs) that has been overwritten by a subsequent run",
    )),
    # Triton's fp8 formats by GPU (triton/language/semantic.py: "type fp8e4nv not supported in this architecture.
    # The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')"; older: "fp8e4nv data type is not supported on CUDA arch < 89").
    ("c3-fp8", "shape", (
        r"type (?P<fp8>fp8e\w{1,6}) not supported in this architecture\. The supported fp8 dtypes are "
        r"\((?P<ok>[^)\n]{0,80})\)",
        r"(?P<fp8>fp8e\w{1,6}) data type is not supported on CUDA arch < \d{2,3}",
    )),
    # transformers' choice of attention implementation (modeling_utils.py, 4.36 and later; c3_tables.toml [[hf]]).
    ("c3-hf", "shape", (
        # the model's class name before the match is read in Python (c3_attn.hf): no leading run here
        r" does not support Flash Attention (?P<fa>\d)(?:\.0)? yet",
        r" does not support an attention implementation through "
        r"(?:torch\.nn\.functional\.scaled_dot_product_attention yet|torch's flex_attention)",
        r"(?P<arch>The current architecture) does not support Flash Attention 2\.0",  # transformers 4.34-4.35
        r"Flash Attention 2\.0 is not available\. Please refer to the documentation",
        r"Specified `attn_implementation=(?P<impl>[^`\n]{1,80})` is not supported\. The only possible arguments are",
        r"FlashAttention(?P<fa>\d) has been toggled on, but it cannot be used due to the following error: [^\n]{0,120}?"
        r"(?:doesn't seem to be installed|requires at least version|is not available on CPU"
        r"|requires compute capability >= (?P<cc>\d{1,2}))",
        r"Flash Attention (?P<fa>\d)(?:\.0)? only supports torch\.float16 and torch\.bfloat16 dtypes",
        r"Flash Attention (?P<fa>\d)(?:\.0)? with a model not initialized on GPU and with no GPU available",
        r"PyTorch (?:SDPA|Flex Attention) requirements in Transformers are not met\. Please install "
        r"(?P<spec>torch>=\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)",
    )),
    # flash-attn's run-time checks (csrc/flash_attn/flash_api.cpp, hopper/flash_api.cpp; c3_tables.toml [[flash]]).
    ("c3-flash", "shape", (
        r"FlashAttention backward for head dim (?:> 192|256 with dropout, or head dim 224 with/without dropout) "
        r"requires A100/A800 or H100/H800",
        r"Expected (?:is_sm80(?: \|\| is_sm90)?|is_sm90 \|\| is_sm8x|is_sm8x(?: \|\| is_sm90)?) to be true, but got false",
        r"cu_seqlens_(?P<qk>[qk]) must (?:have shape \(|have dtype int32|be contiguous|be on CUDA)",
        r"Input tensor must have contiguous last dimension",
        r"Number of heads in key/value must divide number of heads in query",
        r"FlashAttention only supports Hopper GPUs or newer",
        # the CUTLASS memory-efficient kernel (xformers, and torch's SDPA, which carries a copy of it)
        r"cutlass[FB]: no kernel found to launch",
        # CHECK_SHAPE(q, batch_size, seqlen_q, ...) / (total_q, ...): the tensor's name before it is read in Python
        r" must have shape \((?:batch_size, seqlen_|total_)",
    )),
    # A torch API older releases lack (c3_tables.toml [[torch_api]]): "AttributeError: module 'torch._dynamo.config'
    # has no attribute 'recompile_limit'", "cannot import name 'save_cache_artifacts' from 'torch.compiler'".
    ("c3-api", "shape", (
        r"module 'torch\.(?P<mod>[\w.]{1,80})' has no attribute '(?P<attr>\w{1,80})'",
        r"cannot import name '(?P<attr>\w{1,80})' from 'torch\.(?P<mod>[\w.]{1,80})'",
    )),
    # Inductor's lowering error pasted without its module path ("LoweringException: AssertionError: Batch dimension
    # must match" / "  target: flex_attention"): read as b3.inductor_internal reads the qualified one.
    ("c3-lowering", "shape", (
        r"LoweringException: (?P<inner>[A-Za-z]\w{0,60}(?:Error|Exception))",
    )),
    # diffusers' _check_attention_backend_requirements (models/attention_dispatch.py, 0.35+): "Flash Attention
    # backend 'flash' is not usable because of missing package or the version is too old. Please install
    # `flash-attn>=2.6.3`." (Sage, Xformers, Flash Attention 3, NPU alike; flex is entry FDE's).
    ("c3-diffusers", "shape", (
        r"backend '(?P<backend>[\w-]{1,40})' is not usable because of missing package or the version is too old\. "
        r"Please (?:install `(?P<req>[^`\n]{1,60})`|build (?P<fa3>FA3))",
    )),
    # --- tune-e3
    # nvcc's host compiler check, crt/host_config.h: "#error -- unsupported GNU version! gcc versions later than
    # 13 are not supported!", "#error -- unsupported clang version! clang version must be less than 16 and greater
    # than 3.2", MSVC's "fatal error C1189: #error:  -- unsupported Microsoft Visual Studio version! Only the
    # versions between 2017 and 2022 (inclusive) are supported!"
    ("e3-host", "shape", (
        r"#error:? {1,3}-- unsupported (?:GNU version! gcc versions later than (?P<gcc>\d{1,2}) are not supported"
        r"|clang version! clang version must be less than (?P<clang>\d{1,2})"
        r"|Microsoft Visual Studio version! Only the versions between (?P<vs_lo>\d{4}) and (?P<vs_hi>\d{4}))",
    )),
    # nvcc ("nvcc fatal   : Unsupported gpu architecture 'compute_86'") and ptxas ("ptxas fatal   : Value 'sm_89'
    # is not defined for option 'gpu-name'") on an architecture the toolkit does not know (too new, or removed).
    ("e3-arch", "shape", (
        r"Unsupported gpu architecture 'compute_(?P<arch>\d{2,3})[af]?'",
        r"Value 'sm_(?P<arch>\d{2,3})[af]?' is not defined for option 'gpu-name'",
    )),
    # gcc/nvcc "fatal error: cusparse.h: No such file or directory", clang "fatal error: 'glm/glm.hpp' file not
    # found", MSVC "Cannot open include file: 'nvToolsExt.h'": the header read from the line (e3_build.toml).
    ("e3-header", "shape", (
        r"fatal error: (?P<hdr>[\w/.+-]{1,120}): No such file or directory",
        r"fatal error: '(?P<hdr>[\w/.+-]{1,120})' file not found",
        r"Cannot open include file: '(?P<hdr>[\w/.+-]{1,120})'",
    )),
    # The linker: "/usr/bin/ld: cannot find -lcudart: No such file or directory", "ld.lld: error: unable to find
    # library -lcublas", "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'", "relocation
    # R_X86_64_32 against `.rodata' can not be used when making a shared object; recompile with -fPIC".
    ("e3-link", "shape", (
        r"ld: cannot find -l(?P<lib>[\w+.-]{1,80})",
        r"ld\.lld: error: unable to find library -l(?P<lib>[\w+.-]{1,80})",
        r"LNK1181: cannot open input file '(?P<winlib>[\w+.-]{1,80}\.lib)'",
        r"(?P<pic>; recompile with -fPIC)",
    )),
    # CMake with CUDA enabled and no working nvcc: "No CMAKE_CUDA_COMPILER could be found.", "Failed to detect a
    # default CUDA architecture.", FindCUDA's "Failed to find nvcc." (llama-cpp-python with -DGGML_CUDA=on).
    ("e3-cmake", "shape", (
        r"No CMAKE_CUDA_COMPILER could be found",
        r"(?P<detect>Failed to detect a default CUDA architecture)",
        r"Failed to find nvcc\.",
    )),
    # --- tune-e1
    # A bitsandbytes model moved after loading: transformers modeling_utils.py PreTrainedModel.to ("`.to` is not
    # supported for `4-bit` or `8-bit` [bitsandbytes] models" before 4-bit moves were allowed; "`8-bit`" alone and
    # "Calling `to()` ... please install bitsandbytes >= 0.43.2" after). e1.quant reads WHO moved it (frames).
    ("e1-quant", "shape", (
        r"`\.(?P<verb>to|cuda)` is not supported for `(?P<bits>4-bit` or `8-bit|8-bit|4-bit)` (?:bitsandbytes )?models",
        r"Calling `(?P<oldbnb>to)\(\)` is not supported for `4-bit` quantized models with the installed version of "
        r"bitsandbytes",
    )),
    # Dynamo refusing a logger call or a disabled function under fullgraph=True (torch/_dynamo/variables/misc.py
    # LoggingLoggerVariable, functions.py SkipFunctionVariable; torch 2.0-2.1 "'inline in skipfiles: Logger.info |
    # info /usr/lib/python3.9/logging/__init__.py'").
    ("e1-dynamo", "shape", (
        r"(?P<sure>Logger) not supported for non-export cases(?P<hint>\. To avoid graph breaks caused by logger)?",
        r"(?P<sure>in skipfiles: )(?P<qual>[\w.<>]{1,200}) {1,3}\| \w{1,100} ",
        r"(?P<sure>Skip calling) `torch\.compiler\.disable\(\)`d function",
        r"(?P<sure>call torch)\._dynamo\.disable\(\) wrapped function",
    )),
    # MPS: one tensor over 4 GiB (MetalPerformanceShaders MPSNDArray.mm "failed assertion `[MPSNDArray
    # initWithDevice:descriptor:] Error: total bytes of NDArray > 2**32'"; the temporary-array sibling).
    ("e1-mps", "shape", (
        r"Error: total bytes of (?P<temp>temporary )?NDArray > 2\*\*32",
        r"MPSGraph does not support tensor dims larger than INT_MAX",
    )),
    # GradScaler (fp16 mixed precision) on fp16/bf16 trainable parameters: torch/amp/grad_scaler.py
    # _unscale_grads_ ("Attempting to unscale FP16 gradients."), and the foreach kernel on bf16 gradients.
    ("e1-scaler", "shape", (
        r"Attempting to unscale (?P<fp16>FP16) gradients",
        r"\"_amp_foreach_non_finite_check_and_unscale_cuda\" not implemented for '(?P<dtype>BFloat16|Half)'",
    )),
    # --- tune-e2
    # cudaErrorDevicesUnavailable (46) in every wording (CUDA runtime's text, THC's "error=46 :", Caffe's "Check failed:
    # error == cudaSuccess (46 vs. 0)", a program's "CUDA Runtime Error(46):"): a GPU in an exclusive compute mode.
    ("e2-busy", "shape", (
        r"CUDA-capable devices are busy or unavailable",
        r"CUDA-capable device\(s\) is/are busy or unavailable",
    )),
    # A GPU the driver lost, without an Xid line: NVRM's multi-line "The NVIDIA GPU 0000:b3:00.0 (PCI ID: ...) installed in
    # this system has / fallen off the bus and is not responding to commands." (nv.c), nvidia-smi's "Unable to determine
    # the device handle for GPU0000:03:00.0: Unknown Error" (NVML_ERROR_UNKNOWN; tune-c4 reads "GPU is lost").
    ("e2-lost", "shape", (
        r"(?P<sure>fallen off the bus and is not responding to commands)",
        r"Unable to determine the device handle for GPU ?(?:[0-9a-fA-F]{4})?(?P<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}"
        r":[0-9a-fA-F]{2}\.\d): (?P<sure>Unknown Error)",
    )),
    # The NVIDIA kernel module's own report of a user-space driver of another version (nvidia.ko): "NVRM: API mismatch: the
    # client has the version 515.48.07, but / NVRM: this kernel module has the version 510.73.05."
    ("e2-nvml", "shape", (
        r"NVRM: API mismatch: the client has the version (?P<client>\d{1,4}(?:\.\d{1,4}){1,3}), (?P<sure>but)",
    )),
    # libnvidia-container in the runtime's prestart hook (NVIDIA/libnvidia-container src/cli: "nvidia-container-cli:
    # initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file", "... nvml error:
    # driver not loaded", "... nvml error: driver/library version mismatch", "nvidia-container-cli: device error: 3: unknown
    # device"); Podman/Docker CDI ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all").
    ("e2-ctr", "shape", (
        r"nvidia-container-cli: initialization error: (?:load library failed: (?P<nolib>libnvidia-ml\.so\.1)"
        r"|nvml error: (?:(?P<notloaded>driver not loaded)|(?P<mismatch>driver/library version mismatch)))",
        r"nvidia-container-cli: device error: [\w-]{1,60}: (?P<unknown>unknown device)",
        r"CDI devices (?<=unresolvable CDI devices )(?P<cdi>nvidia\.com/gpu)",
    )),
    # torch >= 2.4's TCPStore uses libuv by default (torch/csrc/distributed/c10d/TCPStore.cpp: "use_libuv was requested but
    # PyTorch was build without libuv support"); Windows wheels are built without it.
    ("e2-libuv", "shape", (
        r"PyTorch was build without libuv support",
    )),
    # A Rust extension built from its sdist without Rust: setuptools-rust ("error: can't find Rust compiler", older
    # "error: Can not find Rust compiler"), maturin's sdist backend ("Cargo, the Rust package manager, is not installed or is
    # not on PATH.").
    ("e2-rust", "shape", (
        r"Rust compiler(?<=find Rust compiler)",
        r"(?P<sure>Cargo, the Rust package manager, is not installed or is not on PATH)",
    )),
    # torchvision/torchaudio pinned next to another torch: pip's resolver report (src/pip/_internal/resolution/resolvelib/
    # factory.py: "Cannot install A and B because these package versions have conflicting dependencies.", "torchvision
    # 0.16.2 depends on torch==2.1.2").
    ("e2-pair", "shape", (
        r"Cannot install (?P<list>[^\n]{1,800})",  # e2.pair reads up to "because these package versions ..."
        r"torch(?P<comp>vision|audio) (?P<cv>\d[\w.+]{0,40}) (?P<sure>depends on) torch==(?P<tv>\d[\w.+]{0,40})",
    )),
    # pkg_resources of an old setuptools on Python 3.12 (pkgutil.ImpImporter removed): "from pkgutil import ImpImporter"
    # as the last frame's line, "module 'pkgutil' has no attribute 'ImpImporter'", "cannot import name 'ImpImporter'".
    ("e2-imp", "shape", (
        r"(?P<sure>from pkgutil import ImpImporter)",
        r"'pkgutil' has no attribute 'ImpImporter'",
        r"cannot import name 'ImpImporter'",
    )),
    # DDP's reducer report without its RuntimeError (torch/csrc/distributed/c10d/reducer.cpp).
    ("e2-ddp", "shape", (
        r"Parameter indices which did not receive grad for rank (?P<sure>\d{1,6})",
    )),
    # torch < 1.5 (THC): cudaErrorInvalidDevice under its pre-CUDA-10.1 number 10.
    ("e2-ordinal", "shape", (
        r"cuda runtime error \(10\) : invalid device ordinal",
        r"error=10 : invalid device ordinal",
    )),
    # conda >= 23 ("CondaError: Run 'conda init' before 'conda activate'"), older conda's CommandNotFoundError.
    ("e2-conda", "shape", (
        r"CondaError: Run 'conda init' before 'conda activate'",
        r"CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'",
    )),
    # horovod/common/util.py check_extension ("Extension horovod.torch has not been built: <path> not found" / "If this is
    # not expected, reinstall Horovod with HOROVOD_WITH_PYTORCH=1 to debug the build error."), horovod/runner/launch.py
    # ("MPI support has not been built.  If this is not expected, ensure MPI is installed and reinstall Horovod with
    # HOROVOD_WITH_MPI=1 ..."), horovod/common/basics.py ("Horovod has not been built with MPI support ...").
    ("e2-hvd", "shape", (
        r"HOROVOD_WITH_(?P<fw>[A-Z]{2,20})=1 to debug the build error",
        r"Extension horovod\.(?P<ext>\w{1,20}) has not been built",
    )),
    # Ray's autoscaler (python/ray/autoscaler/_private/resource_demand_scheduler.py, v2 scheduler): "Error: No available
    # node types can fulfill resource request {'GPU': 1.0, 'CPU': 1.0}. Add suitable node types to this cluster to resolve
    # this issue." / "... resource requests {'GPU': 1.0}*1" / "... placement group requests".
    ("e2-ray", "shape", (
        r"No available node types can fulfill (?:resource|placement group) requests? (?P<req>\{[^}\n]{1,300}\})",
    )),
    # Notices that explain a failure after them (e2.notice reads them only when the log's root error comes later and
    # is of the kind they cause): Apptainer/Singularity's --nv on a host without the NVIDIA driver ("INFO:    Could not
    # find any nv files on this host!", a login or CPU node), Colab/pip's "You must restart the runtime in order to use
    # newly installed versions." (a package imported before pip replaced it).
    ("e2-notice", "shape", (
        r"Could not find any (?P<sure>nv) files on this host",
        r"You must restart the (?P<sure>runtime) in order to use newly installed versions",
    )),
    # --- tune-e5
    # A Jetson (L4T) named by the log: /etc/nv_tegra_release ("# R35 (release), REVISION: 4.1, ..."), "L4T R36.4.3",
    # "JetPack 6.2", a -tegra kernel (uname -a), a board name. e5.jetson answers only when the root error is one
    # the platform explains (a torch without CUDA, a JetPack library missing); the group "sure" lets _fatal pass it.
    ("e5-jetson", "shape", (
        r"(?P<sure># R)(?P<l4t>\d{2}) \(release\), REVISION: (?P<rev>\d{1,2})",
        r"(?P<sure>L4T) R?(?P<l4t>3\d)\.(?P<rev>\d{1,2})",
        r"(?P<sure>JetPack)[ -]?(?P<jp>[4-7](?:\.\d{1,2}){0,2})",
        # uname -a of an L4T kernel; its literal "GNU/Linux" starts with a rare character (a bare "-tegra" would
        # make the block finder try every "t" or "-" of every log)
        r"(?P<sure>-tegra) #\d{1,5} SMP[^\n]{0,160}? GNU/Linux",
        r"(?P<sure>Jetson) (?P<board>AGX Thor|AGX Orin|Orin Nano|Orin NX|AGX Xavier|Xavier NX|Nano|TX2|TX1)",
    )),
    # A process killed by SIGILL on a Jetson: numpy's OpenBLAS picks a core type the Cortex-A57/Carmel lacks
    # (numpy issue 18131, OpenBLAS 0.3.13+): OPENBLAS_CORETYPE=ARMV8. e5.sigill answers only on a Jetson.
    ("e5-sigill", "shape", (
        r"(?P<sure>Illegal instruction)(?: \(core dumped\))?\s{0,4}$",
    )),
    # uv's resolver (crates/uv-resolver/src/pubgrub/report.rs): a +cuXYZ local version PyPI does not have, and the
    # first-index strategy hint. Printed only when resolution failed.
    ("e5-uv", "shape", (
        r"(?P<sure>Because) (?P<req>[A-Za-z][\w.-]{0,80}==[\w.!]{1,40}\+[\w.]{1,20}) was not found in the package registry",
        r"(?P<sure>Because) there is no version of (?P<req>[A-Za-z][\w.-]{0,80}==[\w.!]{1,40}\+[\w.]{1,20})",
        r"(?P<sure>hint): `(?P<hpkg>[A-Za-z][\w.-]{0,80})` was found on (?P<index>https?://[^\s,]{1,200}), but not at the "
        r"requested version",
    )),
    # The cause a pip build printed above its summary ("error: subprocess-exited-with-error"): no Rust toolchain
    # (setuptools-rust "error: can't find Rust compiler", maturin/puccinialin "Cargo, the Rust package manager, is not
    # installed"), a setup.py guard on the Python version; and pip's summary itself for a package no rule knows.
    ("e5-build", "shape", (
        r"Python (?P<pyver>3\.\d{1,2}) (?:is not supported|or (?P<dir>older|earlier|lower|newer|later|higher))",
        r"ERROR: Failed building wheel for (?P<dist>[A-Za-z0-9][\w.-]{0,100})",
    )),
    # --- tune-e4
    # Hugging Face Hub access (huggingface_hub/utils/_http.py hf_raise_for_status: GatedRepoError "Cannot access gated
    # repo for url ...", RepositoryNotFoundError; transformers/utils/hub.py cached_file: "You are trying to access a
    # gated repo.") and connection/offline failures (transformers hub.py "We couldn't connect to '{HF_ENDPOINT}' to load
    # this file", huggingface_hub file_download.py LocalEntryNotFoundError / OfflineModeIsEnabled).
    ("e4-hub", "shape", (
        r"GatedRepoError",
        r"Cannot access gated repo for url https?://[\w.:-]{1,100}/(?:api/models/)?(?P<repo>[\w.-]{1,96}/[\w.-]{1,96})",
        r"You are trying to access a gated repo",
        r"RepositoryNotFoundError",
        r"Repository Not Found for url: https?://[\w.:-]{1,100}/(?:api/models/)?(?P<repo>[\w.-]{1,96}/[\w.-]{1,96})",
        r"Invalid credentials in Authorization header",
        r"We couldn't connect to '(?P<endpoint>https?://[\w.:/-]{1,200})' to load this file",
        r"LocalEntryNotFoundError",
        r"OfflineModeIsEnabled",
        r"Cannot find the requested files in the disk cache",
    )),
    # torch 2.6 made weights_only=True the default of torch.load (torch/serialization.py _get_wo_message:
    # "Weights only load failed. ... WeightsUnpickler error: Unsupported global: GLOBAL x.y was not an allowed global").
    ("e4-pickle", "shape", (
        r"Weights only load failed",
        r"Unsupported global: GLOBAL (?P<glob>[\w.]{1,200}) was not an allowed global",
    )),
    # transformers/dynamic_module_utils.py resolve_trust_remote_code: "The repository for X contains custom code which
    # must be executed ..." / "Please pass the argument `trust_remote_code=True`"; the older "Loading X requires you to
    # execute the configuration file in that repo on your local machine" (configuration_auto.py).
    ("e4-remote", "shape", (
        r"The repository (?:for )?`?(?P<repo>[\w./-]{1,200}?)`? contains custom code which must be executed",
        r"Loading (?P<repo>[\w./-]{1,200}) requires you to execute the (?:configuration|tokenizer|modeling) file",
        r"`trust_remote_code=True` to (?:allow custom code|remove this error)",
    )),
    # A model type this transformers does not know (configuration_auto.py AutoConfig.from_pretrained: KeyError from
    # CONFIG_MAPPING, re-raised as "The checkpoint you are trying to load has model type `X` but Transformers does not
    # recognize this architecture"). A bare KeyError is read only for a model type of the table or under the frame.
    ("e4-arch", "shape", (
        r"The checkpoint you are trying to load has model type `(?P<mt>[\w-]{1,80})` but Transformers does not recognize",
        r"KeyError: '(?P<key>[a-z][\w-]{1,60})'$",
    )),
    # transformers' backend checks (utils/import_utils.py *_IMPORT_ERROR: "{0} requires the SentencePiece library but it
    # was not found in your environment", protobuf, Tokenizers, ...), tiktoken conversion (convert_slow_tokenizer.py).
    ("e4-tokdep", "shape", (
        r"requires the (?P<lib>[\w \U0001F917-]{1,40}?) library but it was not found in your environment",
        r"`(?P<tik>tiktoken)` is required to read a `tiktoken` file",
    )),
    # Fine-tuning: backward through nothing that requires grad (torch/autograd: "element 0 of tensors does not require
    # grad and does not have a grad_fn"), PEFT's target modules (peft/tuners/tuners_utils.py inject_adapter).
    ("e4-train", "shape", (
        r"RuntimeError: element (?P<elem>\d{1,4}) of tensors does not require grad and does not have a grad_fn",
        r"Target modules? (?P<targets>[^\n]{1,300}?) not found in the base model",
    )),
    # Stable Diffusion web UIs: AUTOMATIC1111/Forge modules/launch_utils.py prepare_environment ("Torch is not able to use
    # GPU; add --skip-torch-cuda-test"), modules/devices.py test_for_nans ("A tensor with all NaNs was produced in VAE"),
    # ComfyUI nodes.py init_external_custom_nodes ("Cannot import X module for custom nodes:", "(IMPORT FAILED): X").
    ("e4-webui", "shape", (
        r"Torch is not able to use GPU; add --skip-torch-cuda-test",
        r"A tensor with all NaNs was produced in (?P<part>Unet|VAE|[A-Za-z]{1,20})",
        r"Cannot import (?P<path>[^\n]{1,500}?) module for custom nodes: (?P<why>[^\n]{1,300})",
        r"\(IMPORT FAILED\): (?P<path>[^\n]{1,500})",
    )),
    # --- tune-f1
    # Open MPI (orte/prrte help-orte-rmaps-base.txt, printed only when mpirun refuses to start): too few slots.
    ("f1-mpi", "shape", (
        r"(?P<sure>There are not enough slots available in the system)(?: to satisfy the (?P<n>\d{1,6}))?",
    )),
    # Worker processes out of file descriptors: CPython multiprocessing/reduction.py recvfds ("received %d items of
    # ancdata", raised only), EMFILE (OSError: [Errno 24] Too many open files).
    ("f1-fds", "shape", (
        r"(?P<sure>received (?:\d{1,9}|%d) items of ancdata)",
        r"(?P<sure>len\(ancdata\)\))$",  # Errno 24 itself: tune-f2's reading (f2.limit), by the frames
    )),
    # A non-UTF-8 locale: google/colab/_system_commands.py _run_command; Click's _unicodefun._verify_python_env.
    ("f1-locale", "shape", (
        r"A UTF-8 locale is required\. Got (?P<got>[\w.-]{1,40})",
        r"Click will abort further execution because Python (?:3 )?was configured to use ASCII as encoding",
    )),
    # torch/utils/cpp_extension.py _get_cuda_arch_flags: no visible GPU and no TORCH_CUDA_ARCH_LIST (IndexError).
    ("f1-archlist", "shape", (
        r"(?P<sure>arch_list\[-1\] \+= '\+PTX')",
    )),
    # nvcc 11.4/11.5 on gcc 11's <functional> (NVIDIA/nccl#650, instant-ngp#1547).
    ("f1-gcc11", "shape", (
        r"std_function\.h:\d{1,5}:\d{1,5}: error: parameter packs not expanded",
    )),
    # vLLM < 0.5.4 attention selector (vllm/attention/selector.py): Gemma-2's soft-capping only in FlashInfer.
    ("f1-softcap", "shape", (
        r"(?P<sure>Please use Flashinfer backend for models with ?logits_soft_cap)",
    )),
    # DeepSpeed runtime/config.py _batch_assertion (raised as AssertionError).
    ("f1-dsbatch", "shape", (
        r"(?P<sure>Check batch related parameters)\. train_batch_size is not",
    )),
    # transformers quantizers (quantizer_bnb_4bit.py / quantizer_bnb_8bit.py validate_environment, raised ValueError).
    ("f1-offload", "shape", (
        r"(?P<sure>Some modules are dispatched on the CPU or the disk)\. Make sure you have enough GPU RAM",
    )),
    # Ray placement: verl's ResourcePoolManager ("Total available GPUs X is less than total desired GPUs Y"),
    # vLLM's ray_utils / llumnix ("The number of required GPUs exceeds the total number of available GPUs in the ...").
    ("f1-ray", "shape", (
        r"(?P<sure>Total available GPUs) (?P<have>\d{1,6})(?:\.0)? is less than total desired GPUs (?P<want>\d{1,6})",
        r"(?P<sure>The number of required GPUs exceeds the total number of available GPUs)",
    )),
    # flash-attn 1.x csrc/flash_attn/fmha_api.cpp mha_bwd: the head-dim limit of the backward on GPUs with less shared
    # memory than sm80/sm90 (flash-attn 2.x words it "A100/A800 or H100/H800", read by c3-flash).
    ("f1-fa1bwd", "shape", (
        r"FlashAttention backward for head dim > (?P<hd>\d{1,3}) requires A100 or H100 GPUs",
    )),
    # --- tune-f2
    # Windows (spawn) multiprocessing: Python's multiprocessing/spawn.py _check_not_importing_main ("An attempt has been
    # made to start a new process before the current process has finished its bootstrapping phase"), the DataLoader's
    # worker start under spawn (popen_spawn_win32.py: BrokenPipeError), torch/utils/data/dataloader.py _try_get_data.
    ("f2-spawn", "shape", (
        r"(?P<boot>An attempt has been made to start a new process before)",
        r"(?P<pipe>BrokenPipeError: \[Errno 32\] Broken pipe)",
        r"DataLoader worker \(pid\(s\) (?P<pids>[\d, ]{1,200})\) exited unexpectedly",
        # the child's side of a failed spawn (multiprocessing/spawn.py _main: reduction.pickle.load) and what cannot
        # be sent to a spawned worker (pickle: "Can't pickle local object 'main.<locals>.f'", "<function <lambda>")
        r"(?P<eof>EOFError: Ran out of input)",
        r"(?P<pickle>Can't (?:pickle local object|pickle <function <lambda>|get local object))",
    )),
    # OS limits: EMFILE (errno 24) and ENOSPC (errno 28, outside pip: c1-nospace reads pip's own line). torch's C++
    # shared-memory manager reports errno in parentheses ("Too many open files (24)", libshm/core.cpp).
    ("f2-limit", "shape", (
        r"(?P<fd>Errno 24\] Too many open files)",
        r"(?P<fd>Too many open files \(24\))",
        r"Errno 28\] No space left on device(?:: '(?P<path>[^'\n]{1,1000})')?",
    )),
    # TLS verification (ssl's "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: ...", in pip, requests,
    # urllib, conda) and HTTP 429 (requests' raise_for_status: "429 Client Error: Too Many Requests for url: ...").
    ("f2-tls", "shape", (
        r"CERTIFICATE_VERIFY_FAILED",
        # git and curl (pip install git+https://..., hf's git clone): "SSL certificate problem: self-signed certificate
        # in certificate chain" / "unable to get local issuer certificate" (curl lib/vtls/openssl.c)
        r"(?P<git>SSL certificate problem: (?:self[- ]signed certificate|unable to get local issuer certificate))",
        r"Client Error: Too Many Requests for url: https?://(?P<host>[\w.:-]{1,100})",
    )),
    # A call between two installed packages that no longer agree (Python's own TypeError wording).
    ("f2-drift", "shape", (
        r"TypeError: (?P<fn>[\w.]{1,200})\(\) got an unexpected keyword argument '(?P<arg>\w{1,100})'",
        r"TypeError: (?P<fn>[\w.]{1,200})\(\) missing (?P<n>\d{1,2}) required (?:positional|keyword-only) argument",
    )),
    # torch/backends/cudnn/__init__.py _init ("cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0)
    # but found runtime version (8, 9, 2)"); cuDNN's status enum. (TensorFlow/JAX's "Loaded runtime CuDNN library" is
    # left out: the fix names torch's wheel.)
    ("f2-cudnn", "shape", (
        r"PyTorch was compiled\s{1,4}against \((?P<built>[\d, ]{1,20})\) but found runtime version \((?P<found>[\d, ]{1,20})\)",
        r"CUDNN_STATUS_VERSION_MISMATCH",
    )),
    # Kernel faults (cuda_errors.toml rows 715/716/719) in the runtime's, the driver API's and Triton's words.
    ("f2-kernel", "shape", (
        r"CUDA error: (?:misaligned address|an illegal instruction was encountered|unspecified launch failure)",
        r"Triton Error \[CUDA\]: (?:misaligned address|an illegal instruction was encountered|unspecified launch failure)",
        r"CUDA_ERROR_(?:MISALIGNED_ADDRESS|ILLEGAL_INSTRUCTION|LAUNCH_FAILED)",
    )),
    # --- tune-g2
    # torch/nn/modules/module.py load_state_dict: "Error(s) in loading state_dict for M:" then tab-indented detail lines
    # ("Missing key(s) in state_dict: ...", "Unexpected key(s) in state_dict: ...", "size mismatch for K: copying a param
    # with shape torch.Size([..]) from checkpoint, the shape in current model is torch.Size([..])."); the detail lines
    # carry no error word ("sure"): g2.state reads them only after a root error about a state_dict.
    ("g2-sd", "shape", (
        r"Error\(s\) in loading state_dict for (?P<model>[\w.]{1,120})",
        r"(?P<sure>(?P<side>Missing|Unexpected)) key\(s\) in state_dict: \"",
        r"(?P<sure>copying) a param with shape torch\.Size\(\[(?P<ckpt>[\d, ]{0,60})\]\) from checkpoint, the shape in "
        r"current model is torch\.Size\(\[(?P<cur>[\d, ]{0,60})\]\)",
    )),
    # transformers' loading errors (models/auto/tokenization_auto.py, tokenization_utils_base.py, configuration_utils.py,
    # utils/hub.py cached_file, modeling_utils.py, models/auto/auto_factory.py), raised only ("sure").
    ("g2-hf", "shape", (
        r"(?P<sure>Tokenizer class) (?P<cls>\w{1,80}) does not exist or is not currently imported",
        r"(?P<sure>Can't load) (?P<what>tokenizer|the configuration|config|feature extractor|image processor|processor)"
        r" (?:for|of) '(?P<repo>[^'\n]{1,300})'",
        r"(?P<sure>does not appear to have a file named) (?P<file>[\w.-]{1,120})",
        r"(?P<sure>Error no file named) (?P<files>[\w., -]{1,300}?) found in directory",
        r"(?P<sure>Unrecognized configuration class) <class '(?P<cfgpath>[\w.]{1,200})'> for this kind of AutoModel: "
        r"(?P<auto>\w{1,80})",
        r"(?P<sure>Unable to load weights from) (?P<lfs>pytorch) checkpoint file",
    )),
    # Quantized models: transformers quantizers' validate_environment (quantizer_awq.py "Loading an AWQ quantized model
    # requires auto-awq library (`pip install autoawq`)" / 5.x "... requires gptqmodel. Please install it with `pip install
    # gptqmodel`", quantizer_gptq.py "Loading a GPTQ quantized model requires optimum (`pip install optimum`) and auto-gptq
    # library (`pip install auto-gptq`)", modeling_gguf_pytorch_utils.py "requires both PyTorch and GGUF>=0.10.0 to be
    # installed", quantizer_hqq.py "A valid HQQ version (>=0.2.1) is not available", quantizer_bnb_*.py "... requires
    # Accelerate: `pip install accelerate` and the latest version of bitsandbytes"), modeling_utils.py from_pretrained
    # ("You can't pass `load_in_4bit`or `load_in_8bit` as a kwarg when passing `quantization_config`"), optimum
    # gptq/quantizer.py post_init_model ("Found modules on cpu/disk. Using Exllama or Exllamav2 backend requires all the
    # modules to be on GPU."), quantizer_finegrained_fp8.py ("FP8 quantized models is only supported on GPUs with compute
    # capability >= 8.9 (e.g 4090/H100), actual = `8.6`"), vllm/config.py _verify_quantization ("The quantization method
    # fp8 is not supported for the current GPU. Minimum capability: 89. Current capability: 86.").
    ("g2-quant", "shape", (
        r"(?P<sure>Loading an?) (?P<method>[A-Za-z][\w-]{1,20}) quantized model requires",
        r"GGUF>=(?P<gguf>\d{1,3}(?:\.\d{1,3}){0,2}) to be installed",
        r"(?P<sure>A valid HQQ version) \(>=(?P<hqq>[0-9]{1,3}(?:\.[0-9]{1,3}){0,2})\) is not available",
        r"(?P<bnb>Accelerate): `pip install accelerate` and the latest version of bitsandbytes",
        r"(?P<sure>You can't pass) `(?P<kwarg>load_in_4bit)` ?or `load_in_8bit` as a kwarg when passing `quantization_config`",
        r"(?P<sure>Found modules on cpu/disk)\. Using (?P<exllama>Exllama) or Exllamav2 backend requires all the modules",
        r"(?P<sure>FP8 quantized models is only supported on GPUs with compute capability) >= (?P<need>\d{1,2}\.\d)"
        r"[^\n]{0,40}?actual = `(?P<have>\d{1,2}\.\d)`",
        r"(?P<sure>The quantization method) (?P<qm>[\w-]{1,40}) is not supported for the current GPU\. Minimum "
        r"capability: (?P<need>\d{2,3})\. Current capability: (?P<have>\d{2,3})",
    )),
    # Non-CUDA backends: Intel Extension for PyTorch's version check (intel_extension_for_pytorch/__init__.py and its C++
    # twin: "ERROR! Intel® Extension for PyTorch* needs to work with PyTorch 2.6.*, but PyTorch 2.7.0+cpu is found."),
    # c10/core/impl/DeviceGuardImplInterface.h getDeviceGuardImpl ("PyTorch is not linked with support for xpu devices"),
    # torch/xpu/__init__.py _lazy_init ("Torch not compiled with XPU enabled"), torch_xla's runtime ("$PJRT_DEVICE is not
    # set.", pytorch/xla docs/pjrt.md).
    ("g2-ipex", "shape", (
        r"Extension for PyTorch\* needs to work with PyTorch(?:/libtorch)? (?P<want>\d{1,2}\.\d{1,3})\.\*, but "
        r"PyTorch(?:/libtorch)? (?P<have>\d{1,2}\.\d{1,3}[\w.+]{0,30}) is found",
    )),
    ("g2-dev", "shape", (
        r"PyTorch is not linked with support for (?P<dev>[a-z]\w{0,19}) devices",
        r"Torch not compiled with (?P<dev>XPU) enabled",
        r"PJRT_DEVICE(?P<pjrt> is not set)",
    )),
    # --- tune-g4
    # Triton front-end errors in a user's (or a library's) @triton.jit kernel, raised inside CompilationError
    # (triton/language/semantic.py arange/dot; triton/runtime/autotuner.py _bench; triton/runtime/jit.py run).
    # Each is raised, never logged, so each line carries a 'sure' group (g4_tables.toml [[triton]]).
    ("g4-triton", "shape", (
        r"(?P<sure>'s range must be a power of 2)",
        r"(?P<sure>'s arguments must be of type tl\.constexpr)",
        r"(?P<sure>\) must be >= 16!)",
        # (Triton 3.x words it as an AssertionError; read from that word: a trigger on "Input" would visit every INFO line)
        r"(?P<sure>AssertionError)(?:: |\(['\"])Input shapes should have M >= (?P<m>\d{1,3}), N >= (?P<n>\d{1,3}) and "
        r"K >= (?P<k>\d{1,3})",
        r"(?P<sure>First input shape) \((?P<dotdim>[^\n]{1,300}?) are not compatible for matmul",
        r"(?P<sure>Conflicting meta-parameters): (?P<names>\w{1,80}(?:, \w{1,80}){0,8})",
        r"(?P<sure>Keyword argument) (?P<kw>\w{1,80}) was specified but unrecognised",
    )),
    # Inductor's autotuner left with no candidate (torch/_inductor/select_algorithm.py AlgorithmSelectorCache,
    # NoValidChoicesError): a GEMM/conv with ATEN excluded, or a flex_attention template whose every config failed.
    ("g4-choices", "shape", (
        r"(?P<sure>No choices to select), please consider adding ATEN into (?P<cfg>max_autotune_(?:gemm|conv)_backends)",
    )),
    # Dynamo's wrappers: torch/_dynamo/exc.py TorchRuntimeError (utils.py run_node/get_fake_value: "Failed running
    # call_function ..."; the op failed on fake tensors, i.e. the model's own error) and InternalTorchDynamoError
    # (convert_frame.py: an exception inside Dynamo itself).
    ("g4-dynamo", "shape", (
        r"(?P<sure>TorchRuntimeError): Failed running (?P<op>call_function|call_method|call_module|get_attr)",
        r"(?P<sure>InternalTorchDynamoError): (?P<inner>[A-Za-z_]\w{0,60}(?:Error|Exception))",
    )),
    # FlexAttention's masks and score functions: functorch's vmap refusing data-dependent Python control flow or
    # .item() (aten/src/ATen/functorch/BatchRulesDynamic.cpp), which create_block_mask and eager flex_attention run
    # mask_mod/score_mod under; torch/nn/attention/flex_attention.py's BlockMask device check.
    ("g4-flex", "shape", (
        r"(?P<sure>vmap: It looks like you're) (?P<vmap>attempting to use a Tensor in some data-dependent control flow"
        r"|calling \.item\(\) on a Tensor|either \(1\) calling \.item\(\))",
        r"(?P<sure>Expect q/k/v and block_mask to be on the same device) but got (?P<qdev>[\w:]{1,20}) and "
        r"(?P<bdev>[\w:]{1,20})",
    )),
    # --- tune-g3
    # Autograd's own errors (g3_tables.toml [[autograd]]): torch/csrc/autograd/saved_variable.cpp (a saved tensor changed
    # in place; the graph's saved tensors already freed), torch/utils/checkpoint.py (non-reentrant recomputation that does
    # not match the forward), the anomaly mode's NaN check (torch/csrc/autograd/engine.cpp).
    ("g3-autograd", "shape", (
        r"(?P<inplace>modified by an inplace operation)(?:: \[(?P<tensor>[\w.]{1,60}) \[[\d, ]{0,80}\]\], which is "
        r"output \d{1,3} of (?P<fn>\w{1,80}), is at version (?P<have>\d{1,9}); expected version (?P<want>\d{1,9}))?",
        r"(?P<twice>Trying to backward through the graph a second time)",
        r"(?P<ckpt>Recomputed values for the following tensors have different metadata)",
        r"(?P<ckpt>A different number of tensors was saved during (?:the original )?forward and recomputation)",
        r"Function '(?P<fn>\w{1,80})' returned (?P<nan>nan) values in its (?P<idx>\d{1,3})th output",
    )),
    # Non-finite numbers a library refuses (g3_tables.toml [[numeric]]): torch.multinomial (generate(do_sample=True)),
    # DeepSpeed's fp16 loss scaler at its floor, Lightning's finite-loss check, DETR/DeiT/MAE's "Loss is nan" exit.
    # DeepSpeed's "OVERFLOW! ... Skipping step" and apex's "Gradient overflow.  Skipping step" are healthy fp16
    # training and match nothing here.
    ("g3-numeric", "shape", (
        # (tune-i5: also the wording without backticks, as pasted outside a code block or by the CUDA kernel)
        r"(?P<prob>probability tensor contains either `?inf`?, `?nan`? or element < 0)",
        r"(?P<prob>invalid multinomial distribution \((?:sum of probabilities <= 0|encountering probability entry < 0)\))",
        r"(?P<minscale>Current loss scale already at minimum)",
        r"The loss returned in `training_step` is (?:tensor\()?(?P<pl>-?nan|-?inf)",
        r"^(?P<sure>Loss is (?:-?nan|-?inf)), stopping",
    )),
    # Wrappers whose real error is inside them (g3_tables.toml [[wrapper]]): the DataLoader worker's re-raise
    # (torch/_utils.py ExceptionWrapper), ComfyUI's node failure (console, old dialog, error report), Ray's task error,
    # a process pool whose worker died (CPython concurrent.futures, joblib/loky), the DataLoader out of file descriptors.
    ("g3-wrap", "shape", (
        r"Caught (?P<inner>[A-Za-z_]\w{0,80}) in (?P<dl>DataLoader worker process|pin memory thread)",
        r"(?P<comfy>!!! Exception during processing !!!)(?: {1,4}(?P<msg>[^\n]{1,500}))?",
        r"(?P<comfy_old>Error occurred when executing) (?P<node>[\w .()|-]{1,100}):",
        r"\*\*Exception (?P<comfy_report>Message):\*\* (?P<msg>[^\n]{1,500})",
        r"RayTaskError\((?P<ray>\w{1,80})\)",
        # (raised only, and BrokenProcessPool's name has no error word: "sure")
        r"(?P<sure>BrokenProcessPool): (?P<pool>A process in the process pool was terminated abruptly|A child process "
        r"terminated abruptly)",
        r"(?P<sure>TerminatedWorkerError): (?P<pool>A worker process managed by the executor was unexpectedly terminated)",
        r"(?P<fds>Too many open files)\. Communication with the workers is no longer possible",
    )),
    # Bare process deaths, no Python traceback (g3_tables.toml [[death]]): glibc's heap checks (malloc_printerr, a line of
    # its own), the shell's signal reports (bash "Segmentation fault (core dumped)", its job line "<pid> Killed  cmd", zsh's
    # lower-case form), faulthandler's "Fatal Python error:", exit status 137 (128+SIGKILL), Kubernetes/Docker's OOMKilled.
    # Each form is the whole line or a job line, never a phrase in prose.
    ("g3-death", "shape", (
        r"^\s{0,4}(?:\*\*\* Error in `[^`\n]{1,300}': )?(?P<heap>free\(\): (?:invalid pointer|invalid size|invalid next size "
        r"\((?:fast|normal)\)|double free detected in tcache 2|corrupted unsorted chunks))(?::? 0x[0-9a-f]{1,16}(?: \*\*\*)?)?\s{0,4}$",
        r"^\s{0,4}(?:\*\*\* Error in `[^`\n]{1,300}': )?(?P<heap>double free or corruption \((?:out|top|!prev|fasttop)\))"
        r"(?::? 0x[0-9a-f]{1,16}(?: \*\*\*)?)?\s{0,4}$",
        r"^\s{0,4}(?:\*\*\* Error in `[^`\n]{1,300}': )?(?P<heap>corrupted size vs\. prev_size(?: in fastbins)?"
        r"|corrupted double-linked list|munmap_chunk\(\): invalid pointer|malloc_consolidate\(\): invalid chunk size"
        r"|malloc\(\): (?:corrupted top size|unaligned tcache chunk detected|memory corruption|invalid size \(unsorted\))"
        r"|realloc\(\): invalid (?:pointer|old size|next size))(?::? 0x[0-9a-f]{1,16}(?: \*\*\*)?)?\s{0,4}$",
        r"^\s{0,4}(?P<sig>Segmentation fault|Floating point exception|Aborted)(?: \(core dumped\))?\s{0,4}$",
        # bash's job report "<pid> <signal>  <command>": one literal-led pattern per signal (a look-behind has one width)
        *(r" (?P<sig>" + name + r")(?<=\d " + name + r") {1,40}\S"
          for name in ("Segmentation fault", "Floating point exception", "Aborted", "Killed")),
        r"^zsh: (?P<sig>segmentation fault|floating point exception|abort|killed) ",
        r"^Fatal Python error: (?P<sig>Segmentation fault|Floating point exception|Aborted)",
        r"(?P<sig>terminate called without an active exception)",
        r"^(?P<sig>Killed)\s{0,4}$",
        # exit status 137 = 128 + SIGKILL, as shells, docker compose, kubectl, IDEs and subprocess word it
        r"(?:[Ee]xited with|Exit) code:? {0,8}(?P<sure>137)\b",  # docker compose, kubectl ("exit code" alone: too common)
        r"non-zero exit status {0,4}(?P<sure>137)\b",
        r"exit_code[=:] {0,4}(?P<sure>137)\b",
        r"(?P<sure>OOMKilled)(?!\"?: ?false)",
    )),
    # --- tune-g1
    # API drift in calls: CPython's argument errors (Python/ceval.c, Python/getargs.c: "%U() got an unexpected keyword
    # argument '%S'", "%U() missing %i required positional argument(s): %U", "%U() takes %d positional arguments but %d
    # were given"); the callee's name is read from the text before the match (g1.callee).
    ("g1-kwarg", "shape", (
        # (tune-i5: a paste outside a code block turns the quotes typographic, and Markdown eats __init__'s underscores:
        # "Seq2SeqTrainingArguments.init() got an unexpected keyword argument ‘evaluation_strategy’")
        r"\(\) got an unexpected keyword argument ['‘](?P<arg>\w{1,100})['’]",
        # msgspec Structs (vLLM's SamplingParams): "TypeError: Unexpected keyword argument 'use_beam_search'"
        r"TypeError: Unexpected keyword argument '(?P<arg>\w{1,100})'",
    )),
    ("g1-sig", "shape", (
        r"\(\) missing (?P<missing>\d{1,2}) required (?:positional|keyword-only) arguments?: '(?P<arg>\w{1,100})'",
        r"\(\) takes (?:from \d{1,2} to )?(?P<n>\d{1,2}) positional arguments? but (?P<m>\d{1,2}) (?:were|was) given",
    )),
    # An interpreter too old for a package's code (PEP 604 unions, PEP 585 generics, PEP 584 dict union, newer syntax
    # inside site-packages; g1_py.pyold reads only the error the run died of, in an installed package's frame).
    ("g1-pyold", "shape", (
        r"TypeError: unsupported operand type\(s\) for \|: '(?P<l>\w{1,40})' and '(?P<r>\w{1,40})'",
        r"TypeError: '(?P<sub>type|ABCMeta|_SpecialGenericAlias)' object is not subscriptable",
        r"SyntaxError: (?P<syn>[^\n]{0,200})",
    )),
    # pip/_internal/resolution/resolvelib/requirements.py RequiresPythonRequirement ("Package %r requires a different
    # Python: %s not in %r").
    ("g1-pyreq", "shape", (
        r"Package '(?P<pkg>[A-Za-z0-9][\w.-]{0,80})' requires a different Python: (?P<py>[\d.]{1,20}) not in "
        r"'(?P<spec>[^'\n]{1,100})'",
    )),
    # A standard-library name or module newer than this Python (g1_tables.toml [[stdlib]]).
    ("g1-stdlib", "shape", (
        r"cannot import name '(?P<name>\w{1,80})' from '(?P<mod>typing|functools|itertools|enum|datetime)'",
        r"No module named '(?P<mod>tomllib|zoneinfo|graphlib)'",
    )),
    # torch/csrc/utils/tensor_numpy.cpp tensor_from_numpy / tensor_to_numpy (thrown as RuntimeError).
    ("g1-numpy", "shape", (
        r"RuntimeError: Numpy is not available",
    )),
    # --- tune-h3
    # A model config newer than the transformers that reads it (h3_tables.toml [[rope_message]]): the two-field
    # rope_scaling validation of transformers <= 4.42 (and of remote-code configuration files copied from it, some
    # with the typo "with with") refusing Llama 3.1's rope_type 'llama3', 'yarn', 'longrope'.
    ("h3-config", "shape", (
        r"`rope_scaling` must be a dictionary with (?:with )?two fields, `type` and `factor`, got (?P<got>\{[^\n]{1,600})",
        r"`rope_scaling`'s type field must be one of \[[\w', ]{1,200}\], got (?P<rtype>[\w-]{1,40})",
    )),
    # Two diffusion architectures in one graph (h3_tables.toml [[width]], [[layer]]): torch's F.linear shape error
    # (aten/src/ATen/native/LinearAlgebra.cpp: "mat1 and mat2 shapes cannot be multiplied (AxB and CxD)"); h3.sdmix reads
    # it only when B is a known text-conditioning width and (C, D) a known layer of another family.
    ("h3-sdmix", "shape", (
        r"mat1 and mat2 shapes cannot be multiplied \((?P<r1>\d{1,7})x(?P<w1>\d{1,6}) and (?P<w2>\d{1,6})x(?P<out>\d{1,6})\)",
    )),
    # A GPU out of memory in ComfyUI (its console and its error report "- **Exception Type:** torch.OutOfMemoryError");
    # h3.oom answers only with ComfyUI's frames or report.
    ("h3-oom", "shape", (
        r"\*\*Exception Type:\*\* (?:torch\.(?:cuda\.)?)?(?P<report>OutOfMemoryError)",
        r"OutOfMemoryError: (?:CUDA out of memory|Allocation on device)",
        r"CUDA out of memory\. Tried to allocate",
    )),
    # A library refusing to start because torch sees no GPU (h3_tables.toml [[nogpu]]).
    ("h3-nogpu", "shape", (
        r"(?P<pkg>Unsloth): No NVIDIA GPU found\? Unsloth currently only supports GPUs",
        r"(?P<pkg>Unsloth) cannot find any torch accelerator\? You need a GPU",
    )),
    # --- tune-h1
    # SDPA on cuDNN with no plan (h1_tables.toml [cudnn_sdpa]): torch's AT_CUDNN_FRONTEND_CHECK prefix
    # (aten/src/ATen/cudnn/Exceptions.h) and cudnn_frontend's plan/engine errors, with or without the prefix.
    ("h1-cudnn-sdpa", "shape", (
        r"cuDNN Frontend error: ",
        r"\[cudnn_frontend\] Error: No (?:valid )?(?:execution plans? (?:support the graph|built)|engine configs)",
    )),
    # torch.classes probed as a module (h1_tables.toml [streamlit]): Streamlit's watcher log line (logged with the
    # exception; "sure": it exists only when the probe failed), torch's own message for an unregistered custom class
    # (torch/csrc/jit/python/script_init.cpp via torch/_classes.py).
    ("h1-classes", "shape", (
        r"(?P<sure>Examining the path of) (?P<mod>torch\.classes) raised",
        r"Tried to instantiate class '(?P<cls>[\w.]{1,200})', but it does not exist! Ensure that it is registered via "
        r"torch::class",
    )),
    # transformers: a tokenizer with no pad token asked to pad (tokenization_utils_base.py), a decoder-only
    # ...ForSequenceClassification with no pad_token_id (modeling_gpt2.py, modeling_llama.py ...). Both are raised only
    # ("sure": pasted often without "ValueError:").
    ("h1-pad", "shape", (
        r"(?P<sure>Asking to pad but the tokenizer does not have a padding token)",
        r"(?P<sure>Cannot handle batch sizes > 1 if (?P<head>no) padding token is defined)",
    )),
    # transformers: every tokenizer file unresolved (connection errors are swallowed): tokenization_utils_base.py.
    ("h1-tokhub", "shape", (
        r"Can't load tokenizer for '(?P<repo>[^'\n]{1,300})'\. If you were trying to load it from "
        r"'https://huggingface\.co/models'",
    )),
    # PEFT's inject_adapter (peft/tuners/tuners_utils.py): target module names the model lacks (h1_tables.toml [[lora]]).
    ("h1-lora", "shape", (
        r"Target modules? (?P<targets>[^\n]{1,300}?) not found in the base model",
    )),
    # --- tune-h2
    # A 0-element weight reaching an op that checks its shape (h2_tables.toml [[zero3]]): DeepSpeed ZeRO-3 / FSDP
    # partitioned the parameter and it is used outside the engine (ATen Embedding.cpp, Convolution.cpp, layer_norm.h).
    ("h2-zero3", "shape", (
        r"RuntimeError: (?P<emb>'weight' must be 2-D)",
        r"RuntimeError: (?P<conv>weight should have at least three dimensions)",
        r"(?P<ln>Expected weight to be of same shape as normalized_shape), but got weight of shape \[0\]",
    )),
    # The launcher's variables missing (h2_tables.toml [[launcher_env]]): torch/distributed/rendezvous.py's env://
    # handler, or the script's own os.environ[...] raising KeyError.
    ("h2-env", "shape", (
        r"Error initializing torch\.distributed using env:// rendezvous: environment variable "
        r"(?P<var>RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|LOCAL_RANK) expected",
        r"KeyError: '(?P<var>RANK|LOCAL_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT)'\s{0,4}$",
        # the raising frame's own line, where a paste stops before the exception line
        r"raise _env_error\(\"(?P<var>RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|LOCAL_RANK)\"\)",
    )),
    # Meta's reference Llama loaders (h2_tables.toml [[mp]]): one process per consolidated.NN.pth shard.
    ("h2-mp", "shape", (
        r"Loading a checkpoint for MP=(?P<mp>\d{1,3}) but world size is (?P<ws>\d{1,4})",
    )),
    # onnxruntime-gpu's CUDA provider library needing a library of another CUDA major (h2_tables.toml [[ort]];
    # onnxruntime/core/session/provider_bridge_ort.cc). The name alone, so a line wrapped before it still matches.
    ("h2-ort", "shape", (
        r"libonnxruntime_providers_cuda\.so with error: (?P<lib>lib[\w+-]{1,60}\.so(?:\.\d{1,3}){1,3})",
    )),
    # uv's resolver: no wheel for the interpreter's platform tag (h2_tables.toml [[uvtag]]); uv prints it only when
    # resolution failed ("sure").
    ("h2-uvtag", "shape", (
        r"(?P<sure>matching platform tag) \(e\.g\., `(?P<tag>[\w.]{1,80})`\)",
    )),
    # --- tune-h4
    # Windows' ERROR_PROC_NOT_FOUND loading a DLL (torch/__init__.py _load_dll_libraries: 'Error loading "{dll}" or one of
    # its dependencies.', its err.strerror in the system's language; older torch printed the path unquoted). h4.win127
    # answers only where the line says WinError 127.
    ("h4-win127", "shape", (
        r"Error loading \"?(?P<path>[A-Za-z]:[\\/][^\"\n]{1,400}?\.dll)\"? or one of its dependencies",
    )),
    # TensorFlow stream_executor/cuda/cuda_dnn.cc and JAX/XLA cuda_dnn.cc ("Loaded runtime CuDNN library: 7.3.1 but source
    # was compiled with: 7.4.2", older: "7103 (compatibility version 7100) but source was compiled with 7005"), logged at
    # ERROR before cuDNN handles fail (sure: the line is the failure); torch/backends/cudnn/__init__.py before pytorch#80877
    # ("PyTorch was compiled against (8, 3, 2) but linked against (8, 0, 3)").
    ("h4-cudnn", "shape", (
        r"(?P<sure>Loaded runtime CuDNN library): (?P<found>\d{1,2}\.\d{1,2}\.\d{1,3}|\d{4,6})[^\n]{0,40}? but source "
        r"was compiled with:? (?P<built>\d{1,2}\.\d{1,2}\.\d{1,3}|\d{4,6})",
        r"PyTorch was compiled\s{1,4}against \((?P<tbuilt>[\d, ]{1,20})\) but linked against \((?P<tfound>[\d, ]{1,20})\)",
    )),
    # torch itself missing (CPython's "No module named 'torch'"): not installed in the Python that runs, or hidden by pip's
    # build isolation while an sdist that imports torch in setup.py builds (flash-attn, xformers, apex, mamba-ssm ...).
    ("h4-torchmod", "shape", (
        r"No module named '(?P<mod>torch)'",
    )),
    # vLLM V1's wrapper of a failed engine core start (vllm/v1/engine/core_client.py _wait_for_engine_startup / utils.py
    # wait_for_engine_startup: "Engine core initialization failed. See root cause above." [" Failed core proc(s): {...}"]).
    ("h4-vllmcore", "shape", (
        r"Engine core initialization failed\. See root cause above",
    )),
    # --- tune-h6
    # llama.cpp's loader (src/llama-model.cpp / llama-arch.cpp llm_arch_from_string: "unknown model architecture: '%s'";
    # src/llama-vocab.cpp: "unknown pre-tokenizer type: '%s'"), thrown while a GGUF loads and printed as "llama_model_load:
    # error loading model: ..." by llama.cpp and every program that embeds it (h6_tables.toml [[gguf_app]]). Only thrown
    # ("sure").
    ("h6-gguf", "shape", (
        r"(?P<sure>unknown model architecture): '(?P<arch>[\w.-]{1,60})'",
        r"(?P<sure>unknown pre-tokenizer type): '(?P<pre>[\w.-]{1,60})'",
    )),
    # A docker run option written after the image: Docker passes it to the container as its command. The image's entrypoint
    # script exec's it (bash builtin exec: "exec: --: invalid option", NVIDIA images' nvidia_entrypoint.sh), or, with no
    # entrypoint, runc cannot start it (moby: 'exec: "--gpus": executable file not found in $PATH'). Failures only ("sure").
    ("h6-dockopt", "shape", (
        r"(?P<sure>entrypoint\.sh: line \d{1,5}: exec): (?P<opt>-[\w=-]{0,40}): invalid option",
        r"(?P<sure>exec: \")(?P<opt>--?[a-z][\w=-]{0,40})\": executable file not found in \$PATH",
    )),
    # --- tune-h7
    # poetry's installer: no file of a locked package fits this interpreter/platform (python-poetry/poetry
    # src/poetry/installation/chooser.py Chooser.choose_for: RuntimeError(f"Unable to find installation candidates for
    # {package}"), package printed as "name (version)"); raised only ("sure"). h7_tables.toml [poetry], [[cuda_wheel]].
    ("h7-poetry", "shape", (
        r"(?P<sure>Unable to find installation candidates for) (?P<pkg>[A-Za-z0-9][\w.-]{0,100}) "
        r"\((?P<ver>[\w.!+-]{1,60})\)",
    )),
    # SIGILL: gdb's stop line ('Program received signal SIGILL, Illegal instruction.', 'Thread 1 "python3" received
    # signal SIGILL, ...'), the faulting instruction at gdb's "=>" pc marker in a disassembly (h7_tables.toml
    # [[arm_insn]]: LSE atomics an ARMv8.0 core lacks), and a shell's line (read only when the log names torch).
    ("h7-sigill", "shape", (
        r"received signal (?P<gdb>(?P<sure>SIGILL)), Illegal instruction",
        r"=> 0x[0-9a-f]{1,16}(?: <[^>\n]{1,400}>)?:\s{1,12}(?P<sure>(?P<insn>(?:ld|sw|ca|sd|ud)[a-z]{1,6}))\s",
        r"(?P<sure>Illegal instruction)(?: \(core dumped\))?\s{0,4}$",
    )),
    # bitsandbytes < 0.43 on native Windows (h7_tables.toml [bnb_windows]): its cuda_setup loading a Linux binary from a
    # Windows path ('bin C:\...\bitsandbytes\libbitsandbytes_cpu.so', 'CUDA SETUP: Loading binary C:\...\...so...': an ELF
    # file never loads on Windows, "sure"), or ctypes failing on a community build's DLL ("Could not find module
    # 'C:\...\bitsandbytes\cuda_setup\libbitsandbytes_cuda116.dll' (or one of its dependencies)").
    ("h7-bnbwin", "shape", (
        r"\\bitsandbytes\\(?:cuda_setup\\)?(?P<sure>libbitsandbytes_\w{1,40}\.so)",
        r"Could not find module '[^'\n]{1,400}?\\bitsandbytes\\cuda_setup\\(?P<dll>libbitsandbytes_\w{1,40}\.dll)'",
    )),
    # pip told to use only a download.pytorch.org CUDA index ("Looking in indexes: https://download.pytorch.org/whl/cu131",
    # pip/_internal/cli/req_command.py): h7.pyindex answers only when no such index exists (h7_tables.toml [pyindex]), where
    # every requirement fails ("sure"); an existing index reads as nothing.
    ("h7-pyindex", "shape", (
        r"Looking in indexes: https://download\.pytorch\.org/whl/(?P<sure>cu(?P<cu>\d{2,3}))/?\s{0,4}$",
    )),
    # A BLAS/LAPACK routine undefined in a library built against the system's BLAS (h7_tables.toml [blas]): the reference
    # BLAS/LAPACK names (s/d/c/z + routine, Fortran "_" or not; cblas_/LAPACKE_ C interfaces), e.g. "libtorch_cpu.so:
    # undefined symbol: sgesdd" (NVIDIA's Jetson torch wheels without OpenBLAS, pytorch/pytorch#51092).
    ("h7-blas", "shape", (
        r"undefined symbol: (?P<blas>(?:cblas_|LAPACKE_)?[sdcz](?:gesdd|gesvd|getrf|getrs|getri|geqrf|orgqr|ormqr|potrf|"
        r"potrs|potri|syevd|heevd|geev|gelsd|gelsy|gels|trtrs|gemm|gemv|trsm|syrk|axpy|dot|scal|nrm2|lamch)_?)(?![\w.@])",
    )),
    # torch.utils.cpp_extension.CUDAExtension's own source lines echoed in a traceback (torch <= 2.5 "library_paths(cuda=True)",
    # later 'library_paths(device_type="cuda")'; include_paths likewise): the only error they raise is _join_cuda_home's
    # "OSError: CUDA_HOME environment variable is not set" (no nvcc/CUDA toolkit), which a truncated paste loses. Echoed source
    # exists only in a traceback ("sure"); b3.nvcc answers (the package from the frames).
    ("h7-cudaext", "shape", (
        r"(?P<sure>library_dirs \+= library_paths)\((?:cuda=True|device_type=\"cuda\")\)",
        r"(?P<sure>include_dirs \+= include_paths)\((?:cuda=True|device_type=\"cuda\")\)",
    )),
    # --- tune-h5
    # transformers' trust_remote_code refusal where e4-remote does not read it: a local folder path with backslashes or
    # spaces (configuration_auto.py / dynamic_module_utils.py, transformers <= 4.3x: "Loading models\\X requires you to
    # execute the configuration file in that repo on your local machine") and the newer resolve_trust_remote_code wording
    # ("Loading this model requires you to execute custom code contained in the model repository on your local machine").
    ("h5-remote", "shape", (
        r"Loading (?P<wrepo>[^\n`]{1,200}?) requires you to execute (?:the (?:configuration|tokenizer|modeling) file "
        r"in that repo|custom code contained in the model repository)",
    )),
    # A paste that stops at the raising frame: the message only in that frame's source line, which a traceback prints
    # only when the exception passed through it ("sure"). torch/cuda/__init__.py _lazy_init (every torch 1.x-2.x:
    # raise AssertionError("Torch not compiled with CUDA enabled")); AUTOMATIC1111 launch.py before launch_utils.py
    # (run_python("import torch; assert torch.cuda.is_available(), 'Torch is not able to use GPU; ...'")).
    ("h5-raised", "shape", (
        r"raise AssertionError\(\s{0,2}[\"'](?P<sure>Torch not compiled with C)",
        r"run_python\([\"']import torch; assert torch\.cuda\.is_available\(\), [\"'](?P<sure>(?P<webui>Torch is not "
        r"able to use GPU))",
    )),
    # unsloth's patches of transformers/TRL/vLLM internals against another release of them: a patched function
    # (unsloth/models/_utils.py, llama.py: _unsloth_get_batch_samples, _unsloth_pre_compute_loss ...) called with another
    # argument list, and unsloth_zoo's own patching steps (compiler.py "Unsloth: Failed to create dynamic compiled
    # modules!", saving_utils.py "Unsloth: Failed to find `for shard_file ...`", vllm_utils.py "Unsloth: Failed to access
    # llm.llm_engine...", gguf "Unsloth: Failed to verify GGUF"). Not "Failed to make input require gradients" (data).
    ("h5-unsloth", "shape", (
        r"_unsloth_(?P<fn>\w{1,60})\(\) (?:takes \d{1,2} positional arguments? but \d{1,2} (?:was|were) given|got an "
        r"unexpected keyword argument '\w{1,60}'|missing \d{1,2} required (?:positional|keyword-only) arguments?)",
        r"Unsloth: Failed to (?P<step>create|find|access|patch|verify|compile)\b",
    )),
    # kohya-ss/sd-scripts' optional imports (library/train_util.py: raise ImportError("No bitsandbytes / bitsandbytesが
    # インストールされていないようです"), likewise xformers, wandb, lion_pytorch, dadaptation, prodigyopt, schedulefree).
    ("h5-kohya", "shape", (
        r"ImportError: No (?P<kpkg>[^/\n]{1,40}) / [\w -]{0,40}?[^\x00-\x7f]",  # ...がインストールされていないようです
    )),
    # pip's post-install conflict report (pip/_internal/commands/install.py _warn_about_conflicts: "{name} {version}
    # requires {req}, but you have {dep} {ver} which is incompatible.") where a companion of torch (torchvision,
    # torchaudio, torchtext: each release made for one torch) was preinstalled for another torch than the one installed.
    ("h5-companion", "shape", (
        r"torch(?P<comp>vision|audio|text) (?P<cv>\d[\w.+]{0,40}) requires torch==(?P<tv>\d[\w.+]{0,40}), but you have "
        r"torch (?P<have>\d[\w.+]{0,40}) which is incompatible",
    )),
    # sgl-kernel's loader (sgl_kernel/load_utils.py _load_architecture_specific_ops: "[sgl_kernel] CRITICAL: Could not
    # load any common_ops library!", raised as ImportError): the library was found but failed to load, which hides the
    # undefined torch symbol of a build made for another torch (sgl-project/sglang#17460: torch 2.10 under a kernel built
    # for 2.9).
    ("h5-sglops", "shape", (
        r"\[sgl_kernel\] CRITICAL: (?P<sure>Could not load any common_ops library)",
    )),
    # --- tune-i2
    # transformers' ImportError for an accelerate that is missing or older than its ACCELERATE_MIN_VERSION (utils/
    # import_utils.py is_accelerate_available): modeling_utils.py "Using `low_cpu_mem_usage=True` or a `device_map` requires
    # Accelerate: `pip install 'accelerate>=0.26.0'`" (older: `pip install accelerate`), the quantizers' "Using `bitsandbytes`
    # 8-bit quantization requires accelerate: ...". Raised only, but read as an error line (ImportError / a node report).
    # (training_args.py's "Using the `Trainer` with `PyTorch` requires `accelerate>=0.26.0`" stays b2.advice's.)
    ("i2-accel", "shape", (
        r"requires (?:Accelerate|accelerate): `pip install ['\"]?accelerate(?:>=(?P<min>[\d.]{1,12}))?",
    )),
    # AUTOMATIC1111 / Forge's installer (modules/launch_utils.py prepare_environment, older launch.py: run(f'"{python}" -m
    # {torch_command}', "Installing torch and torchvision", "Couldn't install torch", live=True) raising RuntimeError
    # "Couldn't install torch."): printed only when pip failed ("sure"); i2.webui_torch gives the webui's Python 3.10.
    ("i2-webui-torch", "shape", (
        r"(?P<sure>Couldn't install torch)[.\"']",
    )),
    # --- tune-i3
    # Serving engines that refuse a model or a memory plan at start-up (cycle 12, frequent headlines):
    # vLLM's model registry (vllm/model_executor/models/registry.py _raise_for_unsupported: "Model architectures
    # ['Qwen3ForCausalLM'] are not supported for now. Supported architectures: [...]", also inside pydantic's
    # "Value error, ..."), SGLang's older registry (sglang/srt/models/registry.py / model_loader: "Unsupported
    # architectures: X. Supported list: [...]"); TGI's warm-up (text-generation-inference server/text_generation_server/
    # models/flash_causal_lm.py warmup: "Not enough memory to handle 4096 prefill tokens. You need to decrease
    # `--max-batch-prefill-tokens`", older "... handle 16000 total tokens with 4096 prefill tokens. You need to decrease
    # `--max-batch-total-tokens` or `--max-batch-prefill-tokens`"). Raised only ("sure").
    ("i3-serve", "shape", (
        r"(?P<sure>Model architectures \[)(?P<archs>[^\]\n]{1,300})\] are not supported for now",
        r"(?P<sure>Unsupported architectures: )(?P<sarch>[A-Za-z][\w.-]{0,120})\. Supported list",
        r"(?P<sure>Not enough memory to handle )(?:(?P<total>\d{1,9}) total tokens with )?(?P<prefill>\d{1,9}) prefill "
        r"tokens\. You need to decrease",
        # vLLM's config check (vllm/config.py _get_and_verify_max_len, PRs #7080/#20904): "User-specified max_model_len
        # (131072) is greater than the derived max_model_len (max_position_embeddings=32768 or model_max_length=None in
        # model's config.json). ... set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
        r"(?P<sure>User-specified max_model_len \()(?P<user>\d{1,9})\) is greater than the derived max_model_len "
        r"\((?P<derived>[^)\n]{1,200})\)",
    )),
    # --- tune-i4
    # torch's ROCm build finds no usable AMD GPU: c10/cuda/CUDAFunctions.cpp "No CUDA GPUs are available", hipified
    # (torch/cuda/__init__.py _lazy_init). Its CUDA sibling is c4-nogpu's. i4_tables.toml [nohip].
    ("i4-nohip", "shape", (
        r"No (?P<hip>HIP) GPUs are available",
    )),
    # --- tune-i1
    # PyTorch's own checks pasted without their exception name (i1.line; the exception lines themselves are read by
    # i1.root from the root error, no trigger): the conv's channel check (aten/src/ATen/native/Convolution.cpp
    # check_shape_forward: "Given groups=1, weight of size [64, 3, 7, 7], expected input[1, 4, 224, 224] to have 3
    # channels, but got 4 channels instead") and view's own remedy sentence (TensorShape.cpp view_impl).
    ("i1-line", "shape", (
        r"Given groups=\d{1,6}, (?P<conv>[^\n]{1,300})",
        r"(?P<view>Use \.reshape\(\.\.\.\) instead)",
    )),
    # --- tune-i5
    # Training/generation stops the HF stack raises only when it fails ("sure"): transformers' Trainer.__init__
    # (src/transformers/trainer.py, _is_quantized_and_base_model and not _is_peft_model: "You cannot perform fine-tuning
    # on purely quantized models. Please attach trainable adapters on top of the quantized model to correctly perform
    # fine-tuning."). (torch's multinomial inf/nan stays g3-dtype's: tune-i5 widened its wording.)
    ("i5-train", "shape", (
        r"(?P<sure>You cannot perform fine-tuning on purely quantized models)",
    )),
    # --- tune-j1
    # A tensor laid out in memory other than the op needs (round 12 train): ATen's view_impl (aten/src/ATen/native/
    # TensorShape.cpp: "view size is not compatible with input tensor's size and stride (at least one dimension spans
    # across two contiguous subspaces). Use .reshape(...) instead."), checkContiguous (aten/src/ATen/TensorUtils.cpp:
    # "Expected contiguous tensor, but got non-contiguous tensor for argument #1 'self' (while checking arguments for
    # ...)"), the extensions' CHECK_CONTIGUOUS macro (TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")),
    # torch.from_numpy's "At least one stride in the given numpy array is negative" (torch/csrc/utils/tensor_numpy.cpp)
    # and Cython's "ndarray is not C-contiguous". (cuDNN RNN's "rnn: hx is not contiguous" is left out: its pattern made
    # the trigger cover pick a common letter.)
    ("j1-contig", "shape", (
        r"(?P<sure>view size is not compatible with input tensor's size and stride)",
        r"(?P<sure>Expected contiguous tensor, but got non-contiguous tensor) for argument #\d{1,2} '(?P<arg>\w{1,40})'",
        r"must be contiguous",
        r"(?P<sure>At least one stride in the given numpy array is negative)(?P<np>)",
        r"(?P<np>ndarray is not (?:C|Fortran)-contiguous)",
    )),
    # vLLM's compressed-tensors scheme check (vllm/model_executor/layers/quantization/compressed_tensors/
    # compressed_tensors.py _check_scheme_supported: RuntimeError("Quantization scheme is not supported for ", "the
    # current GPU. Min capability: 80. ", "Current capability: 70.") printed as a tuple). Its sibling of
    # vllm/config.py _verify_quantization is g2-quant's, answered by j1.capability too.
    ("j1-qcap", "shape", (
        r"(?P<sure>Quantization scheme is not supported for )', 'the current GPU\. Min capability: (?P<need>\d{2,3})\. ', "
        r"'Current capability: (?P<have>\d{2,3})",
    )),
    # DeepSpeed's launcher (deepspeed/launcher/launch.py sigkill_handler: logger.error(f"{cmd} exits with return code =
    # {process.returncode}")) for a rank killed by SIGKILL (-9): on Linux the kernel's OOM killer (host RAM), as torchrun's
    # "exitcode: -9" that the oom unit reads; c2.launch leaves -9 to that reading.
    ("j1-sigkill", "shape", (
        r"(?P<sure>exits with return code = -9)\b",
    )),
    # vLLM V1's warm-up out of memory (vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run / _dummy_pooler_run:
    # "CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please try lowering `max_num_seqs` or
    # `gpu_memory_utilization` when initializing the engine."): h3.oom's vLLM row answers (its frames name vllm).
    ("j1-vllm-oom", "shape", (
        r"(?P<sure>CUDA out of memory occurred when warming up) (?:the )?\w{1,20}",
    )),
    # --- tune-j2
    # pip cannot remove the installed copy of a distribution it is upgrading because nothing recorded its files: a
    # distutils/setup.py install (src/pip/_internal/req/req_uninstall.py UninstallPathSet.from_dist: "Cannot uninstall
    # {!r}. It is a distutils installed project and thus we cannot accurately determine which files belong to it which
    # would lead to only a partial uninstall."; pip >= 23.1 exceptions.py LegacyDistutilsInstall, "Cannot uninstall X
    # 0.2") or an OS package (exceptions.py UninstallMissingRecord, reference "uninstall-no-record-file": "Cannot
    # uninstall prettytable 3.12.0" / "hint: The package was installed by debian."). pip's error lines only ("sure").
    ("j2-uninst", "shape", (
        r"(?P<sure>Cannot uninstall) '(?P<dist>[A-Za-z0-9][\w.-]{0,100})'\. It is a distutils installed",
        r"(?P<sure>Cannot uninstall) (?P<dist>[A-Za-z0-9][\w.-]{0,100}) (?P<ver>\d[\w.+!-]{0,40})\s{0,4}$",
    )),
    # A launcher's git clone/fetch of a repository it needs failed (AUTOMATIC1111 stable-diffusion-webui
    # modules/launch_utils.py git_clone: run(... f"Couldn't clone {name}") / f"Couldn't fetch {name}", raised as
    # RuntimeError; forks: Forge, amdgpu/ZLUDA, OpenVINO, Colab notebooks), and git's own "fatal: repository 'URL' not
    # found" (a repository removed, renamed or made private; j2_tables.toml [[gone]] has the known removals).
    ("j2-clone", "shape", (
        r"(?P<sure>Couldn't (?P<op>clone|fetch)) (?P<name>[A-Z][\w -]{0,40})\.",
        r"(?P<sure>fatal: repository) '(?P<url>https?://[^'\s]{1,300})' not found",
    )),
    # A transformers Cache class missing a member that newer releases removed, called by model code written for an
    # older release (Hub remote code under transformers_modules, a ComfyUI node): "AttributeError: 'DynamicCache' object
    # has no attribute 'get_max_length'" (j2_tables.toml [[cache]]).
    ("j2-cache", "shape", (
        r"'(?P<cls>[A-Z]\w{0,30}Cache)' object has no attribute '(?P<name>\w{1,80})'",
        # a paste that stops at the calling frame's source line (printed only when the exception passed through it)
        r"(?P<sure>past_key_values)\.(?P<name>get_max_length|seen_tokens|get_usable_length|to_legacy_cache)\b",
    )),
    # apt's resolver report (apt-pkg/algorithms.cc / apt-private/private-output.cc ShowBroken: "The following packages
    # have unmet dependencies:", then " pkg : Depends: dep (>= v) but it is not installable" / "... but 2.31-13+deb11u7
    # is to be installed"; continuation lines omit "pkg :") for NVIDIA driver / CUDA packages from a repository that
    # does not fit the system, and apt-get's own "E: Unmet dependencies. Try 'apt-get -f install' with no packages (or
    # specify a solution)." after an interrupted install. Printed only when apt gives up ("sure"). "but it is not going
    # to be installed" is a consequence of another line, not read.
    ("j2-apt", "shape", (
        r"(?P<sure>Depends:) (?P<dep>[a-z0-9][\w.+-]{0,80})(?: \((?P<op>[<>=]{1,2}) (?P<want>[\w.:~+-]{1,40})\))? "
        r"but (?:(?P<have>[\w.:~+-]{1,60}) is to be installed|it is (?P<none>not installable))",
        r"(?P<sure>E: Unmet dependencies)\. Try '(?P<fixcmd>apt-get -f install|apt --fix-broken install)' with no packages",
    )),
    # A paste that stops inside torch's CUDA initialisation, before the error line (h5-raised reads the one that stops at
    # the raising line): the frames torch/cuda/__init__.py "in _lazy_init" (every torch 1.x-2.x: current_device(),
    # .cuda(), torch.device('cuda') first call it), and ComfyUI's start-up device lookup (comfy/model_management.py:
    # "total_vram = get_total_memory(get_torch_device()) / (1024 * 1024)" at import, get_torch_device ->
    # torch.cuda.current_device()), which a traceback prints only when the exception passed through them ("sure"; the
    # reader answers only when no exception line follows).
    # ComfyUI's node report of a GPU out of memory in the message-only form (execution.py: logging.error(f"!!! Exception
    # during processing !!! {ex}") with torch's OutOfMemoryError text, c10/cuda/CUDACachingAllocator.cpp "Allocation on
    # device ..."): answered as h3's ComfyUI out-of-memory reading.
    ("j2-comfyoom", "shape", (
        r"!!! Exception during processing !!! (?P<sure>Allocation on device)",
    )),
    # --- tune-i7
    # torch/cuda/__init__.py _lazy_init: raise AssertionError("Torch not compiled with CUDA enabled") (torch 1.x-2.x), the
    # error a CPU-only torch gives at the first CUDA call; i7.nocuda answers with the program's own interpreter read from
    # the frames (python_embeded, venv, installer_files\env, a conda env). i7_tables: none (layouts in i7.py).
    ("i7-nocuda", "shape", (
        r"(?P<sure>Torch not compiled with CUDA enabled)",
    )),
    # A paste that stops inside CUDA's start-up before any error line: torch's _lazy_init/current_device frames, or the
    # import-time device probe of ComfyUI (comfy/model_management.py get_torch_device) and Fooocus
    # (ldm_patched/modules/model_management.py). i7.cut answers only when the paste holds no error line.
    ("i7-cut", "shape", (
        r"\\torch\\cuda\\__init__\.py\", line \d{1,5}, in (?P<sure>_lazy_init|current_device|_check_driver)\b",
        r"/torch/cuda/__init__\.py\", line \d{1,5}, in (?P<sure>_lazy_init|current_device|_check_driver)\b",
        r"\\model_management\.py\", line \d{1,5}, in (?P<sure>get_torch_device|<module>)",
        r"/model_management\.py\", line \d{1,5}, in (?P<sure>get_torch_device|<module>)",
    )),
    # --- tune-k1
    # A chat request refused for want of a server/tokenizer setting (round 13 train, k1.serve): vLLM's OpenAI server
    # (vllm/entrypoints/openai/serving_chat.py: '"auto" tool choice requires --enable-auto-tool-choice and
    # --tool-call-parser to be set'; cli_args.py validate_parsed_serve_args: TypeError("Error: --enable-auto-tool-choice
    # requires --tool-call-parser")), no chat template (vllm/entrypoints/chat_utils.py apply_hf_chat_template: "As of
    # transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the
    # tokenizer does not define one."; transformers tokenization_utils_base.py get_chat_template: "Cannot use chat
    # template functions because tokenizer.chat_template is not set and no template argument was passed!";
    # processing_utils.py apply_chat_template: "Cannot use apply_chat_template because this processor does not have a
    # chat template."). Raised only, never logged as a notice: "sure".
    ("k1-serve", "shape", (
        r'(?P<sure>"auto" tool choice requires --enable-auto-tool-choice)(?P<tool>)',
        r"(?P<sure>Error: --enable-auto-tool-choice requires --tool-call-parser)(?P<noparser>)",
        # (a missing chat template is k2-chat's: tune-k1 and tune-k2 both read it; k2 owns the class)
    )),
    # --- tune-k2
    # CMake's Visual Studio generator with nvcc found but not CUDA's MSBuild integration (Kitware CMake Modules/
    # CMakeDetermineCompilerId.cmake: "No CUDA toolset found."; Source/cmGlobalVisualStudio10Generator.cxx: "given toolset
    # cuda=... cannot detect Visual Studio integration files in path"), and MSBuild's own error for a .vcxproj importing
    # the missing file (MSB4019 'The imported project "...\BuildCustomizations\CUDA 12.4.props" was not found.').
    ("k2-vsint", "shape", (
        r"(?P<sure>No CUDA toolset found)\.",
        r"(?P<sure>cannot detect Visual Studio integration files) in path",
        r"BuildCustomizations[\\/]{1,2}CUDA ?(?P<ver>\d{1,2}\.\d)\.(?:props|targets)\"? (?P<sure>was not found)",
    )),
    # conda/mamba's solver refusing a package for a virtual package (docs.conda.io "Managing virtual packages"): mamba 1's
    # "nothing provides __cuda needed by pytorch-1.13.1-cuda112py310h...", "package cudatoolkit-11.6.0-h... has constraint
    # __cuda >=11.6.0 conflicting with __cuda-10.2-0", libmamba 2 / conda-libmamba-solver's "__cuda =* *, which is
    # missing on the system" / "__cuda >=12, which is missing on the system". k2.virtual answers. (Classic conda's
    # "pytorch -> __cuda[version='>=11.0']" is left out: the driver's version stands on another line.)
    ("k2-virtual", "shape", (
        r"(?P<sure>nothing provides) (?P<vp>__cuda|__glibc|__osx)(?: ?>=(?P<need>[\d.]{1,12}))? needed by "
        r"(?P<pkg>[\w.+-]{1,120})",
        r"(?P<pkg>[\w.+-]{1,120}) (?P<sure>has constraint) (?P<vp>__cuda|__glibc|__osx) ?>=? ?(?P<need>[\d.]{1,12}) "
        r"conflicting with __(?:cuda|glibc|osx)-(?P<have>[\d.]{1,12})",
        r"(?P<vp>__cuda|__glibc|__osx)(?: =\* \*| >=? ?(?P<need>[\d.]{1,12})[\w.*]{0,12})?, (?P<sure>which is missing on the "
        r"system)",
    )),
    # transformers' apply_chat_template with no template (tokenization_utils_base.py get_chat_template: "Cannot use chat
    # template functions because tokenizer.chat_template is not set and no template argument was passed!", 4.43's
    # "Cannot use apply_chat_template() because ..."; processing_utils.py: "No chat template is set for this processor.")
    # and vLLM's server answer to the same (vllm/entrypoints/chat_utils.py: "As of transformers v4.44, default chat
    # template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.").
    ("k2-chat", "shape", (
        r"(?P<sure>Cannot use (?:chat template functions|apply_chat_template\(\)) because "
        r"(?:tokenizer|processor)\.chat_template is not set)",
        r"(?P<sure>No chat template is set for this (?:processor|tokenizer))\. Please either set the `chat_template`",
        r"(?P<sure>As of transformers v4\.44, default chat template is no longer allowed)",
        # processing_utils.py apply_chat_template (tune-k1's sibling): "Cannot use apply_chat_template because this
        # processor does not have a chat template."
        r"(?P<sure>Cannot use apply_chat_template because this processor does not have a chat template)",
    )),
    # --- tune-i6
    # llama.cpp's CUDA buffer allocation failing (ggml/src/ggml-cuda/ggml-cuda.cu
    # ggml_backend_cuda_buffer_type_alloc_buffer: "allocating %.2f MiB on device %d: cudaMalloc failed: %s"), in
    # llama.cpp, ollama's runner and llama-cpp-python: i6.ggml answers with that program's layer / context knobs.
    ("i6-ggml", "shape", (
        r"(?P<sure>cudaMalloc failed: out of memory)",
        # the line under ggml's "CUDA error: out of memory" (ggml_cuda_error: "  current device: %d, in function %s at
        # %s:%d"), whose path says which program built llama.cpp; only in ggml's allocators (ggml_cuda_pool_malloc_vmm,
        # alloc, ...): the same line under other CUDA errors (a launch timeout in ggml_backend_cuda_synchronize) is not
        r"(?P<sure>current device: \d{1,2}, in function \w{0,40}alloc\w{0,40} at )[^\n]{0,300}?ggml",
    )),
    # TGI's router when the warm-up batch did not fit (text-generation-inference router/src/main.rs: panic "Unable to
    # warmup model: Generation(...)" with torch's allocator message inside); the "Not enough memory to handle N
    # prefill tokens" form is i3-serve's.
    ("i6-tgi", "shape", (
        r"(?P<sure>Unable to warmup model): \w{1,20}\(\"(?:Allocation on device|CUDA out of memory)",
    )),
    # --- tune-l3
    # Triton's C launcher build (python/triton/common/build.py _build in 2.x, python/triton/runtime/build.py _build in
    # 3.x: cc_cmd = [cc, src, "-O3", ...] with src = <tmpdir>/main.c, run by subprocess.check_call, whose
    # CalledProcessError names the command but not the compiler's message), and its frame when only the frames remain
    # (l3.launcher takes a frame only when the root error follows it within a traceback's length).
    ("l3-launcher", "shape", (
        r"(?P<sure>CalledProcessError): Command '\['[^',\n]{1,200}', '[^',\n]{1,300}[\\/]main\.c', '-O3'",
        r"/triton/common/build\.py\", line \d{1,6}, in (?P<sure>_build)",
        r"/triton/runtime/build\.py\", line \d{1,6}, in (?P<sure>_build)",
    )),
    # Slurm's refusal of a job step (src/srun/step_ctx.c / launch: "srun: error: Unable to create step for job %u: %m"):
    # srun run inside an allocation inherits its SLURM_* variables. l3.step adds that to errors.slurm's reading. A failure
    # line only ("sure"), also where its reason reads like a notice ("... is not available").
    ("l3-step", "shape", (
        r"(?P<tool>srun): error: (?P<msg>(?P<sure>Unable to create step) for job \d{1,12}: [^\n]{1,200})",
    )),
    # SIGBUS as UCX's error handler (ucs/debug/debug.c: "Caught signal %d (%s)", BUS_ADRERR "nonexistent physical
    # address") and CPython's faulthandler ("Fatal Python error: Bus error") print it: shared memory ran out.
    ("l3-bus", "shape", (
        r"(?P<sure>Caught signal 7) \(Bus error",
        r"^(?P<sure>Fatal Python error: Bus error)",
    )),
    # --- tune-l2
    # ComfyUI's prompt validation of a combo input (execution.py validate_inputs: "Value not in list" + details
    # f"{x}: '{val}' not in {list_info}", list_info = str(options) or "(list of length N)"). l2.comfy answers.
    ("l2-comfy", "shape", (
        r"(?P<sure>Value not in list): (?P<input>\w{1,60}): '(?P<val>[^'\n]{0,300})' not in "
        r"(?:\[|\(list of length (?P<n>\d{1,6})\))",
    )),
    # transformers' fast tokenizer built from a slow one without its backend (tokenization_utils_fast.py __init__:
    # "You need to have sentencepiece installed to convert a slow tokenizer to a fast one."; 4.46+ and v5's
    # TokenizersBackend: "You need to have sentencepiece or tiktoken installed ..."). l2.tokconv answers.
    ("l2-tokconv", "shape", (
        # ("to \w+" not "to convert": the word "convert" fills Dynamo's symbolic_convert.py log lines, and the trigger
        # chooser would take it as this pattern's trigger)
        r"(?P<sure>You need to have sentencepiece(?: or tiktoken)? installed) to \w{1,12} a slow tokenizer",
    )),
    # A library a binding opens itself with dlopen (NVIDIA cuda-python's cuPythonInit: "RuntimeError: Failed to dlopen
    # libcuda.so"; "failed to dlopen libnvidia-ml.so.1" of NVML wrappers). libs.answer reads the library (l2.dlopen).
    ("l2-dlopen", "shape", (
        r"Failed to dlopen (?P<lib>lib[\w+-]{1,80}\.so(?:\.\d{1,4}){0,3})",
        r"failed to dlopen (?P<lib>lib[\w+-]{1,80}\.so(?:\.\d{1,4}){0,3})",
    )),
    # A kernel module the kernel refuses for its signature (Secure Boot / module.sig_enforce; l2_tables.toml [[mok]]):
    # kmod's modprobe "could not insert 'nvidia': Key was rejected by service" (EKEYREJECTED) / "Required key not
    # available" (ENOKEY) / "Operation not permitted" (EPERM under lockdown), insmod's "could not insert module
    # nvidia.ko: ...", the kernel's lockdown line, nvidia-installer's "not signed by a key that is trusted by the kernel",
    # its "Kernel module load error: ..." and its generic "Unable to load the kernel module 'nvidia.ko'". l2.secboot.
    ("l2-secboot", "shape", (
        r"ERROR: could not insert (?:'(?P<mod>[\w-]{1,60})'|module (?P<ko>[\w./-]{1,200})): (?P<sure>(?P<why>Key was rejected "
        r"by service|Required key not available|Operation not permitted))",
        r"(?P<sure>Lockdown): [\w.-]{1,60}: (?P<why>unsigned module loading) is restricted",
        r"(?P<sure>The kernel module failed to load, because it was not signed) by a key",
        r"(?P<sure>Kernel module load error): (?P<why>Key was rejected by service|Required key not available|Operation "
        r"not permitted)",
        r"(?P<sure>Unable to load the kernel module) '(?P<ko>[\w.-]{1,60})'",
    )),
    # transformers' bitsandbytes quantizers refusing the environment (quantizers/quantizer_bnb_4bit.py /
    # quantizer_bnb_8bit.py validate_environment: "Using `bitsandbytes` 4-bit quantization requires the latest version of
    # bitsandbytes: `pip install -U bitsandbytes`", "... requires Accelerate: ..."). l2.bnbmac answers on macOS only (no
    # CUDA: the upgrade the message asks for cannot help); elsewhere the "advice" shape answers with the upgrade.
    ("l2-bnbmac", "shape", (
        r"(?P<sure>Using `bitsandbytes` (?P<bits>4|8)-bit quantization requires)",
    )),
    # --- tune-l1
    # A request longer than the context a serving engine was started with (round 14 train, l1.ctx; l1_tables.toml
    # [engine] has the sources): vLLM's OpenAI server (vllm/entrypoints/openai/serving_engine.py _validate_input:
    # "This model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in the messages,
    # 10000 in the completion)." and its siblings "... tokens in the messages," / "your prompt contains at least N input
    # tokens", the OpenAI API's own "your messages resulted in N tokens"), vLLM's engine (v1/engine/processor.py
    # _validate_model_input: "The decoder prompt (length 44) is longer than the maximum model length of 16.", v0's
    # "Prompt length of N is longer than the maximum model length of M"), TGI/TEI's router (router/src/validation.rs
    # ValidationError: "`inputs` must have less than 2048 tokens. Given: 2222", "`inputs` tokens + `max_new_tokens`
    # must be <= 2048. Given: ..."), SGLang (srt/managers/tokenizer_manager.py _validate_one_request: "The input (N
    # tokens) is longer than the model's context length (M tokens).", "Requested token count exceeds the model's maximum
    # context length of M tokens"), llama.cpp's server ("the request exceeds the available context size, try
    # increasing it", exceed_context_size_error). Raised/answered only ("sure"); the tokenizer's own warning "Token
    # indices sequence length is longer than the specified maximum sequence length" is not one of them.
    ("l1-ctx", "shape", (
        r"(?P<sure>This model's maximum (?:context|embedding input) length is )(?P<limit>\d{1,9}) tokens"
        r"(?P<tail>[^\n]{0,400})",
        r"(?P<sure>The (?:decoder|encoder) prompt \(length )(?P<asked>\d{1,9})\) is longer than the maximum model "
        r"length of (?P<limit>\d{1,9})(?P<vllm>)",
        r"(?P<sure>Prompt length of )(?P<asked>\d{1,9}) is longer than the maximum model length of (?P<limit>\d{1,9})"
        r"(?P<vllm>)",
        r"(?P<sure>`inputs` must have less than )(?P<limit>\d{1,9}) tokens\. Given: (?P<asked>\d{1,9})(?P<tgi>)",
        r"(?P<sure>`inputs` tokens \+ `max_new_tokens` must be <= )(?P<limit>\d{1,9})\. Given: (?P<prompt>\d{1,9}) "
        r"`inputs` tokens and (?P<comp>\d{1,9}) `max_new_tokens`(?P<tgi>)",
        r"(?P<sure>The input \()(?P<asked>\d{1,9}) tokens\) is longer than the model's context length \("
        r"(?P<limit>\d{1,9}) tokens\)(?P<sglang>)",
        r"(?P<sure>Requested token count exceeds the model's maximum context length of )(?P<limit>\d{1,9}) tokens"
        r"(?P<sglang>)",
        r"(?P<sure>request exceeds the available context size)(?P<llamacpp>)",
    )),
    # torch's determinism switch meeting an op without a deterministic kernel (aten/src/ATen/Context.cpp
    # alertNotDeterministic: "index_add_cuda_ does not have a deterministic implementation, but you set
    # 'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation[, or you can use
    # the 'warn_only=True' option], ..."; torch 1.7's "... but you set 'torch.set_deterministic(True)'") or a cuBLAS GEMM
    # without a fixed workspace (Context.cpp alertCuBLASConfigNotDeterministic: "Deterministic behavior was enabled with
    # either `torch.use_deterministic_algorithms(True)` or `at::Context::setDeterministicAlgorithms(true)`, but this
    # operation is not deterministic because it uses CuBLAS and you have CUDA >= 10.2. ... CUBLAS_WORKSPACE_CONFIG=:4096:8
    # or CUBLAS_WORKSPACE_CONFIG=:16:8"). Raised only (warn_only prints "UserWarning: ..." with the same words: the
    # reader answers only an error line). l1.determinism.
    ("l1-determ", "shape", (
        r"(?P<sure>does not have a deterministic implementation, but you set )'torch\.(?P<api>use_deterministic_algorithms"
        r"|set_deterministic)\(True\)'",
        r"(?P<sure>Deterministic behavior was enabled with either )[^\n]{0,200}?because it uses (?P<cublas>CuBLAS)",
    )),
    # Hugging Face tokenizers (Rust, PyO3: a plain Exception carrying serde_json's message) reading tokenizer.json:
    # "Exception: expected value at line 1 column 1" (not JSON at all: a Git LFS pointer "version https://git-lfs...",
    # an HTML page), "Exception: EOF while parsing a value at line 1 column 0" (empty/cut file); and a file written by a
    # newer tokenizers than the installed one: "Exception: data did not match any variant of untagged enum ModelWrapper
    # at line 1251012 column 3" (allenai/open-instruct#738: tokenizers 0.19.1 reading Llama 3.1's file; sentence-transformers
    # #1105 "update your tokenizers"; PyPreTokenizerTypeWrapper / PyNormalizerTypeWrapper siblings, transformers#31789),
    # also bare or after "Can't load tokenizer using from_pretrained, please update its configuration: ".
    # Raised only ("sure"). l1.tokjson.
    ("l1-tokjson", "shape", (
        r"(?P<sure>Exception: )(?P<bad>expected value|EOF while parsing a value|trailing characters) at line \d{1,9} "
        r"column \d{1,9}",
        r"(?P<sure>variant of untagged enum )(?P<enum>[A-Za-z]{1,60}Wrapper)",  # "data did not match any variant of ..."
    )),
    # --- tune-m3
    # ggml's CUDA backend could not initialise CUDA (ggml/src/ggml-cuda/ggml-cuda.cu ggml_cuda_init: "%s: failed to
    # initialize " GGML_CUDA_NAME ": %s", cudaGetErrorString of cudaGetDeviceCount's error; GGML_LOG_ERROR): llama.cpp,
    # whisper.cpp, ollama. ROCm/MUSA builds print their own name there (HIP errors: not this table). m3.cudainit.
    ("m3-cudainit", "shape", (
        r"(?P<sure>ggml_cuda_init: failed to initialize )CUDA: (?P<text>[^\n]{1,200})",
    )),
    # Lightning's checks of the Slurm layout (lightning/fabric/plugins/environments/slurm.py validate_settings and
    # _validate_srun_variables; pytorch_lightning.plugins.environments.slurm_environment in 1.x): raised only. m3.slurm.
    ("m3-slurm", "shape", (
        r"(?P<sure>You set `devices=)(?P<devices>\d{1,4})` in Lightning, but the number of tasks per node configured in "
        r"SLURM `--ntasks-per-node=(?P<tasks>\d{1,4})`",
        r"(?P<sure>You set `num_nodes=)(?P<num_nodes>\d{1,5})` in Lightning, but the number of nodes configured in SLURM "
        r"`--nodes=(?P<nodes>\d{1,5})`",
        r"(?P<sure>You set `--ntasks=)(?P<ntasks>\d{1,6})` in your SLURM bash script, but this variable is not supported",
    )),
    # --- tune-m1
    # unsloth / unsloth_zoo failing while they patch what they wrap (m1.unsloth): unsloth's tokenizer_utils.py
    # patch_sft_trainer_tokenizer raise RuntimeError(f"Unsloth: Please file a bug report! Error patching {trainer_name}"),
    # and a frame of unsloth/ or unsloth_zoo/ (plain or IPython/Colab form); the reader keeps the one at import/patch
    # time that is the traceback's last frame.
    ("m1-unsloth", "shape", (
        r"Unsloth: Please file a bug report! Error patching (?P<trainer>\w{1,60})",
        # (tune-m1's second pattern, unsloth's own frames at import or patch time, is left out: its trigger, "unsloth"
        # or "packages", fills ordinary compile logs and cost explain ~5 % of its throughput; see the closing note)
    )),
    # --- tune-m2
    # A library's example script newer than the installed library (m2_tables.toml [example] has the sources):
    # check_min_version in diffusers/transformers (src/*/utils/__init__.py) and the optimum examples raises
    # ImportError("This example requires a source install from HuggingFace <Name> (see `...`), but the version found
    # is X.") when the example wants "<next>.dev0" (examples/ tracks main), or "This example requires a minimum
    # version of Y, but the version found is X." Raised only ("sure"). m2.example.
    ("m2-example", "shape", (
        # (the words after "example" as \w runs: the trigger chooser takes the rare "xample", not "from"/"minimum")
        r"(?P<sure>This example requires a \w{6} \w{7} \w{4} HuggingFace )(?P<lib>[A-Za-z][A-Za-z0-9_-]{0,40})",
        r"(?P<sure>This example requires a \w{7} \w{7} \w{2} )(?P<need>[0-9][A-Za-z0-9_.+-]{0,40}?),",
    )),
)

LAYER_IDS = {uid: n for n, (uid, _layer, _pats) in enumerate(UNITS)}


@functools.lru_cache(maxsize=1)
def units() -> tuple[Entry, ...]:
    """The units as Entries (``layer`` set), for the explain engine's Matcher."""
    return tuple(Entry(id=f"FDX{n:03d}", symbol=uid, title=uid, cause="", fix="", patterns=pats, layer=layer)
                 for n, (uid, layer, pats) in enumerate(UNITS))
