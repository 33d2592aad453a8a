"""The task ranking skips the weakest words' records that cannot clear the floor
(search/taskrank.py, ``_weak_words``): its hits must be exactly those of the full
computation kept by the floor, with the same scores and parts."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliora_git.operations.evaluation.reach import own_task
from reliora_git.search import taskrank
from reliora_git.search.taskrank import Settings, idf_of, rank_task, task_words
from reliora_git.storage.index import open_index
from reliora_git.storage.store import Store

CHATTY = (
    "Can you make the tests stop failing on CI when the clock changes? I think it is the time "
    "zone, or the way we use the database in the setup, not sure what to do",
    "The script that deletes old files from the folder just bails out with an error about the "
    "argument list, can you make it work for any number of files",
)


def test_the_floor_keeps_exactly_what_the_full_computation_keeps(
    til_corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = open_index(Store(til_corpus))
    settings = Settings()
    inverted = index.inverted
    total = sum(doc is not None for doc in inverted.docs)
    least = settings.floor * idf_of(1, total)
    texts = list(CHATTY)
    for slot in list(index.slots())[:150]:
        found = own_task(index.record_json(slot))
        if found is not None:
            texts.append(found[0])

    weak_words = taskrank._weak_words
    skipped: list[int] = []

    def counted(*args: object) -> tuple[set[int], set[int]]:
        weak, able = weak_words(*args)  # type: ignore[arg-type]
        skipped.append(len(weak))
        return weak, able

    monkeypatch.setattr(taskrank, "_weak_words", counted)
    for text in texts:
        words = task_words(text, "", settings)
        kept = rank_task(inverted, words, settings, text_of=index.text_of)
        every = rank_task(inverted, words, settings, floor=False, text_of=index.text_of)
        expected = [h for h in every if h.score >= least and len(h.parts) >= settings.min_words]
        assert [(h.doc.id, h.score, h.parts) for h in kept] == [
            (h.doc.id, h.score, h.parts) for h in expected
        ], text
    # The shortcut was taken for most texts, so the comparison above tested it.
    assert sum(n > 0 for n in skipped) >= len(texts) // 2, skipped
