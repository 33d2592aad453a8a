"""Which lessons a situation gets: those about the files named or changed (the rule of
``about``), newest first, then those the task ranks above the floor (search/taskrank.py),
best first; never a retired or superseded record. The full brief (full.py) and the push
(push.py) render the same selection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reliora_git.records.errors import RelioraError
from reliora_git.search.taskrank import (
    Settings,
    Shared,
    TaskHit,
    WordMatch,
    rank_task,
    task_words,
)
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import Store

if TYPE_CHECKING:
    from reliora_git.operations.freshness import Freshness

DEFAULT_LIMIT = 5
#: Files a brief may name (--file, MCP `files`): each is resolved against the work tree.
MAX_FILES = 100


@dataclass(frozen=True)
class Situation:
    """What a brief or a push is about: the task as a person wrote it, extra query words, the
    files named, this branch's changes (since ``base``), and how many lessons at most.

    Checked when made (a usage error for nothing to brief on, a limit under 1, too many files),
    so every function that takes one takes it as sound. How the call runs (the index, the
    budget, the ranking's settings) is not part of it.
    """

    task: str = ""
    query: str = ""
    files: tuple[str, ...] = ()
    changes: bool = False
    base: str | None = None
    limit: int = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(self.files))
        if not (self.task.strip() or self.query.strip() or self.files or self.changes):
            raise RelioraError(
                "a brief needs a task, --file PATH or --changes (reliora brief --help)",
                code="usage",
            )
        if self.limit < 1:
            raise RelioraError("--limit must be at least 1", code="usage")
        if len(self.files) > MAX_FILES:
            raise RelioraError(
                f"a brief names at most {MAX_FILES} files ({len(self.files)} given); "
                "use --changes for a branch's files",
                code="usage",
            )


@dataclass
class Lesson:
    id: str
    title: str
    locator: str
    #: The named or changed files it is about (top-relative), or none.
    paths: list[str]
    #: The task words it shares, with the fields holding them (empty: selected by path).
    matches: tuple[WordMatch, ...]
    score: float | None
    freshness: Freshness | None = None
    #: Its compact text, and its short form (for a first lesson larger than the budget).
    text: str = ""
    short: str = ""

    def reason_json(self) -> dict[str, Any]:
        return {
            "paths": self.paths,
            "tokens": [
                {
                    "word": m.word,
                    "terms": list(m.terms),
                    "fields": list(m.fields),
                    "stemmed": m.stemmed,
                    "by": list(m.by),
                    "score": round(m.score, 4),
                }
                for m in self.matches
            ],
            "score": None if self.score is None else round(self.score, 4),
        }


@dataclass
class Selection:
    """The lessons chosen for a situation, in order, before any rendering."""

    index: StoreIndex
    #: The files named or changed, top-relative.
    files: list[str]
    lessons: list[Lesson]
    #: The task ranking's hits above the floor (active records), best first.
    hits: list[TaskHit]
    retired: int
    #: Records with a score in this store, for the confidence rule (search/confidence.py).
    total: int
    #: The most lessons the situation takes (Situation.limit).
    limit: int = DEFAULT_LIMIT


def select(
    store: Store,
    situation: Situation,
    *,
    index: StoreIndex | None = None,
    settings: Settings | None = None,
) -> Selection:
    """The lessons about the files (newest first), then those the task ranks above the floor."""
    index = index or open_index(store)
    wanted = _files(store, situation.files, situation.changes, situation.base)
    limit = situation.limit
    lessons, retired = _about(index, wanted)
    lessons = lessons[:limit]
    chosen = {lesson.id for lesson in lessons}
    hits, ranked_retired = task_hits(index, situation.task, situation.query, settings)
    retired |= ranked_retired
    by_id = {hit.doc.id: hit for hit in hits}
    for lesson in lessons:  # a lesson about the files may share words with the task too
        hit = by_id.get(lesson.id)
        if hit is not None:
            lesson.matches, lesson.score = hit.matches, hit.score
    for hit in hits:
        if len(lessons) >= limit:
            break
        if hit.doc.id not in chosen:
            lessons.append(lesson_of(hit))
            chosen.add(hit.doc.id)
    total = sum(doc is not None for doc in index.inverted.docs)
    return Selection(index, wanted, lessons, hits, len(retired), total, limit)


def task_hits(
    index: StoreIndex,
    task: str,
    query: str = "",
    settings: Settings | None = None,
    shared: Shared | None = None,
) -> tuple[list[TaskHit], set[str]]:
    """The active records the task ranks above the floor, best first, and the ids of the
    retired or superseded ones it ranks there too (``reliora eval`` ranks with this)."""
    # Retired and superseded records are ranked too, then counted out: the agent is told
    # that some match, as search tells people (the floor does not depend on who is admitted).
    hits = rank_task(
        index.inverted,
        task_words(task, query, settings),
        settings,
        admit=lambda doc: True,
        text_of=index.text_of,  # confirms a task word written as two words (taskrank.py)
        shared=shared,
    )
    retired = {hit.doc.id for hit in hits if not hit.doc.is_active}
    return [hit for hit in hits if hit.doc.is_active], retired


def lesson_of(hit: TaskHit) -> Lesson:
    doc = hit.doc
    return Lesson(doc.id, doc.title, doc.locator, [], hit.matches, hit.score)


def _files(store: Store, given: Sequence[str], changes: bool, base: str | None) -> list[str]:
    """The named files and (``changes``) this branch's changed files, top-relative, once each."""
    from reliora_git.operations.paths import repo_path

    found = [repo_path(store, raw) for raw in given]
    if changes:
        found += changed_files(store, base)
    return list(dict.fromkeys(found))


def changed_files(store: Store, base: str | None = None) -> list[str]:
    """Files changed on this branch since its merge base with ``base`` (default: the
    default branch), plus staged and unstaged changes; top-relative."""
    from reliora_git.gitrepo import git

    if git.toplevel(store.root) is None:
        raise RelioraError("--changes needs a git repository", code="usage")
    head = git.verify_ref(store.root, "HEAD")
    fork = head
    if head is not None:
        ref = base or git.default_branch(store.root)
        if ref is not None:
            base_commit = git.verify_ref(store.root, ref)
            if base_commit is None:
                raise RelioraError(
                    f"{ref!r} does not name a commit here (`git branch -a` lists the branches)",
                    code="unknown_ref",
                )
            fork = git.merge_base(store.root, base_commit, head) or base_commit
        # No default branch (no origin/HEAD, main or master): what is not yet committed.
    return git.changed_since(store.root, fork)


def _about(index: StoreIndex, wanted: list[str]) -> tuple[list[Lesson], set[str]]:
    """The active records whose paths match ``wanted`` (the rule of ``about``), newest first,
    and the ids of the retired or superseded records that match too.

    The index holds each record's paths, so only the records that match are read.
    """
    if not wanted:
        return [], set()
    from reliora_git.operations.freshness import paths_match

    found: list[tuple[str, str, Lesson]] = []
    retired: set[str] = set()
    docs = index.inverted.docs
    for slot in index.slots():
        doc = docs[slot]
        assert doc is not None
        if not doc.paths:
            continue
        hit = [w for w in wanted if any(paths_match(p, w) for p in doc.paths)]
        if hit and not doc.is_active:
            retired.add(doc.id)
        elif hit:
            created = index.record_json(slot).get("created") or ""
            found.append((created, doc.id, Lesson(doc.id, doc.title, doc.locator, hit, (), None)))
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [lesson for _, _, lesson in found], retired


def add_freshness(store: Store, index: StoreIndex, lessons: list[Lesson]) -> None:
    """Each lesson's freshness from git history (one ``git log`` for all that have paths)."""
    from reliora_git.operations.freshness import Subject, freshness

    docs = index.inverted.docs
    subjects = []
    for lesson in lessons:
        slot = index.slot_of(lesson.id)
        doc = docs[slot] if slot is not None else None
        if doc is not None:
            subjects.append(Subject(doc.id, doc.locator, doc.paths))
    found = freshness(store, subjects)
    for lesson in lessons:
        lesson.freshness = found.get(lesson.id)
