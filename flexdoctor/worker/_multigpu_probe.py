# Run BY THE TARGET INTERPRETER in a subprocess with a timeout (`flexdoctor check --deep` on a
# node with two or more GPUs). stdlib + torch only, Python 3.8+: flexdoctor is not importable here.
#
#   python _multigpu_probe.py '<config json>'
#
# 1. torch's peer-access matrix (torch.cuda.can_device_access_peer for every pair).
# 2. An all-reduce across all local GPUs: one spawned process per GPU, joined through a TCPStore
#    this process hosts on 127.0.0.1 (nothing leaves the machine), NCCL backend. One correctness
#    all-reduce (every rank must get 1 + 2 + ... + n), `warmup` untimed ones, then `iters` timed
#    ones of `bytes` bytes of float32, the mean time of the slowest rank giving algbw = bytes / t
#    and busbw = algbw * 2 (n - 1) / n, as nccl-tests defines them (doc/PERFORMANCE.md there).
#    Then `load_seconds` more all-reduces, announced by a stage line, so the parent can read the
#    PCIe links while they carry traffic (an idle GPU lowers its PCIe generation to save power).
# 3. Everything under `timeout`: ranks that do not post their result in time are a hung
#    collective, reported with the stage each rank reached, and killed: never a hang.
#
# Config keys: bytes, iters, warmup, load_seconds, timeout, backend (nccl | gloo), device
# (cuda | cpu: gloo on CPU processes, for tests), world (cpu only), stall_rank (tests: that rank
# sleeps instead of joining the timed loop, the way a rank stuck on a broken link does).
# Protocol (stdout): the lines of _wire.py: stages as work starts ("all-reduce load" while the
# parent may read the PCIe links), the peer matrix as a part, then the result.
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _wire, even under -P / PYTHONSAFEPATH
import _wire  # noqa: E402  (and drops this folder from sys.path again)
from _wire import emit, part, short_error, stage  # noqa: E402, F401


def _timedelta(seconds):
    import datetime

    return datetime.timedelta(seconds=seconds)


def rank_main(rank, world, port, cfg):
    """One rank: join the group, check the sum, time the all-reduce, post the result in the store."""
    import torch
    import torch.distributed as dist

    timeout = float(cfg.get("timeout", 90))
    store = dist.TCPStore("127.0.0.1", port, world + 1, False, timeout=_timedelta(timeout))

    def mark(name):
        store.set("stage/%d" % rank, name)

    out = {"rank": rank}
    try:
        mark("init")
        cuda = cfg.get("device", "cuda") == "cuda"
        if cuda:
            torch.cuda.set_device(rank)
            device = torch.device("cuda", rank)
        else:
            device = torch.device("cpu")
        dist.init_process_group(cfg.get("backend", "nccl"), store=dist.PrefixStore("pg", store), rank=rank,
                                world_size=world, timeout=_timedelta(timeout))

        def sync():
            if cuda:
                torch.cuda.synchronize(device)

        n = max(1, int(cfg.get("bytes", 1 << 28)) // 4)
        mark("first all-reduce")  # NCCL builds its communicator here: a broken P2P path hangs here
        x = torch.full((n,), float(rank + 1), dtype=torch.float32, device=device)
        dist.all_reduce(x)
        sync()
        want = world * (world + 1) / 2.0
        out["correct"] = bool(float(x[0]) == want and float(x[-1]) == want and float(x[n // 2]) == want)
        x.zero_()  # timing runs on zeros: the values do not change the traffic, and never overflow
        mark("warm-up")
        for _ in range(int(cfg.get("warmup", 5))):
            dist.all_reduce(x)
        sync()
        mark("timing")
        if cfg.get("stall_rank") == rank:
            time.sleep(10 * timeout)
        dist.barrier()
        iters = int(cfg.get("iters", 20))
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        sync()
        out["seconds"] = (time.perf_counter() - t0) / iters
        out["iterations"] = iters
        load = float(cfg.get("load_seconds", 0))
        if load > 0:
            dist.barrier()
            mark("load")
            end = time.perf_counter() + load
            while True:  # every rank stops at the same count, decided by rank 0's clock
                go = torch.tensor([1 if time.perf_counter() < end else 0], device=device)
                dist.broadcast(go, 0)
                if not int(go.item()):
                    break
                for _ in range(8):
                    dist.all_reduce(x)
                sync()
        dist.barrier()
        mark("done")
        if cuda and rank == 0:
            try:
                v = torch.cuda.nccl.version()
                out["nccl_version"] = ".".join(str(p) for p in v) if isinstance(v, tuple) else str(v)
            except Exception:
                pass
        dist.destroy_process_group()
    except Exception as exc:
        out["error"] = short_error(exc)
    store.set("result/%d" % rank, json.dumps(out))


def peer_matrix(torch, n):
    out = []
    for a in range(n):
        for b in range(a + 1, n):
            ab = bool(torch.cuda.can_device_access_peer(a, b))
            ba = bool(torch.cuda.can_device_access_peer(b, a))
            out.append({"a": a, "b": b, "p2p": ab and ba})
    return out


def main():
    # long: a stage-by-stage script (topology, peer access, all-reduce) reported in order through _wire.
    cfg = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    out = {"env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}}
    stage("import torch")
    try:
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except BaseException as exc:
        out["import_error"] = short_error(exc)
        emit(out)
        return
    cuda = cfg.get("device", "cuda") == "cuda"
    backend = cfg.get("backend", "nccl" if cuda else "gloo")
    timeout = float(cfg.get("timeout", 90))
    stage("devices")
    if cuda:
        if not torch.cuda.is_available():
            out["device_error"] = "torch.cuda.is_available() is False"
            emit(out)
            return
        world = torch.cuda.device_count()
        devices = []
        for i in range(world):
            p = torch.cuda.get_device_properties(i)
            uuid = getattr(p, "uuid", None)
            devices.append({"index": i, "name": p.name, "uuid": str(uuid) if uuid is not None else None})
        out["devices"] = devices
        if world < 2:
            emit(out)
            return
        stage("peer access")
        out["p2p"] = peer_matrix(torch, world)
        part(out["p2p"], "p2p")
    else:
        world = int(cfg.get("world", 2))
    if not dist.is_available() or (backend == "nccl" and not dist.is_nccl_available()):
        out["allreduce"] = {"backend": backend, "world_size": world, "bytes": int(cfg.get("bytes", 1 << 28)),
                            # worded by the parent (worker-reason.<code> of flexdoctor's catalogues)
                            "error_code": "no_dist_backend", "error_args": {"backend": backend}, "stage": "init"}
        emit(out)
        return
    cfg = dict(cfg, backend=backend)
    stage("all-reduce start")
    store = dist.TCPStore("127.0.0.1", 0, world + 1, True, timeout=_timedelta(timeout), wait_for_workers=False)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=rank_main, args=(r, world, store.port, cfg), daemon=True) for r in range(world)]
    for p in procs:
        p.start()
    result = {"backend": backend, "world_size": world, "bytes": (max(1, int(cfg.get("bytes", 1 << 28)) // 4)) * 4,
              "timeout": timeout}
    deadline = time.monotonic() + timeout
    seen_stage = None
    results = {}
    while time.monotonic() < deadline and len(results) < world:
        for r in range(world):
            if r not in results and store.check(["result/%d" % r]):
                results[r] = json.loads(store.get("result/%d" % r).decode())
        if store.check(["stage/0"]):
            now = store.get("stage/0").decode()
            if now != seen_stage:
                seen_stage = now
                if now in ("timing", "load"):
                    stage("all-reduce " + now)  # the parent samples PCIe links during "load"
        dead = [p for p in procs if p.exitcode not in (None, 0)]
        if dead and len(results) < world and all(p.exitcode is not None for p in procs):
            break
        time.sleep(0.05)
    ranks = {}
    for r in range(world):
        try:
            ranks[r] = store.get("stage/%d" % r).decode() if store.check(["stage/%d" % r]) else "start"
        except Exception:
            ranks[r] = "?"
    for p in procs:
        if p.is_alive():
            p.kill()
        p.join(5)
    if len(results) < world:
        stuck = [r for r in range(world) if r not in results]
        died = [r for r in stuck if procs[r].exitcode not in (None, 0) and procs[r].exitcode != -9]
        result.update(hung=not died, stage=ranks.get(stuck[0]),
                      error="rank%s %s did not finish (stopped at: %s)" % (
                          "s" if len(stuck) > 1 else "", ", ".join(map(str, stuck)),
                          "; ".join("rank %d %s" % (r, ranks.get(r)) for r in stuck)) if not died else
                      "rank%s %s died (exit code %s)" % ("s" if len(died) > 1 else "", ", ".join(map(str, died)),
                                                         ", ".join(str(procs[r].exitcode) for r in died)))
    errors = [v.get("error") for v in results.values() if v.get("error")]
    if errors and not result.get("error"):
        result["error"] = errors[0]
        result["stage"] = ranks.get(min(r for r, v in results.items() if v.get("error")))
    times = [v["seconds"] for v in results.values() if v.get("seconds")]
    if len(times) == world:
        t = max(times)
        algbw = result["bytes"] / t / 1e9
        result.update(seconds=t, iterations=results[0].get("iterations"), algbw_gbps=round(algbw, 3),
                      busbw_gbps=round(algbw * 2 * (world - 1) / world, 3))
    if results:
        result["correct"] = all(v.get("correct") for v in results.values()) if len(results) == world else None
    if results.get(0, {}).get("nccl_version"):
        result["nccl_version"] = results[0]["nccl_version"]
    out["allreduce"] = result
    emit(out)


if __name__ == "__main__":
    main()
