"""What a new user tripped over, round 4 (issue 39): a refused `init --hooks` that left a
store behind, retired records listed as if active, a silent typo in config.toml, ids and
words without a did-you-mean, a refused commit that did not say so, Markdown words for
flags, and a review that did not say which base it used.

Each test drives the installed `reliora` in a real git repository (or, for item 1, in a
folder outside any).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from reliora_git.storage.store import Store
from tests.conftest import Cli, git


def _saved_id(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("saved "), done.stdout
    return done.stdout.split()[1]


def _record(cli: Cli, title: str, *more: str) -> str:
    return _saved_id(cli("record", "--title", title, "--task", "t", "--solution", "s", *more))


# --- item 1: a refused `init --hooks` writes nothing ------------------------------------------


def test_init_hooks_outside_git_writes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-repo"
    folder.mkdir()
    cli = Cli(folder)
    refused = cli("init", "--hooks")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"reliora: error: {folder} is not in a git repository; nothing was written (run "
        "`git init` first, or `reliora init` without --hooks for a store outside git)"
    ]
    assert list(folder.iterdir()) == []
    # The next run starts from nothing, rather than finding a store "already set up".
    again = cli("init")
    assert again.returncode == 0, again.stderr
    assert f"Store ready at {folder / '.reliora'}" in again.stdout


# --- item 2: retired and superseded records are marked in `list` ----------------------------


def test_list_marks_retired_and_superseded_records(store: Store, cli: Cli) -> None:
    old = _record(cli, "Old key rotation")
    new = _record(cli, "New key rotation", "--supersedes", old)
    gone = _record(cli, "Rotate by hand")
    assert cli("retire", gone, "--reason", "automated now").returncode == 0
    listed = cli("list")
    assert listed.returncode == 0, listed.stderr
    lines = {line.split()[1]: line for line in listed.stdout.splitlines()}
    assert lines[old].endswith(f"Old key rotation [superseded by {new}]")
    assert lines[gone].endswith("Rotate by hand [retired]")
    assert lines[new].endswith("New key rotation")
    as_json = cli("list", "--json")
    items = {item["id"]: item for item in json.loads(as_json.stdout)}  # one document
    assert (items[old]["status"], items[old]["supersededBy"]) == ("superseded", [new])
    assert (items[gone]["status"], items[gone]["supersededBy"]) == ("retired", [])
    assert (items[new]["status"], items[new]["supersededBy"]) == ("active", [])


# --- item 3: config.toml's unknown keys and wrong types --------------------------------------


def test_a_typo_in_config_is_a_warning_and_a_wrong_type_an_error_with_its_line(
    store: Store, cli: Cli
) -> None:
    _record(cli, "Flaky pytest timeouts")
    config = store.path / "config.toml"
    lines = config.read_text(encoding="utf-8").splitlines()
    config.write_text("\n".join([*lines, "serch_limit = 3"]) + "\n", encoding="utf-8")
    typo_line = len(lines) + 1
    done = cli("search", "pytest timeouts", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total"] == 1  # stdout is still the one document
    assert done.stderr.splitlines() == [
        f"reliora: warning: .reliora/config.toml:{typo_line}: unknown setting 'serch_limit' "
        "(did you mean 'search_limit'?); it is ignored"
    ]
    config.write_text("\n".join([*lines, 'search_limit = "3"']) + "\n", encoding="utf-8")
    wrong = cli("search", "pytest timeouts")
    assert wrong.returncode == 2
    assert wrong.stderr.splitlines() == [
        f"reliora: error: .reliora/config.toml:{typo_line}: 'search_limit' must be an integer"
    ]


# --- item 4: a near-miss id gets a did-you-mean -----------------------------------------------


def test_a_near_miss_id_gets_a_did_you_mean_wherever_an_id_is_taken(
    store: Store, cli: Cli
) -> None:
    real = _record(cli, "Key rotation")
    _record(cli, "Flaky pytest timeouts")
    hint = f"(did you mean {real!r}?)"
    for command in (
        ("show", "keyrotation"),
        ("feedback", "keyrotation", "success"),
        ("update", "rotation-key", "--title", "x"),
        ("retire", "key-rotaton", "--reason", "x"),
    ):
        done = cli(*command)
        assert done.returncode == 2, command
        assert done.stderr.strip().endswith(hint), (command, done.stderr)
    far = cli("show", "database-vacuum")
    assert far.returncode == 2 and "did you mean" not in far.stderr
    # The ambiguous prefix still lists its candidates.
    _record(cli, "Key ring")
    ambiguous = cli("show", "key-r")
    assert ambiguous.returncode == 2
    assert "is ambiguous; it matches key-ring-" in ambiguous.stderr and real in ambiguous.stderr


# --- item 5: contractions and did-you-mean noise in search -----------------------------------


def test_contraction_tails_are_no_query_tokens_and_fragments_get_no_suggestion(
    store: Store, cli: Cli
) -> None:
    token = _record(cli, "Token from the email link fails to verify")
    _saved_id(cli("record", "--title", "Worker can't start", "--task", "re-run the job",
                  "--solution", "the test runner waits"))  # fmt: skip
    found = cli.json("search", "token from email doesn't verify")
    assert found["tokens"] == ["token", "email", "verify"]
    assert [result["id"] for result in found["results"]] == [token]
    # `red` matched nothing; `re` (of re-run) is its truncation, not a suggestion.
    noisy = cli.json("search", "red verify")
    assert "red" not in noisy.get("suggestions", {})
    assert "did you mean" not in cli("search", "red verify").stdout
    # A plural still gets its singular, which §4's prefix rule does not join.
    plural = cli.json("search", "tests")
    assert plural["suggestions"] == {"tests": ["test"]}


# --- item 6: a commit stopped for an invalid record says so ----------------------------------


def test_a_commit_refused_for_an_invalid_record_says_it_was_stopped(
    repo: Path, store: Store, cli: Cli
) -> None:
    assert cli("hooks", "install").returncode == 0
    broken = store.experiences / "broken-one.md"
    broken.write_text("---\nid: broken-one\ntitle: Broken\n---\n\n## Solution\nx\n")
    git(repo, "add", "-A")
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "lesson"], cwd=repo, capture_output=True, text=True
    )
    assert done.returncode != 0
    said = (done.stdout + done.stderr).splitlines()
    error = said.index(
        ".reliora/experiences/broken-one.md: error: needs a '## Task' or a '## Problems' section"
    )
    stopped = [line for line in said if line.startswith("commit stopped:")]
    assert stopped == [
        "commit stopped: .reliora/experiences/broken-one.md has errors (above). Fix the record "
        "and `git add` it again, or commit anyway with `git commit --no-verify` "
        "(block_on_invalid = false in .reliora/config.toml makes invalid records a warning)."
    ]
    assert said.index(stopped[0]) > error
    assert subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=repo).returncode


# --- item 7: a record from flags names the missing flag ---------------------------------------


def test_a_record_from_flags_names_the_flags_it_needs(
    store: Store, cli: Cli, tmp_path: Path
) -> None:
    no_task = cli("record", "--title", "t", "--solution", "s")
    assert no_task.returncode == 2
    assert no_task.stderr.splitlines() == [
        "reliora: error: the experience is not valid: it needs --task or --problem "
        "(what you were doing, or what went wrong)"
    ]
    no_solution = cli("record", "--title", "t", "--problem", "p")
    assert no_solution.stderr.splitlines() == [
        "reliora: error: the experience is not valid: it needs --solution (what worked)"
    ]
    written = tmp_path / "lesson.md"
    written.write_text("---\ntitle: t\n---\n\n## Solution\ns\n", encoding="utf-8")
    from_file = cli("record", "--from-file", str(written))
    assert from_file.returncode == 2
    assert "needs a '## Task' or a '## Problems' section" in from_file.stderr
    assert list(store.experiences.glob("*.md")) == []


# --- item 8: review says which base it used, and why ------------------------------------------


def _review_json(cli: Cli, *args: str) -> dict[str, Any]:
    done = cli("review", "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_review_says_its_base_and_counts_unpushed_commits_of_local_main_aloud(
    repo: Path, store: Store, cli: Cli, tmp_path: Path
) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store")
    lonely = _review_json(cli)  # no remote yet
    assert (lonely["base"]["ref"], lonely["base"]["reason"]) == (
        "main",
        "no remote-tracking branch, so the local one",
    )
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "-u", "origin", "main")
    _record(cli, "Unpushed lesson on main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "unpushed")
    git(repo, "checkout", "-q", "-b", "feature")
    _record(cli, "Lesson of the feature")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    document = _review_json(cli)
    assert document["base"]["ref"] == "origin/main"
    assert document["base"]["reason"] == "the upstream of main"
    assert document["base"]["localAhead"] == {"branch": "main", "commits": 1}
    assert document["summary"]["added"] == 2  # what the pull request to origin/main holds
    text = cli("review", "--format", "text").stdout.splitlines()
    assert text[1] == (
        "base: origin/main (the upstream of main); the change is what head adds since it "
        "forked from it. 1 commit of local main not yet on origin/main is counted as part of "
        "it (push main first, or pass --base main to leave them out)"
    )
    markdown = cli("review", "--format", "markdown").stdout
    assert re.search(r"^Base: `origin/main` \(the upstream of main\); ", markdown, re.M)
    asked = _review_json(cli, "--base", "main")
    assert asked["base"]["reason"] == "given with --base" and asked["base"]["localAhead"] is None
    assert asked["summary"]["added"] == 1
    assert "base:" not in cli("review", "--format", "text", "--base", "main").stdout
