"""What one agent session has been pushed: once a session, across every hook of every client.

SPEC.md §14.2: a lesson pushed in a session, in full or as a line, is not
pushed again by any hook of that session, except once in full when a file it
is about is read after it was only a line; the session's pushes stop at
``push_session_budget`` characters, with one line saying so.

The memory is one small text file per session under the git directory
(``$(git rev-parse --git-path reliora)/sessions/``), a line per fact, so that
appending is all a hook ever writes:

    push<TAB>TIME<TAB>CLIENT<TAB>EVENT<TAB>N
                      a push starts: when (UTC), by which client and event, N characters;
                      its full/line lines follow (older files lack it: ledger.py reads both)
    full<TAB>ID       a lesson pushed in full
    line<TAB>ID       a lesson pushed as a line
    file<TAB>PATH     a file whose lessons were pushed (a read of it again needs nothing)
    chars<TAB>N       characters a push added
    spent             the budget line was said
    asked             the end-of-turn ask was made (SPEC.md §16: at most once a session)

Clients run hooks for parallel tool calls at once: :func:`locked` holds an
exclusive ``flock`` on the file while a hook reads what was pushed, composes
its push and appends it, so two hooks never push the same lesson. The brief is
selected before the lock is taken; only composing (pure, fast) happens under it.
Files are marked only after their push is composed: a hook that gives up at its
deadline marks nothing, and the next read of the file tries again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

FOLDER = "sessions"
#: A session file stops growing at this size; past it, nothing more is pushed in the session.
MAX_BYTES = 256 * 1024
#: Session files kept: the newest this many, none older than MAX_AGE seconds.
KEPT = 200
MAX_AGE = 14 * 24 * 3600
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass
class Pushed:
    """What a session has been pushed so far."""

    forms: dict[str, str] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)
    chars: int = 0
    spent: bool = False
    full: bool = False  # the file reached MAX_BYTES
    asked: bool = False


def session_file(state: Path, session: str) -> Path:
    safe = _UNSAFE.sub("_", session)[:64]
    if not safe.strip("."):  # "", "." and ".." name folders, never a session's file
        safe = "no-session"
    if safe != session:  # two ids that clean to the same name stay apart
        safe += "-" + hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return state / FOLDER / safe


def _flat(value: str) -> str:
    return value.replace("\n", " ").replace("\r", " ").replace("\t", " ")


def parse(text: str) -> Pushed:
    pushed = Pushed(full=len(text.encode("utf-8", "replace")) >= MAX_BYTES)
    for line in text.splitlines():
        kind, _, value = line.partition("\t")
        if kind in ("full", "line"):
            # "full" wins: a lesson in full once is never shown again.
            if pushed.forms.get(value) != "full":
                pushed.forms[value] = kind
        elif kind == "file":
            pushed.files.add(value)
        elif kind == "chars" and value.isdigit():
            pushed.chars += int(value)
        elif kind == "spent":
            pushed.spent = True
        elif kind == "asked":
            pushed.asked = True
    return pushed


def peek(state: Path, session: str) -> Pushed:
    """What the session has been pushed, read without the lock (for the hook's fast path)."""
    try:
        return parse(session_file(state, session).read_text("utf-8", "replace"))
    except OSError:
        return Pushed()


class Session:
    """A session file opened under its lock: read what was pushed, then append."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        self.pushed = parse(b"".join(chunks).decode("utf-8", "replace"))

    def add(
        self,
        forms: dict[str, str],
        files: list[str],
        chars: int,
        spent: bool = False,
        asked: bool = False,
        *,
        client: str = "",
        event: str = "",
    ) -> None:
        """Append what a hook pushed; ``client`` and ``event`` say who, for ``agent log``."""
        lines = []
        if forms or spent:  # a push happened: one line that starts it
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            lines.append(f"push\t{stamp}\t{_flat(client) or '-'}\t{_flat(event) or '-'}\t{chars}")
        lines += [f"{form}\t{_flat(lesson)}" for lesson, form in forms.items()]
        lines += [f"file\t{_flat(path)}" for path in files]
        if chars:
            lines.append(f"chars\t{chars}")
        if spent:
            lines.append("spent")
        if asked:
            lines.append("asked")
        if not lines or self.pushed.full:
            return
        data = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
        os.lseek(self._fd, 0, os.SEEK_END)
        os.write(self._fd, data)


@contextlib.contextmanager
def locked(state: Path, session: str) -> Iterator[Session]:
    """The session's file, held exclusively until the block ends."""
    path = session_file(state, session)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield Session(fd)
    finally:
        os.close(fd)  # closing releases the lock


def prune(state: Path) -> None:
    """Keep the newest KEPT session files, none older than MAX_AGE."""
    folder = state / FOLDER
    try:
        entries = [(e.stat().st_mtime, e.path) for e in os.scandir(folder) if e.is_file()]
    except OSError:
        return
    entries.sort(reverse=True)
    oldest = time.time() - MAX_AGE
    for rank, (mtime, path) in enumerate(entries):
        if rank >= KEPT or mtime < oldest:
            with contextlib.suppress(OSError):
                os.unlink(path)
