"""Entries of a push earn their place (SPEC.md §14.2, operations/brief/earning.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reliora_git.operations.brief.earning import Holders, earns_line, telling, telling_matches
from reliora_git.operations.brief.selection import task_hits
from reliora_git.search.taskrank import WordMatch
from reliora_git.storage.index import open_index
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

FILLER = ("vim macros", "tmux panes", "ssh agent", "css grid", "sql joins", "rust lifetimes")


def match(word: str, *fields: str) -> WordMatch:
    return WordMatch(word, (word,), fields, False, 1.0, 1.0)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("3", False),
        ("10", False),
        ("py", False),
        ("ci", False),
        ("v2", False),
        ("3rc1", False),
        ("2b", False),
        ("pnpm", True),
        ("utf8", True),
        ("ipv6", True),
        ("sha1", True),
        ("time out", True),
    ],
)
def test_numbers_versions_and_short_words_are_not_telling(word: str, expected: bool) -> None:
    assert telling(word) is expected


def test_a_line_needs_a_telling_word_in_its_title_or_tags() -> None:
    assert earns_line([match("freezegun", "title")])
    assert earns_line([match("freezegun", "tags")])
    assert not earns_line([match("freezegun", "solution", "problems")])
    # A number in the title does not count.
    assert not earns_line([match("10", "title"), match("freezegun", "solution")])


def _filler(write_record: RecordMaker) -> None:
    """Notes on other topics, so that the lessons under test are a few among many."""
    for number, topic in enumerate(FILLER):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual of {topic}.\n",
        )


def _commit(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons")


@pytest.fixture
def python_lessons(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    # Three lessons that share only numbers and two-letter words with the task below.
    write_record(
        "node-10-ci",
        "Node 10 images in CI lack npm 7",
        "## Problems\n- the CI image pinned node 10 and py 3 tools\n\n"
        "## Solution\nPin the image to node 18.\n",
    )
    write_record(
        "docker-3-layers",
        "Docker layers cache badly after 3 rebuilds",
        "## Problems\n- cache misses on py builds every 10 minutes\n\n"
        "## Solution\nOrder the COPY lines by how often they change.\n",
    )
    write_record(
        "ci-matrix-10",
        "A CI matrix of 10 jobs times out",
        "## Problems\n- py 3 jobs queue behind each other\n\n## Solution\nSplit the matrix.\n",
    )
    _filler(write_record)
    _commit(repo)
    return store


def test_no_entry_stands_on_numbers_versions_or_short_words(
    python_lessons: Store, cli: Cli
) -> None:
    task = "Add a py.typed check to CI and bump the minimum Python to 3.10"
    document = cli.json("brief", "--push", task)
    assert document["lessons"] == []
    # They were candidates (the ranking found them) and were left out for that reason.
    omitted = {entry["id"]: entry["reason"]["earns"] for entry in document["omitted"]}
    assert omitted, document
    assert all(not earns["line"] for earns in omitted.values())
    assert cli("brief", "--push", task).stdout == ""


def test_a_body_only_match_gets_no_line_but_a_title_match_does(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli
) -> None:
    write_record(
        "body-only",
        "Keep fixtures small",
        "## Problems\n- the signer rejected tokens after a key rotation\n\n"
        "## Solution\nRegenerate the fixture tokens with the rotated signer key.\n",
    )
    write_record(
        "in-title",
        "Signer key rotation breaks stored tokens",
        "## Problems\n- old tokens stopped verifying\n\n"
        "## Solution\nKeep the old key as fallback.\n",
    )
    _filler(write_record)
    _commit(repo)
    document = cli.json("brief", "--push", "tokens fail after the signer key rotation, why?")
    shown = {lesson["id"]: lesson for lesson in document["lessons"]}
    assert "in-title" in shown
    assert "body-only" not in shown
    earns = {entry["id"]: entry["reason"]["earns"] for entry in document["omitted"]}
    assert earns["body-only"]["line"] is False


def test_a_tool_name_many_lessons_share_does_not_bring_one_in_full(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli
) -> None:
    task = "set up pnpm for the monorepo apps: shared store, installs"
    # The first stands out (the words in its title and solution), but every word it shares
    # with the task is held by other lessons too, and only one is in its title.
    write_record(
        "pnpm-workspace",
        "pnpm workspace basics",
        "## Problems\n- installs in the monorepo apps were slow\n\n"
        "## Solution\nRun pnpm -r from the monorepo root so the apps share one store.\n",
    )
    others = {
        "lockfile merges": "the pnpm setup",
        "hoisting": "the monorepo setup",
        "patches": "the apps setup",
        "caches": "the shared store",
        "roots": "installs from the store",
    }
    for number, (topic, what) in enumerate(others.items()):
        write_record(
            f"other-{number}",
            f"Handling {topic}",
            f"## Problems\n- {topic} broke {what}\n\n## Solution\nRead about {topic}.\n",
        )
    _filler(write_record)
    _commit(repo)
    document = cli.json("brief", "--push", task)
    first = document["lessons"][0]
    assert first["id"] == "pnpm-workspace"
    # The ranking is confident, but the lesson holds no word of its own: a line, not in full.
    assert first["reason"]["confidence"]["confident"] is True
    assert first["reason"]["earns"] == {"line": True, "full": False}
    assert first["form"] == "line"


def test_holders_count_the_same_words_the_matches_explain(python_lessons: Store) -> None:
    """Holders counts each hit's words without explaining them (TaskHit.matched_words): the
    words and counts must be those of the explained matches."""
    index = open_index(python_lessons)
    hits, _ = task_hits(index, "py 3 jobs on node 10 images: the CI matrix cache misses")
    assert len(hits) >= 2
    expected: dict[str, int] = {}
    for hit in hits:
        assert sorted(hit.matched_words) == sorted(m.word for m in hit.matches)
        for found in telling_matches(hit.matches):
            expected[found.word] = expected.get(found.word, 0) + 1
    assert Holders.of(hits).counts == expected
    assert expected  # telling words were shared, so the comparison says something
