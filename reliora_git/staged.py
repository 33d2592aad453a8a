"""The store as the git index holds it: what ``check --staged`` (the pre-commit hook) judges.

The index is read with git itself, never from ``.git/index`` directly: during
``git commit -a`` and ``git commit <paths>`` the hook is handed a temporary
index through ``GIT_INDEX_FILE``, and git subprocesses honour it (see git.py).
Nothing here writes to the index or the working tree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from reliora_git import git
from reliora_git.api import CheckReport, FileReport, check_entries
from reliora_git.catalog import Catalog, Entry, TextOrError, catalog_from_texts
from reliora_git.errors import RecordError, RelioraError
from reliora_git.model import Problem
from reliora_git.store import MAX_RECORD_BYTES, STORE_DIR, Store, decode_utf8, find_store

EXPERIENCES = f"{STORE_DIR}/experiences/"
FEEDBACK = f"{STORE_DIR}/feedback/"
#: Statuses of `git diff --raw` whose new side is a record to check (deletions are ignored).
CHECKED_STATUSES = frozenset("ACMRT")
_SYMLINK_MODE = "120000"
_SUBMODULE_MODE = "160000"
#: Modes of index entries that are not regular files: their blobs are never read as records.
NOT_FILES = (_SYMLINK_MODE, _SUBMODULE_MODE)


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


@dataclass
class StagedStore:
    catalog: Catalog
    #: Records added, copied, modified or renamed in the index, in path order.
    changed: list[Entry]
    #: Store files with unresolved conflicts (index stages 1-3).
    conflicts: list[str]


def is_store_file(locator: str, folder: str) -> bool:
    """A Markdown file below ``folder`` that the working-tree walk would read too."""
    if not locator.startswith(folder) or not locator.endswith(".md"):
        return False
    return not any(part.startswith(".") for part in locator[len(folder) :].split("/"))


def read_staged_store(store: Store) -> StagedStore:
    """Every record and feedback event in the index, and which records the commit changes."""
    if git.toplevel(store.root) is None:
        raise RelioraError(
            f"{store.root} is not in a git repository; --staged reads the git index",
            code="not_git",
        )
    # git prints paths from the top of the work tree; locators start at the store's root.
    prefix = git.show_prefix(store.root)
    specs = [EXPERIENCES, FEEDBACK]
    changes = git.staged_changes(store.root, specs)
    changed = {
        change.path[len(prefix) :]
        for change in changes
        if change.status in CHECKED_STATUSES
        and is_store_file(change.path[len(prefix) :], EXPERIENCES)
    }
    if not changed and not any(change.status == "U" for change in changes):
        # Most commits touch no record: skip reading the store from the index.
        return StagedStore(catalog_from_texts(store, [], []), [], [])
    index = [(entry.path[len(prefix) :], entry) for entry in git.ls_files_stage(store.root, specs)]
    conflicts = sorted({locator for locator, entry in index if entry.stage != 0})
    merged = [(locator, entry) for locator, entry in index if entry.stage == 0]
    records = [(loc, e) for loc, e in merged if is_store_file(loc, EXPERIENCES)]
    events = [(loc, e) for loc, e in merged if is_store_file(loc, FEEDBACK)]
    blobs = git.read_blobs(
        store.root,
        [e.blob for _, e in records + events if e.mode not in NOT_FILES],
        MAX_RECORD_BYTES,
    )
    catalog = catalog_from_texts(
        store,
        [blob_text(loc, e, blobs) for loc, e in records],
        [blob_text(loc, e, blobs) for loc, e in events],
    )
    return StagedStore(
        catalog, [entry for entry in catalog.entries if entry.locator in changed], conflicts
    )


def blob_text(locator: str, entry: git.IndexEntry, blobs: dict[str, git.Blob]) -> TextOrError:
    """The text of a store file kept in git, or why it is not a record (as the disk walk says)."""
    if entry.mode == _SYMLINK_MODE:
        return locator, RecordError("is a symbolic link, not a regular file", path=locator)
    if entry.mode == _SUBMODULE_MODE:
        return locator, RecordError("is a submodule, not a file", path=locator)
    blob = blobs[entry.blob]
    if blob.data is None:
        return locator, RecordError(f"is larger than {MAX_RECORD_BYTES // 1024} KiB", path=locator)
    try:
        return locator, decode_utf8(blob.data, locator)
    except RecordError as exc:
        return locator, exc


@dataclass
class StagedCheck:
    report: CheckReport
    conflicts: list[str]

    @property
    def has_invalid_records(self) -> bool:
        return any(f.has_errors for f in self.report.files if f.locator not in self.conflicts)


def check_staged(store: Store, *, duplicates: bool = True) -> StagedCheck:
    """Validate the staged records and seek their duplicates in the staged store."""
    staged = read_staged_store(store)
    similar_for = {entry.locator for entry in staged.changed} if duplicates else set()
    report = check_entries(staged.catalog, staged.changed, similar_for=similar_for)
    if not duplicates:
        for file in report.files:
            file.similar = []
        report.files = [f for f in report.files if f.problems]
    conflicted = [
        FileReport(
            locator,
            None,
            [Problem("error", "has unresolved merge conflicts; resolve them and `git add` it")],
        )
        for locator in staged.conflicts
    ]
    report.files = conflicted + report.files
    report.checked += len(conflicted)
    return StagedCheck(report, staged.conflicts)
