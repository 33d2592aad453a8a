"""The history of files as freshness reads it (SPEC.md §12): the commits that changed them,
newest first, each file with its modes and blobs (one ``git log --raw``); the files a tree
holds; the commits a change adds; where a shallow clone's history stops.

Paths reach git only as literal, top-relative pathspecs after ``--``; a revision only
after ``--end-of-options``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reliora_git.gitrepo import git
from reliora_git.gitrepo.logparse import is_sha, is_time, log_format, records

#: Fields of one commit in the log: sha, commit time, author, subject (logparse.py frames them
#: with NUL: a subject holding any other separator is read as text).
_FORMAT = log_format("%H", "%ct", "%an", "%s")


@dataclass(frozen=True)
class Commit:
    sha: str
    time: int
    author: str
    subject: str

    def to_json(self) -> dict[str, Any]:
        import datetime as dt

        when = dt.datetime.fromtimestamp(self.time, dt.timezone.utc)
        return {
            "commit": self.sha[:12],
            "date": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "author": self.author,
            "subject": self.subject,
        }


#: One file of a commit in the log: (old mode, new mode, old blob, new blob, status letter).
FileChange = tuple[str, str, str, str, str]
#: The log: each commit, newest first, with the files it changed by name.
Log = list[tuple[Commit, dict[str, FileChange]]]


def file_log(
    root: Path, pathspecs: list[str] | None, tip: str = "HEAD", *, from_root: bool = False
) -> Log:
    """Newest first: each commit of ``tip``'s history touching ``pathspecs`` (top-relative,
    or relative to ``root`` when ``from_root``; None: every commit) and the files it
    changed, each with its blobs (``--raw``)."""
    magic = ":(literal)" if from_root else ":(top,literal)"
    specs = [f"{magic}{p}" for p in pathspecs or []]
    args = ["-c", "core.quotePath=false", "log", "-z", f"--format={_FORMAT}", "--raw"]
    args += ["--no-abbrev", "--no-renames", "--end-of-options", tip, "--", *specs]
    out = git.run(args, root, check=False)
    commits: Log = []
    text = out.decode("utf-8", "surrogateescape")
    for (sha, time, author, subject), rest in records(text, 4, _valid):
        commits.append((Commit(sha, int(time), author, subject), _raw_files(rest)))
    return commits


def _valid(header: Sequence[str]) -> bool:
    return is_sha(header[0]) and is_time(header[1])


def _raw_files(tokens: Sequence[str]) -> dict[str, FileChange]:
    """``--raw -z`` lines (``:old new blob blob status``, then the path, NUL-separated): each
    file with its modes, blobs and status; a line not of that shape is skipped."""
    files: dict[str, FileChange] = {}
    meta: list[str] | None = None
    for token in tokens:
        if meta is None:  # the first line of a commit's raw list follows a newline
            line = token.lstrip("\n")
            fields = line[1:].split(" ") if line.startswith(":") else []
            if len(fields) == 5 and all(is_sha(f) for f in fields[2:4]):
                meta = fields
            continue
        if token:  # the path, as written (it may hold spaces, tabs, newlines)
            files[token] = (meta[0], meta[1], meta[2], meta[3], meta[4][:1])
        meta = None
    return files


def existing(root: Path, paths: list[str], tree: str = "HEAD") -> set[str]:
    """The files of ``tree`` that ``paths`` (top-relative; a folder ends with ``/``) name."""
    if not paths:
        return set()
    specs = [f":(top,literal){p}" for p in paths]
    args = ["-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "--full-tree", tree]
    out = git.run([*args, "--", *specs], root, check=False)
    return set(out.decode("utf-8", "surrogateescape").splitlines())


def change_commits(root: Path, base: str, tip: str) -> set[str]:
    """The commits of ``tip`` that ``base`` does not have: the change being judged."""
    out = git.run(["rev-list", "--end-of-options", f"{base}..{tip}"], root, check=False)
    return set(out.decode("ascii", "replace").split())


def shallow_boundary(root: Path) -> set[str]:
    """The commits a shallow clone's history stops at (empty for a full clone)."""
    out = git.run(["rev-parse", "--git-path", "shallow"], root, check=False).strip()
    path = root / out.decode("utf-8", "surrogateescape")
    try:
        return set(path.read_text(encoding="ascii").split())
    except (OSError, UnicodeDecodeError):
        return set()
