"""Whole-store findings kept beside the index file, valid for exactly one index state.

Some answers read every record and cost far more than opening the index: the
exact twins ``check`` compares each record with (SPEC.md §6) take seconds on a
store of 10,000 records. They depend only on the records as the index state
holds them, on the feedback files' values and on the options asked, so they are
kept in one file per index (``<index>.findings``) under a key made of exactly
those: the code stamp, the state's record files (locator, size, mtime) and their
values, the feedback values this command read, and the caller's options. An
answer is taken from the file only when its key is byte for byte the key of
now; anything else (another key, a damaged or missing file, no cache) means
computing it again, so the file can only save time, never change a result.

The key is compared whole rather than as a digest: it is under a megabyte at
10,000 records, and no two states can then share an answer by a hash collision.
"""

from __future__ import annotations

import contextlib
import marshal
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliora_git.storage.cache import code_stamp, write_atomic

if TYPE_CHECKING:
    from reliora_git.storage.answer import StoreIndex

_MAGIC = b"RELIORA-FINDINGS\n"
#: Length of the key, CRC-32 of the key and of the answer: 4 bytes each.
_HEAD = len(_MAGIC) + 12
_MARSHAL_VERSION = 4


def findings_key(index: StoreIndex, options: Any) -> bytes | None:
    """The key of what the index holds now with ``options`` (plain data JSON can write).

    None when nothing may be kept: caching is off, or the index holds record values
    its saved state does not (files too young to cache, parsed by this command
    only: their identity does not yet say their content).
    """
    path = findings_path(index)
    state = index.state
    if path is None or state.values != index.values:
        return None
    if [file[0] for file in state.files] != index.locators:
        return None
    root = index.store.root.resolve()
    import json

    try:
        # JSON rather than marshal: marshal writes the same data as different bytes when
        # some of its objects are shared (its references), so a key would never match.
        key = json.dumps(
            (code_stamp(root), state.files, state.values, index.event_values, options),
            ensure_ascii=False,
        )
    except (TypeError, ValueError):  # options that JSON cannot write: nothing is kept
        return None
    return key.encode("utf-8", "surrogatepass")


def findings_path(index: StoreIndex) -> Path | None:
    cache = index.cache_path
    return None if cache is None else cache.with_name(cache.name + ".findings")


def read_findings(index: StoreIndex, key: bytes) -> Any | None:
    """The answer kept under ``key``, or None (not kept, another key, or damaged)."""
    path = findings_path(index)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD)
            if len(head) != _HEAD or not head.startswith(_MAGIC):
                return None
            at = len(_MAGIC)
            size = int.from_bytes(head[at : at + 4], "big")
            if size != len(key):
                return None
            kept_key = handle.read(size)
            if kept_key != key or zlib.crc32(kept_key) != int.from_bytes(
                head[at + 4 : at + 8], "big"
            ):
                return None
            data = handle.read()
    except OSError:
        return None
    if zlib.crc32(data) != int.from_bytes(head[at + 8 : at + 12], "big"):
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None


def write_findings(index: StoreIndex, key: bytes, answer: Any) -> None:
    """Keep ``answer`` under ``key`` (the one answer the file holds); errors only cost speed."""
    path = findings_path(index)
    if path is None:
        return
    try:
        data = marshal.dumps(answer, _MARSHAL_VERSION)
    except ValueError:
        return
    head = b"".join(
        [
            _MAGIC,
            len(key).to_bytes(4, "big"),
            zlib.crc32(key).to_bytes(4, "big"),
            zlib.crc32(data).to_bytes(4, "big"),
        ]
    )
    with contextlib.suppress(OSError):
        write_atomic(path, [head, key, data])
