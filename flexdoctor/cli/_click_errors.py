"""click's usage errors (a mistyped flag, a missing value, an unknown command) in the report's
language. typer would print them through click, in English; the entry point runs typer with
``standalone_mode=False`` and prints them here, in click's layout (usage line, hint, error) and with
click's exit code. The usage line stays as click writes it (it is --help, which stays English).

click words a few of its messages only as text; those are recognised by the English click and
typer 0.12-0.28 write (``_PATTERNS``). A message not recognised is shown as click wrote it, inside
the translated frame: never lost, never a traceback."""

from __future__ import annotations

import re
from typing import Any, Optional

import typer

from ..text import t


def exceptions() -> Any:
    """click's exceptions module: typer's own copy (typer >= 0.28), else click's."""
    try:
        from typer._click import exceptions as found
    except ImportError:  # typer < 0.28 runs on click itself
        from click import exceptions as found
    return found


# click core.py / parser.py and typer's group, as they word these usage errors.
_PATTERNS = (
    (re.compile(r"No such command '(?P<name>[^']*)'\.(?: Did you mean (?P<options>.+)\?)?", re.S), "no_such_command"),
    (re.compile(r"Got unexpected extra argument(?:s|\(s\))? \((?P<args>.*)\)", re.S), "extra_arguments"),
    (re.compile(r"Option '(?P<name>[^']+)' requires an argument\.", re.S), "requires_argument"),
    (re.compile(r"Option '(?P<name>[^']+)' requires (?P<count>\d+) arguments\.", re.S), "requires_arguments"),
    (re.compile(r"Option '(?P<name>[^']+)' does not take a value\.", re.S), "takes_no_value"),
    (re.compile(r"Missing command\.", re.S), "missing_command"),
)
# click types' conversion messages (types.py), the part after "Invalid value for '--x': ".
_DETAILS = (
    (re.compile(r"'(?P<value>.*)' is not a valid (?:int|integer)(?: range)?\.", re.S), "not_integer"),
    (re.compile(r"'(?P<value>.*)' is not a valid float(?: range)?\.", re.S), "not_float"),
    (re.compile(r"'(?P<value>.*)' is not a valid boolean\.", re.S), "not_boolean"),
    (re.compile(r"'(?P<value>.*)' is not one of (?P<choices>.+)\.", re.S), "not_choice"),
)


def _match(text: str, table: tuple) -> Optional[str]:
    for pattern, key in table:
        m = pattern.fullmatch(text.strip())
        if m is not None:
            words = {k: v for k, v in m.groupdict().items() if v is not None}
            said = t(f"cli.click.{key}", **{k: v for k, v in words.items() if k != "options"})
            if words.get("options"):
                said = t("cli.click.suggest", message=said,
                         suggestion=t("cli.click.did_you_mean", options=words["options"]))
            return said
    return None


def _hint(exc: Any) -> Optional[str]:
    """The parameter an error is about, as click names it ('--jobs' / '-j')."""
    hint = getattr(exc, "param_hint", None)
    if hint is None and getattr(exc, "param", None) is not None:
        hint = exc.param.get_error_hint(exc.ctx)
    if hint is not None and not isinstance(hint, str):
        hint = " / ".join(repr(x) for x in hint)
    return hint


def message(exc: Any) -> str:
    """What went wrong, in the report's language where flexdoctor knows click's words; in English
    exactly as click words it (the wording differs between click releases)."""
    from ..text import language

    if language() == "en":
        return exc.format_message()
    ce = exceptions()
    if isinstance(exc, ce.NoSuchOption):
        said = t("cli.click.no_such_option", name=exc.option_name)
        if exc.possibilities:
            said = t("cli.click.suggest", message=said,
                     suggestion=t("cli.click.possible_options", options=", ".join(sorted(exc.possibilities))))
        return said
    if isinstance(exc, ce.MissingParameter):
        kind = exc.param_type or getattr(exc.param, "param_type_name", None)
        hint = _hint(exc)
        if kind in ("option", "argument") and hint and not exc.message:
            return t(f"cli.click.missing_{kind}", name=hint)
        return exc.format_message()
    if isinstance(exc, ce.BadParameter):
        detail = _match(exc.message, _DETAILS) or exc.message
        hint = _hint(exc)
        return t("cli.click.invalid_value_for", name=hint, detail=detail) if hint else \
            t("cli.click.invalid_value", detail=detail)
    if isinstance(exc, ce.UsageError):
        return _match(exc.message, _PATTERNS) or exc.format_message()
    return exc.format_message()


def language_from(argv: list) -> Optional[str]:
    """``--lang X`` / ``--lang=X`` on a command line click could not parse: a usage error can come
    before the option's callback ran (an unknown command, a bad flag before --lang)."""
    for i, word in enumerate(argv):
        if word == "--":
            break
        if word == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith("--lang="):
            return word.split("=", 1)[1]
    return None


def show(exc: Any, argv: Optional[list] = None) -> int:
    """Print a click error the way click lays it out; its exit code (2 for usage errors)."""
    lang = language_from(argv or [])
    if lang:
        from ..text import set_language

        set_language(lang)
    no_args = getattr(exceptions(), "NoArgsIsHelpError", None)
    if no_args is not None and isinstance(exc, no_args):
        exc.show()  # the command's --help
        return exc.exit_code
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        lines = [ctx.get_usage()]
        if ctx.command.get_help_option(ctx) is not None:
            lines.append(t("cli.click.try_help", command=ctx.command_path, option=ctx.help_option_names[0]))
        typer.echo("\n".join(lines) + "\n", err=True)
    typer.echo(t("cli.click.error", message=message(exc)), err=True)
    return exc.exit_code
