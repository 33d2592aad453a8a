"""Reworded duplicates in a young store (SPEC.md §6.1, search/duplicates.py: the mutual rule)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliora_git.records.model import Record
from reliora_git.search.duplicates import (
    LIKELY_DUPLICATE,
    YOUNG_STORE,
    DocsPool,
    find_similar,
)
from reliora_git.search.rank import index_record
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

ORIGINAL = "no-sleep-in-max-age-tests"
OTHERS = (
    ("key-rotation", "Rotate signing keys with a list of secret keys", "old tokens failed"),
    ("salt-per-purpose", "Use a different salt for each token purpose", "reset token mixup"),
    ("url-safe-tokens", "Use URLSafeSerializer for tokens in links", "slashes in links"),
    ("json-compact", "Compact JSON keeps signed payloads short", "the cookie grew"),
    ("bad-signature-detail", "BadSignature carries the payload", "no payload in logs"),
    ("sha1-default", "The default digest is SHA-1 for compatibility", "review flagged SHA-1"),
    ("timestamp-epoch", "Timestamps count from 2011 in old versions", "dates looked wrong"),
    ("py-typed", "Ship py.typed for type checkers", "mypy ignored annotations"),
)
#: The newcomer's pair: the same lesson, recorded twice in other words.
REWORDED = {
    "title": "Timed tests must freeze time with freezegun, never sleep",
    "tags": ["testing"],
    "problems": ["test_max_age slept two seconds and was flaky on CI"],
    "solution": "Use freezegun.freeze_time and tick the frozen clock past max_age "
    "instead of sleeping.",
}


@pytest.fixture
def young(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    write_record(
        ORIGINAL,
        "Don't sleep in max_age tests, use freeze_time",
        "## Problems\n- test_max_age slept two seconds and still failed on slow CI runners\n\n"
        "## Solution\nFreeze the clock with freezegun's freeze_time and move it past max_age "
        "with tick().\n",
        tags=["testing", "itsdangerous"],
    )
    for record_id, title, problem in OTHERS:
        write_record(
            record_id,
            title,
            f"## Problems\n- {problem}\n\n## Solution\nSee the itsdangerous docs.\n",
            tags=["itsdangerous"],
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "nine lessons")
    return store


def test_a_reworded_copy_in_a_young_store_is_a_likely_duplicate(young: Store, cli: Cli) -> None:
    done = cli("record", "--json", "-", input=json.dumps(REWORDED))
    assert done.returncode == 0, done.stderr
    warnings = json.loads(done.stdout)["warnings"]
    first = warnings[0]
    assert first["id"] == ORIGINAL
    assert first["verdict"] == LIKELY_DUPLICATE
    # Short of duplicate_overlap one way, but each holds the other's words: the evidence says so.
    assert 0.65 <= first["overlap"] < 0.75
    assert first["reverseOverlap"] >= 0.4
    assert "the other way" in first["message"]


def test_the_hook_calls_the_staged_copy_a_likely_duplicate(
    young: Store, cli: Cli, repo: Path
) -> None:
    done = cli("record", "--json", "-", input=json.dumps(REWORDED))
    assert done.returncode == 0, done.stderr
    git(repo, "add", "-A")
    checked = cli("check", "--staged")
    assert checked.returncode == 0, checked.stderr
    said = checked.stdout + checked.stderr
    assert f"likely duplicate of existing experience {ORIGINAL}" in said


def test_distinct_lessons_of_the_young_store_stay_related(young: Store, cli: Cli) -> None:
    distinct = {
        "title": "Freeze the clock in signer tests that check timestamps",
        "tags": ["testing"],
        "problems": ["timestamps from 2011 epoch looked wrong in a test"],
        "solution": "Compute the expected timestamp from get_timestamp.",
    }
    done = cli("record", "--json", "-", input=json.dumps(distinct))
    assert done.returncode == 0, done.stderr
    verdicts = [w["verdict"] for w in json.loads(done.stdout)["warnings"]]
    assert LIKELY_DUPLICATE not in verdicts


def _record(record_id: str, title: str, problem: str, solution: str, tags: list[str]) -> Record:
    return Record(id=record_id, title=title, problems=[problem], solution=solution, tags=tags)


def test_a_grown_store_keeps_the_plain_threshold() -> None:
    original = _record(
        ORIGINAL,
        "Don't sleep in max_age tests, use freeze_time",
        "test_max_age slept two seconds and still failed on slow CI runners",
        "Freeze the clock with freezegun's freeze_time and move it past max_age with tick().",
        ["testing", "itsdangerous"],
    )
    copy = _record(
        "copy", REWORDED["title"], REWORDED["problems"][0], REWORDED["solution"], ["testing"]
    )
    filler = [
        _record(f"filler-{n}", f"Filler note {n}", f"unrelated {n}", "nothing", ["misc"])
        for n in range(YOUNG_STORE)
    ]
    young = find_similar(copy, DocsPool([index_record(original)]))
    grown = find_similar(copy, DocsPool([index_record(r) for r in [original, *filler]]))
    assert young[0].likely and young[0].reverse_overlap is not None
    # In a grown store the words' idf is known: no second chance, no reverse overlap shown.
    assert grown[0].id == ORIGINAL
    assert grown[0].reverse_overlap is None
