"""``check``: every record judged by itself and against the store, and the feedback files.

Also the judging that the hook (staged.py) and ``review`` (changes.py) share:
:func:`judge` and :func:`check_entries` take plain lists of files and a view
of the rest of the store, and return a :class:`CheckReport`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliora_git.records.errors import RelioraError
from reliora_git.records.model import Problem, Record
from reliora_git.search.duplicates import (
    DEFAULT_DUPLICATE_OVERLAP,
    Pool,
    SimilarityWarning,
    find_similar,
    likely_only,
)
from reliora_git.storage.catalog import Entry
from reliora_git.storage.config import load_config
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import Store

if TYPE_CHECKING:
    from reliora_git.records.credentials import Finding


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

    def json_text(self, extra: Mapping[str, Any] | None = None) -> str:
        """``json.dumps(doc, ensure_ascii=False, indent=2)`` of :meth:`to_json`'s document
        (with ``extra``'s keys after its own), byte for byte, without building it.

        The json module encodes with ``indent`` in pure Python: on a large store that
        was most of ``check --json``. The warnings, nearly all of it, lay themselves out
        (SimilarityWarning.json_text); the few other parts are encoded by the json module
        and moved to their depth (its lines hold no raw newline but its own).
        """
        from reliora_git.search.jsonio import problem_to_json

        level = 4  # files, a file, its warnings
        out = [f'{{\n  "ok": {_nested(self.ok, 1)},\n  "checked": {_nested(self.checked, 1)},']
        if not self.files:
            out.append('\n  "files": []')
        for n, f in enumerate(self.files):
            problems = [problem_to_json(p) for p in f.problems]
            out.append(
                ('\n  "files": [' if n == 0 else ",")
                + f'\n    {{\n      "locator": {_nested(f.locator, 3)},'
                + f'\n      "id": {_nested(f.id, 3)},'
                + f'\n      "problems": {_nested(problems, 3) if problems else "[]"},'
                + '\n      "warnings": '
            )
            if f.similar:
                inner = "\n" + "  " * level
                out.append("[" + inner + ("," + inner).join(w.json_text(level) for w in f.similar))
                out.append("\n      ]\n    }")
            else:
                out.append("[]\n    }")
        if self.files:
            out.append("\n  ]")
        out.extend(f",\n  {_nested(k, 1)}: {_nested(v, 1)}" for k, v in (extra or {}).items())
        out.append("\n}")
        return "".join(out)

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


def _nested(value: Any, level: int) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)`` as it reads ``level`` deep."""
    import json

    if type(value) is str:  # most of them: a locator or an id, encoded in C
        return encode_basestring(value)
    return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + "  " * level)


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
    judged = judged_of_index(index)
    report = judge(view, judged, named, modified, twin_warnings(index, view, judged))
    _report_secrets(index, report, config.secrets_entropy)
    _report_supersedes(index, report)
    _report_outsized(index, report)
    if any(doc is not None and doc.guards for doc in index.inverted.docs):
        from reliora_git.operations.guards.scan import add_head_warnings

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


def _report_outsized(index: StoreIndex, report: CheckReport) -> None:
    """Warn on records far larger than the store's usual one (search/outliers.py)."""
    from reliora_git.search.outliers import outsized

    docs = index.inverted.docs
    sizes = [
        (locator, doc.size)
        for locator, value in zip(index.locators, index.values, strict=True)
        if isinstance(value, int) and (doc := docs[value]) is not None
    ]
    report.add_problems(outsized(sizes), index.locators)


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


def twin_warnings(
    index: StoreIndex, view: StoreView, files: list[Judged]
) -> dict[str, list[SimilarityWarning]]:
    """What :func:`judge` finds for each record of the index against its exact twins only
    (the records it is not asked about), by locator, records without any left out.

    Every record is compared with its twins on every whole-store ``check``: seconds on
    a large store. The answer is kept beside the index for exactly the state it was
    computed from (storage/findings.py), so a store that has not changed is answered
    from there, and any change computes it again, whole.
    """
    from reliora_git.storage.findings import findings_key, read_findings, write_findings

    key = findings_key(index, ("twins", view.duplicate_overlap))
    kept: dict[str, list[tuple[Any, ...]]] | None = None
    if key is not None:
        kept = read_findings(index, key)
    if kept is None:
        kept = {}
        for file in files:
            if file.load is None or not file.id or not file.fingerprint:
                continue
            if view.pool.twins(file.fingerprint, file.id):
                found = find_similar(
                    file.load(), view.pool, lexical=False, duplicate_overlap=view.duplicate_overlap
                )
                if found:
                    kept[file.locator] = [warning.to_tuple() for warning in found]
        if key is not None:
            write_findings(index, key, kept)
    made = SimilarityWarning.from_tuple
    return {locator: [made(plain) for plain in found] for locator, found in kept.items()}


def judge(
    view: StoreView,
    files: list[Judged],
    similar_for: set[str] | None,
    modified: Collection[str] = (),
    twins_found: Mapping[str, list[SimilarityWarning]] | None = None,
) -> CheckReport:
    """Reports for ``files`` judged against the store (the hook passes staged files).

    Files in ``modified`` are records changed rather than added: only their likely
    duplicates are reported (SPEC.md §6.1). ``twins_found``: what comparing each
    record with its exact twins gives, already known (:func:`twin_warnings`).
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
            elif twins_found is not None:
                report.similar = list(twins_found.get(file.locator, ()))
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
