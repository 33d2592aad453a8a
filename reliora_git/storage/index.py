"""The store index: the working tree as every command reads it, through the cache.

Four stages, each a module with one entry that hands a value to the next, and none
calling back into an earlier one (a layers contract in pyproject.toml holds it):

1. **locate** (locate.py): the files and their identities, from a walk or from git;
2. **load** (load.py): each file's value, reused from the cache or parsed, once;
3. **build** (build.py): the inverted index and the record table, built or patched;
4. **answer** (answer.py): :class:`StoreIndex`, the queries the operations ask.

:func:`open_index` runs them in order and saves what changed (indexfile.py).
What comes out is exactly what parsing every file would give — the cache can only
cost speed, never change a result (SPEC.md §9):

* a value is kept for a file only as long as its size and mtime are the same,
  and never for a file modified within :data:`~reliora_git.storage.cache.RACY_NS` of the
  walk (it is parsed again next time);
* what depends on several files (who owns an id, feedback sums) is derived from
  the per-file values, in path order, whenever a file changed;
* a cache file that is missing, corrupt, from other code or unwritable, and a
  segment that cannot be read, only mean parsing again.

The index file holds what every command needs (walk, terms, postings, each
record's identity, feedback values, check problems), each part decoded on first
use; the texts that only a few records need at a time stay in segments
(segments.py).
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.storage.answer import StoreIndex
from reliora_git.storage.build import build
from reliora_git.storage.indexfile import IndexState, index_file, read_state, write_state
from reliora_git.storage.load import load
from reliora_git.storage.locate import Located, locate
from reliora_git.storage.segments import Segments
from reliora_git.storage.store import FolderStamp, Store
from reliora_git.storage.values import paused_gc

if TYPE_CHECKING:
    from reliora_git.storage.gitfiles import GitFiles
    from reliora_git.storage.watch import Watch

__all__ = ["IndexState", "LiveIndex", "StoreIndex", "index_file", "open_index"]


def open_index(
    store: Store,
    previous: IndexState | None = None,
    source: GitFiles | None = None,
    *,
    save: bool = True,
) -> StoreIndex:
    """The index of the store as it is now; ``previous`` instead of the cache file, if given.

    ``source`` reads the store's files from git (gitfiles.py) instead of the working tree.
    ``save=False`` leaves the saved index as it is (``review`` opens a second tree from the
    first one's state, in memory).
    """
    root = store.root.resolve()
    path = index_file(root, source)

    def save_state(state: IndexState) -> None:  # StoreIndex.save: secret scans added
        if path is not None:
            if state.table is None:
                state.table = built.table_of(state)
            write_state(path, root, state)

    with paused_gc():
        state = previous
        if state is None and path is not None:
            state = read_state(path, root)
        kept = state is not None  # else the file is missing or unusable: write it anew
        state = state or IndexState.empty()
        segments = Segments(path)
        located = locate(store, source, state if kept else None)
        loaded = load(located, state, segments)
        built = build(loaded)
        index = StoreIndex(built, segments, path, save_state)
    if save and path is not None and (loaded.changed or _stamps_moved(located, state)):
        saved = index.state = built.saved_state()
        saved.folders = _stamps(located, saved)
        if not kept or _holds_more(saved, state):
            saved.table = built.table_of(saved)
            write_state(path, root, saved)
            segments.remove_unused({loc[0] for loc in saved.blobs if loc is not None})
            _remove_legacy(path)
    return index


def _stamps(located: Located, saved: IndexState) -> list[FolderStamp] | None:
    """The folder stamps to save with ``saved``: a folder's is trusted only if ``saved``
    holds every file the folder lists (locate.py takes them from it)."""
    folders = located.folders
    if folders is None:
        return None
    held = {file[0] for file in saved.files}
    held.update(file[0] for file in saved.event_files)
    loose = {
        file.locator.rpartition("/")[0]
        for files in (located.records, located.events)
        for file in files
        if file.locator not in held
    }
    if not loose:
        return folders
    return [
        (at, mtime, inode, trusted and at not in loose) for at, mtime, inode, trusted in folders
    ]


def _stamps_moved(located: Located, state: IndexState) -> bool:
    """Whether this walk changed the stamps to save: a folder listed again, one that has
    grown old enough to trust, or stamps the saved index lacks."""
    if located.folders is None or located.folders is state.folders:
        return False  # from git, or every stamp as saved
    return _stamps(located, state) != state.folders


def _holds_more(saved: IndexState, state: IndexState) -> bool:
    """Whether ``saved`` caches other files than ``state`` (the state it was read from) did.

    Files written within the racy window (cache.RACY_NS) are parsed by every command and
    never cached: while one is there, writing the index again would only cost time.
    """
    return (
        saved.files != state.files
        or saved.values != state.values
        or saved.event_files != state.event_files
        or saved.event_values != state.event_values
        or saved.folders != state.folders
    )


#: Cache files of earlier versions, beside the index: the value caches of the search and the
#: hook (cache format 1). Nothing reads them any more; at 100,000 records they held 200 MB.
_LEGACY_SUFFIXES = (".cache", ".cache-staged")


def _remove_legacy(path: Path) -> None:
    for suffix in _LEGACY_SUFFIXES:
        with contextlib.suppress(OSError):
            path.with_suffix(suffix).unlink()


class LiveIndex:
    """The store index of a long-running process (the MCP server), kept between calls.

    Each :meth:`open` gives the index of the store as it is now. When a watch on the
    store's folders (watch.py) saw nothing happen since the last call, that is the
    last call's index, as it was; otherwise the store is walked again and a new index
    is built from the kept one's state for the files that changed, without reading
    the index file.

    Tool calls run on several threads at once, so the kept index is shared, never
    mutated by a refresh, and reference-counted: :meth:`open` gives the caller a
    reference (``with live.open(store) as index:`` gives it back), this object holds
    one while the index is current, and the index's files are closed only once it
    has been replaced and no call holds it any more.
    """

    def __init__(self) -> None:
        self._root: Path | None = None
        self._index: StoreIndex | None = None
        self._watch: Watch | None = None
        self._lock = threading.Lock()  # tool calls may come on several threads

    def open(self, store: Store) -> StoreIndex:
        """The index of the store as it is now, with a reference for the caller to close."""
        with self._lock:
            same = self._root == store.root and self._index is not None
            if same and self._watch is not None and self._watch.quiet():
                assert self._index is not None
                return self._index.acquire()
            if self._watch is not None:
                self._watch.close()
                self._watch = None  # a failed walk below must not leave a quiet watch
            from reliora_git.storage.watch import Watch  # ctypes: only a server needs it

            # Armed before the walk: whatever changes from now on is seen next time.
            watch = Watch([store.path])
            previous = self._index.state if same and self._index is not None else None
            try:
                fresh = open_index(store, previous)  # our reference: held while current
            except BaseException:
                watch.close()
                raise
            self._watch = watch
            if self._index is not None:
                self._index.close()  # replaced: closed once its last caller is done
            self._index = fresh
            self._root = store.root
            return fresh.acquire()

    def close(self) -> None:
        with self._lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
            if self._index is not None:
                self._index.close()
                self._index = None
            self._root = None
