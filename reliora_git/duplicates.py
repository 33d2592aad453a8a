"""Similar-experience warnings (SPEC.md §6). Pure: built on :mod:`reliora_git.rank`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from reliora_git.errors import RelioraError
from reliora_git.model import FeedbackSummary, Record
from reliora_git.rank import FIELDS, Hit, IndexedRecord, Query, index_record, rank

MAX_WARNINGS = 3
#: The duplicate query keeps its first this-many content tokens: far more than a real
#: title, tags and two problems hold, while a record with 10,000 tags would otherwise
#: make the hook and `check` score 10,000 tokens against every record (minutes).
MAX_QUERY_TOKENS = 64
_CONTEXT = FIELDS.index("projectContext")
_APPLICABILITY = FIELDS.index("applicability")
_LEVEL_ORDER = {"strong": 0, "moderate": 1}


@dataclass(frozen=True)
class SimilarityWarning:
    id: str
    locator: str
    title: str
    match_level: str
    score: float
    status: str

    @property
    def message(self) -> str:
        state = "" if self.status == "active" else f" ({self.status})"
        return (
            f"similar to existing experience {self.id}{state} '{self.title}' "
            f"({self.match_level} match): consider `reliora feedback {self.id} …` "
            "or refining that record instead of adding a new one"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "code": "SIMILAR_EXPERIENCE_FOUND",
            "id": self.id,
            "locator": self.locator,
            "title": self.title,
            "matchLevel": self.match_level,
            "score": round(self.score, 4),
            "message": self.message,
        }


def duplicate_query_text(record: Record) -> str:
    """The query a record is checked with: its title, tags and first two problems."""
    return " ".join([record.title, *record.tags, *record.problems[:2]])


def _tokens_of(field_string: str) -> set[str]:
    return set(field_string.split())


class Pool(Protocol):
    """The records a candidate is compared with: a list of records, or the store index."""

    @property
    def feedback(self) -> Mapping[str, FeedbackSummary]: ...

    def similar_hits(self, query: Query, exclude_id: str) -> list[Hit]:
        """Moderate and strong results of ``query``, retired and superseded records included,
        without the record ``exclude_id``; each hit's ``doc`` with its text."""
        ...

    def twins(self, fingerprint: str, exclude_id: str) -> list[IndexedRecord]:
        """Records other than ``exclude_id`` with this (non-empty) fingerprint, with their text."""
        ...


@dataclass(frozen=True)
class DocsPool:
    """A pool of records held in memory (the staged store, a commit's store)."""

    docs: Sequence[IndexedRecord]
    feedback: Mapping[str, FeedbackSummary] = field(default_factory=dict)

    def similar_hits(self, query: Query, exclude_id: str) -> list[Hit]:
        others = [doc for doc in self.docs if doc.id != exclude_id]
        return rank(
            others, query, feedback=self.feedback, include_retired=True, min_level="moderate"
        )

    def twins(self, fingerprint: str, exclude_id: str) -> list[IndexedRecord]:
        return [d for d in self.docs if d.fingerprint == fingerprint and d.id != exclude_id]


def duplicate_query(record: Record) -> Query | None:
    """The §6 query of ``record`` (its first MAX_QUERY_TOKENS tokens), or None if it has none."""
    try:
        query = Query.parse(duplicate_query_text(record))
    except RelioraError:
        return None
    if len(query.tokens) > MAX_QUERY_TOKENS:
        query = Query(query.text, query.tokens[:MAX_QUERY_TOKENS], query.phrase)
    return query


def find_similar(record: Record, pool: Pool, *, lexical: bool = True) -> list[SimilarityWarning]:
    """Up to three existing records that ``record`` repeats, strongest first.

    ``lexical=False`` compares the record with its exact twins only (same title, solution
    and applicability): what ``check`` does for every record it was not asked about.
    """
    candidate = index_record(record)
    if not lexical:
        twins = pool.twins(candidate.fingerprint, record.id) if candidate.fingerprint else []
        pool = DocsPool(twins, pool.feedback)
    levels: dict[str, tuple[str, float]] = {}
    by_id: dict[str, IndexedRecord] = {}
    query = duplicate_query(record)
    if query is not None:
        # Weak results are not similarities (SPEC.md §6).
        for hit in pool.similar_hits(query, record.id):
            level = hit.level
            if level == "strong" and not _shares_context(candidate, hit.doc):
                level = "moderate"
            levels[hit.doc.id] = (level, hit.score)
            by_id[hit.doc.id] = hit.doc
    if candidate.fingerprint:
        for doc in pool.twins(candidate.fingerprint, record.id):
            levels[doc.id] = ("strong", levels.get(doc.id, ("", 0.0))[1])
            by_id[doc.id] = doc
    ordered = sorted(levels.items(), key=lambda kv: (_LEVEL_ORDER[kv[1][0]], -kv[1][1], kv[0]))
    return [
        SimilarityWarning(
            id=doc_id,
            locator=by_id[doc_id].locator,
            title=by_id[doc_id].title,
            match_level=level,
            score=score,
            status=by_id[doc_id].status,
        )
        for doc_id, (level, score) in ordered[:MAX_WARNINGS]
    ]


def _shares_context(a: IndexedRecord, b: IndexedRecord) -> bool:
    return bool(
        _tokens_of(a.fields[_CONTEXT]) & _tokens_of(b.fields[_CONTEXT])
        or _tokens_of(a.fields[_APPLICABILITY]) & _tokens_of(b.fields[_APPLICABILITY])
    )
