"""`update` and `retire` (SPEC.md §11): records change in place, nothing is lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reliora_git.operations.lessons import lifecycle
from reliora_git.records.errors import RelioraError
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker

BODY = """## Task
Keep CI green

## Problems
- pytest-timeout killed slow tests

## Solution
Raise the timeout for slow tests only.

## Notes from the team
Keep this section.
"""


@pytest.fixture
def hand_written(store: Store, write_record: RecordMaker) -> Path:
    return write_record(
        "flaky-ci", "Flaky CI", BODY, tags=["ci"], owner="platform-team", created="2026-01-02"
    )


def test_update_replaces_appends_and_keeps_what_it_does_not_know(
    hand_written: Path, cli: Cli
) -> None:
    done = cli(
        "update",
        "flaky",
        "--solution",
        "Mark slow tests and give them their own timeout.",
        "--add-problem",
        "the timeout hid a deadlock",
        "--add-warning",
        "not needed on pytest 8.2+",
        "--tag",
        "ci",
        "--tag",
        "pytest",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "updated flaky-ci in .reliora/experiences/flaky-ci.md\n"
    shown = cli.json("show", "flaky-ci")
    assert shown["solution"] == "Mark slow tests and give them their own timeout."
    assert shown["problems"] == ["pytest-timeout killed slow tests", "the timeout hid a deadlock"]
    assert shown["warnings"] == ["not needed on pytest 8.2+"]
    assert shown["tags"] == ["ci", "pytest"]
    assert shown["created"] == "2026-01-02"
    assert shown["updated"]  # today, UTC
    text = hand_written.read_text()
    assert "owner: platform-team" in text  # an unknown key is kept
    assert "## Notes from the team\nKeep this section." in text  # and an unknown section
    assert cli.json("check")["ok"]


def test_update_from_json_and_its_errors(hand_written: Path, cli: Cli) -> None:
    body = json.dumps({"title": "Flaky CI runners", "addFailedAttempts": ["retrying"]})
    done = cli("update", "flaky-ci", "--json", "-", input=body)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["id"] == "flaky-ci"
    shown = cli.json("show", "flaky-ci")
    assert (shown["title"], shown["failedAttempts"]) == ("Flaky CI runners", ["retrying"])
    for bad, message in (
        ({"id": "other"}, "unknown key 'id'"),
        ({"tags": "ci"}, "'tags' must be a list of strings"),
        ({"title": ""}, "title"),
    ):
        refused = cli("update", "flaky-ci", "--json", "-", input=json.dumps(bad))
        assert refused.returncode == 2
        assert message in refused.stdout
    nothing = cli("update", "flaky-ci")
    assert nothing.returncode == 2
    assert "nothing to change" in nothing.stderr


def test_update_refuses_a_secret_and_a_missing_record(hand_written: Path, cli: Cli) -> None:
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5b"
    before = hand_written.read_bytes()
    done = cli("update", "flaky-ci", "--add-warning", f"token {token}")
    assert done.returncode == 2
    assert "GitHub Token" in done.stderr
    assert hand_written.read_bytes() == before
    missing = cli("update", "no-such-record", "--title", "x")
    assert missing.returncode == 2
    assert "no experience with id" in missing.stderr


def test_a_file_changed_after_it_was_read_is_not_overwritten(
    store: Store, hand_written: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reliora_git.operations.lessons.lifecycle as module

    real = module.read_regular_file

    def read_then_someone_writes(path: Path, locator: str) -> bytes:
        data = real(path, locator)
        path.write_text(path.read_text() + "\n## Verification\nsomeone else's edit\n")
        return data

    monkeypatch.setattr(module, "read_regular_file", read_then_someone_writes)
    with pytest.raises(RelioraError, match="changed on disk after it was read"):
        lifecycle.update(store, "flaky-ci", lifecycle.Changes(replace={"title": "Mine"}))
    assert "someone else's edit" in hand_written.read_text()
    assert "title: Mine" not in hand_written.read_text()


def test_concurrent_updates_one_wins_the_other_is_told(hand_written: Path, cli: Cli) -> None:
    procs = [
        subprocess.Popen(
            [cli.exe, "update", "flaky-ci", "--add-warning", f"writer {n}"],
            cwd=cli.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(6)
    ]
    results = [(p.wait(), *p.communicate()) for p in procs]
    ok = [r for r in results if r[0] == 0]
    refused = [r for r in results if r[0] != 0]
    assert ok, results
    for code, _, err in refused:
        assert code == 2
        assert "is being changed by another command" in err or "changed on disk" in err
    warnings = cli.json("show", "flaky-ci")["warnings"]
    # Every update that said it succeeded is in the file; nothing half-written.
    assert len(warnings) == len(ok)
    assert cli.json("check")["ok"]
    assert not list(hand_written.parent.glob(".*.lock"))


def test_retire_sets_the_status_and_the_reason(hand_written: Path, cli: Cli) -> None:
    assert cli("retire", "flaky-ci", "--reason", "").returncode == 2
    done = cli("retire", "flaky-ci", "--reason", "fixed upstream in pytest-timeout 2.3")
    assert done.returncode == 0, done.stderr
    assert "retired_reason: fixed upstream in pytest-timeout 2.3" in hand_written.read_text()
    assert cli.json("search", "flaky")["results"] == []
    found = cli.json("search", "flaky", "--include-retired")["results"]
    assert [(r["id"], r["status"]) for r in found] == [("flaky-ci", "retired")]


def test_the_mcp_update_tool_refines_a_record(hand_written: Path, repo: Path, cli: Cli) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import document, reliora_mcp, run

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            done = await session.call_tool(
                "update", {"id": "flaky", "addWarnings": ["only on shared runners"]}
            )
            assert document(done)["id"] == "flaky-ci"
            shown = document(await session.call_tool("show", {"id": "flaky-ci"}))
            assert shown["warnings"] == ["only on shared runners"]
            bad = await session.call_tool("update", {"id": "flaky-ci"})
            assert bad.is_error
            assert bad.structured_content["error"]["code"] == "usage"  # type: ignore[index]

    run(scenario)


def test_a_superseded_record_is_derived_never_edited(
    store: Store, cli: Cli, hand_written: Path, write_record: RecordMaker
) -> None:
    before = hand_written.read_bytes()
    done = cli(
        "record",
        "--title",
        "Flaky CI, the real fix",
        "--task",
        "Keep CI green",
        "--solution",
        "Find the deadlock",
        "--supersedes",
        "flaky-ci",
    )
    assert done.returncode == 0, done.stderr
    assert hand_written.read_bytes() == before  # the old file is never edited
    new_id = cli.json("list")[0]["id"]
    assert cli.json("search", "flaky")["results"][0]["id"] == new_id
    assert all(r["id"] != "flaky-ci" for r in cli.json("search", "flaky")["results"])
    old = [r for r in cli.json("search", "flaky", "--include-retired")["results"]]
    by_id = {r["id"]: r for r in old}
    assert by_id["flaky-ci"]["status"] == "superseded"
    assert by_id["flaky-ci"]["supersededBy"] == [new_id]
    assert by_id[new_id]["supersededBy"] == []
    shown = cli.json("show", "flaky-ci")
    assert (shown["status"], shown["supersededBy"]) == ("superseded", [new_id])
    assert f"superseded by: {new_id}" in cli("show", "flaky-ci").stdout
    # A retired record names nothing: its supersedes list does not count.
    assert cli("retire", new_id, "--reason", "wrong after all").returncode == 0
    assert cli.json("show", "flaky-ci")["supersededBy"] == []


def test_check_warns_on_unknown_ids_self_and_cycles(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("a", "Record a", supersedes=["b"])
    write_record("b", "Record b", supersedes=["a"])
    write_record("c", "Record c", supersedes=["c", "gone"])
    report = cli.json("check")
    assert report["ok"]  # warnings never block
    messages = {
        f["locator"].rsplit("/", 1)[1]: [p["message"] for p in f["problems"]]
        for f in report["files"]
    }
    # Once per group of records that supersede one another, on its smallest id.
    assert messages["a.md"] == ["is part of a supersedes cycle: a → b → a"]
    assert "b.md" not in messages
    assert messages["c.md"] == ["supersedes itself", "supersedes 'gone', which no record has"]


def _editor(tmp_path: Path, python: str) -> str:
    """An $EDITOR that runs ``python`` (code editing the file in sys.argv[1])."""
    script = tmp_path / "editor.py"
    script.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n" + python)
    return f"{sys.executable} {script}"


def test_edit_saves_a_valid_draft_and_keeps_an_invalid_one(
    store: Store, hand_written: Path, cli: Cli, tmp_path: Path
) -> None:
    fix = "p.write_text(p.read_text().replace('Raise the timeout', 'Lower the timeout'))\n"
    done = cli("edit", "flaky", env={"EDITOR": _editor(tmp_path, fix)})
    assert done.returncode == 0, done.stderr
    assert "Lower the timeout for slow tests only." in hand_written.read_text()
    assert "## Notes from the team" in hand_written.read_text()
    assert not list((store.path / ".drafts").glob("*.md"))

    before = hand_written.read_bytes()
    broken = "p.write_text(p.read_text().replace('id: flaky-ci', 'id: another'))\n"
    refused = cli("edit", "flaky-ci", env={"EDITOR": _editor(tmp_path, broken)})
    assert refused.returncode == 2
    assert "the id cannot change" in refused.stderr
    assert "your draft is kept at .reliora/.drafts/edit-flaky-ci-" in refused.stderr
    assert hand_written.read_bytes() == before
    (draft,) = (store.path / ".drafts").glob("edit-flaky-ci-*.md")
    assert "id: another" in draft.read_text()

    unchanged = cli("edit", "flaky-ci", env={"EDITOR": _editor(tmp_path, "pass\n")})
    assert (unchanged.returncode, unchanged.stdout) == (0, "no change to flaky-ci\n")
