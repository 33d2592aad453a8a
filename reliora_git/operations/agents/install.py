"""``agent install | uninstall | status``: the project files that wire agent clients to Reliora.

Each client's files (SPEC.md §14.1; operations/clients/ has one module per
client, docs/agents.md names the documentation each one follows) are edited in
place by the pure editors of operations/agents/files.py: what a file already
holds keeps its bytes, and uninstall right after install gives the original
bytes back. Our entries are recognised by what they are; the one kind of item a
person may have put there too (clients/base.py ``Noted``) is noted in the clone's git
directory when install adds it, and uninstall takes it out only with that note.
:func:`plan` reads the files and :func:`apply` writes them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reliora_git.operations.agents.clients import CLIENTS, DEFAULT_CLIENTS, load
from reliora_git.operations.agents.clients.base import ClientFile
from reliora_git.records.errors import RelioraError


def client_files(clients: Sequence[str] = CLIENTS) -> list[ClientFile]:
    """The files of ``clients``, in CLIENTS order."""
    return [file for name in CLIENTS if name in clients for file in load(name).FILES]


def check_clients(names: Sequence[str]) -> list[str]:
    import difflib

    unknown = [name for name in names if name not in CLIENTS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], CLIENTS, n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise RelioraError(
            f"unknown agent client {unknown[0]!r}{hint}; choose from {', '.join(CLIENTS)}",
            code="invalid_option",
        )
    return list(dict.fromkeys(names))


def default_clients(root: Path, personal: bool = False) -> list[str]:
    """What install wires without CLIENT: for a project, the clients its files show (else
    Claude Code and Codex); for a person, Claude Code and Codex."""
    return list(DEFAULT_CLIENTS) if personal else detected_clients(root)


def detected_clients(root: Path) -> list[str]:
    """The clients whose files the repository already has, else Claude Code and Codex."""
    found = [c for c in CLIENTS if any((root / sign).exists() for sign in load(c).SIGNS)]
    return found or list(DEFAULT_CLIENTS)


# --- files -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    file: ClientFile
    before: bytes | None
    after: bytes | None
    #: "add" when install added the file's noted item, "drop" when uninstall took it out.
    note: str | None = None
    #: Install: the file as it was and as install left it, to note (ORIGINAL); uninstall:
    #: True when that note is done with.
    original: tuple[str, str] | None = None
    forget_original: bool = False

    @property
    def action(self) -> str:
        if self.before == self.after:
            return "unchanged"
        if self.before is None:
            return "created"
        return "removed" if self.after is None else "updated"


def read_file(path: Path, name: str) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise RelioraError("is a folder, not a file", path=name, code="os_error") from None
    except OSError as error:
        raise RelioraError(
            f"cannot be read: {error.strerror}", path=name, code="os_error"
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RelioraError(
            "is not UTF-8 text; left alone", path=name, code="invalid_input"
        ) from None


def with_newlines(
    edit: Callable[[str | None, str], str | None], text: str | None, name: str
) -> str | None:
    """Run ``edit`` on ``text`` in \\n form when the file uses \\r\\n throughout, and back."""
    crlf = text is not None and "\r\n" in text and "\n" not in text.replace("\r\n", "")
    result = edit(text.replace("\r\n", "\n") if crlf and text is not None else text, name)
    return result.replace("\n", "\r\n") if crlf and result is not None else result


NOTES_FILE = "agent-notes.json"
#: The notes' key of a file install changed: [the file before, the file as install left it].
#: Uninstall puts the first back when the file is still the second: byte for byte, the
#: containers install emptied included (a tracked `{"mcpServers": {}}` is not deleted).
ORIGINAL = "original:"


def notes_path(root: Path) -> Path | None:
    """Where this clone keeps what install added (``$(git rev-parse --git-path reliora)``)."""
    from reliora_git.gitrepo import git

    try:
        out = git.run(["rev-parse", "--git-path", "reliora"], root, check=False)
    except RelioraError:
        return None
    line = out.decode("utf-8", "surrogateescape").strip()
    return (root / line / NOTES_FILE) if line else None


def read_notes(root: Path) -> dict[str, list[str]]:
    """File path -> the noted settings whose item install added in this clone."""
    import json

    path = notes_path(root)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        key: [v for v in value if isinstance(v, str)]
        for key, value in data.items()
        if isinstance(key, str) and isinstance(value, list)
    }


def _write_notes(root: Path, changes: Sequence[FileChange]) -> None:
    import json

    noted = [change for change in changes if change.note and change.file.noted]
    originals = [c for c in changes if c.original is not None or c.forget_original]
    path = notes_path(root) if noted or originals else None
    if path is None:
        return
    notes = read_notes(root)
    for change in noted:
        assert change.file.noted is not None
        setting = change.file.noted.setting
        held = [s for s in notes.get(change.file.path, []) if s != setting]
        notes[change.file.path] = [*held, setting] if change.note == "add" else held
    for change in originals:
        key = ORIGINAL + change.file.path
        notes[key] = list(change.original) if change.original is not None else []
    notes = {key: value for key, value in notes.items() if value}
    write_file(path, (json.dumps(notes, indent=2, sort_keys=True) + "\n").encode(), NOTES_FILE)


def plan(root: Path, clients: Sequence[str], action: str) -> list[FileChange]:
    """What ``action`` ("install" or "uninstall") would do to each file of ``clients``.

    A file two clients share (AGENTS.md: Codex and Gemini CLI) is planned once; uninstall
    leaves it alone while a client that is not being removed still has its entries there.
    """
    keep: set[str] = set()
    notes = read_notes(root)
    if action == "uninstall":
        others = [c for c in installed_clients(root) if c not in clients]
        keep = {file.path for file in client_files(others)}
    changes = []
    seen: set[str] = set()
    for file in client_files(clients):
        if file.path in seen or file.path in keep:
            continue
        seen.add(file.path)
        link = linked_part(root, file.path)
        if link is not None:
            raise RelioraError(
                "is a symbolic link: agent install never writes through a link or copies what "
                "it points to into the repository; replace it with a real file or folder, "
                "then run again (nothing was written)",
                path=link,
                code="invalid_input",
            )
        text = read_file(root / file.path, file.path)
        before_install = notes.get(ORIGINAL + file.path)
        if action == "uninstall" and before_install and len(before_install) == 2:
            was, left = before_install
            if text == left:  # as install left it: put back exactly what it was
                changes.append(_restored(file, text, was))
                continue
        edit = file.install if action == "install" else file.uninstall
        noted = file.noted is not None and file.noted.setting in notes.get(file.path, [])
        if action == "uninstall" and file.noted is not None and not noted:
            edit = file.noted.uninstall_unnoted  # the item may be a person's: left as it is
        after = with_newlines(edit, text, file.path)
        note = None
        if file.noted is not None and action == "install":
            added = not file.noted.listed(text) and file.noted.listed(after)
            note = "add" if added else None
        elif file.noted is not None and noted and not file.noted.listed(after):
            note = "drop"
        before_bytes = None if text is None else text.encode("utf-8")
        after_bytes = None if after is None else after.encode("utf-8")
        original = None
        if action == "install" and text is not None and after is not None and after != text:
            first = before_install[0] if before_install else text  # the file before any install
            original = (first, after)
        forget = action == "uninstall" and bool(before_install)
        changes.append(FileChange(file, before_bytes, after_bytes, note, original, forget))
    return changes


def _restored(file: ClientFile, text: str | None, before: str) -> FileChange:
    """The uninstall of a file still as install left it: exactly what it was before."""
    current = None if text is None else text.encode("utf-8")
    return FileChange(file, current, before.encode("utf-8"), forget_original=True)


def apply(root: Path, changes: Sequence[FileChange]) -> None:
    """Write each change, then note what install added (after the files: a note never names
    an item that is not there)."""
    for change in changes:
        path = root / change.file.path
        if change.action == "unchanged":
            continue
        if change.after is None:
            path.unlink()
            _prune_empty_folders(root, path.parent)
            continue
        write_file(path, change.after, change.file.path)
    _write_notes(root, changes)


def write_file(path: Path, data: bytes, name: str) -> None:
    """Replace ``path`` atomically, keeping its permissions."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o7777 if path.exists() else None
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            if mode is not None:
                os.chmod(tmp, mode)
            else:
                os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise RelioraError(
            f"cannot be written: {error.strerror}", path=name, code="os_error"
        ) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _prune_empty_folders(root: Path, folder: Path) -> None:
    """Remove the folders install created for a file (.claude/, .cursor/rules/) once empty."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


@dataclass(frozen=True)
class FileState:
    file: ClientFile
    state: str  # absent, not installed, partial, installed, outdated, another 'reliora' server


def linked_part(root: Path, path: str) -> str | None:
    """The first part of ``path`` (relative to ``root``) that is a symbolic link, or None."""
    current = root
    parts = path.split("/")
    for depth, part in enumerate(parts, start=1):
        current = current / part
        if current.is_symlink():
            return "/".join(parts[:depth])
        if not current.exists():
            return None
    return None


def states(root: Path, clients: Sequence[str] = CLIENTS) -> list[FileState]:
    """Each file's state, judged on its \n form (as install edits it); a file reached
    through a symbolic link is not read."""
    found = []
    for file in client_files(clients):
        if linked_part(root, file.path) is not None:
            found.append(FileState(file, "a symbolic link (left alone)"))
            continue
        text = read_file(root / file.path, file.path)
        if text is not None and "\r\n" in text:
            text = text.replace("\r\n", "\n")
        found.append(FileState(file, file.state(text, file.path)))
    return found


def states_of_installed(root: Path) -> list[FileState]:
    """Each file's state, where a file one client shares with another (.mcp.json: Claude Code
    and Copilot; AGENTS.md: Codex and Gemini CLI) counts as installed only for a client that
    is installed: never "copilot .mcp.json installed" after installing Claude Code alone."""
    installed = set(installed_clients(root))
    found = []
    for state in states(root):
        shared = [c for c in CLIENTS if c != state.file.client and c in installed
                  and any(f.path == state.file.path for f in load(c).FILES)]  # fmt: skip
        if state.file.client not in installed and shared and state.state != "absent":
            state = FileState(state.file, f"not installed (the file is {shared[0]}'s too)")
        found.append(state)
    return found


def installed_clients(root: Path) -> list[str]:
    """The clients with at least one of our entries in their own files (a shared file such as
    AGENTS.md counts for each client that uses it only with another of its files)."""
    found: list[str] = []
    for name in CLIENTS:
        kept = [s for s in states(root, (name,)) if s.state in ("installed", "partial", "outdated")]
        shared = {f.path for c in CLIENTS if c != name for f in load(c).FILES}
        if any(s.file.path not in shared for s in kept) or (
            kept and all(f.path in shared for f in load(name).FILES)
        ):
            found.append(name)
    return found


def todo(root: Path) -> list[tuple[str, str]]:
    """(client, step) for what a person must still do by hand: each wired client's own steps,
    then the git hook of this clone ("" as the client: it is not a client's)."""
    steps = [(name, step) for name in installed_clients(root) for step in load(name).todo(root)]
    hook = git_hook_step(root)
    if hook:
        steps.append(("git", hook))
    return steps


def git_hook_step(root: Path) -> str | None:
    from reliora_git.gitrepo import git, hooks

    if git.toplevel(root) is None:
        return None
    try:
        state = hooks.state(root)
    except RelioraError:
        return None
    if state.installed or state.foreign or state.managed_by is not None:
        return None  # ours, or another hook manager's (pre-commit may run ours): no advice
    return (
        "this clone has no Reliora git hook, so guards do not check commits here: "
        "reliora hooks install"
    )


# --- what to do next ---------------------------------------------------------------------------


def next_steps(
    root: Path, after: str, clients: Sequence[str] = (), personal: bool = False
) -> list[str]:
    """What is left to do after ``init`` or ``agent install`` (``after``, of ``clients``;
    ``personal``: nothing to commit)."""
    import shutil

    from reliora_git.extras import install_command
    from reliora_git.gitrepo import git, hooks

    in_git = git.toplevel(root) is not None
    steps = []
    if after == "init" and not personal:
        steps.append(
            "Commit the store: git add .reliora && git commit -m 'Add the Reliora store'"
            if in_git
            else "Put this folder under git (git init), then commit .reliora/"
        )
    elif after == "init":
        pass  # a personal store is never committed
    else:
        files = list(dict.fromkeys(f.path for f in client_files() if (root / f.path).exists()))
        if files and not personal:
            steps.append(
                f"Commit the agent files so every clone gets them: git add {' '.join(files)}"
            )
        if shutil.which("reliora") is None:
            steps.append(
                # reliora-git is installed from a clone or a wheel, not by an index name.
                "Put `reliora` on PATH for the agent (in a clone of reliora-git: "
                f"{install_command('mcp', force=False)}): until then the hooks print nothing"
            )
        steps.append("Restart the agents, so that they read their new files")
        if personal:
            home = Path(os.environ.get("HOME") or Path.home())
            steps += [
                f"{name}: {step}"
                for name in clients
                for step in load(name).personal_todo(root, home)
            ]
        else:
            steps += [f"{name}: {step}" for name in clients for step in load(name).todo(root)]
    if in_git and not personal:  # a personal store: nothing of it goes through commits
        try:
            hook_state = hooks.state(root)
        except RelioraError:
            hook_state = None
        if hook_state is not None and not hook_state.installed and hook_state.managed_by is None:
            steps.append("Check lessons at commit: reliora hooks install")
    if after == "init" and not installed_clients(root):
        steps.append(
            "Put lessons in front of your coding agent, for you alone: reliora agent install "
            "--personal (Claude Code and Codex by default; see docs/agents.md)"
            if personal
            else "Put lessons in front of your coding agent: reliora agent install "
            "(Claude Code and Codex by default; see docs/agents.md)"
        )
    return steps
