"""The task ranking as it was before it shared work between tasks (search/taskrank.py
``Shared``) and scored before building parts: a reference the tests compare the ranking
with, result for result, bit for bit (tests/test_reach_speed.py). Kept verbatim."""

# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

from collections.abc import Callable, Sequence

from reliora_git.search.inverted import InvertedIndex
from reliora_git.search.rank import INDEX_FIELDS, IndexedRecord
from reliora_git.search.taskrank import (
    COMPOUND,
    SMALL_STORE,
    SPLIT,
    Part,
    Settings,
    TaskHit,
    TaskWord,
    _bounded,
    _norms,
    _Postings,
    _weak_words,
    _Word,
    _word_postings,
    idf_of,
)


def rank_task(
    inverted: InvertedIndex,
    words: Sequence[TaskWord],
    settings: Settings | None = None,
    *,
    admit: Callable[[IndexedRecord], bool] = lambda doc: doc.is_active,
    floor: bool = True,
    lengths: Sequence[Sequence[int] | None] | None = None,
    text_of: Callable[[int], str] | None = None,
) -> list[TaskHit]:
    """The records relevant to ``words``, best first (score, then id), each explained.

    ``admit`` decides which records may be results (by default the active ones);
    every live record counts for the words' document frequencies. ``floor=False``
    keeps the records below the relevance floor (the bench measures what it costs).
    ``lengths`` (slot → the tokens in each field, INDEX_FIELDS order) is needed when
    ``settings.b`` is above 0. ``text_of`` (slot → the record's joined field strings,
    IndexedRecord.text) confirms matches by split; without it there are none.
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
    considered: list[tuple[TaskWord, _Postings, set[int], float]] = []
    for word, found in zip(words, _word_postings(inverted, words, settings, text_of), strict=True):
        holders = found.exact.keys() | found.by_stem.keys() | found.joined.keys()
        df = len(holders)
        if df == 0 or (total >= SMALL_STORE and df > settings.max_df_share * total):
            continue
        considered.append((word, found, holders, idf_of(df, total)))
    unit = idf_of(1, total)
    least = settings.floor * unit if total >= SMALL_STORE else 0.0
    weak, able = _weak_words(considered, least) if floor else (set(), set())
    for n, (word, found, holders, idf) in enumerate(considered):
        if n in weak:  # scored only for the records that can clear the floor (_weak_words)
            holders = holders & able
        position = len(explained)
        joined_by = COMPOUND if word.halves is not None else SPLIT
        explained.append(_Word(word.text, idf, found.stem_terms, found.joined_terms, joined_by))
        joined_discount = (
            settings.compound_discount if word.halves is not None else settings.split_discount
        )
        scale = word.weight * idf
        exact_of, stem_of, joined_of = found.exact.get, found.by_stem.get, found.joined.get
        # The inner loop of a brief: every record holding a word passes here once per word.
        for slot in holders:
            exact = exact_of(slot, 0)
            joined = joined_of(slot, 0) & ~exact
            stemmed = stem_of(slot, 0) & ~exact & ~joined
            if norms is None:
                tf = weight_of[exact] + discount * weight_of[stemmed]
                if joined:
                    tf += joined_discount * weight_of[joined]
                if size_b and (settings.size_keywords or word.source == "task"):
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
            part = scale * tf / (tf + k1)
            scores[slot] = scores.get(slot, 0.0) + part
            held = parts.get(slot)
            if held is None:
                parts[slot] = [(position, exact, stemmed, joined, part)]
            else:
                held.append((position, exact, stemmed, joined, part))
    kept_words = tuple(explained)
    hits = []
    bounded = settings.max_words or settings.rarely_shown_cap
    for slot, score in scores.items():
        held = parts[slot]
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
