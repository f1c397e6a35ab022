# flexdoctor trace: the bootstrap that runs inside the user's own Python processes (issue 23).
#
# flexdoctor copies this file as `sitecustomize.py` into a private folder (mkdtemp, 0700) that it
# puts first on PYTHONPATH for the command it traces, and names a second private folder in
# FLEXDOCTOR_TRACE_BOOT for what this file writes. Python's `site` imports it in every Python
# process of the command that keeps that environment (the command, torchrun's ranks). It is stdlib
# only, Python 3.8 syntax, never imports flexdoctor, swallows every error of its own, takes its
# folder off sys.path again, and then runs the sitecustomize that would have run without it.
#
# What it records, one JSON object a line in <FLEXDOCTOR_TRACE_BOOT>/p<pid>.jsonl, times in
# time.time() seconds (the clock torch's structured trace uses too):
#   boot      this file runs (interpreter start-up is over); the process's start from
#             /proc/self/stat; pid, ppid, RANK / LOCAL_RANK / WORLD_SIZE
#   import    start and end of `import torch`, torch._dynamo, torch._inductor, compile_fx, triton:
#             a meta-path finder hands each of those modules a loader that times the real one
#             (and puts the real one back before the module's code runs)
#   pool      Inductor's compile-worker pool starting (SubprocPool.__init__) and shutting down
#             (SubprocPool.shutdown): the methods are wrapped, only to be timed
#   backward  the first calls of torch.autograd.backward, start and end (a wrapper that times
#             them; under torch.compile tracing it calls straight through)
#   step      when each optimizer step ended (torch.optim's public global step post-hook)
#   end       the script's last line has run: threading._shutdown, the first thing the
#             interpreter does once the main module is over (wrapped, only to be timed)
#   atexit    the last atexit handler (this one is registered first, so it runs last), with
#             torch's version and a few settings read then
# flexdoctor itself records when each process is gone (it watches /proc).
import os
import sys
import time


class _S(object):
    fd = None
    pid = None
    here = None
    backward = 0
    steps = 0
    last_step = None


_KEY = "FLEXDOCTOR_TRACE_BOOT"
_FIRST = 3  # backward calls timed one by one; the others are counted
_STEPS = 10000  # optimizer steps recorded one by one (when each ended); the others are counted
_WATCH = {"torch": "torch", "torch._dynamo": "dynamo", "torch._inductor": "inductor",
          "torch._inductor.compile_fx": "compile_fx", "triton": "triton",
          "torch._inductor.compile_worker.subproc_pool": None}


def _rec(kind, **fields):
    if _S.fd is None or os.getpid() != _S.pid:  # a forked child: not ours to write
        return
    try:
        import json

        fields["k"] = kind
        os.write(_S.fd, (json.dumps(fields, separators=(",", ":"), default=str) + "\n").encode("utf-8"))
    except Exception:
        pass


def _private(folder):
    """The folder flexdoctor made for this run: a real directory of this user, closed to others."""
    import stat

    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _open(folder):
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for n in range(5):
        name = "p%d.jsonl" % os.getpid() if n == 0 else "p%d-%d.jsonl" % (os.getpid(), n)
        try:
            return os.open(os.path.join(folder, name), flags, 0o600)
        except FileExistsError:
            continue
    return None


def _process_start():
    """When this process started (time.time() seconds), from /proc: ticks since boot."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            data = fh.read()
        ticks = int(data[data.rfind(b")") + 2:].split()[19])
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
        return time.time() - (since_boot - ticks / float(os.sysconf("SC_CLK_TCK")))
    except Exception:
        return None


def _ints(*names):
    out = {}
    for name in names:
        value = os.environ.get(name, "")
        if value.isdigit() and len(value) < 9:
            out[name.lower()] = int(value)
    return out


# --------------------------------------------------------------------------- imports


class _Timed(object):
    """Stands in for a module's loader until the module's code runs, then steps aside."""

    def __init__(self, loader, name):
        self._loader, self._name = loader, name

    def __getattr__(self, attr):
        return getattr(self._loader, attr)

    def create_module(self, spec):
        make = getattr(self._loader, "create_module", None)
        return make(spec) if make is not None else None

    def exec_module(self, module):
        spec = getattr(module, "__spec__", None)
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader
        t0 = time.time()
        try:
            self._loader.exec_module(module)
        finally:
            if _WATCH.get(self._name):
                _rec("import", m=_WATCH[self._name], t0=t0, t1=time.time())
        _loaded(self._name, module)


class _Finder(object):
    """First on sys.meta_path; for the watched modules only, finds them as the finders after it
    would, and hands back their spec with a timing loader."""

    def __init__(self):
        self.busy = set()

    def find_spec(self, name, path=None, target=None):
        if name not in _WATCH or name in self.busy or name in sys.modules:
            return None
        self.busy.add(name)
        try:
            spec = self._find(name, path, target)
        except Exception:
            spec = None  # the import system asks the next finders itself, and raises as before
        finally:
            self.busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _Timed(spec.loader, name)
        return spec

    def _find(self, name, path, target):
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                return None  # an old-style finder: leave the whole lookup to the import system
            spec = find(name, path, target)
            if spec is not None:
                return spec
        return None

    def invalidate_caches(self):
        pass


def _loaded(name, module):
    try:
        if name == "torch":
            _torch_loaded(module)
        elif name == "torch._inductor.compile_worker.subproc_pool":
            _pool_loaded(module)
    except Exception:
        pass


# --------------------------------------------------------------------------- inside torch


def _compiling():
    torch = sys.modules.get("torch")
    check = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    try:
        return bool(check()) if check is not None else False
    except Exception:
        return False


def _torch_loaded(torch):
    import functools

    autograd = torch.autograd
    real = autograd.backward

    @functools.wraps(real)
    def backward(*args, **kwargs):
        if _compiling():
            return real(*args, **kwargs)
        _S.backward += 1
        if _S.backward > _FIRST:
            return real(*args, **kwargs)
        n, t0 = _S.backward, time.time()
        try:
            return real(*args, **kwargs)
        finally:
            _rec("backward", n=n, t0=t0, t1=time.time())

    autograd.backward = backward
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except Exception:
        return
    register_optimizer_step_post_hook(_on_step)


def _on_step(optimizer, args, kwargs):
    if _compiling():
        return
    _S.steps += 1
    _S.last_step = time.time()
    if _S.steps <= _STEPS:
        _rec("step", n=_S.steps, t=_S.last_step)


def _pool_loaded(module):
    cls = getattr(module, "SubprocPool", None)
    for method, kind in (("__init__", "pool_start"), ("shutdown", "pool_shutdown")):
        real = getattr(cls, "__dict__", {}).get(method)
        if real is not None and callable(real):
            setattr(cls, method, _timed_method(real, kind))


def _timed_method(real, kind):
    import functools

    @functools.wraps(real)
    def timed(*args, **kwargs):
        t0 = time.time()
        try:
            return real(*args, **kwargs)
        finally:
            _rec("pool", what=kind, t0=t0, t1=time.time())

    return timed


# --------------------------------------------------------------------------- the end


def _at_exit():
    facts = {"t": time.time(), "backward": _S.backward, "steps": _S.steps, "last_step": _S.last_step}
    torch = sys.modules.get("torch")
    if torch is not None:
        facts["torch"] = str(getattr(torch, "__version__", ""))
        try:
            cfg = sys.modules.get("torch._inductor.config")
            if cfg is not None:
                facts["compile_threads"] = getattr(cfg, "compile_threads", None)
                facts["worker_start"] = getattr(cfg, "worker_start_method", None)
            compiler_config = getattr(getattr(torch, "compiler", None), "config", None)
            facts["compile_on_one_rank"] = getattr(compiler_config, "compile_on_one_rank", None)
            cuda = sys.modules.get("torch.cuda")
            facts["cuda"] = bool(cuda is not None and cuda.is_initialized())
            dist = sys.modules.get("torch.distributed")
            if dist is not None and dist.is_available() and dist.is_initialized():
                facts["dist_rank"], facts["dist_world"] = dist.get_rank(), dist.get_world_size()
        except Exception:
            pass
    facts["triton"] = "triton" in sys.modules
    _rec("atexit", **facts)


def _wrap_shutdown():
    import threading

    real = getattr(threading, "_shutdown", None)
    if real is None:
        return

    def _shutdown():
        _rec("end", t=time.time())
        return real()

    threading._shutdown = _shutdown


def _boot():
    folder = os.environ.get(_KEY, "")
    if not folder or not _private(folder):
        return
    now = time.time()
    _S.pid = os.getpid()
    _S.fd = _open(folder)
    if _S.fd is None:
        return
    fields = {"t": now, "start": _process_start(), "pid": _S.pid, "ppid": os.getppid(),
              "py": list(sys.version_info[:3])}
    fields.update(_ints("RANK", "LOCAL_RANK", "WORLD_SIZE", "GROUP_RANK"))
    _rec("boot", **fields)
    import atexit

    atexit.register(_at_exit)
    _wrap_shutdown()
    sys.meta_path.insert(0, _Finder())


def _leave_path():
    _S.here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _S.here]


def _chain():
    """Run the sitecustomize that Python would have run without this one, as site would."""
    import importlib.machinery
    import importlib.util

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


try:
    _leave_path()
    _boot()
except Exception:
    pass
_chain()
