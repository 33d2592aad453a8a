"""Feedback is one new file per event, so branches that add it merge with plain `git merge`."""

from __future__ import annotations

import subprocess

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git


def test_two_branches_adding_feedback_and_records_merge_cleanly(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    repo = store.root
    write_record("flaky-pytest", "Flaky pytest timeouts on CI", tags=["pytest"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")

    for branch, outcome, title in (
        ("left", "success", "Docker layer caching in CI"),
        ("right", "failure", "Rebasing long-lived branches"),
    ):
        git(repo, "checkout", "-q", "-b", branch, "main")
        for _ in range(2):
            done = cli("feedback", "flaky-pytest", outcome, "--note", f"from {branch}")
            assert done.returncode == 0, done.stderr
        saved = cli("record", "--title", title, "--problem", "p", "--solution", "s")
        assert saved.returncode == 0, saved.stderr
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", branch)

    git(repo, "checkout", "-q", "left")
    merged = subprocess.run(
        ["git", "merge", "--no-edit", "right"], cwd=repo, capture_output=True, text=True
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == ""
    assert git(repo, "status", "--porcelain") == ""

    hit = cli.json("search", "flaky pytest timeouts")["results"][0]
    assert hit["id"] == "flaky-pytest"
    assert (hit["feedback"]["success"], hit["feedback"]["failure"]) == (2, 2)
    assert hit["feedback"]["adjustment"] == 0.0
    titles = {r["title"] for r in cli.json("list")}
    assert {"Docker layer caching in CI", "Rebasing long-lived branches"} <= titles
    assert cli("check").returncode == 0
