"""The GPUs of one node together (FD9xx, ``check --deep`` with two or more GPUs): peer access,
NVLink, PCIe links, an all-reduce across them and its bus bandwidth. Pure over ``facts.multi_gpu``.

Expected bandwidth is NCCL's own model of the links (NVIDIA/nccl src/graph/topo.h and topo.cc):
an NVLink carries 18 GB/s on sm_60, 20 on sm_70/sm_80, 12 on sm_86, 20.6 on sm_90 and 40.1 on
sm_100; a PCIe lane carries (15, 30, 60, 120, 240, 480) / 80 GB/s for generations 1 to 6 (so
Gen3 x16 = 12 GB/s, Gen4 x16 = 24, Gen5 x16 = 48). Bus bandwidth is nccl-tests' definition
(algbw * 2 (n - 1) / n), which for a ring all-reduce approaches the bandwidth of one GPU's links.
Measured on 2 x H200 over NV18: 291.6 GB/s for 256 MiB, 79 % of the model's 18 x 20.6 = 370.8.
"""

from __future__ import annotations

from typing import Optional

from ..facts import Facts, MultiGpuFacts, ProbeError, Skip, ok
from ..model import Finding, Fix
from ..text import has, t
from ._util import probe_error_text
from .base import check, fail, passed, skip, warn

# NCCL topo.cc kvDictPciGen: per lane, in units of 100 Mbps; GB/s = width * speed / 80.
PCIE_SPEED = {1: 15, 2: 30, 3: 60, 4: 120, 5: 240, 6: 480}
# Below this share of the model, the all-reduce is "far below what the topology should give".
FAR_BELOW = 0.5
# Without peer access NCCL copies through host memory (its SHM transport): each byte crosses
# the PCIe link twice, so the model halves.
NO_P2P_FACTOR = 0.5


def _multi(facts: Facts) -> MultiGpuFacts:
    m = facts.multi_gpu
    if m is None:
        # The deep tier ran and found fewer than two GPUs, or it was not run at all.
        raise Skip(t("multi-gpu.single" if facts.deep is not None else "multi-gpu.not_run"))
    if isinstance(m, ProbeError):
        raise Skip(t("multi-gpu.failed", error=probe_error_text(m)))
    return m


def _used(m: MultiGpuFacts) -> list:
    """NVML indices of the GPUs the all-reduce ran on (torch's GPUs), else all of them."""
    return sorted(set(m.devices)) if m.devices else [g.index for g in m.gpus]


def _sm(facts: Facts, index: int) -> Optional[int]:
    if not ok(facts.gpu):
        return None
    for d in facts.gpu.devices:
        if d.index == index:
            major, minor = d.cc
            return major * 10 + minor
    return None


def nvlink_gbps(sm: Optional[int]) -> float:
    """GB/s of one NVLink: NCCL's ncclTopoNVLinkBw (src/graph/topo.h constants), term for term."""
    if sm is None:
        return 20.0  # its fallback, SM80_NVLINK_BW
    return (40.1 if sm >= 100 else 20.6 if sm >= 90 else 12.0 if sm == 86 else 20.0 if sm >= 80
            else 20.0 if sm >= 70 else 18.0 if sm >= 60 else 20.0)


def pcie_gbps(gen: Optional[int], width: Optional[int]) -> Optional[float]:
    if not gen or not width or gen not in PCIE_SPEED:
        return None
    return width * PCIE_SPEED[gen] / 80.0


def expected(facts: Facts, m: MultiGpuFacts) -> tuple:
    """(GB/s NCCL's model gives one GPU's links, words for how) or (None, None)."""
    used = _used(m)
    gpus = {g.index: g for g in m.gpus}
    pairs = [p for p in m.pairs if p.a in used and p.b in used]
    if not used or any(i not in gpus for i in used) or not pairs:
        return None, None
    if all(p.nvlinks > 0 for p in pairs):
        per_gpu = []
        for i in used:
            g = gpus[i]
            links = g.nvlinks if g.nvswitch else sum(p.nvlinks for p in pairs if i in (p.a, p.b))
            per_gpu.append((links * nvlink_gbps(_sm(facts, i)), links, _sm(facts, i)))
        bw, links, sm = min(per_gpu)
        return bw, t("multi-gpu.model_nvlink", links=links, sm=sm if sm is not None else "?",
                     per=f"{nvlink_gbps(sm):g}", switch=" (NVSwitch)" if any(gpus[i].nvswitch for i in used) else "")
    per_gpu = [(pcie_gbps(gpus[i].pcie_gen_max, gpus[i].pcie_width_max), gpus[i]) for i in used]
    if any(bw is None for bw, _ in per_gpu):
        return None, None
    bw, g = min(per_gpu, key=lambda x: x[0])
    how = t("multi-gpu.model_pcie", gen=g.pcie_gen_max, width=g.pcie_width_max)
    if any(p.p2p is False for p in pairs):
        bw *= NO_P2P_FACTOR
        how += t("multi-gpu.model_no_p2p")
    return bw, how


def _links(m: MultiGpuFacts, used: list) -> str:
    """`NV18`, `PIX`, ... as nvidia-smi topo -m names the pairs, most common first."""
    kinds: dict = {}
    for p in m.pairs:
        if p.a in used and p.b in used:
            name = f"NV{p.nvlinks}" if p.nvlinks else (p.topology or "?")
            kinds[name] = kinds.get(name, 0) + 1
    return ", ".join(k for k, _ in sorted(kinds.items(), key=lambda kv: -kv[1]))


def _nccl_fix() -> Fix:
    return Fix(summary=t("multi-gpu.fix_nccl"),
               commands=("nvidia-smi topo -m",
                         "NCCL_DEBUG=INFO flexdoctor check --deep --only FD904,FD905 -v",
                         "NCCL_P2P_DISABLE=1 flexdoctor check --deep --only FD904,FD905"))


# --------------------------------------------------------------------------- FD901


@check("FD901", "gpu-peer-access", area="multigpu")
def gpu_peer_access(facts: Facts) -> Finding:
    """What it checks: for every pair of this node's GPUs, whether torch can use peer-to-peer
    access both ways (torch.cuda.can_device_access_peer), beside what NVML says of the pair
    (nvmlDeviceGetP2PStatus) and how they are joined (NVLink, or the PCIe level nvidia-smi topo -m
    shows: PIX, PXB, PHB, NODE, SYS).

    Why it matters: NCCL moves a multi-GPU training step's gradients GPU to GPU when peer access
    works. GPUs joined by NVLink without peer access fall back to copies through host memory at
    a fraction of the speed; every step of a data-parallel job pays it. Consumer cards without
    P2P over PCIe are normal and only noted.

    How to fix: for NVLink pairs, look for a driver setting or virtualisation layer that disables
    P2P (NVML's status names it, e.g. disabled-by-regkey) and for NCCL_P2P_DISABLE in the job's
    environment; `nvidia-smi topo -m` shows the links.
    """
    m = _multi(facts)
    used = _used(m)
    pairs = [p for p in m.pairs if p.a in used and p.b in used]
    asked = [p for p in pairs if p.p2p is not None]
    if not pairs or not asked:
        return skip("multi-gpu.not_reached")
    nvlink_without = [p for p in asked if p.p2p is False and p.nvlinks > 0]
    if nvlink_without:
        details = [t("gpu-peer-access.pair", a=p.a, b=p.b, how=f"NV{p.nvlinks}", nvml=p.nvml_p2p or "?")
                   for p in nvlink_without]
        return warn("gpu-peer-access.nvlink_no_p2p", Fix(summary=t("gpu-peer-access.fix"), commands=("nvidia-smi topo -m",)),
                    details=details, count=len(nvlink_without), total=len(pairs))
    without = [p for p in asked if p.p2p is False]
    if without:
        details = [t("gpu-peer-access.pair", a=p.a, b=p.b, how=p.topology or "?", nvml=p.nvml_p2p or "?")
                   for p in without]
        return passed("gpu-peer-access.pcie_no_p2p", details=details, count=len(without), total=len(pairs))
    return passed("gpu-peer-access.pass", total=len(pairs), links=_links(m, used))


# --------------------------------------------------------------------------- FD902


@check("FD902", "nvlink-links", area="multigpu")
def nvlink_links(facts: Facts) -> Finding:
    """What it checks: how many NVLinks each GPU of this node has active
    (nvmlDeviceGetNvLinkState), their version, and whether they end at another GPU or at an
    NVSwitch; the GPUs of one node are built alike, so one GPU with fewer active links than the
    others has a link down.

    Why it matters: an NVLink that trained down or failed lowers that GPU's bandwidth, and a ring
    all-reduce runs at the speed of its slowest link: the whole job's communication slows, with
    no error anywhere.

    How to fix: `nvidia-smi nvlink --status` shows each link; a link that stays down across a
    reboot is a hardware fault (reseat or service the GPU baseboard). Keep the node out of
    multi-GPU jobs until then (`flexdoctor fleet merge --exclude-file`).
    """
    m = _multi(facts)
    used = _used(m)
    gpus = [g for g in m.gpus if g.index in used]
    if not gpus:
        return skip("multi-gpu.not_reached")
    linked = [g for g in gpus if g.nvlinks]
    if not linked:
        return skip("nvlink-links.none")
    most = max(g.nvlinks for g in gpus)
    short = [g for g in gpus if g.nvlinks < most]
    if short:
        details = [t("nvlink-links.gpu", index=g.index, active=g.nvlinks, most=most) for g in short]
        return warn("nvlink-links.down", Fix(summary=t("nvlink-links.fix"),
                                             commands=tuple(f"nvidia-smi nvlink --status -i {g.index}" for g in short)),
                    details=details, gpus=", ".join(str(g.index) for g in short), most=most)
    version = linked[0].nvlink_version
    return passed("nvlink-links.pass", count=len(gpus), links=most, version=version if version else "?",
                  fabric=t("nvlink-links.switch") if any(g.nvswitch for g in gpus) else t("nvlink-links.direct"))


# --------------------------------------------------------------------------- FD903


@check("FD903", "pcie-link", area="multigpu")
def pcie_link(facts: Facts) -> Finding:
    """What it checks: each GPU's PCIe link, the widest and fastest it ran (read idle and again
    while the all-reduce ran) against the most this GPU can do in its slot
    (nvmlDeviceGetMaxPcieLinkWidth / Generation). A narrower link is a finding; a lower
    generation only when the GPUs talk over PCIe and it stayed low under that load (an idle GPU
    lowers its link generation on purpose).

    Why it matters: a link that trained at x8 instead of x16 (a badly seated card or riser, a
    damaged slot) halves the GPU's host and peer bandwidth: data loading, checkpoints and, on
    PCIe-only nodes, every all-reduce run at half speed.

    How to fix: `nvidia-smi -q -d PCIE` (or `lspci -vv`, LnkSta against LnkCap) shows the link;
    reseat the card or riser, check the slot's BIOS setting, keep the node out until fixed.
    """
    m = _multi(facts)
    used = _used(m)
    gpus = [g for g in m.gpus if g.index in used and g.pcie_width_max]
    if not gpus:
        return skip("pcie-link.unknown")
    nvlinked = bool(m.pairs) and all(p.nvlinks > 0 for p in m.pairs if p.a in used and p.b in used)
    problems = []
    for g in gpus:
        if g.pcie_width is not None and g.pcie_width < g.pcie_width_max:
            problems.append(t("pcie-link.narrow", index=g.index, width=g.pcie_width, max=g.pcie_width_max))
        elif (g.pcie_loaded and not nvlinked and g.pcie_gen is not None and g.pcie_gen_max
              and g.pcie_gen < g.pcie_gen_max):
            problems.append(t("pcie-link.slow", index=g.index, gen=g.pcie_gen, max=g.pcie_gen_max))
    if problems:
        return warn("pcie-link.degraded", Fix(summary=t("pcie-link.fix"), commands=("nvidia-smi -q -d PCIE",)),
                    details=problems, count=len(problems))
    g = gpus[0]
    return passed("pcie-link.pass", count=len(gpus), gen=g.pcie_gen_max or "?", width=g.pcie_width_max)


# --------------------------------------------------------------------------- FD904


@check("FD904", "nccl-allreduce", area="multigpu")
def nccl_allreduce(facts: Facts) -> Finding:
    """What it checks: an all-reduce across all of this node's GPUs, one process per GPU as a
    training job runs it (NCCL backend, a store on 127.0.0.1): that it finishes inside a time
    box and every GPU gets the right sum.

    Why it matters: a broken peer path (PCIe ACS or an IOMMU in the way of P2P, a failing
    NVLink, mismatched NCCL libraries) makes the first collective of a training job hang
    forever or return garbage. Here it becomes a finding that names the stage it stopped in,
    before the job is scheduled.

    How to fix: rerun with NCCL_DEBUG=INFO to see which transport NCCL picks; if the all-reduce
    works with NCCL_P2P_DISABLE=1, the P2P path is broken (disable PCIe ACS, use iommu=pt, update
    the driver); `nvidia-smi topo -m` shows how the GPUs are joined.
    """
    m = _multi(facts)
    ar = m.allreduce
    if m.incomplete is not None and (ar is None or ar.seconds is None):
        inc = m.incomplete
        return fail("nccl-allreduce.died", _nccl_fix(), details=tuple((inc.detail or "").splitlines()[-6:]),
                    message=probe_error_text(inc))
    if ar is None:
        return skip("multi-gpu.not_reached")
    if ar.hung:
        return fail("nccl-allreduce.hung", _nccl_fix(), seconds=f"{ar.timeout:g}" if ar.timeout else "?",
                    n=ar.world_size, stage=ar.stage or "?", error=ar.error or "")
    if ar.error_code and has(f"worker-reason.{ar.error_code}") and isinstance(ar.error_args, dict):
        return fail("nccl-allreduce.error", _nccl_fix(), n=ar.world_size, stage=ar.stage or "?",
                    error=t(f"worker-reason.{ar.error_code}", **ar.error_args))
    if ar.error:
        return fail("nccl-allreduce.error", _nccl_fix(), n=ar.world_size, stage=ar.stage or "?",
                    error=ar.error.strip().splitlines()[-1][:400])
    if ar.correct is False:
        return fail("nccl-allreduce.wrong", _nccl_fix(), n=ar.world_size, backend=ar.backend)
    details = tuple(f"{k}={v}" for k, v in sorted(ar.env.items()))
    return passed("nccl-allreduce.pass", n=ar.world_size, backend=ar.backend,
                  version=f" {ar.nccl_version}" if ar.nccl_version else "", details=details)


# --------------------------------------------------------------------------- FD905


@check("FD905", "nccl-bandwidth", area="multigpu")
def nccl_bandwidth(facts: Facts) -> Finding:
    """What it checks: the bus bandwidth of that all-reduce (256 MiB of float32, 20 timed runs
    after 5 warm-ups; busbw = algbw * 2 (n - 1) / n, as nccl-tests defines it) against what the
    node's links should give in NCCL's own topology model: active NVLinks times the per-link
    bandwidth of the GPU's architecture, or the PCIe link (halved without peer access). Far below
    (under half) is a finding.

    Why it matters: a P2P path disabled by an environment variable or the platform, a link
    running degraded, or traffic forced through host memory all leave training working but
    slower on every step, silently. 2 x H200 over NV18 measures 291.6 GB/s; the model says
    370.8 GB/s.

    How to fix: compare with `nvidia-smi topo -m`; look for NCCL_P2P_DISABLE, NCCL_P2P_LEVEL,
    NCCL_SHM_DISABLE in the job's environment; rerun with NCCL_DEBUG=INFO to see the transport
    NCCL picked (P2P/CUMEM or NVLS on healthy NVLink nodes, SHM when P2P is off).
    """
    m = _multi(facts)
    ar = m.allreduce
    if ar is None or ar.busbw_gbps is None:
        return skip("multi-gpu.not_reached")
    size = f"{ar.bytes / (1 << 20):g} MiB"
    model, how = expected(facts, m)
    if model is None:
        return passed("nccl-bandwidth.no_model", busbw=f"{ar.busbw_gbps:.1f}", n=ar.world_size, size=size)
    share = ar.busbw_gbps / model if model else 0.0
    kw = dict(busbw=f"{ar.busbw_gbps:.1f}", n=ar.world_size, size=size, model=f"{model:.1f}", how=how,
              share=f"{share:.0%}")
    if share < FAR_BELOW:
        env = tuple(f"{k}={v}" for k, v in sorted(ar.env.items()))
        return warn("nccl-bandwidth.low", _nccl_fix(), details=env, **kw)
    return passed("nccl-bandwidth.pass", **kw)
