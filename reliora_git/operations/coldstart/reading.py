"""Reading a repository for the cold start (SPEC.md §16): one ``git log -p`` over the window,
the files and changelogs at HEAD, and the records that already name a commit, for ``history``;
one commit for ``record --from-commit``. The ranking is ranking.py's, the drafts drafts.py's.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from reliora_git.gitrepo import git
from reliora_git.operations.coldstart.nouns import Entry
from reliora_git.operations.coldstart.ranking import find
from reliora_git.operations.coldstart.sources import changelog_headings
from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import Store

#: The window when neither --since nor --all is given.
DEFAULT_SINCE = "2 years ago"
_HEX = re.compile(rb"\b[0-9a-f]{7,40}\b")


def commit_prefixes(text: bytes) -> set[str]:
    """Every word of ``text`` that may be a commit sha (7 to 40 hex digits)."""
    return {match.decode("ascii") for match in _HEX.findall(text)}


def recorded_commits(store: Store) -> list[tuple[str, str]]:
    """(record id, a word of it that may be a commit sha) for every record the store index
    parsed: the id is the parsed record's, never text taken from a file's bytes."""
    from reliora_git.storage.index import open_index
    from reliora_git.storage.store import read_regular_file

    pairs: list[tuple[str, str]] = []
    with open_index(store) as index:
        for doc in index.docs():
            try:
                data = read_regular_file(store.root / doc.locator, doc.locator)
            except RelioraError:
                continue
            pairs += [(doc.id, prefix) for prefix in commit_prefixes(data)]
    return pairs


@dataclass
class Report:
    scanned: int
    entries: list[Entry]
    since: str | None


def lesson_entries(store: Store, since: str | None = None, everything: bool = False) -> Report:
    """The places the store's repository wrote a lesson down, best first."""
    from reliora_git.gitrepo import commits, patches

    root = store.root
    if commits.commit_count(root) == 0:
        if git.toplevel(root) is None:
            raise RelioraError("history reads git history: this is not a git repository",
                               code="no_git")  # fmt: skip
        return Report(0, [], since)
    window = since if since or everything else DEFAULT_SINCE
    found = patches.log(root, since=window)
    head_files = patches.files_at(root)
    entries = find(
        found,
        head_files,
        headings_at(root, head_files),
        int(time.time()),
        recorded_commits(store),
        everything,
    )
    return Report(len(found), entries, window)


def headings_at(root: Path, head_files: frozenset[str]) -> dict[str, str]:
    """Each changelog entry at HEAD and the heading above it (``Fixed``, ``3.0.4``)."""
    from reliora_git.gitrepo import patches

    headings: dict[str, str] = {}
    for path in sorted(head_files):
        if patches.CHANGELOG.search(path):
            headings.update(changelog_headings(patches.show_text(root, "HEAD", path)))
    return headings


def entry_of_commit(root: Path, rev: str) -> Entry:
    """The entry of the commit ``rev`` names (a merge: with its pull request's commits),
    judged or not, read as ``history`` reads its entries (the changelog's headings at HEAD,
    what later commits did to its lines): what ``record --from-commit`` drafts from."""
    from reliora_git.gitrepo import commits, patches
    from reliora_git.operations.coldstart.ranking import entry_for

    sha = commits.resolve(root, rev)
    head = patches.log(root, rev=f"{sha}^!")
    if head and head[0].is_merge:
        head = patches.log(root, rev=f"{sha}^1..{sha}")
    if not head:
        raise RelioraError(f"cannot read commit {sha[:12]}", code="git_failed")
    later = patches.log(root, rev=f"{sha}..HEAD")
    head_files = patches.files_at(root)
    return entry_for(head, head_files, int(time.time()), headings_at(root, head_files), later)
