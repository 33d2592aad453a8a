"""What every agent client module provides, and what they all read into: the hook event, and
the steps of a transcript.

Pure: no file is read here; the client modules parse JSON that has already
been read, and their file editors take and return text (operations/agents/files.py).
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Step:
    """One thing that happened in a session, in order.

    kind: ``run`` (a shell command; ``failed`` and the ``output`` tail when it failed),
    ``edit`` (``files`` changed), ``prompt`` (the person's words), ``record`` (a record
    saved or updated through an MCP tool), ``feedback`` (``files`` holds the lesson ids).
    """

    kind: str
    text: str = ""
    failed: bool = False
    output: str = ""
    files: tuple[str, ...] = ()


class HookInputError(Exception):
    """The client's JSON is not what its documentation describes (logged, never printed)."""


#: The kinds of moment a hook event is: the session starts, a prompt is sent, a file tool runs,
#: the agent's turn ends (``stop``: SPEC.md §16, the end-of-turn ask).
KINDS = ("session", "prompt", "file", "stop")


@dataclass(frozen=True)
class HookEvent:
    """One hook event of any client, in the terms the push needs."""

    kind: str
    #: The client's own event name (some outputs must echo it).
    name: str
    session: str
    cwd: Path
    prompt: str = ""
    #: Paths as the client gave them: absolute, or relative to ``cwd``.
    files: tuple[str, ...] = ()
    #: The tool reads the file(s), not only edits them (a read may bring a lesson in full).
    reads: bool = False
    #: ``stop``: the session's transcript, and the client whose reader parses it.
    transcript_path: str = ""
    transcript_format: str = ""
    #: ``stop``: the client is already continuing because a stop hook asked it to.
    stop_hook_active: bool = False


@dataclass(frozen=True)
class Noted:
    """A list-valued setting whose item a person may have put there too (Gemini CLI's
    ``context.fileName`` naming AGENTS.md): nothing in the file says who added it, so install
    notes in the clone's git directory that it did, and uninstall takes the item out only
    with that note (``uninstall_unnoted`` leaves the setting as it is)."""

    setting: str
    #: Whether the item is in the setting of this text.
    listed: Callable[[str | None], bool]
    uninstall_unnoted: Callable[[str | None, str], str | None]


@dataclass(frozen=True)
class ClientFile:
    """A project file a client reads, and the pure editor of our entries in it."""

    client: str
    #: Relative to the repository root, with /.
    path: str
    install: Callable[[str | None, str], str]
    uninstall: Callable[[str | None, str], str | None]
    state: Callable[[str | None, str], str]
    noted: Noted | None = None


class ClientModule(Protocol):
    """The surface of each module in this package."""

    NAME: str
    #: The hook event that carries the prompt push (None: the client has no such hook).
    PROMPT_EVENT: str | None
    FILES: tuple[ClientFile, ...]
    SIGNS: tuple[str, ...]

    #: Its transcript read into steps (the end-of-turn ask), or None: it keeps none we read.
    read_transcript: Callable[[Iterable[bytes]], Iterator[Step]] | None
    #: The past session files it keeps for a working tree (``top``, the person's ``home``),
    #: newest first, at most PAST_FILES (``history``'s sessions); None: it keeps none we read.
    past_sessions: Callable[[Path, Path], list[Path]] | None
    #: A past session file (and the working tree ``top``) as the lines ``read_transcript``
    #: takes: only what happened in ``top`` or inside it.
    past_lines: Callable[[Path, Path], Iterable[bytes]] | None

    def parse_event(self, data: dict[str, Any], cwd: Path) -> HookEvent: ...

    def render_output(self, event: HookEvent, text: str) -> str: ...

    def todo(self, root: Path) -> list[str]: ...

    def personal_todo(self, root: Path, home: Path) -> list[str]:
        """What a person must still do by hand for a personal install to take effect."""
        ...

    def personal_files(self, root: Path, home: Path) -> tuple[ClientFile, ...]:
        """The files of a personal install (SPEC.md §14.3): absolute paths under ``home``
        (or the client's own variable), or paths in the repository git is told to ignore."""
        ...


#: Past session files read a client (the newest): ``history`` is one pass, not an archive.
PAST_FILES = 200


def newest(
    paths: Iterable[Path], limit: int = PAST_FILES, keep: Callable[[Path], bool] | None = None
) -> list[Path]:
    """The ``limit`` newest regular files of ``paths`` by modification time (ties: by path),
    newest first, that ``keep`` accepts (asked newest first, until ``limit`` are kept: another
    project's newer sessions do not crowd this one's out). A link, a FIFO, a device or a file
    gone meanwhile is left out: a session folder is anyone's to fill."""
    found = []
    for path in paths:
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found.append((info.st_mtime, path))
    found.sort(key=lambda item: (item[0], str(item[1])), reverse=True)
    kept: list[Path] = []
    for _, path in found:
        if len(kept) >= limit:
            break
        if keep is None or keep(path):
            kept.append(path)
    return kept


def within(cwd: object, top: Path) -> bool:
    """Whether a transcript's ``cwd`` value names ``top`` or a folder inside it (by its path,
    not by the folder name a client derives from it: ``/w/a-b`` is not ``/w/a/b``)."""
    if not isinstance(cwd, str) or not cwd:
        return False
    path = Path(cwd)
    return path == top or top in path.parents


def hook_command(client: str) -> str:
    """What a client's hooks run: `reliora` from PATH, never one machine's virtualenv path;
    without it the command prints nothing and exits 0, so a clone without Reliora works."""
    return f"command -v reliora >/dev/null 2>&1 && reliora hook --client {client} || true"


def cwd_of(data: dict[str, Any], fallback: Path) -> Path:
    """The event's ``cwd`` when it names an existing folder, else ``fallback``."""
    value = data.get("cwd")
    cwd = Path(value) if isinstance(value, str) and value else fallback
    return cwd if cwd.is_dir() else fallback


def text_field(data: dict[str, Any], *names: str) -> str:
    """The first of ``names`` that holds a string in ``data`` ("" when none does)."""
    for name in names:
        value = data.get(name)
        if isinstance(value, str):
            return value
    return ""
