"""The store as a git tree or the git index holds it, for the store index to read.

``check --staged`` judges the staged store and ``review`` the store of a commit;
both read it through the same index as every other command (index.py), with
file identity taken from git instead of a walk: a file is its locator and blob
id. A blob id names exact content, so no size, mtime or racy-write rule is
needed, and a value cached for a blob is right wherever that blob appears — in
the index, in HEAD, in a branch under review. Texts come from one ``git
cat-file --batch`` per round of files to parse.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reliora_git.gitrepo import git
from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.storage.store import (
    LINKED_FOLDER,
    MAX_RECORD_BYTES,
    STORE_DIR,
    ScannedFile,
    Store,
    decode_utf8,
    find_store,
)

EXPERIENCES = f"{STORE_DIR}/experiences/"
FEEDBACK = f"{STORE_DIR}/feedback/"
LINK_MODE = _SYMLINK_MODE = "120000"
_SUBMODULE_MODE = "160000"
#: Modes of entries that are not regular files: their blobs are never read as records.
NOT_FILES = (_SYMLINK_MODE, _SUBMODULE_MODE)
#: Why the working-tree walk would not read an entry of such a mode either.
_NOT_A_FILE = {
    _SYMLINK_MODE: "is a symbolic link, not a regular file",
    _SUBMODULE_MODE: "is a submodule, not a file",
}
_new_tuple = tuple.__new__
#: The two folders as git names them (a pathspec without the slash also matches a link).
_FOLDERS = (EXPERIENCES.rstrip("/"), FEEDBACK.rstrip("/"))


def is_store_file(locator: str, folder: str) -> bool:
    """A Markdown file below ``folder`` that the working-tree walk would read too."""
    if not locator.startswith(folder) or not locator.endswith(".md"):
        return False
    # No part of the rest starts with a dot (a test per part cost 3 µs, for every file).
    rest = locator[len(folder) :]
    return not rest.startswith(".") and "/." not in rest


def _files_in(entries: Sequence[tuple[str, str, str]], folder: str) -> list[ScannedFile]:
    """The entries that are store files below ``folder`` (is_store_file), as a walk gives them.

    The blob id (as a number) stands where a walk puts the size, and the mtime is
    0, which is never too recent to cache. One comprehension: the hook runs this
    for every store file.
    """
    n = len(folder)
    found = [
        _new_tuple(ScannedFile, (loc, int(blob, 16), 0, _NOT_A_FILE.get(mode)))
        for loc, mode, blob in entries
        if loc.startswith(folder) and loc.endswith(".md") and loc[n] != "." and "/." not in loc[n:]
    ]
    found.sort()
    return found


@dataclass
class GitFiles:
    """Record and feedback files of one git tree or index, in path order."""

    store: Store
    records: list[ScannedFile]
    events: list[ScannedFile]
    #: Hex digits of a blob id (40 for SHA-1, 64 for SHA-256), to name a file's blob again.
    id_width: int = 40
    #: ``experiences`` or ``feedback`` kept as a symbolic link (store.linked_folders).
    linked: list[RelioraError] = field(default_factory=list)

    @classmethod
    def of(cls, store: Store, entries: Sequence[tuple[str, str, str]]) -> GitFiles:
        """The store files among (locator, mode, blob) entries, locators from the store's root."""
        width = len(entries[0][2]) if entries else 40
        linked = [
            RelioraError(LINKED_FOLDER, path=loc, code="linked_folder")
            for loc, mode, _ in entries
            if loc in _FOLDERS and mode == _SYMLINK_MODE
        ]
        experiences, feedback = _files_in(entries, EXPERIENCES), _files_in(entries, FEEDBACK)
        return cls(store, experiences, feedback, width, linked)

    @classmethod
    def staged(cls, store: Store, prefix: str) -> tuple[GitFiles, list[str]]:
        """The store as the git index holds it, and its files with unresolved conflicts.

        ``prefix`` is the store's root from the top of the work tree (git.show_prefix).
        ``ls-files -s`` prints ``<mode> <blob> <stage>\t<path>``; the mode has six
        digits and every blob id the same width, so each line is cut at fixed places:
        a hook run reads one per store file, and a split per line cost 0.25 s at
        100,000 records.
        """
        # Pathspecs are relative to the store's root; --full-name prints paths from the top.
        # Without the trailing slash they also match the folders themselves, when linked.
        specs = list(_FOLDERS)
        out = git.run(["ls-files", "-s", "-z", "--full-name", "--", *specs], store.root)
        lines = out.decode("utf-8", "surrogateescape").split("\0")[:-1]
        if not lines:
            return cls(store, [], []), []
        width = lines[0].index(" ", 7) - 7
        tab = 7 + width + 2  # where the tab is
        start = tab + 1 + len(prefix)  # where the locator starts
        merged = [line for line in lines if line[tab - 1] == "0"]
        conflicts = sorted({line[start:] for line in lines if line[tab - 1] != "0"})
        files = cls.of(store, [(line[start:], line[:6], line[7 : 7 + width]) for line in merged])
        return files, conflicts

    def texts(self, files: Sequence[ScannedFile]) -> list[str | RecordError]:
        """The text of each file, or why it is not a record (as the disk walk would say)."""
        blob_ids = [format(file.size, f"0{self.id_width}x") for file in files]
        wanted = [blob for blob, file in zip(blob_ids, files, strict=True) if not file.unreadable]
        blobs = git.read_blobs(self.store.root, wanted, MAX_RECORD_BYTES) if wanted else {}
        found: list[str | RecordError] = []
        for blob, file in zip(blob_ids, files, strict=True):
            if file.unreadable:
                found.append(RecordError(file.unreadable, path=file.locator))
            else:
                found.append(blob_text(file.locator, git.IndexEntry(file.locator, "", blob), blobs))
        return found


def blob_text(locator: str, entry: git.IndexEntry, blobs: dict[str, git.Blob]) -> str | RecordError:
    """The text of a store file kept in git, or why it is not a record."""
    reason = _NOT_A_FILE.get(entry.mode)
    if reason is not None:
        return RecordError(reason, path=locator)
    blob = blobs[entry.blob]
    if blob.data is None:
        return RecordError(f"is larger than {MAX_RECORD_BYTES // 1024} KiB", path=locator)
    try:
        return decode_utf8(blob.data, locator)
    except RecordError as exc:
        return exc


def find_git_store(repo: str | os.PathLike[str] | None = None) -> Store:
    """The store, or else the top of the git work tree: for commands that read git, not disk.

    ``check --staged`` and ``review`` judge what git holds, so a store that is
    missing from the working tree (or never created there) is no reason to fail.
    """
    try:
        return find_store(repo)
    except RelioraError:
        root = git.toplevel(Path(repo).resolve() if repo is not None else Path.cwd())
        if root is None:
            raise
        return Store(root)
