"""`reliora check --staged` and the installed hook, driven by real `git commit`s."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reliora_git.storage.gitfiles import EXPERIENCES, is_store_file
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

ORIGINAL = """---
id: flaky-pytest-timeouts
title: Flaky pytest timeouts on CI runners
tags: [pytest, ci, timeouts]
project_context: python
---
## Problems
- pytest-timeout killed slow tests at random on shared runners

## Solution
Raise the per-test timeout for the git fixture tests only.
"""

NEAR_DUPLICATE = """---
id: pytest-timeouts-again
title: Flaky pytest timeouts on CI runners again
tags: [pytest, ci, timeouts]
project_context: python
---
## Problems
- pytest-timeout killed slow tests at random on shared runners

## Solution
Give the slow tests a longer timeout.
"""

EXACT_COPY = ORIGINAL.replace("id: flaky-pytest-timeouts", "id: pytest-timeouts-again")

#: How the hook names NEAR_DUPLICATE beside its original. A store of two records is young:
#: the idf prior (N + 21, docs/ranking.md) still weighs the shared words, so a near copy
#: is a likely duplicate (before the prior every shared token had idf 0: only "related").
LIKELY = "likely duplicate of existing experience"

UNRELATED = """---
id: pytest-timeouts-again
title: Docker layer caching in builds
tags: [docker]
project_context: containers
---
## Problems
- every build downloads the base image

## Solution
Cache the layers between jobs.
"""

INVALID = """---
id: pytest-timeouts-again
title: A record without a solution
---
## Problems
- this record has no solution section
"""

MODES = ("commit", "commit-a", "commit-path")


def commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "commit", "-m", "change", *args], cwd=repo, capture_output=True, text=True
    )


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def hooked(store: Store, cli: Cli) -> Store:
    """A store with the original record committed and the hook installed."""
    (store.experiences / "flaky-pytest-timeouts.md").write_text(ORIGINAL, encoding="utf-8")
    done = cli("hooks", "install")
    assert done.returncode == 0, done.stderr
    git(store.root, "add", "-A")
    git(store.root, "commit", "-q", "-m", "first")
    return store


def prepare(store: Store, mode: str, text: str) -> tuple[Path, list[str]]:
    """Put ``text`` where ``mode`` will commit it; returns the file and git commit's arguments."""
    path = store.experiences / "pytest-timeouts-again.md"
    if mode == "commit":
        path.write_text(text, encoding="utf-8")
        git(store.root, "add", str(path))
        return path, []
    # -a and <paths> only take tracked files: commit an unrelated version first, then edit it.
    path.write_text(UNRELATED, encoding="utf-8")
    git(store.root, "add", str(path))
    git(store.root, "commit", "-q", "-m", "unrelated")
    path.write_text(text, encoding="utf-8")
    return path, (["-a"] if mode == "commit-a" else ["--", str(path)])


@pytest.mark.parametrize("mode", MODES)
def test_a_duplicate_is_a_warning_and_commits(hooked: Store, mode: str) -> None:
    repo = hooked.root
    # An exact copy under another id: a likely duplicate, which a modified record (the
    # -a and <paths> modes) is still warned about.
    _, args = prepare(hooked, mode, EXACT_COPY)
    before = head(repo)
    done = commit(repo, *args)
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert "likely duplicate of existing experience flaky-pytest-timeouts" in output
    assert head(repo) != before


@pytest.mark.parametrize("mode", MODES)
def test_invalid_record_is_refused_and_nothing_staged_is_lost(hooked: Store, mode: str) -> None:
    repo = hooked.root
    path, args = prepare(hooked, mode, INVALID)
    before = head(repo)
    status = git(repo, "status", "--porcelain")
    staged = git(repo, "diff", "--cached")
    done = commit(repo, *args)
    assert done.returncode != 0
    assert "pytest-timeouts-again.md" in done.stdout + done.stderr
    assert "Solution" in done.stdout + done.stderr
    assert head(repo) == before
    assert git(repo, "status", "--porcelain") == status
    assert git(repo, "diff", "--cached") == staged
    assert path.read_text(encoding="utf-8") == INVALID


def test_first_commit_checks_staged_records_against_each_other(store: Store, cli: Cli) -> None:
    repo = store.root
    assert cli("hooks", "install").returncode == 0
    (store.experiences / "flaky-pytest-timeouts.md").write_text(ORIGINAL, encoding="utf-8")
    (store.experiences / "pytest-timeouts-again.md").write_text(NEAR_DUPLICATE, encoding="utf-8")
    git(repo, "add", "-A")
    done = commit(repo)
    assert done.returncode == 0, done.stderr
    assert LIKELY in done.stdout + done.stderr
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"


def test_first_commit_refuses_an_invalid_record(store: Store, cli: Cli) -> None:
    assert cli("hooks", "install").returncode == 0
    (store.experiences / "bad.md").write_text(INVALID, encoding="utf-8")
    git(store.root, "add", "-A")
    done = commit(store.root)
    assert done.returncode != 0
    assert "bad.md" in done.stdout + done.stderr
    assert git(store.root, "diff", "--cached", "--name-only").split() != []


def test_linked_worktree_runs_the_hook(hooked: Store, tmp_path: Path) -> None:
    worktree = tmp_path / "linked"
    git(hooked.root, "worktree", "add", "-q", "-b", "feature", str(worktree))
    experiences = worktree / ".reliora" / "experiences"
    (experiences / "pytest-timeouts-again.md").write_text(NEAR_DUPLICATE, encoding="utf-8")
    git(worktree, "add", "-A")
    done = commit(worktree)
    assert done.returncode == 0, done.stderr
    assert LIKELY in done.stdout + done.stderr

    (experiences / "bad.md").write_text(INVALID.replace("pytest-timeouts-again", "bad"), "utf-8")
    git(worktree, "add", "-A")
    refused = commit(worktree)
    assert refused.returncode != 0
    assert "bad.md" in refused.stdout + refused.stderr


def test_partial_staging_checks_the_staged_text(hooked: Store, cli: Cli) -> None:
    path = hooked.experiences / "pytest-timeouts-again.md"
    path.write_text(UNRELATED, encoding="utf-8")
    git(hooked.root, "add", str(path))
    path.write_text(INVALID, encoding="utf-8")  # the working tree is invalid, the index is not
    assert cli("check", "--staged").returncode == 0
    assert cli("check", str(path)).returncode == 1

    path.write_text(INVALID, encoding="utf-8")
    git(hooked.root, "add", str(path))
    path.write_text(UNRELATED, encoding="utf-8")  # now the index is invalid, the tree is not
    assert cli("check", "--staged").returncode == 1
    assert cli("check", str(path)).returncode == 0


def test_staged_json_lists_warnings_and_problems(hooked: Store, cli: Cli) -> None:
    (hooked.experiences / "pytest-timeouts-again.md").write_text(NEAR_DUPLICATE, "utf-8")
    git(hooked.root, "add", "-A")
    document = cli.json("check", "--staged")
    assert document["staged"] is True
    assert document["checked"] == 1
    [file] = document["files"]
    assert file["locator"] == ".reliora/experiences/pytest-timeouts-again.md"
    assert file["warnings"][0]["code"] == "SIMILAR_EXPERIENCE_FOUND"
    assert file["warnings"][0]["id"] == "flaky-pytest-timeouts"


def test_deleted_records_are_ignored_and_renamed_ones_checked(hooked: Store, cli: Cli) -> None:
    git(hooked.root, "rm", "-q", ".reliora/experiences/flaky-pytest-timeouts.md")
    done = cli("check", "--staged", "--json")
    assert done.returncode == 0, done.stderr
    assert '"checked": 0' in done.stdout
    git(hooked.root, "reset", "-q", "--hard")

    git(
        hooked.root,
        "mv",
        ".reliora/experiences/flaky-pytest-timeouts.md",
        ".reliora/experiences/renamed.md",
    )
    document = cli.json("check", "--staged")
    assert document["checked"] == 1


def test_nothing_staged_is_silent(store: Store, cli: Cli) -> None:
    done = cli("check", "--staged")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_config_can_turn_off_blocking_and_duplicates(hooked: Store, cli: Cli) -> None:
    (hooked.path / "config.toml").write_text(
        "block_on_invalid = false\nhook_duplicates = false\n", encoding="utf-8"
    )
    (hooked.experiences / "pytest-timeouts-again.md").write_text(NEAR_DUPLICATE, "utf-8")
    (hooked.experiences / "bad.md").write_text(
        INVALID.replace("pytest-timeouts-again", "bad"), "utf-8"
    )
    git(hooked.root, "add", "-A")
    done = cli("check", "--staged")
    assert done.returncode == 0
    assert "flaky-pytest-timeouts" not in done.stdout + done.stderr
    assert "bad.md" in done.stdout


def test_a_conflicted_record_is_an_error(hooked: Store, cli: Cli) -> None:
    repo = hooked.root
    path = hooked.experiences / "flaky-pytest-timeouts.md"
    git(repo, "checkout", "-q", "-b", "other")
    path.write_text(ORIGINAL.replace("only.", "only, on the other branch."), "utf-8")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    path.write_text(ORIGINAL.replace("only.", "only, on main."), "utf-8")
    git(repo, "commit", "-q", "-am", "main")
    merge = subprocess.run(["git", "merge", "other"], cwd=repo, capture_output=True, text=True)
    assert merge.returncode != 0
    done = cli("check", "--staged")
    assert done.returncode == 1
    assert "flaky-pytest-timeouts.md" in done.stdout
    assert "conflict" in done.stdout


def test_outside_git_is_a_usage_error(tmp_path: Path, cli: Cli) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    done = cli("check", "--staged", cwd=folder)
    assert done.returncode == 2
    assert done.stderr.startswith("reliora: error:")
    assert "Traceback" not in done.stderr


def test_staged_index_is_never_modified(hooked: Store, cli: Cli, write_record: RecordMaker) -> None:
    write_record("one-more", "Something else entirely")
    git(hooked.root, "add", "-A")
    index = (hooked.root / ".git" / "index").read_bytes()
    assert cli("check", "--staged").returncode == 0
    assert (hooked.root / ".git" / "index").read_bytes() == index


def test_store_below_the_top_with_a_relative_index_file(repo: Path, cli: Cli) -> None:
    """git commit hands hooks GIT_INDEX_FILE=.git/index: relative to the top, not to cwd."""
    sub = repo / "service"
    assert cli("init", "--repo", str(sub)).returncode == 0
    experiences = sub / ".reliora" / "experiences"
    (experiences / "flaky-pytest-timeouts.md").write_text(ORIGINAL, encoding="utf-8")
    (experiences / "pytest-timeouts-again.md").write_text(NEAR_DUPLICATE, encoding="utf-8")
    git(repo, "add", "-A")
    done = cli("check", "--staged", "--json", cwd=sub, env={"GIT_INDEX_FILE": ".git/index"})
    assert done.returncode == 0, done.stderr
    assert '"checked": 2' in done.stdout
    assert '".reliora/experiences/pytest-timeouts-again.md"' in done.stdout
    assert "SIMILAR_EXPERIENCE_FOUND" in done.stdout


@pytest.mark.parametrize(
    ("locator", "expected"),
    [
        (".reliora/experiences/a.md", True),
        (".reliora/experiences/topic/a.md", True),
        (".reliora/experiences/topic/a.b.md", True),
        (".reliora/experiences/.a.md", False),
        (".reliora/experiences/.drafts/a.md", False),
        (".reliora/experiences/topic/.hidden/a.md", False),
        (".reliora/experiences/a.txt", False),
        (".reliora/feedback/a.md", False),
        (".reliora/experiences-old/a.md", False),
    ],
)
def test_store_files_are_the_markdown_files_the_working_tree_walk_reads(
    locator: str, expected: bool
) -> None:
    assert is_store_file(locator, EXPERIENCES) is expected
