"""The Python API under the CLI (and the MCP server): each command as a plain function.

``search`` is on the hot path of every agent task, so this module imports only
what it needs: the writers import git, PyYAML (parse, feedback) where they run.
"""

from __future__ import annotations

import datetime as dt
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from reliora_git.catalog import Catalog, Entry, load_catalog
from reliora_git.duplicates import SimilarityWarning, find_similar
from reliora_git.errors import RecordError, RelioraError
from reliora_git.index import load_index, paused_gc
from reliora_git.model import OUTCOMES, FeedbackEvent, FeedbackSummary, Problem, Record
from reliora_git.rank import ContextFilter, Hit, IndexedRecord, Query, index_record, rank
from reliora_git.store import Store, check_id, new_id, write_new
from reliora_git.validate import validate

#: Fresh random names tried when a concurrent writer took the same one (chance ~1e-7 each).
_NAME_ATTEMPTS = 5

# --- search ----------------------------------------------------------------------------------


@dataclass
class SearchResult:
    query: Query
    context: ContextFilter | None
    hits: list[Hit]
    skipped: list[RelioraError]


def search(
    store: Store,
    text: str,
    *,
    project_context: str | None = None,
    min_level: str | None = None,
    include_retired: bool = False,
) -> SearchResult:
    """Every result for ``text`` (the caller applies its limit; ``total`` counts them all)."""
    query = Query.parse(text)
    context = ContextFilter.parse(project_context) if project_context else None
    # The index gives what load_catalog(store) would, through the cache (index.py).
    index = load_index(store)
    with paused_gc():  # a common word makes tens of thousands of Hits: see paused_gc
        hits = rank(
            index.docs,
            query,
            feedback=index.feedback,
            context=context,
            include_retired=include_retired,
            min_level=min_level,
        )
    return SearchResult(query, context, hits, index.skipped)


# --- show / list -----------------------------------------------------------------------------


def resolve(catalog: Catalog, id_or_prefix: str) -> Record:
    """The record whose id is ``id_or_prefix``, or the one record whose id starts with it."""
    check_id(id_or_prefix)
    records = catalog.records
    for record in records:
        if record.id == id_or_prefix:
            return record
    candidates = sorted(r.id for r in records if r.id.startswith(id_or_prefix))
    if len(candidates) == 1:
        return next(r for r in records if r.id == candidates[0])
    if candidates:
        raise RelioraError(
            f"id prefix {id_or_prefix!r} is ambiguous; it matches {', '.join(candidates)}",
            code="ambiguous_id",
        )
    raise RelioraError(f"no experience with id {id_or_prefix!r}", code="unknown_id")


def show(store: Store, id_or_prefix: str) -> tuple[Record, Catalog]:
    check_id(id_or_prefix)  # before the store is read at all
    catalog = load_catalog(store)
    return resolve(catalog, id_or_prefix), catalog


def list_records(store: Store, tag: str | None = None) -> tuple[list[Record], Catalog]:
    """Records newest first (created, then id); ``tag`` filters case-insensitively."""
    catalog = load_catalog(store)
    records = catalog.records
    if tag is not None:
        wanted = tag.casefold()
        records = [r for r in records if any(t.casefold() == wanted for t in r.tags)]
    records.sort(key=lambda r: r.id)
    records.sort(key=lambda r: r.created or "", reverse=True)
    return records, catalog


# --- record / feedback -----------------------------------------------------------------------


@dataclass
class Saved:
    record: Record
    warnings: list[SimilarityWarning] = field(default_factory=list)


def prepare(store: Store, new: Record) -> Record:
    """Give ``new`` an id, date, status and author where it has none, then validate it."""
    from reliora_git import git

    new.id = new.id or new_id(new.title)
    new.created = new.created or _utc_now().date().isoformat()
    new.status = new.status or "active"
    if new.author is None:
        new.author = git.user_name(store.root)
    validate_new(new)
    return new


def record(store: Store, new: Record, *, stage: bool = False) -> Saved:
    """Save ``new`` (see :func:`prepare`) and return the existing records it resembles."""
    from reliora_git import git
    from reliora_git.parse import render_record

    generated_id = not new.id
    prepare(store, new)
    catalog = load_catalog(store)
    if any(r.id == new.id for r in catalog.records):
        raise RelioraError(f"an experience with id {new.id!r} already exists", code="exists")
    path = store.experiences / f"{new.id}.md"
    new.locator = store.locator(path)
    text = render_record(new)
    _check_reads_back(text, new.locator)
    warnings = find_similar(new, catalog.indexed(), catalog.feedback())
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
    if stage:
        git.stage(store.root, [path])
    return Saved(new, warnings)


def _check_reads_back(text: str, locator: str) -> None:
    """Refuse to save text the store would then skip (e.g. a solution line `<<<<<<< x`)."""
    from reliora_git.parse import parse_record

    try:
        parsed = parse_record(text, locator)
    except RecordError as exc:
        raise RelioraError(
            f"the experience would not read back as a record: {exc.message}",
            code="invalid_record",
        ) from None
    errors = [p for p in parsed.problems + validate(parsed.record) if p.severity == "error"]
    if errors:
        raise RelioraError(
            f"the experience would not read back as a record: {errors[0].message}",
            code="invalid_record",
        )


def validate_new(new: Record) -> None:
    """Raise a usage error naming the first thing that keeps ``new`` from being saved."""
    errors = [p for p in validate(new) if p.severity == "error"]
    if errors:
        raise RelioraError(
            f"the experience is not valid: {errors[0].message}", code="invalid_record"
        )


def feedback(store: Store, id_or_prefix: str, outcome: str, note: str = "") -> FeedbackEvent:
    from reliora_git import git
    from reliora_git.feedback import event_file_stem, render_event

    if outcome not in OUTCOMES:
        raise RelioraError(
            f"outcome {outcome!r} must be one of {', '.join(OUTCOMES)}", code="invalid_outcome"
        )
    check_id(id_or_prefix)  # before the store is read at all
    target = resolve(load_catalog(store), id_or_prefix)
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
        try:
            write_new(path, render_event(event), store)
        except RelioraError as exc:
            # Another writer took the same second and random suffix: pick a new name.
            if exc.code != "exists" or attempt == _NAME_ATTEMPTS - 1:
                raise
            continue
        return event
    raise AssertionError("unreachable")


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


# --- check -----------------------------------------------------------------------------------


@dataclass
class FileReport:
    locator: str
    id: str | None
    problems: list[Problem] = field(default_factory=list)
    similar: list[SimilarityWarning] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


@dataclass
class CheckReport:
    checked: int
    files: list[FileReport]

    @property
    def ok(self) -> bool:
        return not any(f.has_errors for f in self.files)


def check(store: Store, paths: list[str] | None = None) -> CheckReport:
    """Validate every record; seek similar records for the files named in ``paths``.

    Lexical similarity is sought only for named files (and staged ones, in the
    hook): over a whole store it would compare every record with every other.
    Exact duplicates (same title, solution and applicability) and id clashes are
    always reported.
    """
    catalog = load_catalog(store)
    named = _named_locators(store, paths) if paths else None
    if named is not None:
        missing = named - {e.locator for e in catalog.entries}
        if missing:
            raise RelioraError(
                f"not a record file under {store.experiences.name}/: {sorted(missing)[0]}",
                code="not_found",
            )
    return check_entries(view_of(catalog), catalog.entries, similar_for=named)


@dataclass(frozen=True)
class StoreView:
    """What judging a record needs of the rest of the store."""

    docs: list[IndexedRecord]
    feedback: dict[str, FeedbackSummary]
    #: Id → the file that owns it; ids of files that are not usable count too.
    owners: dict[str, str]


def view_of(catalog: Catalog) -> StoreView:
    owners = catalog.id_owners()
    for entry in catalog.entries:
        if entry.record is not None and entry.record.id:
            owners.setdefault(entry.record.id, entry.locator)
    return StoreView(catalog.indexed(), catalog.feedback(), owners)


def check_entries(
    view: StoreView, entries: list[Entry], similar_for: set[str] | None
) -> CheckReport:
    """Reports for ``entries`` judged against the store (the hook passes staged entries)."""
    twins: dict[str, list[IndexedRecord]] = defaultdict(list)
    for doc in view.docs:
        twins[doc.fingerprint].append(doc)
    reports = []
    for entry in entries:
        report = FileReport(entry.locator, entry.record.id if entry.record else None)
        if entry.error is not None:
            report.problems.append(Problem("error", entry.error.message, entry.error.line))
        report.problems.extend(entry.problems)
        rec = entry.record
        if rec is not None and rec.id:
            owner = view.owners.get(rec.id)
            if owner is not None and owner != entry.locator:
                report.problems.append(Problem("error", f"id {rec.id!r} is also used by {owner}"))
        if rec is not None and entry.usable:
            # Named files get the full lexical search; the rest only their exact twins.
            pool = (
                view.docs
                if similar_for is not None and entry.locator in similar_for
                else (twins.get(index_record(rec).fingerprint, []))
            )
            report.similar = find_similar(rec, pool, view.feedback)
        if report.problems or report.similar:
            reports.append(report)
    return CheckReport(len(entries), reports)


def _named_locators(store: Store, paths: list[str]) -> set[str]:
    named = set()
    for raw in paths:
        # Resolve the folder, not the file: a symlinked record is named (and reported
        # as a symlink), never swapped for its target outside the store.
        given = Path(raw)
        path = given.parent.resolve() / given.name
        try:
            named.add(store.locator(path))
        except ValueError:
            raise RelioraError(
                f"{raw} is outside the store at {store.root}", code="not_found"
            ) from None
    return named
