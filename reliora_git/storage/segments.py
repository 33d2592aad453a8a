"""Immutable files of cached record texts, read one record at a time.

The index file (index.py) is loaded whole by every command, so it holds only
what ranking needs: terms, postings and each record's identity. What a few
records need now and then — the field strings that confirm an exact phrase,
the record as JSON for ``list`` — lives in *segments*: files of marshalled
values written once, never changed, and named at random. The index names, for
each record, the segment, offset, length and CRC-32 of its value, so one
``pread`` fetches it. A value that cannot be read or fails its CRC (a segment
removed by another process, a torn write after a crash) is reported as None,
and the caller computes it again from the record file: a segment can only cost
speed, never change a result.

Segments that no index names any more are removed when they are older than
:data:`UNUSED_GRACE_SECONDS`, so that a process still reading an older index
keeps its segments.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

#: (segment name, offset, length, CRC-32) of one value.
Location = tuple[str, int, int, int]
SUFFIX = ".seg"
UNUSED_GRACE_SECONDS = 600


class Segments:
    """The segments of one cache file: ``<cache file name>.<random>.seg`` beside it."""

    def __init__(self, index_path: Path | None) -> None:
        self.index_path = index_path
        self._handles: dict[str, int] = {}
        # Several threads (an MCP server's calls) read through one Segments: a segment is
        # opened once, and closing never iterates the handles while another thread adds one.
        self._opening = threading.Lock()

    def close(self) -> None:
        with self._opening:
            handles, self._handles = self._handles, {}
        for fd in handles.values():
            os.close(fd)

    def __enter__(self) -> Segments:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _path(self, name: str) -> Path:
        assert self.index_path is not None
        return self.index_path.with_name(f"{self.index_path.name}.{name}{SUFFIX}")

    def read(self, location: Location) -> Any | None:
        """The value at ``location``, or None when it cannot be had as it was written."""
        if self.index_path is None:
            return None
        name, offset, length, crc = location
        try:
            fd = self._handles.get(name)
            if fd is None:
                fd = self._open(name)
            data = os.pread(fd, length, offset)
        except OSError:
            return None
        if len(data) != length or zlib.crc32(data) != crc:
            return None
        try:
            return marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None

    def read_many(self, locations: list[Location]) -> list[Any | None]:
        """The values at ``locations`` (each as :meth:`read` gives it), reading each segment
        once from its first value asked for to its last rather than one ``pread`` a value."""
        found: list[Any | None] = [None] * len(locations)
        if self.index_path is None:
            return found
        spans: dict[str, list[int]] = {}
        for n, (name, *_) in enumerate(locations):
            spans.setdefault(name, []).append(n)
        for name, positions in spans.items():
            start = min(locations[n][1] for n in positions)
            end = max(locations[n][1] + locations[n][2] for n in positions)
            try:
                fd = self._handles.get(name)
                if fd is None:
                    fd = self._open(name)
                data = memoryview(os.pread(fd, end - start, start))
            except OSError:
                continue
            for n in positions:
                _, offset, length, crc = locations[n]
                piece = data[offset - start : offset - start + length]
                if len(piece) != length or zlib.crc32(piece) != crc:
                    continue
                with contextlib.suppress(EOFError, ValueError, TypeError):
                    found[n] = marshal.loads(piece)
        return found

    def _open(self, name: str) -> int:
        with self._opening:
            fd = self._handles.get(name)
            if fd is None:
                fd = self._handles[name] = os.open(self._path(name), os.O_RDONLY)
            return fd

    def writer(self) -> SegmentWriter:
        """A new segment, written value by value (nothing at all when caching is off)."""
        return SegmentWriter(None if self.index_path is None else self._path)

    def remove_unused(self, used: set[str]) -> None:
        """Delete this cache's segments that ``used`` does not name and no reader may need."""
        if self.index_path is None:
            return
        prefix = self.index_path.name + "."
        cutoff = time.time() - UNUSED_GRACE_SECONDS
        with contextlib.suppress(OSError), os.scandir(self.index_path.parent) as entries:
            for entry in entries:
                if not (entry.name.startswith(prefix) and entry.name.endswith(SUFFIX)):
                    continue
                name = entry.name[len(prefix) : -len(SUFFIX)]
                if name in used:
                    continue
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)


class SegmentWriter:
    """Writes one new segment as values come, and renames it into place on success.

    Used as a context manager: on leaving, the segment is complete and readable, or,
    if anything failed, gone and no value is reported as written.
    """

    def __init__(self, path_of: Callable[[str], Path] | None) -> None:
        self.name = os.urandom(6).hex()
        self.path = None if path_of is None else path_of(self.name)
        self.locations: dict[int, Location] = {}
        self._handle: BinaryIO | None = None
        self._offset = 0
        self._failed = self.path is None

    def __enter__(self) -> SegmentWriter:
        return self

    def add(self, key: int, data: bytes) -> bool:
        """Append a value under ``key``, as ``marshal.dumps`` gave it; False if not written."""
        if self._failed:
            return False
        assert self.path is not None
        try:
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = open(self._temporary, "wb")  # noqa: SIM115 (closed on exit)
            self._handle.write(data)
        except OSError:
            self._fail()
            return False
        self.locations[key] = (self.name, self._offset, len(data), zlib.crc32(data))
        self._offset += len(data)
        return True

    @property
    def _temporary(self) -> Path:
        assert self.path is not None
        return self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")

    def _fail(self) -> None:
        self._failed = True
        self.locations.clear()
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
        if self.path is not None:
            with contextlib.suppress(OSError):
                self._temporary.unlink()

    def __exit__(self, kind: object, *exc: object) -> None:
        if self._handle is None:
            return
        if kind is not None:
            self._fail()
            return
        try:
            self._handle.close()
            assert self.path is not None
            os.replace(self._temporary, self.path)
        except OSError:
            self._fail()
        self._handle = None
