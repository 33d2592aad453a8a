"""``reliora record --from-commit REV``: a record drafted from a commit (SPEC.md §16).

The commit gives what it knows: the title (its subject), the problems (its body's
paragraphs and bullets, without trailers and the revert line), the paths (the files it
changed outside ``.reliora/``) and its provenance (``created`` and ``author`` from the
commit, and a ``verification`` line naming it, which is also how ``reliora history`` sees
that a record already names the commit). What only a person or agent knows is left empty:
the solution (saving still needs one), why it worked, the task.
"""

from __future__ import annotations

import re
from pathlib import Path

from reliora_git.gitrepo.commits import Commit
from reliora_git.records.model import Record

#: At most this many problems and paths are taken from a commit.
MAX_PROBLEMS = 5
MAX_PATHS = 20
PROBLEM_CHARS = 400
_TRAILER = re.compile(r"^[A-Za-z][A-Za-z-]*: \S|^(?:Closes|Fixes|Refs?) #\d", re.IGNORECASE)
_REVERT_LINE = re.compile(r"^This reverts commit [0-9a-f]{7,40}\.?$")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    end = text.rfind(". ", 0, limit)
    return text[: end + 1] if end > limit // 2 else text[: limit - 1].rstrip() + "…"


def problems_of(body: str) -> list[str]:
    """The body's paragraphs and bullet items, one line each, without trailers."""
    items: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            items.append(" ".join(" ".join(current).split()))
            current.clear()

    for line in body.splitlines():
        stripped = line.strip()
        if not stripped or _TRAILER.match(stripped) or _REVERT_LINE.match(stripped):
            flush()
            continue
        if _BULLET.match(line):
            flush()
            stripped = _BULLET.sub("", line).strip()
        current.append(stripped)
    flush()
    return [_cut(item, PROBLEM_CHARS) for item in items if item][:MAX_PROBLEMS]


def draft(commit: Commit, date: str) -> Record:
    """The record a commit suggests; ``date`` is its author date (YYYY-MM-DD)."""
    paths = [f for f in commit.files if f != ".reliora" and not f.startswith(".reliora/")][
        :MAX_PATHS
    ]
    problems = problems_of(commit.body)
    if commit.boundary:
        problems.append(
            "(a shallow clone's first commit: the files it changed are not known here; "
            "fetch more history with `git fetch --deepen N` to draft its paths)"
        )
    return Record(
        title=" ".join(commit.subject.split()),
        problems=problems,
        paths=paths,
        created=date,
        author=commit.author or None,
        verification=f"From commit {commit.short} ({date}, {commit.author}).",
    )


def from_commit(root: Path, rev: str) -> Record:
    """The draft for the commit ``rev`` names in the repository at ``root``."""
    from reliora_git.gitrepo import commits
    from reliora_git.operations.lessons.commits import date_of

    found = commits.commit(root, rev)
    return draft(found, date_of(found.time))
