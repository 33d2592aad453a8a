"""``reliora record --from-commit REV``: a record drafted from a commit (SPEC.md §16).

The commit (a merge: with the commits of its pull request) is read as ``history`` reads it
(commits.py, history.py) and drafted as ``history`` drafts its entries (drafts.py).
"""

from __future__ import annotations

from pathlib import Path

from reliora_git.records.model import Record


def from_commit(root: Path, rev: str) -> Record:
    """The draft for the commit ``rev`` names in the repository at ``root``."""
    from reliora_git.operations.lessons.commits import entry_of_commit
    from reliora_git.operations.lessons.drafts import draft

    found = entry_of_commit(root, rev)
    record = draft(found)
    if found.boundary:
        record.problems.append(BOUNDARY_NOTE)
    return record


#: What a draft of a shallow clone's boundary commit says instead of its paths.
BOUNDARY_NOTE = (
    "(a shallow clone's first commit: the files it changed are not known here; "
    "fetch more history with `git fetch --deepen N` to draft its paths)"
)
