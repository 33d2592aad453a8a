"""``reliora agent log``: what recent sessions were pushed, read from the session memory.

Every hook appends to its session's file (operations/agents/session.py) under the git
directory; this module only reads those files. A push is a ``push`` line (time, client,
event, characters) and the ``full``/``line`` lines after it. Files written before the
``push`` line existed still read: their lessons and ``chars`` lines make pushes with no
time, client or event.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliora_git.operations.agents.session import FOLDER, session_file
from reliora_git.records.errors import RelioraError

#: Sessions ``agent log`` lists without an argument, newest first.
DEFAULT_SESSIONS = 20
#: The most of one session file read (the memory stops growing at a quarter of this).
MAX_READ = 1024 * 1024


@dataclass
class PushRecord:
    """One push of a hook: when, by which client and event, the lessons and their form."""

    time: str | None
    client: str | None
    event: str | None
    chars: int
    lessons: list[tuple[str, str]] = field(default_factory=list)
    #: The push was the line saying the session's budget was reached.
    spent: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "client": self.client,
            "event": self.event,
            "chars": self.chars,
            "lessons": [{"id": lesson, "form": form} for lesson, form in self.lessons],
            "budgetReached": self.spent,
        }


@dataclass
class SessionLog:
    """One session's pushes, oldest first."""

    session: str
    #: When the session's file last changed (UTC, ISO 8601).
    modified: str
    pushes: list[PushRecord]
    asked: bool = False

    @property
    def total(self) -> int:
        return sum(push.chars for push in self.pushes)

    @property
    def clients(self) -> list[str]:
        return list(dict.fromkeys(p.client for p in self.pushes if p.client))

    def to_json(self, with_pushes: bool = True) -> dict[str, Any]:
        document: dict[str, Any] = {
            "session": self.session,
            "modified": self.modified,
            "clients": self.clients,
            "pushCount": len(self.pushes),
            "lessonCount": len({lesson for p in self.pushes for lesson, _ in p.lessons}),
            "totalChars": self.total,
            "asked": self.asked,
        }
        if with_pushes:
            document["pushes"] = [push.to_json() for push in self.pushes]
        return document


def parse_pushes(text: str) -> tuple[list[PushRecord], bool]:
    """The pushes in a session file's text, oldest first, and whether the ask was made."""
    pushes: list[PushRecord] = []
    current: PushRecord | None = None  # the push whose lesson lines come next
    legacy = False  # ``current`` has no push line: its chars line closes it
    asked = False
    for line in text.splitlines():
        kind, _, value = line.partition("\t")
        if kind == "push":
            parts = value.split("\t")
            if len(parts) != 4 or not parts[3].isdigit():
                current = None
                continue
            stamp, client, event, chars = parts
            current = PushRecord(stamp, _named(client), _named(event), int(chars))
            legacy = False
            pushes.append(current)
        elif kind in ("full", "line"):
            if current is None:
                current, legacy = PushRecord(None, None, None, 0), True
                pushes.append(current)
            current.lessons.append((value, kind))
        elif kind == "chars" and value.isdigit():
            if current is None:  # an older file's budget line: a push of its own
                current, legacy = PushRecord(None, None, None, 0), True
                pushes.append(current)
            if legacy:
                current.chars = int(value)
            current = None
        elif kind == "spent":
            if pushes:
                pushes[-1].spent = True
        elif kind == "asked":
            asked = True
    return pushes, asked


def _named(value: str) -> str | None:
    return None if value in ("", "-") else value


def _stamp(mtime: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime))


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        return handle.read(MAX_READ).decode("utf-8", "replace")


def recent_sessions(state: Path | None, limit: int = DEFAULT_SESSIONS) -> list[SessionLog]:
    """The ``limit`` sessions whose files changed last, newest first (none outside git)."""
    if state is None:
        return []
    try:
        entries = [
            (entry.stat().st_mtime, entry.name, Path(entry.path))
            for entry in os.scandir(state / FOLDER)
            if entry.is_file(follow_symlinks=False)
        ]
    except OSError:
        return []
    entries.sort(reverse=True)
    found = []
    for mtime, name, path in entries[:limit]:
        try:
            pushes, asked = parse_pushes(_read(path))
        except OSError:
            continue  # pruned by a hook meanwhile
        found.append(SessionLog(name, _stamp(mtime), pushes, asked))
    return found


#: Sessions whose pushes ``push_counts`` reads, newest first.
COUNTED_SESSIONS = 1000


def push_counts(state: Path | None, limit: int = COUNTED_SESSIONS) -> dict[str, int]:
    """Lesson id → how many pushes of the recent sessions named it (in full or as a line):
    which lessons agents are handed most (``check --suggest`` names those first)."""
    counts: dict[str, int] = {}
    for log in recent_sessions(state, limit):
        for push in log.pushes:
            for lesson in {lesson for lesson, _ in push.lessons}:
                counts[lesson] = counts.get(lesson, 0) + 1
    return counts


def session_log(state: Path | None, session: str) -> SessionLog:
    """One session's pushes, by the id the client gave it or the name of its file.

    The id is cleaned exactly as the hooks clean it (session.session_file), so no id
    reaches outside the sessions folder; an unknown one is a usage error naming the
    sessions there are.
    """
    if state is not None and session and "/" not in session and session not in (".", ".."):
        folder = state / FOLDER
        for path in (session_file(state, session), folder / session):
            if path.parent != folder or path.is_symlink() or not path.is_file():
                continue
            try:
                pushes, asked = parse_pushes(_read(path))
                mtime = path.stat().st_mtime
            except OSError:
                continue
            return SessionLog(path.name, _stamp(mtime), pushes, asked)
    known = [log.session for log in recent_sessions(state, 3)]
    hint = f" (recent: {', '.join(known)})" if known else " (no session was pushed here yet)"
    raise RelioraError(f"no session {session[:80]!r} in the session memory{hint}", code="not_found")
