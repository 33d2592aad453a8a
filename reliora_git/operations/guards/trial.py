"""``reliora guard test``: the guards of some records over the working tree or one commit.

Matching is operations/guards/scan.py's; this only picks the guards and the lines. It has
no time budget: it is a test someone runs on purpose, and it shows everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reliora_git.gitrepo import git
from reliora_git.operations.freshness import Judged
from reliora_git.operations.guards.nouns import GuardReport
from reliora_git.operations.guards.scan import (
    commit_report,
    guards_of_index,
    mark_stale,
    mask_secrets,
    refuse_unknown,
    top_of,
    working_tree_report,
)
from reliora_git.records.errors import RelioraError


@dataclass
class GuardTest:
    """What ``reliora guard test`` found."""

    report: GuardReport
    #: The commit whose change was judged (None: the working tree).
    commit: str | None
    records: int

    def to_json(self) -> dict[str, Any]:
        return {
            "rev": self.commit,
            "guards": self.report.guards,
            "records": self.records,
            "guardFindings": self.report.to_json(),
            "skipped": [{"path": path, "reason": why} for path, why in self.report.skipped],
        }

    def summary(self) -> str:
        where = f"the change of commit {self.commit[:12]}" if self.commit else "the working tree"
        count = len(self.report.findings)
        return (
            f"{count} finding{'s' * (count != 1)} from {self.report.guards} guard"
            f"{'s' * (self.report.guards != 1)} of {self.records} record"
            f"{'s' * (self.records != 1)} on {where}"
        )


def run_guard_test(repo: Any, ids: Sequence[str], rev: str | None) -> GuardTest:
    """The guards of ``ids`` (default: of every active record) over the tree or a commit."""
    from reliora_git.storage.gitfiles import find_git_store
    from reliora_git.storage.index import open_index

    store = find_git_store(repo)
    with open_index(store) as index:
        wanted = None
        if ids:
            wanted = []
            for given in ids:
                doc = index.all_docs[index.resolve(given)]
                if doc is not None:
                    wanted.append(doc.id)
        guards = guards_of_index(index, wanted)
    if wanted:
        refuse_unknown(wanted, guards)
    commit = None
    if rev is not None:
        if top_of(store) is None:
            raise RelioraError("--rev needs a git repository", code="not_git")
        commit = git.verify_ref(store.root, rev)
        if commit is None:
            raise RelioraError(f"{rev!r} names no commit", code="usage")
        parent = git.verify_ref(store.root, f"{commit}^")
        report = commit_report(store, guards, parent, commit)
        # As the commit was judged: its own lines never make its lessons stale.
        at: Judged | None = Judged(commit, parent)
    else:
        report = working_tree_report(store, guards)
        at = None
    mark_stale(store, report.findings, guards, at)
    mask_secrets(report.findings)
    return GuardTest(report, commit, len({g.record_id for g in guards}))
