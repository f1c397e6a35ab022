"""The structural readers of tuner k1 (issue 22, round 13 train).

- ``serve``: a chat request refused for want of something the server is started with, not something the client
  sends: vLLM's OpenAI server answers tools with tool_choice="auto" by HTTP 400 ('"auto" tool choice requires
  --enable-auto-tool-choice and --tool-call-parser to be set', vllm/entrypoints/openai/serving_chat.py) or refuses to
  start with --enable-auto-tool-choice alone (cli_args.py validate_parsed_serve_args). The remedy: the server's flags
  (--enable-auto-tool-choice --tool-call-parser NAME from k1_tables.toml [parser]). A tokenizer or processor without
  a chat template is k2.chat's (both tuners read it; the merge kept k2's reader and k1's processor wording).
"""

from __future__ import annotations

from typing import Optional

from .collect import Seen
from .context import LogFacts
from .model import Answer
from .readers import _answer, catalogue
from .tables import _load

_say = catalogue("k1")


def _parsers() -> str:
    return "; ".join(f"{r['name']} ({r['models']})" for r in _load("k1_tables.toml")["parser"])


def serve(seen: Seen, facts: LogFacts) -> Optional[Answer]:
    form = "tool" if seen.groups.get("tool") is not None else "noparser"
    return _answer("unsupported-op", "tool-choice", "high", _say(f"tool.title_{form}"),
                   _say(f"tool.cause_{form}"), _say("tool.fix", parsers=_parsers()), [], seen, facts, 20,
                   package="vllm")
