"""A cache of what each store file parsed to, so a query reads and parses only changed files.

SPEC.md §9 allows a cache only where it can never change a result. Each value is
what one file *as it is on disk* gives (never anything that depends on other
files), keyed by its locator and validated by its size and ``mtime_ns``:

* a file whose size or mtime differs from the cached one is read again;
* a file modified less than :data:`RACY_NS` before the walk started is never
  stored (the "racily clean" problem git also has: a second write within the same
  timestamp tick would keep size and mtime), so it is read again next time;
* files that are gone are dropped; renamed files are new locators;
* the whole cache is ignored when the package version, the cache format, the
  Python version or the code that parses records changed (see :func:`code_stamp`),
  when its checksum fails, or when it cannot be read at all: it is then rebuilt.

Where it lives: ``<git common dir>/reliora-cache/`` when the store is inside a git
repository (found by walking up to ``.git`` without running git), else the user
cache folder; never the working tree. ``RELIORA_CACHE_DIR`` overrides the folder
and ``RELIORA_NO_CACHE=1`` turns the cache off. Writes are atomic (temporary file
renamed into place), and a failure to write only costs speed.

Values are plain tuples of str/int/None serialised with :mod:`marshal`: it is the
fastest loader in the standard library and, unlike pickle, cannot run code.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import sys
import threading
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from reliora_git import __version__

#: Bump when the shape of cached values changes.
CACHE_FORMAT = 4
MAGIC = b"RELIORA-CACHE\n"
#: Files younger than this at the start of a walk are not cached (see the module docstring).
RACY_NS = 2_000_000_000
#: Packages whose code decides what a file parses and indexes to: every module in them is part
#: of the stamp, so a module added or moved there is never forgotten (tests/test_cache.py checks
#: that what storage/index.py and storage/values.py import stays within them).
CODE_PACKAGES = ("records", "search", "storage")

Value = tuple[Any, ...]


def old_enough(started_ns: int, mtime_ns: int) -> bool:
    """Whether a file of this mtime, seen by a walk that started then, may be cached."""
    return started_ns - mtime_ns >= RACY_NS


def code_stamp(root: Path) -> tuple[Any, ...]:
    """What must not change for cached values to stay valid: versions and the parsing code.

    The package version alone is not enough in a development checkout, where the
    code changes under the same version; the size and mtime of each parsing module
    are (a stat of fifty small files costs microseconds).
    """
    here = Path(__file__).resolve().parents[1]  # the package's folder
    stamp: list[Any] = [CACHE_FORMAT, __version__, sys.version, os.fsdecode(root)]
    for package in CODE_PACKAGES:
        try:
            modules = sorted(e.name for e in os.scandir(here / package) if e.name.endswith(".py"))
        except OSError:
            stamp.append((package, None))
            continue
        for name in modules:
            try:
                info = os.stat(here / package / name)
            except OSError:
                stamp.append((package, name, None))
            else:
                stamp.append((package, name, info.st_size, info.st_mtime_ns))
    return tuple(stamp)


#: Whether data built in bulk lives as long as the process: set for a command that exits
#: when its work is done (reliora_git/__main__.py), never for a server (see paused_gc).
_bulk_lives_on = False


def bulk_lives_on() -> None:
    """Say that this process ends with its command: what :func:`paused_gc` built is frozen."""
    global _bulk_lives_on
    _bulk_lives_on = True


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while plain, acyclic data is built in bulk.

    Loading 100,000 records allocates hundreds of thousands of tuples: every 700
    of them started a collection, and the growing older generations triggered
    full passes over everything loaded so far. Measured, that was 40% of a
    search at 100,000 records (cProfile does not show it). Nothing built here
    holds a reference cycle, so reference counting frees it all the same; parsing
    (PyYAML) runs with the collector on.

    In a command that ends when its work does (:func:`bulk_lives_on`), what was built
    is then frozen: the first collections after it would otherwise walk all of it
    (10,000 decoded records: 3 ms, and 6 ms more for the next older generation) to
    find nothing. A server never freezes: what it frees over days must stay collectable.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _bulk_lives_on:
                gc.freeze()
            gc.enable()


# --- where ------------------------------------------------------------------------------------


def git_common_dir(start: Path) -> Path | None:
    """The git directory shared by all worktrees of the repository above ``start``, or None.

    Read from the files themselves (``.git`` folder, or a ``gitdir:`` file and its
    ``commondir``) because starting ``git rev-parse`` would cost more than a warm search.
    """
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = (folder / line[len("gitdir:") :].strip()).resolve()
            try:
                common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return git_dir
            return (git_dir / common).resolve()
    return None


def user_cache_dir() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "reliora"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "reliora"


def cache_file(root: Path) -> Path | None:
    """The cache file of the store at ``root`` (absolute), or None when caching is off."""
    if os.environ.get("RELIORA_NO_CACHE", "") not in ("", "0"):
        return None
    override = os.environ.get("RELIORA_CACHE_DIR")
    if override:
        folder = Path(override)
    else:
        common = git_common_dir(root)
        folder = common / "reliora-cache" if common is not None else user_cache_dir()
    # One file per store root: worktrees of one repository share the folder, not the entries.
    # (CRC-32 and Adler-32 rather than hashlib, whose import costs more than a search of 1,000
    # records; the root is also inside the stamp, so a clash of names only costs speed.)
    raw = os.fsencode(root)
    return folder / f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.cache"


# --- what -------------------------------------------------------------------------------------


#: locator → (size, mtime_ns, value)
Entries = dict[str, tuple[int, int, Value]]
#: How a section is stored: the files as (locator, size, mtime_ns, None), sorted by
#: locator, and their values in the same order.
Stored = tuple[list[tuple[str, int, int, None]], list[Value]]


class Section:
    """The cached values of one folder of the store, each valid for one (size, mtime_ns)."""

    def __init__(self, stored: Stored, started_ns: int) -> None:
        self._files, self._values = stored
        self._old: Entries | None = None
        #: What this run found valid or computed: the next cache file. Callers that
        #: inline :meth:`get` for speed copy a hit from :meth:`old` into ``kept`` themselves.
        self.kept: Entries = {}
        self.started_ns = started_ns
        self.changed = False
        self._unchanged = False

    def all_valid(self, files: list[Any]) -> list[Value] | None:
        """The values of ``files`` (a walk, in locator order) if every one is cached as it is.

        The usual case, checked with one list comparison instead of a lookup per file:
        the same locators, sizes and mtimes, none unreadable, none left out as racy.
        """
        if files != self._files:
            return None
        self._unchanged = True
        return self._values

    @property
    def old(self) -> Entries:
        """The stored entries by locator (built on first use: a fully valid walk needs none)."""
        if self._old is None:
            self._old = {
                file[0]: (file[1], file[2], value)
                for file, value in zip(self._files, self._values, strict=True)
            }
        return self._old

    def get(self, locator: str, size: int, mtime_ns: int) -> Value | None:
        """The value stored for this file as it is now, or None (read it, then :meth:`put`)."""
        found = self.old.get(locator)
        if found is None or found[0] != size or found[1] != mtime_ns:
            return None
        self.kept[locator] = found
        return found[2]

    def put(self, locator: str, size: int, mtime_ns: int, value: Value) -> None:
        """Remember ``value`` unless the file is too young to be told apart from a rewrite."""
        self.changed = True
        if old_enough(self.started_ns, mtime_ns):
            self.kept[locator] = (size, mtime_ns, value)

    def stored(self) -> Stored | None:
        """What to write for this section, or None when it is what was read."""
        if self._unchanged:
            return None
        if not self.changed and len(self.kept) == len(self._files):
            return None
        files: list[tuple[str, int, int, None]] = []
        values: list[Value] = []
        for locator in sorted(self.kept):
            size, mtime_ns, value = self.kept[locator]
            files.append((locator, size, mtime_ns, None))
            values.append(value)
        return files, values


def read_cache(path: Path, root: Path) -> Any:
    """What :func:`write_cache` wrote for the store at ``root``, or None if it is not usable.

    None for a missing, unreadable, truncated or corrupt file, and for one written by
    other code (see :func:`code_stamp`): each only costs the time to rebuild it.
    """
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 4
    if not data.startswith(MAGIC) or len(data) < head:
        return None
    payload = memoryview(data)[head:]
    if zlib.crc32(payload) != int.from_bytes(data[len(MAGIC) : head], "big"):
        return None
    try:
        stamp, content = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return content if stamp == code_stamp(root) else None


def write_cache(path: Path, root: Path, content: Any) -> None:
    """Write ``content`` (plain data) atomically behind the stamp and a CRC-32; errors ignored."""
    payload = marshal.dumps((code_stamp(root), content))
    # Written in pieces: one joined copy would be another 100 MB at 100,000 records.
    pieces = (MAGIC, zlib.crc32(payload).to_bytes(4, "big"), payload)
    # A read-only .git or a full disk costs speed, never a result.
    with contextlib.suppress(OSError):
        write_atomic(path, pieces)


def write_atomic(path: Path, pieces: Iterable[bytes | memoryview]) -> None:
    """Write ``pieces`` to a temporary file beside ``path`` and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Named per process and thread: an MCP server's calls may write the same cache at once.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            for piece in pieces:
                handle.write(piece)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
