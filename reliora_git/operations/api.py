"""The Python API under the CLI (and the MCP server): each command as a plain function.

``search`` is on the hot path of every agent task, so this module imports only
what it needs: the writers import git, PyYAML (parse, feedback) where they run.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.model import OUTCOMES, FeedbackEvent, FeedbackSummary, Problem, Record
from reliora_git.records.validate import validate
from reliora_git.search.duplicates import (
    DEFAULT_DUPLICATE_OVERLAP,
    DocsPool,
    Pool,
    SimilarityWarning,
    find_similar,
    likely_only,
)
from reliora_git.search.inverted import suggest_for
from reliora_git.search.rank import ContextFilter, Hit, Query
from reliora_git.storage.catalog import Catalog, Entry
from reliora_git.storage.config import load_config
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import (
    MAX_RECORD_BYTES,
    FileEntry,
    Store,
    check_id,
    decode_utf8,
    new_id,
    read_text,
    write_new,
)
from reliora_git.storage.values import paused_gc

if TYPE_CHECKING:
    from reliora_git.operations.history import Freshness, History
    from reliora_git.operations.paths import PathWarning
    from reliora_git.records.credentials import Finding

#: Fresh random names tried when a concurrent writer took the same one (chance ~1e-7 each).
_NAME_ATTEMPTS = 5

# --- search ----------------------------------------------------------------------------------


@dataclass
class SearchResult:
    query: Query
    context: ContextFilter | None
    hits: list[Hit]
    skipped: list[RelioraError]
    #: Query tokens that match nothing in the store → up to three close terms that do.
    suggestions: dict[str, list[str]] = field(default_factory=dict)
    #: Store folders that are symbolic links, not read (also at the head of ``skipped``).
    warnings: list[RelioraError] = field(default_factory=list)
    #: Record id → the active records that supersede it.
    superseded_by: dict[str, list[str]] = field(default_factory=dict)
    #: The index searched, for what the shown results need next (their freshness).
    index: StoreIndex | None = None
    #: When filters left nothing: how many results each level has without them.
    outside_filters: dict[str, int] = field(default_factory=dict)
    min_level: str | None = None
    #: Retired or superseded records that also match, left out (without --include-retired).
    retired_matches: int = 0

    def document(self, shown: int, freshness: dict[str, Freshness]) -> dict[str, Any]:
        """The ``search --json`` document of the first ``shown`` results (and MCP's)."""
        from reliora_git.search.jsonio import search_document

        return search_document(
            self.query,
            self.context,
            self.hits,
            shown,
            self.suggestions,
            self.warnings,
            self.superseded_by,
            freshness,
            self.outside_filters,
            self.summaries(shown),
            self.retired_matches,
        )

    def summaries(self, shown: int) -> dict[str, str]:
        """Record id → summary of the first ``shown`` results, from the index's record JSON."""
        from reliora_git.records.summary import summary_of

        assert self.index is not None
        found: dict[str, str] = {}
        for hit in self.hits[:shown]:
            slot = self.index.slot_of(hit.doc.id)
            found[hit.doc.id] = "" if slot is None else summary_of(self.index.record_json(slot))
        return found

    def shown_freshness(self, store: Store, shown: int) -> dict[str, Freshness]:
        """The freshness of the results shown, from git history (SPEC.md §12)."""
        assert self.index is not None
        return freshness_of(store, self.index, [hit.doc.id for hit in self.hits[:shown]])


def search(
    store: Store,
    text: str,
    *,
    project_context: str | None = None,
    min_level: str | None = None,
    include_retired: bool = False,
    index: StoreIndex | None = None,
) -> SearchResult:
    """Every result for ``text`` (the caller applies its limit; ``total`` counts them all).

    ``index`` is the store's index when the caller has just opened it (the MCP server).
    """
    query = Query.parse(text)
    context = ContextFilter.parse(project_context) if project_context else None
    index = index or open_index(store)
    with paused_gc():  # a common word makes tens of thousands of Hits: see paused_gc
        # Retired and superseded records are ranked too, then counted out: people are
        # told that some match (--include-retired), in the same pass.
        hits = index.rank(query, context=context, include_retired=True, min_level=min_level)
    retired = 0
    if not include_retired:
        matched = len(hits)
        hits = [hit for hit in hits if hit.doc.is_active]
        retired = matched - len(hits)
    suggestions = suggest_for(index.inverted, query.token_texts)
    outside: dict[str, int] = {}
    if not hits and (min_level is not None or context is not None):
        # Say what exists just outside the filters, so that "nothing" is not misread.
        for hit in index.rank(query, include_retired=include_retired):
            outside[hit.level] = outside.get(hit.level, 0) + 1
    return SearchResult(
        query,
        context,
        hits,
        index.skipped,
        suggestions,
        index.folder_errors,
        index.superseded_by,
        index,
        outside,
        min_level,
        retired,
    )


def freshness_of(store: Store, index: StoreIndex, ids: list[str]) -> dict[str, Freshness]:
    """The freshness (SPEC.md §12) of the records ``ids``, from git history."""
    from reliora_git.operations.history import Subject, freshness, freshness_events

    events = freshness_events(index.event_locators, index.event_values, set(ids))
    subjects = []
    for record_id in ids:
        slot = index.slot_of(record_id)
        if slot is None:
            continue
        data = index.record_json(slot)
        paths = tuple(p for p in data.get("paths") or [] if isinstance(p, str))
        subjects.append(Subject(record_id, data["locator"], paths, events.get(record_id, ())))
    return freshness(store, subjects)


# --- show / list -----------------------------------------------------------------------------


@dataclass
class Shown:
    record: Record
    feedback: FeedbackSummary
    #: Its feedback events, in path order.
    events: list[FeedbackEvent]
    #: Store folders that are symbolic links, not read.
    warnings: list[RelioraError] = field(default_factory=list)
    #: The active records that supersede this one (its status is then "superseded").
    superseded_by: list[str] = field(default_factory=list)
    freshness: Freshness | None = None
    #: Provenance from git history (None outside git or before the first commit).
    history: History | None = None

    def document(self) -> dict[str, Any]:
        """The ``show --json`` document (and the MCP ``show`` tool's)."""
        from reliora_git.search.jsonio import event_to_json, show_document

        events = [event_to_json(e) for e in self.events]
        document = show_document(self.record, self.feedback, events, self.superseded_by)
        document["freshness"] = self.freshness.to_json() if self.freshness else None
        document["history"] = self.history.to_json() if self.history else None
        if self.warnings:
            document["warnings"] = [error.to_json()["error"] for error in self.warnings]
        return document


def show(store: Store, id_or_prefix: str, index: StoreIndex | None = None) -> Shown:
    """One record read from its file, with its feedback; only its own files are parsed."""
    from reliora_git.records.feedback import parse_event
    from reliora_git.storage.catalog import read_entry

    check_id(id_or_prefix)  # before the store is read at all
    index = index or open_index(store)
    try:
        slot = index.resolve(id_or_prefix)
    except RelioraError as exc:
        if index.folder_errors:  # the likely reason: say it
            raise RelioraError(f"{exc.message}; {index.folder_errors[0]}", code=exc.code) from None
        raise
    doc = index.inverted.docs[slot]
    assert doc is not None
    entry = read_entry(doc.locator, _read_file(store, doc.locator))
    if not entry.usable or entry.record is None:
        raise entry.first_error()  # changed since the walk, a moment ago
    events = []
    for locator in index.event_locators_of(doc.id):
        try:
            events.append(parse_event(_read_file(store, locator), locator))
        except RecordError:
            continue  # changed since the walk: it counts for nothing, as in search
    summary = index.feedback.get(doc.id) or FeedbackSummary()
    superseded_by = index.superseded_by.get(doc.id, [])
    if superseded_by:
        entry.record.status = "superseded"  # derived, whatever the file says (SPEC.md §11)
    from reliora_git.operations.history import Subject, freshness, freshness_events, history_of

    paths = tuple(entry.record.paths)
    read = freshness_events(index.event_locators, index.event_values, {doc.id})
    subject = Subject(doc.id, doc.locator, paths, read.get(doc.id, ()))
    fresh = freshness(store, [subject])[doc.id]
    history = history_of(store, doc.locator)
    return Shown(entry.record, summary, events, index.folder_errors, superseded_by, fresh, history)


def _read_file(store: Store, locator: str) -> str:
    """The text of one store file, checked as the walk checks it (no link, no folder)."""
    path = store.root.joinpath(*locator.split("/"))
    try:
        info = path.lstat()
    except OSError:
        raise RelioraError("is gone", path=locator, code="not_found") from None
    unreadable = None if stat.S_ISREG(info.st_mode) else "is not a regular file"
    return read_text(FileEntry(locator, path, info.st_size, info.st_mtime_ns, unreadable))


@dataclass
class Listing:
    #: Records as JSON (``list --json`` items), newest first.
    records: list[dict[str, Any]]
    skipped: list[RelioraError]


def list_records(store: Store, tag: str | None = None) -> Listing:
    """Records newest first (created, then id); ``tag`` filters case-insensitively."""
    index = open_index(store)
    docs = index.inverted.docs
    slots = index.slots()
    if tag is not None:
        wanted = tag.casefold()
        slots = [s for s in slots if any(t.casefold() == wanted for t in docs[s].tags)]  # type: ignore[union-attr]
    records = [index.record_json(slot) for slot in slots]
    records.sort(key=lambda r: r["id"])
    records.sort(key=lambda r: r["created"] or "", reverse=True)
    return Listing(records, index.skipped)


# --- record / feedback -----------------------------------------------------------------------


@dataclass
class Saved:
    record: Record
    warnings: list[SimilarityWarning] = field(default_factory=list)
    #: Paths saved although the work tree has no such file or folder.
    path_warnings: list[PathWarning] = field(default_factory=list)

    def warnings_json(self) -> list[dict[str, Any]]:
        """``record --json``'s warnings (and MCP's): paths first, then similar records."""
        return [w.to_json() for w in self.path_warnings] + [w.to_json() for w in self.warnings]


def prepare(store: Store, new: Record) -> Record:
    """Give ``new`` an id, date, status and author where it has none, then validate it.

    Its fields are made what the store keeps (records/roundtrip.py: ends trimmed).
    """
    from reliora_git.gitrepo import git
    from reliora_git.records.roundtrip import normalize

    new.id = new.id or new_id(new.title)
    new.created = new.created or _utc_now().date().isoformat()
    new.status = new.status or "active"
    if new.author is None:
        new.author = git.user_name(store.root)
    normalize(new)
    validate_new(new)
    return new


def record(
    store: Store,
    new: Record,
    *,
    stage: bool = False,
    index: StoreIndex | None = None,
    allow_secrets: Iterable[str] = (),
    allow_existing: bool = False,
) -> Saved:
    """Save ``new`` (see :func:`prepare`) and return the existing records it resembles.

    A record holding a secret is refused (:class:`~reliora_git.records.credentials.SecretFound`)
    unless its kind is in ``allow_secrets`` (``record --allow-secret KIND``).
    """
    from reliora_git.gitrepo import git
    from reliora_git.operations.paths import saved_paths
    from reliora_git.records.parse import render_record

    generated_id = not new.id
    # Paths as `about` reads them (./x, x//y, absolute in the work tree → top-relative).
    new.paths, path_warnings = saved_paths(store, new.paths)
    prepare(store, new)
    refuse_secrets(store, new, allow_secrets)
    if new.guards and not allow_existing:  # guards.py: a guard that already matches the code
        from reliora_git.operations.guards import refuse_existing

        refuse_existing(store, new)
    index = index or open_index(store)
    if index.has_id(new.id):
        raise RelioraError(f"an experience with id {new.id!r} already exists", code="exists")
    if new.supersedes:  # prefixes to full ids, like every command that takes an id
        from reliora_git.operations.targets import resolve_supersedes

        new.supersedes = resolve_supersedes(index, new.supersedes, new.id)
    path = store.experiences / f"{new.id}.md"
    new.locator = store.locator(path)
    text = render_record(new)
    check_reads_back(text, new.locator, new)
    threshold = load_config(store).duplicate_overlap
    # The records it replaces are meant to be like it: no duplicate warning about them.
    warnings = [
        warning
        for warning in find_similar(new, index, duplicate_overlap=threshold)
        if warning.id not in new.supersedes
    ]
    for attempt in range(_NAME_ATTEMPTS):
        try:
            write_new(path, text, store)
            break
        except RelioraError as exc:
            # A concurrent writer saved the same generated id first: draw another suffix.
            if exc.code != "exists" or not generated_id or attempt == _NAME_ATTEMPTS - 1:
                raise
            new.id = new_id(new.title)
            path = store.experiences / f"{new.id}.md"
            new.locator = store.locator(path)
            text = render_record(new)
            check_reads_back(text, new.locator, new)
    if stage:
        git.stage(store.root, [path])
    return Saved(new, warnings, path_warnings)


def refuse_secrets(
    store: Store, new: Record, allowed: Iterable[str] = (), text: str | None = None
) -> None:
    """Raise SecretFound when anything ``new`` holds is a credential (docs/security.md):
    its fields, unknown keys and sections, preamble, id and file name, and ``text``
    (the file about to be written, when known)."""
    from reliora_git.records.credentials import (
        SecretFound,
        other_record_fields,
        record_fields,
        scan_store_file,
    )
    from reliora_git.search.jsonio import record_to_json

    entropy = load_config(store).secrets_entropy
    fields = record_fields(record_to_json(new)) + other_record_fields(new)
    locator = new.locator or (store.locator(store.experiences / f"{new.id}.md") if new.id else "")
    findings = scan_store_file(locator, text, fields, entropy=entropy, allowed=allowed)
    if findings:
        raise SecretFound(findings)


def refuse_event_secrets(store: Store, event: FeedbackEvent, text: str) -> None:
    """Raise SecretFound when a feedback event about to be written holds a credential
    anywhere: note, author (git's user name), record, file name, text."""
    from reliora_git.records.credentials import SecretFound, event_fields, scan_store_file

    entropy = load_config(store).secrets_entropy
    findings = scan_store_file(event.locator, text, event_fields(event), entropy=entropy)
    if findings:
        raise SecretFound(findings, "the feedback event")


def check_reads_back(text: str, locator: str, intended: Record | None = None) -> None:
    """Refuse to save what the store would then skip or call invalid, or read otherwise.

    The exact bytes about to be written go through the reader ``check`` and
    ``search`` use (size limit, strict UTF-8, parsing, validation): a record that
    saves but never reads back is a lesson the user believes stored and nobody
    will find (e.g. a 2 MB log pasted as the solution). With ``intended`` (the
    record rendered, see records/roundtrip.py) every field must read back as it
    is there: text never moves silently from one field to another.
    """
    from reliora_git.storage.catalog import read_entry
    from reliora_git.storage.values import entry_problems

    data = _within_limit(text, "experience")
    entry = read_entry(locator, decode_utf8(data, locator))
    errors = [message for severity, message, _ in entry_problems(entry) if severity == "error"]
    if errors or not entry.usable:
        reason = errors[0] if errors else entry.first_error().message
        raise RelioraError(
            f"the experience would not read back as a record: {reason}", code="invalid_record"
        )
    if intended is not None and entry.record is not None:
        from reliora_git.records.roundtrip import first_difference

        differs = first_difference(intended, entry.record)
        if differs is not None:
            raise RelioraError(
                f"the field {differs} would not read back as given (a line in it reads as "
                "record structure); nothing was saved",
                code="invalid_record",
            )


def _check_event_reads_back(text: str, locator: str) -> None:
    """The same for a feedback event: its note must not make it unreadable."""
    from reliora_git.storage.values import event_value

    data = _within_limit(text, "feedback event")
    value = event_value(locator, decode_utf8(data, locator))
    if value[0] != "ok":
        raise RelioraError(
            f"the feedback event would not read back: {value[1]}", code="invalid_feedback"
        )


def _within_limit(text: str, what: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) > MAX_RECORD_BYTES:
        raise RelioraError(
            f"the {what} would be {len(data) / 1024:.0f} KiB, over the "
            f"{MAX_RECORD_BYTES // 1024} KiB a store file may have, so it would not read "
            "back; nothing was saved (keep long logs in a file and name it)",
            code="too_large",
        )
    return data


def validate_new(new: Record) -> None:
    """Raise a usage error naming the first thing that keeps ``new`` from being saved."""
    errors = [p for p in validate(new) if p.severity == "error"]
    if errors:
        raise RelioraError(
            f"the experience is not valid: {errors[0].message}", code="invalid_record"
        )


def feedback(
    store: Store,
    id_or_prefix: str,
    outcome: str,
    note: str = "",
    index: StoreIndex | None = None,
) -> FeedbackEvent:
    from reliora_git.gitrepo import git
    from reliora_git.records.feedback import event_file_stem, render_event

    if outcome not in OUTCOMES:
        raise RelioraError(
            f"outcome {outcome!r} must be one of {', '.join(OUTCOMES)}", code="invalid_outcome"
        )
    check_id(id_or_prefix)  # before the store is read at all
    if note:
        from reliora_git.records.credentials import SecretFound, scan_fields

        entropy = load_config(store).secrets_entropy
        findings = scan_fields([("note", note)], entropy=entropy)
        if findings:
            raise SecretFound(findings, "the feedback note")
    index = index or open_index(store)
    target = index.inverted.docs[index.resolve(id_or_prefix)]
    assert target is not None
    author = git.user_name(store.root)
    for attempt in range(_NAME_ATTEMPTS):
        now = _utc_now()
        # target.id passed validation, so this path stays inside feedback/ (and
        # write_new checks that again before it creates anything).
        path = store.feedback / target.id / f"{event_file_stem(now, os.urandom(3).hex())}.md"
        event = FeedbackEvent(
            record=target.id,
            outcome=outcome,
            at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            author=author,
            note=note,
            locator=store.locator(path),
        )
        text = render_event(event)
        refuse_event_secrets(store, event, text)
        _check_event_reads_back(text, event.locator)
        try:
            write_new(path, text, store)
        except RelioraError as exc:
            # Another writer took the same second and random suffix: pick a new name.
            if exc.code != "exists" or attempt == _NAME_ATTEMPTS - 1:
                raise
            continue
        return event
    raise AssertionError("unreachable")


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


# --- check -----------------------------------------------------------------------------------


@dataclass
class FileReport:
    locator: str
    id: str | None
    problems: list[Problem] = field(default_factory=list)
    similar: list[SimilarityWarning] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


@dataclass
class CheckReport:
    checked: int
    files: list[FileReport]

    @property
    def ok(self) -> bool:
        return not any(f.has_errors for f in self.files)

    def add_problems(
        self,
        found: dict[str, list[Problem]],
        order: Sequence[str] = (),
        ids: dict[str, str] | None = None,
    ) -> None:
        """Add problems by locator to the files' reports (made as needed), in ``order``."""
        if not found:
            return
        by_locator = {file.locator: file for file in self.files}
        for locator, problems in found.items():
            file = by_locator.get(locator)
            if file is None:
                record_id = (ids or {}).get(locator)
                file = by_locator[locator] = FileReport(locator, record_id, [])
            file.problems.extend(problems)
        rank = {locator: n for n, locator in enumerate(order)}
        self.files = sorted(by_locator.values(), key=lambda f: rank.get(f.locator, len(rank)))

    def to_json(self) -> dict[str, Any]:
        """The ``check --json`` document (and the MCP ``check`` tool's)."""
        from reliora_git.search.jsonio import problem_to_json

        return {
            "ok": self.ok,
            "checked": self.checked,
            "files": [
                {
                    "locator": f.locator,
                    "id": f.id,
                    "problems": [problem_to_json(p) for p in f.problems],
                    "warnings": [w.to_json() for w in f.similar],
                }
                for f in self.files
            ],
        }


def check(
    store: Store, paths: list[str] | None = None, index: StoreIndex | None = None
) -> CheckReport:
    """Validate every record; seek similar records for the files named in ``paths``.

    Lexical similarity is sought only for named files (and staged ones, in the
    hook): over a whole store it would compare every record with every other.
    Exact duplicates (same title, solution and applicability) and id clashes are
    always reported. Each file's own problems come from the index, so only the
    files that changed since the last command are parsed. A named file that the
    last commit already holds is a modified record: it is warned about likely
    duplicates only (SPEC.md §6.1).
    """
    index = index or open_index(store)
    named = _named_locators(store, paths) if paths else None
    if named is not None:
        missing = named - set(index.locators)
        if missing:
            raise RelioraError(
                f"not a record file under {store.experiences.name}/: {sorted(missing)[0]}",
                code="not_found",
            )
    config = load_config(store)
    view = StoreView(index, index_owners(index), config.duplicate_overlap)
    modified = committed(store, sorted(named)) if named else set()
    report = judge(view, judged_of_index(index), named, modified)
    _report_secrets(index, report, config.secrets_entropy)
    _report_supersedes(index, report)
    if any(doc is not None and doc.guards for doc in index.inverted.docs):
        from reliora_git.operations.guards import add_head_warnings

        add_head_warnings(store, index, report)  # SPEC.md §15: the code repeats a lesson
    linked = [
        FileReport(error.path or "", None, [Problem("error", error.message)])
        for error in index.folder_errors
    ]
    report.files = linked + report.files
    return report


def _report_secrets(index: StoreIndex, report: CheckReport, entropy: bool) -> None:
    """Add an error for each secret in a record (scans kept in the index, see secrets_of)
    and in a feedback file, and a warning for a feedback file's invisible text (a
    record's comes with its other problems, records/parse.py)."""
    found: dict[str, list[Problem]] = {}
    ids: dict[str, str] = {}
    for locator, value in zip(index.locators, index.values, strict=True):
        findings = index.secrets_of(value, entropy) if isinstance(value, int) else []
        if findings:
            found[locator] = [secret_problem(finding) for finding in findings]
            doc = index.all_docs[value]
            if doc is not None:
                ids[locator] = doc.id
    index.save()
    report.add_problems(found, index.locators, ids)
    from reliora_git.records.credentials import scan_event_file
    from reliora_git.records.feedback import invisible_text_problems

    def judge_event(locator: str, text: str | None) -> list[Problem]:
        findings = scan_event_file(locator, text, entropy=entropy)
        problems = [secret_problem(finding) for finding in findings]
        return problems + invisible_text_problems(text or "", locator)

    problems = index.judge_events(judge_event)
    report.add_problems(problems, [f.locator for f in report.files] + index.event_locators)


def _report_supersedes(index: StoreIndex, report: CheckReport) -> None:
    """Warn (never block) on ``supersedes`` ids no record has, and on cycles (SPEC.md §11)."""
    from reliora_git.search.supersedes import supersedes_problems

    records = ((d.id, d.locator, d.supersedes) for d in index.all_docs if d is not None)
    report.add_problems(supersedes_problems(records), index.locators)


def secret_problem(finding: Finding) -> Problem:
    return Problem("error", f"holds a secret: {finding}")


def committed(store: Store, locators: list[str]) -> set[str]:
    """Which of ``locators`` the commit HEAD holds (none outside git or before a commit)."""
    from reliora_git.gitrepo import git

    if git.toplevel(store.root) is None or git.verify_ref(store.root, "HEAD") is None:
        return set()
    prefix = git.show_prefix(store.root)
    entries = git.ls_tree(store.root, "HEAD", locators)
    return {entry.path[len(prefix) :] for entry in entries}


@dataclass(frozen=True)
class StoreView:
    """What judging a record needs of the rest of the store."""

    pool: Pool
    #: Id → the file that owns it; ids of files that are not usable count too.
    owners: dict[str, str]
    #: config.toml's duplicate_overlap (SPEC.md §6.1).
    duplicate_overlap: float = DEFAULT_DUPLICATE_OVERLAP


@dataclass
class Judged:
    """One record file as ``check`` sees it."""

    locator: str
    id: str | None
    #: Its own problems: a read error first, then parse and validation findings.
    problems: list[Problem]
    #: For a usable record: its fingerprint, and how to get the record (parsed on demand).
    fingerprint: str | None = None
    load: Callable[[], Record] | None = None


def judged_of(entry: Entry) -> Judged:
    from reliora_git.search.rank import fingerprint

    judged = Judged(entry.locator, entry.record.id if entry.record else None, [])
    if entry.error is not None:
        judged.problems.append(Problem("error", entry.error.message, entry.error.line))
    judged.problems.extend(entry.problems)
    record = entry.record
    if record is not None and entry.usable:
        judged.fingerprint = fingerprint(record)
        judged.load = lambda: record
    return judged


def view_of(catalog: Catalog) -> StoreView:
    owners = catalog.id_owners()
    for entry in catalog.entries:
        if entry.record is not None and entry.record.id:
            owners.setdefault(entry.record.id, entry.locator)
    return StoreView(DocsPool(catalog.indexed(), catalog.feedback()), owners)


def index_owners(index: StoreIndex) -> dict[str, str]:
    owners = {doc.id: doc.locator for doc in index.docs()}
    for locator in index.locators:
        info = index.checks.get(locator)
        if info is not None and info[0]:
            owners.setdefault(info[0], locator)
    return owners


def judged_of_index(index: StoreIndex) -> list[Judged]:
    """Every record file of the index, in path order, without parsing any of them."""
    from reliora_git.search.jsonio import record_from_json

    docs = index.all_docs
    judged: list[Judged] = []
    for locator, value in zip(index.locators, index.values, strict=True):
        info = index.checks.get(locator)
        problems = [] if info is None else [Problem(*p) for p in info[2]]
        if not isinstance(value, int):
            judged.append(Judged(locator, None if info is None else info[0], problems))
            continue
        doc = docs[value]
        assert doc is not None

        def load(slot: int = value) -> Record:
            data = dict(index.record_json(slot))
            record = record_from_json({k: v for k, v in data.items() if k != "locator"})
            record.locator = data["locator"]
            return record

        judged.append(Judged(locator, doc.id, problems, doc.fingerprint, load))
    return judged


def judge(
    view: StoreView,
    files: list[Judged],
    similar_for: set[str] | None,
    modified: Collection[str] = (),
) -> CheckReport:
    """Reports for ``files`` judged against the store (the hook passes staged files).

    Files in ``modified`` are records changed rather than added: only their likely
    duplicates are reported (SPEC.md §6.1).
    """
    threshold = view.duplicate_overlap
    reports = []
    for file in files:
        report = FileReport(file.locator, file.id, list(file.problems))
        if file.id:
            owner = view.owners.get(file.id)
            if owner is not None and owner != file.locator:
                report.problems.append(Problem("error", f"id {file.id!r} is also used by {owner}"))
        if file.load is not None and file.id:
            if similar_for is not None and file.locator in similar_for:
                report.similar = find_similar(file.load(), view.pool, duplicate_overlap=threshold)
            elif file.fingerprint and view.pool.twins(file.fingerprint, file.id):
                # The rest only against their exact twins (SPEC.md §6).
                report.similar = find_similar(
                    file.load(), view.pool, lexical=False, duplicate_overlap=threshold
                )
            if file.locator in modified:
                report.similar = likely_only(report.similar)
        if report.problems or report.similar:
            reports.append(report)
    return CheckReport(len(files), reports)


def check_entries(
    view: StoreView,
    entries: list[Entry],
    similar_for: set[str] | None,
    modified: Collection[str] = (),
) -> CheckReport:
    """:func:`judge` for parsed entries (the staged store, a commit's store)."""
    return judge(view, [judged_of(entry) for entry in entries], similar_for, modified)


def _named_locators(store: Store, paths: list[str]) -> set[str]:
    named = set()
    for raw in paths:
        # Resolve the folder, not the file: a symlinked record is named (and reported
        # as a symlink), never swapped for its target outside the store.
        given = Path(raw)
        path = given.parent.resolve() / given.name
        try:
            named.add(store.locator(path))
        except ValueError:
            raise RelioraError(
                f"{raw} is outside the store at {store.root}", code="not_found"
            ) from None
    return named
