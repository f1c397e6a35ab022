"""The ``bench`` command: time every attention path here.

Thin like the rest of the CLI: parse, call ``deep.bench.run``, render (``render/bench_view.py``), choose the exit code. Usage
errors exit 2 with one line; exit 1 when an item crashed, hung or raised an unexpected error
(an out-of-memory or a backend torch refuses is a result, not a failure).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import List, Optional

import typer
from typing_extensions import Annotated

from ..cliutil import EXIT_USAGE, in_ci
from ..cliutil import split as _split
from ..cliutil import usage_error as _usage_error
from ..cliutil import write as _write
from ..render._escape import terminal_line
from ..text import t
from ..workload import DTYPES, WorkloadError
from ._root import require_safe_python
from ._common import renamed, require_worker_python
from ._interp import choose_for_worker



def _sizes(values: Optional[List[str]], flag: str, default: list) -> list:
    from ..workload import WorkloadError, parse_sizes

    try:
        return parse_sizes(_split(values), flag) or list(default)
    except WorkloadError as exc:
        raise _usage_error(str(exc))


def _choices(values: Optional[List[str]], flag: str, allowed: tuple, default: list, aliases: dict) -> list:
    words = [aliases.get(w.lower(), w.lower()) for w in _split(values)] or list(default)
    bad = [w for w in words if w not in allowed]
    if bad:
        raise _usage_error(t("cli.error.choose_from", flag=flag, value=bad[0], choices=", ".join(allowed)))
    return list(dict.fromkeys(words))


def bench(
    seq_len: Annotated[Optional[List[str]], typer.Option("--seq-len", "-L", metavar="N",
                       help="Sequence lengths (repeat or comma-separate; 1k = 1024). Default: 1k,4k.")] = None,
    head_dim: Annotated[Optional[List[str]], typer.Option("--head-dim", "-d", metavar="N",
                        help="Head dimensions. Default: 64,128.")] = None,
    batch: Annotated[int, typer.Option("--batch", "-b", min=1, help="Batch size.")] = 2,
    heads: Annotated[int, typer.Option("--heads", min=1, help="Query heads.")] = 16,
    kv_heads: Annotated[Optional[int], typer.Option("--kv-heads", min=1,
                        help="Key/value heads (GQA when fewer than --heads; must divide it). Default: --heads.")] = None,
    dtype: Annotated[Optional[List[str]], typer.Option("--dtype", metavar="DTYPE",
                     help="bf16, fp16, fp32 (repeat or comma-separate). Default: bf16 on a GPU, fp32 on the CPU.")] = None,
    mask: Annotated[Optional[List[str]], typer.Option("--mask", metavar="MASK",
                    help="none, causal (repeat or comma-separate). Default: none,causal.")] = None,
    impl: Annotated[Optional[List[str]], typer.Option("--impl", metavar="NAME",
                    help="Only these: flex-compiled, flex-eager, sdpa-flash, sdpa-efficient, sdpa-cudnn, sdpa-math, "
                         "flash-attn. Default: all.")] = None,
    passes: Annotated[Optional[List[str]], typer.Option("--pass", metavar="PASS",
                      help="fwd, fwdbwd. Default: both.")] = None,
    old_mode: Annotated[Optional[List[str]], typer.Option("--mode", metavar="PASS", hidden=True,
                        help="Deprecated spelling of --pass (--mode is warm-cache's compile mode).")] = None,
    device: Annotated[str, typer.Option("--device", metavar="DEVICE",
                      help="auto (default: CUDA if torch sees it), cuda or cpu.")] = "auto",
    reps: Annotated[int, typer.Option("--reps", min=3, help="Timed runs per measurement (at most; fewer when "
                                                              "one run takes long). The median is reported.")] = 50,
    warmup: Annotated[int, typer.Option("--warmup", min=1, help="Untimed runs first (after the first call, "
                                                                 "which compiles).")] = 3,
    timeout: Annotated[float, typer.Option("--timeout", min=10, metavar="S",
                       help="Give up on one measurement after S seconds without progress.")] = 300.0,
    python: Annotated[Optional[str], typer.Option("--python", metavar="PATH",
                      help="Interpreter to benchmark in (the one your training runs with). Default: this one.")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", metavar="FORMAT",
                   help="text (table and bars, default), json or markdown.")] = "text",
    output: Annotated[Optional[Path], typer.Option("--output", "-o", metavar="FILE",
                      help="Write the result to FILE instead of stdout.")] = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colour (also: NO_COLOR=1).")] = False,
) -> None:
    """Time every attention path here: compiled flex, eager flex, SDPA per backend, flash-attn.

    Forward and forward+backward for each shape; GPU timing with warm-up, CUDA events and the
    median of many runs on fresh random inputs; TFLOP/s from the attention FLOP count (halved
    for causal); peak memory. An out-of-memory or a backend torch refuses is shown, not fatal.

    Examples:

      flexdoctor bench

      flexdoctor bench -L 1k,4k,16k -d 64,128 --mask none,causal --dtype bf16

      flexdoctor bench --heads 32 --kv-heads 8 -L 8k --impl flex-compiled,sdpa-flash

      flexdoctor bench --device cpu -L 256 -d 64 --format json -o bench.json
    """
    # Long only because typer declares each option in the signature (and the docstring is the
    # --help text); the body is parse -> call the layer -> render.
    from ..deep import bench as b
    from ..render import bench_view

    if fmt not in ("text", "json", "markdown"):
        raise _usage_error(t("cli.error.format", value=fmt, choices="text, json or markdown"))
    if device not in ("auto", "cuda", "cpu"):
        raise _usage_error(t("cli.error.device", value=device))
    seq_lens = _sizes(seq_len, "--seq-len", [1024, 4096])
    head_dims = _sizes(head_dim, "--head-dim", [64, 128])
    dtypes = _choices(dtype, "--dtype", b.DTYPES, [], DTYPES)
    masks = _choices(mask, "--mask", b.MASKS, list(b.MASKS), {})
    impls = _choices(impl, "--impl", b.IMPLS, list(b.IMPLS), {"flash_attn": "flash-attn"})
    passes = renamed(passes, old_mode, "--pass", "--mode")
    modes = _choices(passes, "--pass", b.MODES, list(b.MODES), {"fwd+bwd": "fwdbwd", "train": "fwdbwd"})
    kv = kv_heads or heads
    if heads % kv:
        raise _usage_error(t("cli.error.kv_heads", kv=kv, heads=heads))
    target = choose_for_worker(python)
    require_safe_python(target)  # as root: nothing a non-root user can change is started
    require_worker_python(python, target)
    if not dtypes:
        dtypes = ["float32"] if device == "cpu" else ["bfloat16"]
    try:
        cases = b.grid(batch, heads, kv, seq_lens, head_dims, dtypes, masks, device=device)
    except WorkloadError as exc:
        raise _usage_error(str(exc))
    interactive = sys.stderr.isatty() and not in_ci() and os.environ.get("TERM") != "dumb"
    try:
        report = _run_with_progress(b, target, cases, impls, modes, device, reps, warmup, timeout, interactive)
    except b.BenchError as exc:
        # The worker's last lines on stderr: shown on our one line (\n visible), never lines of their own.
        typer.echo(terminal_line(t("cli.bench.could_not_run", error=exc)), err=True)
        raise typer.Exit(EXIT_USAGE)  # the contract: 2 when flexdoctor could not run
    if fmt == "json":
        text = bench_view.render_json(report)
    elif fmt == "markdown":
        text = bench_view.render_markdown(report)
    else:
        color = (not no_color and not os.environ.get("NO_COLOR") and not in_ci() and output is None
                 and sys.stdout.isatty())
        text = bench_view.render_text(report, color=color, width=shutil.get_terminal_size((120, 24)).columns)
    _write(text, output)
    raise typer.Exit(1 if report.failed else 0)


def _run_with_progress(b, target, cases, impls, modes, device, reps, warmup, timeout, interactive):
    from ..render import bench_view

    total = len(cases) * len(impls) * len(modes)
    labels = {c.index: c.label() for c in cases}
    if not interactive:
        def plain(i: int, n: int, m) -> None:
            if m.status == "running":
                return
            extra = f" {m.ms:.3f} ms" if m.status == "ok" and m.ms is not None else ""
            typer.echo(terminal_line(t("cli.bench.progress", index=i + 1, total=n, case=labels[m.case], impl=m.impl,
                                       pass_=m.mode, status=bench_view.status_word(m), extra=extra)), err=True)

        return b.run(target, cases, impls, modes, device=device, reps=reps, warmup=warmup,
                     item_timeout=timeout, on_event=plain)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..render._common import console as make_console

    console = make_console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task(t("cli.bench_starting"), total=total)

        def live(i: int, n: int, m) -> None:
            if m.status == "running":
                progress.update(task, description=f"{labels[m.case]} · {m.impl} {m.mode}")
            else:
                progress.update(task, completed=i + 1)

        return b.run(target, cases, impls, modes, device=device, reps=reps, warmup=warmup,
                     item_timeout=timeout, on_event=live)
