"""The store as the git index holds it: what ``check --staged`` (the pre-commit hook) judges.

The index is read with git itself, never from ``.git/index`` directly: during
``git commit -a`` and ``git commit <paths>`` the hook is handed a temporary
index through ``GIT_INDEX_FILE``, and git subprocesses honour it (see git.py).
Nothing here writes to the index or the working tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reliora_git.gitrepo import git
from reliora_git.operations.guards.nouns import GuardReport
from reliora_git.operations.review.check import (
    CheckReport,
    FileReport,
    StoreView,
    check_entries,
    index_owners,
)
from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import Problem, Record
from reliora_git.search.duplicates import DEFAULT_DUPLICATE_OVERLAP, DocsPool
from reliora_git.storage.catalog import Entry, read_entry
from reliora_git.storage.gitfiles import EXPERIENCES, FEEDBACK, LINK_MODE, GitFiles, is_store_file
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import MAX_RECORD_BYTES, Store
from reliora_git.storage.values import paused_gc

if TYPE_CHECKING:
    from reliora_git.records.credentials import Finding

#: Statuses of `git diff --raw` whose new side is a record to check (deletions are ignored).
CHECKED_STATUSES = frozenset("ACMRT")
#: Of those, the records that existed before (warned about likely duplicates only, §6.1).
MODIFIED_STATUSES = frozenset("MRT")


@dataclass
class StagedStore:
    #: The index of the staged store (None when the commit changes no record).
    index: StoreIndex | None
    #: Records added, copied, modified or renamed in the index, in path order.
    changed: list[Entry]
    #: Store files with unresolved conflicts (index stages 1-3).
    conflicts: list[str]
    #: Changed records that HEAD already has (modified, renamed), by staged locator.
    modified: set[str]
    #: Feedback files added or changed in the index, with their texts (or read errors).
    changed_events: list[tuple[str, str | RecordError]] = field(default_factory=list)
    #: The texts of ``changed`` by locator (those that read): scanned whole for secrets.
    texts: dict[str, str] = field(default_factory=dict)
    #: The top of the work tree, and the store's root from it ('' or ending in '/').
    top: Path | None = None
    prefix: str = ""
    #: The tree id of HEAD's ``.reliora/experiences`` ('' when HEAD has none).
    records_tree: str = ""

    def view(self, duplicate_overlap: float = DEFAULT_DUPLICATE_OVERLAP) -> StoreView:
        """The staged store as far as judging a record needs it."""
        if self.index is None:
            return StoreView(DocsPool([]), {}, duplicate_overlap)
        owners = index_owners(self.index)
        for parsed in self.changed:
            # An invalid staged record still claims its id (check_entries reports clashes).
            if parsed.record is not None and parsed.record.id:
                owners.setdefault(parsed.record.id, parsed.locator)
        return StoreView(self.index, owners, duplicate_overlap)


def read_staged_store(store: Store) -> StagedStore:
    """Every record and feedback event in the index, and which records the commit changes."""
    top = git.toplevel(store.root)
    if top is None:
        raise RelioraError(
            f"{store.root} is not in a git repository; --staged reads the git index",
            code="not_git",
        )
    # git prints paths from the top of the work tree; locators start at the store's root.
    # The same call names HEAD's tree of records: what the guards of HEAD are keyed by.
    prefix, tree = git.prefix_and_object(store.root, f"HEAD:./{EXPERIENCES.rstrip('/')}")
    # Without the trailing slash, the pathspecs also match a folder swapped for a link.
    specs = [EXPERIENCES.rstrip("/"), FEEDBACK.rstrip("/")]
    changes = git.staged_changes(store.root, specs)
    linked = any(
        c.path[len(prefix) :] in specs and c.new_mode == LINK_MODE and c.status != "D"
        for c in changes
    )
    checked = [
        change
        for change in changes
        if change.status in CHECKED_STATUSES
        and is_store_file(change.path[len(prefix) :], EXPERIENCES)
    ]
    changed = {change.path[len(prefix) :] for change in checked}
    modified = {c.path[len(prefix) :] for c in checked if c.status in MODIFIED_STATUSES}
    events = {
        c.path[len(prefix) :]
        for c in changes
        if c.status in CHECKED_STATUSES and is_store_file(c.path[len(prefix) :], FEEDBACK)
    }
    conflicted = any(change.status == "U" for change in changes)
    if not changed and not events and not linked and not conflicted:
        # Most commits touch no record: skip reading the store from the index.
        return StagedStore(None, [], [], set(), top=top, prefix=prefix, records_tree=tree)
    files, conflicts = GitFiles.staged(store, prefix)
    # Feedback alone needs no index: only its notes are scanned.
    index = open_index(store, source=files) if changed or linked or conflicted else None
    changed_files = [file for file in files.records if file.locator in changed]
    changed_texts = files.texts(changed_files)
    changed_entries = [
        Entry(file.locator, error=text)
        if isinstance(text, RecordError)
        else read_entry(file.locator, text)
        for file, text in zip(changed_files, changed_texts, strict=True)
    ]
    record_texts = {
        file.locator: text
        for file, text in zip(changed_files, changed_texts, strict=True)
        if isinstance(text, str)
    }
    event_files = [file for file in files.events if file.locator in events]
    texts = files.texts(event_files)
    changed_events = [(f.locator, text) for f, text in zip(event_files, texts, strict=True)]
    return StagedStore(
        index, changed_entries, conflicts, modified, changed_events, record_texts, top, prefix, tree
    )


@dataclass
class StagedCheck:
    report: CheckReport
    conflicts: list[str]
    #: Store folders staged as symbolic links: like conflicts, they always stop the commit.
    linked: list[str] = field(default_factory=list)
    #: Staged files holding a secret: they always stop the commit too.
    secrets: list[str] = field(default_factory=list)
    #: What the guards of active records found in the lines the commit adds (SPEC.md §15).
    guards: GuardReport = field(default_factory=GuardReport)

    @property
    def has_invalid_records(self) -> bool:
        return any(f.has_errors for f in self.report.files if f.locator not in self.conflicts)


def check_staged(
    store: Store,
    *,
    duplicates: bool = True,
    duplicate_overlap: float = DEFAULT_DUPLICATE_OVERLAP,
    secrets_entropy: bool = False,
) -> StagedCheck:
    """Validate the staged records and seek their duplicates in the staged store."""
    # Loading the whole staged store allocates hundreds of thousands of acyclic tuples at
    # 100,000 records: with the collector on, its passes took a third of the time.
    with paused_gc():
        staged = read_staged_store(store)
        similar_for = {entry.locator for entry in staged.changed} if duplicates else set()
        view = staged.view(duplicate_overlap)
        report = check_entries(view, staged.changed, similar_for, staged.modified)
        guards = staged_guards(store, staged)
        judge_new_guards(store, staged, report)
        if staged.index is not None:
            staged.index.close()
    if not duplicates:
        for file in report.files:
            file.similar = []
        report.files = [f for f in report.files if f.problems]
    conflicted = [
        FileReport(
            locator,
            None,
            [Problem("error", "has unresolved merge conflicts; resolve them and `git add` it")],
        )
        for locator in staged.conflicts
    ]
    folders = [] if staged.index is None else staged.index.folder_errors
    linked = [FileReport(e.path or "", None, [Problem("error", e.message)]) for e in folders]
    report.files = linked + conflicted + report.files
    report.checked += len(conflicted)
    secrets = add_secret_problems(
        report, staged.changed, staged.changed_events, secrets_entropy, staged.texts
    )
    return StagedCheck(
        report, staged.conflicts, [f.locator for f in linked], sorted(secrets), guards
    )


def staged_guards(store: Store, staged: StagedStore) -> GuardReport:
    """The guards of the staged store's active records over the lines the commit adds.

    With no record staged, the guards are HEAD's, known from a small file keyed by the
    tree of HEAD's records (operations/guards/scan.py): a store without guards runs no diff.
    The guards share a commit's time budget (operations/guards/budget.py).
    """
    from reliora_git.operations.guards.budget import COMMIT_SECONDS, budget_meter
    from reliora_git.operations.guards.scan import (
        committed_guards,
        guards_of_index,
        mark_stale,
        staged_report,
    )

    if staged.top is None:
        return GuardReport()
    if staged.index is not None:
        guards = guards_of_index(staged.index)
    else:
        guards = committed_guards(store, staged.records_tree)
    if not guards:
        return GuardReport()
    found = staged_report(store, guards, staged.top, staged.prefix, budget_meter(COMMIT_SECONDS))
    mark_stale(store, found.findings, guards)
    return found


def judge_new_guards(store: Store, staged: StagedStore, report: CheckReport) -> None:
    """A guard the commit brings that matches HEAD's code already is an error on its record,
    as ``record`` refuses it and ``review`` fails it (a warning when its record says the
    matches were accepted: ``existing: allowed``), so that the hook judges it alike.

    Only staged records with guards are judged, each against HEAD's version of it (a
    renamed record keeps the guards it had: not judged); HEAD's files are scanned within a
    commit's time budget. The lines the commit adds are the guards' own run
    (:func:`staged_guards`).
    """
    guarded = [e for e in staged.changed if e.record is not None and e.record.guards]
    if staged.index is None or staged.top is None or not guarded:
        return
    from reliora_git.operations.guards.added import changed_guards
    from reliora_git.operations.guards.budget import COMMIT_SECONDS, budget_meter
    from reliora_git.operations.guards.scan import guards_of_index

    head = git.verify_ref(store.root, "HEAD")
    before = _head_records(staged, [e.locator for e in guarded]) if head else {}
    records = []
    for entry in guarded:
        old = before.get(entry.locator)
        if old is None and entry.locator in staged.modified:
            continue  # renamed: its guards were judged when they came in
        assert entry.record is not None
        records.append((entry.locator, entry.record, old))
    if not records or head is None:
        return
    brought, _ = changed_guards(
        store, guards_of_index(staged.index), records, head, budget_meter(COMMIT_SECONDS)
    )
    found: dict[str, list[Problem]] = {}
    for guard in brought:
        problem = guard.problem()
        if problem is not None:
            found.setdefault(guard.locator, []).append(problem)
    ids = {locator: record.id for locator, record, _ in records}
    report.add_problems(found, [entry.locator for entry in staged.changed], ids)


def _head_records(staged: StagedStore, locators: list[str]) -> dict[str, Record]:
    """HEAD's versions of the records at ``locators`` that HEAD has and that read: one
    ``ls-tree`` and one ``cat-file --batch``."""
    assert staged.top is not None
    listed = git.ls_tree(staged.top, "HEAD", [staged.prefix + loc for loc in locators])
    blobs = {entry.path[len(staged.prefix) :]: entry.blob for entry in listed}
    texts = git.read_blobs(staged.top, list(blobs.values()), MAX_RECORD_BYTES)
    found = {}
    for locator, blob in blobs.items():
        data = texts[blob].data
        entry = read_entry(locator, data.decode("utf-8", "replace")) if data else None
        if entry is not None and entry.record is not None:
            found[locator] = entry.record
    return found


def add_secret_problems(
    report: CheckReport,
    records: list[Entry],
    events: list[tuple[str, str | RecordError]],
    entropy: bool,
    texts: Mapping[str, str] | None = None,
) -> dict[str, list[Finding]]:
    """Add an error per secret in ``records`` and feedback ``events``; the findings by file.

    Everything a file holds is scanned: its name, its fields, unknown keys and
    sections, preamble, and its whole text (``texts``, by locator, for records)
    — a secret in a name cannot be refused at save and is an error here.
    Only the pragma of detect-secrets allows a finding here (``record --allow-secret``
    is not remembered anywhere): the hook and ``review`` see what would be pushed.
    """
    from reliora_git.operations.review.check import secret_problem
    from reliora_git.records.credentials import (
        other_record_fields,
        record_fields,
        scan_event_file,
        scan_store_file,
    )
    from reliora_git.search.jsonio import record_to_json

    found: dict[str, list[Finding]] = {}
    for entry in records:
        fields: list[tuple[str, str]] = []
        if entry.record is not None:
            fields = record_fields(record_to_json(entry.record)) + other_record_fields(entry.record)
        text = (texts or {}).get(entry.locator)
        findings = scan_store_file(entry.locator, text, fields, entropy=entropy)
        if findings:
            found[entry.locator] = findings
    for locator, event_text in events:
        text = None if isinstance(event_text, RecordError) else event_text
        findings = scan_event_file(locator, text, entropy=entropy)
        if findings:
            found[locator] = findings
    # New reports go after the others, as before: the hook's files have no store order.
    problems = {
        locator: [secret_problem(f) for f in findings] for locator, findings in found.items()
    }
    report.add_problems(problems, [f.locator for f in report.files])
    return found
