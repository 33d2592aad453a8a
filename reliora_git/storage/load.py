"""Stage 2 of the store index: load, each file's value reused from the cache or parsed, once.

A file's value is kept as long as its identity (locator, size, mtime or blob id)
is the one it was computed for, and never for a file modified within
:data:`~reliora_git.storage.cache.RACY_NS` of the walk (it is parsed again next time).
Files that must be parsed are read and parsed in pieces, on every core when there
are many (parallel.py), each record straight into a new slot, its postings and a
new segment, so that a cold start holds neither every text nor every term at once.

What it hands on, :class:`Loaded`, is every file's value and what was parsed now;
the next stage (build.py) merges the new records into the inverted index.
"""

from __future__ import annotations

import functools
import marshal
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliora_git.records.errors import RecordError
from reliora_git.records.stopping import checkpoint
from reliora_git.search.inverted import piece_postings
from reliora_git.search.rank import IndexedRecord
from reliora_git.storage.cache import Section, Value, old_enough
from reliora_git.storage.indexfile import CheckInfo, IndexState
from reliora_git.storage.locate import Located
from reliora_git.storage.parallel import BATCH, mapper
from reliora_git.storage.progress import progress, wanted
from reliora_git.storage.segments import Location, Segments
from reliora_git.storage.store import ScannedFile, Store, read_text
from reliora_git.storage.values import (
    Compute,
    ReadTexts,
    error_value,
    event_value,
    indexed_value,
    segment_value,
    shared,
)

_new_tuple = tuple.__new__


@dataclass
class Loaded:
    """Every file's value, from the cache or parsed now (see the module docstring)."""

    located: Located
    #: The state the values were reused from.
    state: IndexState
    #: Record files (located.records order): a slot, or an error value.
    values: list[Any]
    #: Feedback files (located.events order): ("ok", record id, outcome), or an error value.
    event_values: list[Value]
    #: The cached values that stay valid, and those computed now (the next index file).
    records: Section
    events: Section
    #: False when every record file is as the state holds it (nothing to merge).
    patched: bool = False
    #: Records parsed now: the first of their new slots, how many slots, each piece's
    #: records by slot and its postings (inverted.piece_postings), in order.
    first_slot: int = 0
    reserved: int = 0
    pieces: list[tuple[dict[int, IndexedRecord], dict[str, bytes]]] = field(default_factory=list)
    #: Locator → what check reports for a file with problems.
    checks: dict[str, CheckInfo] | None = None
    #: Segment values of records parsed now: written to the new segment, or kept here.
    locations: dict[int, Location] = field(default_factory=dict)
    fresh: dict[int, bytes] = field(default_factory=dict)
    #: Whether anything was parsed or dropped (the index file is then written again).
    changed: bool = False


def load(located: Located, state: IndexState, segments: Segments) -> Loaded:
    """The value of every located file: reused from ``state`` where valid, else parsed."""
    records = Section((state.files, state.values), located.started_ns)
    values = records.all_valid(located.records)
    events = Section((state.event_files, state.event_values), located.started_ns)
    event_values = events.all_valid(located.events)
    loaded = Loaded(located, state, values or [], event_values or [], records, events)
    if values is None:
        _parse_records(loaded, segments)
    if event_values is None:
        source = located.source
        read = source.texts if source else None
        loaded.event_values = compute_values(
            located.store, events, located.events, event_value, read=read
        )
        loaded.changed = True
    return loaded


def _parse_records(loaded: Loaded, segments: Segments) -> None:
    """Values for the record files: cached ones kept, the others parsed into new slots."""
    loaded.changed = loaded.patched = True
    located, lookup, state = loaded.located, loaded.records, loaded.state
    files = located.records
    values: list[Any] = [None] * len(files)
    missing: list[ScannedFile] = []
    positions: list[int] = []
    for i, file in enumerate(files):
        value = None if file.unreadable else lookup.get(file.locator, file.size, file.mtime_ns)
        if value is None:
            missing.append(file)
            positions.append(i)
        else:
            values[i] = value
    checks = loaded.checks = dict(state.checks)
    first_slot = loaded.first_slot = len(state.inverted.docs)
    loaded.reserved = len(missing)
    items: list[Item] = [
        (first_slot + n, file, old_enough(located.started_ns, file.mtime_ns), None)
        for n, file in enumerate(missing)
    ]
    piece = functools.partial(index_piece, os.fspath(located.store.root))
    # Smaller rounds when a bar is drawn, so that it moves (the pool is started once).
    step = BATCH // 8 if wanted(len(items)) else BATCH
    with (
        mapper(len(items)) as run,
        progress(len(items), "reading records") as done,
        segments.writer() as segment,
    ):
        for start in range(0, len(items), step):
            batch = items[start : start + step]
            if located.source is not None:  # read from git here, in one batch
                texts = located.source.texts([item[1] for item in batch])
                batch = [(*item[:3], text) for item, text in zip(batch, texts, strict=True)]
            for results, part, blobs in run(piece, batch):
                docs: dict[int, IndexedRecord] = {}
                for slot, value, parsed in results:
                    n = slot - first_slot
                    file, cacheable = missing[n], items[n][2] and parsed
                    values[positions[n]] = kept = _kept(file, slot, value, docs, checks)
                    if value[0] == "doc" and not (cacheable and segment.add(slot, blobs[slot])):
                        loaded.fresh[slot] = blobs[slot]  # kept for this command only
                    if cacheable:
                        lookup.put(file.locator, file.size, file.mtime_ns, kept)
                loaded.pieces.append((docs, part))
            done(len(batch))
    loaded.locations = segment.locations
    live = {file.locator for file in files}
    loaded.checks = {loc: info for loc, info in checks.items() if loc in live}
    loaded.values = values


def _kept(
    file: ScannedFile,
    slot: int,
    value: Value,
    docs: dict[int, IndexedRecord],
    checks: dict[str, CheckInfo],
) -> Any:
    """What the index keeps of one parsed file: its slot, or its error value."""
    if value[0] == "doc":
        _, fields, problems = value
        # Shared with the walk and interned, as values parsed here are (values.shared).
        doc = docs[slot] = _new_tuple(IndexedRecord, shared(fields, file.locator))
        result: Any = slot
        claimed: str | None = doc.id
    elif len(value) == 3:  # a read error (error_value): found again next time
        result, claimed, problems = value, None, (("error", value[1], value[2]),)
    else:
        result, claimed, problems = value[:3], value[3], value[4]
    if problems:
        checks[file.locator] = (claimed, value[0] == "doc", problems)
    else:
        checks.pop(file.locator, None)
    return result


#: What :func:`index_piece` gives for a piece of files: each one's (slot, value, parsed),
#: the postings of its records, and each record's segment value, marshalled.
Piece = tuple[list[tuple[int, Value, bool]], dict[str, bytes], dict[int, bytes]]
#: A file to parse: (slot, file, may be cached, its text if already read, or why it cannot be).
Item = tuple[int, ScannedFile, bool, "str | RecordError | None"]


def index_piece(root: str, items: Sequence[Item]) -> Piece:
    """Read, parse and index a piece of record files (in a worker process, on a cold start).

    ``items`` are (slot, file, may be cached, text): a file without its text is read
    from the working tree here, in the worker. A record's value here is ``("doc",
    IndexedRecord tuple without its text, problems)``: its text and JSON travel
    marshalled, ready for a segment, and its terms only as postings.
    """
    store = Store(Path(root))
    results: list[tuple[int, Value, bool]] = []
    terms: list[tuple[int, dict[str, int]]] = []
    blobs: dict[int, bytes] = {}
    for slot, file, _, given in items:
        checkpoint()  # stopping.py: a cold start ends when its caller has gone
        try:
            text = read_text(file.entry(store)) if given is None else given
            if isinstance(text, RecordError):
                raise text
        except RecordError as exc:
            results.append((slot, error_value(exc), False))
            continue
        value = indexed_value(file.locator, text)
        if value[0] == "doc":
            _, fields, as_json, problems, record_terms = value
            doc = _new_tuple(IndexedRecord, fields)
            blobs[slot] = marshal.dumps(segment_value(doc.text, as_json))
            terms.append((slot, record_terms))
            value = ("doc", tuple(doc._replace(text="")), problems)
        results.append((slot, value, True))
    return results, piece_postings(terms), blobs


def compute_values(
    store: Store,
    lookup: Section,
    files: list[ScannedFile],
    compute: Compute,
    label: str = "reading records",
    read: ReadTexts | None = None,
) -> list[Value]:
    """The value of each file: from the cache when it is there, else read and computed now.

    Computed values are cached (when the file is old enough: see cache.RACY_NS).
    """
    values: list[Value | None] = []
    missing: list[ScannedFile] = []
    positions: list[int] = []
    for file in files:
        value = None if file.unreadable else lookup.get(file.locator, file.size, file.mtime_ns)
        if value is None:
            positions.append(len(values))
            missing.append(file)
        values.append(value)
    for batch in _computed_batches(store, missing, compute, label, read):
        for i, value, parsed in batch:
            file = missing[i]
            values[positions[i]] = value
            if parsed:  # a read error is not cached: cheap to find again, and it may pass
                lookup.put(file.locator, file.size, file.mtime_ns, value)
    return [value for value in values if value is not None]  # every None was replaced


def _computed_batches(
    store: Store,
    files: list[ScannedFile],
    compute: Compute,
    label: str,
    read: ReadTexts | None,
) -> Iterator[list[tuple[int, Value, bool]]]:
    """The value of each of ``files`` read and computed now, in batches.

    Each item is (position in ``files``, value, whether the file was read and parsed).
    Files are read and parsed in batches, on several cores when there are many
    (see parallel.py), so that a cold cache does not hold every text at once; a
    file that cannot be read (a symlink, too large, an I/O error) gets its
    :func:`error_value`. A progress bar is drawn for long work (progress.py).
    ``read`` gives the texts of a batch when they are not read from the working tree.
    """
    from reliora_git.storage.parallel import computer  # only when something must be parsed

    # Smaller rounds when a bar is drawn, so that it moves (the pool is started once).
    step = BATCH // 8 if wanted(len(files)) else BATCH
    with computer(compute, len(files)) as compute_all, progress(len(files), label) as done:
        for first in range(0, len(files), step):
            batch: list[tuple[int, Value, bool]] = []
            parsed: list[int] = []
            texts: list[tuple[str, str]] = []
            span = range(first, min(first + step, len(files)))
            given = read([files[i] for i in span]) if read else None
            for n, i in enumerate(span):
                checkpoint()  # stopping.py: a long cold read ends when its caller has gone
                try:
                    text = read_text(files[i].entry(store)) if given is None else given[n]
                    if isinstance(text, RecordError):
                        raise text
                except RecordError as exc:
                    batch.append((i, error_value(exc), False))
                else:
                    texts.append((files[i].locator, text))
                    parsed.append(i)
            for i, value in zip(parsed, compute_all(texts), strict=True):
                batch.append((i, shared(value, files[i].locator), True))
            done(len(batch))
            yield batch
