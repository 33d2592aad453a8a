"""Freshness and provenance of records from git history (SPEC.md §12).

A record's ``paths`` name the code it is about. It is *stale* when a commit
changed one of them after the last commit that changed the record file, or
when one no longer exists at HEAD. A ``success`` or ``partial`` feedback event
committed after those commits *confirms* it (the lesson held on the changed
code): it is then measured from that event's commit. An ``outdated`` event
newer than the record's last change makes it stale whatever its paths.
Everything here is read with one ``git log`` over the records, their feedback
folders and their paths (and one ``git ls-tree`` for what exists at HEAD),
never changing a score. Paths are data from files anyone can
commit: they reach git only as literal, top-relative pathspecs after ``--``,
and one that is absolute or climbs out with ``..`` is reported missing.

``review`` and ``stale`` on a branch judge at the merge base (:class:`Judged`):
the commits a branch adds to its code are the change under review, not news
that the lesson went out of date — a guard finding is never called stale
because of the very lines it caught.

The log and the trees are read by gitrepo/file_history.py; whether a change of a file
changed its code (not only comments or whitespace) is judged in operations/changed_code.py.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from reliora_git.gitrepo import git
from reliora_git.gitrepo.file_history import (
    Commit,
    Log,
    change_commits,
    existing,
    file_log,
    shallow_boundary,
)
from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import Store


@dataclass
class Freshness:
    state: str  # "fresh", "stale" or "unknown"
    changed_paths: list[str] = field(default_factory=list)
    missing_paths: list[str] = field(default_factory=list)
    #: The commits that changed the record's paths since it was last changed, newest first.
    commits: list[Commit] = field(default_factory=list)
    #: The commit of the feedback that confirmed the record after its code changed.
    confirmed_at: Commit | None = None
    #: An ``outdated`` feedback event came after the record's last change.
    outdated: bool = False

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "state": self.state,
            "changedPaths": self.changed_paths,
            "missingPaths": self.missing_paths,
            "commitsSince": len(self.commits),
        }
        # Only when they say something: the four keys above are the object of SPEC.md §12.
        if self.confirmed_at is not None:
            found["confirmedAt"] = self.confirmed_at.to_json()
        if self.outdated:
            found["outdated"] = True
        return found

    def line(self) -> str | None:
        """What a person sees under a stale record, or None."""
        if self.state != "stale":
            return None
        parts = []
        if self.changed_paths:
            shown = ", ".join(self.changed_paths[:3])
            more = f" and {len(self.changed_paths) - 3} more" if len(self.changed_paths) > 3 else ""
            count = len(self.commits)
            parts.append(
                f"{shown}{more} changed in {count} commit{'s' * (count != 1)} "
                "since this was recorded"
            )
        if self.missing_paths:
            parts.append(f"{', '.join(self.missing_paths[:3])} no longer exist(s)")
        if self.outdated:
            parts.append("feedback says it is outdated (update or retire it)")
        return "stale: " + "; ".join(parts)


UNKNOWN = Freshness("unknown")


@dataclass(frozen=True)
class Judged:
    """Where freshness is judged, when not at HEAD: the history of ``tip``, in which the
    commits that ``base`` does not have (``git rev-list base..tip``) change no code.

    Those commits are the change under review (a branch, a pull request, one commit):
    a lesson is not stale because of them. They still count for the record's own file
    and feedback (a branch that updates a lesson refreshes it), and a path counts as
    existing when it is at ``base`` or at ``tip`` (a branch that deletes a file does
    not make its lessons stale either; a lesson it adds about a file it adds is fine).
    """

    #: The commit whose history is read.
    tip: str
    #: The commit the change starts from (None: the whole history of ``tip`` counts).
    base: str | None = None
    #: How people know ``base`` ("main"; the merge base of HEAD with it).
    ref: str = ""

    def key(self) -> str:
        """What the freshness cache keys its results by."""
        return self.tip if self.base is None else f"{self.base}..{self.tip}"


@dataclass(frozen=True)
class Subject:
    """A record to measure: its id, its file (store locator) and its code paths."""

    id: str
    locator: str
    paths: tuple[str, ...]
    #: Its feedback events that freshness reads, as (store locator, outcome):
    #: ``success``/``partial`` (confirmations) and ``outdated``.
    events: tuple[tuple[str, str], ...] = ()


#: Feedback outcomes that confirm a record after its code changed (SPEC.md §12).
CONFIRMING = ("success", "partial")
#: The outcomes freshness reads.
FRESHNESS_OUTCOMES = (*CONFIRMING, "outdated")


def freshness_events(
    locators: Sequence[str], values: Sequence[Any], ids: Collection[str]
) -> dict[str, tuple[tuple[str, str], ...]]:
    """The feedback events freshness reads for each of ``ids`` (one pass over the store's).

    ``locators`` and ``values`` are the store index's feedback files and their values
    (``("ok", record id, outcome)`` for an event that reads).
    """
    found: dict[str, list[tuple[str, str]]] = {}
    for locator, value in zip(locators, values, strict=True):
        if value[0] == "ok" and value[1] in ids and value[2] in FRESHNESS_OUTCOMES:
            found.setdefault(value[1], []).append((locator, value[2]))
    return {record_id: tuple(events) for record_id, events in found.items()}


def safe_path(path: str) -> bool:
    """A repo-relative POSIX path that stays inside the repository."""
    if not path or path.startswith(("/", "\\")):
        return False
    return ".." not in path.split("/") and "\0" not in path and "\n" not in path


#: Above this many pathspecs the whole log is read and filtered here: git matches every
#: tree entry of every commit against every pathspec, so 20 of them made `git log` 8×
#: slower than reading all of it (2,000 commits: 0.8 s against 0.1 s for two, 0.2 s all).
MAX_PATHSPECS = 4


def freshness(
    store: Store, subjects: Sequence[Subject], at: Judged | None = None
) -> dict[str, Freshness]:
    """The freshness of each subject, by id (``unknown`` outside git or without paths),
    at HEAD or as ``at`` says.

    Results are kept in the cache by HEAD commit (SPEC.md §9: keyed so that they can
    never be wrong): the history up to HEAD does not change, so a search pays one
    ``git rev-parse`` once the results it shows were measured before.
    """
    found = {s.id: UNKNOWN for s in subjects}
    measured = [s for s in subjects if s.paths or any(o == "outdated" for _, o in s.events)]
    if not measured:
        return found
    where = _where(store)
    if where is None:
        return found
    prefix, head = where
    if at is not None:
        head = at.key()
    cache = _FreshnessCache(store, head)
    todo = []
    for subject in measured:
        known = cache.get(prefix + subject.locator, subject.paths, subject.events)
        if known is None:
            todo.append(subject)
        else:
            found[subject.id] = known
    if todo:
        for subject, result in zip(todo, _measure(store, prefix, todo, at), strict=True):
            found[subject.id] = result
            cache.put(prefix + subject.locator, subject.paths, subject.events, result)
        cache.save()
    return found


def _where(store: Store) -> tuple[str, str] | None:
    """The store's prefix in its work tree and the HEAD commit, in one git call (None: no git)."""
    out = git.run(["rev-parse", "--show-prefix", "--verify", "-q", "HEAD"], store.root, check=False)
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if not lines and git.toplevel(store.root) is None:
        return None
    if len(lines) == 1 and len(lines[0]) in (40, 64):  # at the top of the work tree
        return "", lines[0]
    if len(lines) >= 2:
        return lines[0], lines[1]
    prefix = lines[0] if lines else ""
    return prefix, ""  # no commit yet


class _FreshnessCache:
    """Freshness by (record file, its paths, its events) for one HEAD, in ``<cache>.freshness``."""

    def __init__(self, store: Store, head: str) -> None:
        from reliora_git.storage.cache import cache_file, read_cache

        self.root = store.root.resolve()
        path = cache_file(self.root) if head else None
        self.path = None if path is None else path.with_suffix(".freshness")
        stored = None if self.path is None else read_cache(self.path, self.root)
        self.head = head
        self.entries: dict[Any, Any] = {}
        if isinstance(stored, tuple) and len(stored) == 3 and stored[:2] == (_CACHE_FORMAT, head):
            self.entries = stored[2]
        self.changed = False

    def get(
        self, record_file: str, paths: tuple[str, ...], events: tuple[tuple[str, str], ...]
    ) -> Freshness | None:
        plain = self.entries.get((record_file, paths, events))
        if plain is None:
            return None
        state, changed, missing, commits, confirmed, outdated = plain
        return Freshness(
            state,
            list(changed),
            list(missing),
            [Commit(*c) for c in commits],
            None if confirmed is None else Commit(*confirmed),
            outdated,
        )

    def put(
        self,
        record_file: str,
        paths: tuple[str, ...],
        events: tuple[tuple[str, str], ...],
        found: Freshness,
    ) -> None:
        commits = tuple(_plain(c) for c in found.commits)
        confirmed = None if found.confirmed_at is None else _plain(found.confirmed_at)
        plain = (
            found.state,
            tuple(found.changed_paths),
            tuple(found.missing_paths),
            commits,
            confirmed,
            found.outdated,
        )
        self.entries[(record_file, paths, events)] = plain
        self.changed = True

    def save(self) -> None:
        from reliora_git.storage.cache import write_cache

        if self.changed and self.path is not None:
            write_cache(self.path, self.root, (_CACHE_FORMAT, self.head, self.entries))


#: The layout of the freshness cache's entries (an older layout is not read).
_CACHE_FORMAT = 3


def _plain(commit: Commit) -> tuple[str, int, str, str]:
    return (commit.sha, commit.time, commit.author, commit.subject)


def _measure(
    store: Store, prefix: str, measured: Sequence[Subject], at: Judged | None = None
) -> list[Freshness]:
    """Freshness from one pass over the log (newest first), for each of ``measured``.

    The pass finds, for each record file and feedback file, the newest commit that
    changed it, and for each code path the commits that changed it (but those of the
    change under review, ``at``); a record's stale commits are those of its paths newer
    than its own (or than its confirmation).
    """
    paths = sorted({p for s in measured for p in s.paths if safe_path(p)})
    record_files = {s.id: prefix + s.locator for s in measured}
    # A record's feedback folder is one pathspec, whatever the number of its events.
    event_folders = sorted(
        {prefix + _folder(loc) for s in measured for loc, _ in s.events if "/" in loc}
    )
    wanted = [*record_files.values(), *event_folders, *paths]
    tip = "HEAD" if at is None else at.tip
    log = file_log(store.root, wanted if len(wanted) <= MAX_PATHSPECS else None, tip)
    present = existing(store.root, paths, tip)
    under_review: set[str] = set()
    if at is not None and at.base is not None:
        present |= existing(store.root, paths, at.base)
        under_review = change_commits(store.root, at.base, at.tip)
    boundary = shallow_boundary(store.root)
    newest: dict[str, int] = {}
    tracked = set(record_files.values()) | {prefix + loc for s in measured for loc, _ in s.events}
    exact = {p for p in paths if not p.endswith("/")}
    folders = [p for p in paths if p.endswith("/")]
    #: Each path's commits, newest first, with the files of it each changed.
    touching: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
    for nth, (commit, files) in enumerate(log):
        for name in files:
            if name in tracked and name not in newest:
                newest[name] = nth
        if commit.sha in under_review:
            continue  # the change being judged: what it does to the code is not news
        for name in files:
            if name in exact:
                touching.setdefault(name, []).append((nth, (name,)))
        for folder in folders:
            inside = tuple(name for name in files if name.startswith(folder))
            if inside:
                touching.setdefault(folder, []).append((nth, inside))
    touched = _code_touched(store, log, touching, measured, newest, record_files)
    results = []
    for subject in measured:
        own = [p for p in subject.paths if safe_path(p)]
        missing = [p for p in subject.paths if not safe_path(p) or not _exists(p, present)]
        position = newest.get(record_files[subject.id])
        if (position is None and boundary) or (
            position is not None and log[position][0].sha in boundary
        ):
            # The record's last commit is beyond the history at hand: a cut-off commit
            # shows every file as added, whatever really changed there.
            results.append(Freshness("unknown", missing_paths=missing))
            continue
        # Events not committed yet are the newest of all (-1); committed ones by position.
        events = [(newest.get(prefix + loc, -1), outcome) for loc, outcome in subject.events]
        outdated = any(
            outcome == "outdated" and (position is None or when < position)
            for when, outcome in events
        )
        if position is None:
            # Not committed yet: measured from now (SPEC.md §12).
            state = "stale" if missing or outdated else "fresh"
            results.append(Freshness(state, [], missing, [], outdated=outdated))
            continue
        since = sorted({i for p in own for i in touched.get(p, []) if i < position})
        confirmed_at = None
        # The newest committed success/partial after the record's last change, when code
        # changed between the two: the lesson was used on the changed code and held.
        confirming = [when for when, o in events if o in CONFIRMING and 0 <= when < position]
        if confirming and since and max(since) >= min(confirming):
            anchor = min(confirming)
            confirmed_at = log[anchor][0]
            since = [i for i in since if i < anchor]
            position = anchor
        changed = [p for p in own if any(i < position for i in touched.get(p, []))]
        state = "stale" if since or missing or outdated else "fresh"
        commits = [log[i][0] for i in since]
        results.append(Freshness(state, changed, missing, commits, confirmed_at, outdated))
    return results


def _code_touched(
    store: Store,
    log: Log,
    touching: dict[str, list[tuple[int, tuple[str, ...]]]],
    measured: Sequence[Subject],
    newest: dict[str, int],
    record_files: dict[str, str],
) -> dict[str, list[int]]:
    """Each path's commits that changed code: not only blank lines, whitespace or comment
    lines (SPEC.md §12, judged by :func:`reliora_git.records.code_change.meaningful`).

    Only the changes that can make a record stale are judged: those of its paths newer
    than its own last commit.
    """
    judged: set[tuple[int, str]] = set()
    for subject in measured:
        position = newest.get(record_files[subject.id])
        if position is None:
            continue
        for path in subject.paths:
            for nth, names in touching.get(path, ()):
                if nth < position:
                    judged.update((nth, name) for name in names)
    from reliora_git.operations.changed_code import changed_code  # only when code changed

    changed = changed_code(store, log, judged)
    return {
        path: [
            nth
            for nth, names in entries
            if any((nth, name) not in judged or (nth, name) in changed for name in names)
        ]
        for path, entries in touching.items()
    }


def _folder(locator: str) -> str:
    """The folder of a store file, ending with ``/`` (a feedback event's record folder)."""
    return locator.rsplit("/", 1)[0] + "/"


def _exists(path: str, present: set[str]) -> bool:
    if path.endswith("/"):
        return any(name.startswith(path) for name in present)
    return path in present


@dataclass(frozen=True)
class History:
    added: Commit
    last_changed: Commit
    commits: int

    def to_json(self) -> dict[str, Any]:
        return {
            "added": self.added.to_json(),
            "lastChanged": self.last_changed.to_json(),
            "commits": self.commits,
        }


def history_of(store: Store, locator: str) -> History | None:
    """Provenance of one record file: the commit that added it, the last one, how many.

    One ``git log`` with the file named from the store's folder (git adds the prefix
    itself): outside git, before the first commit or without git it finds nothing.
    """
    try:
        log = file_log(store.root, [locator], from_root=True)
    except RelioraError:  # git is not installed
        return None
    if not log:
        return None
    return History(added=log[-1][0], last_changed=log[0][0], commits=len(log))


def staged_code_paths(store: Store) -> list[str]:
    """Files staged for the next commit outside ``.reliora/``, top-relative, sorted.

    What ``record --paths-from-staged`` names: the code the lesson was learned on.
    """
    if git.toplevel(store.root) is None:
        raise RelioraError("--paths-from-staged needs a git repository", code="not_git")
    changes = git.staged_changes(store.root, [])  # the whole index
    store_dir = git.show_prefix(store.root) + ".reliora/"
    return sorted({c.path for c in changes if c.status != "D" and not c.path.startswith(store_dir)})


def paths_match(record_path: str, given: str) -> bool:
    """Whether a record's path is about ``given`` (a file, or a folder ending in ``/``)."""
    if record_path == given or (record_path.endswith("/") and given.startswith(record_path)):
        return True
    return given.endswith("/") and record_path.startswith(given)
