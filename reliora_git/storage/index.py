"""The store index: the working tree as every command reads it, through the cache.

:func:`open_index` walks ``experiences/`` and ``feedback/`` (a ``stat`` of each
file), loads the cached index, and patches it for the files whose identity
(locator, size, mtime) changed: a changed file is parsed again and gets a new
slot in the inverted index (inverted.py), the slot of a file that changed or is
gone is marked dead. What comes out is exactly what parsing every file would
give — the cache can only cost speed, never change a result (SPEC.md §9):

* a value is kept for a file only as long as its size and mtime are the same,
  and never for a file modified within :data:`~reliora_git.storage.cache.RACY_NS` of the
  walk (it is parsed again next time);
* what depends on several files (who owns an id, feedback sums) is derived on
  every command from the per-file values, in path order;
* a cache file that is missing, corrupt, from other code or unwritable, and a
  segment that cannot be read, only mean parsing again.

The index file holds what every command needs (walk, terms, postings, each
record's identity, feedback values, check problems); the texts that only a few
records need at a time stay in segments (segments.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import marshal
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackSummary
from reliora_git.records.stopping import checkpoint
from reliora_git.search.inverted import DEAD_SHARE, InvertedIndex, PostingsBuilder, piece_postings
from reliora_git.search.rank import (
    NO_FEEDBACK,
    ContextFilter,
    Hit,
    IndexedRecord,
    Query,
    score_masks,
    search_part,
    superseders,
)
from reliora_git.storage.cache import (
    Section,
    Value,
    cache_file,
    old_enough,
    read_cache,
    write_cache,
)
from reliora_git.storage.catalog import choose_id_owners
from reliora_git.storage.parallel import BATCH, mapper
from reliora_git.storage.progress import progress, wanted
from reliora_git.storage.segments import Location, Segments
from reliora_git.storage.store import (
    FileEntry,
    ScannedFile,
    Store,
    check_id,
    linked_folders,
    read_text,
    scan_markdown,
)
from reliora_git.storage.values import (
    compute_values,
    error_value,
    event_value,
    feedback_from_values,
    indexed_value,
    paused_gc,
    shared,
)

if TYPE_CHECKING:
    from reliora_git.records.credentials import Finding
    from reliora_git.storage.gitfiles import GitFiles
    from reliora_git.storage.watch import Watch

_new_tuple = tuple.__new__
#: What a caller finds in a file (judge_events).
T = TypeVar("T")
#: Tokens whose postings a StoreIndex keeps decoded (see StoreIndex._masks_of).
_MASKS_KEPT = 4096
#: (severity, message, line) of what ``check`` reports for a file by itself.
ProblemTuple = tuple[str, str, "int | None"]
#: What ``check`` needs of a file with problems: (claimed id or None, usable, problems).
CheckInfo = tuple["str | None", bool, tuple[ProblemTuple, ...]]


@dataclass
class IndexState:
    """What the index file holds (and an MCP server keeps between calls)."""

    #: Record files as stored: (locator, size, mtime_ns, None), sorted, and their values:
    #: a slot of ``inverted``, or an error value ("error", message, line).
    files: list[tuple[str, int, int, None]]
    values: list[Any]
    inverted: InvertedIndex
    #: Slot → where its segment value (record text, record JSON) is.
    blobs: list[Location | None]
    #: Locator → what check reports for a file with problems (files without have none).
    checks: dict[str, CheckInfo]
    event_files: list[tuple[str, int, int, None]]
    event_values: list[Value]
    #: (slot, entropy plugins on) → the secrets found in that record (Finding fields).
    scans: dict[tuple[int, bool], tuple[tuple[str, int, str, str], ...]] = field(
        default_factory=dict
    )
    #: Guards ``scans``: the one part of a state that calls add to while other threads
    #: (an MCP server's) copy it into the next state or write it (see :meth:`scans_copy`).
    scans_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def remember_scan(
        self, key: tuple[int, bool], found: tuple[tuple[str, int, str, str], ...]
    ) -> None:
        with self.scans_lock:
            self.scans[key] = found

    def scans_copy(self) -> dict[tuple[int, bool], tuple[tuple[str, int, str, str], ...]]:
        """The scans as they are now, for a reader that iterates them."""
        with self.scans_lock:
            return dict(self.scans)

    @classmethod
    def empty(cls) -> IndexState:
        return cls([], [], InvertedIndex.empty(), [], {}, [], [])

    def to_plain(self) -> tuple[Any, ...]:
        inv = self.inverted
        docs = [None if doc is None else tuple(doc) for doc in inv.docs]
        return (
            self.files,
            self.values,
            inv.terms,
            inv.postings,
            docs,
            self.blobs,
            self.checks,
            self.event_files,
            self.event_values,
            self.scans_copy(),
        )

    @classmethod
    def from_plain(cls, plain: Any) -> IndexState | None:
        try:
            (
                files,
                values,
                terms,
                postings,
                docs,
                blobs,
                checks,
                event_files,
                event_values,
                scans,
            ) = plain
        except (TypeError, ValueError):
            return None
        records = [None if doc is None else _new_tuple(IndexedRecord, doc) for doc in docs]
        return cls(
            files,
            values,
            InvertedIndex(terms, postings, records),
            blobs,
            checks,
            event_files,
            event_values,
            scans,
        )


def index_file(root: Path, source: GitFiles | None = None) -> Path | None:
    """The index of the working tree, or (``source`` given) of files kept in git.

    Files kept in git are keyed by blob id, so the staged store and the trees
    ``review`` reads share one index of their own, patched from one to the next.
    """
    path = cache_file(root)
    return None if path is None else path.with_suffix(".index-git" if source else ".index")


@dataclass
class StoreIndex:
    """The store as it is on disk now, ready for every command."""

    store: Store
    #: The live records: slots of files that lost an id clash are dead here.
    inverted: InvertedIndex
    #: Slot → record, id-clash losers included (``check`` judges them too).
    all_docs: list[IndexedRecord | None]
    #: Record files in path order, and each one's value: a slot, or its error.
    locators: list[str]
    values: list[Any]
    checks: dict[str, CheckInfo]
    feedback: dict[str, FeedbackSummary]
    #: Feedback files (in path order) and their values: ("ok", record id, outcome) or an error.
    event_locators: list[str]
    event_values: list[Value]
    #: One error per record file that search leaves out, in path order (after folder_errors).
    skipped: list[RelioraError]
    #: Slot → where its segment value is (None: not cached; parsed from the file on use).
    blobs: list[Location | None]
    #: What the next command may start from (see :func:`open_index`).
    state: IndexState
    segments: Segments
    #: Segment values (marshalled) of records parsed by this command but not in a segment.
    fresh: dict[int, bytes] = field(default_factory=dict)
    #: Where the files come from when not from the working tree.
    source: GitFiles | None = None
    #: Store folders that are symbolic links, never read (store.linked_folders).
    folder_errors: list[RelioraError] = field(default_factory=list)
    #: Record id → the active records that name it in ``supersedes`` (SPEC.md §11).
    superseded_by: dict[str, list[str]] = field(default_factory=dict)
    #: The index file this index was read from and is saved to (None: no cache).
    cache_path: Path | None = None
    _scanned: bool = False
    _by_fingerprint: dict[str, list[int]] | None = None
    _masks: dict[str, dict[int, int]] = field(default_factory=dict)
    #: Segment values read so far.
    _blobs_read: dict[int, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    #: Who holds this index (see :meth:`acquire`); the segments close when nobody does.
    _references: int = 1
    _references_lock: threading.Lock = field(
        default_factory=threading.Lock, repr=False, compare=False
    )

    # --- one record's cached values ------------------------------------------------------

    def _blob(self, slot: int) -> tuple[str, dict[str, Any]]:
        found = self._blobs_read.get(slot)
        if found is not None:
            return found
        raw = self.fresh.get(slot)
        if raw is not None:
            found = self._blobs_read[slot] = marshal.loads(raw)
            return found  # type: ignore[no-any-return]
        location = self.blobs[slot] if slot < len(self.blobs) else None
        value = None if location is None else self.segments.read(location)
        if not (isinstance(value, tuple) and len(value) == 2):
            # Gone or damaged: the file itself says the same (it is as the walk saw it).
            doc = self.inverted.docs[slot]
            assert doc is not None
            value = _parse_blob(self.store, doc.locator, self.source)
        self._blobs_read[slot] = value
        return value

    def text_of(self, slot: int) -> str:
        """The record's field strings joined (IndexedRecord.text: search's nine, then asked-as)."""
        return self._blob(slot)[0]

    def record_json(self, slot: int) -> dict[str, Any]:
        """The record as ``show --json`` and ``list --json`` give it."""
        return self._blob(slot)[1]

    def full_doc(self, slot: int) -> IndexedRecord:
        doc = self.inverted.docs[slot]
        assert doc is not None
        return doc._replace(text=self.text_of(slot))

    # --- records -------------------------------------------------------------------------

    def slots(self) -> list[int]:
        """Slots of the usable records with a unique id, in path order."""
        docs = self.inverted.docs
        return [v for v in self.values if isinstance(v, int) and docs[v] is not None]

    def docs(self) -> list[IndexedRecord]:
        """The usable records (texts omitted), in path order."""
        docs = self.inverted.docs
        return [doc for slot in self.slots() if (doc := docs[slot]) is not None]

    def resolve(self, id_or_prefix: str) -> int:
        """The slot of the record whose id is ``id_or_prefix``, or of the one it prefixes."""
        check_id(id_or_prefix)
        docs = self.inverted.docs
        candidates: list[tuple[str, int]] = []
        for slot in self.slots():
            doc_id = docs[slot].id  # type: ignore[union-attr]
            if doc_id == id_or_prefix:
                return slot
            if doc_id.startswith(id_or_prefix):
                candidates.append((doc_id, slot))
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

        docs = self.inverted.docs
        known = [docs[slot].id for slot in self.slots()]  # type: ignore[union-attr]
        hint = did_you_mean(typed, [*known, *also])
        return RelioraError(f"no experience with id {typed!r}{hint}", code="unknown_id")

    def has_id(self, record_id: str) -> bool:
        docs = self.inverted.docs
        return any(docs[slot].id == record_id for slot in self.slots())  # type: ignore[union-attr]

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
        masks = [self._masks_of(token.text).get(slot, 0) for token in query.tokens]
        if not any(masks):
            return None
        doc = self.full_doc(slot)
        phrase = query.phrase is not None and query.phrase in search_part(doc.text)
        return score_masks(doc, query, masks, phrase, self.feedback.get(record_id, NO_FEEDBACK))

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
        docs = self.inverted.docs
        return {docs[slot].id: slot for slot in self.slots()}  # type: ignore[union-attr]

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
        write_cache(self.cache_path, self.store.root.resolve(), self.state.to_plain())
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


def _parse_blob(store: Store, locator: str, source: GitFiles | None) -> tuple[str, dict[str, Any]]:
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
    return value[1][IndexedRecord._fields.index("text")], value[2]


def open_index(
    store: Store,
    previous: IndexState | None = None,
    source: GitFiles | None = None,
    *,
    save: bool = True,
) -> StoreIndex:
    """The index of the store as it is now; ``previous`` instead of the cache file, if given.

    ``source`` reads the store's files from git (gitfiles.py) instead of the working tree.
    ``save=False`` leaves the saved index as it is (``review`` opens a second tree from the
    first one's state, in memory).
    """
    root = store.root.resolve()
    path = index_file(root, source)
    with paused_gc():
        state = previous
        if state is None and path is not None:
            state = IndexState.from_plain(read_cache(path, root))
        state = state or IndexState.empty()
        segments = Segments(path)
        builder = _Builder(store, state, segments, source)
        index = builder.build()
        index.cache_path = path
    if save and path is not None and builder.changed:
        index.state = builder.saved_state()
        write_cache(path, root, index.state.to_plain())
        segments.remove_unused({loc[0] for loc in index.state.blobs if loc is not None})
        _remove_legacy(path)
    return index


#: Cache files of earlier versions, beside the index: the value caches of the search and the
#: hook (cache format 1). Nothing reads them any more; at 100,000 records they held 200 MB.
_LEGACY_SUFFIXES = (".cache", ".cache-staged")


def _remove_legacy(path: Path) -> None:
    for suffix in _LEGACY_SUFFIXES:
        with contextlib.suppress(OSError):
            path.with_suffix(suffix).unlink()


class LiveIndex:
    """The store index of a long-running process (the MCP server), kept between calls.

    Each :meth:`open` gives the index of the store as it is now. When a watch on the
    store's folders (watch.py) saw nothing happen since the last call, that is the
    last call's index, as it was; otherwise the store is walked again and a new index
    is built from the kept one's state for the files that changed, without reading
    the index file.

    Tool calls run on several threads at once, so the kept index is shared, never
    mutated by a refresh, and reference-counted: :meth:`open` gives the caller a
    reference (``with live.open(store) as index:`` gives it back), this object holds
    one while the index is current, and the index's files are closed only once it
    has been replaced and no call holds it any more.
    """

    def __init__(self) -> None:
        self._root: Path | None = None
        self._index: StoreIndex | None = None
        self._watch: Watch | None = None
        self._lock = threading.Lock()  # tool calls may come on several threads

    def open(self, store: Store) -> StoreIndex:
        """The index of the store as it is now, with a reference for the caller to close."""
        with self._lock:
            same = self._root == store.root and self._index is not None
            if same and self._watch is not None and self._watch.quiet():
                assert self._index is not None
                return self._index.acquire()
            if self._watch is not None:
                self._watch.close()
                self._watch = None  # a failed walk below must not leave a quiet watch
            from reliora_git.storage.watch import Watch  # ctypes: only a server needs it

            # Armed before the walk: whatever changes from now on is seen next time.
            watch = Watch([store.path])
            previous = self._index.state if same and self._index is not None else None
            try:
                fresh = open_index(store, previous)  # our reference: held while current
            except BaseException:
                watch.close()
                raise
            self._watch = watch
            if self._index is not None:
                self._index.close()  # replaced: closed once its last caller is done
            self._index = fresh
            self._root = store.root
            return fresh.acquire()

    def close(self) -> None:
        with self._lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
            if self._index is not None:
                self._index.close()
                self._index = None
            self._root = None


class _Builder:
    """Patches an :class:`IndexState` for the files as they are now."""

    def __init__(
        self, store: Store, state: IndexState, segments: Segments, source: GitFiles | None
    ) -> None:
        self.store = store
        self.source = source
        self.state = state
        self.segments = segments
        self.started_ns = _started_ns()
        self.changed = False
        #: Slot → segment value location, patched by :meth:`_patch`.
        self.blobs: list[Location | None] = state.blobs

    def build(self) -> StoreIndex:
        store, state = self.store, self.state
        source = self.source
        files = source.records if source else scan_markdown(store, store.experiences)
        self.records = Section((state.files, state.values), self.started_ns)
        values = self.records.all_valid(files)
        self.checks = dict(state.checks)
        self.fresh: dict[int, bytes] = {}
        inverted = state.inverted
        if values is None:
            values, inverted = self._patch(files)
        event_files = source.events if source else scan_markdown(store, store.feedback)
        self.events = Section((state.event_files, state.event_values), self.started_ns)
        event_values = self.events.all_valid(event_files)
        if event_values is None:
            read = source.texts if source else None
            event_values = compute_values(store, self.events, event_files, event_value, read=read)
            self.changed = True
        self.inverted = inverted
        locators = [file.locator for file in files]
        visible, skipped = _visible(store, inverted, locators, values)
        visible, superseded_by = _superseded(visible)
        folder_errors = source.linked if source else linked_folders(store)
        return StoreIndex(
            store=store,
            inverted=visible,
            all_docs=inverted.docs,
            locators=locators,
            values=values,
            checks=self.checks,
            feedback=feedback_from_values(event_values),
            event_locators=[file.locator for file in event_files],
            event_values=event_values,
            skipped=folder_errors + skipped,
            blobs=self.blobs,
            state=state,
            segments=self.segments,
            fresh=self.fresh,
            source=source,
            folder_errors=folder_errors,
            superseded_by=superseded_by,
        )

    def _patch(self, files: list[ScannedFile]) -> tuple[list[Any], InvertedIndex]:
        """Values for ``files``: cached ones kept, the others parsed into new slots.

        Parsed records go straight into the postings and a new segment, batch by
        batch, so that a cold start holds neither every text nor every term at once.
        """
        self.changed = True
        lookup = self.records
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
        old = self.state.inverted
        postings = PostingsBuilder(old)
        self.blobs = list(self.state.blobs)
        first_slot = postings.reserve(len(missing))
        items: list[Item] = [
            (first_slot + n, file, old_enough(self.started_ns, file.mtime_ns), None)
            for n, file in enumerate(missing)
        ]
        piece = functools.partial(index_piece, os.fspath(self.store.root))
        # Smaller rounds when a bar is drawn, so that it moves (the pool is started once).
        step = BATCH // 8 if wanted(len(items)) else BATCH
        with (
            mapper(len(items)) as run,
            progress(len(items), "reading records") as done,
            self.segments.writer() as segment,
        ):
            for start in range(0, len(items), step):
                batch = items[start : start + step]
                if self.source is not None:  # read from git here, in one batch
                    texts = self.source.texts([item[1] for item in batch])
                    batch = [(*item[:3], text) for item, text in zip(batch, texts, strict=True)]
                for results, part, blobs in run(piece, batch):
                    docs: dict[int, IndexedRecord] = {}
                    for slot, value, parsed in results:
                        n = slot - first_slot
                        file, cacheable = missing[n], items[n][2] and parsed
                        values[positions[n]] = kept = self._add(file, slot, value, docs)
                        if value[0] == "doc" and not (cacheable and segment.add(slot, blobs[slot])):
                            self.fresh[slot] = blobs[slot]  # kept for this command only
                        if cacheable:
                            lookup.put(file.locator, file.size, file.mtime_ns, kept)
                    postings.add_part(docs, part)
                done(len(batch))
        kept_slots = {v for v in values if isinstance(v, int)}
        inverted = postings.index()
        inverted.drop(slot for slot in range(len(old.docs)) if slot not in kept_slots)
        self.blobs += [None] * (len(inverted.docs) - len(self.blobs))
        for slot, location in segment.locations.items():
            self.blobs[slot] = location
        live = {file.locator for file in files}
        self.checks = {loc: info for loc, info in self.checks.items() if loc in live}
        return values, inverted

    def _add(
        self, file: ScannedFile, slot: int, value: Value, docs: dict[int, IndexedRecord]
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
            self.checks[file.locator] = (claimed, value[0] == "doc", problems)
        else:
            self.checks.pop(file.locator, None)
        return result

    def saved_state(self) -> IndexState:
        """What to write: this run's index without the files too young to cache."""
        files, values = self.records.stored() or (self.state.files, self.state.values)
        inverted = self.inverted
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
        event_files, event_values = self.events.stored() or (
            self.state.event_files,
            self.state.event_values,
        )
        stored = {loc for loc, *_ in files}
        checks = {loc: info for loc, info in self.checks.items() if loc in stored}
        scans = {
            (renumber[slot] if renumber else slot, entropy): found
            for (slot, entropy), found in self.state.scans_copy().items()
            if slot in kept
        }
        return IndexState(files, values, saved, blobs, checks, event_files, event_values, scans)


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
            blobs[slot] = marshal.dumps((doc.text, as_json))
            terms.append((slot, record_terms))
            value = ("doc", tuple(doc._replace(text="")), problems)
        results.append((slot, value, True))
    return results, piece_postings(terms), blobs


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
    if not superseded_by:
        return inverted, {}
    docs = [
        doc._replace(status="superseded") if doc is not None and doc.id in superseded_by else doc
        for doc in inverted.docs
    ]
    return InvertedIndex(inverted.terms, inverted.postings, docs), superseded_by


def _started_ns() -> int:
    import time

    return time.time_ns()
