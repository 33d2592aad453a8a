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

from reliora_git.cache import FileCache, Section, Value, cache_file
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
    lookup = cache.section(RECORDS)
    for file in scan_markdown(store, store.experiences):
        # The cache hit is inlined: this loop runs once per record on every search.
        found = lookup.old.get(file.locator)
        if (
            found is not None
            and found[0] == file.size
            and found[1] == file.mtime_ns
            and file.unreadable is None
        ):
            lookup.kept[file.locator] = found
            value = found[2]
        else:
            value = _read(lookup, file, _record_value)
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
    lookup = cache.section(EVENTS)
    for file in scan_markdown(store, store.feedback):
        value = _cached(lookup, file, _event_value)
        if value[0] == "ok":
            outcomes[value[1]].append(value[2])
    return {rid: feedback_summary(found) for rid, found in outcomes.items()}


def _cached(lookup: Section, file: ScannedFile, compute: _Compute) -> Value:
    value = None if file.unreadable else lookup.get(file.locator, file.size, file.mtime_ns)
    return value if value is not None else _read(lookup, file, compute)


def _read(lookup: Section, file: ScannedFile, compute: _Compute) -> Value:
    """The value of ``file`` read from disk now (and cached when it can be)."""
    try:
        text = read_text(file.entry())
    except RecordError as exc:
        # Not cached: cheap to find again (a symlink, a size), and an I/O error may pass.
        return ("error", exc.message, exc.line)
    value = compute(file.locator, text)
    lookup.put(file.locator, file.size, file.mtime_ns, value)
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
