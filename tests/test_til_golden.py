"""Search results on the til sample stay what the code before a ranking change returned.

``tests/data/til_golden.json`` holds, for a fixed set of queries (one word,
several, phrases, prefixes, short tokens, no match, unicode, punctuation,
``--project-context``, ``--min-level``, ``--include-retired``), the total and
every result: id and order, score, relevance, coverage, matchLevel,
matchedTokens and the score breakdown, rounded as in ``search --json``. It was
written by ``tests/data/make_til_golden.py`` with the code before the change
(see its docstring to regenerate it). Each query runs with the cache off, then
with the cache on (cold for the first query of each store, warm after it) and
on again (warm).

The store is the sample of the til corpus that ships in ``tests/data/til`` (332
of its 1,871 records), so the test runs in every clone. It is read, never
written: searches run on a copy outside git, the cache goes to a temporary
folder, and the variant with retired and superseded records is a copy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TIL_CORPUS
from tests.data.make_til_golden import (
    QUERIES,
    RETIRED,
    canonical,
    corpus_digest,
    make_retired_copy,
    query_name,
    run_query,
)

GOLDEN_FILE = Path(__file__).parent / "data" / "til_golden.json"


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def roots(til_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    copy = make_retired_copy(TIL_CORPUS, tmp_path_factory.mktemp("til-retired"))
    return {"til": til_corpus, "til-retired": copy}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the whole module: the first query of each store fills it."""
    return tmp_path_factory.mktemp("til-cache")


def test_golden_file_is_for_this_corpus_and_query_set(golden: dict[str, Any]) -> None:
    assert golden["corpus"] == corpus_digest(TIL_CORPUS), (
        "the til sample changed since til_golden.json was written: regenerate it with "
        "tests/data/make_til_golden.py and the code before the ranking change"
    )
    assert golden["retired"] == RETIRED
    assert [entry["query"] for entry in golden["queries"]] == QUERIES, (
        "the query set changed: regenerate til_golden.json (see make_til_golden.py)"
    )
    assert not golden["source"]["dirty"], "til_golden.json was written by uncommitted code"
    # The set covers what it claims to: matches and misses, levels, filters.
    totals = {entry["name"]: entry["total"] for entry in golden["queries"]}
    assert totals["xyzzyplugh"] == 0
    assert totals["Ｃｏｎｆｉｇ"] == totals["config"] > 0
    assert totals["timeouts"] == totals["timeout"] > 0
    levels = {r["matchLevel"] for entry in golden["queries"] for r in entry["results"]}
    assert levels == {"strong", "moderate", "weak"}
    by_name = {entry["name"]: entry for entry in golden["queries"]}
    assert any(r["scoreBreakdown"]["exactPhrase"] for r in by_name["search and replace"]["results"])
    assert (
        totals["git rebase retired til-retired"] > totals["git rebase til-retired"]
        and totals["postgres index retired til-retired"] > totals["postgres index til-retired"]
    )


def first_difference(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> str:
    for rank, (got, want) in enumerate(zip(actual, expected, strict=False), start=1):
        if got != want:
            keys = [k for k in want if got.get(k) != want[k]]
            return f"rank {rank} ({want['id']}): {keys}: got {got} expected {want}"
    return f"{len(actual)} results, expected {len(expected)}"


def check(found: dict[str, Any], entry: dict[str, Any], mode: str) -> None:
    where = f"{entry['name']!r} ({mode})"
    assert found["tokens"] == entry["tokens"], where
    assert found["projectContext"] == entry["projectContext"], where
    assert found["total"] == entry["total"], where
    stored = entry["results"]
    shown = found["results"][: entry["storedResults"]]
    assert shown == stored, f"{where}: {first_difference(shown, stored)}"
    assert canonical(found["results"]) == entry["resultsSha256"], (
        f"{where}: the results after the first {entry['storedResults']} differ"
    )


@pytest.mark.parametrize("query", QUERIES, ids=[query_name(query) for query in QUERIES])
def test_search_gives_the_golden_results(
    query: dict[str, Any],
    golden: dict[str, Any],
    roots: dict[str, Path],
    cache_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    [entry] = [e for e in golden["queries"] if e["query"] == query]
    root = roots[query["store"]]
    monkeypatch.setenv("RELIORA_NO_CACHE", "1")
    check(run_query(root, query), entry, "cache off")
    monkeypatch.delenv("RELIORA_NO_CACHE")
    monkeypatch.setenv("RELIORA_CACHE_DIR", str(cache_dir))
    check(run_query(root, query), entry, "cache on")
    assert any(cache_dir.iterdir()), "the cache was not written"
    check(run_query(root, query), entry, "cache on, warm")
