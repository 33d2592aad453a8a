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
* **Compounds and split words**, at :attr:`Settings.compound_discount` and
  :attr:`Settings.split_discount`: two adjacent words of the task match a
  record term that is the two written as one (``time out`` ~ ``timeout``,
  ``times out`` ~ ``timeouts``: "by compound"), and a task word matches a
  record that writes it as two adjacent words (``timeout`` ~ ``timed out``:
  "by split"). Postings hold terms, not positions, so a split is confirmed on
  the record's text (``text_of``), for the records that hold both halves in
  one field only. Which pairs may be halves: :func:`compound_halves`.
* **Stems off where they mislead.** The verb of a phrasal compound that the
  store holds (``times`` of ``times out`` when a record says ``timeout``,
  ``cleans`` of ``cleans up`` with ``cleanup``) is matched as written only: its
  stem would take ``times out`` for ``time``. The first word of a compound of
  two nouns (``user input``, ``config file``) keeps its stems: it keeps its sense.
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
import itertools
import math
from array import array
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from reliora_git.search.inverted import COMPONENT_BITS, POSTING, InvertedIndex
from reliora_git.search.rank import ASKED, FIELD_SEPARATOR, INDEX_FIELDS, IndexedRecord
from reliora_git.search.stopwords import STOP_WORDS
from reliora_git.search.tokens import tokenize

_COMPONENTS = (1 << COMPONENT_BITS) - 1
#: Fields a brief or push shows little or nothing of (only a first problem at most): words held
#: only there are capped (Settings.rarely_shown_cap), as a stuffed record hides its words there.
RARELY_SHOWN = ("problems", "task", "projectContext", "applicability", "failedAttempts", "warnings")
SHOWN_MASK = sum(1 << k for k, name in enumerate(INDEX_FIELDS) if name not in RARELY_SHOWN)
#: A store with fewer records is small: among so few, a word that several records share
#: still tells them apart, and idf means little, so no word is dropped and the floor is
#: only the number of words matched.
SMALL_STORE = 20

#: Field weights of the BM25F sum, in INDEX_FIELDS order. Measured (bench/brief.py,
#: docs/ranking.md): weighting title, tags or problems above the rest moved no figure beyond
#: one task in 139, so every field counts alike and a word gains by the number of fields that
#: hold it. The asked-as lines (SPEC.md §3) are how people ask for the lesson: ASKED_WEIGHT.
ASKED_WEIGHT = 1.0
DEFAULT_FIELD_WEIGHTS: dict[str, float] = {
    **dict.fromkeys(INDEX_FIELDS, 1.0),
    ASKED: ASKED_WEIGHT,
}


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
    #: Normalise the agent's keywords' parts too (False: only the task's own words).
    size_keywords: bool = False
    #: At most this many words count for a record (its largest parts); 0: no cap.
    max_words: int = 10
    #: Words held only in fields a brief shows little of (RARELY_SHOWN) give a record at most
    #: this many times the most one word can give (the idf of a word held by one record);
    #: 0: no cap.
    rarely_shown_cap: float = 1.5
    #: What a match by compound (``time out`` ~ ``timeout``) counts for, against 1 for the
    #: word itself (0 turns compounds off).
    compound_discount: float = 0.5
    #: The same for a match by split (``timeout`` ~ ``time out`` in the record; 0: off).
    split_discount: float = 0.5
    #: Whose stems are off: "phrasal", the first word of a task compound that the store holds
    #: and whose second word is one of the PARTICLES (``times`` of ``times out`` with
    #: ``timeout`` stored); "compound", the first word of any task compound the store holds
    #: (``user`` of ``user input`` too); "particle", a word followed by a particle whether
    #: or not the store holds the compound (``fail`` of ``fail on CI`` too); "keep", nobody's.
    #: Measured in bench/brief.py and docs/ranking.md.
    lead_stems: str = "particle"

    def mask_weights(self) -> list[float]:
        """Summed field weights of every component mask (bit k is INDEX_FIELDS[k])."""
        return list(_mask_weights(self.field_weights))


@functools.lru_cache(maxsize=8)
def _mask_weights(weights: tuple[float, ...]) -> tuple[float, ...]:
    # Once per set of weights: ``reliora eval`` ranks one task per record.
    return tuple(
        sum(w for k, w in enumerate(weights) if mask >> k & 1)
        for mask in range(1 << len(INDEX_FIELDS))
    )


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


#: The particles of phrasal verbs, whose nouns are written as one word (``time out``/``timeout``,
#: ``set up``/``setup``, ``log in``/``login``, ``roll back``/``rollback``, ``walk through``):
#: a compound's second half even when a stop word, and what makes its first word lose its stems.
PARTICLES = frozenset(
    {"up", "out", "in", "on", "off", "down", "over", "back", "away", "around", "through"}
)
#: The least letters of each half of a compound, a particle aside: ``js on`` is not ``json``,
#: ``edit or`` not ``editor`` (measured on the til corpus: shorter halves were mostly such).
HALF_MIN = 3
#: Longer words are never tried as two (every cut of a word costs its length: a 40,000-letter
#: word in a prompt made the hook miss its deadline).
MAX_SPLIT = 64


def compound_halves(first: str, second: str) -> bool:
    """Whether ``first second`` may be the two halves of one word (``time out`` ~ ``timeout``).

    Both are words of letters; the first is not a stop word and has at least
    :data:`HALF_MIN` letters; the second too, or is one of the :data:`PARTICLES`. So
    ``with out`` (``without``), ``some one`` and ``form at`` are never halves: a stop word
    or a two-letter scrap joined to a word makes another word by accident.
    """
    if len(first) < HALF_MIN or first in STOP_WORDS or not first.isalpha():
        return False
    if second in PARTICLES:
        return True
    return len(second) >= HALF_MIN and second not in STOP_WORDS and second.isalpha()


def spellings(word: str) -> tuple[str, ...]:
    """How ``word`` may be written as the first half of a compound: itself and its stem, with
    a final ``e`` (``times``/``timed``/``timing`` out → ``timeout``; ``logged`` in → ``login``)."""
    own = stem(word)
    if own == word:
        return (word,)
    return (word, own, own + "e")


@dataclass(frozen=True)
class TaskWord:
    text: str
    #: Its weight in the score: 1 for a task word, Settings.query_weight for a keyword.
    weight: float
    #: "task", "query" or "both".
    source: str
    #: For two adjacent words matched as one compound (``text`` is ``"time out"``): the two.
    halves: tuple[str, str] | None = None


def task_words(task: str, query: str = "", settings: Settings | None = None) -> list[TaskWord]:
    """The words of a task and of the agent's keywords, each once, task words first; then
    the pairs of adjacent words that may be a compound (with compounds on)."""
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
    if settings.compound_discount:
        words += _pairs(task, query, {stem(w.text) for w in words}, settings.query_weight)
    return words


def _pairs(task: str, query: str, stems: set[str], query_weight: float) -> list[TaskWord]:
    """Adjacent words of the task and of the keywords that may be halves of one compound.

    A pair whose compound is already a word (``times out`` with ``timeout`` among the
    keywords) is left out: the word matches it, and by split its halves too.
    """
    in_task, in_query = _adjacent(task), _adjacent(query)
    found = []
    for pair in dict.fromkeys([*in_task, *in_query]):
        if any(stem(head + pair[1]) in stems for head in spellings(pair[0])):
            continue
        source = (
            "both"
            if pair in in_task and pair in in_query
            else ("task" if pair in in_task else "query")
        )
        weight = 1.0 if source == "task" else query_weight
        found.append(TaskWord(f"{pair[0]} {pair[1]}", weight, source, pair))
    return found


def _adjacent(text: str) -> dict[tuple[str, str], None]:
    tokens = tokenize(text)
    return dict.fromkeys(pair for pair in itertools.pairwise(tokens) if compound_halves(*pair))


def _content(text: str) -> list[str]:
    return list(dict.fromkeys(t for t in tokenize(text) if t not in STOP_WORDS))


# --- scoring ---------------------------------------------------------------------------------

#: How a word matched a record's fields, strongest first: the word as written; two task words
#: as one record term, or a task word as two adjacent record words; a word of its stem. A
#: field counts once, in its strongest way (a compound's discount is at least a stem's).
EXACT, COMPOUND, SPLIT, STEM = "exact", "compound", "split", "stem"


class Way(NamedTuple):
    """One way a word matched a record: how, the record's words, the fields holding them."""

    by: str
    terms: tuple[str, ...]
    fields: tuple[str, ...]


@dataclass(frozen=True)
class WordMatch:
    """One task word's part of a record's score."""

    #: The task word, or two adjacent task words (``"time out"``) matched as one compound.
    word: str
    #: The record terms it matched: itself, the compound or the split words, words of its stem.
    terms: tuple[str, ...]
    #: Names of the fields (INDEX_FIELDS) holding any of them.
    fields: tuple[str, ...]
    #: Matched by stem only (neither as written nor by compound or split).
    stemmed: bool
    idf: float
    score: float
    #: Each way it matched, strongest first, with its own terms and fields.
    ways: tuple[Way, ...] = ()

    @property
    def by(self) -> tuple[str, ...]:
        return tuple(way.by for way in self.ways)

    def explained(self) -> str:
        """Both words of every match and where: ``cached (title)``, ``cached~cache (solution,
        by stem)``, ``time out~timeout (title, by compound)``, ``timeout (title) and ~time out
        (solution, by split)``."""
        texts = []
        for n, way in enumerate(self.ways):
            fields = ", ".join(way.fields)
            if way.by == EXACT:
                texts.append(f"{self.word} ({fields})")
            else:
                lead = self.word if n == 0 else ""
                texts.append(f"{lead}~{'/'.join(way.terms[:2])} ({fields}, by {way.by})")
        return " and ".join(texts)


#: One word's part of a record's score, as ranking keeps it: (word's position in the words,
#: fields holding the word as written, fields holding only a word of its stem, fields holding
#: it only by compound or split, score). The three masks never share a field.
Part = tuple[int, int, int, int, float]


def part_fields(part: Part) -> int:
    """The fields (a mask, bit k is INDEX_FIELDS[k]) that give a part, in any way."""
    return part[1] | part[2] | part[3]


def _names(mask: int) -> tuple[str, ...]:
    return tuple(name for k, name in enumerate(INDEX_FIELDS) if mask >> k & 1)


#: Slot → the record terms a word matched in one way, each with the fields holding it.
TermsBySlot = dict[int, list[tuple[str, int]]]


@dataclass(frozen=True)
class _Word:
    """What explaining a word's part needs: the word, its idf, the terms it matched by slot."""

    text: str
    idf: float
    stem_terms: TermsBySlot
    joined_terms: TermsBySlot
    #: COMPOUND for two task words, SPLIT for one.
    joined_by: str


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
        for position, exact, stemmed, joined, part in self.parts:
            word = self.words[position]
            ways = []
            if exact:
                ways.append(Way(EXACT, (word.text,), _names(exact)))
            if joined:
                terms = _terms_in(word.joined_terms.get(self.slot, ()), joined)
                ways.append(Way(word.joined_by, terms, _names(joined)))
            if stemmed:
                terms = _terms_in(word.stem_terms.get(self.slot, ()), stemmed)
                ways.append(Way(STEM, terms, _names(stemmed)))
            found.append(
                WordMatch(
                    word.text,
                    tuple(dict.fromkeys(term for way in ways for term in way.terms)),
                    _names(exact | stemmed | joined),
                    not (exact or joined),
                    word.idf,
                    part,
                    tuple(ways),
                )
            )
        found.sort(key=lambda m: (-m.score, m.word))
        return tuple(found)

    @property
    def matched_words(self) -> tuple[str, ...]:
        """The task words that make the score, as :attr:`matches` names them, without
        explaining how each matched (the push counts them for every hit above the floor)."""
        return tuple(self.words[part[0]].text for part in self.parts)

    def score_in(self, mask: int) -> float:
        """The part of the score from words held (in any way) in the fields of ``mask``."""
        return sum(part[4] for part in self.parts if part_fields(part) & mask)


def _terms_in(terms: Sequence[tuple[str, int]], mask: int) -> tuple[str, ...]:
    """The terms held in the fields of ``mask``, each once, in the order they were found."""
    return tuple(dict.fromkeys(term for term, held in terms if held & mask))


@dataclass
class _Postings:
    """A word's postings in the store: live slot → fields, in each way it matches."""

    exact: dict[int, int]
    by_stem: dict[int, int]
    stem_terms: TermsBySlot
    joined: dict[int, int] = field(default_factory=dict)
    joined_terms: TermsBySlot = field(default_factory=dict)
    #: The task's other words changed it (stems off, a compound's masks): its parts are the
    #: task's own, never shared (Shared.parts).
    adjusted: bool = False


def _decode(packed: bytes) -> array[int]:
    values = array(POSTING)
    values.frombytes(packed)
    return values


def _live_masks(inverted: InvertedIndex, i: int) -> dict[int, int]:
    """Live slot → the fields holding ``inverted.terms[i]``."""
    docs = inverted.docs
    found: dict[int, int] = {}
    for value in _decode(inverted.postings[i]):
        slot = value >> COMPONENT_BITS
        if docs[slot] is not None:
            found[slot] = found.get(slot, 0) | value & _COMPONENTS
    return found


def _term_index(terms: Sequence[str], term: str) -> int | None:
    i = bisect.bisect_left(terms, term)
    return i if i < len(terms) and terms[i] == term else None


def _add(masks: dict[int, int], held: TermsBySlot, term: str, found: dict[int, int]) -> None:
    """Adds the slots of ``found`` (slot → fields) holding ``term`` to ``masks`` and ``held``."""
    for slot, mask in found.items():
        masks[slot] = masks.get(slot, 0) | mask
        held.setdefault(slot, []).append((term, mask))


def _postings(inverted: InvertedIndex, word: str, stems: bool) -> _Postings:
    terms = inverted.terms
    i = _term_index(terms, word)
    exact = _live_masks(inverted, i) if i is not None else {}
    by_stem: dict[int, int] = {}
    stem_terms: TermsBySlot = {}
    own = stem(word)
    if stems and len(own) >= 4:
        # Every word with this stem starts with the stem less its last letter (cache → cach-ing).
        start = own[:-1]
        j = bisect.bisect_left(terms, start)
        while j < len(terms) and terms[j].startswith(start):
            term = terms[j]
            if term != word and stem(term) == own:
                _add(by_stem, stem_terms, term, _live_masks(inverted, j))
            j += 1
    return _Postings(exact, by_stem, stem_terms)


def _compound_postings(inverted: InvertedIndex, first: str, second: str) -> _Postings:
    """The records holding ``first second`` written as one term (``time out``/``times out`` →
    ``timeout``, ``timeouts``): a term whose stem is that of a spelling of ``first`` joined to
    ``second`` (:func:`spellings`)."""
    terms = inverted.terms
    joined: dict[int, int] = {}
    joined_terms: TermsBySlot = {}
    for key in sorted({stem(head + second) for head in spellings(first)}):
        start = key[:-1]  # as in _postings: every word of this stem starts with it
        j = bisect.bisect_left(terms, start)
        while j < len(terms) and terms[j].startswith(start):
            if stem(terms[j]) == key:
                _add(joined, joined_terms, terms[j], _live_masks(inverted, j))
            j += 1
    return _Postings({}, {}, {}, joined, joined_terms)


def _head_terms(terms: Sequence[str], head: str) -> list[int]:
    """Indexes of the terms that may be written ``head`` in a compound (``time``: time, times,
    timed, timing), the inverse of :func:`spellings`."""
    # A term is its stem plus an ending, and its stem is ``head`` or ``head`` less a final e
    # (a y when the term ends in -ies): all start with this.
    start = head[:-1] if head[-1] in "ey" else head
    found = []
    j = bisect.bisect_left(terms, start)
    while j < len(terms) and terms[j].startswith(start):
        if head in spellings(terms[j]):
            found.append(j)
        j += 1
    return found


def _split_postings(
    inverted: InvertedIndex, word: str, fields_of: Callable[[int], list[str]]
) -> tuple[dict[int, int], TermsBySlot]:
    """The records that write ``word`` as two adjacent words (``timeout``: ``time out``,
    ``timed out``), and the fields where they do.

    Postings hold terms, not positions, so the two words are looked for side by side in
    the record's text (``fields_of``), only in the records whose postings put both halves in
    one field: the record must really say ``time out``, not ``time`` and ``out`` apart.
    """
    terms = inverted.terms
    joined: dict[int, int] = {}
    joined_terms: TermsBySlot = {}
    if len(word) > MAX_SPLIT:  # no word is two words that long: each cut costs the word
        return joined, joined_terms
    for cut in range(HALF_MIN, len(word) - 1):
        head, tail = word[:cut], word[cut:]
        if not compound_halves(head, tail):
            continue
        t = _term_index(terms, tail)
        heads = _head_terms(terms, head) if t is not None else []
        if t is None or not heads:
            continue
        tail_fields = _live_masks(inverted, t)
        for j in heads:
            phrase = f" {terms[j]} {tail} "
            for slot, mask in _live_masks(inverted, j).items():
                common = mask & tail_fields.get(slot, 0)
                if not common:
                    continue
                fields = fields_of(slot)
                said = sum(
                    1 << k
                    for k in range(len(INDEX_FIELDS))
                    if common >> k & 1 and phrase in fields[k]
                )
                if said:
                    joined[slot] = joined.get(slot, 0) | said
                    joined_terms.setdefault(slot, []).append((phrase.strip(), said))
    return joined, joined_terms


#: One record's part of a word's score: fields as written, by stem, by compound or split,
#: and the part itself (a Part without the word's position).
_SlotPart = tuple[int, int, int, float]
#: Words held by fewer records are scored for each task anew (cheap) rather than kept.
PARTS_SHARED_MIN = 32


@dataclass
class Shared:
    """What the rankings of many tasks over one index, unchanged, with one set of settings
    and one ``text_of``, can share (``reliora eval`` ranks one task per record): the store's
    totals, and each word's postings as found before the task's other words adjust them
    (:func:`_word_postings` adjusts copies). Only for an index that no longer changes."""

    inverted: InvertedIndex
    total: int
    average_size: float
    postings: dict[tuple[str, tuple[str, str] | None], _Postings] = field(default_factory=dict)
    #: (word, weight, size-normalised) → slot → its part (see rank_task), for the words whose
    #: postings no other task word adjusts and that at least PARTS_SHARED_MIN records hold.
    parts: dict[tuple[str, float, bool], dict[int, _SlotPart]] = field(default_factory=dict)

    @classmethod
    def of(cls, inverted: InvertedIndex) -> Shared:
        docs = inverted.docs
        total = sum(doc is not None for doc in docs)
        size = sum(doc.size for doc in docs if doc is not None)
        return cls(inverted, total, max(size / total, 1.0) if total else 1.0)


def _word_postings(
    inverted: InvertedIndex,
    words: Sequence[TaskWord],
    settings: Settings,
    text_of: Callable[[int], str] | None,
    shared: Shared | None = None,
) -> list[_Postings]:
    """Each word's postings, in every way it may match (see the module docstring)."""
    read: dict[int, list[str]] = {}

    def fields_of(slot: int) -> list[str]:
        found = read.get(slot)
        if found is None:
            assert text_of is not None
            found = read[slot] = text_of(slot).split(FIELD_SEPARATOR)
        return found

    every = []
    for word in words:
        key = (word.text, word.halves)
        kept = shared.postings.get(key) if shared is not None else None
        if kept is not None:
            # A copy: the adjustments below replace its stems and edit its compounds' masks.
            found = _Postings(kept.exact, kept.by_stem, kept.stem_terms, dict(kept.joined),
                              kept.joined_terms)  # fmt: skip
        elif word.halves is not None:
            found = _compound_postings(inverted, *word.halves)
        elif settings.prefix:
            found = _prefix_postings(inverted, word.text)
        else:
            found = _postings(inverted, word.text, settings.stem_discount > 0)
            if settings.split_discount and text_of is not None:
                found.joined, found.joined_terms = _split_postings(inverted, word.text, fields_of)
        if shared is not None and kept is None:
            shared.postings[key] = _Postings(found.exact, found.by_stem, found.stem_terms,
                                             dict(found.joined), found.joined_terms)  # fmt: skip
        every.append(found)
    # Stems off where they mislead (Settings.lead_stems): ``times`` of ``times out`` is not
    # ``time`` where the store says ``timeout``.
    leads = {
        word.halves[0]
        for word, found in zip(words, every, strict=True)
        if word.halves is not None
        and (
            (settings.lead_stems == "compound" and found.joined)
            or (settings.lead_stems == "particle" and word.halves[1] in PARTICLES)
            or (settings.lead_stems == "phrasal" and found.joined and word.halves[1] in PARTICLES)
        )
    }
    for word, found in zip(words, every, strict=True):
        if word.halves is None and word.text in leads:
            found.by_stem, found.stem_terms = {}, {}
            found.adjusted = True
    # A compound bridges two spellings of one thing: where a field already holds the task's
    # words themselves (``rolling back`` beside ``rollback``), they count, and the compound
    # does not count the same thing again.
    own = {w.text: f for w, f in zip(words, every, strict=True) if w.halves is None}
    for word, found in zip(words, every, strict=True):
        if word.halves is None or not found.joined:
            continue
        halves = [own.get(half) for half in word.halves if half not in STOP_WORDS]
        found.adjusted = True
        for slot, mask in list(found.joined.items()):
            held = mask
            for half in halves:
                held &= 0 if half is None else half.exact.get(slot, 0) | half.by_stem.get(slot, 0)
            if mask & ~held:
                found.joined[slot] = mask & ~held
            else:
                del found.joined[slot]
    return every


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
    count = len(INDEX_FIELDS)
    average = [max(sum(found[k] for _, found in live) / len(live), 1.0) for k in range(count)]
    b = settings.b
    return {
        slot: tuple(1 - b + b * found[k] / average[k] for k in range(count)) for slot, found in live
    }


def _bounded(held: list[Part], settings: Settings, unit: float) -> tuple[list[Part], float]:
    """A record's parts with the caps applied (see Settings): the words beyond max_words left
    out, and the rarely-shown words' parts scaled down to their cap; and the new score."""
    if settings.max_words and len(held) > settings.max_words:
        held = sorted(held, key=lambda part: -part[4])[: settings.max_words]
    cap = settings.rarely_shown_cap * unit
    if cap:
        hidden = sum(p[4] for p in held if not part_fields(p) & SHOWN_MASK)
        if hidden > cap:
            scale = cap / hidden
            held = [
                p if part_fields(p) & SHOWN_MASK else (p[0], p[1], p[2], p[3], p[4] * scale)
                for p in held
            ]
    return held, sum(p[4] for p in held)


def _weak_words(
    considered: Sequence[tuple[TaskWord, _Postings, set[int], float]], least: float
) -> tuple[set[int], set[int]]:
    """The words that cannot lift a record over the floor ``least`` by themselves (their
    positions in ``considered``), and the records holding any other word.

    A word's part of a record's score is below its weight × idf, as BM25's
    ``tf / (tf + k1)`` is below 1. The weakest words whose bounds add up to no more than
    the floor cannot bring a record to it together, so a record holding only those is
    under the floor whatever its fields say: their parts are computed only for the records
    holding another word. Those weakest words are the commonest, with the longest postings
    (the idea of MaxScore); scores, parts and their order are exactly as without it.
    """
    if least <= 0:
        return set(), set()
    spare = least * (1 - 1e-9)  # a margin for the sums' rounding
    weak: set[int] = set()
    bounds = sorted((word.weight * idf, n) for n, (word, _, _, idf) in enumerate(considered))
    for bound, n in bounds:
        if bound > spare:
            break
        spare -= bound
        weak.add(n)
    if not weak:
        return weak, set()
    able: set[int] = set()
    for n, (_, _, holders, _) in enumerate(considered):
        if n not in weak:
            able |= holders
    return weak, able


def _word_parts(
    word: TaskWord,
    found: _Postings,
    holders: Collection[int],
    idf: float,
    settings: Settings,
    weight_of: Sequence[float],
    norms: dict[int, tuple[float, ...]] | None,
    docs: Sequence[IndexedRecord | None],
    average_size: float,
) -> dict[int, _SlotPart]:
    """Slot → the part of ``word`` in the score of each record of ``holders`` (BM25F, see
    the module docstring), with the fields giving it in each way."""
    discount = settings.stem_discount
    k1 = settings.k1
    size_b = settings.size_b
    weights = settings.field_weights
    joined_discount = (
        settings.compound_discount if word.halves is not None else settings.split_discount
    )
    scale = word.weight * idf
    normalise = size_b and (settings.size_keywords or word.source == "task")
    exact_of, stem_of, joined_of = found.exact.get, found.by_stem.get, found.joined.get
    known: dict[int, _SlotPart] = {}
    # The inner loop of a brief: every record holding a word passes here once per word.
    for slot in holders:
        exact = exact_of(slot, 0)
        joined = joined_of(slot, 0) & ~exact
        stemmed = stem_of(slot, 0) & ~exact & ~joined
        if norms is None:
            tf = weight_of[exact] + discount * weight_of[stemmed]
            if joined:
                tf += joined_discount * weight_of[joined]
            if normalise:
                size = docs[slot].size  # type: ignore[union-attr]
                tf /= 1 - size_b + size_b * size / average_size
        else:
            norm = norms[slot]
            tf = sum(
                weights[k]
                * (1.0 if exact >> k & 1 else joined_discount if joined >> k & 1 else discount)
                / norm[k]
                for k in range(len(INDEX_FIELDS))
                if (exact | stemmed | joined) >> k & 1
            )
        known[slot] = (exact, stemmed, joined, scale * tf / (tf + k1))
    return known


def rank_task(
    inverted: InvertedIndex,
    words: Sequence[TaskWord],
    settings: Settings | None = None,
    *,
    admit: Callable[[IndexedRecord], bool] = lambda doc: doc.is_active,
    floor: bool = True,
    lengths: Sequence[Sequence[int] | None] | None = None,
    text_of: Callable[[int], str] | None = None,
    shared: Shared | None = None,
) -> list[TaskHit]:
    """The records relevant to ``words``, best first (score, then id), each explained.

    ``admit`` decides which records may be results (by default the active ones);
    every live record counts for the words' document frequencies. ``floor=False``
    keeps the records below the relevance floor (the bench measures what it costs).
    ``lengths`` (slot → the tokens in each field, INDEX_FIELDS order) is needed when
    ``settings.b`` is above 0. ``text_of`` (slot → the record's joined field strings,
    IndexedRecord.text) confirms matches by split; without it there are none. ``shared``
    (:class:`Shared`, made for this index) keeps what rankings over it have in common.
    """
    settings = settings or Settings()
    docs = inverted.docs
    if shared is not None and shared.inverted is not inverted:
        shared = None
    total = shared.total if shared is not None else sum(doc is not None for doc in docs)
    if total == 0 or not words:
        return []
    weight_of = settings.mask_weights()
    norms = _norms(docs, lengths, settings) if lengths is not None and settings.b else None
    size_b = settings.size_b
    if not size_b:
        average_size = 1.0
    elif shared is not None:
        average_size = shared.average_size
    else:
        average_size = max(sum(doc.size for doc in docs if doc is not None) / total, 1.0)
    explained: list[_Word] = []
    considered: list[tuple[TaskWord, _Postings, set[int], float]] = []
    postings = _word_postings(inverted, words, settings, text_of, shared)
    for word, found in zip(words, postings, strict=True):
        holders = found.exact.keys() | found.by_stem.keys() | found.joined.keys()
        df = len(holders)
        if df == 0 or (total >= SMALL_STORE and df > settings.max_df_share * total):
            continue
        considered.append((word, found, holders, idf_of(df, total)))
    unit = idf_of(1, total)
    least = settings.floor * unit if total >= SMALL_STORE else 0.0
    weak, able = _weak_words(considered, least) if floor else (set(), set())
    word_parts: list[dict[int, _SlotPart]] = []
    for n, (word, found, holders, idf) in enumerate(considered):
        joined_by = COMPOUND if word.halves is not None else SPLIT
        explained.append(_Word(word.text, idf, found.stem_terms, found.joined_terms, joined_by))
        normalise = bool(size_b and (settings.size_keywords or word.source == "task"))
        key = (word.text, word.weight, normalise)
        share = (
            shared is not None
            and word.halves is None
            and not found.adjusted
            and len(holders) >= PARTS_SHARED_MIN
        )
        known = shared.parts.get(key) if share and shared is not None else None
        if known is None:
            if n in weak and not share:  # scored only for the records that can clear the floor
                holders = holders & able
            known = _word_parts(
                word, found, holders, idf, settings, weight_of, norms, docs, average_size
            )
            if share and shared is not None:
                shared.parts[key] = known
        word_parts.append(known)
    scores: dict[int, float] = {}
    parts: dict[int, list[Part]] = {}
    if floor:
        # The scores first, then the parts of only the records that clear the floor: most
        # records holding a common word do not, and their parts would be built for nothing.
        for n, known in enumerate(word_parts):
            get = scores.get
            if n in weak:  # only records holding another word can clear the floor
                for slot in known.keys() & able:
                    scores[slot] = get(slot, 0.0) + known[slot][3]
            else:
                for slot, value in known.items():
                    scores[slot] = get(slot, 0.0) + value[3]
        for slot, score in scores.items():
            if score < least:
                continue
            held_parts = []
            for n, known in enumerate(word_parts):
                found_part = known.get(slot)
                if found_part is not None:
                    held_parts.append((n, *found_part))
            parts[slot] = held_parts
    else:
        for n, known in enumerate(word_parts):
            for slot, value in known.items():
                scores[slot] = scores.get(slot, 0.0) + value[3]
                held = parts.get(slot)
                if held is None:
                    parts[slot] = [(n, *value)]
                else:
                    held.append((n, *value))
    kept_words = tuple(explained)
    hits = []
    bounded = settings.max_words or settings.rarely_shown_cap
    for slot, held in parts.items():
        score = scores[slot]
        # The caps only drop or shrink parts: a record under the floor before them stays under.
        if floor and (score < least or len(held) < settings.min_words):
            continue
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
