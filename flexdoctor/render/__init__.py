"""One Report in, one module per output format, chosen through an exhaustive enum mapping."""

from __future__ import annotations

import enum
import importlib
from typing import Callable




class Format(str, enum.Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"
    junit = "junit"


_MODULES = {
    Format.text: "text",
    Format.json: "json_",
    Format.markdown: "markdown",
    Format.github: "github",
    Format.junit: "junit",
}


def renderer(fmt: Format) -> Callable[..., str]:
    """The ``render(report, **options) -> str`` function of a format."""
    return importlib.import_module(f"{__name__}.{_MODULES[fmt]}").render
