"""``reliora org sync``: bring the database to exactly a repository's store at a ref.

The store is read from git objects (a working clone or a bare mirror; nothing is
checked out): ``git ls-tree`` names every store file with its blob id, and only
blobs the database does not hold for that path are read and parsed — by the same
per-file function as the local index (values.indexed_value / event_value), on
every core when there are many. What depends on several files (who owns an id,
supersession, feedback sums) is derived again over the whole repository each
time, as the local index does, and written where it changed.

Each repository is one transaction, taken under an advisory lock on its name:
an interrupted sync leaves the state before it, and two syncs of the same
repository run one after the other, the second against what the first left.

Nothing waits for ever, and one repository never stops the others: the
session bounds every lock wait (``lock_timeout``, the ``--wait`` seconds) and
the time it may sit idle inside a transaction; a repository that is busy, or
that fails in any way, is reported on one line and the run goes on. Worker
processes are forked before the connection is opened and die with this one
(storage/parallel.py), so a killed sync's session ends with it and releases
its lock. Values PostgreSQL text cannot hold (U+0000) are escaped (pgtext.py);
files whose names are not UTF-8 are reported and left out.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reliora_git import __version__
from reliora_git.gitrepo import git
from reliora_git.org.db import LOCK_SPACE
from reliora_git.org.pgtext import shown, stored, stored_all
from reliora_git.records.errors import RecordError, RelioraError
from reliora_git.records.summary import summary_of
from reliora_git.search.inverted import searched_terms
from reliora_git.search.rank import IndexedRecord, search_part, superseders
from reliora_git.storage.catalog import choose_id_owners
from reliora_git.storage.gitfiles import EXPERIENCES, FEEDBACK, GitFiles, is_store_file
from reliora_git.storage.store import ScannedFile, Store
from reliora_git.storage.values import error_value, event_value, feedback_from_values, indexed_value

if TYPE_CHECKING:
    import psycopg

#: A file's value from its locator and text (values.indexed_value, values.event_value).
Compute = Callable[[str, str], tuple[Any, ...]]
#: Values of (locator, text) pairs by a Compute, in order (on every core when there are many).
Parse = Callable[[Compute, list[tuple[str, str]]], list[Any]]
#: A repository name: what `org search --repo` and `org status` call it.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,199}")
_INACTIVE = ("retired", "superseded")
#: How long a sync waits, by default, for a lock another sync holds (``--wait``).
DEFAULT_WAIT = 600
#: The longest a sync's session may sit inside a transaction between statements (reading
#: and parsing a repository's changed files) before the server ends it: a sync stopped
#: (SIGSTOP, a hung disk) must not hold a repository's lock for ever either.
IDLE_IN_TRANSACTION_MS = 15 * 60 * 1000
_NOT_UTF8 = "the file name is not valid UTF-8: left out"
#: What parsed a repository's rows and how they are kept (the ``parser`` column): rows
#: written by another release, before U+0000 was escaped (pgtext.py) or without their
#: summary, are parsed again.
PARSER = f"{__version__}+pgtext+summary+asked"


# --- where a store comes from -----------------------------------------------------------------


@dataclass
class Source:
    """One repository to sync: its name, the folder git runs in, and the files at the ref."""

    name: str
    folder: Path
    ref: str
    commit: str
    files: GitFiles
    #: Store files whose names are not UTF-8, as shown (``\\xff`` for a byte): left out.
    bad_names: list[str] = field(default_factory=list)
    #: What the user gave (PATH or NAME=PATH), to name the repository in errors.
    given: str = ""
    #: The repository itself, whatever path or name it is given by: its git common dir,
    #: resolved (a clone, its linked work trees and its .git folder give the same).
    identity: str = ""
    #: What the user should know about what is synced (said on stderr and in JSON).
    warnings: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        """The folder as text the database and JSON can hold (bytes that are not UTF-8 shown)."""
        return path_text(str(self.folder))


def path_text(path: str) -> str:
    """A path or file name from the file system or git, with undecodable bytes as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a byte git's or the system's decoding kept as a surrogate
        return False
    return True


def open_source(given: str, ref: str | None) -> Source:
    """``PATH`` or ``NAME=PATH``: a clone or a bare mirror, read at ``ref`` (default branch)."""
    name, sep, raw = given.partition("=")
    if not sep or "/" in name or not name:
        name, raw = "", given
    path = Path(raw).expanduser().resolve()
    if not path.is_dir():
        raise RelioraError(f"{given}: no such folder", code="no_repository")
    folder = git.toplevel(path) or path
    # One call: whether it is bare, and where its objects live (what makes it one repository).
    found = git.run(
        ["rev-parse", "--is-bare-repository", "--git-common-dir"], folder, check=False
    ).splitlines()
    bare = found[0].strip() if found else b""
    if bare not in (b"true", b"false") or len(found) < 2:
        raise RelioraError(f"{given}: not a git repository", code="no_repository")
    common = folder / os.fsdecode(found[1].strip())  # relative to folder unless absolute
    name = name or _name_of(path)
    if not _NAME.fullmatch(name):
        raise RelioraError(
            f"{given}: {name!r} is not a usable repository name (letters, digits, . _ / -); "
            "give one as NAME=PATH",
            code="bad_name",
        )
    chosen = ref or ("HEAD" if bare == b"true" else git.default_branch(folder) or "HEAD")
    commit = git.verify_ref(folder, chosen)
    if commit is None:
        raise RelioraError(f"{given}: no commit named {chosen!r}", code="bad_ref")
    # Without the trailing slash the folders themselves are listed too, when they are links.
    specs = [EXPERIENCES.rstrip("/"), FEEDBACK.rstrip("/")]
    entries = git.ls_tree(folder, commit, specs)
    usable = [(e.path, e.mode, e.blob) for e in entries if _is_utf8(e.path)]
    bad_names = [
        path_text(e.path)
        for e in entries
        if not _is_utf8(e.path)
        and (is_store_file(e.path, EXPERIENCES) or is_store_file(e.path, FEEDBACK))
    ]
    files = GitFiles.of(Store(folder), usable)
    source = Source(name, folder, chosen, commit, files, sorted(bad_names), given)
    source.identity = path_text(os.path.realpath(common))
    if ref is None and bare == b"false":
        source.warnings.extend(_behind_local(folder, chosen))
    if bare == b"false" and not files.records:
        source.warnings.extend(_only_in_work_tree(folder, chosen))
    return source


def _short(ref: str) -> str:
    for prefix in ("refs/heads/", "refs/remotes/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return ref


def _behind_local(folder: Path, chosen: str) -> list[str]:
    """When the default ref is a remote's branch and the local branch of that name is ahead.

    Syncing your own clone reads ``origin/main`` (what the remote publishes); records
    committed on ``main`` and not pushed are not there, and a sync that finds fewer
    records than ``git log`` shows must say why. One ``git rev-list``, which fails
    (and says nothing) when there is no local branch of that name.
    """
    remote_branch = chosen.removeprefix("refs/remotes/")
    if remote_branch == chosen or "/" not in remote_branch:
        return []
    branch = remote_branch.split("/", 1)[1]
    if branch == "HEAD":
        return []
    out = git.run(
        ["rev-list", "--count", f"{chosen}..refs/heads/{branch}", "--"], folder, check=False
    ).strip()
    ahead = int(out) if out.isdigit() else 0
    if not ahead:
        return []
    commits = "commit" if ahead == 1 else "commits"
    said = f"local {branch} is {ahead} {commits} ahead of {remote_branch}"
    return [f"{said}; --ref {branch} to sync them"]


def _only_in_work_tree(folder: Path, chosen: str) -> list[str]:
    """No records at the ref, but record files in the work tree: they are not committed there."""
    top = folder / EXPERIENCES
    count = 0
    for _here, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # as is_store_file skips them
        count += sum(1 for n in names if n.endswith(".md") and not n.startswith("."))
    if not count:
        return []
    files = "record file" if count == 1 else "record files"
    return [
        f"no records at {_short(chosen)}, but the work tree has {count} {files} in "
        f"{EXPERIENCES.rstrip('/')}: commit them (and push, or sync with --ref)"
    ]


def _name_of(path: Path) -> str:
    name = path.name
    return name[: -len(".git")] if name.endswith(".git") and len(name) > 4 else name


# --- what a sync reports ----------------------------------------------------------------------


@dataclass
class Synced:
    name: str
    source: str
    ref: str
    commit: str
    #: Searchable records and feedback events that count, after the sync.
    records: int = 0
    events: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    #: Files left out of search: (locator, line, message), in path order.
    skipped: list[tuple[str, int | None, str]] = field(default_factory=list)
    #: Nothing to do: the database already held this commit.
    up_to_date: bool = False
    #: What the user should know about what was synced (a newer local branch, a second name).
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.name,
            "source": self.source,
            "ref": self.ref,
            "commit": self.commit,
            "records": self.records,
            "feedbackEvents": self.events,
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "upToDate": self.up_to_date,
            "warnings": list(self.warnings),
            "skipped": [
                {"path": path, "line": line, "message": message}
                for path, line, message in self.skipped
            ],
        }


# --- deriving what depends on several files (pure) --------------------------------------------


@dataclass
class FileRow:
    """One record file as the database holds it (or will): its value and derived columns."""

    locator: str
    blob: str
    rec: int = 0
    #: The record's id when the file is a usable record, else None (and ``error`` says why).
    id: str | None = None
    error: str | None = None
    error_line: int | None = None
    status: str | None = None
    supersedes: tuple[str, ...] = ()
    #: The full parsed record, only for files parsed by this sync.
    doc: IndexedRecord | None = None
    terms: dict[str, int] | None = None
    derived: tuple[Any, ...] | None = None
    #: What search results say of the record (records/summary.py), when parsed by this sync.
    summary: str | None = None


def derive(
    rows: Sequence[FileRow], event_values: Iterable[tuple[Any, ...]]
) -> tuple[dict[str, tuple[Any, ...]], list[tuple[str, int | None, str]]]:
    """Each row's derived columns by locator, and the files search leaves out (path order).

    Derived columns: (visible, shown status, active, superseded by, feedback
    counts, feedback adjustment). The rules are the local index's: the file at
    ``experiences/<id>.md`` owns its id, else the first in path order; supersession
    and feedback count among the visible records only.
    """
    ordered = sorted(rows, key=lambda row: row.locator)
    claims = [(row.id, row.locator) for row in ordered if row.id is not None]
    owners = choose_id_owners(claims, EXPERIENCES.rstrip("/"))
    skipped: list[tuple[str, int | None, str]] = []
    visible: list[FileRow] = []
    for row in ordered:
        if row.id is None:
            skipped.append((row.locator, row.error_line, row.error or "not a record"))
        elif owners[row.id] != row.locator:
            skipped.append(
                (row.locator, None, f"id {row.id!r} is already used by {owners[row.id]}")
            )
        else:
            visible.append(row)
    by = superseders(
        IndexedRecord(
            row.id or "", "", row.locator, (), row.status or "", None, "", "", row.supersedes
        )
        for row in visible
    )
    feedback = feedback_from_values(list(event_values))
    hidden: tuple[Any, ...] = (False, None, False, [], [0, 0, 0, 0, 0], 0.0)
    derived = {row.locator: hidden for row in ordered}
    for row in visible:
        assert row.id is not None
        status = "superseded" if row.id in by else row.status
        summary = feedback.get(row.id)
        counts = (
            [0, 0, 0, 0, 0]
            if summary is None
            else [
                summary.success,
                summary.partial,
                summary.failure,
                summary.not_applicable,
                summary.outdated,
            ]
        )
        derived[row.locator] = (
            True,
            status,
            status not in _INACTIVE,
            by.get(row.id, []),
            counts,
            0.0 if summary is None else summary.adjustment,
        )
    return derived, skipped


# --- parsing ----------------------------------------------------------------------------------


def parse_records(files: GitFiles, wanted: list[ScannedFile], parse: Parse) -> list[FileRow]:
    """Rows for record files read from git and parsed now."""
    rows: list[FileRow] = []
    texts = files.texts(wanted)
    pairs = [(f.locator, t) for f, t in zip(wanted, texts, strict=True) if isinstance(t, str)]
    values = iter(parse(indexed_value, pairs))
    for file, text in zip(wanted, texts, strict=True):
        blob = _blob_of(files, file)
        value = error_value(text) if isinstance(text, RecordError) else next(values)
        if value[0] == "doc":
            # Org search is §5 search: the database holds the nine fields it scores, not the
            # asked-as lines only the task ranking reads (rank.search_part).
            full = IndexedRecord(*value[1])
            doc = full._replace(text=search_part(full.text))
            rows.append(
                FileRow(
                    file.locator,
                    blob,
                    id=doc.id,
                    status=doc.status,
                    supersedes=doc.supersedes,
                    doc=doc,
                    terms=searched_terms(value[4]),
                    summary=summary_of(value[2]),
                )
            )
        else:
            rows.append(FileRow(file.locator, blob, error=value[1], error_line=value[2]))
    return rows


def parse_events(
    files: GitFiles, wanted: list[ScannedFile], parse: Parse
) -> list[tuple[str, str, tuple[Any, ...]]]:
    """(locator, blob, event value) for feedback files read from git and parsed now."""
    texts = files.texts(wanted)
    pairs = [(f.locator, t) for f, t in zip(wanted, texts, strict=True) if isinstance(t, str)]
    values = iter(parse(event_value, pairs))
    return [
        (
            file.locator,
            _blob_of(files, file),
            error_value(text) if isinstance(text, RecordError) else next(values),
        )
        for file, text in zip(wanted, texts, strict=True)
    ]


def _blob_of(files: GitFiles, file: ScannedFile) -> str:
    # GitFiles keeps a blob id as a number where a walk keeps the size (gitfiles._files_in).
    return format(file.size, f"0{files.id_width}x")


# --- writing ----------------------------------------------------------------------------------


class TermIds:
    """term → term_id, shared by the repositories of one sync (terms are never deleted).

    Terms inserted by a transaction become known only when it commits: a rolled-back
    insert leaves no row behind, so its ids must not be reused.
    """

    def __init__(self) -> None:
        self.known: dict[str, int] = {}
        self.pending: dict[str, int] = {}

    def ids(self, conn: psycopg.Connection[Any], terms: set[str]) -> dict[str, int]:
        missing = sorted(t for t in terms if t not in self.known and t not in self.pending)
        if missing:
            # Sorted, so two syncs inserting the same new terms take their locks in one order.
            conn.execute(
                "INSERT INTO terms (term) SELECT t FROM unnest(%s::text[]) AS t "
                "ORDER BY t ON CONFLICT DO NOTHING",
                (missing,),
            )
            found = conn.execute(
                "SELECT term, term_id FROM terms WHERE term = ANY(%s::text[])", (missing,)
            ).fetchall()
            self.pending.update(found)
        return {t: self.known.get(t) or self.pending[t] for t in terms}

    def committed(self) -> None:
        self.known.update(self.pending)
        self.pending.clear()

    def rolled_back(self) -> None:
        self.pending.clear()


_RECORD_COLUMNS = (
    "repo_id, rec, repo_name, locator, blob, id, error, error_line, title, tags, status, "
    "confidence, text, fingerprint, supersedes, visible, shown_status, active, superseded_by, "
    "feedback_counts, feedback, summary"
)


@dataclass(frozen=True)
class Waiting:
    """How long a sync waits for a lock another holds, and whom it tells that it waits."""

    seconds: int = DEFAULT_WAIT
    #: Called with a repository's name when another sync is writing it (before waiting).
    on_busy: Callable[[str, int], None] = lambda name, seconds: None


def prepare_session(conn: psycopg.Connection[Any], waiting: Waiting) -> None:
    """Bound every wait of this session: no lock waited for, no transaction held, for ever."""
    # lock_timeout 0 would mean "no limit": a wait of 0 s is 1 ms.
    conn.execute(
        "SELECT set_config('lock_timeout', %s, false), "
        "set_config('idle_in_transaction_session_timeout', %s, false)",
        (f"{max(1, waiting.seconds * 1000)}ms", f"{IDLE_IN_TRANSACTION_MS}ms"),
    )
    conn.commit()


def sync_one(
    conn: psycopg.Connection[Any],
    source: Source,
    parse: Parse,
    terms: TermIds,
    waiting: Waiting = Waiting(),
) -> Synced:
    """Bring the database to ``source``'s store, in one transaction."""
    report = Synced(source.name, source.where, source.ref, source.commit)
    report.warnings = list(source.warnings)
    try:
        with conn.transaction():
            _lock(conn, source.name, waiting)
            _sync(conn, source, parse, terms, report)
    except BaseException:
        terms.rolled_back()
        raise
    terms.committed()
    return report


def _lock(conn: psycopg.Connection[Any], name: str, waiting: Waiting) -> None:
    """Take the repository's lock for this transaction, waiting at most ``waiting.seconds``."""
    from psycopg import errors

    key = (LOCK_SPACE, name)
    found = conn.execute("SELECT pg_try_advisory_xact_lock(%s, hashtext(%s))", key).fetchone()
    if found and found[0]:
        return
    waiting.on_busy(name, waiting.seconds)
    try:
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", key)  # up to lock_timeout
    except errors.LockNotAvailable:
        raise RelioraError(
            f"repository {name!r} is busy: another sync was still writing it after "
            f"{waiting.seconds} s; nothing was changed, try again later",
            code="repository_busy",
        ) from None


def _sync(
    conn: psycopg.Connection[Any], source: Source, parse: Parse, terms: TermIds, report: Synced
) -> None:
    conn.execute(
        "INSERT INTO repos (name, source, ref, commit, parser) VALUES (%s, %s, %s, '', '') "
        "ON CONFLICT (name) DO NOTHING",
        (source.name, source.where, source.ref),
    )
    found = conn.execute(
        "SELECT repo_id, commit, parser, records, events, skipped FROM repos WHERE name = %s",
        (source.name,),
    ).fetchone()
    assert found is not None
    repo_id, commit, parser, records, events, skipped = found
    _same_repository(conn, source, report)
    files = source.files
    if commit == source.commit and parser == PARSER:
        report.records, report.events, report.up_to_date = records, events, True
        report.unchanged = len(files.records)
        report.skipped = [(shown(s["path"]), s["line"], shown(s["message"])) for s in skipped]
        conn.execute(
            "UPDATE repos SET source = %s, ref = %s, identity = %s, synced_at = now() "
            "WHERE repo_id = %s",
            (source.where, source.ref, stored(source.identity), repo_id),
        )
        return
    reparse = parser != PARSER  # rows another release wrote are parsed again
    rows = _sync_records(conn, repo_id, files, parse, terms, report, reparse)
    event_values = _sync_events(conn, repo_id, files, parse, reparse)
    derived, report.skipped = derive(rows, event_values)
    report.skipped[:0] = [
        *((e.path or "", None, e.message) for e in files.linked),
        *((name, None, _NOT_UTF8) for name in source.bad_names),
    ]
    _write_derived(conn, repo_id, source.name, rows, derived, terms)
    report.records = sum(1 for values in derived.values() if values[0])
    report.events = sum(1 for value in event_values if value[0] == "ok")
    conn.execute(
        "UPDATE repos SET source = %s, ref = %s, identity = %s, commit = %s, parser = %s, "
        "synced_at = now(), records = %s, events = %s, skipped = %s::jsonb WHERE repo_id = %s",
        (
            source.where,
            source.ref,
            stored(source.identity),
            source.commit,
            PARSER,
            report.records,
            report.events,
            # jsonb cannot hold U+0000 either (not even as \u0000)
            json.dumps(
                [
                    {"path": stored(path), "line": line, "message": stored(message)}
                    for path, line, message in report.skipped
                ]
            ),
            repo_id,
        ),
    )


def _same_repository(conn: psycopg.Connection[Any], source: Source, report: Synced) -> None:
    """Say when the database holds this repository under another name too (an earlier sync).

    Two names index its records twice: search shows each lesson twice and counts them
    twice. Names already said in this run (sync_all) are not said again.
    """
    if not source.identity:
        return
    others = conn.execute(
        'SELECT name FROM repos WHERE identity = %s AND name <> %s ORDER BY name COLLATE "C"',
        (stored(source.identity), source.name),
    ).fetchall()
    for (other,) in others:
        message = _twice(source, other, "is already synced as")
        if not any(f" as {other!r};" in said for said in report.warnings):
            report.warnings.append(message)


def _twice(source: Source, other: str, how: str) -> str:
    return f"{source.where} {how} {other!r}; two names index its records twice"


def _sync_records(
    conn: psycopg.Connection[Any],
    repo_id: int,
    files: GitFiles,
    parse: Parse,
    terms: TermIds,
    report: Synced,
    reparse: bool,
) -> list[FileRow]:
    """Delete and insert record files as the tree says; every row of the repository after."""
    held: dict[str, FileRow] = {}
    for rec, locator, blob, rid, error, line, status, supersedes, *current in conn.execute(
        "SELECT rec, locator, blob, id, error, error_line, status, supersedes, visible, "
        "shown_status, active, superseded_by, feedback_counts, feedback "
        "FROM records WHERE repo_id = %s",
        (repo_id,),
    ):
        held[locator] = FileRow(
            locator,
            blob,
            rec,
            rid,
            shown(error),
            line,
            status,
            tuple(supersedes or ()),
            derived=tuple(current),
        )
    wanted = {file.locator: (file, _blob_of(files, file)) for file in files.records}
    kept = {
        loc: row
        for loc, row in held.items()
        if not reparse and loc in wanted and wanted[loc][1] == row.blob
    }
    gone = [row.rec for loc, row in held.items() if loc not in kept]
    report.removed = sum(1 for loc in held if loc not in wanted)
    report.changed = sum(1 for loc in held if loc in wanted and loc not in kept)
    report.unchanged = len(kept)
    fresh_files = [file for loc, (file, _) in wanted.items() if loc not in kept]
    report.added = len(fresh_files) - report.changed
    if gone:
        conn.execute("DELETE FROM postings WHERE repo_id = %s AND rec = ANY(%s)", (repo_id, gone))
        conn.execute("DELETE FROM records WHERE repo_id = %s AND rec = ANY(%s)", (repo_id, gone))
    fresh = parse_records(files, fresh_files, parse) if fresh_files else []
    if fresh:
        recs = conn.execute(
            "SELECT nextval(pg_get_serial_sequence('records', 'rec')) FROM generate_series(1, %s)",
            (len(fresh),),
        ).fetchall()
        for row, (rec,) in zip(fresh, recs, strict=True):
            row.rec = rec
    return [*kept.values(), *fresh]


def _sync_events(
    conn: psycopg.Connection[Any], repo_id: int, files: GitFiles, parse: Parse, reparse: bool
) -> list[tuple[Any, ...]]:
    """Delete and insert feedback files as the tree says; every event value after."""
    held = {
        locator: (
            blob,
            (("ok", shown(rid), outcome) if error is None else ("error", shown(error), None)),
        )
        for locator, blob, rid, outcome, error in conn.execute(
            "SELECT locator, blob, record_id, outcome, error FROM events WHERE repo_id = %s",
            (repo_id,),
        )
    }
    wanted = {file.locator: (file, _blob_of(files, file)) for file in files.events}
    kept = {
        loc: value
        for loc, (blob, value) in held.items()
        if not reparse and loc in wanted and wanted[loc][1] == blob
    }
    gone = [loc for loc in held if loc not in kept]
    if gone:
        conn.execute("DELETE FROM events WHERE repo_id = %s AND locator = ANY(%s)", (repo_id, gone))
    fresh_files = [file for loc, (file, _) in wanted.items() if loc not in kept]
    fresh = parse_events(files, fresh_files, parse) if fresh_files else []
    if fresh:
        with conn.cursor().copy(
            "COPY events (repo_id, locator, blob, record_id, outcome, error) FROM STDIN"
        ) as copy:
            for locator, blob, value in fresh:
                if value[0] == "ok":
                    copy.write_row((repo_id, locator, blob, stored(value[1]), value[2], None))
                else:
                    copy.write_row((repo_id, locator, blob, None, None, stored(value[1])))
    return [*kept.values(), *(value for _, _, value in fresh)]


def _write_derived(
    conn: psycopg.Connection[Any],
    repo_id: int,
    name: str,
    rows: list[FileRow],
    derived: dict[str, tuple[Any, ...]],
    terms: TermIds,
) -> None:
    """Insert the rows parsed now (with their postings); update kept rows whose derived changed."""
    fresh = [row for row in rows if row.derived is None]
    changed = [
        row for row in rows if row.derived is not None and row.derived != derived[row.locator]
    ]
    if changed:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE records SET visible = %s, shown_status = %s, active = %s, "
                "superseded_by = %s, feedback_counts = %s, feedback = %s "
                "WHERE repo_id = %s AND rec = %s",
                [(*derived[row.locator], repo_id, row.rec) for row in changed],
            )
    if not fresh:
        return
    with conn.cursor().copy(f"COPY records ({_RECORD_COLUMNS}) FROM STDIN") as copy:
        for row in fresh:
            doc = row.doc
            parsed = (
                (None, stored(row.error), row.error_line, None, None, None, None, None, None)
                if doc is None
                else (
                    doc.id,
                    None,
                    None,
                    stored(doc.title),
                    stored_all(doc.tags),
                    doc.status,
                    doc.confidence,
                    doc.text,
                    doc.fingerprint,
                )
            )
            copy.write_row(
                (
                    repo_id,
                    row.rec,
                    name,
                    row.locator,
                    row.blob,
                    *parsed,
                    list(row.supersedes),
                    *derived[row.locator],
                    stored(row.summary),
                )
            )
    ids = terms.ids(conn, {term for row in fresh if row.terms for term in row.terms})
    with conn.cursor().copy("COPY postings (term_id, repo_id, rec, mask) FROM STDIN") as copy:
        for row in fresh:
            if row.terms:
                rec = row.rec
                for term, mask in row.terms.items():
                    copy.write_row((ids[term], repo_id, rec, mask))


# --- many repositories ------------------------------------------------------------------------


@dataclass
class SyncRun:
    synced: list[Synced] = field(default_factory=list)
    #: Repositories that could not be read: (what was given, the error).
    failed: list[tuple[str, RelioraError]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "repos": [report.to_json() for report in self.synced],
            "errors": [_error_json(given, error) for given, error in self.failed],
        }


def _error_json(given: str, error: RelioraError) -> dict[str, Any]:
    found: dict[str, Any] = {"repo": given}
    found.update(error.to_json()["error"])  # type: ignore[call-overload]
    return found


def sync_all(
    url: str,
    givens: Sequence[str],
    ref: str | None,
    on_synced: Callable[[Synced], None] = lambda report: None,
    waiting: Waiting = Waiting(),
) -> SyncRun:
    """Sync each repository in its own transaction; one that fails does not stop the rest.

    A repository that cannot be read, stays busy past ``waiting.seconds``, or
    fails in the database is reported in ``failed`` (one line each) and the run
    goes on, on a new connection when the failure ended the old one. Only a
    database that cannot be reached or migrated stops the run (the repositories
    synced before it stay synced).
    """
    from reliora_git.storage.parallel import compute_on, mapper
    from reliora_git.storage.progress import progress

    run = SyncRun()
    sources: list[Source] = []
    for given in givens:
        try:
            sources.append(open_source(given, ref))
        except RelioraError as error:
            run.failed.append((given, error))
    names = [source.name for source in sources]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise RelioraError(
            f"two repositories are both named {', '.join(map(repr, twice))}: "
            "name them apart as NAME=PATH",
            code="bad_name",
        )
    first_named: dict[str, str] = {}
    for source in sources:  # one repository given twice under two names, in this run
        earlier = first_named.setdefault(source.identity, source.name)
        if earlier != source.name:
            source.warnings.append(_twice(source, earlier, "is also synced in this run as"))
    total = sum(len(s.files.records) + len(s.files.events) for s in sources)
    # Worker processes are forked before the database connection exists (none inherits it).
    with mapper(total) as pieces:

        def parse(compute: Compute, pairs: list[tuple[str, str]]) -> list[Any]:
            return compute_on(pieces, compute, pairs)

        conn = _session(url, waiting)
        try:
            terms = TermIds()
            with progress(total, "syncing records") as done:
                for source in sources:
                    if conn.closed:  # the last failure ended the session
                        conn = _session(url, waiting)
                    try:
                        report = sync_one(conn, source, parse, terms, waiting)
                    except Exception as error:  # one repository never stops the rest
                        run.failed.append((source.given or source.name, _sync_error(error)))
                    else:
                        run.synced.append(report)
                        on_synced(report)
                    done(len(source.files.records) + len(source.files.events))
            if any(not report.up_to_date for report in run.synced) and not conn.closed:
                _vacuum(conn)
        finally:
            conn.close()
    return run


def _session(url: str, waiting: Waiting) -> psycopg.Connection[Any]:
    """A connection whose waits are bounded (prepare_session), the schema migrated."""
    from reliora_git.org.db import connect, database_error, database_url, migrate

    conn = connect(database_url(url))
    import psycopg  # connect() has said what to install when it is missing

    try:
        prepare_session(conn, waiting)
        migrate(conn)
    except psycopg.errors.LockNotAvailable:
        conn.close()
        raise RelioraError(
            f"the database schema is busy: another sync was still migrating it after "
            f"{waiting.seconds} s; try again later",
            code="database_busy",
        ) from None
    except psycopg.Error as error:
        conn.close()
        raise database_error(error) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _vacuum(conn: psycopg.Connection[Any]) -> None:
    """Ranking reads postings and records from their indexes alone, which needs the
    visibility map that VACUUM keeps; autovacuum would get there later."""
    import psycopg

    from reliora_git.org.db import database_error

    try:
        conn.autocommit = True
        conn.execute("VACUUM (ANALYZE) postings, records, terms")
    except psycopg.errors.LockNotAvailable:
        pass  # another sync's VACUUM outlasted the wait: it does the same work
    except psycopg.Error as error:
        raise database_error(error) from None


def _sync_error(error: Exception) -> RelioraError:
    """Why one repository did not sync, as one line (it is reported; the run goes on)."""
    import psycopg

    from reliora_git.org.db import database_error

    if isinstance(error, RelioraError):
        return error
    if isinstance(error, psycopg.errors.LockNotAvailable):
        return RelioraError(
            "another sync held a lock this one needed for longer than the wait; "
            "nothing was changed, try again later",
            code="repository_busy",
        )
    if isinstance(error, psycopg.Error):
        return database_error(error)
    # Not expected: said in one line with its kind, never a traceback that stops the run.
    return RelioraError(
        f"could not sync: {type(error).__name__}: {' '.join(str(error).split())}",
        code="sync_failed",
    )
