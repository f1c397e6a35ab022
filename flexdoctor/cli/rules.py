"""The `rules` command: list every check, knowledge-base entry and structural kind (FDS###), or print one in full."""

from __future__ import annotations

from typing import Optional

import typer
from typing_extensions import Annotated

from ..cliutil import usage_error as _usage_error
from ..cliutil import write as _write
from ..text import t


def rules(
    rule: Annotated[Optional[str], typer.Argument(metavar="[ID]", help="A check (FD201 or nvcc-found), "
                                                  "knowledge-base entry (FDE105) or kind of error explain reads by its "
                                                  "shape (FDS101 or shared-library) to print in full.")] = None,
) -> None:
    """List every check, knowledge-base entry and kind of error explain reads by its shape, or print one in full.

    Examples:

      flexdoctor rules

      flexdoctor rules FD401

      flexdoctor rules nvidia-driver-too-old

      flexdoctor rules FDS101
    """
    from ..render import rules_view

    try:
        text = rules_view.render(rule)
    except KeyError:
        raise _usage_error(t("cli.error.no_rule", rule=rule))
    _write(text, None)

