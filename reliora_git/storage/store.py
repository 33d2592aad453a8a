"""The ``.reliora/`` folder on disk: find it, list and read its files, write new ones atomically.

Every path that comes from a user or a record is checked here before it
touches the file system, and nothing is written outside ``.reliora/``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shlex
import stat
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.validate import is_valid_id
from reliora_git.search.tokens import tokenize

STORE_DIR = ".reliora"
MAX_RECORD_BYTES = 1024 * 1024
SLUG_MAX = 48
#: A temporary file older than this was left by a writer that died (kill -9, power loss).
STALE_TEMP_SECONDS = 3600
#: The name write_new gives its temporary files: ``.<name>.<pid>.<8 hex>.tmp``.
_TEMP_RE = re.compile(r"\..+\.\d+\.[0-9a-f]{8}\.tmp")


@dataclass(frozen=True)
class Store:
    """A store: ``root`` is the folder that holds ``.reliora/`` (locators are relative to it)."""

    root: Path

    @property
    def path(self) -> Path:
        return self.root / STORE_DIR

    @property
    def experiences(self) -> Path:
        return self.path / "experiences"

    @property
    def feedback(self) -> Path:
        return self.path / "feedback"

    def locator(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def find_store(repo: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Store:
    """The store named by ``repo`` (or $RELIORA_REPO), else the nearest one above ``cwd``."""
    explicit = repo if repo is not None else os.environ.get("RELIORA_REPO") or None
    if explicit is not None:
        root = Path(explicit).expanduser().resolve()
        if not (root / STORE_DIR).is_dir():
            raise RelioraError(
                f"no {STORE_DIR}/ store in {root}; run `reliora init` there first",
                path=str(root),
                code="no_store",
            )
        return _not_linked(Store(root))
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / STORE_DIR).is_dir():
            return _not_linked(Store(folder))
    raise RelioraError(
        f"no {STORE_DIR}/ store found in {start} or any folder above it; "
        "run `reliora init` or pass --repo",
        code="no_store",
    )


#: Why a store that is a symbolic link is not read.
LINKED_STORE = (
    "is a symbolic link (not followed): a store elsewhere on disk is not this repository's; "
    "replace the link with the folder itself"
)


def _not_linked(store: Store) -> Store:
    """``store``, unless its ``.reliora`` is a symbolic link: a committed link would make every
    command read (and the hooks push) records from anywhere on disk as this repository's, as
    a linked ``experiences/`` would (linked_folders)."""
    if store.path.is_symlink():
        raise RelioraError(LINKED_STORE, path=STORE_DIR, code="linked_store")
    return store


# --- reading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileEntry:
    """A file (or something posing as one) found under a store folder."""

    locator: str
    path: Path
    size: int
    mtime_ns: int
    #: Why it cannot be read as a record (a symlink, a folder named x.md…), else None.
    unreadable: str | None = None


_new_tuple = tuple.__new__
_LINK = "is a symbolic link, not a regular file (not followed)"


class ScannedFile(NamedTuple):
    """What a walk learns of one ``*.md`` entry (see :func:`scan_markdown`).

    Plain values only, so that a whole walk compares equal to a stored one in one
    C-level list comparison (the search cache relies on that).
    """

    locator: str
    size: int
    mtime_ns: int
    unreadable: str | None

    def entry(self, store: Store) -> FileEntry:
        path = store.root.joinpath(*self.locator.split("/"))
        return FileEntry(self.locator, path, self.size, self.mtime_ns, self.unreadable)


def walk_markdown(store: Store, folder: Path) -> Iterator[FileEntry]:
    """Every ``*.md`` entry below ``folder`` in sorted order, symlinks not followed."""
    for scanned in scan_markdown(store, folder):
        yield scanned.entry(store)


#: Why a store folder that is a symbolic link is not read (SPEC.md §10: links are not followed).
LINKED_FOLDER = "is a symbolic link (not followed): the records behind it are not read"


def linked_folders(store: Store) -> list[RelioraError]:
    """``experiences/`` or ``feedback/`` replaced by a symbolic link: an error to report.

    The walk never follows such a link (nothing outside the store is read), but a
    store whose folder was swapped for one must not look like an empty, valid store:
    a pull request doing it would pass the hook while every record disappears.
    """
    return [
        RelioraError(LINKED_FOLDER, path=store.locator(folder), code="linked_folder")
        for folder in (store.experiences, store.feedback)
        if folder.is_symlink()
    ]


#: A folder as a walk saw it before listing it (storage/locate.py): locator, mtime_ns, inode,
#: and whether the stamp may stand for its listing next time.
FolderStamp = tuple[str, int, int, bool]


def scan_markdown(store: Store, folder: Path) -> list[ScannedFile]:
    """What :func:`walk_markdown` yields, without a Path per file.

    Building a Path (and a relative one for the locator) costs more than the
    stat() itself; a search of a 100,000-record store walks every file on every
    query, so the walk works on strings and the cache decides which files are read.
    """
    if not folder.is_dir() or folder.is_symlink():
        return []
    stack = [(os.fspath(folder), store.locator(folder))]
    found: list[ScannedFile] = []
    append = found.append
    while stack:
        current, prefix = stack.pop()
        try:
            scan_folder(current, prefix, stack, append)
        except FileNotFoundError:
            # A checkout, a pull or an editor's save removed it between the listing and now:
            # what is gone is not there, which the next command's walk sees too.
            continue
    # Locators are unique, so the tuples sort by locator alone.
    found.sort()
    return found


def scan_folder(
    current: str,
    prefix: str,
    stack: list[tuple[str, str]],
    append: Callable[[ScannedFile], None],
) -> None:
    """One folder of :func:`scan_markdown`: its files appended, its folders pushed. An entry
    that vanishes between the listing and its ``stat`` is left out."""
    with os.scandir(current) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            if name.endswith(".md"):
                # One lstat tells a record file from a link, a folder or a device: the
                # one branch taken per record, so it makes no other call.
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # removed since the listing
                mode = info.st_mode
                if stat.S_ISREG(mode):
                    append(
                        _new_tuple(
                            ScannedFile,
                            (f"{prefix}/{name}", info.st_size, info.st_mtime_ns, None),
                        )
                    )
                    continue
                locator = f"{prefix}/{name}"
                if stat.S_ISLNK(mode):
                    append(ScannedFile(locator, 0, 0, _LINK))
                elif stat.S_ISDIR(mode):
                    append(ScannedFile(locator, 0, 0, "is a folder, not a file"))
                    stack.append((entry.path, locator))
                else:
                    append(ScannedFile(locator, 0, 0, "is not a regular file"))
            elif entry.is_symlink():
                # Never followed: it may point anywhere (a pull request can commit
                # `x.md -> /etc/passwd`). A linked folder is reported too, so that its
                # records do not vanish without a word.
                if entry.is_dir():
                    append(ScannedFile(f"{prefix}/{name}", 0, 0, _LINK))
            elif entry.is_dir(follow_symlinks=False):
                stack.append((entry.path, f"{prefix}/{name}"))


def read_text(entry: FileEntry) -> str:
    """The UTF-8 text of a store file; :class:`RecordError` for anything that is not one."""
    if entry.unreadable:
        raise RecordError(entry.unreadable, path=entry.locator)
    if entry.size > MAX_RECORD_BYTES:
        raise _too_large(entry.locator)
    return decode_utf8(read_regular_file(entry.path, entry.locator), entry.locator)


def read_regular_file(path: Path, locator: str) -> bytes:
    """At most MAX_RECORD_BYTES of a regular file, opened without following a symlink.

    The file was regular when its folder was listed, but may have been swapped since
    (a checkout, another process): O_NOFOLLOW refuses a link, O_NONBLOCK keeps a FIFO
    from hanging the open, fstat checks what was really opened, and the read is bounded
    whatever size the listing saw.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RecordError("is a symbolic link, not a regular file", path=locator) from None
        raise RecordError(f"cannot be read: {exc.strerror}", path=locator) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RecordError("is not a regular file", path=locator)
        # Asking for the size seen (plus one byte, to notice growth) rather than the limit:
        # read(limit) allocates a 1 MiB buffer per file, which was a quarter of a cold search.
        wanted = min(info.st_size, MAX_RECORD_BYTES) + 1
        data = handle.read(wanted)
        if len(data) == wanted:  # it grew since fstat: read on, up to the limit
            data += handle.read(MAX_RECORD_BYTES + 1 - len(data))
    if len(data) > MAX_RECORD_BYTES:
        raise _too_large(locator)
    return data


def _too_large(locator: str) -> RecordError:
    return RecordError(f"is larger than {MAX_RECORD_BYTES // 1024} KiB", path=locator)


def decode_utf8(data: bytes, locator: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise RecordError("is not valid UTF-8 text", path=locator, line=line) from None


# --- writing -------------------------------------------------------------------------------


def write_new(path: Path, text: str, store: Store) -> None:
    """Create ``path`` with ``text`` atomically; never overwrite, never write outside the store.

    The text goes to a temporary file in the same folder, is fsynced, then hard-linked
    to its name: link() never replaces an existing file, so neither an existing record
    nor a racing writer's is overwritten, and a crash leaves at most a hidden ``.*.tmp``.
    """
    parent = store_folder(store, path.parent)
    _remove_stale_temps(parent)
    tmp = parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        with open(tmp, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # link() fails when the target exists, so a racing writer can never be overwritten.
        os.link(tmp, path)
    except FileExistsError:
        raise RelioraError(
            "already exists; not overwritten", path=store.locator(path), code="exists"
        ) from None
    except OSError as exc:
        # Name what the user can act on (the record's folder), not the hidden temporary file.
        reason = exc.strerror or str(exc)
        raise RelioraError(
            f"cannot write {path.name} here: {reason}", path=store.locator(parent), code="os_error"
        ) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    _fsync_dir(parent)


#: A lock older than this was left by a killed writer (a rewrite takes milliseconds).
STALE_LOCK_SECONDS = 60


def replace_file(path: Path, expected: bytes, text: str, store: Store) -> None:
    """Rewrite ``path`` with ``text`` atomically, only if it still holds ``expected``.

    ``update`` and ``retire`` read a record, change it and write it back; someone
    else's write in between must never be lost. A lock file next to the record
    (created with O_EXCL) lets one writer in at a time — the other gets a clear
    error — and under it the file is read again and compared with what was read
    first. The new text is fsynced in a temporary file and renamed over the old.
    """
    parent = store_folder(store, path.parent)
    locator = store.locator(path)
    lock = parent / f".{path.name}.lock"
    _refuse_foreign_lock(lock, store)
    _remove_stale_lock(lock)
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        _refuse_foreign_lock(lock, store)  # made in between: say so, not "try again"
        raise RelioraError(
            "is being changed by another command; try again", path=locator, code="busy"
        ) from None
    os.close(fd)
    tmp = parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        if read_regular_file(path, locator) != expected:
            raise RelioraError(
                "changed on disk after it was read; not overwritten (run the command again)",
                path=locator,
                code="changed",
            )
        with open(tmp, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise RelioraError(f"cannot rewrite it: {reason}", path=locator, code="os_error") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            lock.unlink()
    _fsync_dir(parent)


def _refuse_foreign_lock(lock: Path, store: Store) -> None:
    """A lock path that is not a regular file was not made here, and never goes away.

    A folder or a symbolic link in its place (committed by a pull request, or left by
    hand) would turn every "try again" into a lie: name it and how to remove it.
    """
    try:
        mode = lock.lstat().st_mode
    except OSError:
        return
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        what, command = "a folder", "rm -r"
    elif stat.S_ISLNK(mode):
        what, command = "a symbolic link", "rm"
    else:
        what, command = "not a regular file", "rm"
    raise RelioraError(
        f"is {what}, not a lock file reliora made, so the record next to it cannot be "
        f"changed until it is removed: {command} {shlex.quote(str(lock))}",
        path=store.locator(lock),
        code="bad_lock",
    )


def _remove_stale_lock(lock: Path) -> None:
    with contextlib.suppress(OSError):
        if lock.lstat().st_mtime < time.time() - STALE_LOCK_SECONDS:
            lock.unlink()


def store_folder(store: Store, folder: Path) -> Path:
    """``folder``, created if need be, after checking it is inside the store for real.

    Checked before anything is created: lexically (no ``..`` way out), and each step
    from ``.reliora`` down must be a real folder, not a symbolic link that a pull
    request could have committed to point anywhere (``.reliora/feedback -> ~/.ssh``).
    """
    base = Path(os.path.normpath(store.path))
    try:
        relative = Path(os.path.normpath(folder)).relative_to(base)
    except ValueError:
        raise RelioraError(f"refusing to write outside {STORE_DIR}/", path=str(folder)) from None
    current = base
    for part in ("", *relative.parts):
        current = current / part if part else current
        if current.is_symlink():
            raise RelioraError(
                "refusing to write through a symbolic link", path=store.locator(current)
            )
        if not current.exists():
            current.mkdir(exist_ok=True)
        elif not current.is_dir():
            raise RelioraError("is not a folder", path=store.locator(current))
    return current


def _remove_stale_temps(folder: Path) -> None:
    """Delete temporary files that a killed writer left behind (walk_markdown skips them)."""
    cutoff = time.time() - STALE_TEMP_SECONDS
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not _TEMP_RE.fullmatch(entry.name):
                    continue
                try:
                    if entry.is_file(follow_symlinks=False) and (
                        entry.stat(follow_symlinks=False).st_mtime < cutoff
                    ):
                        os.unlink(entry.path)
                except OSError:
                    continue  # another writer removed it first
    except OSError:
        return


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def slugify(title: str) -> str:
    """Lowercase ASCII words of ``title`` joined by hyphens, at most 48 characters."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = ""
    for token in tokenize(ascii_title):
        candidate = f"{slug}-{token}" if slug else token
        if len(candidate) > SLUG_MAX:
            break
        slug = candidate
    return slug or (tokenize(ascii_title) or ["experience"])[0][:SLUG_MAX]


def new_id(title: str) -> str:
    # os.urandom is what secrets.token_hex uses; importing secrets costs a search ~10 ms.
    return f"{slugify(title)}-{os.urandom(3).hex()}"


def check_id(value: str) -> str:
    """``value`` if it may name a record (or a prefix of one), else a usage error."""
    if not is_valid_id(value):
        shown = value if len(value) <= 100 else value[:100] + "…"
        raise RelioraError(
            f"{shown!r} is not a record id: ids are lowercase letters, digits and '-' "
            "(at most 80), never a path",
            code="invalid_id",
        )
    return value
