"""What one store file gives the index and the hook: a plain value, computed or cached.

A record file's value is the tuple of its :class:`~reliora_git.search.rank.IndexedRecord`
(or why it is skipped); a feedback file's, its record id and outcome. Values are a
pure function of a file's locator and text, so they can be cached by file identity
(cache.py) and computed in worker processes (parallel.py); what depends on other
files (id clashes, feedback sums) is derived from them on every command.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackSummary
from reliora_git.search.rank import IndexedRecord, feedback_summary, index_record
from reliora_git.storage.cache import Value
from reliora_git.storage.cache import paused_gc as paused_gc  # where callers find it
from reliora_git.storage.catalog import Entry
from reliora_git.storage.store import ScannedFile

#: Turns a file's locator and text into the value cached for it.
Compute = Callable[[str, str], Value]
#: The texts of files read from elsewhere than the working tree (gitfiles.GitFiles.texts).
ReadTexts = Callable[[list[ScannedFile]], "list[str | RecordError]"]
#: A record's value is the tuple of its IndexedRecord; an error's is (marker, message, line).
_DOC_LENGTH = len(IndexedRecord._fields)
_new_tuple = tuple.__new__
_TEXT = IndexedRecord._fields.index("text")


def feedback_from_values(values: list[Value]) -> dict[str, FeedbackSummary]:
    """Feedback summaries by record id from :func:`event_value` values (errors count nothing)."""
    outcomes: dict[str, list[str]] = defaultdict(list)
    for value in values:
        if value[0] == "ok":
            outcomes[value[1]].append(value[2])
    return {rid: feedback_summary(found) for rid, found in outcomes.items()}


def shared(value: Value, locator: str) -> Value:
    """A value with its repeated strings shared, as :func:`indexed_value` makes them.

    A value that comes back from a worker process (parallel.py) was unpickled: its
    tags, status and confidence are no longer the interned objects, nor its locator
    the walk's own. marshal writes an object shared by many values once, so without
    this the cache (and a search's memory) grew by 6% at 100,000 records.
    """
    if value[0] == "doc":  # an indexed_value
        doc, as_json, problems, terms = value[1:]
        return ("doc", shared(doc, locator), as_json, _shared_problems(problems), terms)
    if value[0] == "error" and len(value) == 5:  # an indexed_value
        return ("error", *value[1:4], _shared_problems(value[4]))
    if len(value) != _DOC_LENGTH:
        return (sys.intern(value[0]), *value[1:])  # an error's or an event's marker
    doc = _new_tuple(IndexedRecord, value)
    return tuple(
        doc._replace(
            locator=locator,  # the same text: a value is computed for its file's locator
            tags=tuple(sys.intern(tag) for tag in doc.tags),
            status=sys.intern(doc.status),
            confidence=None if doc.confidence is None else sys.intern(doc.confidence),
        )
    )


def _shared_problems(problems: tuple[tuple[str, str, int | None], ...]) -> tuple[Any, ...]:
    return tuple((sys.intern(severity), message, line) for severity, message, line in problems)


def indexed_value(locator: str, text: str) -> Value:
    """What the store index keeps of one record file (see index.py).

    ``("doc", IndexedRecord tuple, record as JSON, problems, terms)`` for a usable
    record, else ``("error", message, line, claimed id or None, problems)``;
    ``problems`` are what ``check`` reports for the file itself, as (severity,
    message, line) triples, and ``terms`` the record's tokens with their components
    (inverted.record_terms): computed here, in the worker processes of a cold start.
    """
    from reliora_git.records.credentials import masked_record
    from reliora_git.search.inverted import record_terms
    from reliora_git.search.jsonio import record_to_json
    from reliora_git.storage.catalog import read_entry

    entry = read_entry(locator, text)
    problems = entry_problems(entry)
    if entry.usable and entry.record is not None:
        doc = shared(tuple(index_record(entry.record)), locator)
        terms = record_terms(doc[_TEXT])
        # Every read shows the record as JSON: a secret in it is masked once, here.
        return ("doc", doc, masked_record(record_to_json(entry.record)), problems, terms)
    error = entry.first_error()
    claimed = entry.record.id if entry.record is not None and entry.record.id else None
    return ("error", error.message, error.line, claimed, problems)


#: A record's segment value: its field strings joined, its JSON as one line (or, when that
#: line would not read back as the very same value, the JSON itself), and its ``created``.
SegmentValue = tuple[str, "str | dict[str, Any]", str]


def segment_value(text: str, as_json: dict[str, Any]) -> SegmentValue:
    """What a segment keeps of a record (segments.py): ``list --json`` prints the line as it
    is, and every other reader loads it."""
    import json

    line = json.dumps(as_json, ensure_ascii=False)
    # Equal only when the JSON reads back as it was (a tuple would come back a list).
    kept: str | dict[str, Any] = line if json.loads(line) == as_json else as_json
    created = as_json.get("created")
    return text, kept, created if isinstance(created, str) else ""


def entry_problems(entry: Entry) -> tuple[tuple[str, str, int | None], ...]:
    """What ``check`` reports of one file by itself: its read error first, then its problems."""
    found = [] if entry.error is None else [("error", entry.error.message, entry.error.line)]
    found.extend((p.severity, p.message, p.line) for p in entry.problems)
    return tuple(found)


def error_value(error: RelioraError) -> Value:
    return ("error", error.message, error.line)


def event_value(locator: str, text: str) -> Value:
    from reliora_git.records.feedback import parse_event

    try:
        event = parse_event(text, locator)
    except RecordError as exc:
        return error_value(exc)
    return ("ok", event.record, event.outcome)
