"""The inverted index: every token of the store → which records hold it, in which components.

Pure: plain data in, plain data out (the caller reads files and keeps the cache).

* **Terms** are kept sorted, so the matching rule of SPEC.md §4 becomes range
  lookups: the record tokens that extend a query token ``q`` (when len(q) ≥ 5)
  are the run of terms starting at ``bisect_left(terms, q)``; the ones ``q``
  extends are the exact terms ``q[:k]`` for 5 ≤ k < len(q).
* **Postings** of a term are one ``bytes`` of native unsigned 32-bit integers,
  ``slot << 9 | components``: the record's slot and a bit per scoring
  component (FIELDS order) that holds the term. One object per term is cheap
  to store and load (marshal copies bytes as they are), and only the postings
  of the query's terms are ever decoded.
* **Slots** number the records. A changed file gets a new slot and its old one
  is marked dead (:meth:`InvertedIndex.drop`): postings are only ever appended,
  dead slots are ignored when postings are read, and :meth:`compacted` renumbers
  when too many are dead. Stop words are terms too: the exact phrase needs them,
  and it keeps a term's postings exactly what a substring test of the field
  strings would find.

Document frequencies (how many live records hold a token matching ``q``) come
out of the same postings; "did you mean" suggestions come from the sorted terms.
"""

from __future__ import annotations

import bisect
import sys
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from reliora_git.records.model import FeedbackSummary
from reliora_git.records.stopping import checkpoint
from reliora_git.search.rank import (
    CONTEXT_MASK,
    FIELD_SEPARATOR,
    FIELDS,
    INDEX_FIELDS,
    LEVELS,
    NO_FEEDBACK,
    ContextFilter,
    Hit,
    IndexedRecord,
    Query,
    least_matches,
    score_masks,
    search_part,
    sort_key,
)
from reliora_git.search.stopwords import STOP_WORDS
from reliora_git.search.tokens import PREFIX_MIN

#: Bits of a posting that hold the components (INDEX_FIELDS: the nine §5 fields, then the
#: asked-as lines); the slot is in the bits above.
COMPONENT_BITS = len(INDEX_FIELDS)
_COMPONENTS = (1 << COMPONENT_BITS) - 1
#: The components search scores (SPEC.md §5): a record holding a token only in its asked-as
#: lines does not match it there, and holds no posting for search.
SEARCH_COMPONENTS = (1 << len(FIELDS)) - 1
#: The array type code of a posting: unsigned, at least 32 bits.
POSTING = "I" if array("I").itemsize >= 4 else "L"
#: The saved index is compacted when more than this share of its slots are dead.
DEAD_SHARE = 0.25
#: "Did you mean": at most this many suggestions per token.
MAX_SUGGESTIONS = 3
#: Tokens and terms shorter than this get no "did you mean" (a one- or two-letter word is
#: a fragment, ``t`` of ``doesn't``, or an abbreviation: its neighbours are noise).
MIN_SUGGESTED = 3


def record_terms(text: str) -> dict[str, int]:
    """Each distinct token of a record's joined field strings → its component bits."""
    terms: dict[str, int] = {}
    for k, field_string in enumerate(text.split(FIELD_SEPARATOR)):
        bit = 1 << k
        for token in set(field_string.split()):
            terms[token] = terms.get(token, 0) | bit
    return terms


def searched_terms(terms: Mapping[str, int]) -> dict[str, int]:
    """:func:`record_terms` as search sees them: the §5 components only (SEARCH_COMPONENTS)."""
    return {
        term: mask & SEARCH_COMPONENTS for term, mask in terms.items() if mask & SEARCH_COMPONENTS
    }


@dataclass
class InvertedIndex:
    #: Sorted, unique.
    terms: list[str]
    #: Postings of ``terms[i]`` (see the module docstring), in the order they were added.
    postings: list[bytes]
    #: Slot → the record, or None for a dead slot. A record's ``text`` may be '' here: the
    #: caller hands :meth:`rank` a way to fetch it for the few records that need it.
    docs: list[IndexedRecord | None]

    @classmethod
    def empty(cls) -> InvertedIndex:
        return cls([], [], [])

    # --- building ------------------------------------------------------------------------

    def extended(self, added: Iterable[tuple[IndexedRecord, dict[str, int]]]) -> InvertedIndex:
        """A new index with ``added`` records (a record and its :func:`record_terms`) in new slots.

        The records' texts are dropped from ``docs`` (the caller keeps them elsewhere).
        """
        records = list(added)
        builder = PostingsBuilder(self)
        first = builder.reserve(len(records))
        builder.add_part(
            {first + n: doc for n, (doc, _) in enumerate(records)},
            piece_postings((first + n, terms) for n, (_, terms) in enumerate(records)),
        )
        return builder.index()

    def drop(self, slots: Iterable[int]) -> None:
        """Mark ``slots`` dead: their postings stay, and are skipped from now on."""
        for slot in slots:
            self.docs[slot] = None

    def dead_share(self) -> float:
        return self.docs.count(None) / len(self.docs) if self.docs else 0.0

    def compacted(self) -> tuple[InvertedIndex, list[int]]:
        """The same live records renumbered without dead slots, and old slot → new slot (-1)."""
        renumber = [-1] * len(self.docs)
        docs: list[IndexedRecord | None] = []
        for slot, doc in enumerate(self.docs):
            if doc is not None:
                renumber[slot] = len(docs)
                docs.append(doc)
        terms: list[str] = []
        postings: list[bytes] = []
        for term, packed in zip(self.terms, self.postings, strict=True):
            kept = array(POSTING)
            for value in _decode(packed):
                new = renumber[value >> COMPONENT_BITS]
                if new >= 0:
                    kept.append(new << COMPONENT_BITS | value & _COMPONENTS)
            if kept:
                terms.append(term)
                postings.append(kept.tobytes())
        return InvertedIndex(terms, postings, docs), renumber

    # --- reading -------------------------------------------------------------------------

    def matching_terms(self, token: str) -> list[int]:
        """Indexes of the terms that ``token`` matches by the rule of SPEC.md §4."""
        terms = self.terms
        found: list[int] = []
        if len(token) >= PREFIX_MIN:
            for k in range(PREFIX_MIN, len(token)):  # record tokens that the token extends
                i = bisect.bisect_left(terms, token[:k])
                if i < len(terms) and terms[i] == token[:k]:
                    found.append(i)
            i = bisect.bisect_left(terms, token)  # the token itself, and tokens that extend it
            while i < len(terms) and terms[i].startswith(token):
                found.append(i)
                i += 1
        else:
            i = bisect.bisect_left(terms, token)
            if i < len(terms) and terms[i] == token:
                found.append(i)
        return found

    def masks(self, token: str, exact: dict[int, int] | None = None) -> dict[int, int]:
        """Live slot → the §5 components in which a token matching ``token`` occurs.

        ``exact`` (when given) also receives the components of ``token`` itself. Only the
        components search scores count (SEARCH_COMPONENTS): a record holding the token in
        its asked-as lines alone is not a holder.
        """
        checkpoint()  # a token's postings are a step of every ranking (stopping.py)
        docs = self.docs
        found: dict[int, int] = {}
        get = found.get
        for i in self.matching_terms(token):
            is_exact = exact is not None and self.terms[i] == token
            for value in _decode(self.postings[i]):
                components = value & SEARCH_COMPONENTS
                if not components:
                    continue
                slot = value >> COMPONENT_BITS
                if docs[slot] is None:
                    continue
                found[slot] = get(slot, 0) | components
                if is_exact:
                    assert exact is not None
                    exact[slot] = exact.get(slot, 0) | components
        return found

    def document_frequency(self, token: str) -> int:
        """How many live records hold a token that ``token`` matches (SPEC.md §6.1's df)."""
        return len(self.masks(token))

    def suggestions(self, token: str) -> list[str]:
        """Up to three terms close to ``token`` (edit distance ≤ 2, ≤ 1 for ≤ 4 characters).

        None for a token under three letters, nor one that only cuts the token short
        (``red`` → ``re``): see :func:`worth_suggesting`.

        Most frequent first, then alphabetical: deterministic. Only live terms count, and
        never a stop word (a query drops them, so suggesting one would find nothing).
        """
        if len(token) < MIN_SUGGESTED:
            return []
        limit = 1 if len(token) <= 4 else 2
        close = [
            term
            for term in self.terms
            if abs(len(term) - len(token)) <= limit
            and worth_suggesting(token, term)
            and within_distance(token, term, limit)
        ]
        ranked = sorted((-self.document_frequency(term), term) for term in close)
        return [term for count, term in ranked if count < 0][:MAX_SUGGESTIONS]

    # --- ranking -------------------------------------------------------------------------

    def rank(
        self,
        query: Query,
        text_of: Callable[[int], str],
        *,
        feedback: Mapping[str, FeedbackSummary] | None = None,
        context: ContextFilter | None = None,
        include_retired: bool = False,
        min_level: str | None = None,
        exclude_id: str | None = None,
    ) -> list[Hit]:
        """What :func:`reliora_git.search.rank.rank` gives over the live records, from the postings.

        ``text_of(slot)`` gives a record's joined field strings: needed only to confirm
        the exact phrase on records that hold every query token in one component.
        """
        return [
            hit
            for _, hit in self.rank_slots(
                query,
                text_of,
                feedback=feedback,
                context=context,
                include_retired=include_retired,
                min_level=min_level,
                exclude_id=exclude_id,
            )
        ]

    def rank_slots(
        self,
        query: Query,
        text_of: Callable[[int], str],
        *,
        feedback: Mapping[str, FeedbackSummary] | None = None,
        context: ContextFilter | None = None,
        include_retired: bool = False,
        min_level: str | None = None,
        exclude_id: str | None = None,
    ) -> list[tuple[int, Hit]]:
        """:meth:`rank` with each hit's slot."""
        feedback = feedback or {}
        allowed = LEVELS[: LEVELS.index(min_level) + 1] if min_level else LEVELS
        least = least_matches(len(query.tokens), allowed[-1])
        exact: list[dict[int, int]] = [{} for _ in query.tokens]
        per_token = [self.masks(t.text, exact[n]) for n, t in enumerate(query.tokens)]
        matched: dict[int, list[int]] = {}
        for n, found in enumerate(per_token):
            for slot in found:
                counts = matched.get(slot)
                if counts is None:
                    matched[slot] = counts = []
                counts.append(n)
        admitted: set[int] | None = None
        if context is not None:
            admitted = set()
            for t in context.tokens:
                admitted.update(
                    slot for slot, mask in self.masks(t.text).items() if mask & CONTEXT_MASK
                )
        docs = self.docs
        results: list[tuple[int, Hit]] = []
        for slot, present in matched.items():
            if len(present) < least:
                continue
            doc = docs[slot]
            assert doc is not None  # masks() reports live slots only
            if not include_retired and not doc.is_active:
                continue
            if exclude_id is not None and doc.id == exclude_id:
                continue
            if admitted is not None and slot not in admitted:
                continue
            masks = [per_token[n].get(slot, 0) for n in range(len(query.tokens))]
            phrase = False
            if query.phrase is not None and len(present) == len(query.tokens):
                common = SEARCH_COMPONENTS
                for n in range(len(query.tokens)):
                    common &= exact[n].get(slot, 0)
                phrase = bool(common) and query.phrase in search_part(text_of(slot))
            hit = score_masks(doc, query, masks, phrase, feedback.get(doc.id, NO_FEEDBACK))
            if hit.level in allowed:
                results.append((slot, hit))
        results.sort(key=lambda pair: sort_key(pair[1]))
        return results


class PostingsBuilder:
    """Adds records to an index in new slots, their postings made by :func:`piece_postings`."""

    def __init__(self, base: InvertedIndex) -> None:
        self.base = base
        self.docs = list(base.docs)
        #: Postings made elsewhere (piece_postings), to append in order.
        self.parts: dict[str, list[bytes]] = {}

    def reserve(self, count: int) -> int:
        """Room for ``count`` records whose postings come as parts; the first slot."""
        first = len(self.docs)
        self.docs.extend([None] * count)
        return first

    def add_part(
        self, doc_slots: Mapping[int, IndexedRecord], postings: Mapping[str, bytes]
    ) -> None:
        """Records in reserved slots, and their postings from :func:`piece_postings`."""
        for slot, doc in doc_slots.items():
            self.docs[slot] = doc._replace(text="") if doc.text else doc
        parts = self.parts
        for term, packed in postings.items():
            found = parts.get(term)
            if found is None:
                parts[term] = [packed]
            else:
                found.append(packed)

    def index(self) -> InvertedIndex:
        """The base index with every added record."""
        base = self.base
        if not self.parts:
            return InvertedIndex(base.terms, base.postings, self.docs)
        merged = dict(zip(base.terms, base.postings, strict=True))
        for term, new in self.parts.items():
            old = merged.get(term)
            # Interned: a term is also a dictionary key and a token of every query.
            merged[sys.intern(term)] = b"".join(new) if old is None else b"".join([old, *new])
        terms = sorted(merged)
        return InvertedIndex(terms, [merged[t] for t in terms], self.docs)


def piece_postings(records: Iterable[tuple[int, Mapping[str, int]]]) -> dict[str, bytes]:
    """The postings of records in known slots: (slot, :func:`record_terms`) pairs, in order."""
    grown: dict[str, array[int]] = {}
    for slot, terms in records:
        base = slot << COMPONENT_BITS
        for term, mask in terms.items():
            found = grown.get(term)
            if found is None:
                grown[term] = array(POSTING, (base | mask,))
            else:
                found.append(base | mask)
    return {term: found.tobytes() for term, found in grown.items()}


def _decode(packed: bytes) -> array[int]:
    values = array(POSTING)
    values.frombytes(packed)
    return values


def worth_suggesting(token: str, term: str) -> bool:
    """Whether ``term`` is worth a "did you mean" for ``token`` that matched nothing.

    Never a stop word (a query drops it, so it would find nothing), a term under
    MIN_SUGGESTED letters, or the typed word cut short (``red`` → ``re``, ``reset`` →
    ``res``): a truncation is not what anyone meant, only what an edit distance of one
    or two allows. Two truncations stay: the singular of a plural (``tests`` →
    ``test``, which §4's prefix rule does not join under five letters), and one of
    PREFIX_MIN letters or more (§4 matches those already, so it is never asked for).
    """
    if len(term) < MIN_SUGGESTED or term in STOP_WORDS:
        return False
    if token.startswith(term) and len(term) < PREFIX_MIN:
        return token in (term + "s", term + "es")
    return True


def within_distance(a: str, b: str, limit: int) -> bool:
    """Whether the Levenshtein distance of ``a`` and ``b`` is at most ``limit``.

    Row by row, stopping as soon as every cell of a row exceeds the limit.
    """
    if a == b:
        return True
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit


def suggest_for(index: InvertedIndex, tokens: Sequence[str]) -> dict[str, list[str]]:
    """Suggestions for each token that matches nothing in the store (tokens without any omitted)."""
    found: dict[str, list[str]] = {}
    for token in tokens:
        if index.masks(token):
            continue
        close = index.suggestions(token)
        if close:
            found[token] = close
    return found
