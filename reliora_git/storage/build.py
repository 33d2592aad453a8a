"""Stage 3 of the store index: the inverted index and the record table, built or patched.

The records parsed by the load stage (load.py) get their new slots and postings,
the slots of files that changed or are gone are marked dead. Then what depends on
several files is derived, in path order, from the per-file values: who owns an id
(an id clash's loser is left out), which records are superseded (SPEC.md §11),
why each left-out file is skipped, and the feedback sums. When no record file
changed, nothing is decoded for this: the record table saved with the state
(indexfile.RecordTable) already says it, and the records are decoded only for
the commands that rank or list them.

What it hands on, :class:`Built`, is what the answering stage (answer.py) serves.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackSummary
from reliora_git.search.inverted import DEAD_SHARE, InvertedIndex, PostingsBuilder
from reliora_git.search.rank import superseders
from reliora_git.storage.catalog import choose_id_owners
from reliora_git.storage.indexfile import CheckInfo, IndexState, RecordTable
from reliora_git.storage.load import Loaded
from reliora_git.storage.segments import Location
from reliora_git.storage.store import Store
from reliora_git.storage.values import feedback_from_values

#: The live records, why each file left out is skipped, and who supersedes which record.
Visible = tuple[InvertedIndex, list[RelioraError], dict[str, list[str]]]


@dataclass
class Built:
    """The store's records indexed: every slot's record, and the live ones (see the docstring)."""

    loaded: Loaded
    #: Slot → record, id-clash losers included (None: the state's, not patched).
    patched: InvertedIndex | None
    #: Slot → where its segment value is (None: the state's).
    patched_blobs: list[Location | None] | None
    feedback: dict[str, FeedbackSummary]

    @property
    def state(self) -> IndexState:
        return self.loaded.state

    @property
    def all_records(self) -> InvertedIndex:
        return self.patched if self.patched is not None else self.state.inverted

    @property
    def blobs(self) -> list[Location | None]:
        return self.patched_blobs if self.patched_blobs is not None else self.state.blobs

    @property
    def checks(self) -> dict[str, CheckInfo]:
        checks = self.loaded.checks
        return checks if checks is not None else self.state.checks

    @functools.cached_property
    def visible(self) -> Visible:
        """The live records (id-clash losers dead, superseded ones marked so), and why."""
        table = self.state.table
        if not self.loaded.patched and table is not None:
            # The table says what the records would: no file skipped means no clash to
            # drop, and who is superseded is known, so only the statuses need marking.
            live = self.all_records
            if table.skipped:
                live, skipped = self._visible(live)
            else:
                skipped = []
            return _marked(live, table.superseded_by), skipped, table.superseded_by
        live, skipped = self._visible(self.all_records)
        live, superseded_by = _superseded(live)
        return live, skipped, superseded_by

    def _visible(self, inverted: InvertedIndex) -> tuple[InvertedIndex, list[RelioraError]]:
        store = self.loaded.located.store
        locators = [file.locator for file in self.loaded.located.records]
        return _visible(store, inverted, locators, self.loaded.values)

    @functools.cached_property
    def table(self) -> RecordTable:
        """The record table: the state's when no record file changed, else derived now."""
        if not self.loaded.patched and self.state.table is not None:
            return self.state.table
        live, skipped, superseded_by = self.visible
        return record_table(live, self.loaded.values, skipped, superseded_by)

    def saved_state(self) -> IndexState:
        """What to write: this run's index without the files too young to cache."""
        loaded, state = self.loaded, self.state
        event_files, event_values = loaded.events.stored() or (
            state.event_files,
            state.event_values,
        )
        if not loaded.patched:  # the records are the state's: only feedback files changed
            return state.with_events(event_files, event_values)
        files, values = loaded.records.stored() or (state.files, state.values)
        inverted = self.all_records
        blobs = self.blobs
        kept = {v for v in values if isinstance(v, int)}
        docs = [doc if slot in kept else None for slot, doc in enumerate(inverted.docs)]
        saved = InvertedIndex(inverted.terms, inverted.postings, docs)
        renumber: list[int] | None = None
        if saved.dead_share() > DEAD_SHARE:
            saved, renumber = saved.compacted()
            values = [renumber[v] if isinstance(v, int) else v for v in values]
            moved: list[Location | None] = [None] * len(saved.docs)
            for old, new_slot in enumerate(renumber):
                if new_slot >= 0:
                    moved[new_slot] = blobs[old]
            blobs = moved
        else:
            blobs = [loc if slot in kept else None for slot, loc in enumerate(blobs)]
        stored = {loc for loc, *_ in files}
        checks = {loc: info for loc, info in self.checks.items() if loc in stored}
        scans = {
            (renumber[slot] if renumber else slot, entropy): found
            for (slot, entropy), found in state.scans_copy().items()
            if slot in kept
        }
        # Its record table is derived when it is written (see :meth:`table_of`).
        return IndexState(
            files,
            values,
            event_files,
            event_values,
            inverted=saved,
            blobs=blobs,
            checks=checks,
            scans=scans,
        )

    def table_of(self, saved: IndexState) -> RecordTable:
        """The record table of a state :meth:`saved_state` made (the live records it holds)."""
        if saved.table is not None:
            return saved.table
        store = self.loaded.located.store
        locators = [file[0] for file in saved.files]
        live, skipped = _visible(store, saved.inverted, locators, saved.values)
        live, superseded_by = _superseded(live)
        return record_table(live, saved.values, skipped, superseded_by)


def build(loaded: Loaded) -> Built:
    """The index of the loaded files: the state's as it is, or patched with the new records."""
    feedback = feedback_from_values(loaded.event_values)
    if not loaded.patched:
        return Built(loaded, None, None, feedback)
    old = loaded.state.inverted
    postings = PostingsBuilder(old)
    postings.reserve(loaded.reserved)
    for docs, part in loaded.pieces:
        postings.add_part(docs, part)
    loaded.pieces = []  # merged: not held twice
    kept_slots = {v for v in loaded.values if isinstance(v, int)}
    inverted = postings.index()
    inverted.drop(slot for slot in range(len(old.docs)) if slot not in kept_slots)
    blobs = list(loaded.state.blobs)
    blobs += [None] * (len(inverted.docs) - len(blobs))
    for slot, location in loaded.locations.items():
        blobs[slot] = location
    return Built(loaded, inverted, blobs, feedback)


def record_table(
    live: InvertedIndex,
    values: list[Any],
    skipped: list[RelioraError],
    superseded_by: dict[str, list[str]],
) -> RecordTable:
    """The record table of an index whose live records are ``live`` (see indexfile.py)."""
    docs = live.docs
    ids: list[str] = []
    slots: list[int] = []
    locators: list[str] = []
    for value in values:
        if isinstance(value, int) and (doc := docs[value]) is not None:
            ids.append(doc.id)
            slots.append(value)
            locators.append(doc.locator)
    reasons = [(error.message, error.path or "", error.line) for error in skipped]
    return RecordTable(ids, slots, locators, superseded_by, reasons)


def _visible(
    store: Store, inverted: InvertedIndex, locators: list[str], values: list[Any]
) -> tuple[InvertedIndex, list[RelioraError]]:
    """The index with id-clash losers dead, and why each file left out is skipped."""
    docs = inverted.docs
    claims = [
        (doc.id, loc)
        for loc, v in zip(locators, values, strict=True)
        if isinstance(v, int) and (doc := docs[v]) is not None
    ]
    ids = [record_id for record_id, _ in claims]
    if len(claims) == len(values) and len(set(ids)) == len(ids):
        return inverted, []  # the usual store: every record usable, no id twice
    owners = choose_id_owners(claims, store.locator(store.experiences))
    visible = list(docs)
    skipped: list[RelioraError] = []
    for locator, value in zip(locators, values, strict=True):
        if not isinstance(value, int):
            skipped.append(RecordError(value[1], path=locator, line=value[2]))
            continue
        doc = docs[value]
        assert doc is not None
        if owners[doc.id] != locator:
            visible[value] = None
            message = f"id {doc.id!r} is already used by {owners[doc.id]}"
            skipped.append(RecordError(message, path=locator))
    return InvertedIndex(inverted.terms, inverted.postings, visible), skipped


def _superseded(inverted: InvertedIndex) -> tuple[InvertedIndex, dict[str, list[str]]]:
    """The index with superseded records marked so, and who supersedes each (SPEC.md §11).

    A record named in the ``supersedes`` list of a record whose own status is
    active is superseded, whatever its own file says: the old file is never
    edited, so two branches cannot conflict over it.
    """
    superseded_by = superseders(doc for doc in inverted.docs if doc is not None)
    return _marked(inverted, superseded_by), superseded_by


def _marked(inverted: InvertedIndex, superseded_by: dict[str, list[str]]) -> InvertedIndex:
    """The index with the records ``superseded_by`` names marked superseded."""
    if not superseded_by:
        return inverted
    docs = [
        doc._replace(status="superseded") if doc is not None and doc.id in superseded_by else doc
        for doc in inverted.docs
    ]
    return InvertedIndex(inverted.terms, inverted.postings, docs)
