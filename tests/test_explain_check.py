"""The structural layer serves `check` (issue 22): a failed `import torch` (FD202) and a failed flex
compile (FD804) that no knowledge-base entry knows are worded as `explain` words them, with the
target interpreter (--python) in the commands and the machine's torch/CUDA filling the package."""

from __future__ import annotations

import io
import json
from pathlib import Path

from flexdoctor import checks, runner
from flexdoctor.checks import deep
from flexdoctor.facts import Facts
from flexdoctor.knowledge import explain as kbx

FIXTURES = Path(__file__).parent / "fixtures" / "facts"


def _facts(name: str) -> Facts:
    return Facts.load(json.loads((FIXTURES / f"{name}.json").read_text()))


def test_broken_import_is_explained_like_explain_does():
    """broken_torch.json: libtorch_cuda.so misses ncclCommRegister (an older nvidia-nccl-cu12)."""
    facts = _facts("broken_torch")
    specs, _ = checks.all_checks(with_plugins=False)
    (fd202,) = [r for r in runner.run(specs, facts).results if r.id == "FD202"]
    assert fd202.fix.kb is None and "NCCL" in fd202.fix.summary and "nvidia-nccl-cu12" in fd202.fix.summary
    assert any("pip list" in c for c in fd202.fix.commands)  # which NCCL packages are there
    # every Python command runs the checked interpreter, not whichever python is on PATH
    assert all(c.startswith("/opt/venv/bin/python") for c in fd202.fix.commands if "pip" in c.split()[:3])
    # the same words as explain gives for the same text (plus the machine's torch and CUDA)
    text = facts.torch_runtime.message + "\n" + facts.torch_runtime.detail
    said = kbx.scan(io.BytesIO(("torch==2.5.1+cu124\n" + text).encode())).answers[0]
    assert said.fix.summary == fd202.fix.summary


def test_failed_flex_compile_is_explained_by_shape():
    facts = _facts("h100")
    error = ("Traceback (most recent call last):\n  File \"/usr/lib/python3.11/site-packages/torch/_inductor/x.py\","
             " line 1, in f\nImportError: libgomp.so.1: cannot open shared object file: No such file or directory\n")
    fix = deep._fix_for(error, "deep-flex-compile-failed", facts)
    assert fix.kb is None and "libgomp" in fix.summary + " ".join(fix.commands)
    assert any("libgomp1" in c for c in fix.commands)


def test_an_entry_still_answers_what_it_knows():
    facts = _facts("h100")
    fix = deep._fix_for("Failed to find C compiler. Please specify via CC environment variable.",
                        "deep-flex-compile-failed", facts)
    assert fix.kb == "FDE304"
