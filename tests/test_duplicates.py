"""Similar-experience warnings (SPEC.md §6) on tiny hand-made stores; §6.1 has its own file."""

from __future__ import annotations

from reliora_git.records.model import Record
from reliora_git.search.duplicates import DocsPool, duplicate_query_text, find_similar
from reliora_git.search.rank import index_record


def rec(record_id: str, **fields: object) -> Record:
    defaults: dict[str, object] = {"problems": ["p"], "solution": "s"}
    return Record(id=record_id, **{**defaults, **fields})  # type: ignore[arg-type]


def test_query_is_title_tags_and_first_two_problems() -> None:
    record = rec("x", title="Flaky CI", tags=["pytest", "ci"], problems=["one", "two", "three"])
    assert duplicate_query_text(record) == "Flaky CI pytest ci one two"


def test_strong_and_moderate_warn_weak_does_not() -> None:
    new = rec("new", title="pytest timeouts on ci", tags=["pytest"], project_context="python")
    same = rec("same", title="pytest timeouts on ci", tags=["pytest"], project_context="python")
    half = rec("half", title="pytest flaky", tags=["ci"])  # 2 of 3 tokens in title/tags
    weak = rec("weak", title="unrelated", warnings=["timeouts"])
    warnings = find_similar(new, DocsPool([index_record(r) for r in (same, half, weak)]))
    assert [(w.id, w.match_level) for w in warnings] == [("same", "strong"), ("half", "moderate")]
    assert warnings[0].to_json()["code"] == "SIMILAR_EXPERIENCE_FOUND"
    assert "reliora feedback same" in warnings[0].message


def test_strong_without_shared_context_or_applicability_is_moderate() -> None:
    new = rec("new", title="pytest timeouts on ci", tags=["pytest"], project_context="python")
    elsewhere = rec(
        "other",
        title="pytest timeouts on ci",
        tags=["pytest"],
        project_context="rust",
        applicability="embedded boards",
    )
    shared_app = rec(
        "app",
        title="pytest timeouts on ci",
        tags=["pytest"],
        project_context="rust",
        applicability="python services",
    )
    new.applicability = "python services"
    levels = {
        w.id: w.match_level
        for w in find_similar(new, DocsPool([index_record(elsewhere), index_record(shared_app)]))
    }
    assert levels == {"other": "moderate", "app": "strong"}


def test_exact_title_solution_applicability_is_strong_whatever_the_score() -> None:
    # No tags or problems in common and different contexts: lexically this is weak at best.
    new = rec(
        "new",
        title="Use ssh agent",
        solution="Run ssh-add.",
        applicability="Linux",
        problems=["keys asked again and again"],
        project_context="alpha",
    )
    twin = rec(
        "twin",
        title="use SSH agent!",
        solution="run ssh add",
        applicability="linux",
        problems=["other words entirely"],
        project_context="beta",
    )
    warnings = find_similar(new, DocsPool([index_record(twin)]))
    assert [(w.id, w.match_level) for w in warnings] == [("twin", "strong")]


def test_at_most_three_strongest_first_retired_included_and_named() -> None:
    new = rec("new", title="deploy rollback plan", tags=["deploy"], project_context="ops")
    others = [
        rec(f"d{i}", title="deploy rollback plan", tags=["deploy"], project_context="ops")
        for i in range(4)
    ]
    others.append(
        rec(
            "old",
            title="deploy rollback plan",
            tags=["deploy"],
            project_context="ops",
            status="retired",
        )
    )
    others.append(rec("mod", title="deploy rollback", project_context="ops"))
    warnings = find_similar(new, DocsPool([index_record(r) for r in others]))
    # At most three likely duplicates (the exact twins), then the related records.
    assert [(w.id, w.match_level, w.verdict) for w in warnings] == [
        ("d0", "strong", "likely-duplicate"),  # equal score → id order
        ("d1", "strong", "likely-duplicate"),
        ("d2", "strong", "likely-duplicate"),
        ("mod", "strong", "related"),
    ]
    retired = find_similar(new, DocsPool([index_record(others[4])]))
    assert "(retired)" in retired[0].message


def test_the_record_itself_is_not_its_own_duplicate() -> None:
    record = rec("same-id", title="deploy rollback plan", tags=["deploy"])
    assert find_similar(record, DocsPool([index_record(record)])) == []
