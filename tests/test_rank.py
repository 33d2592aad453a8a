"""Ranking (SPEC.md §5) on tiny hand-made records, with every number worked out by hand."""

from __future__ import annotations

import pytest

from reliora_git.records.errors import RelioraError
from reliora_git.records.model import Record
from reliora_git.search.rank import (
    ContextFilter,
    Hit,
    IndexedRecord,
    Query,
    feedback_summary,
    index_record,
    match_level,
    rank,
    score_record,
)


def flaky_pytest() -> Record:
    """The record of SPEC.md §3, used by the worked examples in docs/ranking.md."""
    return Record(
        id="flaky-pytest-timeouts-3f9a1c",
        title="Flaky pytest timeouts on CI runners",
        tags=["pytest", "ci", "timeouts"],
        project_context="reliora-git python cli",
        task="Make the integration suite pass reliably on shared CI runners.",
        problems=[
            "pytest-timeout killed tests at random on 2-core runners",
            "retries hid the failure instead of fixing it",
        ],
        solution="Raise the per-test timeout only for the git-fixture tests",
        why_it_worked="The slow part was `git init` in each fixture",
        failed_attempts=["pytest-rerunfailures: masked the problem"],
        warnings=["do not raise the global timeout"],
        applicability="Python projects whose tests create real git repositories.",
    )


def hit_for(query: str, record: Record | None = None) -> Hit:
    hit = score_record(index_record(record or flaky_pytest()), Query.parse(query))
    assert hit is not None
    return hit


def test_worked_example_full_coverage() -> None:
    # pytest, timeout, ci ("on" is a stop word). tags 3×9, title 3×8, problems 2×7 (no "ci"),
    # task 1×5 ("ci"), solution 1×4 ("timeout"), failed 1×3 ("pytest"), warnings 1×2 ("timeout").
    hit = hit_for("pytest timeout on CI")
    assert hit.breakdown == {
        "tags": 27.0,
        "title": 24.0,
        "problems": 14.0,
        "task": 5.0,
        "solution": 4.0,
        "projectContext": 0.0,
        "applicability": 0.0,
        "failedAttempts": 3.0,
        "warnings": 2.0,
        "exactPhrase": 0.0,
        "coverageMultiplier": 1.0,
        "feedback": 0.0,
    }
    assert hit.relevance == pytest.approx(79.0)
    assert hit.coverage == 1.0
    assert hit.level == "strong"
    assert hit.matched_tokens == ("pytest", "timeout", "ci")


def test_worked_example_phrase_with_stop_word_inside() -> None:
    # killed, tests, random; the phrase "killed tests at random" keeps "at" and is in problem 1.
    hit = hit_for("killed tests at random")
    assert hit.breakdown["problems"] == 21.0
    assert hit.breakdown["solution"] == 4.0  # "tests" in the solution
    assert hit.breakdown["applicability"] == 4.0  # "tests" in the applicability
    assert hit.breakdown["exactPhrase"] == 12.0
    assert hit.relevance == pytest.approx(41.0)


def test_worked_example_partial_coverage() -> None:
    # Only "flaky" matches (title): coverage 1/3, multiplier 0.6 + 0.4/3.
    hit = hit_for("flaky kubernetes deploy")
    multiplier = 0.6 + 0.4 / 3
    assert hit.breakdown["coverageMultiplier"] == pytest.approx(multiplier)
    assert hit.breakdown["title"] == pytest.approx(8 * multiplier)
    assert hit.relevance == pytest.approx(5.8667, abs=1e-4)
    assert hit.level == "weak"


def test_each_query_token_counts_once_per_field() -> None:
    # "timeouts" and "timeout" are different query tokens; the title holds one record token
    # they both match, and each counts.
    hit = hit_for("timeout timeouts")
    assert hit.breakdown["title"] == 16.0


@pytest.mark.parametrize(
    ("query", "record_word", "matches"),
    [
        ("test", "testing", False),  # shorter side has 4 characters: exact only
        ("testi", "testing", True),  # 5 characters: prefix match
        ("timeouts", "timeout", True),  # the record token may be the shorter one
        ("time", "timeout", False),
        ("config", "configuration", True),
        ("configuration", "config", True),
        ("tests", "test", False),  # "test" is shorter than 5
        ("node", "node", True),
        ("abcde", "abcdf", False),
    ],
)
def test_prefix_rule_boundaries(query: str, record_word: str, matches: bool) -> None:
    record = Record(id="r", title=record_word, problems=["x"], solution="y")
    assert (score_record(index_record(record), Query.parse(query)) is not None) is matches


def test_tokens_split_on_punctuation_and_normalise() -> None:
    query = Query.parse("Node.js UTF-8 ＦＵＬＬ width")
    assert query.token_texts == ["node", "js", "utf", "8", "full", "width"]


def test_stop_words_are_not_query_tokens() -> None:
    assert Query.parse("how to fix the build").token_texts == ["fix", "build"]
    with pytest.raises(RelioraError, match="no searchable words"):
        Query.parse("how to do it")


def test_phrase_across_list_items_does_not_count() -> None:
    record = Record(
        id="r", title="t", problems=["the job was killed", "tests at random"], solution="s"
    )
    hit = score_record(index_record(record), Query.parse("killed tests"))
    assert hit is not None
    assert hit.breakdown["exactPhrase"] == 0.0
    assert hit.breakdown["problems"] == 14.0


def test_phrase_across_tags_does_not_count_but_inside_one_tag_does() -> None:
    record = Record(
        id="r", title="t", tags=["git", "hooks", "git-hooks"], problems=["p"], solution="s"
    )
    assert hit_for("git hooks", record).breakdown["exactPhrase"] == 12.0
    record.tags = ["git", "hooks"]
    assert hit_for("git hooks", record).breakdown["exactPhrase"] == 0.0


def test_phrase_needs_whole_tokens_and_two_tokens() -> None:
    record = Record(id="r", title="pytests timeouts", problems=["p"], solution="s")
    # prefix matches count per token, but the phrase needs the exact token run
    assert hit_for("pytest timeout", record).breakdown["exactPhrase"] == 0.0
    assert hit_for("pytests", record).breakdown["exactPhrase"] == 0.0  # one token: no phrase


def test_phrase_counts_once_even_in_several_fields() -> None:
    record = Record(
        id="r",
        title="merge conflict",
        task="merge conflict",
        problems=["merge conflict"],
        solution="s",
    )
    hit = hit_for("merge conflict", record)
    assert hit.breakdown["exactPhrase"] == 12.0
    assert hit.relevance == pytest.approx(2 * 8 + 2 * 7 + 2 * 5 + 12)


@pytest.mark.parametrize(
    ("outcomes", "adjustment"),
    [
        ([], 0.0),
        (["success"], 1.0),
        (["success"] * 3, 2.5),  # 3.0 clamped
        (["failure"] * 2, -1.5),  # -2.0 clamped
        (["success", "failure", "partial"], 0.5),
        (["not-applicable", "outdated"], -0.75),
        (["outdated"] * 4, -1.5),
        (["partial"] * 5, 2.5),
    ],
)
def test_feedback_adjustment_is_clamped(outcomes: list[str], adjustment: float) -> None:
    assert feedback_summary(outcomes).adjustment == pytest.approx(adjustment)


def test_feedback_adds_to_score_not_relevance() -> None:
    doc = index_record(flaky_pytest())
    hit = score_record(doc, Query.parse("flaky"), feedback_summary(["success"] * 5))
    assert hit is not None
    assert hit.relevance == pytest.approx(8 * 1.0)
    assert hit.score == pytest.approx(10.5)
    assert hit.breakdown["feedback"] == 2.5


@pytest.mark.parametrize(
    ("coverage", "relevance", "level"),
    [
        (0.75, 18.0, "strong"),
        (0.75, 17.99, "moderate"),
        (0.74, 50.0, "moderate"),
        (1.0, 18.0, "strong"),
        (0.40, 8.0, "moderate"),
        (0.40, 7.99, "weak"),
        (0.39, 100.0, "weak"),
        (0.0, 0.0, "weak"),
    ],
)
def test_match_level_thresholds(coverage: float, relevance: float, level: str) -> None:
    assert match_level(coverage, relevance) == level


def test_strong_exactly_at_both_thresholds_from_real_scoring() -> None:
    # 3 of 4 tokens: multiplier 0.9; tags 9 + title 8 + failed attempts 3 = 20 → relevance 18.
    record = Record(
        id="r",
        tags=["alpha"],
        title="beta",
        problems=["p"],
        solution="s",
        failed_attempts=["gamma"],
    )
    hit = hit_for("alpha beta gamma delta", record)
    assert hit.coverage == 0.75
    assert hit.relevance == pytest.approx(18.0)
    assert hit.level == "strong"


def test_moderate_and_weak_around_forty_percent_coverage() -> None:
    # 2 of 5 tokens: multiplier 0.76. title 8 + failed attempts 3 = 11 → 8.36 (moderate);
    # title 8 + warnings 2 = 10 → 7.6 (weak).
    moderate = Record(id="m", title="alpha", problems=["p"], solution="s", failed_attempts=["beta"])
    weak = Record(id="w", title="alpha", problems=["p"], solution="s", warnings=["beta"])
    query = "alpha beta gamma delta epsilon"
    assert hit_for(query, moderate).relevance == pytest.approx(8.36)
    assert hit_for(query, moderate).level == "moderate"
    assert hit_for(query, weak).relevance == pytest.approx(7.6)
    assert hit_for(query, weak).level == "weak"


def docs(*records: Record) -> list[IndexedRecord]:
    return [index_record(r) for r in records]


def test_project_context_filter_uses_context_tags_and_applicability() -> None:
    base = {"problems": ["deploy failed"], "solution": "retry"}
    by_context = Record(id="a", title="deploy", project_context="python cli", **base)  # type: ignore[arg-type]
    by_tag = Record(id="b", title="deploy", tags=["pythonic"], **base)  # type: ignore[arg-type]
    by_applicability = Record(id="c", title="deploy", applicability="Python services", **base)  # type: ignore[arg-type]
    only_in_title = Record(id="d", title="deploy python", **base)  # type: ignore[arg-type]
    hits = rank(
        docs(by_context, by_tag, by_applicability, only_in_title),
        Query.parse("deploy"),
        context=ContextFilter.parse("python"),
    )
    assert sorted(h.doc.id for h in hits) == ["a", "b", "c"]
    # the filter adds nothing to the score
    assert {h.doc.id: h.score for h in hits} == {"a": 8 + 7, "b": 8 + 7, "c": 8 + 7}


def test_order_is_score_then_relevance_then_id() -> None:
    records = [
        Record(id="b-second", title="deploy", problems=["p"], solution="s"),
        Record(id="a-first", title="deploy", problems=["p"], solution="s"),
        Record(id="c-boosted", title="deploy", problems=["p"], solution="s"),
        Record(id="d-strong", title="deploy", tags=["deploy"], problems=["p"], solution="s"),
    ]
    feedback = {"c-boosted": feedback_summary(["success"] * 9)}
    hits = rank(docs(*records), Query.parse("deploy"), feedback=feedback)
    # d: 17; c: 8 + 2.5 = 10.5; a and b tie at 8 → id ascending
    assert [h.doc.id for h in hits] == ["d-strong", "c-boosted", "a-first", "b-second"]


def test_equal_score_breaks_ties_by_relevance() -> None:
    records = [
        Record(id="a", title="deploy", problems=["p"], solution="s"),  # 8 + 1.0 feedback = 9
        Record(id="b", task="deploy", problems=["p"], solution="deploy", title="x"),  # 5 + 4 = 9
    ]
    hits = rank(
        docs(*records), Query.parse("deploy"), feedback={"a": feedback_summary(["success"])}
    )
    assert [h.score for h in hits] == [9.0, 9.0]
    assert [h.doc.id for h in hits] == ["b", "a"]


def test_retired_and_superseded_are_left_out_unless_asked() -> None:
    records = [
        Record(id="active", title="deploy", problems=["p"], solution="s"),
        Record(id="old", title="deploy", problems=["p"], solution="s", status="retired"),
        Record(id="replaced", title="deploy", problems=["p"], solution="s", status="superseded"),
    ]
    query = Query.parse("deploy")
    assert [h.doc.id for h in rank(docs(*records), query)] == ["active"]
    assert {h.doc.id for h in rank(docs(*records), query, include_retired=True)} == {
        "active",
        "old",
        "replaced",
    }


def test_min_level_drops_weaker_results() -> None:
    strong = Record(
        id="s", title="deploy rollback", tags=["deploy"], problems=["rollback"], solution="x"
    )
    weak = Record(id="w", title="other", problems=["p"], solution="s", warnings=["deploy"])
    query = Query.parse("deploy rollback")
    assert [h.doc.id for h in rank(docs(strong, weak), query)] == ["s", "w"]
    assert [h.doc.id for h in rank(docs(strong, weak), query, min_level="moderate")] == ["s"]


def test_a_record_matching_no_token_is_not_a_result() -> None:
    assert score_record(index_record(flaky_pytest()), Query.parse("kubernetes")) is None


def test_scores_equal_but_for_the_last_binary_digit_are_ties() -> None:
    """Found by the ranking oracle: 24 × 0.8 is 19.200000000000003, 20.7 − 1.5 is 19.2.

    Both are 19.2 (and the JSON shows 19.2): relevance must decide, as SPEC.md §5 says.
    """
    from reliora_git.search.rank import IndexedRecord, sort_key

    def hit(record_id: str, score: float, relevance: float) -> Hit:
        doc = IndexedRecord(record_id, "t", f"{record_id}.md", (), "active", None, "", "")
        return Hit(doc, score, relevance, 1.0, "strong", ("t",), (1,), False)

    with_feedback = hit("a", 23 * (0.6 + 0.4 * 0.75) - 1.5, 23 * (0.6 + 0.4 * 0.75))
    without = hit("a-1", 24 * (0.6 + 0.4 * 0.5), 24 * (0.6 + 0.4 * 0.5))
    assert without.score > with_feedback.score  # in binary floating point
    assert [h.doc.id for h in sorted([without, with_feedback], key=sort_key)] == ["a", "a-1"]
