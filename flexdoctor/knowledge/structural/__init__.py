"""The structural layer of ``explain``: errors read by their shape, not by their exact wording.

The fingerprint entries (``knowledge/*.toml``) know particular errors well. This layer reads what any
error of a known *form* says: a shared library that does not load (and, from ``libraries.toml``, what
provides it for this CUDA major, pip or conda), an undefined symbol (demangled and classified: another
torch, another CUDA, libstdc++/glibc, another Python), a module that is missing (``modules.toml``: its
distribution and platform rules), a version constraint, pip finding no distribution, a CUDA runtime
error (``cuda_errors.toml``), an NCCL error class (``nccl.toml``), a Windows error (``winerror.toml``),
Triton running out of a resource, out of memory, an operation a backend lacks. Each answer says how
sure it is, and its fix is filled only with what the log shows (torch, CUDA and Python versions,
platform, conda), never with a guess.

Where a fingerprint entry matched the same line, the entry answers. Errors before the log's last sign
of progress (a tqdm rate, a logged loss) were survived and are not read. When nothing is known, the
root error (the last exception of the last traceback, or the first ``error:`` line), the package it
came from and what to attach to a bug report are still given (kind ``unknown``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Optional

from ...model import Fix
from ...text import t
from . import abi, errors, libs, readers
from . import b2
from . import b3
from . import c1, c1_pip
from . import c4
from . import c2
from . import remedy
from . import c3
from . import c3_attn
from . import e3
from . import e1
from . import e2
from . import e5
from . import e4
from . import f1
from . import f2
from . import g2
from . import g4
from . import g3
from . import h2
from . import g1, g1_py
from . import h3
from . import h1
from . import h4  # tune-h4
from . import h6  # tune-h6
from . import h7  # tune-h7
from . import i3  # tune-i3
from . import h5  # tune-h5
from . import i2  # cov-i2
from . import i4  # tune-i4
from . import i1  # tune-i1
from . import i5  # tune-i5
from . import j1  # tune-j1
from . import j2  # tune-j2
from . import i7  # tune-i7
from . import k1  # tune-k1
from . import k2  # tune-k2
from . import i6  # builder i6
from . import l3  # tune-l3
from . import l2  # tune-l2
from . import l1  # tune-l1
from . import m3  # tune-m3
from . import m1  # tune-m1
from . import m2  # tune-m2
from .collect import Collector, has_progress, last_progress_in, package_of
from .context import LogFacts, facts
from .model import CONFIDENCE, KINDS, Answer
from .units import units

_READERS = {"so-missing": libs.answer, "symbol": readers.symbol, "module": readers.module,
            "version": readers.version, "pip": readers.pip, "cuda": errors.cuda, "nccl": errors.nccl,
            "winerror": errors.windows, "triton-res": errors.triton, "oom": errors.oom,
            "unsupported": errors.unsupported, "shm": errors.shm,
            "rdzv": errors.rendezvous, "slurm": errors.slurm,
            "cuda-assert": errors.cuda_assert, "so-mismatch": libs.mismatch,
            "compiled-missing": libs.compiled_missing, "cuda-build": errors.cuda_build,
            "rocm-arch": errors.rocm_arch,
            "ext-op": abi.operator,
            "module-b": readers.module,
            "numpy-abi": b2.numpy_abi,
            "dynamo-py": b2.dynamo_python,
            "advice": b2.advice,
            "compiler": b3.compiler, "nvcc": b3.nvcc, "build-failed": b3.build_failed,
            "ptxas-old": b3.ptxas_old,
            "module-b3": readers.module, "inductor-internal": b3.inductor_internal,
            "pair-cuda": b3.pair_cuda, "jit-ext": b3.jit_extension,
            "c1-name": c1.name_answer, "c1-pip": c1_pip.installer, "c1-fatal": c1_pip.fatal,
            "c4-xid": c4.xid, "c4-nogpu": c4.no_gpu, "c4-codec": c4.codec, "c4-win": c4.windows,
            "c4-mac": c4.mac, "c4-rocm": c4.rocm,
            "c2-ddp": c2.ddp, "c2-ordinal": c2.ordinal, "c2-fork": c2.fork, "c2-nccl": c2.nccl,
            "c2-launch": c2.launch, "c2-train": c2.train, "c2-serve": c2.serve,
            "c3-mismatch": c3.mismatch, "c3-dynamo": c3.dynamo, "c3-fp8": c3.fp8,
            "c3-hf": c3_attn.hf, "c3-flash": c3_attn.flash, "c3-diffusers": c3_attn.diffusers,
            "c3-api": c3.torch_api, "c3-lowering": c3.lowering,
            "e3-host": e3.host, "e3-arch": e3.arch, "e3-header": e3.header, "e3-link": e3.link,
            "e3-cmake": e3.cmake,
            "e1-quant": e1.quant, "e1-dynamo": e1.dynamo, "e1-mps": e1.mps, "e1-scaler": e1.scaler,
            "e2-busy": e2.busy, "e2-lost": e2.lost, "e2-nvml": e2.nvml, "e2-ctr": e2.container, "e2-libuv": e2.libuv,
            "e2-rust": e2.rust, "e2-pair": e2.pair, "e2-imp": e2.impimporter, "e2-ddp": e2.ddp,
            "e2-ordinal": e2.ordinal, "e2-conda": e2.conda, "e2-hvd": e2.horovod,
            "e2-ray": e2.ray, "e2-notice": e2.notice,
            "e5-jetson": e5.jetson, "e5-sigill": e5.sigill, "e5-uv": e5.uv, "e5-build": e5.build,
            "e4-hub": e4.hub, "e4-pickle": e4.pickle, "e4-remote": e4.remote, "e4-arch": e4.arch,
            "e4-tokdep": e4.tokdep, "e4-train": e4.train, "e4-webui": e4.webui,
            "f1-mpi": f1.mpi, "f1-fds": f1.fds, "f1-locale": f1.locale, "f1-archlist": f1.archlist,
            "f1-gcc11": f1.gcc11, "f1-softcap": f1.softcap, "f1-dsbatch": f1.dsbatch, "f1-offload": f1.offload,
            "f1-ray": f1.ray, "f1-fa1bwd": f1.fa1bwd,
            "f2-spawn": f2.spawn, "f2-limit": f2.limit, "f2-tls": f2.tls, "f2-drift": f2.drift, "f2-cudnn": f2.cudnn,
            "f2-kernel": f2.kernel,
            "g2-sd": g2.state, "g2-hf": g2.hub, "g2-quant": g2.quant,
            "g2-ipex": g2.ipex, "g2-dev": g2.device,
            "g4-triton": g4.triton, "g4-choices": g4.choices, "g4-dynamo": g4.dynamo, "g4-flex": g4.flex,
            "g3-autograd": g3.autograd, "g3-numeric": g3.numeric, "g3-wrap": g3.wrap, "g3-death": g3.death,
            "g1-kwarg": g1.kwarg, "g1-sig": g1.signature, "g1-pyold": g1_py.pyold, "g1-pyreq": g1_py.pyreq,
            "g1-numpy": g1_py.numpy, "g1-stdlib": g1_py.stdlib,
            "h3-config": h3.config, "h3-sdmix": h3.sdmix, "h3-oom": h3.oom, "h3-nogpu": h3.nogpu,
            "h1-cudnn-sdpa": h1.cudnn_sdpa, "h1-classes": h1.torch_classes, "h1-pad": h1.pad,
            "h1-tokhub": h1.tokenizer_hub, "h1-lora": h1.lora,
            "h2-zero3": h2.zero3, "h2-env": h2.envrank, "h2-mp": h2.mp, "h2-ort": h2.ort, "h2-uvtag": h2.uvtag,
            "h4-win127": h4.win127, "h4-cudnn": h4.cudnn, "h4-torchmod": h4.torch_missing,
            "h4-vllmcore": h4.vllm_core,
            "h6-gguf": h6.gguf, "h6-dockopt": h6.dockopt,
            "h7-poetry": h7.poetry, "h7-sigill": h7.sigill, "h7-bnbwin": h7.bnb_windows,
            "h7-pyindex": h7.pyindex, "h7-blas": h7.blas,
            "h7-cudaext": b3.nvcc,
            "h5-remote": h5.remote, "h5-raised": h5.raised, "h5-unsloth": h5.unsloth, "h5-kohya": h5.kohya,
            "h5-companion": h5.companion, "h5-sglops": h5.sgl_ops,
            "i2-accel": i2.accelerate, "i2-webui-torch": i2.webui_torch,
            "i3-serve": i3.serve,
            "i4-nohip": i4.no_hip,
            "i1-line": i1.line,
            "i5-train": i5.train,
            "j1-contig": j1.contig, "j1-qcap": j1.capability, "j1-sigkill": errors.oom,
            "j1-vllm-oom": j1.vllm_oom,
            "j2-uninst": j2.uninstall, "j2-clone": j2.clone, "j2-cache": j2.cache,
            "j2-apt": j2.apt,
            "j2-comfyoom": j2.comfy_oom,
            "i7-nocuda": i7.nocuda, "i7-cut": i7.cut,
            "k1-serve": k1.serve,
            "k2-vsint": k2.vsint, "k2-virtual": k2.virtual, "k2-chat": k2.chat,
            "i6-ggml": i6.ggml, "i6-tgi": i6.warmup,
            "l3-launcher": l3.launcher, "l3-step": l3.step, "l3-bus": l3.bus,
            "l2-comfy": l2.comfy, "l2-tokconv": l2.tokconv, "l2-dlopen": l2.dlopen,
            "l2-secboot": l2.secboot, "l2-bnbmac": l2.bnbmac,
            "l1-ctx": l1.ctx, "l1-determ": l1.determinism,
            "l1-tokjson": l1.tokjson,
            "m3-cudainit": m3.cudainit, "m3-slurm": m3.slurm,
            "m1-unsloth": m1.unsloth,
            "m2-example": m2.example}


_WARNING = re.compile(r"[Ww]arning|WARNING|\bwarn\b|\bW\d{4} |Error caught was|not available|will not be enabled"
                      r"|[Ff]alling back|[Ff]allback")
_ERROR = re.compile(r"[Ee]rror|ERROR|Exception|[Ff]atal|FAILED|[Ff]ailed|Could not|[Cc]annot|Aborted|what\(\)"
                    r"|out of memory|out of resource|undefined symbol|No module named|incompatible|SIGKILL|exitcode|^Killed$"
                    r"|Unable to load any of")


# Lines that exist only when something failed and carry no error word of their own: a resolver's conflict
# report and a shell's SIGILL line (c1-fatal), the kernel's NVRM Xid reports (c4-xid), CMake's errors (its
# level is on the line above: "CMake Error at ..."), Slurm's "sbatch: error:" (the reader drops consequences).
# A shape whose pattern holds a group named "sure" is such a line too (NVRM reports, pip's conflict lines,
# errors that are raised, never logged: their readers check the line is the error's own).
_FATAL_ALONE = frozenset({"c1-fatal", "c4-xid", "e3-cmake", "slurm", "g3-death"})  # g3-death: whole-line reports


def _fatal(seen, c: Collector, log: LogFacts) -> bool:
    """Whether a shape is the failure, not a notice the run survived: it lies in the final traceback
    (from the first traceback after the last progress to the root error), or, elsewhere, its line
    reads as an error and not as a warning."""
    if log.root is not None:
        root = log.root[0]
        starts = [tb for tb in c.tracebacks if log.region <= tb <= root]
        if (starts[0] if starts else root) - 2 <= seen.line <= root + 2:
            return True
    if seen.uid in _FATAL_ALONE or seen.groups.get("sure"):
        return True
    if g3.wrapped(seen, c.shapes):
        return True  # tune-g3: a message in ComfyUI's node report (its line, or under "Error occurred when executing")
    if seen.uid == "cuda" and "CUDA initialization: " in seen.text:
        return True  # torch's warning that CUDA is unusable: the reader answers only for a known CUDA error
    if seen.uid == "cuda-build" and log.platform == "macos":
        return True  # a CUDA extension's build on a Mac: its warning is the cause (no CUDA exists there)
    if seen.uid == "nccl" and seen.groups.get("dup"):
        return True  # NCCL's own WARN, but init fails with ncclInvalidUsage right after it (init.cc)
    if seen.uid == "c4-nogpu" and "nvidia-smi" in seen.groups.values():
        return True  # a shell's "nvidia-smi: not found" carries no "error" word
    if seen.uid in ("c2-nccl", "c2-ddp") and (seen.groups.get("ifname") or seen.groups.get("names")):
        return True  # tune-c2: NCCL's "no socket interface found" fails init; DDP's names line (reader checks the root)
    if seen.uid == "c3-dynamo" and seen.groups.get("dexc") and (log.root is None or seen.line >= log.root[0]):
        return True  # tune-c3: "torch._dynamo.exc.Unsupported: ..." raised last (no Error suffix for ctx-exception)
    if seen.uid == "e3-link" and seen.groups.get("pic") and "warning" not in seen.text:
        return True  # ld's -fPIC refusal fails the link
    if seen.uid == "c2-serve" and seen.groups.get("fit"):
        return True  # vLLM's "max seq len (N) is larger than ... KV cache (M)" is its ValueError, pasted without the name
    return not _WARNING.search(seen.text) and bool(_ERROR.search(seen.text))


def _answers(c: Collector, log: LogFacts, taken: set) -> list[Answer]:
    by_key: dict = {}
    for s in c.shapes:
        if s.line < log.region or s.line in taken or not _fatal(s, c, log):
            continue
        a = _READERS[s.uid](s, log)
        if a is None:
            continue
        # One error read twice ("CUDA error: device-side assert triggered" and the kernel's own
        # "Assertion `t < n_classes` failed"): the more specific reading (lower rank) answers.
        old = by_key.get((a.kind, a.subject))
        if old is None or a.rank < old.rank:
            by_key[(a.kind, a.subject)] = a
    out = list(by_key.values())
    # One line, two readings: a missing DLL (WinError 126/127) is the library's answer; any other
    # Windows error on that line (1455 paging file, 1114 DLL init) is the cause, not the library.
    lib_lines = {a.line for a in out if a.kind == "shared-library"}
    win = {a.line: a.subject for a in out if a.kind == "windows-error"}
    out = [a for a in out if not (a.kind == "windows-error" and a.line in lib_lines and a.subject in ("126", "127"))
           and not (a.kind == "shared-library" and win.get(a.line) not in (None, "126", "127"))]
    return [a if a.facts else _with_facts(a, log) for a in out]


def _with_facts(a: Answer, log: LogFacts) -> Answer:
    return replace(a, facts=log.to_dict())


def unknown(log: LogFacts, hint: Optional[str] = None) -> Answer:
    """The answer when nothing is known: the root error, where it came from, the remedy its message
    states (``hint``, remedy.stated), what to attach."""
    line, exc, msg, text = log.root
    short = exc.split(".")[-1]
    commands = ["flexdoctor facts"] + ([f"python -m pip show {log.package}"] if log.package and
                                       readers.SAFE.fullmatch(log.package) else [])
    return Answer("unknown", short, "low", t("structural.title.unknown", error=text[:200]),
                  t("structural.cause.unknown", package=log.package or t("structural.word.unknown_package")),
                  Fix((t("structural.fix.stated", hint=hint) + " " if hint else "") + t("structural.fix.unknown"),
                      tuple(commands)), line, text[:300], rank=90,
                  package=log.package, facts=log.to_dict())


_CUT_TAIL = 3  # lines a paste may run on after its last frame and still end inside the traceback


def truncated(c: Collector, log: LogFacts) -> Optional[Answer]:
    """A paste that ends inside a traceback: frames after its last "Traceback" line, no exception or error
    line after them, and nothing but the frames' own source lines at the end. The error line, the one that
    names the failure, was not pasted: say so, and where the traceback stopped (log text, shown as data)."""
    if not c.tracebacks or not c.frames:
        return None
    tb = c.tracebacks[-1]
    if tb in c.logged:
        return None  # an optional import's notice logged it, with its error line (Collector.logged_errors)
    frames = [(line, path) for line, path in c.frames if line > tb]
    if not frames or c.total - frames[-1][0] > _CUT_TAIL or any(line > tb for line, _t in c.errors):
        return None
    line, path = frames[-1]
    pkg = package_of(path)
    where = path if len(path) <= 160 else "…" + path[-159:]
    return Answer("unknown", "truncated traceback", "low", t("structural.cut.title"),
                  t("structural.cut.cause", frame=where, package=pkg or t("structural.word.unknown_package")),
                  Fix(t("structural.cut.fix"), ("flexdoctor facts",)), line, where, rank=95, package=pkg,
                  facts=log.to_dict())


# Readings of a wrapper error (an error raised inside Inductor, b3.inductor_internal: rank 70) say
# little beside an entry or a specific reading of the same log, so they are shown only alone.
LAST_RESORT = 70


def interpret(c: Collector, taken: Iterable[int], known: bool) -> tuple[tuple[Answer, ...], LogFacts]:
    """The structural answers of a scanned log, most fundamental first. ``taken``: lines a fingerprint
    entry matched (the entry answers there); ``known``: whether any entry found a problem."""
    log = facts(c)
    out = sorted(_answers(c, log, set(taken)), key=lambda a: (a.rank, a.line))
    if not out and log.region and c.launcher_failed > log.region:
        # A launcher says a worker failed, and nothing after the last progress explains it: the failed
        # rank's error came before another rank's later progress (ranks' lines interleave).
        whole = facts(c, region=0)
        out = sorted(_answers(c, whole, set(taken)), key=lambda a: (a.rank, a.line))
        log = whole if out else log
    if known or any(a.rank < LAST_RESORT for a in out):  # a wrapper's reading only where nothing says more
        out = [a for a in out if a.rank < LAST_RESORT]
    if not out and not known and log.root is None:
        cut = truncated(c, log)  # a paste that stops before its error line
        out = [cut] if cut is not None else []
    elif not out and not known and log.root is not None:
        # tune-i1: the root error may be one of PyTorch's own checks of the user's code or data (i1_tables.toml)
        out = [i1.root(log) or unknown(log, remedy.stated(c, log))]
    elif out and not known:
        out[0] = _with_stated(out[0], c, log)
    return tuple(_killed_last_first(out, log)), log


def _with_stated(a: Answer, c: Collector, log: LogFacts) -> Answer:
    """The answer, with the remedy the root error's message states quoted after its own fix, when the
    answer reads that error (its line is the root's, or next to it) and its fix does not say it already:
    a table knows the class, the message often knows the instance (the knob, the flag, the package)."""
    if a.kind == "unknown" or a.confidence == "high" or log.root is None or abs(a.line - log.root[0]) > 1:
        return a  # a table row named the thing: its fix is the instance's already
    hint = remedy.stated(c, log)
    if not hint or remedy.said_already(hint, a.fix.summary):
        return a
    return replace(a, fix=replace(a.fix, summary=a.fix.summary + " " + t("structural.fix.also_stated", hint=hint)))


def _killed_last_first(out: list, log: LogFacts) -> list:
    """A process the shell reports as ``Killed`` (SIGKILL: the kernel's OOM killer) after every other
    error the log shows, with no exception after those: it outlived them, so they were not fatal and
    the kill is the cause."""
    kills = [a for a in out if a.kind == "out-of-memory" and a.text.strip() == "Killed"]
    if not kills or kills[-1].line < max(a.line for a in out):
        return out
    if log.root is not None and log.root[0] > min(a.line for a in out if a not in kills):
        return out  # an exception after the earlier errors: a traceback ran, not a silent survival
    first = replace(kills[-1], rank=min(a.rank for a in out) - 1)  # explain orders answers by rank
    return [first] + [a for a in out if a is not kills[-1]]


__all__ = ["Answer", "CONFIDENCE", "Collector", "KINDS", "LogFacts", "has_progress", "interpret",
           "last_progress_in", "units"]
