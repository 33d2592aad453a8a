"""What a search needs of the store, from the files as they are now, through the cache.

:func:`load_index` gives exactly what :class:`~reliora_git.catalog.Catalog` gives a
search — ``indexed()``, ``feedback()`` and ``skipped()`` — without building a
:class:`~reliora_git.model.Record` per file: a file whose size and mtime match the
cache is not read, and PyYAML is not even imported when every file is cached. A
file that is read goes through the same functions as the catalog (``read_text``,
``read_entry``, ``parse_event``), so a cached and an uncached run agree by
construction; tests compare the two.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from reliora_git.cache import FileCache, Value, cache_file
from reliora_git.errors import RecordError, RelioraError
from reliora_git.model import FeedbackSummary
from reliora_git.rank import IndexedRecord, feedback_summary, index_record
from reliora_git.store import ScannedFile, Store, read_text, scan_markdown

RECORDS = "experiences"
EVENTS = "feedback"
#: Turns a file's locator and text into the value cached for it.
_Compute = Callable[[str, str], Value]


@dataclass
class SearchIndex:
    #: Usable records with a unique id, in path order (the first file wins an id clash).
    docs: list[IndexedRecord]
    feedback: dict[str, FeedbackSummary]
    #: One error per record file that search leaves out, in path order.
    skipped: list[RelioraError]


def load_index(store: Store) -> SearchIndex:
    cache = FileCache(cache_file(store.root.resolve()))
    docs, skipped = _records(store, cache)
    feedback = _feedback(store, cache)
    cache.save()
    return SearchIndex(docs, feedback, skipped)


def _records(store: Store, cache: FileCache) -> tuple[list[IndexedRecord], list[RelioraError]]:
    docs: list[IndexedRecord] = []
    skipped: list[RelioraError] = []
    owners: dict[str, str] = {}
    for file in scan_markdown(store, store.experiences):
        value = _cached(cache, RECORDS, file, _record_value)
        if value[0] != "ok":
            skipped.append(RecordError(value[1], path=file.locator, line=value[2]))
            continue
        _, rid, title, tags, status, confidence, text, fingerprint = value
        owner = owners.get(rid)
        if owner is not None:
            skipped.append(RecordError(f"id {rid!r} is already used by {owner}", path=file.locator))
            continue
        owners[rid] = file.locator
        docs.append(
            IndexedRecord(rid, title, file.locator, tags, status, confidence, text, fingerprint)
        )
    return docs, skipped


def _feedback(store: Store, cache: FileCache) -> dict[str, FeedbackSummary]:
    outcomes: dict[str, list[str]] = defaultdict(list)
    for file in scan_markdown(store, store.feedback):
        value = _cached(cache, EVENTS, file, _event_value)
        if value[0] == "ok":
            outcomes[value[1]].append(value[2])
    return {rid: feedback_summary(found) for rid, found in outcomes.items()}


def _cached(cache: FileCache, section: str, file: ScannedFile, compute: _Compute) -> Value:
    if file.unreadable is None:
        value = cache.get(section, file.locator, file.size, file.mtime_ns)
        if value is not None:
            return value
    try:
        text = read_text(file.entry())
    except RecordError as exc:
        # Not cached: these are cheap to find again, and an I/O error may be passing.
        return ("error", exc.message, exc.line)
    value = compute(file.locator, text)
    cache.put(section, file.locator, file.size, file.mtime_ns, value)
    return value


def _record_value(locator: str, text: str) -> Value:
    # Imported here: parsing pulls in PyYAML, which a fully cached search never needs.
    from reliora_git.catalog import read_entry

    entry = read_entry(locator, text)
    if not entry.usable or entry.record is None:
        error = entry.first_error()
        return ("error", error.message, error.line)
    doc = index_record(entry.record)
    return (
        "ok",
        doc.id,
        doc.title,
        doc.tags,
        doc.status,
        doc.confidence,
        doc.text,
        doc.fingerprint,
    )


def _event_value(locator: str, text: str) -> Value:
    from reliora_git.feedback import parse_event

    try:
        event = parse_event(text, locator)
    except RecordError as exc:
        return ("error", exc.message, exc.line)
    return ("ok", event.record, event.outcome)
