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
_EXC = (r"^\s*(?:\[rank\d{1,5}\]:\s*)?(?:[A-Za-z_]\w{0,60}\.){0,8}"
        r"(?P<exc>[A-Za-z_]\w{0,80}?(?:Error|Exception|Failed|Failure))"
        r"(?:: ?(?P<msg>[^\n]{0,2000}))?$")

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
        r"(?P<name>cudaError[A-Z]\w{1,60})",
        r"(?P<dname>CUDA_ERROR_[A-Z_]{2,60})",
        r"CUDA (?:driver )?error (?P<code>\d{1,4})\b",
        r"(?:Triton Error \[CUDA\]|CUDA driver error|CUDA Error|CUDA call failed[^\n]{0,80}?): (?P<text2>[^\n]{1,200})",
        r"(?P<lib_status>CUBLAS_STATUS_[A-Z_]{2,40}|CUDNN_STATUS_[A-Z_]{2,40})",
    )),
    ("nccl", "shape", (
        r"(?P<name>nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|InProgress))",
        r"NCCL error in: [^\n]{0,300}?, (?P<text>unhandled system error|unhandled cuda error|internal error|invalid argument"
        r"|invalid usage|remote process exited or there was a network error)",
        r"NCCL WARN (?P<warn>[^\n]{1,300})",
    )),
    ("winerror", "shape", (
        r"\[WinError (?P<code>\d{1,5})\]",
        r"Error code (?P<num>\d{1,5})\b", r"\(?0x(?P<num>C0000[0-9A-Fa-f]{3})\b",
    )),
    ("triton-res", "shape", (
        r"out of resource: (?P<res>[a-z][\w ]{0,40}?), Required: (?P<req>\d{1,12}), Hardware limit: (?P<lim>\d{1,12})",
        r"OutOfResources: out of resource: (?P<res2>[a-z][\w ]{0,40}?)(?:,|$)",
    )),
    ("oom", "shape", (
        r"(?P<dev>CUDA|HIP|XPU|MPS backend) out of memory",
        r"DefaultCPUAllocator: (?:not enough memory|can't allocate memory)",
        r"OutOfMemoryError: (?P<dev2>CUDA|HIP|XPU)?",
        r"exitcode\s{0,8}: -9\b|Signal 9 \(SIGKILL\) received|^Killed$",
    )),
    ("unsupported", "shape", (
        r"not (?:currently )?implemented for (?:the )?'?(?P<backend>MPS|mps|XPU|HIP|ROCm|CPU|CUDA)'? (?:device|backend)",
        r"\"(?P<op>\w{1,120})\" not implemented for '(?P<dtype>\w{1,40})'",
        r" is not supported on (?P<backend2>MPS|ROCm|HIP|XPU|CPU)\b",
        r"Could not run '(?P<op2>[\w:.]{1,120})' with arguments from the '(?P<backend3>\w{1,40})' backend",
        r"Distributed package doesn't have (?P<nccl>NCCL) built in",
    )),
    # --- context --------------------------------------------------------------------------------------
    # torch's version as logs state it: collect_env and `transformers-cli env` ("PyTorch version: 2.5.1"),
    # ComfyUI ("pytorch version: 2.5.1+cu124"), pip freeze ("torch==2.5.1"), wheel and dist-info names
    # ("torch-2.5.1+cu124-cp311-..."), xformers' "(you have 2.1.0+cu121)". A bare "torch" is no trigger:
    # it is on every traceback frame of a healthy log's warnings.
    ("ctx-torch", "context", (
        r"(?:[Pp]y)?[Tt]orch [Vv]ersion(?: \(GPU\?\))?:? {0,4}v?(?P<torch>" + _TORCH_V + r")(?![\w.])",
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
    ("ctx-wsl", "context", (r"microsoft-standard-WSL", r"/usr/lib/wsl/", r"\bWSL2?\b")),
    ("ctx-rocm", "context", (r"\+rocm\d", r"ROCm", r"HIP error", r"amdgpu")),
    ("ctx-platform", "context", (r"win_amd64|python_embeded|\bWinError\b", r"macosx_1\d|[Dd]arwin|/opt/homebrew/")),
    ("ctx-frame", "context", (r"File \"(?P<path>[^\"\n]{1,500})\", line \d{1,7}",)),
    ("ctx-traceback", "context", (r"Traceback \(most recent call last\)",)),
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
    )),)

LAYER_IDS = {uid: n for n, (uid, _layer, _pats) in enumerate(UNITS)}


@functools.lru_cache(maxsize=1)
def units() -> tuple[Entry, ...]:
    """The units as Entries (``layer`` set), for the explain engine's Matcher."""
    return tuple(Entry(id=f"FDX{n:03d}", symbol=uid, title=uid, cause="", fix="", patterns=pats, layer=layer)
                 for n, (uid, layer, pats) in enumerate(UNITS))
