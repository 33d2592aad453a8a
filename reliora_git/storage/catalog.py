"""The store as it is on disk right now: every record file read, parsed and validated.

This is the one place that turns files into records for search, show, list and
check, so a malformed file is handled the same way everywhere: it is kept as
an entry with an error, skipped by search, and reported by check.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackEvent, FeedbackSummary, Problem, Record
from reliora_git.records.validate import validate
from reliora_git.search.rank import IndexedRecord, feedback_summary, index_record
from reliora_git.storage.store import Store, read_text, walk_markdown


@dataclass
class Entry:
    """One file under ``experiences/``: a record, or the reason it is not one."""

    locator: str
    record: Record | None = None
    problems: list[Problem] = field(default_factory=list)
    error: RecordError | None = None

    @property
    def usable(self) -> bool:
        return self.record is not None and not any(p.severity == "error" for p in self.problems)

    def first_error(self) -> RelioraError:
        if self.error is not None:
            return self.error
        problem = next(p for p in self.problems if p.severity == "error")
        return RecordError(problem.message, path=self.locator, line=problem.line)


def read_entry(locator: str, text: str) -> Entry:
    """Parse and validate one record's text (the staged-blob path of the hook uses this too)."""
    # Imported here: PyYAML costs more than a cached search (see index.py).
    from reliora_git.records.parse import parse_record

    try:
        parsed = parse_record(text, locator)
    except RecordError as exc:
        return Entry(locator, error=exc)
    return Entry(
        locator, parsed.record, parsed.problems + validate(parsed.record, parsed.key_lines)
    )


def choose_id_owners(claims: Iterable[tuple[str, str]], experiences: str) -> dict[str, str]:
    """Id → the locator that owns it, from (id, locator) claims in path order.

    The file at ``<experiences>/<id>.md`` wins, else the first in path order: a file
    added later cannot take over an existing id (and its feedback) just by sorting
    first, e.g. ``experiences/0000.md`` claiming the id of a trusted record.
    """
    owners: dict[str, str] = {}
    for record_id, locator in claims:
        if record_id not in owners or locator == f"{experiences}/{record_id}.md":
            owners[record_id] = locator
    return owners


@dataclass
class Catalog:
    store: Store
    entries: list[Entry]
    events: dict[str, list[FeedbackEvent]]
    #: Feedback files that could not be read (they count for nothing).
    feedback_errors: list[RecordError]

    def id_owners(self) -> dict[str, str]:
        """Id → locator of the usable file that holds it (see :func:`choose_id_owners`)."""
        claims = [
            (entry.record.id, entry.locator)
            for entry in self.entries
            if entry.usable and entry.record is not None
        ]
        return choose_id_owners(claims, self.store.locator(self.store.experiences))

    @property
    def records(self) -> list[Record]:
        """Usable records with a unique id (see :meth:`id_owners` for who wins a clash)."""
        owners = self.id_owners()
        return [
            entry.record
            for entry in self.entries
            if entry.usable
            and entry.record is not None
            and owners[entry.record.id] == entry.locator
        ]

    def skipped(self) -> list[RelioraError]:
        """One error per entry that search leaves out, in path order."""
        skipped: list[RelioraError] = []
        owners = self.id_owners()
        for entry in self.entries:
            if not entry.usable:
                skipped.append(entry.first_error())
            elif entry.record is not None and owners[entry.record.id] != entry.locator:
                skipped.append(
                    RecordError(
                        f"id {entry.record.id!r} is already used by {owners[entry.record.id]}",
                        path=entry.locator,
                    )
                )
        return skipped

    def feedback(self) -> dict[str, FeedbackSummary]:
        return {
            rid: feedback_summary(e.outcome for e in events) for rid, events in self.events.items()
        }

    def indexed(self) -> list[IndexedRecord]:
        return [index_record(record) for record in self.records]


#: A file's text, or why it could not be read (a symlink, too large, not UTF-8…).
TextOrError = tuple[str, str | RecordError]


def load_catalog(store: Store) -> Catalog:
    """The store as the working tree holds it."""
    return catalog_from_texts(
        store, _disk_texts(store, store.experiences), _disk_texts(store, store.feedback)
    )


def _disk_texts(store: Store, folder: Path) -> Iterator[TextOrError]:
    for file in walk_markdown(store, folder):
        try:
            yield file.locator, read_text(file)
        except RecordError as exc:
            yield file.locator, exc


def catalog_from_texts(
    store: Store, records: Iterable[TextOrError], events: Iterable[TextOrError]
) -> Catalog:
    """A catalog of texts from the working tree, the git index or a commit.

    ``records`` and ``events`` are (locator, text or read error) pairs in path order.
    """
    from reliora_git.records.feedback import parse_event  # PyYAML, as in read_entry

    entries = [
        Entry(locator, error=text) if isinstance(text, RecordError) else read_entry(locator, text)
        for locator, text in records
    ]
    grouped: dict[str, list[FeedbackEvent]] = defaultdict(list)
    errors: list[RecordError] = []
    for locator, text in events:
        try:
            if isinstance(text, RecordError):
                raise text
            event = parse_event(text, locator)
        except RecordError as exc:
            errors.append(exc)
            continue
        grouped[event.record].append(event)
    return Catalog(store, entries, dict(grouped), errors)
