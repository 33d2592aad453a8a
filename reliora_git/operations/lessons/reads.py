"""Reading lessons: ``search``, ``show`` and ``list`` as plain functions (CLI and MCP alike).

``search`` is on the hot path of every agent task, so this module imports only
what it needs, and nothing that writes.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackEvent, FeedbackSummary, Record
from reliora_git.search.inverted import suggest_for
from reliora_git.search.rank import ContextFilter, Hit, Query
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import (
    FileEntry,
    Store,
    check_id,
    read_text,
)
from reliora_git.storage.values import paused_gc

if TYPE_CHECKING:
    from reliora_git.operations.freshness import Freshness, History

# --- search ----------------------------------------------------------------------------------


@dataclass
class SearchResult:
    query: Query
    context: ContextFilter | None
    hits: list[Hit]
    skipped: list[RelioraError]
    #: Query tokens that match nothing in the store → up to three close terms that do.
    suggestions: dict[str, list[str]] = field(default_factory=dict)
    #: Store folders that are symbolic links, not read (also at the head of ``skipped``).
    warnings: list[RelioraError] = field(default_factory=list)
    #: Record id → the active records that supersede it.
    superseded_by: dict[str, list[str]] = field(default_factory=dict)
    #: The index searched, for what the shown results need next (their freshness).
    index: StoreIndex | None = None
    #: When filters left nothing: how many results each level has without them.
    outside_filters: dict[str, int] = field(default_factory=dict)
    min_level: str | None = None
    #: Retired or superseded records that also match, left out (without --include-retired).
    retired_matches: int = 0

    def document(self, shown: int, freshness: dict[str, Freshness]) -> dict[str, Any]:
        """The ``search --json`` document of the first ``shown`` results (and MCP's)."""
        from reliora_git.search.jsonio import search_document

        return search_document(
            self.query,
            self.context,
            self.hits,
            shown,
            self.suggestions,
            self.warnings,
            self.superseded_by,
            freshness,
            self.outside_filters,
            self.summaries(shown),
            self.retired_matches,
            self.matched_terms(shown),
        )

    def summaries(self, shown: int) -> dict[str, str]:
        """Record id → summary of the first ``shown`` results, from the index's record JSON."""
        from reliora_git.records.summary import summary_of

        assert self.index is not None
        found: dict[str, str] = {}
        for hit in self.hits[:shown]:
            slot = self.index.slot_of(hit.doc.id)
            found[hit.doc.id] = "" if slot is None else summary_of(self.index.record_json(slot))
        return found

    def matched_terms(self, shown: int) -> dict[str, dict[str, list[str]]]:
        """Record id → each matched query token → the record's words it matched (§4's prefix
        rule: ``modulenotfounderror`` → ``module``), for the first ``shown`` results."""
        from reliora_git.search.rank import matched_terms, search_part

        assert self.index is not None
        found: dict[str, dict[str, list[str]]] = {}
        for hit in self.hits[:shown]:
            slot = self.index.slot_of(hit.doc.id)
            text = "" if slot is None else self.index.text_of(slot)
            found[hit.doc.id] = matched_terms(search_part(text), hit.matched_tokens)
        return found

    def shown_freshness(self, store: Store, shown: int) -> dict[str, Freshness]:
        """The freshness of the results shown, from git history (SPEC.md §12)."""
        assert self.index is not None
        return freshness_of(store, self.index, [hit.doc.id for hit in self.hits[:shown]])


def search(
    store: Store,
    text: str,
    *,
    project_context: str | None = None,
    min_level: str | None = None,
    include_retired: bool = False,
    index: StoreIndex | None = None,
) -> SearchResult:
    """Every result for ``text`` (the caller applies its limit; ``total`` counts them all).

    ``index`` is the store's index when the caller has just opened it (the MCP server).
    """
    query = Query.parse(text)
    context = ContextFilter.parse(project_context) if project_context else None
    index = index or open_index(store)
    with paused_gc():  # a common word makes tens of thousands of Hits: see paused_gc
        # Retired and superseded records are ranked too, then counted out: people are
        # told that some match (--include-retired), in the same pass.
        hits = index.rank(query, context=context, include_retired=True, min_level=min_level)
    retired = 0
    if not include_retired:
        matched = len(hits)
        hits = [hit for hit in hits if hit.doc.is_active]
        retired = matched - len(hits)
    suggestions = suggest_for(index.inverted, query.token_texts)
    outside: dict[str, int] = {}
    if not hits and (min_level is not None or context is not None):
        # Say what exists just outside the filters, so that "nothing" is not misread.
        for hit in index.rank(query, include_retired=include_retired):
            outside[hit.level] = outside.get(hit.level, 0) + 1
    return SearchResult(
        query,
        context,
        hits,
        index.skipped,
        suggestions,
        index.folder_errors,
        index.superseded_by,
        index,
        outside,
        min_level,
        retired,
    )


def freshness_of(store: Store, index: StoreIndex, ids: list[str]) -> dict[str, Freshness]:
    """The freshness (SPEC.md §12) of the records ``ids``, from git history."""
    from reliora_git.operations.freshness import Subject, freshness, freshness_events

    events = freshness_events(index.event_locators, index.event_values, set(ids))
    subjects = []
    for record_id in ids:
        slot = index.slot_of(record_id)
        if slot is None:
            continue
        data = index.record_json(slot)
        paths = tuple(p for p in data.get("paths") or [] if isinstance(p, str))
        subjects.append(Subject(record_id, data["locator"], paths, events.get(record_id, ())))
    return freshness(store, subjects)


# --- show / list -----------------------------------------------------------------------------


@dataclass
class Shown:
    record: Record
    feedback: FeedbackSummary
    #: Its feedback events, in path order.
    events: list[FeedbackEvent]
    #: Store folders that are symbolic links, not read.
    warnings: list[RelioraError] = field(default_factory=list)
    #: The active records that supersede this one (its status is then "superseded").
    superseded_by: list[str] = field(default_factory=list)
    freshness: Freshness | None = None
    #: Provenance from git history (None outside git or before the first commit).
    history: History | None = None

    def document(self) -> dict[str, Any]:
        """The ``show --json`` document (and the MCP ``show`` tool's)."""
        from reliora_git.search.jsonio import event_to_json, show_document

        events = [event_to_json(e) for e in self.events]
        document = show_document(self.record, self.feedback, events, self.superseded_by)
        document["freshness"] = self.freshness.to_json() if self.freshness else None
        document["history"] = self.history.to_json() if self.history else None
        reason = self.record.extra_meta.get("retired_reason")
        if self.record.status != "active" and isinstance(reason, str) and reason.strip():
            document["retiredReason"] = reason
        if self.warnings:
            document["warnings"] = [error.to_json()["error"] for error in self.warnings]
        return document


def show(store: Store, id_or_prefix: str, index: StoreIndex | None = None) -> Shown:
    """One record read from its file, with its feedback; only its own files are parsed."""
    from reliora_git.records.feedback import parse_event
    from reliora_git.storage.catalog import read_entry

    check_id(id_or_prefix)  # before the store is read at all
    index = index or open_index(store)
    try:
        slot = index.resolve(id_or_prefix)
    except RelioraError as exc:
        if index.folder_errors:  # the likely reason: say it
            raise RelioraError(f"{exc.message}; {index.folder_errors[0]}", code=exc.code) from None
        raise
    record_id, locator = index.identity(slot)
    entry = read_entry(locator, _read_file(store, locator))
    if not entry.usable or entry.record is None:
        raise entry.first_error()  # changed since the walk, a moment ago
    from reliora_git.records.credentials import mask_record

    mask_record(entry.record)  # shown, never a secret it holds (check reports the file)
    events = []
    for event_locator in index.event_locators_of(record_id):
        try:
            events.append(parse_event(_read_file(store, event_locator), event_locator))
        except RecordError:
            continue  # changed since the walk: it counts for nothing, as in search
    summary = index.feedback.get(record_id) or FeedbackSummary()
    superseded_by = index.superseded_by.get(record_id, [])
    if superseded_by:
        entry.record.status = "superseded"  # derived, whatever the file says (SPEC.md §11)
    from reliora_git.operations.freshness import Subject, freshness, freshness_events, history_of

    paths = tuple(entry.record.paths)
    read = freshness_events(index.event_locators, index.event_values, {record_id})
    subject = Subject(record_id, locator, paths, read.get(record_id, ()))
    fresh = freshness(store, [subject])[record_id]
    history = history_of(store, locator)
    return Shown(entry.record, summary, events, index.folder_errors, superseded_by, fresh, history)


def _read_file(store: Store, locator: str) -> str:
    """The text of one store file, checked as the walk checks it (no link, no folder)."""
    path = store.root.joinpath(*locator.split("/"))
    try:
        info = path.lstat()
    except OSError:
        raise RelioraError("is gone", path=locator, code="not_found") from None
    unreadable = None if stat.S_ISREG(info.st_mode) else "is not a regular file"
    return read_text(FileEntry(locator, path, info.st_size, info.st_mtime_ns, unreadable))


@dataclass
class Listing:
    #: Records as JSON (``list --json`` items), newest first.
    records: list[dict[str, Any]]
    skipped: list[RelioraError]


def list_records(store: Store, tag: str | None = None) -> Listing:
    """Records newest first (created, then id); ``tag`` filters case-insensitively."""
    index = open_index(store)
    records = [_listed(index, slot) for slot in _tagged(index, tag)]
    records.sort(key=lambda r: r["id"])
    records.sort(key=lambda r: r["created"] or "", reverse=True)
    return Listing(records, index.skipped)


@dataclass
class ListedLines:
    #: Each record of ``list --json`` as one line of JSON, newest first.
    lines: list[str]
    skipped: list[RelioraError]


def list_lines(store: Store, tag: str | None = None) -> ListedLines:
    """:func:`list_records` as lines of JSON, streamed from the record table and the segments
    (each record's line is kept there as it is printed): no record is decoded, nor ranked."""
    import json

    index = open_index(store)
    slots = _tagged(index, tag)
    docs = None if tag is None else index.inverted.docs  # decoded for the tags already
    ids = index.table.ids if docs is None else [docs[s].id for s in slots]  # type: ignore[union-attr]
    found = index.record_lines(slots)
    rows = [(record_id, *line) for record_id, line in zip(ids, found, strict=True)]
    rows.sort(key=lambda row: row[0])
    rows.sort(key=lambda row: row[2], reverse=True)
    lines: list[str] = []
    for record_id, line, _ in rows:
        superseded_by = index.superseded_by.get(record_id, [])
        if superseded_by:  # derived, whatever the file says (see _listed)
            data = dict(json.loads(line))
            data["status"] = "superseded"
            data["supersededBy"] = list(superseded_by)
            lines.append(json.dumps(data, ensure_ascii=False))
        else:  # the same text json.dumps gives the record with "supersededBy": [] added
            lines.append(f'{line[:-1]}, "supersededBy": []}}')
    return ListedLines(lines, index.skipped)


def _tagged(index: StoreIndex, tag: str | None) -> list[int]:
    """The live records' slots in path order; ``tag`` keeps those with it (any case)."""
    slots = index.slots()
    if tag is None:
        return slots
    docs = index.inverted.docs
    wanted = tag.casefold()
    return [s for s in slots if any(t.casefold() == wanted for t in docs[s].tags)]  # type: ignore[union-attr]


def _listed(index: StoreIndex, slot: int) -> dict[str, Any]:
    """A ``list --json`` item: the record with its derived status, as ``show --json`` has it.

    A record that an active one supersedes is ``superseded`` whatever its file says
    (SPEC.md §11), and ``supersededBy`` names who; never shown as if it were active.
    """
    doc = index.inverted.docs[slot]
    assert doc is not None
    data = dict(index.record_json(slot))  # a copy: the index keeps its own
    superseded_by = index.superseded_by.get(doc.id, [])
    if superseded_by:
        data["status"] = "superseded"
    data["supersededBy"] = list(superseded_by)
    return data


# --- record / feedback -----------------------------------------------------------------------
