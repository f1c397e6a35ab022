"""``torchrun … -m flexdoctor fleet gather``: check every node of a job over the job's own process group.

Every rank of the job runs this. One rank per node (LOCAL_RANK 0) checks its node; then all
ranks join the job's process group (``init_process_group`` from torchrun's environment, NCCL
when CUDA is available, else gloo) and the reports travel to rank 0 over it: the collective path
the training job will use carries them, so a node whose NCCL or network is broken shows up as a
failed or hung collective here, minutes before the real job would hang.

The wire carries JSON bytes, never pickles: torch's ``*_object`` collectives unpickle what any
peer of an unauthenticated rendezvous sends, which runs its code. Each rank's report is UTF-8
JSON in a uint8 tensor: the lengths first (one int64 a rank, ``all_gather``), then the bytes
padded to the longest (``gather`` to rank 0), each capped (:func:`wire_limit`); rank 0 parses them
with ``json`` and validates them exactly as ``fleet merge`` validates files (fleet/load.py).

Time box: the collective phase has ``timeout`` seconds (torch's own collective timeout is set a
minute later, so NCCL's watchdog, which aborts the process, never comes first). If it has not
finished by then, a watchdog thread on rank 0 writes the
fleet report from what did arrive (every rank also leaves its report in the rendezvous store
before the collective, so the reports of the ranks that did get that far are kept), names the
ranks that never reported, and ends the process with exit 1; the other ranks end too. A hang
becomes a report, never a stuck job.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Callable, Optional

from ..text import Said, t
from .load import from_documents, name_node, parse, validate
from .merge import merge
from .model import FileProblem, FleetReport
from .stack import reported_name

STORE_PREFIX = "flexdoctor/fleet/report/"
WIRE_MAX = 4 << 20  # bytes of one node's report on the wire (a real one is ~20 KB)
WIRE_BUDGET = 2 << 30  # bytes rank 0 may receive in all: every report is padded to the longest
TORCH_GRACE = 60.0  # seconds torch's collective timeout runs past ours
FOLLOWER_GRACE = 30.0  # seconds the other ranks wait past rank 0's time box
_REQUIRED_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


class GatherError(Exception):
    """fleet gather cannot run here (no torchrun environment, no torch): a usage error, exit 2."""


@dataclass(frozen=True)
class Identity:
    rank: int
    world: int
    local_rank: int
    group_rank: Optional[int]  # the node's index in the job (torchrun's GROUP_RANK)
    local_world: Optional[int] = None  # ranks per node (torchrun's LOCAL_WORLD_SIZE)

    def node_ranks(self) -> list:
        """The ranks that check a node: torchrun numbers a node's ranks contiguously."""
        step = self.local_world if self.local_world and self.world % self.local_world == 0 else 1
        return list(range(0, self.world, step))

    @property
    def checks_node(self) -> bool:
        return self.local_rank == 0


def identity(env: Optional[dict] = None) -> Identity:
    env = os.environ if env is None else env
    missing = [k for k in _REQUIRED_ENV if not env.get(k)]
    if missing:
        raise GatherError(t("fleet.gather.not_distributed"))
    try:
        rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
        local = int(env.get("LOCAL_RANK") or 0)
        group = int(env["GROUP_RANK"]) if env.get("GROUP_RANK") not in (None, "") else None
        local_world = int(env["LOCAL_WORLD_SIZE"]) if env.get("LOCAL_WORLD_SIZE") not in (None, "") else None
    except ValueError as exc:
        raise GatherError(t("fleet.gather.bad_env", error=exc)) from None
    return Identity(rank, world, local, group, local_world)


@dataclass
class Options:
    timeout: float = 180.0  # seconds for the collective phase
    backend: str = "auto"  # auto | nccl | gloo
    ignore: tuple = ()
    expect: tuple = ()
    bundle: Optional[str] = None


@dataclass
class _State:
    docs: dict = field(default_factory=dict)  # rank -> report document (rank 0)
    done: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    emitted: bool = False


def _backend(torch, requested: str) -> str:
    if requested != "auto":
        return requested
    return "nccl" if torch.cuda.is_available() and torch.distributed.is_nccl_available() else "gloo"


def _store(dist):
    try:
        from torch.distributed import distributed_c10d

        return distributed_c10d._get_default_store()
    except Exception:  # private API: without it only the collective carries reports
        return None


def wire_limit(world: int) -> int:
    """The most bytes one rank's report may have on the wire (longer: not sent, a ``too-large``
    problem): every rank's buffer is padded to the longest, so rank 0 holds world x this."""
    return min(WIRE_MAX, max(256 << 10, WIRE_BUDGET // max(world, 1)))


def encode(doc: Optional[dict]) -> bytes:
    """A report as it travels: compact UTF-8 JSON (b"": this rank has no report)."""
    return b"" if doc is None else json.dumps(doc, separators=(",", ":")).encode("utf-8")


def _too_large(rank: int, limit: int) -> FileProblem:
    return FileProblem(f"rank {rank}", "too-large", Said.of("fleet.detail.too_large_sent", size=limit >> 10))


def _from_store(store, world: int) -> dict:
    """rank -> the JSON bytes a rank left in the rendezvous store (or why not)."""
    out: dict = {}
    if store is None:
        return out
    limit = wire_limit(world)
    for r in range(world):
        key = f"{STORE_PREFIX}{r}"
        try:
            if store.check([key]):
                value = bytes(store.get(key))
                out[r] = value if len(value) <= limit else _too_large(r, limit)
        except Exception:
            continue
    return out


def _to_bytes(tensor) -> bytes:
    tensor = tensor.cpu()
    try:
        return tensor.numpy().tobytes()
    except Exception:  # a torch without numpy
        return bytes(tensor.tolist())


def exchange(dist, torch, payload: bytes, me: "Identity", device) -> Optional[dict]:
    """Every rank's JSON bytes to rank 0, as uint8 tensors over the job's backend: lengths first
    (all_gather, one int64 a rank), then the bytes padded to the longest (gather). Rank 0 gets
    ``rank -> bytes | None | FileProblem``; the others None. A length over the limit (or below 0)
    is sent by no one: every rank computes the same widths from the same lengths."""
    limit = wire_limit(me.world)
    sizes = [torch.zeros(1, dtype=torch.int64, device=device) for _ in range(me.world)]
    dist.all_gather(sizes, torch.tensor([len(payload)], dtype=torch.int64, device=device))
    lengths = [int(x.item()) for x in sizes]
    sent = [n if 0 <= n <= limit else 0 for n in lengths]
    width = max(sent + [1])
    buf = torch.zeros(width, dtype=torch.uint8, device=device)
    if sent[me.rank]:
        buf[: len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8).to(device)
    if me.rank != 0:
        dist.gather(buf, dst=0)
        return None
    bufs = [torch.zeros(width, dtype=torch.uint8, device=device) for _ in range(me.world)]
    dist.gather(buf, gather_list=bufs, dst=0)
    out: dict = {}
    for r, n in enumerate(lengths):
        if n != sent[r]:
            out[r] = _too_large(r, limit)
        else:
            out[r] = _to_bytes(bufs[r][:n]) if n else None
    return out


def node_reports(docs: dict) -> dict:
    """host name -> report document, for the ranks whose report is a valid node report with a
    valid name (``--reports-dir`` writes DIR/<name>.json: never a name a report chose otherwise)."""
    out: dict = {}
    for r, value in sorted(docs.items()):
        label = f"rank {r}"
        if isinstance(value, (bytes, bytearray)):
            value, problem = parse(label, bytes(value))
            if problem is not None:
                continue
        report, facts, problem = validate(label, value)
        if problem is not None or "results" not in value:
            continue
        name, problem = name_node(label, None, reported_name(facts))
        if problem is None:
            out.setdefault(name, report)
    return out


def build_report(docs: dict, me: Identity, opts: Options, gather_error: Optional[Said] = None,
                 backend: Optional[str] = None) -> FleetReport:
    """Rank 0: the fleet report from what the ranks that checked their node sent: ``rank -> JSON
    bytes`` (or a parsed document, or a FileProblem: it arrived but cannot be used; None: nothing)."""
    from . import bundle as bundle_mod

    arrived = [(r, d) for r, d in sorted(docs.items()) if d is not None]
    pairs = [(f"rank {r}", d) for r, d in arrived if not isinstance(d, FileProblem)]
    nodes, problems = from_documents(pairs)
    problems += [d for _r, d in arrived if isinstance(d, FileProblem)]
    # The node-checking ranks whose report never arrived (or whose check crashed).
    problems += [FileProblem(f"rank {r}", "no-report", Said.of("fleet.gather.no_report"))
                 for r in me.node_ranks() if docs.get(r) is None]
    match = bundle_mod.match(opts.bundle, nodes) if opts.bundle else None
    source = Said.of("fleet.gather.source", world=me.world, backend=backend or "?")
    return merge(nodes, problems, ignore=opts.ignore, expect=opts.expect, bundle=match, source=source,
                 gather_error=gather_error)


def run(opts: Options, check: Callable[[], dict], emit: Callable[[FleetReport, dict], None],
        env: Optional[dict] = None, log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
        joined: Optional[Callable[[Identity], None]] = None) -> int:
    """Run on every rank. ``check()`` returns this node's report document (called on LOCAL_RANK 0
    only); ``emit(report, docs)`` renders and writes on rank 0; ``joined(identity)`` is called once
    this rank is in the process group, before the collective. Returns the exit code."""
    # long: one linear story every rank runs in order (join, check, gather, watchdog, verdict); split, the
    # order and the time boxes between the steps would be harder to follow.
    me = identity(env)
    try:
        import torch
        import torch.distributed as dist
    except Exception as exc:  # torch missing or broken in the job's own interpreter
        raise GatherError(t("fleet.gather.no_torch", error=f"{type(exc).__name__}: {exc}")) from None

    payload = b""
    if me.checks_node:
        try:
            payload = encode(check())
        except Exception as exc:  # a flexdoctor bug on one node: that node reports nothing, the rest go on
            log(t("fleet.gather.node_check_failed", rank=me.rank, error=f"{type(exc).__name__}: {exc}"))
    backend = _backend(torch, opts.backend)
    state = _State()

    def give_up(reason: Optional[Said]) -> None:
        """The collective failed (``reason``) or hung (None): rank 0 reports what it has; every rank ends."""
        with state.lock:
            if state.emitted:
                return
            state.emitted = True
        if me.rank == 0:
            docs = _from_store(_store(dist), me.world)
            docs.setdefault(0, payload or None)
            missing = [r for r in me.node_ranks() if docs.get(r) is None]
            if reason is not None:
                error = reason
            elif missing:
                error = Said.of("fleet.gather.timeout", seconds=f"{opts.timeout:g}", ranks=", ".join(map(str, missing)))
            else:
                error = Said.of("fleet.gather.timeout_all", seconds=f"{opts.timeout:g}")
            try:
                emit(build_report(docs, me, opts, gather_error=error, backend=backend), docs)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
        else:
            said = reason.text() if reason is not None else t("fleet.gather.rank_timeout", seconds=f"{opts.timeout:g}")
            log(t("fleet.gather.rank_gave_up", rank=me.rank, reason=said))
            sys.stderr.flush()

    def watchdog() -> None:
        # Rank 0 gives up first and writes the report; the others a little later, so their exit
        # never looks to rank 0 like a crashed peer.
        if not state.done.wait(opts.timeout if me.rank == 0 else opts.timeout + FOLLOWER_GRACE):
            give_up(None)
            os._exit(1)  # a thread stuck in a collective cannot be interrupted any other way

    threading.Thread(target=watchdog, name="flexdoctor-gather-watchdog", daemon=True).start()
    code = 1
    try:
        if backend == "nccl":
            torch.cuda.set_device(me.local_rank)
        # torch's own collective timeout comes after the watchdog: NCCL's watchdog aborts the
        # process on a timeout, which would leave no report behind.
        dist.init_process_group(backend=backend, timeout=timedelta(seconds=opts.timeout + TORCH_GRACE))
        store = _store(dist)
        if store is not None and payload:
            try:  # so a rank that gets this far is reported even if the collective then hangs
                store.set(f"{STORE_PREFIX}{me.rank}", payload)
            except Exception:
                pass
        if joined is not None:
            joined(me)
        device = torch.device("cuda", torch.cuda.current_device()) if backend == "nccl" else torch.device("cpu")
        docs = exchange(dist, torch, payload, me, device)
        if me.rank == 0:
            report = build_report(docs, me, opts, backend=backend)
            with state.lock:
                state.emitted = True
            emit(report, docs)
            code = report.exit_code
        verdict = torch.tensor([code], dtype=torch.int64, device=device)
        dist.broadcast(verdict, src=0)  # every rank ends with the fleet's verdict
        code = 0 if int(verdict.item()) == 0 else 1
        state.done.set()
        dist.destroy_process_group()
        return code
    except Exception as exc:  # the collective itself failed: that is the finding
        state.done.set()
        give_up(Said.of("fleet.gather.collective_failed", backend=backend, error=f"{type(exc).__name__}: {exc}"))
        return 1
