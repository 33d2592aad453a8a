"""``git log`` output framed with NUL: one parser for every reader of the log.

A commit's subject and body, and every added line of a patch, are anyone's text: a reader
that frames records with printable separators (``%x1e``, ``%x1f``) can be made to read a
commit that does not exist, or to raise on a field that is not what it expects. Git's log
output cannot hold NUL in a message (git cuts a message at its first NUL) nor in a text
patch, so records here are framed with NUL: each starts with ``NUL MARK NUL`` and its
fields are separated by NUL (``%x00``), in a fixed number. Every field is validated (a sha
is 40 or 64 hex digits, a time is digits); a record that does not validate is skipped,
never raised, and reading goes on at the next mark. Pure: bytes in, records out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

#: What starts each record (between NULs): not a sha, a time or a path git writes alone.
MARK = "RELIORA-COMMIT"
SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
#: A record's header fields (as ``git log --format`` gives them), and what follows them.
Header = list[str]
Rest = list[str]


def log_format(*fields: str) -> str:
    """The ``--format`` of records whose header is ``fields`` (``%H``, ``%at``, …)."""
    return f"%x00{MARK}%x00" + "%x00".join(fields) + "%x00"


def is_sha(value: str) -> bool:
    return SHA.fullmatch(value) is not None


def is_time(value: str) -> bool:
    return value.isascii() and value.isdigit() and len(value) <= 12


def records(
    text: str, count: int, valid: Callable[[Sequence[str]], bool]
) -> Iterator[tuple[Header, Rest]]:
    """Each record of ``text`` (a ``git log -z`` output with :func:`log_format`) whose
    ``count`` header fields pass ``valid``, and the NUL-separated tokens that follow them up
    to the next record (the raw file lines, or the patch). Linear in the text."""
    return records_of(text.split("\x00"), count, valid)


def records_of(
    tokens: Iterable[str], count: int, valid: Callable[[Sequence[str]], bool]
) -> Iterator[tuple[Header, Rest]]:
    """:func:`records` over NUL-separated tokens as they come (a streamed log): a record is
    given as soon as the next one starts, so only one record is ever held."""
    current: list[str] | None = None  # the record being read: its header, then the rest
    waiting_sha = False  # a mark was read: the next token says whether a record starts
    for token in tokens:
        if waiting_sha:
            waiting_sha = False
            if is_sha(token):
                if current is not None:
                    yield from _finished(current, count, valid)
                current = [token]
                continue
            if current is not None:  # a mark that starts nothing is text of the record
                current.append(MARK)
        if token == MARK:
            waiting_sha = True
            continue
        if current is not None:
            current.append(token)
    if current is not None:
        yield from _finished(current, count, valid)


def _finished(
    tokens: list[str], count: int, valid: Callable[[Sequence[str]], bool]
) -> Iterator[tuple[Header, Rest]]:
    header = tokens[:count]
    if len(header) == count and valid(header):
        yield header, tokens[count:]


def stream_tokens(chunks: Iterable[bytes], encoding_errors: str = "replace") -> Iterator[str]:
    """The NUL-separated tokens of a byte stream, each decoded (UTF-8) as it completes."""
    pending = b""
    for chunk in chunks:
        parts = (pending + chunk).split(b"\x00")
        pending = parts.pop()
        for part in parts:
            yield part.decode("utf-8", encoding_errors)
    yield pending.decode("utf-8", encoding_errors)
