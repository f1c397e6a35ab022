"""The structural readers of tuner k1 (issue 22, round 13 train).

- ``serve``: a chat request refused for want of something the server is started with, not something the client
  sends: vLLM's OpenAI server answers tools with tool_choice="auto" by HTTP 400 ('"auto" tool choice requires
  --enable-auto-tool-choice and --tool-call-parser to be set', vllm/entrypoints/openai/serving_chat.py) or refuses to
  start with --enable-auto-tool-choice alone (cli_args.py validate_parsed_serve_args); a chat request or
  apply_chat_template on a tokenizer/processor without a chat template (vLLM's chat_utils.py "As of transformers
  v4.44, default chat template is no longer allowed", transformers' tokenization_utils_base.py "Cannot use chat
  template functions because tokenizer.chat_template is not set", processing_utils.py "Cannot use
  apply_chat_template because this processor does not have a chat template"). The remedy: the server's flags
  (--enable-auto-tool-choice --tool-call-parser NAME from k1_tables.toml [parser]; --chat-template FILE), the
  Instruct/chat variant of the model, or the completions endpoint for a base model.
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
    g = seen.groups
    if g.get("tool") is not None or g.get("noparser") is not None:
        form = "tool" if g.get("tool") is not None else "noparser"
        return _answer("unsupported-op", "tool-choice", "high", _say(f"tool.title_{form}"),
                       _say(f"tool.cause_{form}"), _say("tool.fix", parsers=_parsers()), [], seen, facts, 20,
                       package="vllm")
    form = "processor" if g.get("proc") is not None else ("vllm" if g.get("v444") is not None else "tokenizer")
    return _answer("unsupported-op", "chat-template", "high", _say(f"tmpl.title_{form}"), _say("tmpl.cause"),
                   _say(f"tmpl.fix_{'vllm' if form == 'vllm' else 'hf'}"), [], seen, facts, 20,
                   package="vllm" if form == "vllm" else "transformers")
