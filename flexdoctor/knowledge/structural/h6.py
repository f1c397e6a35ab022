"""The structural readers of tune-h6 (issue 22, cycle 3): serving runtimes, containers and drivers
(sources: h6_tables.toml).

- ``gguf``: llama.cpp's loader refusing a GGUF whose ``general.architecture`` (or ``tokenizer.ggml.pre``) it does
  not know: the llama.cpp inside the program (llama.cpp itself, llama-cpp-python, Ollama, LM Studio, llamafile,
  ramalama or lemonade) predates the model; a newer llama.cpp build that knows the name loads it.
- ``dockopt``: a docker run option (--gpus all ...) written after the image name, passed to the container as its
  command: options go before the image.
"""

from __future__ import annotations

import re
from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue
from .tables import _load

_NAME = re.compile(r"[\w.-]{1,60}")


_say = catalogue("h6")


def _table() -> dict:
    return _load("h6_tables.toml")  # _load caches each file


# --- a GGUF newer than the llama.cpp that loads it ------------------------------------------------------------------

def gguf(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    g = seen.groups
    name = g.get("arch") or g.get("pre") or ""
    if not _NAME.fullmatch(name):
        return None
    what = _say("gguf.what_arch" if g.get("arch") else "gguf.what_pre", name=name)
    app = next((row for row in _table()["gguf_app"]
                if any(re.search(row["paths"], p) for p in facts.paths)), None)
    commands = [app["command"]] if app else []
    subject = app["name"] if app else "llama.cpp"
    return _answer("version-constraint", subject, "high", _say("gguf.title", what=what),
                   _say("gguf.cause", what=what), _say("gguf.fix", what=what, name=name), commands, seen, facts, 20,
                   package=subject)


# --- a docker run option after the image ------------------------------------------------------------------------------

def dockopt(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    opt = seen.groups.get("opt") or ""
    if not re.fullmatch(r"-[\w=-]{0,40}", opt):
        return None
    return _answer("launcher", "docker run", "high", _say("dockopt.title", opt=opt), _say("dockopt.cause", opt=opt),
                   _say("dockopt.fix"), ["docker run --gpus all <image> [command]"], seen, facts, 24, package="docker")
