"""Evidence and verdict of duplicate warnings (SPEC.md §6.1), worked through by hand.

The pool below has N = 4 records (the candidate excluded) and the candidate's
duplicate query is ``pgbouncer pool timeout``:

=========  =========================  ==========================
record     title                      holds
=========  =========================  ==========================
both       pool timeout (also tags)   pool, timeout
rare       pgbouncer pool             pgbouncer, pool
plural     timeouts on deploy         timeout (prefix rule, §4)
other      unrelated note             —
=========  =========================  ==========================

idf(t) = ln((N + 21) / (df(t) + 1)). df: pgbouncer 1, pool 2, timeout 2, so
idf(pgbouncer) = ln(25/2) = 2.52573 and idf(pool) = idf(timeout) = ln(25/3) = 2.12026;
their sum is 6.76626.
overlap(rare) = (2.52573 + 2.12026) / 6.76626 = 0.6866;
overlap(both) = (2.12026 + 2.12026) / 6.76626 = 0.6267.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliora_git.records.model import Record
from reliora_git.search.duplicates import DocsPool, find_similar
from reliora_git.search.rank import index_record
from tests.conftest import Cli, RecordMaker, git


def rec(record_id: str, title: str, **fields: object) -> Record:
    defaults: dict[str, object] = {"problems": [], "solution": f"solution of {record_id}"}
    return Record(id=record_id, title=title, **{**defaults, **fields})  # type: ignore[arg-type]


CANDIDATE = rec("new", "pgbouncer pool timeout")
POOL = [
    rec("both", "pool timeout", tags=["pool", "timeout"]),
    rec("rare", "pgbouncer pool"),
    rec("plural", "timeouts on deploy"),
    rec("other", "unrelated note"),
]


def warnings_of(pool: list[Record], threshold: float = 0.75) -> list[dict[str, object]]:
    found = find_similar(
        CANDIDATE, DocsPool([index_record(r) for r in pool]), duplicate_overlap=threshold
    )
    return [w.to_json() for w in found]


def test_overlap_is_the_idf_weighted_share_of_the_query_the_record_holds() -> None:
    found = {w["id"]: w for w in warnings_of(POOL)}
    assert set(found) == {"both", "rare"}  # plural and other are weak: not similarities
    assert found["rare"]["overlap"] == 0.6866
    assert found["both"]["overlap"] == 0.6267
    # Highest idf first; equal idf keeps query order.
    assert found["rare"]["sharedTokens"] == ["pgbouncer", "pool"]
    assert found["both"]["sharedTokens"] == ["pool", "timeout"]
    assert found["rare"]["verdict"] == found["both"]["verdict"] == "related"


def test_the_candidate_itself_in_the_pool_changes_neither_n_nor_df() -> None:
    itself = [*POOL, CANDIDATE]  # the staged store holds the staged record too
    assert warnings_of(itself) == warnings_of(POOL)


def test_a_record_holding_every_token_overlaps_fully_and_is_likely() -> None:
    found = warnings_of([*POOL, rec("all", "pgbouncer pool timeout", applicability="x")])
    assert found[0]["id"] == "all"
    assert found[0]["overlap"] == 1.0
    assert found[0]["verdict"] == "likely-duplicate"
    assert "likely duplicate of existing experience all" in str(found[0]["message"])
    assert "shares pgbouncer, pool, timeout" in str(found[0]["message"])


def test_likely_duplicates_come_first_whatever_their_score() -> None:
    by_default = warnings_of(POOL)
    assert [w["id"] for w in by_default] == ["both", "rare"]  # both related: by score
    assert float(str(by_default[0]["score"])) > float(str(by_default[1]["score"]))
    lowered = warnings_of(POOL, threshold=0.65)
    assert [(w["id"], w["verdict"]) for w in lowered] == [
        ("rare", "likely-duplicate"),
        ("both", "related"),
    ]


def test_an_exact_twin_is_likely_even_when_every_token_is_everywhere() -> None:
    twin = rec("twin", "pgbouncer pool timeout")
    everywhere = [rec(f"x{i}", "pgbouncer pool timeout", solution="other") for i in range(3)]
    new = rec("new", "pgbouncer pool timeout", solution="solution of twin")
    found = find_similar(new, DocsPool([index_record(r) for r in [twin, *everywhere]]))
    first = found[0]
    assert (first.id, first.verdict, first.exact) == ("twin", "likely-duplicate", True)
    assert "same title, solution and applicability" in first.message
    # The equality is the evidence: no overlap figure beside it ("overlap 0.00" misled).
    assert "overlap" not in first.message
    # With the idf prior (N + 21) a token every record holds still weighs: the
    # lexical copies hold the whole query, so they are likely duplicates too (three at most).
    assert [(w.verdict, w.overlap) for w in found[1:]] == [("likely-duplicate", 1.0)] * 2


def test_df_uses_the_prefix_rule_of_section_4() -> None:
    # Without "plural" (which holds "timeouts"), df(timeout) drops to 1: N = 3.
    found = {w["id"]: w for w in warnings_of([p for p in POOL if p.id != "plural"])}
    # idf(pg) = ln(24/2), idf(pool) = ln(24/3), idf(timeout) = ln(24/2); sum 7.04925
    assert found["both"]["overlap"] == round((2.07944 + 2.48491) / 7.04925, 4)


# --- through the CLI: record, check, the hook, review ---------------------------------------


#: No Problems section: the duplicate query is then the title (and tags) alone.
BODY = "## Task\nkeep things running\n\n## Solution\nfix it\n"


def _write_pool(write_record: RecordMaker) -> None:
    write_record("both", "pool timeout", BODY, tags=["pool", "timeout"])
    write_record("rare", "pgbouncer pool", BODY)
    write_record("plural", "timeouts on deploy", BODY)
    write_record("other", "unrelated note", BODY)


NEW_RECORD = {"title": "pgbouncer pool timeout", "task": "keep things running", "solution": "new"}
NEW_FLAGS = ["--title", "pgbouncer pool timeout", "--task", "keep things running"]


def test_record_shows_likely_duplicates_in_full_and_related_in_one_line(
    repo: Path, cli: Cli, write_record: RecordMaker
) -> None:
    _write_pool(write_record)
    done = cli("record", *NEW_FLAGS, "--solution", "new")
    assert done.returncode == 0, done.stderr
    assert "also related: both, rare" in done.stderr
    assert "SIMILAR_EXPERIENCE_FOUND" not in done.stderr
    shown = cli("record", "--all", *NEW_FLAGS, "--solution", "again")
    shown_lines = shown.stderr.splitlines()
    heads = [line for line in shown_lines if line.startswith(("likely duplicate: ", "related: "))]
    assert len(heads) == 3  # both, rare, and the first new
    assert any(line.startswith("likely duplicate: pgbouncer-pool-timeout") for line in heads)
    assert "overlap 1.00" in shown.stderr


def test_record_json_carries_the_evidence_and_config_sets_the_threshold(
    repo: Path, store: object, cli: Cli, write_record: RecordMaker
) -> None:
    _write_pool(write_record)
    (repo / ".reliora" / "config.toml").write_text("duplicate_overlap = 0.65\n")
    out = cli.json("record", "--json", "-", input=json.dumps(NEW_RECORD))
    assert [(w["id"], w["verdict"], w["overlap"]) for w in out["warnings"]] == [
        ("rare", "likely-duplicate", 0.6866),
        ("both", "related", 0.6267),
    ]
    (repo / ".reliora" / "config.toml").write_text("duplicate_overlap = 1.5\n")
    bad = cli("record", *NEW_FLAGS, "--solution", "s")
    assert bad.returncode == 2
    assert "'duplicate_overlap' must be between 0 and 1" in bad.stderr


@pytest.fixture
def committed_pool(repo: Path, write_record: RecordMaker) -> RecordMaker:
    _write_pool(write_record)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pool")
    return write_record


def test_the_hook_warns_a_modified_record_about_likely_duplicates_only(
    repo: Path, cli: Cli, committed_pool: RecordMaker
) -> None:
    committed_pool("new", "pgbouncer pool timeout", BODY)
    git(repo, "add", "-A")
    added = cli.json("check", "--staged", "--json")
    (file,) = added["files"]
    assert [w["verdict"] for w in file["warnings"]] == ["related", "related"]
    git(repo, "commit", "-qm", "new")
    # Modified: its related records were seen when it was added.
    committed_pool("new", "pgbouncer pool timeout", BODY, tags=["postgres"])
    git(repo, "add", "-A")
    modified = cli.json("check", "--staged", "--json")
    assert modified["files"] == []
    # A likely duplicate is still reported for a modified record.
    committed_pool("rare", "pgbouncer pool timeout postgres", BODY, tags=["postgres"])
    committed_pool("new", "pgbouncer pool timeout", BODY, tags=["postgres"], project_context="db")
    git(repo, "add", "-A")
    again = cli.json("check", "--staged", "--json")
    warned = {f["locator"]: [w["id"] for w in f["warnings"]] for f in again["files"]}
    assert warned[".reliora/experiences/new.md"] == ["rare"]


def test_check_of_a_named_file_follows_whether_the_last_commit_holds_it(
    repo: Path, cli: Cli, committed_pool: RecordMaker
) -> None:
    path = committed_pool("new", "pgbouncer pool timeout", BODY)
    fresh = cli.json("check", "--json", str(path))
    assert [w["id"] for f in fresh["files"] for w in f["warnings"]] == ["both", "rare"]
    text = cli("check", str(path))
    assert ".reliora/experiences/new.md: also related: both, rare" in text.stdout
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "new")
    assert cli.json("check", "--json", str(path))["files"] == []


def test_review_names_related_records_in_one_line_and_in_full_with_all(
    repo: Path, cli: Cli, committed_pool: RecordMaker
) -> None:
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "feature")
    committed_pool("new", "pgbouncer pool timeout", BODY)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "new")
    markdown = cli("review", "--base", "main").stdout
    assert "**also related:** both, rare" in markdown
    full = cli("review", "--base", "main", "--all").stdout
    assert "related to pool timeout" in full
    assert "overlap 0\\.63; shares pool, timeout" in full  # Markdown escapes the dot
    data = json.loads(cli("review", "--base", "main", "--format", "json").stdout)
    warnings = [w for change in data["records"] for w in change["warnings"]]
    assert [(w["id"], w["verdict"], w["sharedTokens"]) for w in warnings] == [
        ("both", "related", ["pool", "timeout"]),
        ("rare", "related", ["pgbouncer", "pool"]),
    ]


# --- young stores: the idf prior of N + 21 ---------------------------------------------------


def test_a_reworded_copy_of_the_only_record_is_a_likely_duplicate() -> None:
    only = rec(
        "only",
        "Flaky pytest timeouts on shared CI runners",
        tags=["pytest", "ci"],
        problems=["pytest-timeout killed tests at random on 2-core runners"],
    )
    copy = rec(
        "copy",
        "pytest timeouts flaky on runners",
        tags=["pytest", "ci"],
        problems=["pytest-timeout killed tests"],
        solution="something else entirely",
    )
    (found,) = find_similar(copy, DocsPool([index_record(only)]))
    assert (found.id, found.verdict) == ("only", "likely-duplicate")
    assert found.overlap == 1.0


def test_in_a_young_store_a_different_lesson_stays_unflagged() -> None:
    store = [
        rec("a", "Flaky pytest timeouts on shared CI runners", tags=["pytest", "ci"]),
        rec("b", "Rebase onto the default branch before a release", tags=["git"]),
    ]
    other = rec("new", "Slow docker builds on CI runners", tags=["docker", "ci"])
    assert not [
        w for w in find_similar(other, DocsPool([index_record(r) for r in store])) if w.likely
    ]
