"""Why not: why the push gave a lesson its form, or left it out (SPEC.md §17).

For a push (brief/push.py), each lesson asked about is explained from the decisions the push
itself made: its rank among the task's hits, its score against the relevance floor and the
confidence thresholds (in units of the most one word can give in this store), the words it
shares with the task and the fields holding them (asked-as lines as ``asked``), and the rule
that kept it out or made it a line (reasons.py). Nothing is judged twice: a candidate's
reason is the one ``compose`` recorded while deciding; a lesson below the floor is ranked
again without the floor (the same scores) and judged by :func:`under_floor`, the floor's
own test.

Plain data out (:class:`Explained`), for ``brief --push --explain``, the view's "try a
prompt", ``eval``'s failures and the MCP ``brief`` tool (``explain_document``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reliora_git.operations.brief import reasons
from reliora_git.operations.brief.earning import held_where, telling
from reliora_git.operations.brief.push import Push
from reliora_git.operations.brief.reasons import Reason
from reliora_git.operations.brief.reasons import shown_number as _num
from reliora_git.operations.brief.selection import Situation
from reliora_git.search.confidence import MIN_MARGIN, MIN_SCORE, MIN_SHOWN, Confidence
from reliora_git.search.taskrank import (
    SMALL_STORE,
    Settings,
    TaskHit,
    WordMatch,
    idf_of,
    rank_task,
    task_words,
)
from reliora_git.storage.index import StoreIndex
from reliora_git.storage.store import Store

#: Lessons explained when none is named: the best candidates not pushed in full.
EXPLAINED = 5
#: Of those, search's best results (SPEC.md §5 ranking) not pushed in full.
SEARCH_COMPARED = 3
#: Search ranks given (a lesson further down is "not in search's first 50").
SEARCH_RANKED = 50


@dataclass(frozen=True)
class Floor:
    """The relevance floor of a store: ``least`` (a score) is ``share`` × ``unit``."""

    unit: float
    least: float
    share: float
    min_words: int

    @classmethod
    def of(cls, total: int, settings: Settings) -> Floor:
        """As rank_task computes it (search/taskrank.py)."""
        unit = idf_of(1, total) if total else 1.0
        small = total < SMALL_STORE
        least = 0.0 if small else settings.floor * unit
        return cls(unit, least, settings.floor, settings.min_words)


def under_floor(hit: TaskHit, floor: Floor) -> Reason | None:
    """Why ``hit`` (ranked without the floor) is under it, or None: rank_task's floor test."""
    words = len(hit.parts)
    if hit.score < floor.least:
        return Reason(
            reasons.BELOW_FLOOR,
            f"left out: it scores {hit.score / floor.unit:.2f}, under the relevance floor "
            f"{floor.share:.2f} (units of the most one word gives in this store)",
        )
    if words < floor.min_words:
        return Reason(
            reasons.TOO_FEW_WORDS,
            f"left out: it shares {words} word{'' if words == 1 else 's'} with the task; the "
            f"floor asks for {floor.min_words}",
        )
    return None


@dataclass(frozen=True)
class Explained:
    """One lesson and why the push gave it its form (``None``: left out)."""

    id: str
    title: str
    form: str | None
    reason: Reason
    #: Its place among the task's hits above the floor (None: not among them).
    rank: int | None
    #: Its place in the task ranking without the floor (None: it shares no counted word).
    unfloored_rank: int | None
    #: Its task score, in units (None: no score).
    score: float | None
    floor: Floor
    confidence: Confidence | None
    matches: tuple[WordMatch, ...]
    #: Its place in search's ranking of the same text (None: not ranked or not asked).
    search_rank: int | None = None

    def to_json(self) -> dict[str, Any]:
        confidence = None
        if self.confidence is not None:
            confidence = {
                **self.confidence.to_json(),
                "thresholds": {"score": MIN_SCORE, "margin": MIN_MARGIN, "shown": MIN_SHOWN},
                "shortOf": [name for name, _, _ in self.confidence.short_of],
            }
        return {
            "id": self.id,
            "title": self.title,
            "form": self.form,
            "rule": self.reason.rule,
            "reason": self.reason.text,
            "rank": self.rank,
            "rankWithoutFloor": self.unfloored_rank,
            "searchRank": self.search_rank,
            "score": None if self.score is None else round(self.score, 3),
            "floor": self.floor.share if self.floor.least else 0.0,
            "confidence": confidence,
            "words": [
                {"word": m.word, "fields": list(m.fields), "telling": telling(m.word)}
                for m in self.matches
            ],
        }

    def lines(self) -> list[str]:
        """For people: the reason, then where it ranks and what it shares."""
        from reliora_git.operations.brief.text import one_line

        head = f"- {one_line(self.title)} ({self.id}): {self.reason.text}"
        where = []
        if self.rank is not None:
            where.append(f"rank {self.rank} in the push's ranking")
        elif self.unfloored_rank is not None:
            where.append(f"rank {self.unfloored_rank} in the push's ranking without the floor")
        else:
            where.append("not ranked for this text")
        if self.search_rank is not None:
            where.append(f"rank {self.search_rank} in search")
        if self.score is not None:
            where.append(f"score {self.score:.2f} (floor {self.floor.share:.2f})")
        if self.confidence is not None:
            c = self.confidence
            where.append(
                f"confidence: score {_num(c.score, MIN_SCORE)}/{MIN_SCORE}, margin "
                f"{_num(c.margin, MIN_MARGIN)}/{MIN_MARGIN}, shown fields "
                f"{_num(c.shown, MIN_SHOWN)}/{MIN_SHOWN}"
            )
        found = [head, "    " + " · ".join(where)]
        if self.matches:
            found.append("    shares " + held_where(self.matches, 6))
        return found


def explain(
    result: Push,
    index: StoreIndex,
    situation: Situation,
    ids: Sequence[str] = (),
    *,
    settings: Settings | None = None,
    search_ranks: dict[str, int] | None = None,
) -> list[Explained]:
    """Why ``result`` (the push for ``situation``) gave each of ``ids`` its form.

    Without ``ids``: the best candidates not pushed in full, in the push's order (its
    candidates, then the next hits above the floor), then search's best results (given as
    ``search_ranks``, id → rank) that are not pushed in full; at most :data:`EXPLAINED` +
    :data:`SEARCH_COMPARED`. An id is resolved as ``show`` resolves it (a unique prefix).
    """
    settings = settings or Settings()
    selection = result.selection
    assert selection is not None, "a push made by push.push()"
    hits = selection.hits
    floor = Floor.of(selection.total, settings)
    rank_of = {hit.doc.id: n for n, hit in enumerate(hits, 1)}
    forms = {entry.candidate.lesson.id: entry.form for entry in result.entries}
    by_id = {c.lesson.id: c for c in result.candidates}
    search_ranks = search_ranks or {}
    if ids:
        wanted = list(dict.fromkeys(_resolve(index, record_id) for record_id in ids))
    else:
        wanted = _default_ids(result, hits, forms, search_ranks)
    unfloored: list[TaskHit] | None = None
    found = []
    for record_id in wanted:
        rank = rank_of.get(record_id)
        candidate = by_id.get(record_id)
        hit = hits[rank - 1] if rank is not None else None
        unfloored_rank = rank
        if candidate is not None:
            reason = result.decisions[record_id]
        elif hit is not None:
            reason = Reason(
                reasons.PAST_LIMIT,
                f"left out: ranked {rank}; a push considers its first {selection.limit} (--limit)",
            )
        else:
            if unfloored is None:
                unfloored = _unfloored(index, situation, settings)
            reason, hit, unfloored_rank = _outside(index, record_id, unfloored, floor)
        slot = index.slot_of(record_id)
        doc = index.inverted.docs[slot] if slot is not None else None
        found.append(
            Explained(
                record_id,
                doc.title if doc is not None else "",
                forms.get(record_id),
                reason,
                rank,
                unfloored_rank,
                None if hit is None else hit.score / floor.unit,
                floor,
                candidate.confidence if candidate is not None else None,
                hit.matches if hit is not None else (),
                search_ranks.get(record_id),
            )
        )
    return found


def _default_ids(
    result: Push, hits: Sequence[TaskHit], forms: dict[str, str], search_ranks: dict[str, int]
) -> list[str]:
    ids = [c.lesson.id for c in result.candidates if forms.get(c.lesson.id) != "full"]
    ids += [hit.doc.id for hit in hits if hit.doc.id not in forms]
    ids = list(dict.fromkeys(ids))[:EXPLAINED]
    best = sorted(
        (i for i in search_ranks if search_ranks[i] <= SEARCH_COMPARED),
        key=search_ranks.__getitem__,
    )
    ids += [i for i in best if forms.get(i) != "full" and i not in ids][:SEARCH_COMPARED]
    return ids


def _resolve(index: StoreIndex, record_id: str) -> str:
    from reliora_git.storage.store import check_id

    check_id(record_id)
    doc = index.inverted.docs[index.resolve(record_id)]
    assert doc is not None
    return doc.id


def _unfloored(index: StoreIndex, situation: Situation, settings: Settings) -> list[TaskHit]:
    """The task ranking as the push ranks (selection.task_hits), without the floor."""
    return rank_task(
        index.inverted,
        task_words(situation.task, situation.query, settings),
        settings,
        admit=lambda doc: True,
        floor=False,
        text_of=index.text_of,
    )


def _outside(
    index: StoreIndex, record_id: str, unfloored: Sequence[TaskHit], floor: Floor
) -> tuple[Reason, TaskHit | None, int | None]:
    """Why a lesson that is not among the hits above the floor is not: retired or
    superseded, under the floor, or sharing no counted word with the task."""
    slot = index.slot_of(record_id)
    doc = index.inverted.docs[slot] if slot is not None else None
    position = next((n for n, hit in enumerate(unfloored, 1) if hit.doc.id == record_id), None)
    hit = unfloored[position - 1] if position is not None else None
    if doc is not None and not doc.is_active:
        by = index.superseded_by.get(record_id)
        text = (
            f"superseded by {', '.join(by)}"
            if by
            else f"retired (`reliora show {record_id}` says why)"
        )
        return Reason(reasons.RETIRED, f"left out: {text}; a push never shows one"), hit, None
    if hit is None:
        return (
            Reason(
                reasons.NO_SHARED_WORD,
                "left out: it shares no word with the task that counts (words held by more "
                "than half the store, and stop words, are not counted)",
            ),
            None,
            None,
        )
    under = under_floor(hit, floor)
    if under is None:  # not expected: the hits above the floor are the same ranking's
        under = Reason(reasons.BELOW_FLOOR, "left out: not among the hits above the floor")
    return under, hit, position


def search_ranks(index: StoreIndex, text: str, count: int = SEARCH_RANKED) -> dict[str, int]:
    """Id → rank of search's first ``count`` results for ``text`` (active records)."""
    from reliora_git.search.rank import Query

    if not text.strip():
        return {}
    hits = index.rank(Query.parse(text))
    return {hit.doc.id: n for n, hit in enumerate(hits[:count], 1)}


def explain_push(
    store: Store,
    situation: Situation,
    ids: Sequence[str] = (),
    *,
    index: StoreIndex | None = None,
    budget: int | None = None,
) -> tuple[Push, list[Explained]]:
    """``brief --push --explain``: the push for ``situation`` and why each lesson has its form
    (:func:`explain`; without ``ids``, search's best results are compared too)."""
    from reliora_git.operations.brief.push import push
    from reliora_git.storage.index import open_index

    index = index or open_index(store)
    result = push(
        store,
        situation.task,
        query=situation.query,
        files=situation.files,
        changes=situation.changes,
        base=situation.base,
        budget=budget,
        limit=situation.limit,
        index=index,
    )
    text = " ".join(part for part in (situation.task, situation.query) if part.strip())
    ranks = search_ranks(index, text)
    return result, explain(result, index, situation, ids, search_ranks=ranks)


def explain_document(explained: Sequence[Explained]) -> list[dict[str, Any]]:
    """The ``explain`` list of ``brief --push --explain --json`` (and for the MCP tool)."""
    return [item.to_json() for item in explained]
