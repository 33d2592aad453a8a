"""Similar-experience warnings (SPEC.md §6 and §6.1). Pure: built on :mod:`reliora_git.search.rank`.

The seed's levels say how well an existing record answers the candidate's
duplicate query; §6.1 adds how much of the candidate it really holds. The
``overlap`` weighs each query token by its inverse document frequency in the
records searched, so a shared rare word ("pgbouncer") counts for far more than a
shared common one ("error"): two notes of one topic share the common words, a
reworded duplicate shares the rare ones too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from json.encoder import encode_basestring as _string
from typing import Any, Protocol

from reliora_git.records.errors import RelioraError
from reliora_git.records.model import FeedbackSummary, Record
from reliora_git.records.stopping import checkpoint
from reliora_git.search.rank import (
    FIELDS,
    INDEX_FIELDS,
    NO_FEEDBACK,
    Hit,
    IndexedRecord,
    Query,
    QueryToken,
    fingerprint,
    index_record,
    rank,
    score_record,
    search_part,
)
from reliora_git.search.stopwords import STOP_WORDS

#: At most this many likely duplicates, and as many related records after them (§6.1).
MAX_WARNINGS = 3
#: At most this many shared tokens are named as evidence.
MAX_SHARED_TOKENS = 8
LIKELY_DUPLICATE = "likely-duplicate"
RELATED = "related"
#: Every token counts as rare until the store shows otherwise: ``idf = ln((N + 21) / (df + 1))``.
#: Without it a store of one or two records gives every shared word an idf of 0, and a
#: reworded copy of the only record was never a likely duplicate (docs/ranking.md).
IDF_PRIOR = 20
#: ``duplicate_overlap`` when config.toml does not set it.
DEFAULT_DUPLICATE_OVERLAP = 0.75
#: In a young store (fewer than YOUNG_STORE records searched), a record whose overlap falls
#: short of ``duplicate_overlap`` by at most MUTUAL_MARGIN is still a likely duplicate when
#: it holds at least MUTUAL_REVERSE of the existing record's own duplicate query: each holds
#: the other's words. A reworded copy loses overlap to its new words ("must", "never",
#: "timed"), which a young store counts as rare (IDF_PRIOR) where a grown one knows them for
#: common; two distinct notes of one topic rarely hold each other's (docs/ranking.md). In a
#: grown store the rule would only add false alarms (2.7% to 4.8% of the TIL corpus' notes).
YOUNG_STORE = 100
MUTUAL_MARGIN = 0.10
MUTUAL_REVERSE = 0.40
#: An existing record whose own duplicate query has fewer tokens is not judged the other
#: way: that a new record holds two words of a two-word title says little.
MUTUAL_MIN_TOKENS = 4
#: The duplicate query keeps its first this-many content tokens: far more than a real
#: title, tags and two problems hold, while a record with 10,000 tags would otherwise
#: make the hook and `check` score 10,000 tokens against every record (minutes).
MAX_QUERY_TOKENS = 64
_CONTEXT = FIELDS.index("projectContext")
_TITLE = FIELDS.index("title")
_TAGS = FIELDS.index("tags")
_PROBLEMS = FIELDS.index("problems")
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
    verdict: str = RELATED
    #: IDF-weighted share of the candidate's query tokens this record holds (§6.1).
    overlap: float = 0.0
    #: The query tokens it holds, rarest first (at most MAX_SHARED_TOKENS).
    shared_tokens: tuple[str, ...] = ()
    #: Same normalised title, solution and applicability as the candidate.
    exact: bool = False
    #: The share of this record's own duplicate query the candidate holds, when it decided
    #: the verdict (an overlap just short of the threshold), else None.
    reverse_overlap: float | None = None

    @property
    def likely(self) -> bool:
        return self.verdict == LIKELY_DUPLICATE

    def to_tuple(self) -> tuple[Any, ...]:
        """Its fields in order, as plain data (``check`` keeps them: storage/findings.py)."""
        return tuple(getattr(self, name) for name in _WARNING_FIELDS)

    @classmethod
    def from_tuple(cls, plain: Sequence[Any]) -> SimilarityWarning:
        """The warning :meth:`to_tuple` gave.

        Its fields are set directly rather than through the frozen ``__init__`` (one
        ``object.__setattr__`` a field): a whole-store ``check`` makes tens of
        thousands, and that took a third of a warm run's time.
        """
        warning = object.__new__(cls)
        warning.__dict__.update(zip(_WARNING_FIELDS, plain, strict=True))
        return warning

    @property
    def evidence(self) -> str:
        """Why, in a few words: ``overlap 0.82; shares pgbouncer, pool, timeout``."""
        # An exact twin is a duplicate whatever its overlap: "overlap 0.00" beside it
        # (a record whose query tokens are all common words) only confuses.
        parts = (
            ["same title, solution and applicability"]
            if self.exact
            else [f"overlap {self.overlap:.2f}"]
        )
        if self.reverse_overlap is not None and not self.exact:
            parts[0] += f" ({self.reverse_overlap:.2f} the other way)"
        if self.shared_tokens:
            parts.append("shares " + ", ".join(self.shared_tokens))
        return "; ".join(parts)

    @property
    def message(self) -> str:
        state = "" if self.status == "active" else f" ({self.status})"
        what = "likely duplicate of" if self.likely else "related to"
        advice = (
            f"add `reliora feedback {self.id} …` or refine {self.id} instead of a new record"
            if self.likely
            else f"if it is the same lesson, use `reliora feedback {self.id} …` or refine it"
        )
        return (
            f"{what} existing experience {self.id}{state} '{self.title}' "
            f"({self.match_level} match, {self.evidence}): {advice}"
        )

    def json_text(self, level: int) -> str:
        """``json.dumps(self.to_json(), ensure_ascii=False, indent=2)`` as it reads nested
        ``level`` deep in such a document, byte for byte.

        With ``indent`` the json module encodes in pure Python, which took most of a
        whole-store ``check --json`` (tens of thousands of warnings); here each value is
        encoded in C and the lines are laid out as that encoder lays them out.
        """
        inner = "\n" + "  " * (level + 1)
        if self.shared_tokens:
            item = "," + inner + "  "
            shared = f"[{inner}  {item.join(map(_string, self.shared_tokens))}{inner}]"
        else:
            shared = "[]"
        reverse = None if self.reverse_overlap is None else round(self.reverse_overlap, 4)
        return (
            f'{{{inner}"code": "SIMILAR_EXPERIENCE_FOUND",{inner}"id": {_string(self.id)},'
            f'{inner}"locator": {_string(self.locator)},{inner}"title": {_string(self.title)},'
            f'{inner}"matchLevel": {_string(self.match_level)},'
            f'{inner}"score": {json_scalar(round(self.score, 4))},'
            f'{inner}"verdict": {_string(self.verdict)},'
            f'{inner}"overlap": {json_scalar(round(self.overlap, 4))},'
            f'{inner}"sharedTokens": {shared},{inner}"reverseOverlap": {json_scalar(reverse)},'
            f'{inner}"message": {_string(self.message)}\n{"  " * level}}}'
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "code": "SIMILAR_EXPERIENCE_FOUND",
            "id": self.id,
            "locator": self.locator,
            "title": self.title,
            "matchLevel": self.match_level,
            "score": round(self.score, 4),
            "verdict": self.verdict,
            "overlap": round(self.overlap, 4),
            "sharedTokens": list(self.shared_tokens),
            "reverseOverlap": None
            if self.reverse_overlap is None
            else round(self.reverse_overlap, 4),
            "message": self.message,
        }


def json_scalar(value: Any) -> str:
    """A number, ``None`` or a boolean as ``json.dumps`` writes it (floats as ``repr``)."""
    if value is None:
        return "null"
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return json.dumps(value)


#: SimilarityWarning's fields in order: what to_tuple gives and from_tuple takes.
_WARNING_FIELDS = tuple(f.name for f in dataclass_fields(SimilarityWarning))


def likely_only(warnings: Sequence[SimilarityWarning]) -> list[SimilarityWarning]:
    """What a modified record is warned about: its related records were seen when it was added."""
    return [warning for warning in warnings if warning.likely]


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

    def record_count(self, exclude_id: str) -> int:
        """N of §6.1: the records searched, without the record ``exclude_id``."""
        ...

    def document_frequency(self, token: str, exclude_id: str) -> int:
        """df of §6.1: how many of those hold a token that ``token`` matches (§4 rule)."""
        ...

    def score_of(self, record_id: str, query: Query) -> Hit | None:
        """The hit of the record ``record_id`` for ``query`` (None: no token matches)."""
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

    def record_count(self, exclude_id: str) -> int:
        return sum(doc.id != exclude_id for doc in self.docs)

    def document_frequency(self, token: str, exclude_id: str) -> int:
        found = QueryToken.of(token)
        return sum(
            doc.id != exclude_id and found.found_in(search_part(doc.text)) for doc in self.docs
        )

    def score_of(self, record_id: str, query: Query) -> Hit | None:
        doc = next((d for d in self.docs if d.id == record_id), None)
        if doc is None:
            return None
        return score_record(doc, query, self.feedback.get(record_id, NO_FEEDBACK))


def duplicate_query(record: Record) -> Query | None:
    """The §6 query of ``record`` (its first MAX_QUERY_TOKENS tokens), or None if it has none."""
    try:
        query = Query.parse(duplicate_query_text(record))
    except RelioraError:
        return None
    if len(query.tokens) > MAX_QUERY_TOKENS:
        query = Query(query.text, query.tokens[:MAX_QUERY_TOKENS], query.phrase)
    return query


def idf_weights(tokens: Sequence[str], pool: Pool, exclude_id: str) -> dict[str, float]:
    """``ln((N + 21) / (df(t) + 1))`` for each token, over the pool without ``exclude_id``."""
    n = pool.record_count(exclude_id) + IDF_PRIOR
    return {t: math.log((n + 1) / (pool.document_frequency(t, exclude_id) + 1)) for t in tokens}


def overlap_of(
    tokens: Sequence[str],
    matched: set[str],
    idf: Mapping[str, float],
    total: float | None = None,
) -> tuple[float, tuple[str, ...]]:
    """The §6.1 overlap of the ``matched`` tokens of ``tokens``, and the shared tokens.

    Shared tokens are highest idf first, ties in query order (the sort is stable).
    ``total``: ``sum(idf[t] for t in tokens)``, when the caller has it already (the
    same for every record a candidate is compared with).
    """
    if total is None:
        total = sum(idf[t] for t in tokens)
    held = [t for t in tokens if t in matched]
    overlap = sum(idf[t] for t in held) / total if total > 0 else 0.0
    shared = sorted(held, key=lambda t: -idf[t])[:MAX_SHARED_TOKENS]
    return overlap, tuple(shared)


def find_similar(
    record: Record,
    pool: Pool,
    *,
    lexical: bool = True,
    duplicate_overlap: float = DEFAULT_DUPLICATE_OVERLAP,
) -> list[SimilarityWarning]:
    """The existing records that ``record`` may repeat (SPEC.md §6 and §6.1).

    Likely duplicates first (at most three), then related records (at most three);
    within each, strongest level first, then score, then id. ``lexical=False``
    compares the record with its exact twins only (same title, solution and
    applicability): what ``check`` does for every record it was not asked about.
    """
    checkpoint()  # check seeks duplicates record by record (stopping.py)
    # Against twins only, the record's own fields are read for its fingerprint alone: every
    # record found is a twin, so a likely duplicate, and none is judged the other way.
    candidate = index_record(record) if lexical else None
    fingerprint_of = candidate.fingerprint if candidate is not None else fingerprint(record)
    query = duplicate_query(record)
    found: dict[str, tuple[str, float, IndexedRecord, tuple[str, ...]]] = {}
    if query is not None and lexical:
        # Weak results are not similarities (SPEC.md §6).
        for hit in pool.similar_hits(query, record.id):
            level = hit.level
            assert candidate is not None
            if level == "strong" and not _shares_context(candidate, hit.doc):
                level = "moderate"
            found[hit.doc.id] = (level, hit.score, hit.doc, hit.matched_tokens)
    twins = pool.twins(fingerprint_of, record.id) if fingerprint_of else []
    for doc in twins:
        if doc.id in found:
            found[doc.id] = ("strong", *found[doc.id][1:])
        else:
            twin = None if query is None else pool.score_of(doc.id, query)
            matched = () if twin is None else twin.matched_tokens
            # Scored as the lexical search would: below moderate, a twin's score is 0.
            score = twin.score if twin is not None and twin.level != "weak" else 0.0
            found[doc.id] = ("strong", score, doc, matched)
    if not found:
        return []
    tokens = [] if query is None else query.token_texts_tuple
    idf = idf_weights(tokens, pool, record.id)
    total = sum(idf[t] for t in tokens)
    young = pool.record_count(record.id) < YOUNG_STORE
    exact = {doc.id for doc in twins}
    warnings = []
    for doc_id, (level, score, doc, matched) in found.items():
        overlap, shared = overlap_of(tokens, set(matched), idf, total)
        is_likely = doc_id in exact or overlap >= duplicate_overlap
        reverse = None
        if young and not is_likely and near_threshold(overlap, duplicate_overlap):
            assert candidate is not None  # without the lexical search every record is a twin
            reverse = reverse_overlap(doc, candidate, pool)
            is_likely = reverse >= MUTUAL_REVERSE
        warnings.append(
            SimilarityWarning(
                id=doc_id,
                locator=doc.locator,
                title=doc.title,
                match_level=level,
                score=score,
                status=doc.status,
                verdict=LIKELY_DUPLICATE if is_likely else RELATED,
                overlap=overlap,
                shared_tokens=shared,
                exact=doc_id in exact,
                reverse_overlap=reverse,
            )
        )
    warnings.sort(key=lambda w: (not w.likely, _LEVEL_ORDER[w.match_level], -w.score, w.id))
    likely = [w for w in warnings if w.likely][:MAX_WARNINGS]
    related = [w for w in warnings if not w.likely][:MAX_WARNINGS]
    return likely + related


def near_threshold(overlap: float, duplicate_overlap: float) -> bool:
    """Short of ``duplicate_overlap`` by at most MUTUAL_MARGIN: the mutual rule may decide."""
    return duplicate_overlap - MUTUAL_MARGIN <= overlap < duplicate_overlap


def is_likely(overlap: float, exact: bool, reverse: float, duplicate_overlap: float) -> bool:
    """The §6.1 verdict with the mutual rule of a young store (``reverse`` 0 in a grown one)."""
    mutual = near_threshold(overlap, duplicate_overlap) and reverse >= MUTUAL_REVERSE
    return exact or overlap >= duplicate_overlap or mutual


def reverse_overlap(existing: IndexedRecord, candidate: IndexedRecord, pool: Pool) -> float:
    """The §6.1 overlap the other way: the share of ``existing``'s own duplicate query
    (title, tags, first two problems) that ``candidate`` holds, weighted by idf over the
    pool without ``existing``."""
    fields = existing.fields
    if len(fields) != len(INDEX_FIELDS):  # a doc without its text (the pool gives text with hits)
        return 0.0
    pieces = [fields[_TITLE], fields[_TAGS], *fields[_PROBLEMS].split("\n")[:2]]
    words = [w for piece in pieces for w in piece.split() if w not in STOP_WORDS]
    tokens = list(dict.fromkeys(words))[:MAX_QUERY_TOKENS]
    if len(tokens) < MUTUAL_MIN_TOKENS:
        return 0.0
    idf = idf_weights(tokens, pool, existing.id)
    searched = search_part(candidate.text)
    held = {t for t in tokens if QueryToken.of(t).found_in(searched)}
    return overlap_of(tokens, held, idf)[0]


def _shares_context(a: IndexedRecord, b: IndexedRecord) -> bool:
    return bool(
        _tokens_of(a.fields[_CONTEXT]) & _tokens_of(b.fields[_CONTEXT])
        or _tokens_of(a.fields[_APPLICABILITY]) & _tokens_of(b.fields[_APPLICABILITY])
    )
