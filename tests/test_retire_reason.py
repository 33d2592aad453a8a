"""A retired lesson's reason (`retire --reason`) and its supersession are shown where the
lesson is: `show` (text and JSON) and `review` (all three formats)."""

from __future__ import annotations

import json
from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

REASON = "fixed upstream in pytest-timeout 2.3"


def test_show_and_review_give_the_retire_reason_and_the_supersession(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli
) -> None:
    write_record("flaky-timeouts", "Flaky pytest timeouts on CI")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "a lesson")
    git(repo, "checkout", "-q", "-b", "feature")
    done = cli("retire", "flaky-timeouts", "--reason", REASON)
    assert done.returncode == 0, done.stderr
    write_record("timeouts-v2", "Pytest timeouts after 2.3", supersedes=["flaky-timeouts"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "retire it")

    shown = cli("show", "flaky-timeouts")
    assert f"retired: {REASON}" in shown.stdout
    assert "superseded by: timeouts-v2" in shown.stdout
    document = cli.json("show", "flaky-timeouts")
    assert document["retiredReason"] == REASON
    assert "retiredReason" not in cli.json("show", "timeouts-v2")

    review = json.loads(cli("review", "--base", "main", "--format", "json").stdout)
    by_id = {change["id"]: change for change in review["records"]}
    assert by_id["flaky-timeouts"]["retiredReason"] == REASON
    assert by_id["timeouts-v2"]["supersedes"] == ["flaky-timeouts"]
    assert by_id["timeouts-v2"]["retiredReason"] is None
    text = cli("review", "--base", "main", "--format", "text").stdout
    assert f"retired: {REASON}" in text and "supersedes: flaky-timeouts" in text
    markdown = cli("review", "--base", "main", "--format", "markdown").stdout
    # Markdown escapes record text (a reason cannot open a link or a heading).
    assert "- **retired:** fixed upstream in pytest\\-timeout 2\\.3" in markdown
    assert "- **supersedes:** flaky\\-timeouts" in markdown
