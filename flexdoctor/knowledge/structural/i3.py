"""The structural readers of tune-i3 (issue 22, cycle 12: frequent serving headlines).

- ``serve``: a serving engine refuses the model or the memory plan at start-up: vLLM's model registry does not know
  the architecture of config.json ("Model architectures ['Qwen3ForCausalLM'] are not supported for now", the installed
  vLLM predates the model, or the model's module failed to import just above), SGLang's older registry likewise
  ("Unsupported architectures: X. Supported list"), and text-generation-inference's warm-up OOM on the largest
  prefill batch, and vLLM's max_model_len above the model's own context ("Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`").
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue

_say = catalogue("i3")
_ARCH = re.compile(r"'([A-Za-z][A-Za-z0-9_.-]{0,120})'")
_DERIVED = re.compile(r"=(\d{1,9})")
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,120}")


def _arch(seen: Seen, facts: LogFacts, names: list, engine: str) -> Optional[Answer]:
    names = [n for n in names if _IDENT.fullmatch(n)]
    if not names:
        return None
    arch = ", ".join(names[:3])
    commands = (["python -m pip install --upgrade vllm", 'python -c "import vllm; print(vllm.__version__)"']
                if engine == "vllm" else
                ['python -m pip install --upgrade "sglang[all]"', 'python -c "import sglang; print(sglang.__version__)"'])
    return _answer("version-constraint", engine, "high", _say("arch.title", arch=arch, engine=_say(f"arch.{engine}")),
                   _say("arch.cause", arch=arch, engine=_say(f"arch.{engine}")), _say(f"arch.fix_{engine}", arch=arch),
                   commands, seen, facts, 30, package=engine)


def _prefill(seen: Seen, facts: LogFacts, prefill: str, total: Optional[str]) -> Answer:
    lower = str(max(int(prefill) // 2, 1))
    fix = _say("prefill.fix", prefill=prefill, lower=lower)
    if total:
        fix = _say("prefill.fix_total", total=total) + " " + fix
    return _answer("out-of-memory", "cuda", "high", _say("prefill.title", prefill=prefill), _say("prefill.cause"),
                   fix, ["nvidia-smi"], seen, facts, 30, package="text-generation-inference")


def _maxlen(seen: Seen, facts: LogFacts, user: str, derived: str) -> Answer:
    found = _DERIVED.search(derived)
    limit = found.group(1) if found else None
    fix = _say("maxlen.fix", limit=limit) if limit else _say("maxlen.fix_any")
    return _answer("version-constraint", "max_model_len", "high", _say("maxlen.title", user=user),
                   _say("maxlen.cause"), fix, [], seen, facts, 30, package="vllm")


def serve(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    if g.get("archs"):
        return _arch(seen, facts, _ARCH.findall(g["archs"]), "vllm")
    if g.get("sarch"):
        return _arch(seen, facts, [g["sarch"]], "sglang")
    if g.get("user"):
        return _maxlen(seen, facts, g["user"], g["derived"])
    if g.get("prefill"):
        return _prefill(seen, facts, g["prefill"], g.get("total"))
    return None
