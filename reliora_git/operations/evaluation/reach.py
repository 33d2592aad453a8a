"""Every lesson's reach: is it found from its own task by the ranking the push uses?

No labelling needed: a record's Task says the situation it was written for (a record
without one is judged from its first problem). Each active record's task is ranked,
one query per record, exactly as a prompt is (brief/selection.py ``task_hits``: the
words, the floor, retired records counted out) over the index every command reads:

* its **rank** is its position among the hits above the floor (none below it); R@1,
  R@5 and MRR (1/rank, 0 when not ranked) are over the records judged;
* its **form** is what the push for that prompt gives it (brief/push.py ``judged`` and
  ``compose``, no files, no session): full, a line, or nothing;
* it is **unreachable** when that push leaves it out: below the floor, ranked past the
  five a push may show, or ranked but earning no entry (no telling word it shares is
  in its title, tags or asked-as lines). If its own task cannot reach it, a prompt hardly will;
* a record that comes **first for other records' tasks** (at least :data:`CROWD_MIN`
  of them) is named: a record stuffed with a store's vocabulary steals their pushes;
* a record to **give asked-as lines** (SPEC.md §3) is one its own task leaves out of the
  push, or reaches through no word of its title, tags or asked-as lines (it was found only
  through its body, so a prompt in other words hardly will): whoever knows the lesson
  writes how people would ask for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reliora_git.operations.brief.earning import shown_on_line
from reliora_git.operations.brief.push import compose, judged
from reliora_git.operations.brief.selection import DEFAULT_LIMIT, lesson_of, task_hits
from reliora_git.operations.brief.text import one_line
from reliora_git.search.taskrank import Shared
from reliora_git.storage.index import StoreIndex

#: Records first for at least this many other records' tasks are named.
CROWD_MIN = 3
#: How many of them, and of the tasks each one takes, are named.
CROWD_SHOWN = 10
TAKEN_SHOWN = 5


@dataclass(frozen=True)
class Reached:
    """One record judged from its own task."""

    id: str
    title: str
    #: "task", or "problem" for a record without a Task.
    source: str
    #: Its position among the hits above the floor (None: below the floor).
    rank: int | None
    #: What the push for its task gives it: "full", "line" or None.
    form: str | None
    #: The record ranked first for its task (None when none is ranked).
    first: str | None
    #: Its task shares a telling word with its title, tags or asked-as lines (earning.py).
    on_line_words: bool = False

    @property
    def needs_asked_as(self) -> bool:
        """Its own task leaves it out of the push, or reaches it through no word of its title,
        tags or asked-as lines: asked-as lines are what would bring prompts to it."""
        return self.form is None or not self.on_line_words

    @property
    def reason(self) -> str:
        """Why the push for its own task leaves it out ('' when it does not)."""
        if self.form is not None:
            return ""
        if self.rank is None:
            return "below the relevance floor"
        if self.rank > DEFAULT_LIMIT:
            return f"ranked {self.rank}, after the {DEFAULT_LIMIT} a push may show"
        return f"ranked {self.rank}, but no word it shares is in its title, tags or asked-as lines"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "source": self.source,
            "rank": self.rank,
            "form": self.form,
            "first": self.first,
            "reason": self.reason or None,
            "sharesLineWords": self.on_line_words,
        }


@dataclass
class Reach:
    records: list[Reached] = field(default_factory=list)
    #: Active records with neither a task nor a problem: not judged.
    without_task: int = 0

    def recall(self, k: int) -> float:
        if not self.records:
            return 1.0
        return sum(r.rank is not None and r.rank <= k for r in self.records) / len(self.records)

    @property
    def mrr(self) -> float:
        if not self.records:
            return 1.0
        return sum(1 / r.rank for r in self.records if r.rank) / len(self.records)

    @property
    def unreachable(self) -> list[Reached]:
        return [r for r in self.records if r.form is None]

    @property
    def to_give_asked_as(self) -> list[Reached]:
        """The records to give asked-as lines (:attr:`Reached.needs_asked_as`)."""
        return [r for r in self.records if r.needs_asked_as]

    def crowding(self) -> list[tuple[str, list[str]]]:
        """(id, the ids whose task it comes first for), for the records first for at least
        CROWD_MIN others, most first."""
        taken: dict[str, list[str]] = {}
        for record in self.records:
            if record.first is not None and record.first != record.id:
                taken.setdefault(record.first, []).append(record.id)
        found = [(rid, ids) for rid, ids in taken.items() if len(ids) >= CROWD_MIN]
        found.sort(key=lambda item: (-len(item[1]), item[0]))
        return found[:CROWD_SHOWN]

    def to_json(self) -> dict[str, Any]:
        return {
            "judged": len(self.records),
            "withoutTask": self.without_task,
            "recallAt1": round(self.recall(1), 4),
            "recallAt5": round(self.recall(5), 4),
            "mrr": round(self.mrr, 4),
            "unreachable": [r.to_json() for r in self.unreachable],
            "addAskedAs": [
                {"id": r.id, "title": r.title, "reason": _asked_reason(r)}
                for r in self.to_give_asked_as
            ],
            "crowding": [
                {"id": rid, "firstFor": len(ids), "examples": ids[:TAKEN_SHOWN]}
                for rid, ids in self.crowding()
            ],
        }


def _asked_reason(record: Reached) -> str:
    if record.form is None:
        return f"add asked-as lines: its own task does not reach it ({record.reason})"
    return (
        "add asked-as lines: its own task reaches it only through its body, no word of its "
        "title, tags or asked-as lines"
    )


def own_task(data: dict[str, Any]) -> tuple[str, str] | None:
    """(text, source) a record is judged from: its task, else its first problem."""
    task = data.get("task")
    if isinstance(task, str) and task.strip():
        return task, "task"
    for problem in data.get("problems") or []:
        if isinstance(problem, str) and problem.strip():
            return problem, "problem"
    return None


#: A task ranked costs about as much as this many record files parsed (6 ms against 0.3 ms on
#: the til corpus): the weight storage/parallel.py decides on worker processes by.
FILES_PER_QUERY = 20
#: The index the forked workers rank over (set only while :func:`reach` runs; workers are
#: forked with it, so it is never pickled).
_SHARED: list[StoreIndex] = []


def reach(index: StoreIndex) -> Reach:
    """Every active record judged from its own task (one ranking each).

    The rankings are independent, so a large store spreads them over worker processes
    (storage/parallel.py), forked with the index already in memory; results keep the
    store's path order either way.
    """
    from reliora_git.storage.parallel import mapper

    found = Reach()
    docs = index.inverted.docs
    asked: list[tuple[int, str, str]] = []
    for slot in index.slots():
        doc = docs[slot]
        assert doc is not None
        if not doc.is_active:
            continue
        task = own_task(index.record_json(slot))
        if task is None:
            found.without_task += 1
        else:
            asked.append((slot, *task))
    _SHARED.append(index)
    try:
        with mapper(len(asked) * FILES_PER_QUERY) as run:
            for part in run(_judge_all, asked):
                found.records += part
    finally:
        _SHARED.pop()
    return found


def _judge_all(asked: Sequence[tuple[int, str, str]]) -> list[Reached]:
    index = _SHARED[-1]
    # The index does not change while the reach runs: its totals and each word's postings are
    # found once for all the tasks (search/taskrank.py ``Shared``), not once a task.
    shared = Shared.of(index.inverted)
    return [_judge(index, shared, *item) for item in asked]


def _judge(index: StoreIndex, shared: Shared, slot: int, text: str, source: str) -> Reached:
    doc = index.inverted.docs[slot]
    assert doc is not None
    total = shared.total
    hits, _ = task_hits(index, text, shared=shared)
    ids = [hit.doc.id for hit in hits]
    rank = ids.index(doc.id) + 1 if doc.id in ids else None
    on_line = bool(rank is not None and shown_on_line(hits[rank - 1].matches))
    form = None
    if rank is not None and rank <= DEFAULT_LIMIT:
        shown = hits[:DEFAULT_LIMIT]
        entries, _ = compose(judged([lesson_of(hit) for hit in shown], hits, total))
        form = next((e.form for e in entries if e.candidate.lesson.id == doc.id), None)
    first = ids[0] if ids else None
    return Reached(doc.id, one_line(doc.title), source, rank, form, first, on_line)
