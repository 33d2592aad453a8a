"""Stage 1 of the store index: locate, which files the store holds and their identities.

``locate`` walks ``experiences/`` and ``feedback/`` (one ``lstat`` per file, no
file read), or takes the files from git (gitfiles.py: identities are blob ids).
What it hands on, :class:`Located`, is all the next stage (load.py) needs to
decide which files it can reuse and which it must parse.

**Folder stamps.** The walk stamps each folder (mtime and inode, taken before the
folder is listed), and the saved index keeps the stamps. A folder whose stamp is
unchanged still holds the same names: adding, removing or renaming a file in it
would have changed its mtime. So the next command lists only the folders whose
stamp changed (and the folders new in them); the files of the others are taken
from the saved index and each is ``lstat``-ed for its size and mtime, as the walk
would. What comes out is what the whole walk would give. A stamp is trusted only
when its mtime is older than :data:`~reliora_git.storage.cache.RACY_NS` at the walk
(a folder changed twice within one tick of a coarse clock keeps its mtime), and
only while the index holds every file the folder lists (index.py); an untrusted
folder is listed every time.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.records.errors import RelioraError
from reliora_git.storage.cache import old_enough
from reliora_git.storage.store import (
    FolderStamp,
    ScannedFile,
    Store,
    linked_folders,
    scan_folder,
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
    #: Every folder walked, in path order (None: the files come from git).
    folders: list[FolderStamp] | None = None


def locate(
    store: Store, source: GitFiles | None = None, saved: IndexState | None = None
) -> Located:
    """The files of ``store`` from the working tree, or from ``source`` (git) when given.

    ``saved``: the last index saved, whose folder stamps spare listing the folders
    that did not change (see the module docstring).
    """
    started_ns = time.time_ns()
    if source is not None:
        return Located(store, source.records, source.events, source.linked, source, started_ns)
    # os.lstat takes a dir_fd wherever os.stat does (it is stat without following links).
    if saved is not None and saved.folders and os.stat in os.supports_dir_fd:
        again = _Walk(store, started_ns).again(saved)
        if again is not None:
            return again
    return _Walk(store, started_ns).whole()


class _Walk:
    """One walk of the store's two folders, each folder stamped as it is listed."""

    def __init__(self, store: Store, started_ns: int) -> None:
        self.store = store
        self.started_ns = started_ns
        self.folders: list[FolderStamp] = []
        self.records: list[ScannedFile] = []
        self.events: list[ScannedFile] = []
        self.tops = [
            (store.experiences, store.locator(store.experiences), self.records),
            (store.feedback, store.locator(store.feedback), self.events),
        ]

    def whole(self) -> Located:
        """Every folder listed, as :func:`~reliora_git.storage.store.scan_markdown` does."""
        self._walk_tops(self.tops)
        return self._located()

    def _walk_tops(self, tops: list[tuple[Path, str, list[ScannedFile]]]) -> None:
        """Each of ``tops`` walked whole, unless it is missing or a link (linked_folders)."""
        for top, locator, into in tops:
            if top.is_dir() and not top.is_symlink():
                self._walk_below(os.fspath(top), locator, into)

    def _walk_below(self, path: str, locator: str, into: list[ScannedFile]) -> None:
        stack = [(path, locator)]
        while stack:
            current, prefix = stack.pop()
            try:
                # Stamped before it is listed: a file added meanwhile changes the mtime.
                self._list(current, prefix, os.lstat(current), stack, into)
            except FileNotFoundError:
                continue  # removed since its parent was listed, as the walk skips it

    def _list(
        self,
        path: str,
        locator: str,
        info: os.stat_result,
        stack: list[tuple[str, str]],
        into: list[ScannedFile],
    ) -> None:
        """One folder listed: its files found, its folders pushed, its stamp kept."""
        first = len(into)
        scan_folder(path, locator, stack, into.append)
        started = self.started_ns
        trusted = old_enough(started, info.st_mtime_ns) and all(
            file.unreadable is None and old_enough(started, file.mtime_ns) for file in into[first:]
        )
        self.folders.append((locator, info.st_mtime_ns, info.st_ino, trusted))

    def _located(self) -> Located:
        self.records.sort()
        self.events.sort()
        self.folders.sort()  # a folder before the folders in it (again() relies on that)
        store = self.store
        return Located(
            store,
            self.records,
            self.events,
            linked_folders(store),
            None,
            self.started_ns,
            self.folders,
        )

    def again(self, saved: IndexState) -> Located | None:
        """The walk with the saved index's help, or None where only the whole walk will do."""
        try:
            root = os.open(self.store.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            return None
        try:
            return self._again(saved, root)
        except OSError:
            return None  # a folder or a file gone since its parent was read: walk it all
        finally:
            with contextlib.suppress(OSError):
                os.close(root)

    def _again(self, saved: IndexState, root: int) -> Located | None:
        stamps = saved.folders
        assert stamps is not None
        tops = {locator for _, locator, _ in self.tops}
        unchanged: set[str] = set()
        listed: list[tuple[str, os.stat_result]] = []
        gone: set[str] = set()
        for stamp in stamps:
            locator, mtime_ns, inode, trusted = stamp
            if locator.rpartition("/")[0] in gone:
                # Below a folder that is a link now: never stat'ed through it.
                gone.add(locator)
                continue
            try:
                info = os.lstat(locator, dir_fd=root)
            except FileNotFoundError:
                info = None
            if info is None or not stat.S_ISDIR(info.st_mode):
                if locator in tops:
                    return None  # the whole walk says what became of it
                gone.add(locator)  # its parent changed too, and its listing says what is there
            elif trusted and info.st_mtime_ns == mtime_ns and info.st_ino == inode:
                unchanged.add(locator)
                self.folders.append(stamp)
            else:
                listed.append((locator, info))
        known = {stamp[0] for stamp in stamps}
        new_tops = [top for top in self.tops if top[1] not in known]
        if not listed and not new_tops and len(unchanged) == len(stamps):
            records = _restat(saved.files, root, None)
            events = None if records is None else _restat(saved.event_files, root, None)
            if records is None or events is None:
                return None
            store = self.store
            return Located(
                store, records, events, linked_folders(store), None, self.started_ns, stamps
            )
        for files, into in ((saved.files, self.records), (saved.event_files, self.events)):
            kept = _restat(files, root, unchanged)
            if kept is None:
                return None
            into += kept
        base = os.fspath(self.store.root)
        experiences = self.tops[0][1]
        for locator, info in listed:
            below_experiences = locator == experiences or locator.startswith(experiences + "/")
            into = self.records if below_experiences else self.events
            stack: list[tuple[str, str]] = []
            self._list(os.path.join(base, locator), locator, info, stack, into)
            for path, below in stack:
                if below not in known:  # a folder new since the index was saved
                    self._walk_below(path, below, into)
        self._walk_tops(new_tops)
        return self._located()


def _restat(files: Files, root: int, folders: set[str] | None) -> list[ScannedFile] | None:
    """``files`` (those in ``folders``, if given) with the size and mtime each has now; None
    if one is no longer a plain file.

    A file kept as it was shares the saved tuple's values, so that the next stage's one
    list comparison finds it unchanged at the cost of an identity test per field.
    """
    lstat, is_file = os.lstat, stat.S_ISREG
    found: list[ScannedFile] = []
    append = found.append
    for file in files:
        if folders is not None and file[0].rpartition("/")[0] not in folders:
            continue
        info = lstat(file[0], dir_fd=root)
        if info.st_mtime_ns == file[2] and info.st_size == file[1] and is_file(info.st_mode):
            append(_new_tuple(ScannedFile, file))
        elif is_file(info.st_mode):
            append(ScannedFile(file[0], info.st_size, info.st_mtime_ns, None))
        else:
            return None  # a link or a folder now: the walk says what it is
    return found
