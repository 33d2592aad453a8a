"""Stage 1 of the store index: locate, which files the store holds and their identities.

``locate`` walks ``experiences/`` and ``feedback/`` (one ``lstat`` per file, no
file read), or takes the files from git (gitfiles.py: identities are blob ids).
What it hands on, :class:`Located`, is all the next stage (load.py) needs to
decide which files it can reuse and which it must parse.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import ScannedFile, Store, linked_folders, scan_markdown

if TYPE_CHECKING:
    from reliora_git.storage.gitfiles import GitFiles


@dataclass(frozen=True)
class Located:
    """The store's files as they are now, each with its identity (locator, size, mtime)."""

    store: Store
    #: Record files and feedback files, in path order.
    records: list[ScannedFile]
    events: list[ScannedFile]
    #: Store folders that are symbolic links, never read (store.linked_folders).
    folder_errors: list[RelioraError]
    #: Where the files come from when not from the working tree.
    source: GitFiles | None
    #: When the walk started: files modified just before it are not cached (cache.RACY_NS).
    started_ns: int


def locate(store: Store, source: GitFiles | None = None) -> Located:
    """The files of ``store`` from the working tree, or from ``source`` (git) when given."""
    started_ns = time.time_ns()
    if source is not None:
        return Located(store, source.records, source.events, source.linked, source, started_ns)
    return Located(
        store,
        scan_markdown(store, store.experiences),
        scan_markdown(store, store.feedback),
        linked_folders(store),
        None,
        started_ns,
    )
