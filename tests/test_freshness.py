"""Freshness and provenance from git history (SPEC.md §12), on real repositories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from reliora_git.operations.freshness import safe_path
from reliora_git.storage.store import Store
from tests.conftest import Cli, git


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def _lesson(cli: Cli, *paths: str, title: str = "Retry backoff in billing") -> str:
    args = [arg for path in paths for arg in ("--path", path)]
    done = cli("record", "--title", title, "--task", "t", "--solution", "s", *args)
    assert done.returncode == 0, done.stderr
    return str(done.stdout.split()[1])


def _freshness(cli: Cli, query: str = "retry") -> dict[str, object]:
    return cli.json("search", query)["results"][0]["freshness"]  # type: ignore[no-any-return]


def _code(repo: Path, name: str, text: str) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_record_goes_stale_when_its_code_changes_after_it(
    repo: Path, store: Store, cli: Cli
) -> None:
    _code(repo, "src/billing/retry.py", "v1\n")
    _code(repo, "src/billing/util.py", "v1\n")
    _commit(repo, "code")
    record_id = _lesson(cli, "src/billing/retry.py", "src/billing/")
    # Not committed yet: measured from now.
    assert _freshness(cli)["state"] == "fresh"
    _commit(repo, "record")
    assert _freshness(cli) == {
        "state": "fresh",
        "changedPaths": [],
        "missingPaths": [],
        "commitsSince": 0,
    }
    _code(repo, "src/billing/util.py", "v2\n")
    _commit(repo, "util")
    _code(repo, "src/billing/retry.py", "v2\n")
    _commit(repo, "retry")
    _code(repo, "README", "unrelated\n")
    _commit(repo, "readme")
    assert _freshness(cli) == {
        "state": "stale",
        "changedPaths": ["src/billing/retry.py", "src/billing/"],  # in the record's order
        "missingPaths": [],
        "commitsSince": 2,
    }
    text = cli("search", "retry").stdout
    assert "stale: src/billing/retry.py, src/billing/ changed in 2 commits since" in text
    # Refreshing the record (a commit that changes it) makes it fresh again.
    assert cli("update", record_id, "--add-warning", "checked against v2").returncode == 0
    _commit(repo, "refresh")
    assert _freshness(cli)["state"] == "fresh"


def test_a_missing_path_is_stale_and_hostile_paths_never_reach_git(
    repo: Path, store: Store, cli: Cli, tmp_path: Path
) -> None:
    _code(repo, "src/a.py", "a\n")
    _commit(repo, "code")
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    # Written by hand, as a pull request could. (`..` and absolute paths make a record
    # invalid, so it is never searched; history.safe_path keeps them from git anyway.)
    paths = ["src/a.py", "src/gone.py", "--output=x", "*.py", "src/[ab].py"]
    (store.experiences / "retry.md").write_text(
        "---\nid: retry\ntitle: Retry backoff in billing\npaths: "
        + json.dumps(paths)
        + "\n---\n## Task\nt\n\n## Solution\ns\n"
    )
    _commit(repo, "record")
    found = _freshness(cli)
    assert found["state"] == "stale"
    # A glob is a literal path here: `*.py` does not match src/a.py.
    assert found["missingPaths"] == ["src/gone.py", "--output=x", "*.py", "src/[ab].py"]
    assert not (repo / "x").exists()
    assert not safe_path("../outside.txt") and not safe_path(str(outside))
    assert safe_path("src/a.py") and safe_path("docs/")


def test_unknown_outside_git_and_without_paths(tmp_path: Path) -> None:
    cli = Cli(tmp_path)
    assert cli("init").returncode == 0
    _lesson(cli, "src/a.py")
    assert _freshness(cli)["state"] == "unknown"
    assert cli.json("show", "retry")["history"] is None


def test_without_paths_the_state_is_unknown(repo: Path, store: Store, cli: Cli) -> None:
    _lesson(cli)
    _commit(repo, "record")
    assert _freshness(cli) == {
        "state": "unknown",
        "changedPaths": [],
        "missingPaths": [],
        "commitsSince": 0,
    }


def test_show_gives_provenance_and_freshness(repo: Path, store: Store, cli: Cli) -> None:
    _code(repo, "src/a.py", "a\n")
    _commit(repo, "code")
    record_id = _lesson(cli, "src/a.py")
    _commit(repo, "add the lesson")
    assert cli("update", record_id, "--add-warning", "w").returncode == 0
    _commit(repo, "refine the lesson")
    shown = cli.json("show", record_id)
    history = shown["history"]
    assert history["commits"] == 2
    assert history["added"]["subject"] == "add the lesson"
    assert history["lastChanged"]["subject"] == "refine the lesson"
    assert shown["freshness"]["state"] == "fresh"
    assert "history: added " in cli("show", record_id).stdout


def test_a_shallow_clone_says_unknown_rather_than_guess(
    repo: Path, store: Store, cli: Cli, tmp_path: Path
) -> None:
    _code(repo, "src/a.py", "a\n")
    _commit(repo, "code")
    _lesson(cli, "src/a.py")
    _commit(repo, "record")
    for n in range(3):
        _code(repo, "src/a.py", f"v{n}\n")
        _commit(repo, f"change {n}")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    assert _freshness(Cli(clone))["state"] == "unknown"
    assert _freshness(cli)["state"] == "stale"  # the full history knows


def test_a_linked_worktree_has_the_same_history(
    repo: Path, store: Store, cli: Cli, tmp_path: Path
) -> None:
    _code(repo, "src/a.py", "a\n")
    _commit(repo, "code")
    _lesson(cli, "src/a.py")
    _commit(repo, "record")
    _code(repo, "src/a.py", "b\n")
    _commit(repo, "change")
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", str(tree))
    assert _freshness(Cli(tree)) == _freshness(cli)
    assert _freshness(cli)["state"] == "stale"


def test_stale_lists_the_commits(repo: Path, store: Store, cli: Cli) -> None:
    _code(repo, "src/a.py", "a\n")
    _commit(repo, "code")
    _lesson(cli, "src/a.py")
    _lesson(cli, "docs/", title="Docs folder lesson")
    _commit(repo, "records")
    _code(repo, "src/a.py", "b\n")
    _commit(repo, "rework a")
    done = cli("stale", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["checked"] == 2
    stale = {item["title"]: item for item in report["stale"]}
    assert set(stale) == {"Retry backoff in billing", "Docs folder lesson"}  # docs/ is missing
    assert [c["subject"] for c in stale["Retry backoff in billing"]["commits"]] == ["rework a"]
    text = cli("stale").stdout
    assert "rework a" in text and "2 of 2 record(s) with paths are stale" in text
    assert (
        subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True).stdout
        == b""
    )


def test_record_paths_from_staged_and_about(repo: Path, store: Store, cli: Cli) -> None:
    _code(repo, "src/billing/retry.py", "v1\n")
    _code(repo, "docs/notes.md", "n\n")
    git(repo, "add", "src", "docs")
    done = cli(
        "record",
        "--title",
        "Retry backoff",
        "--task",
        "t",
        "--solution",
        "s",
        "--paths-from-staged",
        "--path",
        "src/",
    )
    assert done.returncode == 0, done.stderr
    record_id = done.stdout.split()[1]
    assert cli.json("show", record_id)["paths"] == ["src/", "docs/notes.md", "src/billing/retry.py"]
    _commit(repo, "code and lesson")
    for asked in (["src/billing/retry.py"], ["src/billing/"], [str(repo / "src")]):
        found = cli.json("about", *asked)
        assert [r["id"] for r in found["results"]] == [record_id], asked
        assert found["results"][0]["freshness"]["state"] == "fresh"
    assert cli.json("about", "lib/other.py")["results"] == []
    assert "No experiences are about lib/other.py." in cli("about", "lib/other.py").stdout
    _code(repo, "src/billing/retry.py", "v2\n")
    _commit(repo, "rework")
    assert "[stale]" in cli("about", "src/billing/retry.py").stdout


def test_review_names_the_lessons_about_the_code_it_touches(
    repo: Path, store: Store, cli: Cli
) -> None:
    _code(repo, "src/billing/retry.py", "v1\n")
    _commit(repo, "code")
    record_id = _lesson(cli, "src/billing/")
    _commit(repo, "lesson")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "feature")
    _code(repo, "src/billing/retry.py", "v2\n")
    _code(repo, "README", "r\n")
    _commit(repo, "rework retry")
    data = json.loads(cli("review", "--base", "main", "--format", "json").stdout)
    assert data["aboutChangedCode"] == [
        {
            "id": record_id,
            "title": "Retry backoff in billing",
            "locator": f".reliora/experiences/{record_id}.md",
            "status": "active",
            "supersededBy": [],
            "files": ["src/billing/retry.py"],
        }
    ]
    markdown = cli("review", "--base", "main").stdout
    assert "### Experiences about code this change touches" in markdown
    assert "src/billing/retry\\.py" in markdown


def test_a_pure_rename_raises_no_duplicate_warning_in_review(
    repo: Path, store: Store, cli: Cli
) -> None:
    first = _lesson(cli, title="Deploy rollback plan for ops")
    _lesson(cli, title="Deploy rollback plan for ops teams")
    _commit(repo, "two similar lessons")
    git(repo, "branch", "-M", "main")
    git(repo, "checkout", "-qb", "rename")
    git(repo, "mv", f".reliora/experiences/{first}.md", ".reliora/experiences/renamed.md")
    _commit(repo, "rename")
    data = json.loads(cli("review", "--base", "main", "--format", "json").stdout)
    (change,) = data["records"]
    assert (change["kind"], change["warnings"]) == ("renamed", [])


def test_the_mcp_about_tool(repo: Path, store: Store, cli: Cli) -> None:
    import pytest

    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import document, reliora_mcp, run

    _code(repo, "src/a.py", "a\n")
    _commit(repo, "code")
    record_id = _lesson(cli, "src/a.py")
    _commit(repo, "lesson")

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            found = document(await session.call_tool("about", {"paths": ["src/a.py"]}))
            assert [r["id"] for r in found["results"]] == [record_id]
            assert found["results"][0]["freshness"]["state"] == "fresh"

    run(scenario)
