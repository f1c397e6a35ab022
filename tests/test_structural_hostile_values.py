"""Values a reader copies from a log into a printed command are checked first (review of this session's readers):
an epoch-like "!!" in a torch release (bash history expansion), a "%VAR%" in a git URL (cmd.exe expands it),
non-ASCII letters or digits in a package name or version. The hostile lines are written in the shape the tools
print them; whatever the reader then answers, no printed command carries the hostile text."""

from __future__ import annotations

import pytest

from _explain_items import scan
from flexdoctor.knowledge import explain as kbx


def _commands(text: str) -> list[str]:
    result = scan(text)
    return [c for item in result.ordered() for c in kbx.item_fix(item).commands]


@pytest.mark.parametrize("line, bad", [
    ("  × No solution found when resolving dependencies:\n  ╰─▶ Because torch==2.5.1!!+cu121 was not found in the "
     "package registry and you require torch==2.5.1!!+cu121, we can conclude that your requirements are "
     "unsatisfiable.\n", "!"),
    ("Cloning Stable Diffusion into repositories/stable-diffusion-stability-ai...\n"
     "fatal: repository 'https://evil.example/%GITHUB_TOKEN%/x' not found\n", "%"),
    ("The following packages have unmet dependencies:\n cuda-drivers-535 : Depends: j\u0165\u00dd but it is not "
     "installable\nE: Unable to correct problems, you have held broken packages.\n", "\u0165"),
    ("ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: `pip install "
     "'accelerate>=\u0660.\u0662\u0666.\u0660'`\n", "\u0660"),
    ("ImportError: A valid HQQ version (>=\u09e6) is not available. Please follow the instructions to install it: "
     "`https://github.com/mobiusml/hqq/`.\n", "\u09e6"),
])
def test_hostile_values_never_reach_a_command(line, bad):
    assert not [c for c in _commands(line) if bad in c]
