"""TOML from a repository, read within bounds. Pure: text in, data (or one error) out.

``config.toml`` and ``eval.toml`` arrive in pull requests. ``tomllib`` is quadratic in the
parts of one dotted key (a 25 KB ``a.a.…a = 1`` of 12,000 parts took 2.5 s and 572 MB) and
recursive in nested arrays and tables (a RecursionError). The size cap of a store file does
not bound either, so before ``tomllib`` one linear pass refuses a key or table header of
more than :data:`MAX_KEY_PARTS` dotted parts and brackets nested deeper than
:data:`MAX_DEPTH`; whatever ``tomllib`` still raises becomes a :class:`TomlError`.
"""

from __future__ import annotations

import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

#: The most dotted parts a key or a table header may have (``a.b.c``: 3).
MAX_KEY_PARTS = 64
#: The deepest nesting of arrays and inline tables.
MAX_DEPTH = 64


class TomlError(ValueError):
    """Text that is not TOML this reader takes; ``line`` (1-based) when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)`` after :func:`check_shape`; any failure is a TomlError."""
    check_shape(text)
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlError(str(exc), _line_of(str(exc))) from None
    except (RecursionError, ValueError) as exc:
        raise TomlError(f"cannot be read: {type(exc).__name__}") from None
    return data


def check_shape(text: str) -> None:
    """Refuse keys of too many dotted parts and too deep nesting, in one pass over ``text``.

    Strings are skipped (their dots and brackets are text): single-quoted, double-quoted
    with escapes, and their triple-quoted forms across lines. A comment ends at the line.
    """
    depth = 0
    dots = 0  # dots of the key being read on this line (before its '=')
    in_key = True
    line = 1
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\n":
            line += 1
            dots, in_key = 0, depth == 0
        elif char == "#":
            end = text.find("\n", i)
            i = n if end == -1 else end
            continue
        elif char in "\"'":
            i, line = _skip_string(text, i, line)
            continue
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise TomlError(f"nests arrays or tables deeper than {MAX_DEPTH}", line)
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == "=":
            in_key = False
        elif char == "." and in_key:  # a key's part, or a table header's
            dots += 1
            if dots >= MAX_KEY_PARTS:
                raise TomlError(f"has a key of more than {MAX_KEY_PARTS} dotted parts", line)
        i += 1


def _skip_string(text: str, start: int, line: int) -> tuple[int, int]:
    """Where the string opening at ``start`` ends (just after it), and the line there."""
    quote = text[start]
    triple = text.startswith(quote * 3, start)
    closing = quote * 3 if triple else quote
    i = start + len(closing)
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\n":
            if not triple:
                return i, line  # an unterminated one-line string: tomllib will say so
            line += 1
        elif char == "\\" and quote == '"':
            i += 2
            continue
        elif text.startswith(closing, i):
            return i + len(closing), line
        i += 1
    return n, line


def _line_of(message: str) -> int | None:
    """The line a TOMLDecodeError names (``… (at line 3, column 7)``)."""
    marker = "(at line "
    at = message.rfind(marker)
    if at == -1:
        return None
    digits = message[at + len(marker) :].split(",", 1)[0]
    return int(digits) if digits.isdigit() else None
