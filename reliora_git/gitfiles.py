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

from collections.abc import Sequence
from dataclasses import dataclass, field

from reliora_git import git
from reliora_git.errors import RecordError
from reliora_git.store import MAX_RECORD_BYTES, STORE_DIR, ScannedFile, Store, decode_utf8

EXPERIENCES = f"{STORE_DIR}/experiences/"
FEEDBACK = f"{STORE_DIR}/feedback/"
_SYMLINK_MODE = "120000"
_SUBMODULE_MODE = "160000"
#: Modes of entries that are not regular files: their blobs are never read as records.
NOT_FILES = (_SYMLINK_MODE, _SUBMODULE_MODE)
#: Why the working-tree walk would not read an entry of such a mode either.
_NOT_A_FILE = {
    _SYMLINK_MODE: "is a symbolic link, not a regular file",
    _SUBMODULE_MODE: "is a submodule, not a file",
}


def is_store_file(locator: str, folder: str) -> bool:
    """A Markdown file below ``folder`` that the working-tree walk would read too."""
    if not locator.startswith(folder) or not locator.endswith(".md"):
        return False
    # No part of the rest starts with a dot (a test per part cost 3 µs, for every file).
    rest = locator[len(folder) :]
    return not rest.startswith(".") and "/." not in rest


def scanned(locator: str, entry: git.IndexEntry) -> ScannedFile:
    """A git entry as the index takes a walked file.

    The blob id (as a number) stands where a walk puts the size, and the mtime is
    0, which is never too recent to cache.
    """
    return ScannedFile(locator, int(entry.blob, 16), 0, _NOT_A_FILE.get(entry.mode))


@dataclass
class GitFiles:
    """Record and feedback files of one git tree or index, as (locator, entry), in path order."""

    store: Store
    records: list[ScannedFile]
    events: list[ScannedFile]
    #: Locator → its entry.
    entries: dict[str, git.IndexEntry] = field(default_factory=dict)

    @classmethod
    def of(cls, store: Store, files: Sequence[tuple[str, git.IndexEntry]]) -> GitFiles:
        """The store files among ``files`` (locators relative to the store's root)."""
        records: list[ScannedFile] = []
        events: list[ScannedFile] = []
        entries: dict[str, git.IndexEntry] = {}
        for locator, entry in files:
            if is_store_file(locator, EXPERIENCES):
                records.append(scanned(locator, entry))
            elif is_store_file(locator, FEEDBACK):
                events.append(scanned(locator, entry))
            else:
                continue
            entries[locator] = entry
        return cls(store, sorted(records), sorted(events), entries)

    def texts(self, files: Sequence[ScannedFile]) -> list[str | RecordError]:
        """The text of each file, or why it is not a record (as the disk walk would say)."""
        wanted = [self.entries[f.locator].blob for f in files if not f.unreadable]
        blobs = git.read_blobs(self.store.root, wanted, MAX_RECORD_BYTES) if wanted else {}
        return [blob_text(f.locator, self.entries[f.locator], blobs) for f in files]


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
