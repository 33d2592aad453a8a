"""Paths people and agents give, as the store's records name them (SPEC.md §12).

One rule for every command: ``about`` and ``brief`` read paths with it, and
``record``/``update`` (CLI, ``--json -``, MCP) save paths with it, so that a
path saved as ``./app.py`` is found by ``about app.py`` and never reported
missing by ``stale``.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import STORE_DIR, Store


@dataclass(frozen=True)
class GivenPath:
    """A path as typed, made repository-relative."""

    #: Top-relative POSIX path (a folder ends with ``/``), or the text as typed when outside.
    path: str
    #: Whether the file or folder exists in the work tree.
    exists: bool
    #: Whether it lies outside the repository (absolute elsewhere, or climbing out with ``..``).
    outside: bool = False


def given_path(store: Store, raw: str) -> GivenPath:
    """``raw`` as a path from the top of the repository (or the store's folder outside git).

    A path that exists from the working folder (``./app.py``, ``/abs/repo/app.py``,
    ``app.py`` typed in ``src/``) is made relative to the top; any other is read as
    top-relative already. Either way ``.`` and repeated ``/`` are dropped and ``x/../y``
    is folded, lexically: whether a missing path is a folder is told by its ``/``.
    """
    from reliora_git.gitrepo import git

    if not raw.strip():
        return GivenPath(raw, False)  # validation names the empty path
    top = git.toplevel(store.root) or store.root
    given = Path(raw)
    if given.is_absolute() or given.exists():
        absolute = Path(os.path.abspath(given))
        relative = _under(absolute, top)
        if relative is None:
            return GivenPath(raw, absolute.exists(), outside=True)
        text = relative.as_posix()
        folder = (absolute.is_dir() or raw.endswith(("/", os.sep))) and text != "."
        return GivenPath(f"{text}/" if folder else text, absolute.exists())
    text = raw.replace("\\", "/")
    folded = posixpath.normpath(text) if text else text
    if folded == ".." or folded.startswith(("../", "/")):
        return GivenPath(raw, False, outside=True)
    if text.endswith("/") and folded != ".":
        folded += "/"
    return GivenPath(folded, (Path(top) / folded).exists())


def repo_path(store: Store, raw: str) -> str:
    """``raw`` as :func:`given_path` makes it; a path outside the repository is an error."""
    found = given_path(store, raw)
    if found.outside:
        from reliora_git.gitrepo import git

        top = git.toplevel(store.root) or store.root
        raise RelioraError(f"{raw} is outside the repository at {top}", code="usage")
    return found.path


def _under(absolute: Path, top: Path) -> Path | None:
    for base in (Path(os.path.realpath(top)), top):
        try:
            return absolute.relative_to(base)
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class PathWarning:
    """A path saved although the work tree has no such file or folder (a typo, or not yet)."""

    path: str

    @property
    def message(self) -> str:
        return f"path {self.path} is not in the work tree; saved as given (check the spelling)"

    def to_json(self) -> dict[str, str]:
        return {"code": "PATH_NOT_IN_WORK_TREE", "path": self.path, "message": self.message}


def saved_paths(store: Store, given: list[str]) -> tuple[list[str], list[PathWarning]]:
    """The paths a record keeps for ``given`` (each once, in order), and what to warn about.

    A path outside the repository cannot be kept (a record's paths are
    repository-relative, SPEC.md §12): it is an error naming it.
    """
    kept: list[str] = []
    warnings: list[PathWarning] = []
    for raw in given:
        found = given_path(store, raw)
        if found.outside:
            from reliora_git.gitrepo import git

            top = git.toplevel(store.root) or store.root
            raise RelioraError(
                f"path {raw} is outside the repository at {top}; paths name files in it",
                code="invalid_path",
            )
        if found.path in kept:
            continue
        kept.append(found.path)
        if not found.exists:
            warnings.append(PathWarning(found.path))
    return kept, warnings


def repo_relative(file: str, cwd: Path, top: Path | None) -> str | None:
    """``file`` (absolute, or relative to ``cwd``) from the top of the work tree; None outside."""
    path = Path(file)
    if not path.is_absolute():
        path = cwd / path
    path = Path(os.path.normpath(path))
    base = top or cwd
    for candidate_base in (base, Path(os.path.realpath(base))):
        for candidate in (path, Path(os.path.realpath(path))):
            try:
                relative = candidate.relative_to(candidate_base).as_posix()
            except ValueError:
                continue
            return None if relative == "." else relative
    return None


def in_store_folder(path: str) -> bool:
    """Whether a repository path is the store's folder or in it: an agent reading a record
    file is pushed nothing for it (the hooks, and eval's replay of them)."""
    return path == STORE_DIR or path.startswith(STORE_DIR + "/")
