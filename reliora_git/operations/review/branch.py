"""What a branch changed in the store: records added, modified, renamed and removed.

Both sides are read from git objects (``git ls-tree`` and ``git cat-file
--batch``), never from the working tree, so ``review`` describes exactly what
a pull request would merge. The store at head is read through the store index
(index.py, with files from gitfiles.py), so only the records whose blobs it has
not seen before are parsed; the changed records themselves are parsed in full.
Rendering is in :mod:`reliora_git.interfaces.review`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reliora_git.gitrepo import git
from reliora_git.operations.freshness import Judged
from reliora_git.operations.guards.added import GuardChange, changed_guards
from reliora_git.operations.guards.budget import REVIEW_SECONDS, budget_meter, note_of
from reliora_git.operations.guards.nouns import BudgetNote, GuardFinding
from reliora_git.operations.guards.scan import (
    commit_report,
    guards_of_index,
    mark_stale,
)
from reliora_git.operations.review.check import StoreView, check_entries
from reliora_git.operations.review.context_diff import ContextDiff, context_diff
from reliora_git.operations.review.staged import add_secret_problems
from reliora_git.operations.review.trees import Trees, read_trees
from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import FeedbackEvent, Problem, Record
from reliora_git.search.duplicates import SimilarityWarning
from reliora_git.search.jsonio import record_to_json
from reliora_git.storage.catalog import Catalog, Entry
from reliora_git.storage.config import load_config
from reliora_git.storage.index import StoreIndex
from reliora_git.storage.store import Store

if TYPE_CHECKING:
    from reliora_git.records.credentials import Finding

#: `git diff --raw` status letter → what a reviewer calls it.
KINDS = {
    "A": "added",
    "C": "added",
    "M": "modified",
    "T": "modified",
    "R": "renamed",
    "D": "removed",
}
KIND_ORDER = ("added", "modified", "renamed", "removed")
#: How a secret starts its problem message (check.secret_problem).
SECRET_PREFIX = "holds a secret: "


@dataclass
class RecordChange:
    kind: str
    locator: str
    #: The path before a rename (None otherwise).
    old_locator: str | None
    id: str | None
    title: str
    #: JSON names of the fields whose values differ between base and head.
    changed_fields: list[str] = field(default_factory=list)
    #: (field, before, after) of each changed text or list field, as plain text.
    changes: list[tuple[str, str, str]] = field(default_factory=list)
    #: The record's own Problems section (what the experience is about).
    record_problems: list[str] = field(default_factory=list)
    #: Validation findings on the head version.
    problems: list[Problem] = field(default_factory=list)
    similar: list[SimilarityWarning] = field(default_factory=list)
    feedback: list[FeedbackEvent] = field(default_factory=list)
    #: The guards the change adds to the record, modifies or turns on (SPEC.md §15).
    guards: list[GuardChange] = field(default_factory=list)
    #: Why the record is retired (``retire --reason``), when head has it retired.
    retired_reason: str | None = None
    #: The records this one supersedes (head's ``supersedes``).
    supersedes: list[str] = field(default_factory=list)

    @property
    def invalid(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


@dataclass
class Side:
    ref: str
    commit: str
    #: Why this base (the base side only): "given with --base", or how the default was chosen.
    reason: str = ""
    #: The local branch of a remote base whose unpushed commits head holds, and how many:
    #: they are reviewed as part of the change, as its pull request would show them.
    local_ahead: tuple[str, int] | None = None

    @property
    def chosen(self) -> bool:
        """Reliora chose this base (no --base): people are told which and why."""
        return self.reason not in ("", GIVEN_BASE)


GIVEN_BASE = "given with --base"


@dataclass
class Review:
    base: Side
    head: Side
    changes: list[RecordChange]
    #: Feedback added to records the branch does not otherwise change, by record id.
    other_feedback: dict[str, list[FeedbackEvent]]
    #: Titles of the records in ``other_feedback`` (None when the record is unknown).
    other_titles: dict[str, str | None]
    #: Added feedback files that cannot be read.
    feedback_errors: list[RecordError]
    #: Store folders that head keeps as symbolic links (never read): errors.
    folder_errors: list[RelioraError] = field(default_factory=list)
    #: Records (changed or not) about code the change touches: (id, title and locator as in
    #: the record's JSON, matched files).
    about_code: list[tuple[dict[str, object], list[str]]] = field(default_factory=list)
    #: The store's ``secrets_entropy``: how interfaces/review.py withholds secrets when shown.
    entropy: bool = False
    #: Lines head adds that repeat a lesson: the guards of head's active records (SPEC.md §15).
    guard_findings: list[GuardFinding] = field(default_factory=list)
    #: Set when the guards ran out of time (operations/guards/budget.py): some did not run.
    guard_budget: BudgetNote | None = None
    #: What agents are told at base and at head (context_diff.py).
    context: ContextDiff = field(default_factory=ContextDiff)

    @property
    def guard_blocks(self) -> bool:
        """A ``block`` guard fired: ``review`` exits 1 so that CI fails the change."""
        return any(f.severity == "block" for f in self.guard_findings)

    @property
    def new_guards_match(self) -> bool:
        """A guard the change brings matches head's code already, and its record does not
        say that was accepted (``existing: allowed``): ``review`` exits 1."""
        return any(g.refused for change in self.changes for g in change.guards)

    @property
    def ok(self) -> bool:
        return not self.folder_errors and not any(change.invalid for change in self.changes)

    @property
    def has_secrets(self) -> bool:
        """A record or note holds a secret: ``review`` exits 1 so that CI fails the change."""
        return any(e.code == "secret_found" for e in self.feedback_errors) or any(
            p.message.startswith(SECRET_PREFIX) for c in self.changes for p in c.problems
        )

    def count(self, kind: str) -> int:
        return sum(change.kind == kind for change in self.changes)

    @property
    def feedback_events(self) -> int:
        return sum(len(c.feedback) for c in self.changes) + sum(
            len(events) for events in self.other_feedback.values()
        )


def find_sides(store: Store, base: str | None, head: str) -> tuple[Side, Side]:
    """Head's commit, and the merge base of head with ``base`` (default: the default branch)."""
    head_commit = git.verify_ref(store.root, head)
    if head_commit is None:
        raise RelioraError(
            f"{head!r} does not name a commit here (`git branch -a` lists the branches)",
            code="unknown_ref",
        )
    given = base is not None
    reason = GIVEN_BASE
    if base is None:
        chosen = git.review_base(store.root)
        if chosen is None:
            raise RelioraError(
                "cannot tell the default branch (no origin/HEAD, origin/main, main or master); "
                "pass --base",
                code="unknown_ref",
            )
        base, reason = chosen.ref, chosen.reason
    base_commit = git.verify_ref(store.root, base)
    if base_commit is None:
        raise RelioraError(
            f"{base!r} does not name a commit here (`git branch -a` lists the branches)",
            code="unknown_ref",
        )
    # Like a pull request: what head adds since it forked, not what base did meanwhile.
    fork = git.merge_base(store.root, base_commit, head_commit) or base_commit
    shown = base.removeprefix("refs/heads/").removeprefix("refs/remotes/")
    # Said only of a base reliora chose: a --base is what the user asked for.
    ahead = None if given else _local_ahead(store, base, base_commit, head_commit)
    return Side(shown, fork, reason, ahead), Side(head, head_commit)


def _local_ahead(
    store: Store, base: str, base_commit: str, head_commit: str
) -> tuple[str, int] | None:
    """The local branch of remote ``base`` (``main`` for origin/main) when head holds commits
    of it that ``base`` lacks: the never pushed commits that the review counts as the change's."""
    if not base.startswith("refs/remotes/"):
        return None
    name = base.removeprefix("refs/remotes/").partition("/")[2]
    local = f"refs/heads/{name}"
    if not name or git.verify_ref(store.root, local) is None:
        return None
    shared = git.merge_base(store.root, local, head_commit)
    if shared is None:
        return None
    count = git.count_commits(store.root, shared, base_commit)
    return (name, count) if count else None


def build_review(
    store: Store, base: str | None = None, head: str = "HEAD", *, include_retired: bool = False
) -> Review:
    """The records and feedback ``head`` changes since it forked from ``base``.

    Retired and superseded records are left out of :attr:`Review.about_code` unless
    ``include_retired`` (SPEC.md §12).
    """
    if git.toplevel(store.root) is None:
        raise RelioraError(f"{store.root} is not in a git repository", code="not_git")
    base_side, head_side = find_sides(store, base, head)
    with read_trees(store, base_side.commit, head_side.commit) as trees:
        view = trees.view(store)
        entropy = load_config(store).secrets_entropy
        changes = _record_changes(
            trees.record_changes, trees.head, trees.before, view, entropy, trees.texts
        )
        titles = {doc.id: doc.title for doc in trees.index.docs()}
        folder_errors = trees.index.folder_errors
        about_code = _about_code(
            store, trees.index, base_side.commit, head_side.commit, include_retired
        )
        guards = guards_of_index(trees.index)
        # One budget for the whole review: what head adds, then the guards it brings.
        meter = budget_meter(REVIEW_SECONDS)
        found = commit_report(store, guards, base_side.commit, head_side.commit, meter)
        # Judged at the merge base: what the branch does to the code is what is reviewed.
        judged = Judged(head_side.commit, base_side.commit, base_side.ref)
        mark_stale(store, found.findings, guards, judged)
        brought, over_head = changed_guards(
            store, guards, _changed_records(trees), head_side.commit, meter
        )
        _attach(changes, brought)
        budget = note_of(meter, guards, found.files + over_head.files)
        told = [c.id for c in changes if c.id and c.kind != "removed"]
        context = context_diff(store, trees.index, base_side.commit, head_side.commit, told)
    events = sorted(
        (
            event
            for group in trees.head.events.values()
            for event in group
            if event.locator in trees.added_feedback
        ),
        key=lambda e: e.locator,
    )
    secret_errors, events = _secrets_in_notes(events, entropy, trees.texts)
    by_id = {change.id: change for change in changes if change.id and change.kind != "removed"}
    other: dict[str, list[FeedbackEvent]] = {}
    for event in events:
        if event.record in by_id:
            by_id[event.record].feedback.append(event)
        else:
            other.setdefault(event.record, []).append(event)
    errors = [e for e in trees.head.feedback_errors if e.path in trees.added_feedback]
    errors += secret_errors
    return Review(
        base_side,
        head_side,
        changes,
        other,
        {rid: titles.get(rid) for rid in other},
        errors,
        folder_errors,
        about_code,
        entropy,
        found.findings,
        budget,
        context,
    )


def _changed_records(trees: Trees) -> list[tuple[str, Record, Record | None]]:
    """(head locator, head record, base record or None) of each record head adds or changes."""
    at_head = {entry.locator: entry.record for entry in trees.head.entries}
    found = []
    for change in trees.record_changes:
        record = at_head.get(change.path) if change.status != "D" else None
        if record is not None:
            before = trees.before.get(change.old_path or change.path)
            found.append((change.path, record, before.record if before else None))
    return found


def _attach(changes: list[RecordChange], brought: list[GuardChange]) -> None:
    """Each guard to its record's change; one that matches head's code is an error there
    (a warning when its record accepted the matches: ``existing: allowed``)."""
    by_locator = {change.locator: change for change in changes if change.kind != "removed"}
    for guard in brought:
        change = by_locator.get(guard.locator)
        if change is None:
            continue
        change.guards.append(guard)
        problem = guard.problem()
        if problem is not None:
            change.problems = [*change.problems, problem]


def _record_changes(
    diff: list[git.Change],
    head: Catalog,
    old: dict[str, Entry],
    view: StoreView,
    entropy: bool,
    texts: dict[str, str],
) -> list[RecordChange]:
    new_entries = {entry.locator: entry for entry in head.entries}
    checked = [new_entries[c.path] for c in diff if c.status != "D" and c.path in new_entries]
    # A modified or renamed record is warned about likely duplicates only (SPEC.md §6.1).
    modified = {c.path for c in diff if KINDS.get(c.status, "modified") in ("modified", "renamed")}
    report = check_entries(view, checked, {e.locator for e in checked}, modified)
    secrets = add_secret_problems(report, checked, [], entropy, texts)
    reports = {file.locator: file for file in report.files}
    changes = []
    for c in diff:
        kind = KINDS.get(c.status, "modified")
        if kind == "removed":
            before = old.get(c.path)
            record = before.record if before else None
            changes.append(_change(kind, c.path, None, record))
            continue
        entry = new_entries.get(c.path)
        if entry is None:  # renamed to a name the store does not read (e.g. not .md)
            before = old.get(c.old_path or c.path)
            changes.append(
                _change("removed", c.old_path or c.path, None, before.record if before else None)
            )
            continue
        change = _change(kind, c.path, c.old_path if kind == "renamed" else None, entry.record)
        file = reports.get(c.path)
        if file is not None:
            change.problems = file.problems
            # A pure rename changes no text: its duplicates were seen when it was added.
            pure_rename = kind == "renamed" and c.old_blob == c.new_blob
            change.similar = [] if pure_rename else file.similar
        _withhold(change, secrets.get(c.path, []))
        before = old.get(c.old_path or c.path)
        if kind in ("modified", "renamed") and before is not None:
            change.changed_fields = changed_fields(before.record, entry.record)
            change.changes = field_changes(before.record, entry.record, entropy)
        changes.append(change)
    changes.sort(key=lambda ch: (KIND_ORDER.index(ch.kind), ch.locator))
    return changes


#: What a review shows instead of text that holds a secret.
WITHHELD = "(withheld: holds a secret)"


def _withhold(change: RecordChange, findings: list[Finding]) -> None:
    """Never show a secret to the readers of a pull request: drop the text that holds one."""
    fields = {finding.field for finding in findings}
    if "title" in fields:
        change.title = WITHHELD
    if any(name.startswith("retired_reason") for name in fields):
        change.retired_reason = WITHHELD
    change.record_problems = [
        WITHHELD if f"problems[{n}]" in fields else item
        for n, item in enumerate(change.record_problems, 1)
    ]


def _about_code(
    store: Store, index: StoreIndex, base: str, head: str, include_retired: bool = False
) -> list[tuple[dict[str, object], list[str]]]:
    """The records at head whose ``paths`` match files the change touches (SPEC.md §12),
    active ones only unless ``include_retired`` (those come with ``status`` and
    ``supersededBy``, to be marked)."""
    from reliora_git.operations.freshness import paths_match

    out = git.run(["diff", "--name-only", "-z", "--no-renames", base, head], store.root)
    store_dir = git.show_prefix(store.root) + ".reliora/"
    changed = [
        name
        for name in out.decode("utf-8", "surrogateescape").split("\0")
        if name and not name.startswith(store_dir)
    ]
    if not changed:
        return []
    found = []
    docs = index.inverted.docs
    for slot in index.slots():
        doc = docs[slot]
        if doc is None or not (include_retired or doc.is_active):
            continue
        data = index.record_json(slot)
        own = [p for p in data.get("paths") or [] if isinstance(p, str)]
        if not own:
            continue
        hits = [name for name in changed if any(paths_match(p, name) for p in own)]
        if hits:
            # Only what review shows: the rest would be scanned for secrets for nothing.
            shown = {key: data[key] for key in ("id", "title", "locator")}
            shown["status"] = doc.status
            shown["supersededBy"] = list(index.superseded_by.get(doc.id, []))
            found.append((shown, hits))
    found.sort(key=lambda item: str(item[0]["id"]))
    return found


def _secrets_in_notes(
    events: list[FeedbackEvent], entropy: bool, texts: dict[str, str]
) -> tuple[list[RecordError], list[FeedbackEvent]]:
    """An error per secret in added events (note, author, record, unknown keys, file name,
    whole text), and the events with those withheld."""
    from reliora_git.records.credentials import scan_event_file

    found: list[RecordError] = []
    shown: list[FeedbackEvent] = []
    for event in events:
        findings = scan_event_file(event.locator, texts.get(event.locator), event, entropy=entropy)
        for finding in findings:
            error = RecordError(f"{SECRET_PREFIX}{finding}", path=event.locator)
            error.code = "secret_found"
            found.append(error)
        shown.append(dataclasses.replace(event, note=WITHHELD) if findings else event)
    return found, shown


def _change(
    kind: str, locator: str, old_locator: str | None, record: Record | None
) -> RecordChange:
    return RecordChange(
        kind,
        locator,
        old_locator,
        record.id if record and record.id else None,
        record.title if record else "",
        record_problems=list(record.problems) if record else [],
        retired_reason=retired_reason(record) if kind != "removed" else None,
        supersedes=list(record.supersedes) if record and kind != "removed" else [],
    )


def retired_reason(record: Record | None) -> str | None:
    """Why ``record`` is retired (``retire --reason``, front matter ``retired_reason``), or
    None when it is not retired or says nothing."""
    if record is None or record.status == "active":
        return None
    reason = record.extra_meta.get("retired_reason")
    return reason if isinstance(reason, str) and reason.strip() else None


def field_changes(
    before: Record | None, after: Record | None, entropy: bool = False
) -> list[tuple[str, str, str]]:
    """Each changed field's old and new text (lists one item per line); a side that holds
    a secret is withheld, so that a review never shows one, not even one being removed."""
    from reliora_git.records.credentials import scan_fields

    if before is None or after is None:
        return []
    old, new = record_to_json(before), record_to_json(after)
    found = []
    for name in old:
        if name == "locator" or old[name] == new[name]:
            continue
        sides = [_as_text(old[name]), _as_text(new[name])]
        for n, text in enumerate(sides):
            if text and scan_fields([(name, text)], entropy=entropy):
                sides[n] = WITHHELD
        found.append((name, sides[0], sides[1]))
    return found


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(f"- {item}" for item in value)
    return str(value)


def changed_fields(before: Record | None, after: Record | None) -> list[str]:
    """JSON names of the fields that differ (every field when one side cannot be read)."""
    if before is None or after is None:
        return ["(unreadable)"] if before is not after else []
    old, new = record_to_json(before), record_to_json(after)
    fields = [name for name in old if name != "locator" and old[name] != new[name]]
    if before.extra_sections != after.extra_sections:
        fields.append("otherSections")
    if before.extra_meta != after.extra_meta:
        fields.append("otherFrontMatter")
    return fields
