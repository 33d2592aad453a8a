"""Commits with their messages and files, from ``git log`` (for ``history`` and
``record --from-commit``, SPEC.md §16).

One ``git log`` with ``-z --name-only`` and a format of separator characters; the parser
(:func:`parse_log`) is pure and kept apart from the function that runs git. A revision or
date given by a person reaches git as the value of one ``--`` option or after a
``--end-of-options``, never as an option of its own.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reliora_git.gitrepo import git
from reliora_git.records.errors import RelioraError

#: Fields of one commit: sha, parents, author time, author, subject, body; then the file names.
_FORMAT = "%x1e%H%x1f%P%x1f%at%x1f%an%x1f%s%x1f%b%x1f"
_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    time: int  # author time, seconds since the epoch
    author: str
    subject: str
    body: str
    files: tuple[str, ...]  # changed files (against the first parent), repository paths
    #: A shallow clone's boundary: its parents are not here, so git shows it as adding every
    #: file; its change is not known and ``files`` is empty.
    boundary: bool = False

    @property
    def short(self) -> str:
        return self.sha[:12]


def parse_log(output: bytes) -> list[Commit]:
    """The commits of ``git log -z --name-only --format=<_FORMAT>`` output, in its order."""
    commits = []
    for chunk in output.decode("utf-8", "replace").split("\x1e")[1:]:
        fields = chunk.split("\x1f")
        if len(fields) < 7 or not _SHA.match(fields[0]) or not fields[2].isdigit():
            continue  # not what the format writes: skipped rather than misread
        sha, parents, time, author, subject, body = fields[:6]
        names = "\x1f".join(fields[6:]).split("\x00")
        files = tuple(name.strip("\n") for name in names if name.strip("\n"))
        commits.append(
            Commit(sha, tuple(parents.split()), int(time), author, subject, body.strip(), files)
        )
    return commits


def log(
    cwd: Path,
    since: str | None = None,
    rev: str = "HEAD",
    max_count: int | None = None,
    merges: bool = False,
) -> list[Commit]:
    """The commits reachable from ``rev``, newest first (``merges``: merge commits too, with the
    files they changed against their first parent)."""
    args = ["log", "-z", "--name-only", f"--format={_FORMAT}", "--no-renames"]
    args += ["-m", "--first-parent"] if merges else ["--no-merges"]
    if since:
        args.append(f"--since={since}")
    if max_count is not None:
        args.append(f"--max-count={max_count}")
    args += ["--end-of-options", rev, "--"]
    return _without_boundary_files(cwd, parse_log(git.run(args, cwd)))


def shallow_boundary(cwd: Path) -> frozenset[str]:
    """The commits a shallow clone was cut at (``$GIT_DIR/shallow``); none in a full clone."""
    try:
        out = git.run(["rev-parse", "--git-path", "shallow"], cwd, check=False)
        path = cwd / out.decode("utf-8", "surrogateescape").strip()
        text = path.read_text(encoding="ascii", errors="replace") if path.is_file() else ""
    except (RelioraError, OSError):
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if _SHA.match(line.strip()))


def _without_boundary_files(cwd: Path, commits: list[Commit]) -> list[Commit]:
    boundary = shallow_boundary(cwd) if commits else frozenset()
    if not boundary:
        return commits
    return [
        dataclasses.replace(c, files=(), boundary=True) if c.sha in boundary else c
        for c in commits
    ]


def commit_count(cwd: Path) -> int:
    """How many commits HEAD has (0 outside git or before the first commit)."""
    try:
        out = git.run(["rev-list", "--count", "HEAD"], cwd, check=False)
    except RelioraError:
        return 0
    text = out.decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else 0


def resolve(cwd: Path, rev: str) -> str:
    """The full sha of the commit ``rev`` names; a RelioraError naming ``rev`` when none."""
    out = git.run(
        ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
        cwd,
        check=False,
    )
    sha = out.decode("ascii", "replace").strip()
    if not _SHA.match(sha):
        raise RelioraError(f"no commit named {rev[:100]!r} in this repository", code="not_found")
    return sha


def commit(cwd: Path, rev: str) -> Commit:
    """The commit ``rev`` names, with the files it changed (against its first parent)."""
    sha = resolve(cwd, rev)
    found = log(cwd, rev=sha, max_count=1, merges=True)
    if not found:
        raise RelioraError(f"cannot read commit {sha[:12]}", code="git_failed")
    return found[0]


def subjects(cwd: Path, shas: Sequence[str]) -> dict[str, str]:
    """The subject of each commit of ``shas`` that exists (for naming reverted commits)."""
    if not shas:
        return {}
    args = ["log", "--no-walk=unsorted", "--ignore-missing", "--format=%H%x1f%s"]
    args += ["--end-of-options", *shas, "--"]
    out = git.run(args, cwd, check=False).decode("utf-8", "replace")
    pairs = (line.split("\x1f", 1) for line in out.splitlines() if "\x1f" in line)
    return {sha: subject for sha, subject in pairs}
