"""tomllib on Python 3.11+, the identical tomli before that; a file nested too deeply for the
parser (RecursionError) is a TOMLDecodeError like any other broken file, never a crash."""

try:
    from tomllib import TOMLDecodeError
    from tomllib import loads as _loads
except ImportError:  # Python < 3.11
    from tomli import TOMLDecodeError  # type: ignore[no-redef]
    from tomli import loads as _loads  # type: ignore[no-redef]


class NestedTooDeeply(TOMLDecodeError):
    def __init__(self) -> None:  # not TOMLDecodeError's (msg, doc, pos): 3.14 deprecates free text
        ValueError.__init__(self, "nested too deeply to read")


def loads(text: str) -> dict:
    try:
        return _loads(text)
    except RecursionError:
        raise NestedTooDeeply() from None


__all__ = ["TOMLDecodeError", "loads"]
