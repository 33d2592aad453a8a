"""Stage 4 of the store index: answer, the queries every command asks of the store.

:class:`StoreIndex` serves what the build stage (build.py) made: the live records
and their ids, a record's text and JSON (from the segments, segments.py, read one
record at a time), ranking, the pool of records a duplicate search looks in, the
feedback of a record, the secrets found in a record (kept in the index). Each
part is read or derived on first use: ``show`` of one id decodes neither the
postings nor the records, ``list`` no postings (see indexfile.py).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import marshal
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackSummary
from reliora_git.records.stopping import checkpoint
from reliora_git.search.inverted import InvertedIndex
from reliora_git.search.rank import (
    NO_FEEDBACK,
    ContextFilter,
    Hit,
    IndexedRecord,
    Query,
    score_masks,
    search_part,
)
from reliora_git.storage.build import Built
from reliora_git.storage.cache import Value
from reliora_git.storage.indexfile import CheckInfo, IndexState, RecordTable
from reliora_git.storage.segments import Location, Segments
from reliora_git.storage.store import FileEntry, ScannedFile, Store, check_id, read_text
from reliora_git.storage.values import SegmentValue, indexed_value, segment_value

if TYPE_CHECKING:
    from reliora_git.records.credentials import Finding
    from reliora_git.storage.gitfiles import GitFiles

#: What a caller finds in a file (judge_events).
T = TypeVar("T")
#: Tokens whose postings a StoreIndex keeps decoded (see StoreIndex._masks_of).
_MASKS_KEPT = 4096


class StoreIndex:
    """The store as it is on disk now, ready for every command."""

    def __init__(
        self,
        built: Built,
        segments: Segments,
        cache_path: Path | None,
        save_state: Callable[[IndexState], None],
    ) -> None:
        located = built.loaded.located
        self.store: Store = located.store
        self.built = built
        #: Each record file's value (``locators`` order): a slot, or its error.
        self.values: list[Any] = built.loaded.values
        self.feedback: dict[str, FeedbackSummary] = built.feedback
        #: Feedback files (in path order) and their values: ("ok", record id, outcome) or an error.
        self.event_locators: list[str] = [file.locator for file in located.events]
        self.event_values: list[Value] = built.loaded.event_values
        #: What the next command may start from (see index.open_index).
        self.state: IndexState = built.state
        self.segments = segments
        #: Segment values (marshalled) of records parsed by this command but not in a segment.
        self.fresh: dict[int, bytes] = built.loaded.fresh
        #: Where the files come from when not from the working tree.
        self.source: GitFiles | None = located.source
        #: Store folders that are symbolic links, never read (store.linked_folders).
        self.folder_errors: list[RelioraError] = located.folder_errors
        #: The index file this index was read from and is saved to (None: no cache).
        self.cache_path = cache_path
        self._save_state = save_state
        self._scanned = False
        self._by_fingerprint: dict[str, list[int]] | None = None
        self._masks: dict[str, dict[int, int]] = {}
        self._last_query: tuple[Query, list[dict[int, int]]] | None = None
        self._full_docs: dict[int, IndexedRecord] = {}
        #: Segment values read so far.
        self._blobs_read: dict[int, SegmentValue] = {}
        self._json_read: dict[int, dict[str, Any]] = {}
        #: Who holds this index (see :meth:`acquire`); the segments close when nobody does.
        self._references = 1
        self._references_lock = threading.Lock()

    # --- what the build stage made, each part on first use -------------------------------

    @property
    def inverted(self) -> InvertedIndex:
        """The live records: slots of files that lost an id clash are dead here."""
        return self.built.visible[0]

    @property
    def all_docs(self) -> list[IndexedRecord | None]:
        """Slot → record, id-clash losers included (``check`` judges them too)."""
        return self.built.all_records.docs

    @property
    def checks(self) -> dict[str, CheckInfo]:
        return self.built.checks

    @property
    def blobs(self) -> list[Location | None]:
        """Slot → where its segment value is (None: not cached; parsed from the file on use)."""
        return self.built.blobs

    @functools.cached_property
    def locators(self) -> list[str]:
        """Record files in path order."""
        return [file.locator for file in self.built.loaded.located.records]

    @property
    def table(self) -> RecordTable:
        return self.built.table

    @property
    def skipped(self) -> list[RelioraError]:
        """One error per record file that search leaves out, in path order (after
        folder_errors)."""
        reasons = self.table.skipped
        found = [RecordError(message, path=path, line=line) for message, path, line in reasons]
        return [*self.folder_errors, *found]

    @property
    def superseded_by(self) -> dict[str, list[str]]:
        """Record id → the active records that name it in ``supersedes`` (SPEC.md §11)."""
        return self.table.superseded_by

    # --- one record's cached values ------------------------------------------------------

    def _blob(self, slot: int) -> SegmentValue:
        found = self._blobs_read.get(slot)
        if found is not None:
            return found
        raw = self.fresh.get(slot)
        if raw is not None:
            found = self._blobs_read[slot] = marshal.loads(raw)
            return found  # type: ignore[no-any-return]
        location = self.blobs[slot] if slot < len(self.blobs) else None
        value = None if location is None else self.segments.read(location)
        return self._kept_blob(slot, value)

    def _kept_blob(self, slot: int, value: Any) -> SegmentValue:
        if not (isinstance(value, tuple) and len(value) == 3):
            # Gone or damaged: the file itself says the same (it is as the walk saw it).
            doc = self.inverted.docs[slot]
            assert doc is not None
            value = _parse_blob(self.store, doc.locator, self.source)
        self._blobs_read[slot] = value
        return value  # type: ignore[no-any-return]

    def text_of(self, slot: int) -> str:
        """The record's field strings joined (IndexedRecord.text: search's nine, then asked-as)."""
        return self._blob(slot)[0]

    def record_json(self, slot: int) -> dict[str, Any]:
        """The record as ``show --json`` and ``list --json`` give it."""
        found = self._json_read.get(slot)
        if found is None:
            text, kept, created = self._blob(slot)
            found = self._json_read[slot] = kept if isinstance(kept, dict) else json.loads(kept)
            self._blobs_read[slot] = (text, found, created)  # the line is not kept twice
        return found

    def record_lines(self, slots: list[int]) -> list[tuple[str, str]]:
        """(JSON of the record on one line, its ``created``) of each of ``slots``, read in
        segment order, one read per segment: ``list --json`` prints the lines as they are."""
        blobs = self.blobs
        wanted = [
            (slot, location)
            for slot in slots
            if slot not in self._blobs_read
            and slot not in self.fresh
            and (location := blobs[slot] if slot < len(blobs) else None) is not None
        ]
        for (slot, _), value in zip(
            wanted, self.segments.read_many([loc for _, loc in wanted]), strict=True
        ):
            self._kept_blob(slot, value)
        found: list[tuple[str, str]] = []
        for slot in slots:
            _, kept, created = self._blob(slot)
            line = json.dumps(kept, ensure_ascii=False) if isinstance(kept, dict) else kept
            found.append((line, created))
        return found

    def full_doc(self, slot: int) -> IndexedRecord:
        found = self._full_docs.get(slot)
        if found is None:  # made once: ``check`` asks for each twin's several times
            doc = self.inverted.docs[slot]
            assert doc is not None
            found = self._full_docs[slot] = doc._replace(text=self.text_of(slot))
        return found

    # --- records -------------------------------------------------------------------------

    def slots(self) -> list[int]:
        """Slots of the usable records with a unique id, in path order."""
        return list(self.table.slots)

    def identity(self, slot: int) -> tuple[str, str]:
        """(id, locator) of a live record, from the record table (no record decoded)."""
        table = self.table
        position = table.slots.index(slot)  # one C-level scan: cheaper than a dict of all
        return table.ids[position], table.locators[position]

    def docs(self) -> list[IndexedRecord]:
        """The usable records (texts omitted), in path order."""
        docs = self.inverted.docs
        return [doc for slot in self.slots() if (doc := docs[slot]) is not None]

    def resolve(self, id_or_prefix: str) -> int:
        """The slot of the record whose id is ``id_or_prefix``, or of the one it prefixes."""
        check_id(id_or_prefix)
        exact = self._slot_by_id.get(id_or_prefix)
        if exact is not None:
            return exact
        candidates = list(self._prefixed(id_or_prefix))
        if len(candidates) == 1:
            return candidates[0][1]
        if candidates:
            names = ", ".join(sorted(doc_id for doc_id, _ in candidates))
            raise RelioraError(
                f"id prefix {id_or_prefix!r} is ambiguous; it matches {names}",
                code="ambiguous_id",
            )
        raise self.unknown_id(id_or_prefix)

    def unknown_id(self, typed: str, also: Iterable[str] = ()) -> RelioraError:
        """The error for an id that names no record, with the ids it was likely meant to be.

        ``also``: more ids to suggest from (record files that search skips).
        """
        from reliora_git.search.near_ids import did_you_mean

        known = self.table.ids
        hint = did_you_mean(typed, [*known, *also])
        return RelioraError(f"no experience with id {typed!r}{hint}", code="unknown_id")

    def has_id(self, record_id: str) -> bool:
        return record_id in self._slot_by_id

    def _prefixed(self, prefix: str) -> Iterator[tuple[str, int]]:
        """(id, slot) of the live records whose id starts with ``prefix``, in id order."""
        import bisect

        table = self.table
        ids, order = table.ids, table.order
        at = bisect.bisect_left(order, prefix, key=ids.__getitem__)
        while at < len(order) and ids[order[at]].startswith(prefix):
            yield ids[order[at]], table.slots[order[at]]
            at += 1

    def event_locators_of(self, record_id: str) -> list[str]:
        """The feedback files about ``record_id`` that read as events, in path order."""
        return [
            locator
            for locator, value in zip(self.event_locators, self.event_values, strict=True)
            if value[0] == "ok" and value[1] == record_id
        ]

    # --- search --------------------------------------------------------------------------

    def rank(
        self,
        query: Query,
        *,
        context: ContextFilter | None = None,
        include_retired: bool = False,
        min_level: str | None = None,
        exclude_id: str | None = None,
    ) -> list[Hit]:
        return self.inverted.rank(
            query,
            self.text_of,
            feedback=self.feedback,
            context=context,
            include_retired=include_retired,
            min_level=min_level,
            exclude_id=exclude_id,
        )

    # --- as a pool of records for duplicate searches (duplicates.Pool) ------------------

    def similar_hits(self, query: Query, exclude_id: str) -> list[Hit]:
        found = self.inverted.rank_slots(
            query,
            self.text_of,
            feedback=self.feedback,
            include_retired=True,
            min_level="moderate",
            exclude_id=exclude_id,
        )
        return [dataclasses.replace(hit, doc=self.full_doc(slot)) for slot, hit in found]

    def twins(self, fingerprint: str, exclude_id: str) -> list[IndexedRecord]:
        by_fingerprint = self._by_fingerprint
        if by_fingerprint is None:
            # Built whole, then published: another thread never sees it half filled.
            by_fingerprint = {}
            docs = self.inverted.docs
            for slot in self.slots():
                doc = docs[slot]
                assert doc is not None
                by_fingerprint.setdefault(doc.fingerprint, []).append(slot)
            self._by_fingerprint = by_fingerprint
        return [
            self.full_doc(slot)
            for slot in by_fingerprint.get(fingerprint, [])
            if self.inverted.docs[slot].id != exclude_id  # type: ignore[union-attr]
        ]

    def slot_of(self, record_id: str) -> int | None:
        """The slot of the live record ``record_id``, or None."""
        return self._slot_by_id.get(record_id)

    def record_count(self, exclude_id: str) -> int:
        return len(self._slot_by_id) - (exclude_id in self._slot_by_id)

    def document_frequency(self, token: str, exclude_id: str) -> int:
        holders = self._masks_of(token)
        return len(holders) - (self._slot_by_id.get(exclude_id, -1) in holders)

    def score_of(self, record_id: str, query: Query) -> Hit | None:
        """The hit of one record, from the postings (``check`` scores every exact twin)."""
        slot = self._slot_by_id.get(record_id)
        if slot is None:
            return None
        masks = [holders.get(slot, 0) for holders in self._query_masks(query)]
        if not any(masks):
            return None
        doc = self.full_doc(slot)
        phrase = query.phrase is not None and query.phrase in search_part(doc.text)
        return score_masks(doc, query, masks, phrase, self.feedback.get(record_id, NO_FEEDBACK))

    def _query_masks(self, query: Query) -> list[dict[int, int]]:
        """:meth:`_masks_of` each token of ``query``, kept for the last query asked: ``check``
        scores every twin of a record with that record's query, one after the other."""
        last = self._last_query
        if last is not None and last[0] is query:
            return last[1]
        found = [self._masks_of(token.text) for token in query.tokens]
        self._last_query = (query, found)  # one assignment: another thread sees either
        return found

    def _masks_of(self, token: str) -> dict[int, int]:
        """Live slot → components holding a token that ``token`` matches, kept per token.

        ``check`` asks for the same tokens for many records; the cap bounds what a
        long-running server keeps.
        """
        found = self._masks.get(token)
        if found is None:
            if len(self._masks) >= _MASKS_KEPT:
                self._masks.clear()
            found = self._masks[token] = self.inverted.masks(token)
        return found

    @functools.cached_property
    def _slot_by_id(self) -> dict[str, int]:
        """The live records' slots by id (ids are unique among them)."""
        table = self.table
        return dict(zip(table.ids, table.slots, strict=True))

    # --- secrets (credentials.py), found once per record and kept ------------------------

    def secrets_of(self, slot: int, entropy: bool = False) -> list[Finding]:
        """The secrets in a record — its fields, then its file name and whole text —
        scanned once per file version and kept in the index."""
        from reliora_git.records.credentials import Finding, record_fields, scan_store_file

        key = (slot, entropy)
        found = self.state.scans.get(key)
        if found is None:
            checkpoint()  # check scans record by record (stopping.py)
            doc = self.all_docs[slot]
            locator = doc.locator if doc is not None else ""
            text = self.file_text(locator) if locator else None
            # The fields as written: the record JSON every read gets has its secrets masked.
            fields = record_fields(_written_json(text, locator) or self.record_json(slot))
            findings = scan_store_file(locator, text, fields, entropy=entropy)
            found = tuple((f.field, f.line, f.kind, f.masked) for f in findings)
            self.state.remember_scan(key, found)
            self._scanned = True
        return [Finding(*finding) for finding in found]

    def judge_events(self, judge: Callable[[str, str | None], list[T]]) -> dict[str, list[T]]:
        """``judge(locator, text)`` of every feedback file, readable or not (text None);
        the non-empty answers by locator. Not kept: events are a few lines each and
        read only by ``check``, once for everything it looks for in them."""
        found: dict[str, list[T]] = {}
        for locator in self.event_locators:
            checkpoint()
            answer = judge(locator, self.file_text(locator))
            if answer:
                found[locator] = answer
        return found

    def file_text(self, locator: str) -> str | None:
        """A store file's text (from git when the index reads git); None when it cannot be
        read (its name is still scanned, and the reader reports why elsewhere)."""
        try:
            if self.source is not None:
                file = self._source_files.get(locator)
                value: str | RecordError | None = (
                    None if file is None else self.source.texts([file])[0]
                )
            else:
                path = self.store.root.joinpath(*locator.split("/"))
                value = read_text(FileEntry(locator, path, path.stat().st_size, 0))
        except (OSError, RelioraError):
            return None
        return value if isinstance(value, str) else None

    @functools.cached_property
    def _source_files(self) -> dict[str, ScannedFile]:
        source = self.source
        return {} if source is None else {f.locator: f for f in source.records + source.events}

    def save(self) -> None:
        """Write what this command added to the index (secret scans), if anything."""
        if not self._scanned or self.cache_path is None:
            return
        kept = {v for v in self.state.values if isinstance(v, int)}
        with self.state.scans_lock:
            self.state.scans = {k: v for k, v in self.state.scans.items() if k[0] in kept}
        self._save_state(self.state)
        self._scanned = False

    # --- references: several calls of a long-running process may share one index --------

    def acquire(self) -> StoreIndex:
        """One more reference to this index (whoever opened it holds the first)."""
        with self._references_lock:
            if self._references <= 0:
                raise RuntimeError("the store index was used after it was closed")
            self._references += 1
        return self

    def close(self) -> None:
        """Give up one reference; the last one closes the segment files."""
        with self._references_lock:
            self._references -= 1
            last = self._references == 0
        if last:
            self.segments.close()

    def __enter__(self) -> StoreIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _written_json(text: str | None, locator: str) -> dict[str, Any] | None:
    """A record file's fields as written (None when it cannot be read as a record)."""
    if text is None:
        return None
    from reliora_git.records.parse import parse_record
    from reliora_git.search.jsonio import record_to_json

    try:
        return record_to_json(parse_record(text, locator).record)
    except (RecordError, RelioraError):
        return None


def _parse_blob(store: Store, locator: str, source: GitFiles | None) -> SegmentValue:
    if source is not None:
        file = next(f for f in source.records if f.locator == locator)
        text = source.texts([file])[0]
        if isinstance(text, RecordError):
            raise text
    else:
        path = store.root.joinpath(*locator.split("/"))
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise RelioraError(f"cannot be read: {exc.strerror}", path=locator) from None
        text = read_text(FileEntry(locator, path, size, 0))
    value = indexed_value(locator, text)
    if value[0] != "doc":
        raise RelioraError(f"changed while it was read: {value[1]}", path=locator)
    return segment_value(value[1][IndexedRecord._fields.index("text")], value[2])
