"""`reliora review` on a real branch: every kind of change, in all three formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliora_git.interfaces.review import COMMENT_MARKER, md, plain, to_markdown
from reliora_git.operations.review.branch import RecordChange, Review, Side
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

HOSTILE_TITLE = "Hostile <img src=x onerror=alert(1)> for @someone"
HOSTILE_PROBLEM = "ping @someone ![pixel](https://evil.example/p.png) <script>alert(1)</script>"


@pytest.fixture
def branch(store: Store, cli: Cli, write_record: RecordMaker) -> Store:
    """main holds four records; the feature branch adds, modifies, renames and removes one each."""
    repo = store.root
    write_record("keep-me", "Docker layer caching", tags=["docker"])
    write_record(
        "to-modify",
        "Flaky pytest timeouts",
        body="## Problems\n- slow fixtures\n\n## Solution\nraise the timeout\n",
    )
    write_record("to-rename", "Rebase before merging", tags=["git"])
    write_record("to-remove", "Old lesson about Python 2", tags=["python2"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write_record(
        "to-modify",
        "Flaky pytest timeouts",
        body="## Problems\n- slow fixtures\n\n## Solution\nmake the fixtures faster\n",
    )
    git(repo, "mv", ".reliora/experiences/to-rename.md", ".reliora/experiences/renamed.md")
    git(repo, "rm", "-q", ".reliora/experiences/to-remove.md")
    write_record(
        "hostile-record",
        HOSTILE_TITLE,
        body=f"## Problems\n- {HOSTILE_PROBLEM}\n\n## Solution\nnothing\n",
        tags=["docker"],
    )
    assert cli("feedback", "to-modify", "success", "--note", "thanks @someone").returncode == 0
    assert cli("feedback", "keep-me", "partial").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    return store


def test_json_lists_each_kind_of_change(branch: Store, cli: Cli) -> None:
    done = cli("review", "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["base"]["ref"] == "main"
    assert document["summary"] == {
        "added": 1,
        "modified": 1,
        "renamed": 1,
        "removed": 1,
        "feedbackEvents": 2,
    }
    by_kind = {record["kind"]: record for record in document["records"]}
    assert by_kind["added"]["id"] == "hostile-record"
    assert by_kind["added"]["title"] == HOSTILE_TITLE  # JSON keeps the text verbatim
    assert by_kind["modified"]["id"] == "to-modify"
    assert by_kind["modified"]["changedFields"] == ["solution"]
    assert [e["outcome"] for e in by_kind["modified"]["feedback"]] == ["success"]
    assert by_kind["renamed"]["oldLocator"] == ".reliora/experiences/to-rename.md"
    assert by_kind["renamed"]["locator"] == ".reliora/experiences/renamed.md"
    assert by_kind["renamed"]["changedFields"] == []
    assert by_kind["removed"]["id"] == "to-remove"
    assert by_kind["removed"]["title"] == "Old lesson about Python 2"
    assert [e["record"] for e in document["otherFeedback"]] == ["keep-me"]


def test_markdown_lists_each_change_and_is_inert(branch: Store, cli: Cli) -> None:
    done = cli("review", "--base", "main")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith(COMMENT_MARKER)
    for heading in (
        "### Added: Hostile",
        "### Modified: Flaky pytest timeouts",
        "### Renamed: Rebase before merging",
        "### Removed: Old lesson about Python 2",
    ):
        assert heading in text
    assert "to\\-rename\\.md → \\.reliora/experiences/renamed\\.md" in text
    assert "**changed:** solution" in text
    assert "**feedback:** success" in text
    assert "Feedback on unchanged records" in text
    # Nothing a record says can become HTML, an image or a mention.
    assert "<img" not in text and "<script" not in text
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in text
    assert "@someone" not in text
    assert "@&#8203;someone" in text
    assert "![" not in text and "\\!\\[pixel\\]" in text


def test_text_lists_each_change(branch: Store, cli: Cli) -> None:
    done = cli("review", "--format", "text", "--head", "feature", "--base", "main")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    kinds = [line.split()[0] for line in lines[1:] if line[:1].isalpha()][:4]
    assert kinds == ["added", "modified", "renamed", "removed"]
    assert "feedback on keep-me:" in done.stdout
    assert ".reliora/experiences/to-rename.md -> .reliora/experiences/renamed.md" in done.stdout
    assert "changed: solution" in done.stdout


def test_duplicates_are_sought_in_the_base_store_and_among_changes(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    repo = store.root
    write_record("docker-cache", "Docker layer caching in CI", tags=["docker", "ci"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write_record("docker-again", "Docker layer caching in CI builds", tags=["docker", "ci"])
    write_record("pytest-one", "Pytest fixtures leak temp folders", tags=["pytest"])
    write_record("pytest-two", "Pytest fixtures leak temp folders again", tags=["pytest"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    document = json.loads(cli("review", "-f", "json").stdout)
    warned = {r["id"]: [w["id"] for w in r["warnings"]] for r in document["records"]}
    assert warned["docker-again"] == ["docker-cache"]
    assert warned["pytest-one"] == ["pytest-two"]
    assert warned["pytest-two"] == ["pytest-one"]


def test_invalid_records_are_reported(store: Store, cli: Cli, write_record: RecordMaker) -> None:
    repo = store.root
    write_record("fine", "A fine record")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    write_record("broken", "No solution here", body="## Problems\n- it broke\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    document = json.loads(cli("review", "-f", "json").stdout)
    assert document["ok"] is False
    [record] = document["records"]
    assert any("Solution" in p["message"] for p in record["problems"])
    assert "**invalid:**" in cli("review").stdout


def test_unknown_ref_is_a_usage_error(store: Store, cli: Cli, repo: Path) -> None:
    (repo / "x").write_text("x", encoding="utf-8")
    git(repo, "add", "x")
    git(repo, "commit", "-q", "-m", "x")
    done = cli("review", "--base", "no-such-branch")
    assert done.returncode == 2
    assert done.stderr.startswith("reliora: error:") and "no-such-branch" in done.stderr
    assert cli("review", "--format", "yaml").returncode == 2


def test_markdown_is_truncated_under_the_limit() -> None:
    changes = [
        RecordChange(
            "added",
            f".reliora/experiences/r{i}.md",
            None,
            f"r{i}",
            "x" * 200,
            record_problems=["y" * 290] * 5,
        )
        for i in range(400)
    ]
    review = Review(Side("main", "a" * 40), Side("HEAD", "b" * 40), changes, {}, {}, [])
    text = to_markdown(review)
    assert len(text.encode("utf-8")) < 60_000
    assert "more section(s) not shown" in text


def test_md_escapes_everything_active() -> None:
    assert md("<b>&amp;</b>") == "&lt;b&gt;&amp;amp;&lt;/b&gt;"
    assert md("@team") == "@&#8203;team"
    assert md("![a](b)") == "\\!\\[a\\]\\(b\\)"
    assert md("line\nbreak\x1b[31m") == "line break\\[31m"


def test_long_text_is_cut_after_a_whole_word() -> None:
    sentence = "retry the flaky upload with exponential backoff " * 10
    for cut in (plain(sentence, 60), md(sentence, 60)):
        assert len(cut) <= 60 and cut.endswith("…")
        assert cut[:-1].rstrip() in sentence and sentence[len(cut[:-1].rstrip())] == " "
    # A single word longer than the room (a URL) is cut within, not dropped.
    url = "https://example.com/" + "a" * 100
    assert plain(url, 40) == url[:39] + "…"


def test_review_of_a_store_below_the_top(repo: Path, cli: Cli) -> None:
    sub = repo / "service"
    assert cli("init", "--repo", str(sub)).returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    record = sub / ".reliora" / "experiences" / "one.md"
    record.write_text(
        "---\nid: one\ntitle: One lesson\n---\n## Task\nt\n\n## Solution\ns\n", encoding="utf-8"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    document = json.loads(cli("review", "-f", "json", cwd=sub).stdout)
    assert [(r["kind"], r["locator"]) for r in document["records"]] == [
        ("added", ".reliora/experiences/one.md")
    ]
