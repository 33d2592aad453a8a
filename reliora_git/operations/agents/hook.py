"""``reliora hook``: what an agent client's hook event gets back (SPEC.md §14.1).

Every client runs the same command, ``reliora hook --client NAME``, with one JSON
object on stdin in its own format; the client's module in clients/ reads it into a
:class:`HookEvent` of one of four kinds and renders what the client must print back:

* ``session`` (the session starts): a short brief from the branch's changes;
* ``prompt`` (a prompt is sent): the quiet push for the prompt (brief/push.py);
* ``file`` (a file tool is about to run): the lessons about that file, once per file
  per session (the first read is when an agent forms its plan);
* ``stop`` (the turn ends): the end-of-turn ask (capture.py).

Nothing here may break a session: every failure becomes one line in a log
under the git directory (``agent status`` shows it), never output. The state
kept per session (which files were briefed) and the log live in
``$(git rev-parse --git-path reliora)``, both bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.operations.agents.clients.base import HookEvent, HookInputError

if TYPE_CHECKING:
    from reliora_git.operations.brief.push import Candidate

from reliora_git.records.errors import RelioraError

__all__ = ["GitPlaces", "HookEvent", "HookInputError", "answer", "parse_event"]

#: Lessons at session start: a short brief (the branch's files may be many).
SESSION_START_LIMIT = 3
LOG_NAME = "hook.log"
#: The log is cut to its newest half when it grows past this.
LOG_MAX_BYTES = 64 * 1024
WARM_LOCK = "warming"
WARM_LOCK_AGE = 600


@dataclass(frozen=True)
class GitPlaces:
    """The work tree's top and our folder in the git directory (None outside git)."""

    top: Path | None
    state: Path | None


def parse_event(raw: bytes, client: str) -> HookEvent:
    """The hook input of ``client``, read by its module; HookInputError when it is not an
    event that client's documentation describes."""
    from reliora_git.operations.agents import clients

    if not raw.strip():
        raise HookInputError("no JSON on stdin")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise HookInputError("stdin is not JSON") from None
    if not isinstance(data, dict):
        raise HookInputError("stdin is not a JSON object")
    try:
        module = clients.load(client)
    except KeyError:
        raise HookInputError(f"no hooks are defined for client {mask(client)!r}") from None
    return module.parse_event(data, Path.cwd())


def git_places(cwd: Path) -> GitPlaces:
    """One ``git rev-parse`` for the top of the work tree and ``--git-path reliora``."""
    from reliora_git.gitrepo import git

    try:
        out = git.run(["rev-parse", "--show-toplevel", "--git-path", "reliora"], cwd, check=False)
    except RelioraError:
        return GitPlaces(None, None)
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) != 2:
        return GitPlaces(None, None)
    return GitPlaces(Path(lines[0]), (cwd / lines[1]).resolve())


def answer(event: HookEvent, places: GitPlaces, client: str = "") -> str:
    """The text to push for ``event`` ("" for nothing); RelioraError for a store problem.

    Every hook pushes the quiet form (operations/brief/push.py), once a session
    (operations/agents/session.py): the lessons are selected first, then the session's
    memory is locked only while the push is composed and recorded; ``client`` names the
    client in that memory (``agent log``).
    """
    from reliora_git.operations.agents.switches import personal_switch
    from reliora_git.storage.store import find_store

    try:
        store = find_store(cwd=event.cwd)
    except RelioraError as error:
        if error.code == "no_store" and not wired(places.top):
            return ""  # a user-level hook in a repository without lessons: not even a log line
        raise
    if personal_switch(places.top) is not None:  # RELIORA_AGENT=off, git config reliora.agent
        return ""
    if event.kind == "stop":  # the end-of-turn ask (SPEC.md §16), all in agents/capture.py
        from reliora_git.operations.agents.capture import ask

        return ask(event, places.top, places.state)
    relative: list[str] = []
    if event.kind == "file":
        from reliora_git.operations.paths import in_store_folder, repo_relative

        for file in event.files:
            path = repo_relative(file, event.cwd, places.top)
            if path is None or in_store_folder(path):
                continue
            relative.append(path)
        relative = list(dict.fromkeys(relative))
        if not relative:
            return ""
        if places.state is not None:
            from reliora_git.operations.agents.session import peek

            seen = peek(places.state, event.session).files
            if all(path in seen for path in relative):
                return ""  # answered before the brief's modules are even imported
    elif event.kind == "prompt" and not event.prompt.strip():
        return ""
    # Imported here: a file already briefed in this session needs none of it.
    from reliora_git.operations.agents import session
    from reliora_git.operations.brief import push
    from reliora_git.operations.brief.selection import Situation
    from reliora_git.storage.config import load_config

    settings = load_config(store)
    if not settings.push or settings.agent.strip().lower() == "off":
        return ""
    if event.kind == "file":
        _, found = push.candidates(store, Situation(files=tuple(relative)))
    elif event.kind == "prompt":
        _, found = push.candidates(store, Situation(event.prompt))
    else:
        if places.state is not None:
            session.prune(places.state)
        from reliora_git.storage.index import open_index

        index = open_index(store)
        _, found = push.candidates(
            store, Situation(changes=True, limit=SESSION_START_LIMIT), index=index
        )
        guarded = any(doc is not None and doc.guards for doc in index.inverted.docs)
        notice = clone_notice(places) if guarded else ""
        guide = instructions(places.top)
        if notice or guide:
            rest = _compose_and_record(
                event, places, settings.push_session_budget, found, relative, client
            )
            return "\n\n".join(part for part in (guide, notice, rest) if part)
    return _compose_and_record(event, places, settings.push_session_budget, found, relative, client)


#: The files a project install puts the hooks in.
HOOK_FILES = (
    ".claude/settings.json",
    ".codex/hooks.json",
    ".gemini/settings.json",
    ".github/hooks/reliora.json",
    ".cursor/hooks.json",
)


def wired(top: Path | None) -> bool:
    """Whether the repository's committed files run the hook (a project install): then a
    missing store is worth a log line; a user-level hook elsewhere says nothing."""
    from reliora_git.operations.agents.files import HOOK_MARK

    for name in HOOK_FILES if top is not None else ():
        assert top is not None
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if HOOK_MARK in (top / name).read_text(encoding="utf-8")[:1_000_000]:
                return True
    return False


#: The files a project install puts the instruction block in (clients/instructions.py).
INSTRUCTION_FILES = (
    "CLAUDE.md",
    "AGENTS.md",
    ".github/copilot-instructions.md",
    ".cursor/rules/reliora.mdc",
)


def instructions(top: Path | None) -> str:
    """At session start with a personal install, the instruction block when no instruction file
    of the repository holds it (a personal install commits none: SPEC.md §14.3), else ""."""
    from reliora_git.operations.agents.files import MD_BEGIN

    if top is None:
        return ""
    from reliora_git.operations.agents.personal import installed_clients

    if not installed_clients(top):
        return ""  # a project install puts the block in a file; without one, nothing to say
    for name in INSTRUCTION_FILES:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if MD_BEGIN in (top / name).read_text(encoding="utf-8")[:1_000_000]:
                return ""
    from reliora_git.gitrepo import git
    from reliora_git.operations.agents.clients.instructions import session_text
    from reliora_git.records.errors import RelioraError

    try:
        shared = git.store_in_git(top)
    except RelioraError:
        shared = True  # cannot tell: the wording a project install has
    return session_text(shared)


#: Under the git directory: the session-start notice about the git hook was given in this clone.
NOTICE_MARK = "hook-notice-given"


def clone_notice(places: GitPlaces) -> str:
    """Once per clone, at a session start in a store with guards: this clone has no git hook,
    so the guards do not run here."""
    if places.state is None or places.top is None or (places.state / NOTICE_MARK).exists():
        return ""
    from reliora_git.operations.agents.install import git_hook_step

    step = git_hook_step(places.top)
    if step is None:
        return ""
    with contextlib.suppress(OSError):
        places.state.mkdir(parents=True, exist_ok=True)
        (places.state / NOTICE_MARK).touch()
    return (
        "Reliora: this clone has no Reliora git hook, so lessons' guards do not check commits "
        "here (CI review still does). Tell the person: `reliora hooks install`."
    )


def _compose_and_record(
    event: HookEvent,
    places: GitPlaces,
    budget: int,
    found: list[Candidate],
    relative: list[str],
    client: str = "",
) -> str:
    """The push of ``found`` for ``event``, composed and recorded in the session's memory;
    ``budget``: the store's ``push_session_budget``."""
    from reliora_git.operations.agents import session
    from reliora_git.operations.brief import push

    if not found:
        return ""
    read = relative if event.reads else []
    if places.state is None:  # outside git: no memory, every push stands alone
        return push.compose(found, read=read, limit=budget or None)[1]
    with session.locked(places.state, event.session) as held:
        pushed = held.pushed
        if pushed.spent or pushed.full:
            return ""
        step = push.session_step(found, pushed.forms, pushed.chars, read, budget)
        entries, text = step.entries, step.text
        if step.spent:
            held.add({}, relative, len(push.SPENT), spent=True, client=client, event=event.name)
            return push.SPENT
        if not entries:
            held.add({}, relative, 0)
            return ""
        forms = {entry.candidate.lesson.id: entry.form for entry in entries}
        held.add(forms, relative, len(text), client=client, event=event.name)
        return text


def start_warming(state: Path | None, cwd: Path) -> bool:
    """Build the store index in a detached process, so that the next hook is fast.

    A hook that gave up at its deadline is often the first one after a clone or
    a large pull, reading every record: its work is lost when it exits, and the
    next hook would give up the same way. One warming process at a time (a lock
    file, taken over after WARM_LOCK_AGE seconds).
    """
    import subprocess
    import sys

    if state is None:
        return False
    lock = state / WARM_LOCK
    try:
        state.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            if time.time() - lock.stat().st_mtime > WARM_LOCK_AGE:
                lock.unlink()
        os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        return False  # another one is at it
    try:
        subprocess.Popen(
            [sys.executable, "-m", "reliora_git", "hook", "--warm", os.fspath(cwd)],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        with contextlib.suppress(OSError):
            lock.unlink()
        return False
    return True


def warm(cwd: Path) -> None:
    """Open (and so build and save) the store index of the store at ``cwd``; release the lock."""
    from reliora_git.storage.index import open_index
    from reliora_git.storage.store import find_store

    places = git_places(cwd)
    try:
        open_index(find_store(cwd=cwd))
    except Exception as error:  # a background process: the log is the only place to say it
        log(places.state, "warm", "", describe(error))
    finally:
        if places.state is not None:
            with contextlib.suppress(OSError):
                (places.state / WARM_LOCK).unlink()


# --- the log ---------------------------------------------------------------------------------


def mask(text: str, limit: int = 200) -> str:
    """One line of ``text`` for the log: no control or invisible characters, bounded."""
    from reliora_git.records.text import remove_invisible

    flat = " ".join(remove_invisible(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def log(state: Path | None, client: str, event: str, message: str) -> None:
    """Append one line to the hook log; never raises (the hook must not fail)."""
    if state is None:
        return
    path = state / LOG_NAME
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = f"{stamp} {client} {event or '-'}: {mask(message)}\n"
    try:
        state.mkdir(parents=True, exist_ok=True)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size > LOG_MAX_BYTES:
            kept = path.read_bytes()[-LOG_MAX_BYTES // 2 :]
            kept = kept[kept.find(b"\n") + 1 :]
            tmp = path.with_name(f".{LOG_NAME}.{os.getpid()}.tmp")
            tmp.write_bytes(kept)
            os.replace(tmp, path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def log_tail(state: Path | None, lines: int = 5) -> list[str]:
    if state is None:
        return []
    try:
        data = (state / LOG_NAME).read_bytes()[-16 * 1024 :]
    except OSError:
        return []
    return [mask(line, 300) for line in data.decode("utf-8", "replace").splitlines()[-lines:]]


def describe(error: BaseException) -> str:
    if isinstance(error, HookInputError):
        return str(error)
    if isinstance(error, RelioraError):
        return f"{error.code}: {error}"
    return f"error {type(error).__name__}: {error}"
