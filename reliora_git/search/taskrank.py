"""Ranking records for a task description (SPEC.md §14): BM25F over the index's postings.

Pure: plain data in (the inverted index of inverted.py), plain data out.

A task is long, chatty free text — a prompt, an issue body — unlike a search
query. The §5 ranking counts every shared word alike, so a task's incidental
words ("file", "error", "working") outweigh its one telling word. This ranking
weighs each word by how rare it is in the store (BM25's idf) and by the fields
that hold it (BM25F: a word in the title or the problems says more than one in
the solution), saturating, so that no single word decides alone:

* **Words.** The task's unique non-stop-word tokens (SPEC.md §4), and the
  agent's own keywords (``--query``) weighted :attr:`Settings.query_weight`
  each. Words held by more than :attr:`Settings.max_df_share` of the store say
  nothing about a record (``use``, ``file`` in a code store) and are dropped
  (not in a small store: :data:`SMALL_STORE`).
* **Matching.** A word matches a record term that is equal to it, or — at
  :attr:`Settings.stem_discount` — one with the same light stem
  (:func:`stem`: ``caching`` ~ ``cache``, ``queries`` ~ ``query``). Postings
  hold which fields a term is in, not how often, so a field counts once.
* **Score** of a record: Σ over its matched words of
  ``weight × idf × tf / (tf + k1)`` where ``tf = Σ field_weight × match``
  (1 exact, the discount for a stem) over the fields holding the word, and
  ``idf = ln(1 + (N − df + 0.5) / (df + 0.5))``.
* **Floor.** Records scoring below :attr:`Settings.floor` × the idf of a word
  held by a single record (the most one word can give), or matching fewer than
  :attr:`Settings.min_words` words, are left out: a prompt that carries no task
  ("yes, go ahead", "run the tests again") gets nothing. In a small store
  (:data:`SMALL_STORE`) only the number of words counts.

Every part of a score is kept (:class:`WordMatch`), so each result says which
words, in which fields, gave how much. Deterministic: ties go to the smaller id.
"""

from __future__ import annotations

import bisect
import functools
import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reliora_git.search.inverted import COMPONENT_BITS, POSTING, InvertedIndex
from reliora_git.search.rank import FIELDS, IndexedRecord
from reliora_git.search.stopwords import STOP_WORDS
from reliora_git.search.tokens import tokenize

_COMPONENTS = (1 << COMPONENT_BITS) - 1
#: Fields a brief or push shows little or nothing of (only a first problem at most): words held
#: only there are capped (Settings.rarely_shown_cap), as a stuffed record hides its words there.
RARELY_SHOWN = ("problems", "task", "projectContext", "applicability", "failedAttempts", "warnings")
SHOWN_MASK = sum(1 << k for k, name in enumerate(FIELDS) if name not in RARELY_SHOWN)
#: A store with fewer records is small: among so few, a word that several records share
#: still tells them apart, and idf means little, so no word is dropped and the floor is
#: only the number of words matched.
SMALL_STORE = 20

#: Field weights of the BM25F sum, in FIELDS order. Measured (bench/brief.py, docs/ranking.md):
#: weighting title, tags or problems above the rest moved no figure beyond one task in 139,
#: so every field counts alike and a word gains by the number of fields that hold it.
DEFAULT_FIELD_WEIGHTS: dict[str, float] = dict.fromkeys(FIELDS, 1.0)


@dataclass(frozen=True)
class Settings:
    """The knobs of the ranking; the defaults are the measured choice (docs/ranking.md)."""

    field_weights: tuple[float, ...] = tuple(DEFAULT_FIELD_WEIGHTS.values())
    k1: float = 1.5
    #: What a match by stem counts for, against 1 for the word itself (0 turns stems off).
    stem_discount: float = 0.5
    #: Words held by more than this share of the store's records are dropped.
    max_df_share: float = 0.5
    #: Weight of each of the agent's own keywords (``--query``), against 1 for a task word.
    query_weight: float = 3.0
    #: BM25's length normalisation of each field (0: a field's length does not matter);
    #: it needs the records' field lengths (see rank_task).
    b: float = 0.0
    #: Match words by the prefix rule of SPEC.md §4 (as search does) instead of by stem.
    prefix: bool = False
    #: The relevance floor: a result scores at least this share of the most one word can
    #: give in this store (the idf of a word held by one record), and matches at least
    #: ``min_words`` words: a single shared word is never enough.
    floor: float = 0.7
    min_words: int = 2
    #: Length normalisation by the record's size (tokens in all its fields, against the
    #: store's average): a record's own words, not the task's, decide how much each is
    #: worth, so a record stuffed with a store's vocabulary gains little from each word.
    size_b: float = 0.75
    #: At most this many words count for a record (its largest parts); 0: no cap.
    max_words: int = 10
    #: Words held only in fields a brief shows little of (RARELY_SHOWN) give a record at most
    #: this many times the most one word can give (the idf of a word held by one record);
    #: 0: no cap.
    rarely_shown_cap: float = 1.5

    def mask_weights(self) -> list[float]:
        """Summed field weights of every component mask (bit k is FIELDS[k])."""
        weights = self.field_weights
        return [
            sum(w for k, w in enumerate(weights) if mask >> k & 1)
            for mask in range(1 << len(FIELDS))
        ]


# --- words -----------------------------------------------------------------------------------


def stem(token: str) -> str:
    """A light, deterministic stem: plural, -ing, -ed, -ation and a final e removed.

    Not a linguistic stemmer: only the endings that make a task's word and a
    record's word differ most often (``caches``/``caching``/``cached`` → ``cach``,
    ``queries`` → ``query``, ``configuration``/``configured`` → ``configur``).
    Short tokens (under 4 characters) and tokens with digits are their own stem.
    """
    if len(token) < 4 or not token.isalpha():
        return token
    word = token
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses") or word.endswith(("ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 4:
        word = word[:-1]
    for suffix in ("ations", "ation", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # running → run, mapped → map
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


@dataclass(frozen=True)
class TaskWord:
    text: str
    #: Its weight in the score: 1 for a task word, Settings.query_weight for a keyword.
    weight: float
    #: "task", "query" or "both".
    source: str


def task_words(task: str, query: str = "", settings: Settings | None = None) -> list[TaskWord]:
    """The words of a task and of the agent's keywords, each once, task words first."""
    settings = settings or Settings()
    from_task = _content(task)
    from_query = _content(query)
    in_query = set(from_query)
    words = [
        TaskWord(
            t, settings.query_weight if t in in_query else 1.0, "both" if t in in_query else "task"
        )
        for t in from_task
    ]
    seen = set(from_task)
    words += [TaskWord(t, settings.query_weight, "query") for t in from_query if t not in seen]
    return words


def _content(text: str) -> list[str]:
    return list(dict.fromkeys(t for t in tokenize(text) if t not in STOP_WORDS))


# --- scoring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WordMatch:
    """One task word's part of a record's score."""

    word: str
    #: The record terms it matched (itself, and words with its stem).
    terms: tuple[str, ...]
    #: Names of the fields (FIELDS) holding it, or a word of its stem.
    fields: tuple[str, ...]
    stemmed: bool
    idf: float
    score: float


#: One word's part of a record's score, as ranking keeps it: (word's position in the
#: words, fields holding the word, fields holding only a word of its stem, score).
Part = tuple[int, int, int, float]


@dataclass(frozen=True)
class _Word:
    """What explaining a word's part needs: the word, its idf, its stem terms by slot."""

    text: str
    idf: float
    stem_terms: dict[int, list[str]]


@dataclass(frozen=True)
class TaskHit:
    slot: int
    doc: IndexedRecord
    score: float
    parts: tuple[Part, ...]
    words: tuple[_Word, ...]

    @functools.cached_property
    def matches(self) -> tuple[WordMatch, ...]:
        """The words that make the score, largest part first (built only for hits shown)."""
        found = []
        for position, exact, stemmed, part in self.parts:
            word = self.words[position]
            terms = tuple(word.stem_terms.get(self.slot, ())) if stemmed else ()
            found.append(
                WordMatch(
                    word.text,
                    ((word.text,) if exact else ()) + terms,
                    tuple(f for k, f in enumerate(FIELDS) if (exact | stemmed) >> k & 1),
                    bool(stemmed) and not exact,
                    word.idf,
                    part,
                )
            )
        found.sort(key=lambda m: (-m.score, m.word))
        return tuple(found)


@dataclass
class _Postings:
    """A word's postings in the store: live slot → (exact fields, fields by stem only)."""

    exact: dict[int, int]
    by_stem: dict[int, int]
    stem_terms: dict[int, list[str]]


def _decode(packed: bytes) -> array[int]:
    values = array(POSTING)
    values.frombytes(packed)
    return values


def _postings(inverted: InvertedIndex, word: str, stems: bool) -> _Postings:
    terms, docs = inverted.terms, inverted.docs
    exact: dict[int, int] = {}
    i = bisect.bisect_left(terms, word)
    if i < len(terms) and terms[i] == word:
        for value in _decode(inverted.postings[i]):
            slot = value >> COMPONENT_BITS
            if docs[slot] is not None:
                exact[slot] = exact.get(slot, 0) | value & _COMPONENTS
    by_stem: dict[int, int] = {}
    stem_terms: dict[int, list[str]] = {}
    own = stem(word)
    if stems and len(own) >= 4:
        # Every word with this stem starts with the stem less its last letter (cache → cach-ing).
        start = own[:-1]
        j = bisect.bisect_left(terms, start)
        while j < len(terms) and terms[j].startswith(start):
            term = terms[j]
            if term != word and stem(term) == own:
                for value in _decode(inverted.postings[j]):
                    slot = value >> COMPONENT_BITS
                    if docs[slot] is not None:
                        by_stem[slot] = by_stem.get(slot, 0) | value & _COMPONENTS
                        stem_terms.setdefault(slot, []).append(term)
            j += 1
    return _Postings(exact, by_stem, stem_terms)


def idf_of(df: int, total: int) -> float:
    """BM25's idf of a word held by ``df`` of ``total`` records (never negative)."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _prefix_postings(inverted: InvertedIndex, word: str) -> _Postings:
    """Postings by the prefix rule of SPEC.md §4: the word itself exact, the rest "by stem"."""
    exact: dict[int, int] = {}
    inverted.masks(word, exact)
    every = inverted.masks(word)
    by_stem = {slot: mask for slot, mask in every.items() if mask & ~exact.get(slot, 0)}
    return _Postings(exact, by_stem, {slot: [] for slot in by_stem})


def _norms(
    docs: Sequence[IndexedRecord | None],
    lengths: Sequence[Sequence[int] | None],
    settings: Settings,
) -> dict[int, tuple[float, ...]]:
    """Slot → BM25's ``1 − b + b × length / average length`` of each field."""
    live = [
        (slot, found)
        for slot, found in enumerate(lengths)
        if found is not None and slot < len(docs) and docs[slot] is not None
    ]
    if not live:
        return {}
    count = len(FIELDS)
    average = [max(sum(found[k] for _, found in live) / len(live), 1.0) for k in range(count)]
    b = settings.b
    return {
        slot: tuple(1 - b + b * found[k] / average[k] for k in range(count)) for slot, found in live
    }


def _bounded(held: list[Part], settings: Settings, unit: float) -> tuple[list[Part], float]:
    """A record's parts with the caps applied (see Settings): the words beyond max_words left
    out, and the rarely-shown words' parts scaled down to their cap; and the new score."""
    if settings.max_words and len(held) > settings.max_words:
        held = sorted(held, key=lambda part: -part[3])[: settings.max_words]
    cap = settings.rarely_shown_cap * unit
    if cap:
        hidden = sum(p[3] for p in held if not (p[1] | p[2]) & SHOWN_MASK)
        if hidden > cap:
            scale = cap / hidden
            held = [
                p if (p[1] | p[2]) & SHOWN_MASK else (p[0], p[1], p[2], p[3] * scale)
                for p in held
            ]
    return held, sum(p[3] for p in held)


def rank_task(
    inverted: InvertedIndex,
    words: Sequence[TaskWord],
    settings: Settings | None = None,
    *,
    admit: Callable[[IndexedRecord], bool] = lambda doc: doc.is_active,
    floor: bool = True,
    lengths: Sequence[Sequence[int] | None] | None = None,
) -> list[TaskHit]:
    """The records relevant to ``words``, best first (score, then id), each explained.

    ``admit`` decides which records may be results (by default the active ones);
    every live record counts for the words' document frequencies. ``floor=False``
    keeps the records below the relevance floor (the bench measures what it costs).
    ``lengths`` (slot → the tokens in each field, FIELDS order) is needed when
    ``settings.b`` is above 0.
    """
    settings = settings or Settings()
    docs = inverted.docs
    total = sum(doc is not None for doc in docs)
    if total == 0 or not words:
        return []
    weight_of = settings.mask_weights()
    discount = settings.stem_discount
    k1 = settings.k1
    norms = _norms(docs, lengths, settings) if lengths is not None and settings.b else None
    size_b = settings.size_b
    average_size = (
        max(sum(doc.size for doc in docs if doc is not None) / total, 1.0) if size_b else 1.0
    )
    weights = settings.field_weights
    scores: dict[int, float] = {}
    parts: dict[int, list[Part]] = {}
    explained: list[_Word] = []
    for word in words:
        found = (
            _prefix_postings(inverted, word.text)
            if settings.prefix
            else _postings(inverted, word.text, discount > 0)
        )
        holders = found.exact.keys() | found.by_stem.keys()
        df = len(holders)
        if df == 0 or (total >= SMALL_STORE and df > settings.max_df_share * total):
            continue
        idf = idf_of(df, total)
        position = len(explained)
        explained.append(_Word(word.text, idf, found.stem_terms))
        scale = word.weight * idf
        exact_of, stem_of = found.exact.get, found.by_stem.get
        # The inner loop of a brief: every record holding a word passes here once per word.
        for slot in holders:
            exact = exact_of(slot, 0)
            stemmed = stem_of(slot, 0) & ~exact
            if norms is None:
                tf = weight_of[exact] + discount * weight_of[stemmed]
                if size_b:
                    size = docs[slot].size  # type: ignore[union-attr]
                    tf /= 1 - size_b + size_b * size / average_size
            else:
                norm = norms[slot]
                tf = sum(
                    weights[k] * (1.0 if exact >> k & 1 else discount) / norm[k]
                    for k in range(len(FIELDS))
                    if (exact | stemmed) >> k & 1
                )
            part = scale * tf / (tf + k1)
            scores[slot] = scores.get(slot, 0.0) + part
            held = parts.get(slot)
            if held is None:
                parts[slot] = [(position, exact, stemmed, part)]
            else:
                held.append((position, exact, stemmed, part))
    unit = idf_of(1, total)
    least = settings.floor * unit if total >= SMALL_STORE else 0.0
    kept_words = tuple(explained)
    hits = []
    bounded = settings.max_words or settings.rarely_shown_cap
    for slot, score in scores.items():
        held = parts[slot]
        if bounded:
            held, score = _bounded(held, settings, unit)
        if floor and (score < least or len(held) < settings.min_words):
            continue
        doc = docs[slot]
        assert doc is not None
        if admit(doc):
            hits.append(TaskHit(slot, doc, score, tuple(held), kept_words))
    hits.sort(key=lambda hit: (-round(hit.score * 1e9), hit.doc.id))
    return hits
