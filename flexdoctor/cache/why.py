"""``flexdoctor cache why``: run a command under the cache dir with torch's structured trace on,
and say for every compiled graph whether it hit the compile cache, and if not, why.

The layer below the CLI: :func:`run` runs the command (through the one runner) and returns a
typed :class:`WhyResult`; :func:`explain` is pure (a parsed trace and the warmed keys in, the
verdicts out) so it is tested on recorded traces. Words live in locale/en.why.toml and the
renderer in render/why_view.py.

A miss is explained by comparing the components of the FX graph key torch computed with those
of the closest graph warm-cache recorded (keys.py): fewest differing components wins, and each
difference is sorted into a kind a user can act on (torch or GPU/CUDA/Triton version, dtype,
shapes, dynamic shapes, device, compile mode, Inductor config, the traced graph, the code of a
score_mod or mask_mod, global torch settings).
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Iterable, Optional

from . import keys as keys_mod
from . import trace as trace_mod
from .keys import Warmed
from .trace import Graph, Lookup, Trace

SCHEMA_VERSION = 1
FLEX_FILE = os.path.join("torch", "nn", "attention", "flex_attention.py")
# Inductor settings that torch.compile's ``mode=`` turns on (torch/_inductor/list_mode_options):
# reduce-overhead -> cudagraphs; max-autotune -> max_autotune, coordinate_descent_tuning, cudagraphs.
MODE_COMPONENTS = ("fx_kwargs[cudagraphs]", "inductor_config[max_autotune]",
                   "inductor_config[max_autotune_gemm]", "inductor_config[max_autotune_pointwise]",
                   "inductor_config[coordinate_descent_tuning]", "inductor_config[triton.cudagraphs]",
                   "inductor_config[triton.cudagraph_trees]", "inductor_config[epilogue_fusion]")
SETTINGS = ("default_dtype", "deterministic_algorithms_settings", "cuda_matmul_settings",
            "cpp_runtime_thread_count", "cache_key_tag", "precompile_enabled")
# Order in which kinds of difference are shown: the ones a user changes on purpose first.
KINDS = ("torch", "system", "device", "dtype", "shape", "dynamic", "inputs", "mode", "grad", "mod_code",
         "graph", "inductor_config", "settings", "other")
_META = re.compile(r"(\w+)=((?:torch\.Size\(\[[^\]]*\]\))|(?:device\([^)]*\))|(?:\([^)]*\))|[^,)]+)")
_SYMBOL = re.compile(r"\b[su]\d+\b")


# --------------------------------------------------------------------------- results

@dataclass
class Difference:
    """One component of the cache key that differs from the closest warmed graph."""

    kind: str  # one of KINDS
    name: str  # what differs: torch's component name ("inductor_config[max_autotune]", "gm",
    #            "score_mod_0"), or for the inputs a summary named by ``word``
    warmed: str  # the warmed graph's value ("" when there is nothing to show)
    now: str  # this run's value
    word: Optional[str] = None  # en.why.toml "why.name.<word>" says it in words, with ``args``
    args: dict = field(default_factory=dict)


@dataclass
class Verdict:
    """Hit, miss or bypass of one compiled graph, and why."""

    compile_id: Optional[str]
    rank: Optional[int] = None
    frame: Optional[str] = None
    filename: Optional[str] = None
    line: Optional[int] = None
    status: str = "uncached"  # hit | miss | bypass | uncached (no lookup recorded)
    via: Optional[str] = None  # which cache answered a hit: aotautograd | fx_graph
    lookups: list = field(default_factory=list)  # [{"cache", "state", "key", "detail", "backward"}]
    reasons: list = field(default_factory=list)  # keys of en.why.toml "reason.*"
    bypass: list = field(default_factory=list)  # torch's own words for each bypass
    closest: Optional[str] = None  # label of the closest warmed graph
    closest_source: Optional[str] = None  # config | run
    differences: list = field(default_factory=list)
    whole_model: bool = False  # more than flex_attention alone was compiled

    @property
    def where(self) -> str:
        if not self.filename:
            return ""
        return f"{self.filename}:{self.line}" if self.line else self.filename


@dataclass
class WhyResult:
    command: list
    cache_dir: str
    cache_source: str = "default"
    returncode: Optional[int] = None
    error: Optional[str] = None  # the command could not run or failed
    started: bool = True  # False: the command could not be started at all (not found, not executable)
    seconds: Optional[float] = None
    torch_version: Optional[str] = None
    trace_files: int = 0
    compiles: int = 0
    warmed: int = 0  # warmed graphs recorded in the cache dir
    problem: Optional[str] = None  # keys of en.why.toml "problem.*": why nothing could be judged
    disabled_by: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    trace_dir: Optional[str] = None  # kept with --keep-trace

    def counts(self) -> dict:
        out = {"hit": 0, "miss": 0, "bypass": 0, "uncached": 0}
        for v in self.verdicts:
            out[v.status] = out.get(v.status, 0) + 1
        return out

    @property
    def exit_code(self) -> int:
        c = self.counts()
        if self.problem or self.error or c["miss"] or c["bypass"]:
            return 1
        return 0


# --------------------------------------------------------------------------- comparing keys

def _tensor_meta(value: str) -> Optional[dict]:
    """Fields of ``TensorMetadata(dtype=torch.float32, shape=torch.Size([1, 2]), ...)``."""
    if not value.startswith("TensorMetadata("):
        return None
    return {k: v.strip() for k, v in _META.findall(value)}


def _short(value: str, n: int = 120) -> str:
    value = " ".join(value.split())
    return value if len(value) <= n else value[: n - 1] + "…"


def _shape(meta: dict) -> str:
    s = meta.get("shape", "")
    return s[len("torch.Size("):-1] if s.startswith("torch.Size(") else s


def _inputs(components: dict) -> list:
    """The graph's example inputs in order: a dict of TensorMetadata fields, or the text of a
    non-tensor input (a SymInt such as ``('s37',)`` under dynamic shapes)."""
    items = []
    for name, (_, value) in components.items():
        m = re.match(r"^example_inputs\[(\d+)\]$", name)
        if m:
            items.append((int(m.group(1)), _tensor_meta(value) or value))
    return [v for _, v in sorted(items, key=lambda kv: kv[0])]


def _symbolic(inputs: list) -> list[str]:
    found: list[str] = []
    for x in inputs:
        text = _shape(x) if isinstance(x, dict) else str(x)
        for sym in _SYMBOL.findall(text):
            if sym not in found:
                found.append(sym)
    return found


def _input_differences(old: dict, new: dict) -> list[Difference]:
    """Dtype, device, shape and static/dynamic differences of the graph inputs, read as a whole
    (under dynamic shapes torch inserts SymInt inputs, so index by index would misalign)."""
    a, b = _inputs(old), _inputs(new)
    out: list[Difference] = []
    sa, sb = _symbolic(a), _symbolic(b)
    if bool(sa) != bool(sb):
        # "" is static; otherwise the symbolic sizes torch gave the inputs (s37, s59, ...)
        out.append(Difference("dynamic", "example_inputs", ", ".join(sa[:6]), ", ".join(sb[:6]), word="dynamic"))
    ta = [x for x in a if isinstance(x, dict)]
    tb = [x for x in b if isinstance(x, dict)]
    if len(ta) != len(tb):
        # e.g. one tensor passed as q, k and v is one graph input, three distinct ones are three
        out.append(Difference("inputs", "example_inputs", str(len(ta)), str(len(tb)), word="tensor_count"))
        return out
    int_shapes = []
    for i, (x, y) in enumerate(zip(ta, tb)):
        one = {"word": "tensor_input", "args": {"which": str(i)}}
        if x.get("dtype") != y.get("dtype"):
            out.append(Difference("dtype", f"example_inputs[{i}]", x.get("dtype", "?"), y.get("dtype", "?"), **one))
        if x.get("device") != y.get("device"):
            out.append(Difference("device", f"example_inputs[{i}]", x.get("device", "?"), y.get("device", "?"),
                                  **one))
        if _shape(x) != _shape(y) and not (sa or sb):
            if "int" in x.get("dtype", "") and "int" in y.get("dtype", ""):
                int_shapes.append((i, _shape(x), _shape(y)))  # block-mask tensors: summed up below
            else:
                out.append(Difference("shape", f"example_inputs[{i}]", _shape(x), _shape(y), **one))
    if int_shapes:
        i, was, now = int_shapes[0]
        out.append(Difference("shape", f"example_inputs[{i}]", was, now, word="int_inputs",
                              args={"which": str(i), "more": len(int_shapes) - 1}))
    if not out and a != b:  # strides, layout, requires_grad...
        out.append(Difference("inputs", "example_inputs", "", "", word="inputs_other"))
    return _merge(out)


def _merge(diffs: list[Difference]) -> list[Difference]:
    """One line for the same change of several inputs: "tensor inputs 0, 1, 2: float32 -> bfloat16"."""
    groups: dict = {}
    for d in diffs:
        groups.setdefault((d.kind, d.warmed, d.now), []).append(d)
    out = []
    for (kind, was, now), same in groups.items():
        if len(same) == 1 or not all(x.word == "tensor_input" for x in same):
            out += same
            continue
        nums = ", ".join(x.args["which"] for x in same)
        out.append(Difference(kind, "example_inputs", was, now, word="tensor_inputs", args={"which": nums}))
    return out


_CLEANUP = re.compile(r";\s+(\w+ = )+None$")


def _code_lines(text: str) -> list[str]:
    """Code lines without comments (Dynamo's "# File: ..." source notes are not part of any key)."""
    return [_CLEANUP.sub("", ln).rstrip() for ln in text.splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def _code_diff(old: str, new: str, limit: int = 6) -> tuple[str, str]:
    """The lines of two graphs' code that differ (at most ``limit`` each way)."""
    a, b = _code_lines(old), _code_lines(new)
    minus, plus = [], []
    for ln in difflib.unified_diff(a, b, lineterm="", n=0):
        if ln.startswith("---") or ln.startswith("+++") or ln.startswith("@@"):
            continue
        (minus if ln.startswith("-") else plus).append(ln[1:].strip())
    if len(minus) == 1 and len(plus) == 1:  # one changed call: show where it changed
        return _middle(minus[0], plus[0])
    return "\n".join(_short(x, 240) for x in minus[:limit]), "\n".join(_short(x, 240) for x in plus[:limit])


def _middle(a: str, b: str, context: int = 40) -> tuple[str, str]:
    """The part of two lines that differs, with a little context on each side."""
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    lo = max(0, p - context)

    def cut(x: str) -> str:
        hi = min(len(x), len(x) - s + context)
        return ("…" if lo else "") + x[lo:hi] + ("…" if hi < len(x) else "")

    return cut(a), cut(b)


_SUBGRAPH = re.compile(r"^\s+class (\w+)\(torch\.nn\.Module\):", re.M)


def subgraphs(code: Optional[str]) -> dict:
    """The score_mod / mask_mod sub-graphs of a dynamo_output_graph, by name (``score_mod_0``)."""
    if not code:
        return {}
    out = {}
    starts = [(m.group(1), m.start()) for m in _SUBGRAPH.finditer(code)]
    for i, (name, at) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(code)
        out[name] = code[at:end]
    return out


def _graph_differences(old: str, new: str, warmed_code: Optional[str], code: Optional[str]) -> list[Difference]:
    if _code_lines(old) == _code_lines(new):
        # Same top-level code, different hash: the difference is in the sub-graphs the graph
        # module holds (score_mod / mask_mod), which the component's text does not print.
        a, b = subgraphs(warmed_code), subgraphs(code)
        for name in sorted(set(a) | set(b)):
            if _code_lines(a.get(name, "")) != _code_lines(b.get(name, "")):
                minus, plus = _code_diff(a.get(name, ""), b.get(name, ""))
                return [Difference("mod_code", name, minus or "-", plus or "-")]
        return [Difference("mod_code", "gm", "", "", word="mod_code")]
    minus, plus = _code_diff(old, new)
    return [Difference("graph", "gm", minus or "-", plus or "-")]


def _kind(name: str) -> str:
    if name == "torch_version":
        return "torch"
    if name.startswith("system_info"):
        return "system"
    if name in MODE_COMPONENTS:
        return "mode"
    if name in ("fx_kwargs[is_inference]", "fx_kwargs[is_backward]"):
        return "grad"
    if name.startswith("inductor_config") or name.endswith("_custom_pass") or "custom_p" in name:
        return "inductor_config"
    if name in SETTINGS or name.startswith("fx_kwargs["):
        return "settings"
    return "other"


def differing(a: dict, b: dict) -> list[str]:
    """Names of the components whose hash differs (or that only one side has)."""
    return sorted(n for n in set(a) | set(b) if (a.get(n) or (None,))[0] != (b.get(n) or (None,))[0])


def compare(warmed: Warmed, lookup: Lookup, code: Optional[str], torch_now: Optional[str]) -> list[Difference]:
    """Every difference between a warmed graph's key components and this lookup's, by kind."""
    a, b = warmed.components, lookup.components
    out: list[Difference] = []
    names = differing(a, b)
    if any(n.startswith("example_inputs[") for n in names):
        out += _input_differences(a, b)
    for name in names:
        old, new = (a.get(name) or (None, None))[1], (b.get(name) or (None, None))[1]
        if name.startswith("example_inputs["):
            continue
        elif name == "gm":
            if any(d.kind == "dynamic" for d in out):
                continue  # a graph over symbolic sizes differs everywhere: the dynamic line says it
            out += _graph_differences(old or "", new or "", warmed.code, code)
        elif name == "torch_version":  # a hash of torch's sources: name the versions instead
            was = warmed.torch_version or warmed.fingerprint.get("torch") or "?"
            out.append(Difference("torch", name, was, torch_now or "?", word="torch"))
        elif name.startswith("system_info"):  # a hash of GPU name, CUDA/HIP version, Triton build
            fp = warmed.fingerprint
            was = ", ".join(f"{k} {fp[k]}" for k in ("gpu_name", "cuda", "hip", "triton") if fp.get(k)) or "?"
            out.append(Difference("system", name, was, "", word="system"))  # "": torch keeps only a hash
        else:
            out.append(Difference(_kind(name), name, _short(old if old is not None else "-"),
                                  _short(new if new is not None else "-")))
    order = {k: i for i, k in enumerate(KINDS)}
    return sorted(out, key=lambda d: (order.get(d.kind, len(order)), d.name))


def closest(lookup: Lookup, warmed: Iterable[Warmed]) -> Optional[Warmed]:
    """The warmed graph with the fewest differing key components (same direction: forward or
    backward; a warmed graph of the same compile kind is preferred on a tie)."""
    best, best_score = None, None
    for w in warmed:
        if lookup.backward is not None and w.backward is not None and w.backward != lookup.backward:
            continue
        score = len(differing(w.components, lookup.components))
        if best_score is None or score < best_score:
            best, best_score = w, score
    return best


def is_flex_alone(g: Graph) -> bool:
    """Was ``torch.compile(flex_attention)`` itself compiled (what warm-cache's configs do)?"""
    return g.frame == "flex_attention" and (g.filename or "").replace("\\", "/").endswith(
        FLEX_FILE.replace(os.sep, "/"))


# --------------------------------------------------------------------------- verdicts

def _state(lookups: list, cache: str) -> Optional[str]:
    states = [lk.state for lk in lookups if lk.cache == cache]
    for s in ("bypass", "miss", "hit"):
        if s in states:
            return s
    return states[0] if states else None


def judge(g: Graph, warmed: list, root: str, torch_now: Optional[str]) -> Verdict:
    v = Verdict(compile_id=g.compile_id, rank=g.rank, frame=g.frame, filename=g.filename, line=g.line)
    v.lookups = [{"cache": lk.cache, "state": lk.state, "key": lk.key, "detail": lk.detail,
                  "backward": lk.backward} for lk in g.lookups]
    v.whole_model = bool(g.frame) and not is_flex_alone(g)
    aot, fx = _state(g.lookups, "aotautograd"), _state(g.lookups, "fx_graph")
    v.bypass = list(dict.fromkeys(lk.bypass_reason or "" for lk in g.lookups if lk.state == "bypass"))
    if fx == "bypass" or (fx is None and aot == "bypass"):
        v.status = "bypass"
        v.reasons.append("bypass")
    elif fx == "miss" or (fx is None and aot == "miss"):
        v.status = "miss"
    elif fx == "hit" or aot == "hit":
        v.status, v.via = "hit", ("aotautograd" if aot == "hit" else "fx_graph")
        if aot == "miss":
            v.reasons.append("aot_miss_fx_hit")
        if aot == "bypass":
            v.reasons.append("aot_bypass")
    if v.status != "miss":
        return v
    missed = [lk for lk in g.lookups if lk.cache == "fx_graph" and lk.state == "miss"]
    if not missed:  # AOT autograd missed and no FX lookup was recorded
        v.reasons.append("aot_only")
        return v
    lk = missed[0]
    if lk.detail == "guard_miss":
        v.reasons.append("guard_miss")
    if lk.key and any(w.key == lk.key for w in warmed):
        v.reasons.append("entry_gone" if not keys_mod.present(root, lk.key) else "entry_unusable")
        return v
    runs = [w for w in warmed if w.source.get("kind") == "run"]
    pool = runs if v.whole_model and runs else warmed
    best = closest(lk, pool) if lk.components else None
    if v.whole_model and not runs:
        v.reasons.append("whole_model")
    if best is None:
        if not (v.whole_model and not runs):
            v.reasons.append("no_warmed" if not warmed else "no_comparable")
        return v
    v.closest, v.closest_source = best.label, best.source.get("kind")
    if v.whole_model and not runs:
        return v  # comparing a whole model with flex alone names every component: say it plainly
    v.differences = compare(best, lk, g.code, torch_now)
    v.reasons.append("differs")
    return v


def explain(trace: Trace, warmed: list, root: str, disabled_by: Iterable[str] = ()) -> tuple[list, Optional[str]]:
    """(verdicts, problem): one verdict per compiled graph that looked anything up, or why none."""
    graphs = [g for g in trace.graphs if g.lookups or g.compile_id is not None]
    verdicts = [judge(g, warmed, root, trace.torch_version) for g in graphs if g.lookups]
    problem = None
    if not verdicts:
        if trace.files == 0:
            problem = "no_trace"
        elif trace.compiles == 0:
            problem = "no_compile"
        elif list(disabled_by):
            problem = "cache_disabled"
        else:
            problem = "no_lookups"
    return verdicts, problem


def warm_command(result: WhyResult) -> str:
    """The warm-cache command that warms exactly what ``result.command`` compiles."""
    import shlex

    cmd = " ".join(shlex.quote(str(a)) for a in result.command)
    parts = ["flexdoctor", "warm-cache"]
    if result.cache_source == "--cache-dir":
        parts += ["--cache-dir", shlex.quote(result.cache_dir)]
    return " ".join(parts + ["--run", shlex.quote(cmd)])


# --------------------------------------------------------------------------- running

def section(argv: list, tr: Trace, cache_dir: str, cache_source: str, env: dict, **done) -> WhyResult:
    """The cache section of a traced run: every compiled graph's verdict against what warm-cache
    warmed in ``cache_dir`` (``done``: returncode, error, seconds, started of the run)."""
    from . import locations

    warmed = keys_mod.load(cache_dir)
    off = locations.disabled_by(env)
    verdicts, problem = explain(tr, warmed, cache_dir, off)
    return WhyResult(command=list(argv), cache_dir=cache_dir, cache_source=cache_source,
                     torch_version=tr.torch_version, trace_files=tr.files, compiles=tr.compiles,
                     warmed=len(warmed), problem=problem, disabled_by=off, verdicts=verdicts, **done)


def run(argv: list, cache_dir: str, cache_source: str = "default", timeout: Optional[float] = None,
        keep_trace: Optional[str] = None, env: Optional[dict] = None, stdout: Optional[int] = None) -> WhyResult:
    """Run ``argv`` with TORCHINDUCTOR_CACHE_DIR=cache_dir and TORCH_TRACE set, then judge."""
    from . import warm

    base = dict(os.environ if env is None else env)
    trace_dir = keep_trace or tempfile.mkdtemp(prefix="flexdoctor-trace-")
    if keep_trace:
        os.makedirs(keep_trace, exist_ok=True)
    try:
        done = warm.run_command(argv, cache_dir, timeout=timeout, extra_env={"TORCH_TRACE": trace_dir}, base=base,
                                record=False, stdout=stdout)
        tr = trace_mod.read(trace_dir)
    finally:
        if not keep_trace:
            shutil.rmtree(trace_dir, ignore_errors=True)
    return section(argv, tr, cache_dir, cache_source, base, returncode=done.get("returncode"),
                   error=done.get("error"), seconds=done.get("seconds"), started=bool(done.get("started", True)),
                   trace_dir=keep_trace)
