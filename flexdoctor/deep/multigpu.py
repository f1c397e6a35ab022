"""The GPUs of one node together (``check --deep`` with two or more GPUs): NVML topology and
links from this process, peer access and an all-reduce from ``worker/_multigpu_probe.py`` run by
the target interpreter, time-boxed.

NVML (no torch): for every pair the common ancestor (nvmlDeviceGetTopologyCommonAncestor: the
``nvidia-smi topo -m`` levels) and NVML's P2P read status; for every GPU its active NVLinks
(nvmlDeviceGetNvLinkState), where they end (nvmlDeviceGetNvLinkRemotePciInfo: another GPU, or an
NVSwitch), their version, and the PCIe link generation and width, current against the most this
GPU can do in its slot. The current PCIe values are read once idle and again while the worker's
all-reduce runs (its ``all-reduce load`` stage), since an idle GPU drops its link generation.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Callable, Optional

from ..facts import AllReduce, GpuLink, GpuPair, MultiGpuFacts, ProbeError, from_jsonable
from ..worker import run as worker_run
from ..worker import script
from .bench import reason_english

SCRIPT = script("_multigpu_probe.py")
DEFAULT_TIMEOUT = 120.0  # the worker's own time box for the all-reduce is 30 s shorter
DEFAULT_BYTES = 256 << 20  # 256 MiB: large enough that bandwidth, not latency, decides
# nvidia-smi topo -m names of NVML's common-ancestor levels.
TOPOLOGY = {0: "board", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}


def _nvml():
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:
        return None


def _safe(fn, default=None):
    try:
        return fn()
    except Exception:
        return default


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _bus(text) -> str:
    value = _text(text)
    # NVML writes 8 or 4 hex digits of PCI domain depending on the call: compare the tail.
    return value.lower().split(":", 1)[-1] if value.count(":") >= 2 else value.lower()


def _p2p_status(pynvml, code: int) -> str:
    names = {
        getattr(pynvml, "NVML_P2P_STATUS_OK", 0): "ok",
        getattr(pynvml, "NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED", 1): "chipset-not-supported",
        getattr(pynvml, "NVML_P2P_STATUS_GPU_NOT_SUPPORTED", 2): "gpu-not-supported",
        getattr(pynvml, "NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED", 3): "topology-not-supported",
        getattr(pynvml, "NVML_P2P_STATUS_DISABLED_BY_REGKEY", 4): "disabled-by-regkey",
        getattr(pynvml, "NVML_P2P_STATUS_NOT_SUPPORTED", 5): "not-supported",
    }
    return names.get(code, "unknown")


def pcie_now(pynvml, handles: list) -> list:
    """(current generation, current width) of every GPU, now."""
    return [(_safe(lambda h=h: int(pynvml.nvmlDeviceGetCurrPcieLinkGeneration(h))),
             _safe(lambda h=h: int(pynvml.nvmlDeviceGetCurrPcieLinkWidth(h)))) for h in handles]


@dataclasses.dataclass
class Topology:
    gpus: list
    pairs: list
    handles: list
    uuids: list
    pynvml: object = None
    error: Optional[str] = None

    def close(self) -> None:
        if self.pynvml is not None:
            _safe(self.pynvml.nvmlShutdown)
            self.pynvml = None


def topology() -> Topology:
    """The node's GPUs, links and pairs from NVML (left initialised for PCIe sampling: close())."""
    pynvml = _nvml()
    if pynvml is None:
        return Topology([], [], [], [], None, "NVML is not available")
    try:
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    except Exception as exc:
        return Topology([], [], [], [], pynvml, f"NVML: {exc}")
    uuids = [_safe(lambda h=h: _text(pynvml.nvmlDeviceGetUUID(h))) for h in handles]
    buses = [_bus(_safe(lambda h=h: pynvml.nvmlDeviceGetPciInfo(h).busId, "")) for h in handles]
    max_links = int(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18))
    gpus = []
    direct: dict = {}  # (a, b) -> links
    switched: list = []
    for i, h in enumerate(handles):
        active, version, to_switch = 0, None, 0
        for link in range(max_links):
            state = _safe(lambda: pynvml.nvmlDeviceGetNvLinkState(h, link))
            if state != 1:  # NVML_FEATURE_ENABLED; an absent link raises (None)
                continue
            active += 1
            version = version or _safe(lambda: int(pynvml.nvmlDeviceGetNvLinkVersion(h, link)))
            remote = _bus(_safe(lambda: pynvml.nvmlDeviceGetNvLinkRemotePciInfo(h, link).busId, ""))
            if remote in buses and buses.index(remote) != i:
                j = buses.index(remote)
                key = (min(i, j), max(i, j))
                direct[key] = direct.get(key, 0) + 1
            else:
                to_switch += 1
        if to_switch:
            switched.append(i)
        gen_max = _safe(lambda: int(pynvml.nvmlDeviceGetMaxPcieLinkGeneration(h)))
        width_max = _safe(lambda: int(pynvml.nvmlDeviceGetMaxPcieLinkWidth(h)))
        gpus.append(GpuLink(index=i, nvlinks=active, nvlink_version=version, nvswitch=bool(to_switch),
                            pcie_gen_max=gen_max, pcie_width_max=width_max))
    # Each direct link was counted from both ends.
    direct = {k: v // 2 for k, v in direct.items()}
    links = {g.index: g.nvlinks for g in gpus}
    pairs = []
    for a in range(len(handles)):
        for b in range(a + 1, len(handles)):
            level = _safe(lambda: int(pynvml.nvmlDeviceGetTopologyCommonAncestor(handles[a], handles[b])))
            nv = direct.get((a, b), 0)
            if not nv and a in switched and b in switched:
                nv = min(links[a], links[b])  # both on the NVSwitch fabric: nvidia-smi's NV# does the same
            read = getattr(pynvml, "NVML_P2P_CAPS_INDEX_READ", 0)
            code = _safe(lambda: int(pynvml.nvmlDeviceGetP2PStatus(handles[a], handles[b], read)))
            pairs.append(GpuPair(a=a, b=b, topology=TOPOLOGY.get(level) if level is not None else None,
                                 nvlinks=nv, nvml_p2p=_p2p_status(pynvml, code) if code is not None else None))
    return Topology(gpus, pairs, handles, uuids, pynvml, None)


def gpu_count() -> int:
    pynvml = _nvml()
    if pynvml is None:
        return 0
    try:
        return int(pynvml.nvmlDeviceGetCount())
    except Exception:
        return 0
    finally:
        _safe(pynvml.nvmlShutdown)


def _most(a: Optional[int], b: Optional[int]) -> Optional[int]:
    return b if a is None else a if b is None else max(a, b)


class _Sampler:
    """Reads the PCIe links now, and every 50 ms while the worker's load stage runs."""

    def __init__(self, pynvml, handles: list):
        self.pynvml, self.handles = pynvml, handles
        self.best = [(None, None)] * len(handles)
        self.loaded = False
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.sample()

    def sample(self) -> None:
        if self.pynvml is None:
            return
        for i, now in enumerate(pcie_now(self.pynvml, self.handles)):
            self.best[i] = tuple(_most(old, new) for old, new in zip(self.best[i], now))

    def on_stage(self, name: str) -> None:
        if name == "all-reduce load" and self._thread is None and self.pynvml is not None:
            self.loaded = True
            self._thread = threading.Thread(target=self._run, daemon=True, name="flexdoctor-pcie")
            self._thread.start()
        elif self._thread is not None and name != "all-reduce load":
            self.stop()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.sample()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1)


def probe(python: str, timeout: float = DEFAULT_TIMEOUT, nbytes: int = DEFAULT_BYTES,
          on_stage: Optional[Callable[[str], None]] = None, extra: Optional[dict] = None,
          force: bool = False) -> Optional[MultiGpuFacts]:
    """None on a node with fewer than two GPUs (nothing to connect); facts, partial or whole,
    otherwise. ``force`` with ``extra={"device": "cpu", "world": N}`` runs it on CPU (gloo): tests."""
    topo = topology()
    if len(topo.gpus) < 2 and not force:
        topo.close()
        return None
    sampler = _Sampler(topo.pynvml, topo.handles)
    cfg = {"bytes": int(nbytes), "iters": 20, "warmup": 5, "load_seconds": 1.5,
           "timeout": max(timeout - 30.0, 10.0), **(extra or {})}

    from .deep import _notify  # the progress line of `check --deep`

    def seen(name: str) -> None:
        sampler.on_stage(name)
        _notify(f"GPUs together: {name}")
        if on_stage is not None:
            on_stage(name)

    try:
        done = worker_run.stream([python, str(SCRIPT), json.dumps(cfg)], worker_run.Reader(on_stage=seen).feed,
                                 timeout=timeout)
    finally:
        sampler.stop()
        topo.close()
    gpus = [dataclasses.replace(g, pcie_gen=sampler.best[g.index][0], pcie_width=sampler.best[g.index][1],
                                pcie_loaded=sampler.loaded) for g in topo.gpus]
    return parse(done.stdout, done.stderr, done.returncode, done.timed_out, done.start_error, timeout,
                 gpus=gpus, pairs=topo.pairs, nvml_error=topo.error, nvml_uuids=topo.uuids)


def _index_map(devices: list, nvml_uuids: list) -> list:
    """NVML index of each torch device (matched by UUID; else the same order)."""
    out = []
    for i, d in enumerate(devices):
        uuid = str(d.get("uuid") or "").lower().replace("gpu-", "")
        hit = [j for j, u in enumerate(nvml_uuids) if u and uuid and u.lower().replace("gpu-", "") == uuid]
        out.append(hit[0] if hit else i)
    return out


def parse(stdout: str, stderr: str, returncode: Optional[int], timed_out: bool = False,
          start_error: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT, gpus: list = (), pairs: list = (),
          nvml_error: Optional[str] = None, nvml_uuids: Optional[list] = None) -> MultiGpuFacts | ProbeError:
    """Facts from the worker's output, whole or partial, joined with the NVML topology."""
    if start_error:
        return ProbeError.because("multigpu_start_failed", kind="error", stage="start", error=start_error)
    wire = worker_run.read(stdout)
    stage, result = wire.stage, wire.result()
    parts = {name: value for name, value in wire.parts if name}
    incomplete = None
    if result is None:
        # Each reason has a text naming the stage it died in (``..._during``) and one without.
        during, where = ("_during", {"where": stage}) if stage else ("", {})
        detail = worker_run.tail(stderr, 12) or None
        if timed_out:
            incomplete = ProbeError.because(f"multigpu_hung{during}", kind="timeout", stage=stage, detail=detail,
                                            seconds=f"{timeout:g}", **where)
        elif returncode is not None and returncode < 0:
            sig = worker_run.Completed(returncode, "", "").signal_name
            incomplete = ProbeError.because(f"multigpu_crashed{during}", kind="crash", stage=stage, detail=detail,
                                            signal=sig, **where)
        else:
            incomplete = ProbeError.because(f"multigpu_exit{during}", kind="error", stage=stage, detail=detail,
                                            status=returncode, **where)
        result = {"p2p": parts.get("p2p") or []}
    elif result.get("import_error"):
        return ProbeError(result["import_error"], kind="import-error", stage="import torch")
    elif result.get("device_error"):
        return ProbeError(result["device_error"], kind="error", stage="devices")
    devices = result.get("devices") or []
    if nvml_uuids is None:
        nvml_uuids = []
    nvml_of = _index_map(devices, nvml_uuids) if devices else []
    torch_p2p = {}
    for item in result.get("p2p") or []:
        a, b = item.get("a"), item.get("b")
        if isinstance(a, int) and isinstance(b, int) and max(a, b) < len(nvml_of):
            na, nb = sorted((nvml_of[a], nvml_of[b]))
            torch_p2p[(na, nb)] = bool(item.get("p2p"))
    pairs = [dataclasses.replace(p, p2p=torch_p2p.get((p.a, p.b))) for p in pairs]
    ar = result.get("allreduce")
    if isinstance(ar, dict) and ar.get("error_code") and not ar.get("error"):  # English for the JSON facts
        ar = dict(ar, error=reason_english(ar["error_code"], ar.get("error_args")))
    allreduce = from_jsonable(AllReduce, {**ar, "env": result.get("env") or {}}) if isinstance(ar, dict) else None
    return MultiGpuFacts(gpus=list(gpus), pairs=list(pairs), devices=nvml_of, allreduce=allreduce,
                         nvml_error=nvml_error, incomplete=incomplete, seconds=result.get("seconds"))
