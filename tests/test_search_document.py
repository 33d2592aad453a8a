"""`search --json` is exactly the document of SPEC.md §7, and stable from run to run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import Cli, RecordMaker

RESULT_KEYS = {
    "rank": int,
    "id": str,
    "title": str,
    "summary": str,  # the first problem and the solution's first sentences (≤ 300 chars)
    "locator": str,
    "tags": list,
    "score": float,
    "relevance": float,
    "coverage": float,
    "matchLevel": str,
    "matchedTokens": list,
    "matchedTerms": dict,  # each matched token → the record's words it matched (§4)
    "confidence": (str, type(None)),
    "status": str,
    "supersededBy": list,  # SPEC.md §11
    "feedback": dict,
    "scoreBreakdown": dict,
    "freshness": dict,  # SPEC.md §12
}
FEEDBACK_KEYS = {"success", "partial", "failure", "notApplicable", "outdated", "adjustment"}
BREAKDOWN_KEYS = {
    "tags",
    "title",
    "problems",
    "task",
    "solution",
    "projectContext",
    "applicability",
    "failedAttempts",
    "warnings",
    "exactPhrase",
    "coverageMultiplier",
    "feedback",
}


def assert_search_document(doc: dict[str, Any]) -> None:
    """A structural validator for the §7 document (no schema library needed)."""
    # retiredMatches only when retired or superseded records matched and were left out.
    keys = {"query", "tokens", "projectContext", "total", "results"}
    assert set(doc) - {"retiredMatches"} == keys
    assert doc.get("retiredMatches", 1) > 0
    assert isinstance(doc["query"], str)
    assert all(isinstance(t, str) for t in doc["tokens"])
    context = doc["projectContext"]
    assert context is None or (set(context) == {"text", "tokens"})
    assert isinstance(doc["total"], int) and doc["total"] >= len(doc["results"])
    for rank, result in enumerate(doc["results"], start=1):
        assert set(result) == set(RESULT_KEYS)
        for key, kind in RESULT_KEYS.items():
            value = result[key]
            if kind is float:
                assert isinstance(value, (int, float)), key
                assert round(value, 4) == value, key  # rounded to 4 decimals
            else:
                assert isinstance(value, kind), key  # type: ignore[arg-type]
        assert result["rank"] == rank
        assert result["matchLevel"] in ("strong", "moderate", "weak")
        assert set(result["feedback"]) == FEEDBACK_KEYS
        breakdown = result["scoreBreakdown"]
        assert set(breakdown) == BREAKDOWN_KEYS
        parts = sum(v for k, v in breakdown.items() if k != "coverageMultiplier")
        assert abs(parts - result["score"]) < 0.001 + 12 * 0.00005  # rounding of each part


def test_search_json_is_the_spec_document_and_identical_across_runs(
    cli: Cli, write_record: RecordMaker
) -> None:
    write_record(
        "pytest-timeouts",
        "Flaky pytest timeouts on CI",
        tags=["pytest", "ci"],
        project_context="python",
    )
    write_record(
        "git-hooks",
        "Chained git hooks",
        tags=["git"],
        body="## Task\nrun pytest in a hook\n\n## Solution\nchain them\n",
    )
    write_record("retired-one", "Old pytest advice", status="retired")
    cli("feedback", "git-hooks", "partial")

    first = cli("search", "pytest timeouts", "--project-context", "python", "--json")
    second = cli("search", "pytest timeouts", "--project-context", "python", "--json")
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    doc = cli.json("search", "pytest timeouts")
    assert_search_document(doc)
    assert [r["id"] for r in doc["results"]] == ["pytest-timeouts", "git-hooks"]
    assert doc["results"][1]["feedback"]["partial"] == 1
    with_context = cli.json("search", "pytest", "--project-context", "python", "--limit", "1")
    assert_search_document(with_context)
    assert with_context["projectContext"] == {"text": "python", "tokens": ["python"]}
    assert with_context["total"] == 1
    retired = cli.json("search", "pytest", "--include-retired")
    assert "retired-one" in [r["id"] for r in retired["results"]]


def test_limit_cuts_results_but_total_counts_all(cli: Cli, write_record: RecordMaker) -> None:
    for i in range(4):
        write_record(f"deploy-{i}", f"Deploy step {i}")
    doc = cli.json("search", "deploy", "--limit", "2")
    assert doc["total"] == 4
    assert [r["rank"] for r in doc["results"]] == [1, 2]


def test_empty_results_are_success(cli: Cli, write_record: RecordMaker) -> None:
    write_record("a", "Something")
    doc = cli.json("search", "kubernetes")
    assert doc["results"] == [] and doc["total"] == 0
    human = cli("search", "kubernetes")
    assert human.returncode == 0
    assert "No experiences match" in human.stdout


def test_til_corpus_gives_sensible_answers(til_corpus: Path) -> None:
    cli = Cli(til_corpus)
    tmux = cli.json("search", "tmux copy mode", "--project-context", "tmux", "--limit", "3")
    assert_search_document(tmux)
    assert all("/tmux/" in r["locator"] for r in tmux["results"])
    assert tmux["results"][0]["matchLevel"] == "strong"
    undo = cli.json("search", "undo last git commit", "--limit", "5")
    assert all("/git/" in r["locator"] for r in undo["results"])
    json_pg = cli.json("search", "postgres json column", "--limit", "1")
    assert json_pg["results"][0]["id"].startswith("extracting-nested-json-data")
