"""The Python API under the CLI (and the MCP server): each command as a plain function.

``search`` is on the hot path of every agent task, so this module imports only
what it needs: the writers import git, PyYAML (parse, feedback) where they run.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import OUTCOMES, FeedbackEvent, FeedbackSummary, Record
from reliora_git.records.validate import validate
from reliora_git.search.duplicates import (
    SimilarityWarning,
    find_similar,
)
from reliora_git.search.inverted import suggest_for
from reliora_git.search.rank import ContextFilter, Hit, Query
from reliora_git.storage.config import load_config
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import (
    MAX_RECORD_BYTES,
    FileEntry,
    Store,
    check_id,
    decode_utf8,
    new_id,
    read_text,
    write_new,
)
from reliora_git.storage.values import paused_gc

if TYPE_CHECKING:
    from reliora_git.operations.history import Freshness, History
    from reliora_git.operations.paths import PathWarning

#: Fresh random names tried when a concurrent writer took the same one (chance ~1e-7 each).
_NAME_ATTEMPTS = 5

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
        from reliora_git.search.rank import matched_terms

        assert self.index is not None
        found: dict[str, dict[str, list[str]]] = {}
        for hit in self.hits[:shown]:
            slot = self.index.slot_of(hit.doc.id)
            text = "" if slot is None else self.index.text_of(slot)
            found[hit.doc.id] = matched_terms(text, hit.matched_tokens)
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
    from reliora_git.operations.history import Subject, freshness, freshness_events

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
    doc = index.inverted.docs[slot]
    assert doc is not None
    entry = read_entry(doc.locator, _read_file(store, doc.locator))
    if not entry.usable or entry.record is None:
        raise entry.first_error()  # changed since the walk, a moment ago
    events = []
    for locator in index.event_locators_of(doc.id):
        try:
            events.append(parse_event(_read_file(store, locator), locator))
        except RecordError:
            continue  # changed since the walk: it counts for nothing, as in search
    summary = index.feedback.get(doc.id) or FeedbackSummary()
    superseded_by = index.superseded_by.get(doc.id, [])
    if superseded_by:
        entry.record.status = "superseded"  # derived, whatever the file says (SPEC.md §11)
    from reliora_git.operations.history import Subject, freshness, freshness_events, history_of

    paths = tuple(entry.record.paths)
    read = freshness_events(index.event_locators, index.event_values, {doc.id})
    subject = Subject(doc.id, doc.locator, paths, read.get(doc.id, ()))
    fresh = freshness(store, [subject])[doc.id]
    history = history_of(store, doc.locator)
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
    docs = index.inverted.docs
    slots = index.slots()
    if tag is not None:
        wanted = tag.casefold()
        slots = [s for s in slots if any(t.casefold() == wanted for t in docs[s].tags)]  # type: ignore[union-attr]
    records = [index.record_json(slot) for slot in slots]
    records.sort(key=lambda r: r["id"])
    records.sort(key=lambda r: r["created"] or "", reverse=True)
    return Listing(records, index.skipped)


# --- record / feedback -----------------------------------------------------------------------


@dataclass
class Saved:
    record: Record
    warnings: list[SimilarityWarning] = field(default_factory=list)
    #: Paths saved although the work tree has no such file or folder.
    path_warnings: list[PathWarning] = field(default_factory=list)

    def warnings_json(self) -> list[dict[str, Any]]:
        """``record --json``'s warnings (and MCP's): paths first, then similar records."""
        return [w.to_json() for w in self.path_warnings] + [w.to_json() for w in self.warnings]


def prepare(store: Store, new: Record) -> Record:
    """Give ``new`` an id, date, status and author where it has none, then validate it.

    Its fields are made what the store keeps (records/roundtrip.py: ends trimmed).
    """
    from reliora_git.gitrepo import git
    from reliora_git.records.roundtrip import normalize

    new.id = new.id or new_id(new.title)
    new.created = new.created or _utc_now().date().isoformat()
    new.status = new.status or "active"
    if new.author is None:
        new.author = git.user_name(store.root)
    normalize(new)
    validate_new(new)
    return new


def record(
    store: Store,
    new: Record,
    *,
    stage: bool = False,
    index: StoreIndex | None = None,
    allow_secrets: Iterable[str] = (),
    allow_existing: bool = False,
) -> Saved:
    """Save ``new`` (see :func:`prepare`) and return the existing records it resembles.

    A record holding a secret is refused (:class:`~reliora_git.records.credentials.SecretFound`)
    unless its kind is in ``allow_secrets`` (``record --allow-secret KIND``).
    """
    from reliora_git.gitrepo import git
    from reliora_git.operations.paths import saved_paths
    from reliora_git.records.parse import render_record

    generated_id = not new.id
    # Paths as `about` reads them (./x, x//y, absolute in the work tree → top-relative).
    new.paths, path_warnings = saved_paths(store, new.paths)
    prepare(store, new)
    refuse_secrets(store, new, allow_secrets)
    if new.guards and not allow_existing:  # guards.py: a guard that already matches the code
        from reliora_git.operations.guards import refuse_existing

        refuse_existing(store, new)
    index = index or open_index(store)
    if index.has_id(new.id):
        raise RelioraError(f"an experience with id {new.id!r} already exists", code="exists")
    if new.supersedes:  # prefixes to full ids, like every command that takes an id
        from reliora_git.operations.targets import resolve_supersedes

        new.supersedes = resolve_supersedes(index, new.supersedes, new.id)
    path = store.experiences / f"{new.id}.md"
    new.locator = store.locator(path)
    text = render_record(new)
    check_reads_back(text, new.locator, new)
    threshold = load_config(store).duplicate_overlap
    # The records it replaces are meant to be like it: no duplicate warning about them.
    warnings = [
        warning
        for warning in find_similar(new, index, duplicate_overlap=threshold)
        if warning.id not in new.supersedes
    ]
    for attempt in range(_NAME_ATTEMPTS):
        try:
            write_new(path, text, store)
            break
        except RelioraError as exc:
            # A concurrent writer saved the same generated id first: draw another suffix.
            if exc.code != "exists" or not generated_id or attempt == _NAME_ATTEMPTS - 1:
                raise
            new.id = new_id(new.title)
            path = store.experiences / f"{new.id}.md"
            new.locator = store.locator(path)
            text = render_record(new)
            check_reads_back(text, new.locator, new)
    if stage:
        git.stage(store.root, [path])
    return Saved(new, warnings, path_warnings)


def refuse_secrets(
    store: Store, new: Record, allowed: Iterable[str] = (), text: str | None = None
) -> None:
    """Raise SecretFound when anything ``new`` holds is a credential (docs/security.md):
    its fields, unknown keys and sections, preamble, id and file name, and ``text``
    (the file about to be written, when known)."""
    from reliora_git.records.credentials import (
        SecretFound,
        other_record_fields,
        record_fields,
        scan_store_file,
    )
    from reliora_git.search.jsonio import record_to_json

    entropy = load_config(store).secrets_entropy
    fields = record_fields(record_to_json(new)) + other_record_fields(new)
    locator = new.locator or (store.locator(store.experiences / f"{new.id}.md") if new.id else "")
    findings = scan_store_file(locator, text, fields, entropy=entropy, allowed=allowed)
    if findings:
        raise SecretFound(findings)


def refuse_event_secrets(store: Store, event: FeedbackEvent, text: str) -> None:
    """Raise SecretFound when a feedback event about to be written holds a credential
    anywhere: note, author (git's user name), record, file name, text."""
    from reliora_git.records.credentials import SecretFound, event_fields, scan_store_file

    entropy = load_config(store).secrets_entropy
    findings = scan_store_file(event.locator, text, event_fields(event), entropy=entropy)
    if findings:
        raise SecretFound(findings, "the feedback event")


def check_reads_back(text: str, locator: str, intended: Record | None = None) -> None:
    """Refuse to save what the store would then skip or call invalid, or read otherwise.

    The exact bytes about to be written go through the reader ``check`` and
    ``search`` use (size limit, strict UTF-8, parsing, validation): a record that
    saves but never reads back is a lesson the user believes stored and nobody
    will find (e.g. a 2 MB log pasted as the solution). With ``intended`` (the
    record rendered, see records/roundtrip.py) every field must read back as it
    is there: text never moves silently from one field to another.
    """
    from reliora_git.storage.catalog import read_entry
    from reliora_git.storage.values import entry_problems

    data = _within_limit(text, "experience")
    entry = read_entry(locator, decode_utf8(data, locator))
    errors = [message for severity, message, _ in entry_problems(entry) if severity == "error"]
    if errors or not entry.usable:
        reason = errors[0] if errors else entry.first_error().message
        raise RelioraError(
            f"the experience would not read back as a record: {reason}", code="invalid_record"
        )
    if intended is not None and entry.record is not None:
        from reliora_git.records.roundtrip import first_difference

        differs = first_difference(intended, entry.record)
        if differs is not None:
            raise RelioraError(
                f"the field {differs} would not read back as given (a line in it reads as "
                "record structure); nothing was saved",
                code="invalid_record",
            )


def _check_event_reads_back(text: str, locator: str) -> None:
    """The same for a feedback event: its note must not make it unreadable."""
    from reliora_git.storage.values import event_value

    data = _within_limit(text, "feedback event")
    value = event_value(locator, decode_utf8(data, locator))
    if value[0] != "ok":
        raise RelioraError(
            f"the feedback event would not read back: {value[1]}", code="invalid_feedback"
        )


def _within_limit(text: str, what: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) > MAX_RECORD_BYTES:
        raise RelioraError(
            f"the {what} would be {len(data) / 1024:.0f} KiB, over the "
            f"{MAX_RECORD_BYTES // 1024} KiB a store file may have, so it would not read "
            "back; nothing was saved (keep long logs in a file and name it)",
            code="too_large",
        )
    return data


def validate_new(new: Record) -> None:
    """Raise a usage error naming the first thing that keeps ``new`` from being saved."""
    errors = [p for p in validate(new) if p.severity == "error"]
    if errors:
        raise RelioraError(
            f"the experience is not valid: {errors[0].message}", code="invalid_record"
        )


def feedback(
    store: Store,
    id_or_prefix: str,
    outcome: str,
    note: str = "",
    index: StoreIndex | None = None,
) -> FeedbackEvent:
    from reliora_git.gitrepo import git
    from reliora_git.records.feedback import event_file_stem, render_event

    if outcome not in OUTCOMES:
        raise RelioraError(
            f"outcome {outcome!r} must be one of {', '.join(OUTCOMES)}", code="invalid_outcome"
        )
    check_id(id_or_prefix)  # before the store is read at all
    if note:
        from reliora_git.records.credentials import SecretFound, scan_fields

        entropy = load_config(store).secrets_entropy
        findings = scan_fields([("note", note)], entropy=entropy)
        if findings:
            raise SecretFound(findings, "the feedback note")
    index = index or open_index(store)
    target = index.inverted.docs[index.resolve(id_or_prefix)]
    assert target is not None
    author = git.user_name(store.root)
    for attempt in range(_NAME_ATTEMPTS):
        now = _utc_now()
        # target.id passed validation, so this path stays inside feedback/ (and
        # write_new checks that again before it creates anything).
        path = store.feedback / target.id / f"{event_file_stem(now, os.urandom(3).hex())}.md"
        event = FeedbackEvent(
            record=target.id,
            outcome=outcome,
            at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            author=author,
            note=note,
            locator=store.locator(path),
        )
        text = render_event(event)
        refuse_event_secrets(store, event, text)
        _check_event_reads_back(text, event.locator)
        try:
            write_new(path, text, store)
        except RelioraError as exc:
            # Another writer took the same second and random suffix: pick a new name.
            if exc.code != "exists" or attempt == _NAME_ATTEMPTS - 1:
                raise
            continue
        return event
    raise AssertionError("unreachable")


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)
