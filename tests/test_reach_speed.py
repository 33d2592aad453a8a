"""The task ranking shares its work between tasks (``reliora eval``'s reach ranks one task per
record) and scores before it builds parts: the results are those of the ranking before,
bit for bit (tests/taskrank_reference.py keeps it), and so is the reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliora_git.operations.evaluation import reach as reach_module
from reliora_git.operations.evaluation.reach import own_task, reach
from reliora_git.search.taskrank import Settings, Shared, TaskHit, rank_task, task_words
from reliora_git.storage.index import StoreIndex, open_index
from reliora_git.storage.store import find_store
from tests import taskrank_reference


def _exact(hits: list[TaskHit]) -> list[tuple[str, float, tuple[object, ...]]]:
    """Each hit's id, score and parts: floats compared exactly."""
    return [(hit.doc.id, hit.score, hit.parts) for hit in hits]


def _prompts(index: StoreIndex) -> list[tuple[str, str]]:
    found = []
    for slot in index.slots():
        task = own_task(index.record_json(slot))
        if task is not None:
            found.append((task[0], ""))
    doc = index.inverted.docs[index.slots()[0]]
    assert doc is not None
    # Keywords, compounds and split words too.
    found += [
        ("the tests time out on CI since the upgrade", "pytest timeout"),
        ("set up the login flow and roll back the migration", "setup rollback"),
        (doc.title, " ".join(doc.tags)),
    ]
    return found


@pytest.fixture(scope="module")
def til_index(til_corpus: Path) -> StoreIndex:
    return open_index(find_store(til_corpus))


def test_the_ranking_is_the_reference_bit_for_bit(til_index: StoreIndex) -> None:
    index = til_index
    shared = Shared.of(index.inverted)
    settings = Settings()
    prompts = _prompts(index)
    assert len(prompts) > 300
    compared = 0
    for task, query in prompts:
        words = task_words(task, query, settings)
        for floor in (True, False):
            kwargs = {"admit": lambda doc: True, "floor": floor, "text_of": index.text_of}
            expected = _exact(taskrank_reference.rank_task(index.inverted, words, settings,
                                                           **kwargs))  # fmt: skip
            assert _exact(rank_task(index.inverted, words, settings, **kwargs)) == expected
            found = rank_task(index.inverted, words, settings, shared=shared, **kwargs)
            assert _exact(found) == expected
            compared += bool(expected)
    assert shared.parts, "common words' parts are shared between tasks"
    assert compared > 300


def test_the_reach_is_the_reference_reach(
    til_index: StoreIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELIORA_JOBS", "1")
    found = reach(til_index).to_json()
    assert found["judged"] > 300 and found["unreachable"]

    def reference_hits(
        index: StoreIndex, task: str, query: str = "", settings: Settings | None = None,
        shared: Shared | None = None,
    ) -> tuple[list[TaskHit], set[str]]:  # fmt: skip
        hits = taskrank_reference.rank_task(
            index.inverted, task_words(task, query, settings), settings,
            admit=lambda doc: True, text_of=index.text_of,
        )  # fmt: skip
        return [hit for hit in hits if hit.doc.is_active], set()

    monkeypatch.setattr(reach_module, "task_hits", reference_hits)
    assert reach(til_index).to_json() == found
