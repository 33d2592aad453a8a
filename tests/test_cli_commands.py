"""record, list, show and check through the installed executable: inputs, outputs, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker

RECORD_FILE = """---
title: Chained git hooks keep the old hook
tags: [git, hooks]
---

## Problems
- installing a hook replaced the team's existing pre-commit hook

## Solution
Move the old hook aside and call it first.
"""


def test_record_from_flags_prints_id_and_warns_about_a_near_duplicate(
    cli: Cli, store: Store
) -> None:
    args = [
        "record",
        "--title",
        "Flaky pytest timeouts on CI",
        "--tag",
        "pytest",
        "--problem",
        "pytest-timeout killed slow tests",
        "--solution",
        "raise the timeout",
        "--project-context",
        "python",
    ]
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("saved flaky-pytest-timeouts-on-ci-")
    second = cli(*args)
    assert second.returncode == 0
    assert "likely duplicate: flaky-pytest-timeouts-on-ci-" in second.stderr
    assert len(list(store.experiences.glob("*.md"))) == 2  # a warning never stops a save


def test_record_from_file_and_from_editor(cli: Cli, store: Store, tmp_path: Path) -> None:
    source = tmp_path / "draft.md"
    source.write_text(RECORD_FILE)
    done = cli("record", "--from-file", str(source))
    assert done.returncode == 0, done.stderr
    saved = next(store.experiences.glob("chained-git-hooks-*.md")).read_text()
    assert "Move the old hook aside" in saved

    edited = tmp_path / "edited.md"
    edited.write_text(RECORD_FILE.replace("Chained", "Editor-written chained"))
    done = cli("record", "--edit", env={"EDITOR": f"cp {edited}", "VISUAL": ""})
    assert done.returncode == 0, done.stderr
    assert list(store.experiences.glob("editor-written-chained-*.md"))
    assert not list((store.path / ".drafts").glob("*.md"))  # the draft is gone once saved


def test_an_invalid_editor_draft_is_kept(cli: Cli, store: Store, tmp_path: Path) -> None:
    broken = tmp_path / "broken.md"
    broken.write_text("---\ntitle: No solution yet\n---\n## Task\nsomething\n")
    done = cli("record", "--edit", env={"EDITOR": f"cp {broken}", "VISUAL": ""})
    assert done.returncode == 2
    assert "needs a '## Solution' section" in done.stderr
    assert "draft is kept" in done.stderr
    assert len(list((store.path / ".drafts").glob("*.md"))) == 1


def test_record_rejects_invalid_input_with_exit_2(cli: Cli, store: Store) -> None:
    missing = cli("record", "--title", "Only a title")
    assert missing.returncode == 2
    assert "not valid" in missing.stderr and "Traceback" not in missing.stderr
    bad_json = cli("record", "--json", "-", input="{not json")
    assert bad_json.returncode == 2
    assert json.loads(bad_json.stdout)["error"]["code"] == "invalid_input"
    assert list(store.experiences.glob("*.md")) == []


def test_list_is_newest_first_and_filters_by_tag(cli: Cli, write_record: RecordMaker) -> None:
    write_record("older", "Older", created="2026-01-01", tags=["git"])
    write_record("newer", "Newer", created="2026-06-01", tags=["python"])
    assert [r["id"] for r in cli.json("list")] == ["newer", "older"]
    assert [r["id"] for r in cli.json("list", "--tag", "GIT")] == ["older"]
    text = cli("list").stdout
    assert text.index("newer") < text.index("older")


def test_show_accepts_a_unique_prefix_and_explains_an_ambiguous_one(
    cli: Cli, write_record: RecordMaker
) -> None:
    write_record("deploy-rollback", "Rollback")
    write_record("deploy-canary", "Canary")
    assert cli.json("show", "deploy-r")["id"] == "deploy-rollback"
    ambiguous = cli("show", "deploy")
    assert ambiguous.returncode == 2
    assert "deploy-canary, deploy-rollback" in ambiguous.stderr
    shown = cli("show", "deploy-c")
    assert "Canary" in shown.stdout and "feedback: none yet" in shown.stdout


def test_check_exits_1_for_an_invalid_record_and_names_file_and_line(
    cli: Cli, store: Store, write_record: RecordMaker
) -> None:
    write_record("good", "Good one")
    assert cli("check").returncode == 0
    (store.experiences / "broken.md").write_text("---\nid: broken\ntitle: [oops\n---\n")
    done = cli("check")
    assert done.returncode == 1
    assert ".reliora/experiences/broken.md:4: error: front matter is not valid YAML" in done.stdout
    report = cli("check", "--json")
    assert report.returncode == 1
    doc = json.loads(report.stdout)
    assert doc["ok"] is False and doc["checked"] == 2
    assert doc["files"][0]["locator"] == ".reliora/experiences/broken.md"
    # search still works and warns once about the skipped file
    found = cli("search", "good")
    assert found.returncode == 0 and "Good one" in found.stdout
    assert found.stderr.count("broken.md") == 1


def test_check_paths_reports_similar_records(cli: Cli, write_record: RecordMaker) -> None:
    write_record("one", "Flaky pytest timeouts on CI", tags=["pytest"], project_context="python")
    two = write_record(
        "two", "Flaky pytest timeouts on CI", tags=["pytest"], project_context="python"
    )
    done = cli("check", str(two), "--json")
    assert done.returncode == 0
    files = {f["locator"]: f for f in json.loads(done.stdout)["files"]}
    warnings = files[".reliora/experiences/two.md"]["warnings"]
    assert [(w["id"], w["matchLevel"]) for w in warnings] == [("one", "strong")]
