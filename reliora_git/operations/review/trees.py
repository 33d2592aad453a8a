"""Both sides of a review read from git objects, never from the working tree: the records a
branch changes (one diff, one ls-tree and one cat-file batch) and the whole store at head
through the store index, so only blobs it has not seen before are parsed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reliora_git.gitrepo import git
from reliora_git.operations.review.check import StoreView, index_owners
from reliora_git.records.errors import RelioraError
from reliora_git.storage.catalog import Catalog, Entry, catalog_from_texts
from reliora_git.storage.config import load_config
from reliora_git.storage.gitfiles import (
    EXPERIENCES,
    FEEDBACK,
    LINK_MODE,
    NOT_FILES,
    GitFiles,
    blob_text,
    is_store_file,
)
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import LINKED_STORE, MAX_RECORD_BYTES, STORE_DIR, Store

#: Statuses whose change has a base version (modified, type changed, renamed, removed).
_HAS_BASE_VERSION = frozenset("MTRD")
#: Statuses that add a file at head (added, copied, renamed).
_ADDS_A_FILE = frozenset("ACR")


@dataclass
class Trees:
    """Both sides of a review as the store holds them, read from git objects."""

    #: Changes that touch a record file, on either side.
    record_changes: list[git.Change]
    #: The whole store at head.
    index: StoreIndex
    #: The records head adds or changes, and the feedback files it adds, parsed in full.
    head: Catalog
    #: The base version of every modified, renamed or removed record, by its base locator.
    before: dict[str, Entry]
    #: Feedback files head adds.
    added_feedback: set[str]
    #: The texts of ``head``'s files (those that read), scanned whole for secrets.
    texts: dict[str, str] = field(default_factory=dict)

    def view(self, store: Store) -> StoreView:
        owners = index_owners(self.index)
        for entry in self.head.entries:
            if entry.record is not None and entry.record.id:
                owners.setdefault(entry.record.id, entry.locator)
        return StoreView(self.index, owners, load_config(store).duplicate_overlap)

    def __enter__(self) -> Trees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.index.close()


def read_trees(store: Store, base: str, head: str) -> Trees:
    """Both sides from git objects: one diff, one ls-tree and one cat-file batch."""
    prefix = git.show_prefix(store.root)
    _refuse_linked_store(store, head)
    # Without the trailing slash, the pathspecs also match a folder kept as a link.
    specs = [EXPERIENCES.rstrip("/"), FEEDBACK.rstrip("/")]
    diff = [_relative(change, prefix) for change in git.tree_changes(store.root, base, head, specs)]
    head_files = [
        (entry.path[len(prefix) :], entry) for entry in git.ls_tree(store.root, head, specs)
    ]
    record_changes = [
        c
        for c in diff
        if is_store_file(c.path, EXPERIENCES)
        or (c.old_path is not None and is_store_file(c.old_path, EXPERIENCES))
    ]
    old_files = [
        (
            c.old_path or c.path,
            git.IndexEntry(c.old_path or c.path, c.old_mode or "", c.old_blob or ""),
        )
        for c in record_changes
        if c.status in _HAS_BASE_VERSION
    ]
    added_feedback = {
        c.path for c in diff if c.status in _ADDS_A_FILE and is_store_file(c.path, FEEDBACK)
    }
    changed = {c.path for c in record_changes if c.status != "D"}
    new_records = [(loc, e) for loc, e in head_files if loc in changed]
    new_events = [(loc, e) for loc, e in head_files if loc in added_feedback]
    blobs = git.read_blobs(
        store.root,
        [e.blob for _, e in new_records + new_events + old_files if e.mode not in NOT_FILES],
        MAX_RECORD_BYTES,
    )
    head_texts = [
        (loc, blob_text(loc, e, blobs)) for loc, e in new_records if is_store_file(loc, EXPERIENCES)
    ]
    event_texts = [(loc, blob_text(loc, e, blobs)) for loc, e in new_events]
    changed_at_head = catalog_from_texts(store, head_texts, event_texts)
    before = catalog_from_texts(
        store, [(loc, blob_text(loc, e, blobs)) for loc, e in old_files], []
    )
    return Trees(
        record_changes,
        open_index(
            store, source=GitFiles.of(store, [(loc, e.mode, e.blob) for loc, e in head_files])
        ),
        changed_at_head,
        {entry.locator: entry for entry in before.entries},
        added_feedback,
        {loc: text for loc, text in head_texts + event_texts if isinstance(text, str)},
    )


def _refuse_linked_store(store: Store, head: str) -> None:
    """Head's ``.reliora`` kept as a symbolic link: its records are not in the tree, and a
    review that said "no changes to experiences" would pass a branch that swapped them."""
    out = git.run(["ls-tree", "-z", "--end-of-options", head, "--", STORE_DIR], store.root)
    for line in out.decode("utf-8", "surrogateescape").split("\0"):
        if line.startswith(f"{LINK_MODE} "):
            raise RelioraError(f"{LINKED_STORE} (in {head})", path=STORE_DIR, code="linked_store")


def _relative(change: git.Change, prefix: str) -> git.Change:
    return git.Change(
        change.status,
        change.path[len(prefix) :],
        change.old_path[len(prefix) :] if change.old_path else None,
        change.old_blob,
        change.new_blob,
        change.old_mode,
        change.new_mode,
    )
