"""Stage 1 of the store index: locate, which files the store holds and their identities.

``locate`` walks ``experiences/`` and ``feedback/`` (one ``lstat`` per file, no
file read), or takes the files from git (gitfiles.py: identities are blob ids).
What it hands on, :class:`Located`, is all the next stage (load.py) needs to
decide which files it can reuse and which it must parse.

When the last saved index says which files the folders held and stamped every
folder (mtime and inode, taken before the folder was listed), a folder whose stamp
is unchanged still holds the same names: a file added, removed or renamed in it
would have changed its mtime. Then the walk is not needed to list the files, only
one ``lstat`` of each file the index names, for its size and mtime: the listing of
every folder is saved, and so is building a name and a tuple per file. What comes
out is what the walk would give. A stamp is kept only when its mtime is older than
:data:`~reliora_git.storage.cache.RACY_NS` at the walk (a folder changed twice
within one tick of a coarse clock would keep its mtime), and only for an index
that holds every file the walk found (index.py).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reliora_git.records.errors import RelioraError
from reliora_git.storage.cache import old_enough
from reliora_git.storage.store import (
    STORE_DIR,
    FolderStamp,
    ScannedFile,
    Store,
    linked_folders,
    scan_markdown,
)

if TYPE_CHECKING:
    from reliora_git.storage.gitfiles import GitFiles
    from reliora_git.storage.indexfile import Files, IndexState

_new_tuple = tuple.__new__


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
    #: The store's folder and every folder walked, stamped before it was listed; None when
    #: one changed too recently to be trusted (or the files come from git).
    folders: list[FolderStamp] | None = None


def locate(
    store: Store, source: GitFiles | None = None, saved: IndexState | None = None
) -> Located:
    """The files of ``store`` from the working tree, or from ``source`` (git) when given.

    ``saved``: the last index saved, whose folder stamps may spare the walk (see the
    module docstring).
    """
    started_ns = time.time_ns()
    if source is not None:
        return Located(store, source.records, source.events, source.linked, source, started_ns)
    if saved is not None and saved.folders is not None:
        rechecked = _recheck(store, saved, started_ns)
        if rechecked is not None:
            return rechecked
    folders: list[FolderStamp] = []
    try:
        info = os.lstat(store.path)
    except OSError:
        info = None
    records = scan_markdown(store, store.experiences, folders)
    events = scan_markdown(store, store.feedback, folders)
    stamps: list[FolderStamp] | None = None
    if info is not None and all(
        old_enough(started_ns, mtime) for _, mtime, _ in [("", info.st_mtime_ns, 0), *folders]
    ):
        stamps = [(STORE_DIR, info.st_mtime_ns, info.st_ino), *folders]
    return Located(store, records, events, linked_folders(store), None, started_ns, stamps)


def _recheck(store: Store, saved: IndexState, started_ns: int) -> Located | None:
    """The files the saved index names, each stat'ed again, if no folder changed; else None."""
    folders = saved.folders
    assert folders is not None
    try:
        root = os.open(store.root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        for locator, mtime_ns, inode in folders:
            info = os.lstat(locator, dir_fd=root)
            if info.st_mtime_ns != mtime_ns or info.st_ino != inode:
                return None
        records = _restat(saved.files, root)
        events = None if records is None else _restat(saved.event_files, root)
    except OSError:
        return None  # a folder or a file gone since: the walk says what is there
    finally:
        with contextlib.suppress(OSError):
            os.close(root)
    if records is None or events is None:
        return None
    return Located(store, records, events, linked_folders(store), None, started_ns, folders)


def _restat(files: Files, root: int) -> list[ScannedFile] | None:
    """``files`` with the size and mtime each has now; None if one is no longer a plain file.

    A file kept as it was shares the saved tuple's values, so that the next stage's one
    list comparison finds it unchanged at the cost of an identity test per field.
    """
    lstat, is_file = os.lstat, stat.S_ISREG
    found: list[ScannedFile] = []
    append = found.append
    for file in files:
        info = lstat(file[0], dir_fd=root)
        if info.st_mtime_ns == file[2] and info.st_size == file[1] and is_file(info.st_mode):
            append(_new_tuple(ScannedFile, file))
        elif is_file(info.st_mode):
            append(ScannedFile(file[0], info.st_size, info.st_mtime_ns, None))
        else:
            return None  # a link or a folder now: the walk says what it is
    return found
