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
import os
from collections.abc import Sequence
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
            continue
        write_file(path, change.after, shown(change.file))
    local = [c.file.path for c in changes if not Path(c.file.path).is_absolute()]
    if local:
        _exclude(root, local, keep=action == "install")


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


def _exclude(root: Path, paths: Sequence[str], keep: bool) -> None:
    """Our lines for ``paths`` in .git/info/exclude: added (``keep``) or taken out."""
    from reliora_git.gitrepo import git

    out = git.run(["rev-parse", "--git-path", "info/exclude"], root, check=False)
    relative = out.decode("utf-8", "surrogateescape").strip()
    if not relative:
        return
    exclude = root / relative
    try:
        text = exclude.read_bytes().decode("utf-8")  # not read_text: it would drop the \r
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as error:
        raise RelioraError(f"cannot be read: {error}", path=relative, code="os_error") from None
    ours = [f"/{path}" for path in paths]
    # The person's lines kept byte for byte: their line endings, and no newline added to the
    # last one unless a block of ours follows it.
    newline = "\r\n" if "\r\n" in text else "\n"
    kept: list[str] = []
    skip = False
    for line in text.splitlines(keepends=True):  # drop our block, whatever it held
        bare = line.rstrip("\r\n")
        if bare == EXCLUDE_MARK:
            skip = True
            continue
        if skip and bare in ours:
            continue
        skip = False
        kept.append(line)
    if keep:
        if kept and not kept[-1].endswith(("\n", "\r")):
            kept[-1] += newline
        kept += [f"{line}{newline}" for line in (EXCLUDE_MARK, *ours)]
    new = "".join(kept)
    if new != text:
        write_file(exclude, new.encode("utf-8"), relative)
