"""tomllib on Python 3.11+, the identical tomli before that."""

try:
    from tomllib import TOMLDecodeError, loads
except ImportError:  # Python < 3.11
    from tomli import TOMLDecodeError, loads  # type: ignore[no-redef]

__all__ = ["TOMLDecodeError", "loads"]
