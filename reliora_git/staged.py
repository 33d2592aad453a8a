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
from reliora_git.api import CheckReport, FileReport, StoreView, check_entries
from reliora_git.cache import FileCache, Value, cache_file
from reliora_git.catalog import Entry, TextOrError, read_entry
from reliora_git.duplicates import DocsPool
from reliora_git.errors import RecordError, RelioraError
from reliora_git.model import Problem
from reliora_git.store import MAX_RECORD_BYTES, STORE_DIR, Store, decode_utf8, find_store
from reliora_git.values import (
    docs_from_values,
    entry_value,
    error_value,
    event_value,
    feedback_from_values,
    paused_gc,
    record_value,
    shared,
)

EXPERIENCES = f"{STORE_DIR}/experiences/"
FEEDBACK = f"{STORE_DIR}/feedback/"
#: Cache sections of staged files, keyed by locator, mode and blob id (see BlobValues).
RECORDS_BY_BLOB = "staged-experiences"
EVENTS_BY_BLOB = "staged-feedback"
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
    #: The staged store as far as judging a record needs it.
    view: StoreView
    #: Records added, copied, modified or renamed in the index, in path order.
    changed: list[Entry]
    #: Store files with unresolved conflicts (index stages 1-3).
    conflicts: list[str]


def is_store_file(locator: str, folder: str) -> bool:
    """A Markdown file below ``folder`` that the working-tree walk would read too."""
    if not locator.startswith(folder) or not locator.endswith(".md"):
        return False
    # No part of the rest starts with a dot (a test per part cost 3 µs, for every file).
    rest = locator[len(folder) :]
    return not rest.startswith(".") and "/." not in rest


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
        return StagedStore(StoreView(DocsPool([]), {}), [], [])
    index = [(entry.path[len(prefix) :], entry) for entry in git.ls_files_stage(store.root, specs)]
    conflicts = sorted({locator for locator, entry in index if entry.stage != 0})
    merged = [(locator, entry) for locator, entry in index if entry.stage == 0]
    records = [(loc, e) for loc, e in merged if is_store_file(loc, EXPERIENCES)]
    events = [(loc, e) for loc, e in merged if is_store_file(loc, FEEDBACK)]
    with BlobValues(store) as values:
        values.fetch([(loc, e) for loc, e in records if loc not in changed], RECORDS_BY_BLOB)
        values.fetch(events, EVENTS_BY_BLOB)
        values.fetch_texts([(loc, e) for loc, e in records if loc in changed])
        changed_entries = []
        record_values = []
        for locator, entry in records:
            if locator in changed:
                text = values.text(locator, entry)
                parsed = (
                    Entry(locator, error=text)
                    if isinstance(text, RecordError)
                    else read_entry(locator, text)
                )
                changed_entries.append(parsed)
                record_values.append(entry_value(parsed))
            else:
                record_values.append(values.value(locator, entry, RECORDS_BY_BLOB))
        event_values = [values.value(loc, e, EVENTS_BY_BLOB) for loc, e in events]
    docs, _ = docs_from_values(store, [loc for loc, _ in records], record_values)
    owners = {doc.id: doc.locator for doc in docs}
    for parsed in changed_entries:
        # An invalid staged record still claims its id (check_entries reports clashes).
        if parsed.record is not None and parsed.record.id:
            owners.setdefault(parsed.record.id, parsed.locator)
    view = StoreView(DocsPool(docs, feedback_from_values(event_values)), owners)
    return StagedStore(view, changed_entries, conflicts)


class BlobValues:
    """What each staged file gives a search, cached by (locator, blob id).

    A blob id names exact content, so unlike the working-tree cache no size, mtime
    or racy-write rule is needed: a cached value is right for as long as the blob
    is in the index. Only blobs without a cached value (and the changed records,
    which are parsed in full) are read, in one ``git cat-file --batch``.
    """

    def __init__(self, store: Store) -> None:
        root = store.root.resolve()
        self.store = store
        # A file of its own, so that a search never loads what only the hook needs.
        path = cache_file(root)
        self.cache = FileCache(path and path.with_name(path.name + "-staged"), root)
        self.cached: dict[str, Value] = {}
        self.wanted: list[tuple[str, git.IndexEntry]] = []
        #: Files of each cache section without a cached value: computed together, on first use.
        self.uncached: dict[str, list[tuple[str, git.IndexEntry]]] = {}
        self.blobs: dict[str, git.Blob] = {}
        self._read_done = False

    def __enter__(self) -> BlobValues:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cache.save()

    @staticmethod
    def key(locator: str, entry: git.IndexEntry) -> str:
        return f"{locator}\0{entry.mode}\0{entry.blob}"

    def fetch(self, files: list[tuple[str, git.IndexEntry]], section: str) -> None:
        lookup = self.cache.section(section)
        uncached = self.uncached.setdefault(section, [])
        for locator, entry in files:
            value = lookup.get(self.key(locator, entry), 0, 0)
            if value is None:
                uncached.append((locator, entry))
            else:
                self.cached[self.key(locator, entry)] = value
        self.wanted.extend(uncached)

    def fetch_texts(self, files: list[tuple[str, git.IndexEntry]]) -> None:
        self.wanted.extend(files)

    def _read(self) -> None:
        """Read every wanted blob, once, in one batch (all wants are known by then)."""
        if self._read_done:
            return
        self._read_done = True
        missing = [e.blob for _, e in self.wanted if e.mode not in NOT_FILES]
        if missing:
            self.blobs = git.read_blobs(self.store.root, missing, MAX_RECORD_BYTES)

    def text(self, locator: str, entry: git.IndexEntry) -> str | RecordError:
        self._read()
        return blob_text(locator, entry, self.blobs)[1]

    def value(self, locator: str, entry: git.IndexEntry, section: str) -> Value:
        """The value of a file passed to :meth:`fetch` for ``section``."""
        if self.uncached.get(section):
            self._compute(section)
        return self.cached[self.key(locator, entry)]

    def _compute(self, section: str) -> None:
        """Parse every uncached file of ``section`` at once (on several cores when many)."""
        from reliora_git.parallel import computer

        files, self.uncached[section] = self.uncached[section], []
        texts: list[tuple[str, str]] = []
        keys: list[str] = []
        for locator, entry in files:
            text = self.text(locator, entry)
            if isinstance(text, RecordError):
                self.cached[self.key(locator, entry)] = error_value(text)
            else:
                texts.append((locator, text))
                keys.append(self.key(locator, entry))
        compute = record_value if section == RECORDS_BY_BLOB else event_value
        lookup = self.cache.section(section)
        with computer(compute, len(texts)) as compute_all:
            for (locator, _), key, value in zip(texts, keys, compute_all(texts), strict=True):
                self.cached[key] = value = shared(value, locator)
                lookup.put(key, 0, 0, value)


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
    # Loading the whole staged store allocates hundreds of thousands of acyclic tuples at
    # 100,000 records: with the collector on, its passes took a third of the time.
    with paused_gc():
        staged = read_staged_store(store)
        similar_for = {entry.locator for entry in staged.changed} if duplicates else set()
        report = check_entries(staged.view, staged.changed, similar_for=similar_for)
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
