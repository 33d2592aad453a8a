"""A finding never undercuts itself: freshness is judged where the change under review starts.

A lesson about `src/pay.py` whose guard blocks `float(` catches a branch that edits
`src/pay.py`. The branch's own commit changed the lesson's code, but that commit is
what is being reviewed: `review` (and `guard test --rev`) judge at the merge base, the
hook at HEAD (the staged change is not in it), and `stale` on a branch at the merge
base with the default branch (`--base HEAD` counts the branch too). A lesson whose
code really changed before the change started is still called stale. Real branches,
the installed CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git
from tests.test_guards import lesson, write

STALE = "(stale: its code changed since it was recorded)"


def _commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, "--no-verify")


@pytest.fixture
def lessons(store: Store, cli: Cli) -> dict[str, str]:
    """main: `pay` (blocks `float(` in src/pay.py, fresh) and `ship` (warns on `sleep(` in
    src/ship.py, whose code main changed after it: stale before any branch)."""
    root = store.root
    write(root, "src/pay.py", "def pay(x):\n    return x\n")
    write(root, "src/ship.py", "def ship():\n    pass\n")
    _commit(root, "code")
    pay = lesson(
        cli, "--path", "src/pay.py", "--guard", r"float\(", "--block", title="Money is no float"
    )
    ship = lesson(cli, "--path", "src/ship.py", "--guard", r"sleep\(", title="Ship without sleep")
    _commit(root, "lessons")
    write(root, "src/ship.py", "def ship():\n    return 1\n")
    _commit(root, "ship returns")
    return {"pay": pay, "ship": ship}


def _repeat_both(root: Path) -> None:
    """The change under review: it edits both lessons' files, repeating both mistakes."""
    write(root, "src/pay.py", "def pay(x):\n    return float(x)\n")
    write(root, "src/ship.py", "def ship():\n    sleep(1)\n    return 1\n")


def test_review_judges_at_the_merge_base_not_at_the_branch(
    store: Store, cli: Cli, lessons: dict[str, str]
) -> None:
    root = store.root
    git(root, "checkout", "-q", "-b", "feature")
    _repeat_both(root)
    _commit(root, "pay as float")

    def stale_flags() -> dict[str, bool]:
        done = cli("review", "main", "feature", "--format", "json")
        assert done.returncode == 1, done.stderr  # the block finding
        return {f["record"]: f["stale"] for f in json.loads(done.stdout)["guardFindings"]}

    # The branch changed src/pay.py: that is the change the finding is about, not news.
    assert stale_flags() == {lessons["pay"]: False, lessons["ship"]: True}
    text = cli("review", "main", "feature", "--format", "text").stdout
    assert f"src/pay.py:2: repeats lesson {lessons['pay']}: " in text
    assert f"src/ship.py:2: repeats lesson {lessons['ship']} {STALE}" in text
    markdown = cli("review", "main", "feature", "--format", "markdown").stdout
    assert f"repeats `{lessons['pay']}`, block:" in markdown
    assert f"repeats `{lessons['ship']}` (stale lesson), warn:" in markdown

    # The same from a checkout of main: judged at the commits under review, not at HEAD.
    git(root, "checkout", "-q", "main")
    assert stale_flags() == {lessons["pay"]: False, lessons["ship"]: True}


def test_guard_test_of_a_commit_judges_at_its_parent(
    store: Store, cli: Cli, lessons: dict[str, str]
) -> None:
    root = store.root
    _repeat_both(root)
    _commit(root, "repeat both")
    write(root, "README.md", "later\n")
    _commit(root, "later")

    done = cli("guard", "test", "--rev", "HEAD~1", "--json")
    assert done.returncode == 0, done.stderr
    found = {f["record"]: f["stale"] for f in json.loads(done.stdout)["guardFindings"]}
    assert found == {lessons["pay"]: False, lessons["ship"]: True}
    text = cli("guard", "test", "--rev", "HEAD~1").stdout
    assert f"repeats lesson {lessons['pay']}: " in text
    assert f"repeats lesson {lessons['ship']} {STALE}" in text


def test_the_hook_judges_at_head_and_a_later_review_agrees(
    store: Store, cli: Cli, lessons: dict[str, str]
) -> None:
    root = store.root
    _repeat_both(root)
    git(root, "add", "-A")
    # What the pre-commit hook runs: the staged lines are judged, HEAD's history decides.
    hook = cli("check", "--staged", "--json")
    assert hook.returncode == 1, hook.stderr  # the block finding stops the commit
    found = {f["record"]: f["stale"] for f in json.loads(hook.stdout)["guardFindings"]}
    assert found == {lessons["pay"]: False, lessons["ship"]: True}

    git(root, "checkout", "-q", "-b", "feature")
    git(root, "commit", "-q", "-m", "anyway", "--no-verify")
    review = cli("review", "main", "feature", "--format", "json")
    flags = {f["record"]: f["stale"] for f in json.loads(review.stdout)["guardFindings"]}
    assert flags == found  # the commit, reviewed, is judged as it was at the hook


def test_stale_on_a_branch_is_judged_at_the_merge_base_with_the_default_branch(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    root = store.root
    names = ["a", "b", "c", "d", "e"]
    for name in names:
        write(root, f"src/{name}.py", f"{name} = 1\n")
        write_record(f"lesson-{name}", f"Lesson about {name}", paths=[f"src/{name}.py"])
    write(root, "docs/guide.md", "guide\n")
    write_record("lesson-docs", "Lesson about the guide", paths=["docs/guide.md"])
    _commit(root, "code and lessons")
    write(root, "docs/guide.md", "guide, rewritten\n")
    _commit(root, "main rewrites the guide")  # lesson-docs is stale before any branch
    fork = git(root, "rev-parse", "HEAD").strip()

    git(root, "checkout", "-q", "-b", "feature")
    for name in names[:4]:
        write(root, f"src/{name}.py", f"{name} = 2\n")
    (root / "src" / "e.py").unlink()  # deleted on the branch: not missing at the base
    _commit(root, "one commit on the branch")

    done = cli("stale", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["checked"] == 6
    assert [item["id"] for item in document["stale"]] == ["lesson-docs"]
    assert document["base"] == {"ref": "main", "commit": fork, "commitsNotCounted": 1}
    people = cli("stale").stdout
    assert "1 of 6 record(s) with paths are stale" in people
    assert (
        f"judged at the merge base with main ({fork[:10]}): 1 commit on this branch not "
        "counted against a lesson's code"
    ) in people
    assert cli("stale", "--exit-code").returncode == 1  # lesson-docs, whatever the branch

    counted = json.loads(cli("stale", "--json", "--base", "HEAD").stdout)
    assert counted["base"] is None
    by_id = {item["id"]: item["freshness"] for item in counted["stale"]}
    assert sorted(by_id) == sorted(f"lesson-{name}" for name in [*names, "docs"])
    assert by_id["lesson-e"]["missingPaths"] == ["src/e.py"]
    assert by_id["lesson-a"]["changedPaths"] == ["src/a.py"]

    # A pull request's commit checked out by CI (detached) is judged the same way.
    git(root, "checkout", "-q", "--detach", "feature")
    detached = json.loads(cli("stale", "--json").stdout)
    assert [item["id"] for item in detached["stale"]] == ["lesson-docs"]

    # On the default branch itself, everything on it counts.
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--ff-only", "feature")
    on_main = json.loads(cli("stale", "--json").stdout)
    assert on_main["base"] is None
    assert len(on_main["stale"]) == 6

    unknown = cli("stale", "--base", "no-such-branch")
    assert unknown.returncode != 0
    assert "'no-such-branch' does not name a commit here" in unknown.stderr
