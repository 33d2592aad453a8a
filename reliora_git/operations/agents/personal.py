"""``agent install --personal``: the same push, ask and server through files no one else sees
(SPEC.md §14.3).

Each client module names its personal files (``personal_files``): user-level settings under
the person's home (or the client's own variable: ``CODEX_HOME``, ``COPILOT_HOME``,
``CLAUDE_CONFIG_DIR``), or a repository-local file git would see, which then goes into
``.git/info/exclude`` (and out again on uninstall). The files are edited by the same pure
editors as a project install (files.py): what they hold keeps its bytes, installing twice
changes nothing, uninstall gives the bytes back. A user-level file that is a symbolic link
(dotfiles kept in a repository of their own) is written where it points.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reliora_git.operations.agents.clients import CLIENTS, load
from reliora_git.operations.agents.clients.base import ClientFile
from reliora_git.operations.agents.install import (
    FileChange,
    FileState,
    linked_part,
    read_file,
    with_newlines,
    write_file,
)
from reliora_git.records.errors import RelioraError

#: The line above the paths a personal install put into .git/info/exclude.
EXCLUDE_MARK = "# reliora agent install --personal"
#: The line above the store's own line, put there by ``reliora init --personal``.
STORE_MARK = "# reliora init --personal"
STORE_LINE = "/.reliora/"


def home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


def personal_files(root: Path, clients: Sequence[str] = CLIENTS) -> list[ClientFile]:
    """The personal files of ``clients``, in CLIENTS order."""
    found: list[ClientFile] = []
    for name in CLIENTS:
        if name in clients:
            found += load(name).personal_files(root, home())
    return found


def where(root: Path, file: ClientFile) -> Path:
    """The file on disk: a user-level file where a link points, a local one in the repository."""
    path = Path(file.path)
    return Path(os.path.realpath(path)) if path.is_absolute() else root / file.path


def shown(file: ClientFile) -> str:
    """``~/.codex/hooks.json`` for a file under the home folder, else the path as it is."""
    path = Path(file.path)
    try:
        return "~/" + path.relative_to(home()).as_posix() if path.is_absolute() else file.path
    except ValueError:
        return file.path


def plan(root: Path, clients: Sequence[str], action: str) -> list[FileChange]:
    """What ``action`` ("install" or "uninstall") would do to each personal file."""
    changes = []
    for file in personal_files(root, clients):
        link = None if Path(file.path).is_absolute() else linked_part(root, file.path)
        if link is not None:  # the file, or a folder on its way (a committed `.claude` link)
            raise RelioraError(
                "is a symbolic link: replace it with a real file or folder, then run again "
                "(nothing was written)",
                path=link,
                code="invalid_input",
            )
        text = read_file(where(root, file), shown(file))
        edit = file.install if action == "install" else file.uninstall
        after = with_newlines(edit, text, shown(file))
        changes.append(
            FileChange(
                file,
                None if text is None else text.encode("utf-8"),
                None if after is None else after.encode("utf-8"),
            )
        )
    return changes


def apply(root: Path, changes: Sequence[FileChange], action: str) -> None:
    for change in changes:
        path = where(root, change.file)
        if change.action == "unchanged":
            continue
        if change.after is None:
            path.unlink()
            if not Path(change.file.path).is_absolute():
                _remove_if_empty(path.parent, root)  # the `.claude/` the install made
            elif path.parent != home():
                _remove_if_empty(path.parent, path.parent.parent)  # the `~/.codex/` it made
            continue
        write_file(path, change.after, shown(change.file))
    exclude_plan(root, changes, action).write()


def exclude_plan(root: Path, changes: Sequence[FileChange], action: str) -> ExcludeChange:
    """The edit of .git/info/exclude that goes with ``changes``: the repository-local files
    a personal install writes are listed there (and taken out again on uninstall)."""
    local = [c.file.path for c in changes if not Path(c.file.path).is_absolute()]
    if not local:
        return ExcludeChange(None, "", "", "")
    return exclude_change(root, EXCLUDE_MARK, local, keep=action == "install")


def _remove_if_empty(folder: Path, root: Path) -> None:
    """``folder`` (inside ``root``) removed when nothing is left in it."""
    if folder != root and root in folder.parents:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only ever succeeds on an empty folder


def states(root: Path, clients: Sequence[str] = CLIENTS) -> list[FileState]:
    found = []
    for file in personal_files(root, clients):
        text = read_file(where(root, file), shown(file))
        if text is not None and "\r\n" in text:
            text = text.replace("\r\n", "\n")
        found.append(FileState(file, file.state(text, shown(file))))
    return found


def installed_clients(root: Path) -> list[str]:
    """The clients with one of our entries in their personal files."""
    kept = ("installed", "partial", "outdated")
    return [n for n in CLIENTS if any(s.state in kept for s in states(root, (n,)))]


# --- .git/info/exclude ------------------------------------------------------------------------


def exclude_file(root: Path) -> tuple[Path, str] | None:
    """The repository's .git/info/exclude (it may not exist yet), and its path as shown."""
    from reliora_git.gitrepo import git

    out = git.run(["rev-parse", "--git-path", "info/exclude"], root, check=False)
    relative = out.decode("utf-8", "surrogateescape").strip()
    return (root / relative, relative) if relative else None


def read_exclude(path: Path, shown_as: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")  # not read_text: it would drop the \r
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as error:
        raise RelioraError(f"cannot be read: {error}", path=shown_as, code="os_error") from None


def excluded(text: str, mark: str, paths: Sequence[str], keep: bool) -> str:
    """``text`` of an exclude file with our block (``mark``, then ``paths``) added or taken out.

    The person's lines are kept byte for byte: their line endings, and no newline added to
    the last one unless a block of ours follows it.
    """
    ours = [path if path.startswith("/") else f"/{path}" for path in paths]
    newline = "\r\n" if "\r\n" in text else "\n"
    kept: list[str] = []
    skip = False
    for line in text.splitlines(keepends=True):  # drop our block, whatever it held
        bare = line.rstrip("\r\n")
        if bare == mark:
            skip = True
            continue
        if skip and bare in ours:
            continue
        skip = False
        kept.append(line)
    if keep:
        if kept and not kept[-1].endswith(("\n", "\r")):
            kept[-1] += newline
        kept += [f"{line}{newline}" for line in (mark, *ours)]
    return "".join(kept)


def exclude_change(root: Path, mark: str, paths: Sequence[str], keep: bool) -> ExcludeChange:
    """What adding (``keep``) or taking out our block would do to .git/info/exclude."""
    found = exclude_file(root)
    if found is None:
        return ExcludeChange(None, "", "", "")
    path, shown_as = found
    before = read_exclude(path, shown_as)
    return ExcludeChange(path, shown_as, before, excluded(before, mark, paths, keep))


@dataclass(frozen=True)
class ExcludeChange:
    """.git/info/exclude before and after an edit (``path`` None: not in a git repository)."""

    path: Path | None
    shown_as: str
    before: str
    after: str

    @property
    def action(self) -> str:
        if self.before == self.after:
            return "unchanged"
        return "created" if not self.before else "updated"

    def write(self) -> None:
        if self.path is not None and self.before != self.after:
            write_file(self.path, self.after.encode("utf-8"), self.shown_as)


def exclude_store(root: Path) -> ExcludeChange:
    """``init --personal``: the store listed in .git/info/exclude, under its own mark."""
    return exclude_change(root, STORE_MARK, [STORE_LINE], keep=True)


def store_excluded(root: Path) -> bool:
    """Whether ``init --personal`` listed the store in .git/info/exclude."""
    found = exclude_file(root)
    if found is None:
        return False
    lines = read_exclude(*found).splitlines()
    return any(a == STORE_MARK and b == STORE_LINE for a, b in itertools.pairwise(lines))


def tidy(root: Path) -> list[str]:
    """Once no install is left (personal or project): what the hooks kept under the git
    directory (the sessions' memory, the hook log) and the parse cache, removed; the
    folders removed, as shown to the person."""
    from reliora_git.operations.agents.install import installed_clients as project_clients

    if installed_clients(root) or project_clients(root):
        return []
    from reliora_git.gitrepo import git

    out = git.run(["rev-parse", "--git-path", "reliora", "--git-common-dir"], root, check=False)
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) != 2:
        return []
    removed = []
    for folder in (root / lines[0], root / lines[1] / "reliora-cache"):
        if folder.is_dir() and not folder.is_symlink():
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                removed.append(os.path.relpath(folder, root))
    return removed


def todo(root: Path) -> list[tuple[str, str]]:
    """(client, step) for what a person must still do for their personal install to act
    (Codex: trust the user-level hooks), while it is not done."""
    return [
        (f"{name} (personal)", step)
        for name in installed_clients(root)
        for step in load(name).personal_todo(root, home())
    ]
