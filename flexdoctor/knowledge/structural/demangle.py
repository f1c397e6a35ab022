"""A small Itanium C++ ABI demangler: the qualified name of a mangled symbol (its namespaces, classes
and function name, parameters left out), enough to say whose symbol an undefined one is.

``_ZN3c105ErrorC2ENS_14SourceLocationESs`` -> ``c10::Error::Error``; ``_ZNK2at10TensorBase8data_ptrIfEEPT_v``
-> ``at::TensorBase::data_ptr``; ``_ZSt4cout`` -> ``std::cout``. Pure Python (no ``c++filt``), for the common
nested-name cases; anything it does not follow comes back as None and the raw symbol is shown.
"""

from __future__ import annotations

from typing import Optional

_SUBST = {"St": "std", "Sa": "std::allocator", "Sb": "std::basic_string", "Ss": "std::string",
          "Si": "std::istream", "So": "std::ostream", "Sd": "std::iostream"}


def _source_name(s: str, i: int) -> tuple[Optional[str], int]:
    j = i
    while j < len(s) and s[j].isdigit():
        j += 1
    if j == i:
        return None, i
    n = int(s[i:j])
    if n <= 0 or j + n > len(s):
        return None, i
    return s[j:j + n], j + n


def _skip_template(s: str, i: int) -> int:
    """Past a template argument list starting at ``s[i] == 'I'`` (nesting counted, names skipped)."""
    depth, i = 0, i
    while i < len(s):
        c = s[i]
        if c == "I":
            depth += 1
        elif c == "E":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c.isdigit():
            _name, i = _source_name(s, i)
            continue
        i += 1
    return i


def _nested(s: str, i: int) -> Optional[list[str]]:
    parts: list[str] = []
    while i < len(s) and s[i] in "rVKRO":
        i += 1
    while i < len(s) and s[i] != "E":
        if s.startswith(("St", "Sa", "Sb", "Ss", "Si", "So", "Sd"), i):
            parts.append(_SUBST[s[i:i + 2]])
            i += 2
        elif s.startswith("S_", i) or (s[i] == "S" and i + 1 < len(s) and s[i + 1].isalnum()):
            j = s.find("_", i)
            if j < 0:
                return None
            i = j + 1  # a substitution of an earlier prefix: its name is already in parts
        elif s[i] == "I":
            i = _skip_template(s, i)
        elif s[i] in "CD" and i + 1 < len(s) and s[i + 1] in "0123459":
            parts.append(("~" if s[i] == "D" else "") + (parts[-1] if parts else ""))
            i += 2
        elif s[i] == "L":
            i += 1
        elif s[i].isdigit():
            name, i = _source_name(s, i)
            if name is None:
                return None
            parts.append(name)
        else:
            return None
    return parts or None


def demangle(symbol: str) -> Optional[str]:
    s = symbol.split("@")[0]
    if s.startswith("__Z"):  # macOS adds an underscore
        s = s[1:]
    if not s.startswith("_Z"):
        return None
    i = 2
    if s.startswith("N", i):
        parts = _nested(s, i + 1)
    elif s.startswith("St", i):
        name, _ = _source_name(s, i + 2)
        parts = ["std", name] if name else None
    else:
        name, _ = _source_name(s, i)
        parts = [name] if name else None
    return "::".join(parts) if parts else None
