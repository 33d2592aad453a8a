"""The index file: what one walk of the store needs, each part decoded only when used.

The store index (index.py) is saved as named *sections*, each marshalled on its
own: the walk's files and their values, the feedback files and theirs, and the
record table (:class:`RecordTable`) are decoded by every command; the terms,
postings, records, segment locations, check problems and secret scans only by
the commands that read them. A one-record command (``show``, ``feedback``) thus
decodes neither the postings nor the records, and ``list`` no postings.

Layout: ``MAGIC``, the length and CRC-32 of a header, the header (marshal of the
code stamp and each section's name, offset, length and CRC-32), then the
sections. Every CRC is checked when the file is opened (a damaged section found
only later could no longer be recovered from), so a file that is truncated,
damaged or written by other code is ignored whole, and only costs a rebuild.
"""

from __future__ import annotations

import contextlib
import marshal
import mmap
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reliora_git.search.inverted import InvertedIndex
from reliora_git.search.rank import IndexedRecord
from reliora_git.storage.cache import (
    MAGIC,
    Value,
    cache_file,
    code_stamp,
    paused_gc,
    write_atomic,
)
from reliora_git.storage.store import FolderStamp

_new_tuple = tuple.__new__
#: (severity, message, line) of what ``check`` reports for a file by itself.
ProblemTuple = tuple[str, str, "int | None"]
#: What ``check`` needs of a file with problems: (claimed id or None, usable, problems).
CheckInfo = tuple["str | None", bool, tuple[ProblemTuple, ...]]
#: (field, line, kind, masked) of each secret found in a record (credentials.Finding).
Scans = dict[tuple[int, bool], tuple[tuple[str, int, str, str], ...]]
#: A walk's files as stored: (locator, size, mtime_ns, None), sorted by locator.
Files = list[tuple[str, int, int, None]]
#: Sections every command decodes; the others are decoded on first use.
EAGER = ("files", "values", "event_files", "event_values", "table", "folders")
LAZY = ("terms", "postings", "docs", "blobs", "checks", "scans")
_HEAD = len(MAGIC) + 8
#: A section as read: a view of the mapped file (read_state), or bytes.
Part = bytes | memoryview


@dataclass
class RecordTable:
    """The live records (usable, id owned) of one index state, without decoding the records.

    Derived from the state's files, values and records (build.py), so it is exactly
    what the records would give: one-record commands resolve an id from it.
    """

    #: Live records in path order: id, slot, locator.
    ids: list[str]
    slots: list[int]
    locators: list[str]
    #: Record id → the active records that supersede it (SPEC.md §11).
    superseded_by: dict[str, list[str]]
    #: Why each record file that search leaves out is skipped: (message, locator, line).
    skipped: list[tuple[str, str, int | None]]
    #: Positions (into ``ids``) in id order, for prefixes: sorted when first needed.
    sorted_positions: list[int] | None = None

    @property
    def order(self) -> list[int]:
        if self.sorted_positions is None:
            self.sorted_positions = sorted(range(len(self.ids)), key=self.ids.__getitem__)
        return self.sorted_positions

    def to_plain(self) -> tuple[Any, ...]:
        return (self.ids, self.slots, self.locators, self.order, self.superseded_by, self.skipped)

    @classmethod
    def from_plain(cls, plain: Any) -> RecordTable:
        ids, slots, locators, order, superseded_by, skipped = plain
        return cls(ids, slots, locators, superseded_by, skipped, order)


class IndexState:
    """What the index file holds (and an MCP server keeps between calls).

    ``files`` and ``values`` are the record files as stored and their values (a slot
    of ``inverted``, or an error value); ``event_files`` and ``event_values`` the same
    for feedback files. The other parts are decoded from the file on first use.
    """

    def __init__(
        self,
        files: Files,
        values: list[Any],
        event_files: Files,
        event_values: list[Value],
        *,
        inverted: InvertedIndex | None = None,
        blobs: list[Any] | None = None,
        checks: dict[str, CheckInfo] | None = None,
        scans: Scans | None = None,
        table: RecordTable | None = None,
        parts: dict[str, Part] | None = None,
        folders: list[FolderStamp] | None = None,
    ) -> None:
        self.files = files
        self.values = values
        self.event_files = event_files
        self.event_values = event_values
        #: The record table of this state (None: derive it from the records when needed).
        self.table = table
        #: The folders of the walk these files came from, stamped (locate.py); None when
        #: unknown, or when the files are not all the walk found.
        self.folders = folders
        self._inverted = inverted
        self._blobs = blobs
        self._checks = checks
        self._scans = scans
        #: The sections not decoded yet, as read (each is dropped once decoded), so that a
        #: part never decoded is written again as it was read.
        self._parts = parts or {}
        self._decoding = threading.Lock()  # an MCP server's calls may decode at once
        #: The mapped index file the parts are views of (read_state), if they are.
        self.mapped: mmap.mmap | None = None
        #: Guards ``scans``: the one part of a state that calls add to while other threads
        #: (an MCP server's) copy it into the next state or write it (see :meth:`scans_copy`).
        self.scans_lock = threading.Lock()

    def _section(self, name: str) -> Any:
        """A section decoded (its bytes are let go: nothing holds the file's text twice)."""
        with paused_gc():  # plain, acyclic data in bulk (see cache.paused_gc)
            value = marshal.loads(self._parts.pop(name))
        let_go(self.mapped)
        return value

    @property
    def inverted(self) -> InvertedIndex:
        """Terms, postings and records (slot → record without its text, or None)."""
        if self._inverted is None:
            with self._decoding:
                if self._inverted is None:
                    with paused_gc():
                        docs = [
                            None if doc is None else _new_tuple(IndexedRecord, doc)
                            for doc in self._section("docs")
                        ]
                    terms, postings = self._section("terms"), self._section("postings")
                    self._inverted = InvertedIndex(terms, postings, docs)
        return self._inverted

    @property
    def blobs(self) -> list[Any]:
        """Slot → where its segment value (record text, record JSON) is, or None."""
        if self._blobs is None:
            with self._decoding:
                if self._blobs is None:
                    self._blobs = self._section("blobs")
        return self._blobs

    @property
    def checks(self) -> dict[str, CheckInfo]:
        """Locator → what check reports for a file with problems (files without have none)."""
        if self._checks is None:
            with self._decoding:
                if self._checks is None:
                    self._checks = self._section("checks")
        return self._checks

    @property
    def scans(self) -> Scans:
        """(slot, entropy plugins on) → the secrets found in that record (Finding fields)."""
        if self._scans is None:
            with self._decoding:
                if self._scans is None:
                    self._scans = self._section("scans")
        return self._scans

    @scans.setter
    def scans(self, value: Scans) -> None:
        self._scans = value

    def remember_scan(
        self, key: tuple[int, bool], found: tuple[tuple[str, int, str, str], ...]
    ) -> None:
        scans = self.scans
        with self.scans_lock:
            scans[key] = found

    def scans_copy(self) -> Scans:
        """The scans as they are now, for a reader that iterates them."""
        scans = self.scans
        with self.scans_lock:
            return dict(scans)

    @classmethod
    def empty(cls) -> IndexState:
        return cls([], [], [], [], inverted=InvertedIndex.empty(), blobs=[], checks={}, scans={})

    def with_events(self, event_files: Files, event_values: list[Value]) -> IndexState:
        """This state with other feedback files: its other parts shared, decoded or not."""
        state = IndexState(
            self.files,
            self.values,
            event_files,
            event_values,
            table=self.table,
            parts=dict(self._parts),
        )  # no folder stamps: they held for this state's feedback files, not those
        state.mapped = self.mapped
        state._inverted, state._blobs = self._inverted, self._blobs
        state._checks, state._scans = self._checks, self._scans
        return state

    def sections(self) -> dict[str, Part]:
        """Every section marshalled, for :func:`write_state`; a part never decoded is
        written as it was read."""
        out: dict[str, Part] = {
            name: marshal.dumps(value)
            for name, value in (
                ("files", self.files),
                ("values", self.values),
                ("event_files", self.event_files),
                ("event_values", self.event_values),
                ("table", None if self.table is None else self.table.to_plain()),
                ("folders", self.folders),
            )
        }
        parts = dict(self._parts)  # taken now: another thread may decode one meanwhile
        if self._inverted is None and {"terms", "postings", "docs"} <= parts.keys():
            out.update(terms=parts["terms"], postings=parts["postings"], docs=parts["docs"])
        else:
            inv = self.inverted
            docs = [None if doc is None else tuple(doc) for doc in inv.docs]
            out.update(
                terms=marshal.dumps(inv.terms),
                postings=marshal.dumps(inv.postings),
                docs=marshal.dumps(docs),
            )
        undecoded = {"blobs": self._blobs, "checks": self._checks, "scans": self._scans}
        for name, part in undecoded.items():
            if part is None and name in parts:
                out[name] = parts[name]
        out.setdefault("blobs", marshal.dumps(self.blobs))
        out.setdefault("checks", marshal.dumps(self.checks))
        out.setdefault("scans", marshal.dumps(self.scans_copy()))
        return out


def index_file(root: Path, source: object | None = None) -> Path | None:
    """The index of the working tree, or (``source`` given) of files kept in git.

    Files kept in git are keyed by blob id, so the staged store and the trees
    ``review`` reads share one index of their own, patched from one to the next.
    """
    path = cache_file(root)
    return None if path is None else path.with_suffix(".index-git" if source else ".index")


def read_state(path: Path, root: Path) -> IndexState | None:
    """The state :func:`write_state` saved for the store at ``root``, or None if not usable.

    None for a missing, unreadable, truncated or damaged file, and for one written by
    other code (cache.code_stamp): each only costs the time to rebuild it.

    The file is mapped, not read: its sections are checked and decoded where the page
    cache holds them, without a copy of 8 MB per 10,000 records first (the copy cost as
    much as checking every CRC). The index file is only ever replaced by a rename, never
    rewritten in place, so a mapping always sees the one file it opened.
    """
    try:
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # missing, unreadable, empty, or a file system without mmap
        return None
    state = _read_sections(memoryview(mapped), root)
    if state is not None:
        state.mapped = mapped
    let_go(mapped)
    return state


#: How to drop a mapping's pages (None where the platform has no such advice).
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)


def let_go(mapped: mmap.mmap | None) -> None:
    """Drop the mapped index file's pages from this process's resident memory.

    They stay in the page cache, and a section decoded later maps its own pages in
    again (the mapping is read-only: dropping a page never loses a byte). Without it,
    every page the CRCs touched stayed resident next to the records decoded from
    them: 53 MB more at the peak of a search of 100,000 records.
    """
    if mapped is not None and _DONTNEED is not None:
        with contextlib.suppress(OSError, ValueError):
            mapped.madvise(_DONTNEED)


def _read_sections(data: memoryview, root: Path) -> IndexState | None:
    """:func:`read_state` of the file's bytes: each section taken by itself, every CRC checked."""
    head = bytes(data[:_HEAD])
    if not head.startswith(MAGIC) or len(head) < _HEAD:
        return None
    size = int.from_bytes(head[len(MAGIC) : len(MAGIC) + 4], "big")
    header = data[_HEAD : _HEAD + size]
    if len(header) != size or zlib.crc32(header) != int.from_bytes(head[len(MAGIC) + 4 :], "big"):
        return None
    try:
        stamp, toc = marshal.loads(header)
        places = sorted(
            (int(at), int(length), int.from_bytes(sum_, "big"), name)
            for name, (at, length, sum_) in toc
        )
    except (EOFError, ValueError, TypeError, AttributeError):
        return None
    if stamp != code_stamp(root) or {place[3] for place in places} != {*EAGER, *LAZY}:
        return None
    parts: dict[str, Part] = {}
    for at, length, sum_, name in places:
        start = _HEAD + size + at
        part = data[start : start + length]
        if at < 0 or len(part) != length or zlib.crc32(part) != sum_:
            return None
        parts[name] = part
    try:
        files, values = marshal.loads(parts.pop("files")), marshal.loads(parts.pop("values"))
        event_files = marshal.loads(parts.pop("event_files"))
        event_values = marshal.loads(parts.pop("event_values"))
        table = marshal.loads(parts.pop("table"))
        folders = marshal.loads(parts.pop("folders"))
        if not (len(files) == len(values) and len(event_files) == len(event_values)):
            return None
        return IndexState(
            files,
            values,
            event_files,
            event_values,
            table=None if table is None else RecordTable.from_plain(table),
            parts=parts,
            folders=folders,
        )
    except (EOFError, ValueError, TypeError):
        return None


def write_state(path: Path, root: Path, state: IndexState) -> None:
    """Write ``state`` atomically, section by section (see the module docstring); errors
    only cost speed."""
    pieces: list[Part] = []
    # CRCs as 4 bytes: as ints, marshal writes those over 2**31 longer, and the file's size
    # would vary with the random segment names the sections hold.
    toc: list[tuple[str, tuple[int, int, bytes]]] = []
    at = 0
    for name, data in state.sections().items():
        toc.append((name, (at, len(data), zlib.crc32(data).to_bytes(4, "big"))))
        pieces.append(data)
        at += len(data)
    header = marshal.dumps((code_stamp(root), toc))
    head = MAGIC + len(header).to_bytes(4, "big") + zlib.crc32(header).to_bytes(4, "big")
    # A read-only .git or a full disk costs speed, never a result.
    with contextlib.suppress(OSError):
        write_atomic(path, [head, header, *pieces])
