"""Explained lexical ranking (SPEC.md §5). Pure: plain data in, plain data out.

Each record is indexed once as nine *field strings*, one per scoring component.
A field string holds the field's token sequences (each list item and each tag
its own sequence) as ``" tok tok tok "``, sequences separated by newlines.
Because tokens never contain spaces or newlines, every matching rule becomes a
substring test that runs in C:

* exact token ``q``:                       ``" q "`` in the field;
* a record token that extends ``q``:         ``" q"`` in the field (when len(q) ≥ 5);
* a record token that ``q`` extends:         ``" q[:k] "`` for 5 ≤ k < len(q);
* the exact phrase (a whole-token run inside one sequence): ``" a b c "``.

The same needles make a cheap prefilter: a query token can only match a field of
a record if one of its needles occurs in the record's nine field strings joined
by tabs (a needle holds no tab, so it cannot straddle two fields), and every
needle contains `` q[:5]`` (or is ``" q "``). :func:`rank` finds that one
substring per token over many records at once, skips records where no token
passes, and scores the others field by field for the tokens that passed only: on
a large store most records fail, which makes ranking several times faster
without changing any score.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from reliora_git.records.errors import RelioraError
from reliora_git.records.model import MAX_ASKED, MAX_ASKED_CHARS, FeedbackSummary, Record
from reliora_git.search.tokens import PREFIX_MIN, content_tokens, token_matches, tokenize

#: Scoring components in JSON order, with their weight per matching query token.
FIELD_WEIGHTS: dict[str, int] = {
    "tags": 9,
    "title": 8,
    "problems": 7,
    "task": 5,
    "solution": 4,
    "projectContext": 4,
    "applicability": 4,
    "failedAttempts": 3,
    "warnings": 2,
}
FIELDS = tuple(FIELD_WEIGHTS)
_WEIGHTS = tuple(FIELD_WEIGHTS.values())
#: The asked-as lines (SPEC.md §3): indexed after the nine fields above as a field of its own,
#: read by the task ranking (taskrank.py) and never by search, whose §5 score stays the nine's.
ASKED = "asked"
INDEX_FIELDS = (*FIELDS, ASKED)
#: Fields that the --project-context filter looks at.
CONTEXT_FIELDS = (
    FIELDS.index("projectContext"),
    FIELDS.index("tags"),
    FIELDS.index("applicability"),
)
#: The bits of those fields in a mask (bit k is FIELDS[k]).
CONTEXT_MASK = sum(1 << k for k in CONTEXT_FIELDS)

PHRASE_BONUS = 12.0
FEEDBACK_WEIGHTS = {
    "success": 1.0,
    "partial": 0.5,
    "failure": -1.0,
    "not-applicable": -0.25,
    "outdated": -0.5,
}
FEEDBACK_MIN, FEEDBACK_MAX = -1.5, 2.5
LEVELS = ("strong", "moderate", "weak")
NO_FEEDBACK = FeedbackSummary()


# --- indexing --------------------------------------------------------------------------------


def field_texts(record: Record) -> tuple[list[str], ...]:
    """The text pieces of each indexed field, in INDEX_FIELDS order; each piece is one sequence."""
    return (
        record.tags,
        [record.title],
        record.problems,
        [record.task],
        [record.solution, record.why_it_worked],
        [record.project_context],
        [record.applicability],
        record.failed_attempts,
        record.warnings,
        [line[:MAX_ASKED_CHARS] for line in record.asked_as[:MAX_ASKED]],
    )


def encode_field(pieces: Iterable[str]) -> str:
    """One field string: each piece's tokens as ``" a b "``, pieces separated by newlines."""
    return "\n".join(f" {' '.join(tokens)} " for piece in pieces if (tokens := tokenize(piece)))


#: Joins the field strings of a record into one (a tab is never part of a field string).
FIELD_SEPARATOR = "\t"


def search_part(text: str) -> str:
    """The nine §5 field strings of a record's joined text (IndexedRecord.text), without the
    asked-as field that only the task ranking reads: what search matches, phrase included."""
    cut = text.rfind(FIELD_SEPARATOR)
    return text[:cut] if cut != -1 else text  # a doc kept without its text: ''


class IndexedRecord(NamedTuple):
    """What ranking needs of one record, and what a result shows.

    A named tuple rather than a dataclass: a search of a large store builds one per
    record from the cache on every query, and a tuple is built several times faster.
    """

    id: str
    title: str
    locator: str
    tags: tuple[str, ...]
    status: str
    confidence: str | None
    #: The field strings in INDEX_FIELDS order (see the module docstring), joined by a tab:
    #: one string to prefilter with, and one object instead of ten to cache and load. Search
    #: reads the nine of FIELDS (:func:`search_part`); the last, asked-as, is the task ranking's.
    text: str
    #: Digest of the normalised title, solution and applicability ('' when all are empty):
    #: equal fingerprints mean an exact duplicate.
    fingerprint: str
    #: Ids of the records this one replaces (its ``supersedes`` list).
    supersedes: tuple[str, ...] = ()
    #: The code paths it is about (SPEC.md §12): a brief finds the records about a file
    #: among every record without reading each one's JSON.
    paths: tuple[str, ...] = ()
    #: Its guards with their defaults applied (records/guards.py ActiveGuard tuples):
    #: the hook learns from the index which records have guards, without parsing any.
    guards: tuple[tuple[Any, ...], ...] = ()
    #: Tokens in its fields: the task ranking's length normalisation (taskrank.py).
    size: int = 0

    @property
    def fields(self) -> list[str]:
        """The field strings in INDEX_FIELDS order (FIELDS, then the asked-as lines)."""
        return self.text.split(FIELD_SEPARATOR)

    @property
    def is_active(self) -> bool:
        return self.status not in ("retired", "superseded")


def fingerprint(record: Record) -> str:
    """A digest of the token sequences of title, solution and applicability, or ''.

    A digest, not the tokens themselves: the solution is most of a record's text,
    and the fingerprint is only ever compared for equality.
    """
    parts = [
        " ".join(tokenize(text)) for text in (record.title, record.solution, record.applicability)
    ]
    if not any(parts):
        return ""
    import hashlib  # only when a record is indexed: it loads OpenSSL, which a search does not need

    return hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=16).hexdigest()


def index_record(record: Record) -> IndexedRecord:
    text = FIELD_SEPARATOR.join(encode_field(pieces) for pieces in field_texts(record))
    return IndexedRecord(
        id=record.id,
        title=record.title,
        locator=record.locator,
        tags=tuple(record.tags),
        status=record.status,
        confidence=record.confidence,
        text=text,
        fingerprint=fingerprint(record),
        supersedes=tuple(record.supersedes),
        paths=tuple(record.paths),
        guards=_resolved_guards(record),
        size=len(text.split()),
    )


def _resolved_guards(record: Record) -> tuple[tuple[Any, ...], ...]:
    if not record.guards:
        return ()
    from reliora_git.records.guards import resolve

    return tuple(tuple(guard) for guard in resolve(record, record.guards))


def superseders(docs: Iterable[IndexedRecord]) -> dict[str, list[str]]:
    """Record id → the active records that name it in ``supersedes`` (SPEC.md §11), sorted.

    "Active" is a record's own status, so chains and cycles are well defined.
    """
    by: dict[str, set[str]] = {}
    for doc in docs:
        if doc.supersedes and doc.status == "active":
            for old in doc.supersedes:
                if old != doc.id:
                    by.setdefault(old, set()).add(doc.id)
    return {old: sorted(ids) for old, ids in by.items()}


# --- queries ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryToken:
    """A query token with the substrings that find it in a field string (see module docstring)."""

    text: str
    needles: tuple[str, ...]

    @classmethod
    def of(cls, token: str) -> QueryToken:
        needles = [f" {token} "]
        if len(token) >= PREFIX_MIN:
            needles.append(f" {token}")
            needles.extend(f" {token[:k]} " for k in range(PREFIX_MIN, len(token)))
        return cls(token, tuple(needles))

    def found_in(self, field_string: str) -> bool:
        # Most fields lack most tokens: one test rules them out before the full list.
        if self.prefilter_needle not in field_string:
            return False
        return any(needle in field_string for needle in self.needles)

    @functools.cached_property
    def prefilter_needle(self) -> str:
        """One substring of every needle: where it is absent, :meth:`found_in` is False.

        Every needle starts with a space and the token's first PREFIX_MIN characters
        (or is the whole exact needle of a short token), so one ``str.find`` per token
        over many records finds all that may match; :meth:`found_in` then decides.
        """
        if len(self.text) < PREFIX_MIN:
            return self.needles[0]
        return f" {self.text[:PREFIX_MIN]}"


@functools.lru_cache(maxsize=1 << 16)
def _query_token(token: str) -> QueryToken:
    """:meth:`QueryToken.of`, made once per token (it is immutable): ``check`` parses the
    duplicate query of every record, most of whose words other records share."""
    return QueryToken.of(token)


#: A query is searched for its first this-many unique content tokens (first-seen order).
#: Far more than any task description holds; without a bound a pasted log of 10,000
#: words scored every token against the store (30 s and 1 GB), locally, in an MCP call
#: and in ``org search``, whose SQL grows with the tokens. The duplicate query of a
#: record keeps fewer (duplicates.MAX_QUERY_TOKENS).
QUERY_TOKEN_CAP = 256


@dataclass(frozen=True)
class Query:
    text: str
    tokens: tuple[QueryToken, ...]
    #: ``" a b c "`` when the query has at least two tokens (stop words kept), else None.
    phrase: str | None
    #: How many unique content tokens past QUERY_TOKEN_CAP were left out of the search
    #: (the search document's ``truncatedTokens``).
    truncated_tokens: int = 0

    @classmethod
    def parse(cls, text: str) -> Query:
        tokens = content_tokens(text)
        if not tokens:
            raise RelioraError(
                f"the query {text!r} has no searchable words (only stop words or punctuation)",
                code="empty_query",
            )
        kept = tokens[:QUERY_TOKEN_CAP]
        sequence = tokenize(text)
        # The phrase stays whole: the bonus is for the query's exact words in a record.
        phrase = f" {' '.join(sequence)} " if len(sequence) >= 2 else None
        dropped = len(tokens) - len(kept)
        return cls(text, tuple(_query_token(t) for t in kept), phrase, dropped)

    @property
    def token_texts(self) -> list[str]:
        return [t.text for t in self.tokens]

    def truncation_note(self) -> str | None:
        """The line telling people that words were left out (None when none were)."""
        if not self.truncated_tokens:
            return None
        kept = len(self.tokens)
        return (
            f"the query has {kept + self.truncated_tokens} distinct words; "
            f"only the first {kept} were searched"
        )

    @functools.cached_property
    def token_texts_tuple(self) -> tuple[str, ...]:
        return tuple(t.text for t in self.tokens)


@dataclass(frozen=True)
class ContextFilter:
    text: str
    tokens: tuple[QueryToken, ...]

    @classmethod
    def parse(cls, text: str) -> ContextFilter:
        tokens = content_tokens(text)
        if not tokens:
            raise RelioraError(
                f"--project-context {text!r} has no searchable words", code="empty_query"
            )
        return cls(text, tuple(QueryToken.of(t) for t in tokens))

    def admits(self, doc: IndexedRecord) -> bool:
        return any(t.found_in(doc.fields[i]) for i in CONTEXT_FIELDS for t in self.tokens)


# --- explaining --------------------------------------------------------------------------------


def matched_terms(text: str, tokens: Iterable[str]) -> dict[str, list[str]]:
    """Each of ``tokens`` → the record's own words it matches by the rule of SPEC.md §4.

    ``text`` is a record's joined field strings (IndexedRecord.text). The score says
    *that* a query token matched; this says *what* it matched: ``modulenotfounderror``
    matched the record's ``module`` (a prefix of at least 5 characters), not itself.
    The token itself comes first when the record holds it, then the others in
    alphabetical order; a token that matches nothing is left out. Only for the results
    shown: it reads each record's text once.
    """
    by_start: dict[str, list[str]] = {}
    held = set(text.split())
    for term in held:
        if len(term) >= PREFIX_MIN:
            by_start.setdefault(term[:PREFIX_MIN], []).append(term)
    found: dict[str, list[str]] = {}
    for token in tokens:
        # A prefix match needs both to start with the shorter one's first 5 characters.
        others = (
            sorted(
                t
                for t in by_start.get(token[:PREFIX_MIN], ())
                if t != token and token_matches(token, t)
            )
            if len(token) >= PREFIX_MIN
            else []
        )
        terms = [token] if token in held else []
        terms += others
        if terms:
            found[token] = terms
    return found


# --- scoring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    doc: IndexedRecord
    score: float
    relevance: float
    coverage: float
    level: str
    #: The query's tokens, and for each the components it matches (see score_masks).
    tokens: tuple[str, ...]
    masks: tuple[int, ...]
    #: Whether the exact phrase bonus applies.
    phrase: bool
    feedback: FeedbackSummary = NO_FEEDBACK

    # Derived only for the hits that are shown: a common word gives tens of thousands.
    @functools.cached_property
    def matched_tokens(self) -> tuple[str, ...]:
        return tuple(t for t, mask in zip(self.tokens, self.masks, strict=True) if mask)

    @functools.cached_property
    def breakdown(self) -> dict[str, float]:
        """Every scaled component (nine fields + exactPhrase), coverageMultiplier, feedback."""
        multiplier = 0.6 + 0.4 * self.coverage
        counts = [sum(mask >> k & 1 for mask in self.masks) for k in range(len(FIELDS))]
        found = {
            name: weight * count * multiplier
            for name, weight, count in zip(FIELDS, _WEIGHTS, counts, strict=True)
        }
        found["exactPhrase"] = (PHRASE_BONUS if self.phrase else 0.0) * multiplier
        found["coverageMultiplier"] = multiplier
        found["feedback"] = self.feedback.adjustment
        return found


def feedback_summary(outcomes: Iterable[str]) -> FeedbackSummary:
    """Count outcomes; the adjustment is their weighted sum clamped to [−1.5, +2.5]."""
    counts = dict.fromkeys(FEEDBACK_WEIGHTS, 0)
    for outcome in outcomes:
        if outcome in counts:
            counts[outcome] += 1
    total = sum(FEEDBACK_WEIGHTS[o] * n for o, n in counts.items())
    return FeedbackSummary(
        success=counts["success"],
        partial=counts["partial"],
        failure=counts["failure"],
        not_applicable=counts["not-applicable"],
        outdated=counts["outdated"],
        adjustment=min(FEEDBACK_MAX, max(FEEDBACK_MIN, total)),
    )


#: The least coverage of each level (see match_level).
_LEVEL_COVERAGE = {"strong": 0.75, "moderate": 0.40, "weak": 0.0}


def match_level(coverage: float, relevance: float) -> str:
    # Rounded so that a score landing exactly on a threshold by hand (e.g. 20 × 0.9 = 18)
    # is not pushed below it by binary floating point.
    coverage, relevance = round(coverage, 9), round(relevance, 9)
    if coverage >= 0.75 and relevance >= 18:
        return "strong"
    if coverage >= 0.40 and relevance >= 8:
        return "moderate"
    return "weak"


#: Records joined into one string per prefilter pass: bounds the memory of the joined copy
#: (one non-ASCII record makes a whole chunk 2 or 4 bytes per character).
PREFILTER_CHUNK = 4096


def present_tokens(
    docs: Sequence[IndexedRecord], tokens: Sequence[QueryToken], min_count: int = 1
) -> dict[int, list[QueryToken]]:
    """Index of each record holding at least ``min_count`` tokens → the tokens it holds.

    A token left out of a record's list matches none of its fields. Instead of
    testing every needle on every record, the texts of a chunk of records are
    joined with NUL (never part of a needle) and each token's prefilter needle is
    found with ``str.find`` over the whole chunk, jumping to the next record after
    each find: the scanning runs in C, and Python only sees the records that hold
    the needle, where :meth:`QueryToken.found_in` (on all nine fields at once:
    needles hold no tab) decides.

    With ``min_count`` above one (a duplicate search needs 40% of a long query), a
    record that none of the first ``len(tokens) - min_count + 1`` tokens matches
    can no longer reach it: the remaining tokens are tested on the records found so
    far only, and a record drops out as soon as the tokens left cannot lift it to
    ``min_count``. Scanning the whole store is what costs, so this spares most of it.
    """
    scanned = max(0, len(tokens) - max(min_count, 1) + 1)
    if scanned < len(tokens):
        tokens = rarest_first(docs[:PREFILTER_CHUNK], tokens)
    present: dict[int, list[QueryToken]] = {}
    for first in range(0, len(docs), PREFILTER_CHUNK):
        chunk = docs[first : first + PREFILTER_CHUNK]
        texts = [doc.text for doc in chunk]
        joined = "\0".join(texts)
        starts = [0, *itertools.accumulate(len(text) + 1 for text in texts)]
        for token in tokens[:scanned]:
            needle = token.prefilter_needle
            at = joined.find(needle)
            while at != -1:
                i = bisect.bisect_right(starts, at) - 1
                if token.found_in(texts[i]):
                    present.setdefault(first + i, []).append(token)
                at = joined.find(needle, starts[i + 1])
    for position in range(scanned, len(tokens)):
        token = tokens[position]
        # Tokens still to test, this one included: a record below min_count - left is out.
        left = len(tokens) - position
        for i, found in list(present.items()):
            if len(found) + left < min_count:
                del present[i]
            elif token.found_in(docs[i].text):
                found.append(token)
    if min_count > 1:
        present = {i: found for i, found in present.items() if len(found) >= min_count}
    return present


def rarest_first(sample: Sequence[IndexedRecord], tokens: Sequence[QueryToken]) -> list[QueryToken]:
    """``tokens`` ordered by how often their prefilter needle occurs in ``sample``, rarest first.

    Only an estimate (one C-level count per token over a sample of records), and
    any order gives the same result: it decides which tokens :func:`present_tokens`
    scans the whole store for. Rare ones find few records, and the common ones are
    then tested on those few instead of yielding most of the store.
    """
    joined = "\0".join(doc.text for doc in sample)
    return sorted(tokens, key=lambda token: joined.count(token.prefilter_needle))


def score_record(
    doc: IndexedRecord,
    query: Query,
    feedback: FeedbackSummary = NO_FEEDBACK,
    present: Sequence[QueryToken] | None = None,
) -> Hit | None:
    """Score one record against ``query``; None when no query token matches it.

    ``present`` (from :func:`present_tokens`) spares testing tokens that cannot match.
    """
    tokens = query.tokens if present is None else present
    text = search_part(doc.text)
    fields = text.split(FIELD_SEPARATOR)
    # Rather than testing every token on all nine fields, only the fields that hold a
    # token's prefilter needle are tested.
    found: dict[str, int] = {}
    for token in tokens:
        needle = token.prefilter_needle
        at = text.find(needle)
        while at != -1:
            k = text.count(FIELD_SEPARATOR, 0, at)
            if token.found_in(fields[k]):
                found[token.text] = found.get(token.text, 0) | 1 << k
            end = text.find(FIELD_SEPARATOR, at)
            if end == -1:
                break
            at = text.find(needle, end)
    if not found:
        return None
    # A phrase holds no tab, so it is in the joined text exactly when it is in one field.
    phrase = query.phrase is not None and query.phrase in text
    masks = [found.get(t.text, 0) for t in query.tokens]
    return score_masks(doc, query, masks, phrase, feedback)


def score_masks(
    doc: IndexedRecord,
    query: Query,
    masks: Sequence[int],
    phrase: bool,
    feedback: FeedbackSummary = NO_FEEDBACK,
) -> Hit:
    """The hit of a record in which query token ``n`` matches the components of ``masks[n]``.

    Bit ``k`` of a mask stands for ``FIELDS[k]``; at least one mask is non-zero. The
    one formula of SPEC.md §5, shared by the substring scan and the inverted index.
    """
    matched = 0
    raw = 0
    for mask in masks:
        if mask:
            matched += 1
            raw += MASK_WEIGHTS[mask]
    coverage = matched / len(query.tokens)
    multiplier = 0.6 + 0.4 * coverage
    # Σ raw_F is a sum of integers, so adding it mask by mask rather than field by field
    # gives the very same float.
    relevance = (raw + (PHRASE_BONUS if phrase else 0.0)) * multiplier
    return Hit(
        doc=doc,
        score=relevance + feedback.adjustment,
        relevance=relevance,
        coverage=coverage,
        level=match_level(coverage, relevance),
        tokens=query.token_texts_tuple,
        masks=tuple(masks),
        phrase=phrase,
        feedback=feedback,
    )


#: The summed weights of the components in each mask (bit k is FIELDS[k]).
MASK_WEIGHTS = [
    sum(weight for k, weight in enumerate(_WEIGHTS) if mask >> k & 1)
    for mask in range(1 << len(FIELDS))
]


def least_matches(count: int, lowest_level: str) -> int:
    """The fewest of ``count`` query tokens a record must match to reach ``lowest_level``.

    The tokens a record matches decide its coverage before it is scored, so a record
    below the coverage of the lowest level asked for can be skipped unscored. The same
    rounded comparison as :func:`match_level`.
    """
    least_coverage = _LEVEL_COVERAGE[lowest_level]
    return next(c for c in range(1, count + 1) if round(c / count, 9) >= least_coverage)


#: Scores are compared at this resolution: 20.7 - 1.5 and 19.2 are one score, not two
#: that differ in their last binary digit (the JSON shows both as 19.2).
ORDER_SCALE = 1e9


def sort_key(hit: Hit) -> tuple[float, float, str]:
    """Score descending, then relevance, then id; scores equal to 9 decimals are ties.

    ``round(x * 1e9)`` rounds half to even, as PostgreSQL's ``round(float8)`` does,
    so the organisation database orders the same way (org/search.py).
    """
    return (
        -round(hit.score * ORDER_SCALE),
        -round(hit.relevance * ORDER_SCALE),
        hit.doc.id,
    )


def rank(
    docs: Sequence[IndexedRecord],
    query: Query,
    *,
    feedback: Mapping[str, FeedbackSummary] | None = None,
    context: ContextFilter | None = None,
    include_retired: bool = False,
    min_level: str | None = None,
) -> list[Hit]:
    """All results for ``query``, best first (score, then relevance, then id)."""
    feedback = feedback or {}
    allowed = LEVELS[: LEVELS.index(min_level) + 1] if min_level else LEVELS
    least = least_matches(len(query.tokens), allowed[-1])
    hits = []
    # Records absent from present_tokens match no token (or too few to reach min_level).
    for i, present in sorted(present_tokens(docs, query.tokens, least).items()):
        doc = docs[i]
        if not include_retired and not doc.is_active:
            continue
        if context is not None and not context.admits(doc):
            continue
        hit = score_record(doc, query, feedback.get(doc.id, NO_FEEDBACK), present)
        if hit is not None and hit.level in allowed:
            hits.append(hit)
    hits.sort(key=sort_key)
    return hits
