"""Record text as PostgreSQL ``text`` can hold it, and back: U+0000 escaped, losslessly.

A YAML ``"\\0"`` in a title or a tag is a valid record (``check`` warns about the
invisible character; it does not refuse it), but PostgreSQL text cannot hold
U+0000. The database keeps such a value escaped — U+0001 doubles, U+0000
becomes U+0001 ``0`` — and every value read back is unescaped, so the same
store gives the same document locally and through ``org search``. Ranking never
reads these columns (it reads postings, and ``text`` holds tokens only), so the
escape changes no score. Text without U+0000 or U+0001 is stored as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import overload

_ESCAPE = "\x01"
_ESCAPED = re.compile("\x01(.)", re.DOTALL)  # one character after each escape: linear
_UNESCAPE = {"0": "\0", _ESCAPE: _ESCAPE}


@overload
def stored(text: str) -> str: ...
@overload
def stored(text: None) -> None: ...
def stored(text: str | None) -> str | None:
    """``text`` as the database keeps it (None stays None)."""
    if text is None or ("\0" not in text and _ESCAPE not in text):
        return text
    return text.replace(_ESCAPE, _ESCAPE * 2).replace("\0", _ESCAPE + "0")


@overload
def shown(text: str) -> str: ...
@overload
def shown(text: None) -> None: ...
def shown(text: str | None) -> str | None:
    """The text :func:`stored` was given (None stays None)."""
    if text is None or _ESCAPE not in text:
        return text
    return _ESCAPED.sub(lambda found: _UNESCAPE.get(found[1], found[0]), text)


def stored_all(texts: Sequence[str]) -> list[str]:
    return [text if "\0" not in text and _ESCAPE not in text else stored(text) for text in texts]


def shown_all(texts: Sequence[str]) -> list[str]:
    return [text if _ESCAPE not in text else shown(text) for text in texts]
