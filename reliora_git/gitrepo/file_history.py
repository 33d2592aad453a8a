"""The history of files as freshness reads it (SPEC.md §12): the commits that changed them,
newest first, each file with its modes and blobs (one ``git log --raw``); the files a tree
holds; the commits a change adds; where a shallow clone's history stops.

Paths reach git only as literal, top-relative pathspecs after ``--``; a revision only
after ``--end-of-options``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reliora_git.gitrepo import git

#: Fields of one commit in the log: sha, commit time, author, subject.
_FORMAT = "%x1e%H%x1f%ct%x1f%an%x1f%s"


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


def file_log(root: Path, pathspecs: list[str] | None, tip: str = "HEAD") -> Log:
    """Newest first: each commit of ``tip``'s history touching ``pathspecs`` (top-relative;
    None: every commit) and the files it changed, each with its blobs (``--raw``)."""
    specs = [f":(top,literal){p}" for p in pathspecs or []]
    args = ["-c", "core.quotePath=false", "log", f"--format={_FORMAT}", "--raw", "--no-abbrev"]
    out = git.run([*args, "--no-renames", "--end-of-options", tip, "--", *specs], root, check=False)
    commits: Log = []
    for block in out.decode("utf-8", "surrogateescape").split("\x1e")[1:]:
        header, _, names = block.partition("\n")
        sha, time, author, subject = [*header.split("\x1f"), "", "", ""][:4]
        files: dict[str, FileChange] = {}
        for line in names.splitlines():
            meta, tab, name = line.partition("\t")
            fields = meta[1:].split(" ")
            if line.startswith(":") and tab and len(fields) == 5:
                files[name] = (fields[0], fields[1], fields[2], fields[3], fields[4][:1])
        commits.append((Commit(sha, int(time or 0), author, subject), files))
    return commits


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
