"""Explanations name both words, and the brief matches compounds and split words (issue 32).

* search: a query token matched by the prefix rule of SPEC.md §4 is shown with the
  record's own word (``modulenotfounderror~module``), in the text and in
  ``matchedTerms`` of the JSON (``matchedTokens`` unchanged);
* brief: two adjacent task words match a record term that writes them as one
  (``times out`` ~ ``timeout``, "by compound"), a task word matches a record that
  writes it as two (``timeout`` ~ ``timed out``, "by split"), at a discount, and
  the first word of a task compound the store holds loses its stem matches
  (``times`` is not ``time`` in ``times out``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from reliora_git.interfaces.output import matched_words
from reliora_git.records.model import Record
from reliora_git.search.confidence import judge
from reliora_git.search.inverted import InvertedIndex, record_terms
from reliora_git.search.rank import IndexedRecord, index_record, matched_terms
from reliora_git.search.taskrank import (
    SHOWN_MASK,
    Settings,
    TaskHit,
    compound_halves,
    idf_of,
    rank_task,
    spellings,
    task_words,
)
from tests.conftest import Cli, RecordMaker

# --- search: the record's word beside the query's ------------------------------------------------


def test_matched_terms_names_the_record_word_of_a_prefix_match() -> None:
    text = " python module import fails \t the module was missing timeouts timeout \t tests "
    found = matched_terms(text, ["modulenotfounderror", "python", "timeout", "test", "absent"])
    # `module` (6 letters) is a prefix of the token: that, not the token, is in the record.
    assert found["modulenotfounderror"] == ["module"]
    assert found["python"] == ["python"]
    # The token itself first when the record holds it, then the other words it matches.
    assert found["timeout"] == ["timeout", "timeouts"]
    # Below 5 characters only the word itself matches (`test` is not `tests`).
    assert "test" not in found and "absent" not in found


def test_matched_words_shows_a_token_with_the_words_it_matched() -> None:
    terms = {
        "modulenotfounderror": ["module"],
        "python": ["python"],
        "config": ["config", "configs", "configuration", "configured"],
    }
    shown = matched_words(["modulenotfounderror", "python", "config"], terms)
    assert shown == "modulenotfounderror~module, python, config~config/configs/configuration/…"
    assert matched_words(["python"]) == "python"  # nothing known of the record: the token


def test_search_names_both_words_in_text_and_json(cli: Cli, write_record: RecordMaker) -> None:
    write_record(
        "module-missing-1a2b3c",
        "Python module import fails in the container",
        "## Problems\n- the module was missing from the image\n\n## Solution\nInstall it.\n",
        tags=["python"],
    )
    done = cli("search", "ModuleNotFoundError python")
    assert done.returncode == 0, done.stderr
    assert "matched: modulenotfounderror~module, python  ·" in done.stdout
    [result] = cli.json("search", "ModuleNotFoundError python")["results"]
    assert result["matchedTokens"] == ["modulenotfounderror", "python"]  # as it always was
    assert result["matchedTerms"] == {"modulenotfounderror": ["module"], "python": ["python"]}
    assert list(result).index("matchedTerms") == list(result).index("matchedTokens") + 1


# --- brief: which words may be halves of one ------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "halves"),
    [
        ("time", "out", True),  # a particle may be a stop word
        ("set", "up", True),
        ("rate", "limit", True),
        ("js", "on", False),  # `json`: a two-letter first half
        ("with", "out", False),  # `without`: a stop word first
        ("edit", "or", False),  # `editor`: a stop word that is no particle
        ("open", "ed", False),  # `opened`: a two-letter scrap
        ("utf", "8", False),  # digits
    ],
)
def test_compound_halves(first: str, second: str, halves: bool) -> None:
    assert compound_halves(first, second) is halves


def test_spellings_of_a_first_half() -> None:
    assert "time" in spellings("times") and "time" in spellings("timed")
    assert "log" in spellings("logged") and spellings("rate") == ("rate",)


def test_task_words_add_adjacent_pairs_but_not_a_compound_already_asked() -> None:
    words = task_words("the suite times out on CI", "rate limit")
    pairs = {w.text: w for w in words if w.halves}
    assert pairs["times out"].halves == ("times", "out") and pairs["times out"].weight == 1.0
    assert pairs["rate limit"].source == "query" and pairs["rate limit"].weight == 3.0
    # With `timeout` among the keywords, the word itself covers the compound (and its halves).
    assert "times out" not in {w.text for w in task_words("it times out", "timeout")}
    assert not [w for w in task_words("the suite times out", "", Settings(compound_discount=0))
                if w.halves]  # fmt: skip


# --- brief: the ranking -------------------------------------------------------------------------


def _store(*records: Record) -> tuple[InvertedIndex, Callable[[int], str]]:
    """An index of ``records`` in slots 0…, and the text of each slot (as the store index has)."""
    docs: list[IndexedRecord] = [index_record(r) for r in records]
    index = InvertedIndex.empty().extended((doc, record_terms(doc.text)) for doc in docs)
    return index, lambda slot: docs[slot].text


def _record(record_id: str, title: str, problem: str, solution: str = "") -> Record:
    return Record(id=record_id, title=title, problems=[problem], solution=solution, locator="x")


def _hit(hits: list[TaskHit], record_id: str) -> TaskHit:
    [hit] = [hit for hit in hits if hit.doc.id == record_id]
    return hit


def _explained(hit: TaskHit) -> list[str]:
    return [m.explained() for m in hit.matches]


def test_times_out_matches_timeout_by_compound_and_not_time_by_stem() -> None:
    index, text_of = _store(
        _record("timeout", "Raise the pytest timeout", "the suite hit the timeout on runners"),
        _record("time-zone", "Set the time zone of runners", "the suite ran at the wrong time"),
    )
    hits = rank_task(index, task_words("the suite times out on the runners"), text_of=text_of)
    timeout = _hit(hits, "timeout")
    assert "times out~timeout (title, problems, by compound)" in _explained(timeout)
    [compound] = [m for m in timeout.matches if m.word == "times out"]
    assert compound.by == ("compound",) and compound.terms == ("timeout",)
    assert not compound.stemmed
    # `times` is the first word of a compound the store holds: it is not `time` by stem.
    zone = _hit(rank_task(index, task_words("the suite times out on the runners"), floor=False,
                          text_of=text_of), "time-zone")  # fmt: skip
    assert "times" not in {m.word for m in zone.matches}
    # Measured alternative kept for the bench: with the stems kept, `times~time` is back.
    kept = rank_task(index, task_words("the suite times out on the runners"),
                     Settings(lead_stems="keep"), floor=False, text_of=text_of)  # fmt: skip
    assert "times~time (title, problems, by stem)" in _explained(_hit(kept, "time-zone"))


def test_a_task_word_matches_a_record_that_writes_it_as_two_words() -> None:
    index, text_of = _store(
        _record("split", "Slow uploads", "large uploads timed out behind the proxy"),
        _record("apart", "Proxy time budget", "the time spent is out of our hands, uploads slow"),
    )
    words = task_words("uploads fail with a proxy timeout")
    hits = rank_task(index, words, text_of=text_of)
    assert "timeout~timed out (problems, by split)" in _explained(_hit(hits, "split"))
    # `time` and `out` apart are not `time out`: the postings hold both, the text says no.
    assert "timeout" not in {m.word for m in _hit(hits, "apart").matches}
    # Without the records' texts a split cannot be confirmed, so there is none.
    blind = rank_task(index, words)
    assert "timeout" not in {m.word for m in _hit(blind, "split").matches}


def test_rate_limit_both_ways() -> None:
    index, text_of = _store(
        _record("one-word", "Handle the ratelimit header", "requests got a 429 from the api"),
        _record("two-words", "Back off on the rate limit", "requests got a 429 from the api"),
    )
    joined = rank_task(index, task_words("the api rate limit keeps failing requests"),
                       text_of=text_of)  # fmt: skip
    assert "rate limit~ratelimit (title, by compound)" in _explained(_hit(joined, "one-word"))
    split = rank_task(index, task_words("ratelimit errors on api requests"), text_of=text_of)
    assert "ratelimit~rate limit (title, by split)" in _explained(_hit(split, "two-words"))


def test_a_compound_is_discounted_and_never_counts_the_task_words_again() -> None:
    index, text_of = _store(
        _record("both", "Rolling back a migration", "rollback of a migration failed"),
        _record("joined", "Rollback a migration", "the migration failed half way"),
    )
    words = task_words("rolling back the last migration")
    hits = rank_task(index, words, text_of=text_of)
    both = {m.word: m for m in _hit(hits, "both").matches}
    # The title holds `rolling back` itself: the compound counts only where it bridges.
    assert both["rolling back"].fields == ("problems",)
    assert "rolling back~rollback (problems, by compound)" in _explained(_hit(hits, "both"))
    half = {m.word: m.score for m in _hit(hits, "joined").matches}["rolling back"]
    full = rank_task(index, words, Settings(compound_discount=1.0), text_of=text_of)
    assert half < {m.word: m.score for m in _hit(full, "joined").matches}["rolling back"]
    for hit in hits:  # every explained part adds up to the score
        assert hit.score == pytest.approx(sum(m.score for m in hit.matches))


def test_a_compound_in_a_shown_field_counts_for_the_push_confidence() -> None:
    index, text_of = _store(
        _record("timeout", "Pytest timeout on shared runners", "flaky suite"),
        _record("other", "Unrelated notes", "nothing in common"),
    )
    hits = rank_task(index, task_words("the suite times out on shared runners"), text_of=text_of)
    top = _hit(hits, "timeout")
    [compound] = [m for m in top.matches if m.by == ("compound",)]
    assert compound.fields == ("title",) and compound.score > 0
    # The push's "shown" figure (confidence.py) counts every part held in a shown field,
    # the compound's too: it is a word of the title, where a push shows it.
    shown = sum(m.score for m in top.matches if {"title", "tags", "solution"} & set(m.fields))
    assert top.score_in(SHOWN_MASK) == pytest.approx(shown)
    assert judge(hits, 0, 2).shown * idf_of(1, 2) == pytest.approx(shown)


# --- brief: the command -------------------------------------------------------------------------


def test_the_brief_explains_compounds_and_splits(cli: Cli, write_record: RecordMaker) -> None:
    write_record(
        "suite-timeout-aaa111",
        "Raise the pytest timeout for fixture tests",
        "## Problems\n- the integration suite hit the timeout\n\n## Solution\nMark them slow.\n",
    )
    write_record(
        "time-zone-bbb222",
        "Set the time zone of the runners",
        "## Problems\n- the nightly suite ran at the wrong time\n\n## Solution\nExport TZ.\n",
    )
    write_record(
        "stale-runners-ccc333",
        "Old runners kept jobs waiting",
        "## Problems\n- queued jobs timed out on old runners\n\n## Solution\nPrune them.\n",
    )
    done = cli("brief", "the integration suite times out on the runners")
    assert done.returncode == 0, done.stderr
    assert "times out~timeout (title, problems, by compound)" in done.stdout
    assert "times~time" not in done.stdout
    document = cli.json("brief", "queued jobs fail with a timeout")
    [lesson] = [x for x in document["lessons"] if x["id"] == "stale-runners-ccc333"]
    [token] = [t for t in lesson["reason"]["tokens"] if t["word"] == "timeout"]
    assert token["by"] == ["split"] and token["terms"] == ["timed out"]
    assert token["fields"] == ["problems"] and token["stemmed"] is False
    assert "timeout~timed out (problems, by split)" in lesson["text"]
