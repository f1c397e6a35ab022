"""Score ``explain`` on a corpus of real logs, the honest way: ``python -m flexdoctor.knowledge.score``.

The corpus (tests/data/corpus/ by default) holds one folder per *family* (logs of one kind of failure,
from one stack), each with ``FAMILY.toml`` (``description``, ``split = "train" | "holdout"``) and cases:
``<case>.log`` (the log as posted) and ``<case>.toml``::

    source = "https://github.com/ORG/REPO/issues/N"   # the thread (required, a URL)
    stack = "pytorch"        # pytorch|diffusers|comfyui|transformers|trl|unsloth|vllm|sglang|deepspeed|
                             # accelerate|flash-attn|xformers|triton|bitsandbytes|other
    platform = "linux"       # linux|windows|macos|wsl2|rocm|container|slurm|kubernetes
    versions = { torch = "2.5.1", cuda = "12.4", python = "3.11" }   # optional keys
    fix = "what the thread established, one or two sentences"
    healthy = false
    [expect]                 # absent when healthy = true
    kind = "shared-library"  # a kind of CORPUS_KINDS below: how the collector classed the failure
    subject = "libcudnn.so.9"   # the thing that failed, in the collector's words
    fix_any = ["nvidia-cudnn-cu12"]   # one of these must be in a right fix; a wrong one holds none

Scores: a case is *right first* when the FIRST answer explain gives has a fix (summary or commands)
that contains one of ``fix_any`` (case-insensitive): what a user needs is the right fix on top, in
whatever words explain classes the failure. The collectors' ``kind`` is the corpus's own vocabulary
(``CORPUS_KINDS``), written without looking at explain; how often explain's kind agrees with it is
reported beside the score (``kind_agrees``), not counted in it. A healthy log raises a *false alarm*
when explain reports any problem (notes do not count; the ``unknown`` fallback does, since it is shown
as an error). Reported per split (train: what patterns were written from; holdout: families nobody
wrote patterns for, the number to publish) and per family. Misses are listed for train only unless
``--show-holdout`` is given: whoever tunes patterns must not read the holdout logs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .._toml import loads as toml_loads
from .structural import KINDS

# The collectors' vocabulary (tests/data/corpus, see CORPUS_KINDS' users): explain's own kinds plus
# the coarser classes people sort failures into. explain's kind -> the corpus kinds it agrees with.
CORPUS_KINDS = set(KINDS) | {"unsupported", "build-failure", "toolchain", "driver", "wrong-build",
                             "compile", "launcher", "other"}
_AGREES = {"unsupported-op": {"unsupported"}, "pip-no-distribution": {"version-constraint", "unsupported"},
           "import-name": {"version-constraint", "undefined-symbol"}, "out-of-memory": {"cuda-error"},
           "entry": CORPUS_KINDS}

STACKS = {"pytorch", "diffusers", "comfyui", "transformers", "trl", "unsloth", "vllm", "sglang", "deepspeed",
          "accelerate", "flash-attn", "xformers", "triton", "bitsandbytes", "other"}
PLATFORMS = {"linux", "windows", "macos", "wsl2", "rocm", "container", "slurm", "kubernetes"}
_URL = re.compile(r"https://[^\s/]+\.[^\s/]+/\S+")


@dataclass(frozen=True)
class Case:
    family: str
    split: str
    name: str
    log: Path
    meta: dict
    round: Optional[int] = None  # FAMILY.toml's round: when the family was collected (sealed) or joined train

    @property
    def healthy(self) -> bool:
        return bool(self.meta.get("healthy"))


@dataclass
class Tally:
    right: int = 0
    cases: int = 0
    healthy: int = 0
    false_alarms: int = 0
    kind_agrees: int = 0
    misses: list = field(default_factory=list)

    def to_dict(self) -> dict:
        score = self.right / self.cases if self.cases else None
        return {"right_first": self.right, "cases": self.cases, "score": score, "healthy": self.healthy,
                "false_alarms": self.false_alarms, "kind_agrees": self.kind_agrees}


def problems_of(meta: dict, family: str) -> list[str]:
    """What is wrong with a case's sidecar (empty when it is well formed)."""
    out = []
    if not isinstance(meta.get("source"), str) or not _URL.fullmatch(meta["source"]):
        out.append("source must be the thread's https URL")
    if meta.get("stack") not in STACKS:
        out.append(f"stack must be one of {sorted(STACKS)}")
    if meta.get("platform") not in PLATFORMS:
        out.append(f"platform must be one of {sorted(PLATFORMS)}")
    if not isinstance(meta.get("fix"), str) or not meta["fix"].strip():
        out.append("fix must say what the thread established")
    if not isinstance(meta.get("healthy"), bool):
        out.append("healthy must be true or false")
    expect = meta.get("expect")
    if meta.get("healthy") is False:
        if not isinstance(expect, dict):
            out.append("[expect] is required when healthy = false")
        else:
            if expect.get("kind") not in CORPUS_KINDS:
                out.append(f"expect.kind must be one of {sorted(CORPUS_KINDS)}")
            if not isinstance(expect.get("subject"), str) or not expect["subject"]:
                out.append("expect.subject is required")
            fix_any = expect.get("fix_any")
            if not (isinstance(fix_any, list) and fix_any and all(isinstance(x, str) and x for x in fix_any)):
                out.append("expect.fix_any must be a non-empty list of strings")
    elif expect is not None:
        out.append("a healthy case has no [expect]")
    return out


def load(root: Path) -> tuple[list[Case], list[str]]:
    """Every case under ``root``, and what is malformed (family or case, with the reason)."""
    cases, errors = [], []
    for fam in sorted(p for p in root.iterdir() if p.is_dir()):
        fam_file = fam / "FAMILY.toml"
        if not fam_file.is_file():
            errors.append(f"{fam.name}: FAMILY.toml missing")
            continue
        info = toml_loads(fam_file.read_text(encoding="utf-8"))
        split = info.get("split")
        if split not in ("train", "holdout") or not info.get("description"):
            errors.append(f"{fam.name}: FAMILY.toml needs description and split = train|holdout")
            continue
        for side in sorted(fam.glob("*.toml")):
            if side.name == "FAMILY.toml":
                continue
            log = side.with_suffix(".log")
            meta = toml_loads(side.read_text(encoding="utf-8"))
            bad = problems_of(meta, fam.name) + ([] if log.is_file() else [f"{log.name} missing"])
            errors += [f"{fam.name}/{side.stem}: {b}" for b in bad]
            if not bad:
                cases.append(Case(fam.name, split, side.stem, log, meta, info.get("round")))
    return cases, errors


def _norm(kind: str, subject: str) -> str:
    s = subject.strip().lower()
    if kind == "pip-no-distribution":
        return re.sub(r"[-_.]+", "-", s)
    if kind == "cuda-error":
        from .structural import tables

        if s.isdigit():
            row = tables.cuda_by_code().get(int(s))
            return row["name"].lower() if row else s
        if s.startswith("cuda_error_"):
            return tables.cuda_driver_name(s.upper()).lower()
    if kind == "windows-error" and s.startswith("0x"):
        return "0x" + s[2:].upper().lower()
    return s


def first_answer(result) -> Optional[tuple[str, str, str]]:
    """(kind, subject, fix text) of the first answer of an explain Result, or None."""
    from .explain import item_fix

    items = result.ordered()
    if not items:
        return None
    item = items[0]
    fix = item_fix(item)
    kind, subject = (item.kind, item.subject) if hasattr(item, "kind") else ("entry", item.entry.id)
    return kind, subject, fix.summary + "\n" + "\n".join(fix.commands)


def judge(case: Case, result) -> bool:
    """Right first (an error case: the first answer's fix holds one of fix_any), or no false alarm
    (a healthy case)."""
    if case.healthy:
        return not result.found and not any(a.kind == "unknown" for a in result.answers)
    got = first_answer(result)
    if got is None:
        return False
    fix = got[2].lower()
    return any(s.lower() in fix for s in case.meta["expect"]["fix_any"])


def kind_agrees(case: Case, result) -> bool:
    """Whether explain's first answer classes the failure as the collector did."""
    got = first_answer(result)
    if case.healthy or got is None:
        return False
    want = case.meta["expect"]["kind"]
    return got[0] == want or want in _AGREES.get(got[0], ())


def score(cases: list[Case]) -> dict:
    from . import explain

    splits: dict[str, Tally] = {}
    families: dict[str, Tally] = {}
    for case in cases:
        with open(case.log, "rb") as stream:
            result = explain.scan(stream)
        ok = judge(case, result)
        for tally in (splits.setdefault(case.split, Tally()), families.setdefault(case.family, Tally())):
            if case.healthy:
                tally.healthy += 1
                tally.false_alarms += 0 if ok else 1
            else:
                tally.cases += 1
                tally.right += 1 if ok else 0
                tally.kind_agrees += 1 if kind_agrees(case, result) else 0
            if not ok:
                got = first_answer(result)
                tally.misses.append(f"{case.family}/{case.name}: got {got[:2] if got else None}, "
                                    f"want {case.meta.get('expect', {}).get('fix_any', 'no problem')}")
    return {"splits": {k: v.to_dict() for k, v in sorted(splits.items())},
            "families": {k: v.to_dict() for k, v in sorted(families.items())},
            "misses": [m for t in splits.values() for m in t.misses]}


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m flexdoctor.knowledge.score", description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default="tests/data/corpus", help="the corpus folder")
    ap.add_argument("--json", action="store_true", help="print the scores as JSON")
    ap.add_argument("--split", choices=("train", "holdout"), help="score one split only")
    ap.add_argument("--round", type=int, help="score only the families whose FAMILY.toml says this round")
    ap.add_argument("--show-holdout", action="store_true",
                    help="list holdout misses and holdout families too (not while tuning patterns)")
    args = ap.parse_args(argv)
    cases, errors = load(Path(args.corpus))
    report = score([c for c in cases if args.split in (None, c.split) and args.round in (None, c.round)])
    report["malformed"] = errors
    if not args.show_holdout:
        hidden = {c.family for c in cases if c.split == "holdout"}
        report["misses"] = [m for m in report["misses"] if m.split("/", 1)[0] not in hidden]
        report["families"] = {k: v for k, v in report["families"].items() if k not in hidden}
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0 if not errors else 1
    for split, tally in report["splits"].items():
        d = tally
        pct = f"{100 * d['score']:.0f}%" if d["score"] is not None else "-"
        print(f"{split}: right fix first {d['right_first']}/{d['cases']} ({pct}); "
              f"false alarms {d['false_alarms']}/{d['healthy']} healthy; "
              f"kind agrees {d['kind_agrees']}/{d['cases']}")
    for fam, d in report["families"].items():
        print(f"  {fam}: {d['right_first']}/{d['cases']}, false alarms {d['false_alarms']}/{d['healthy']}")
    for line in report["misses"] + [f"malformed: {e}" for e in errors]:
        print("  " + line)
    return 0 if not errors else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
