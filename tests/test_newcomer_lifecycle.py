"""What a new user tripped over, round 2 (issue 25): paths as typed, retired lessons shown as
live, stale lessons nothing but an edit could clear, placeholder text saved, a silent hook.

Each test drives the installed `reliora` in a real git repository.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli, git


def _record(cli: Cli, title: str, *extra: str) -> str:
    done = cli("record", "--title", title, "--problem", "it broke", "--solution", "fix", *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[1]


def _commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def _code(repo: Path) -> None:
    (repo / "app.py").write_text("x = 1\n")
    (repo / "src").mkdir()
    (repo / "src" / "m.py").write_text("y = 1\n")


def test_paths_are_saved_the_way_about_reads_them(repo: Path, store: Store, cli: Cli) -> None:
    _code(repo)
    _commit_all(repo, "code")
    done = cli(
        "record",
        "--json",
        "-",
        "--path",
        "./app.py",
        "--path",
        "src//m.py",
        "--path",
        str(repo / "src") + "/",
        "--path",
        "gone.py",
        input=json.dumps({"title": "Lesson on app", "problems": ["p"], "solution": "s"}),
    )
    assert done.returncode == 0, done.stderr
    saved = json.loads(done.stdout)
    assert [w["code"] for w in saved["warnings"]] == ["PATH_NOT_IN_WORK_TREE"]
    assert saved["warnings"][0]["path"] == "gone.py"
    assert "gone.py is not in the work tree" in done.stderr
    shown = cli.json("show", saved["id"])
    assert shown["paths"] == ["app.py", "src/m.py", "src/", "gone.py"]
    _commit_all(repo, "lesson")
    assert [r["id"] for r in cli.json("about", "app.py")["results"]] == [saved["id"]]
    stale = cli("stale").stdout
    assert "gone.py no longer exist(s)" in stale
    assert "app.py" not in stale.split("no longer")[-1]

    # The flag form too, and a path outside the repository is refused by name.
    flag = _record(cli, "Flag lesson", "--path", "./app.py")
    assert cli.json("show", flag)["paths"] == ["app.py"]
    outside = cli("record", "--title", "x", "--problem", "p", "--solution", "s", "--path", "../x")
    assert outside.returncode == 2
    assert "../x is outside the repository" in outside.stderr

    # update --path / --add-path normalise the same way, and warn the same way.
    updated = cli("update", flag, "--add-path", "src/./m.py", "--add-path", "nope/")
    assert updated.returncode == 0, updated.stderr
    assert "nope/ is not in the work tree" in updated.stderr
    assert cli.json("show", flag)["paths"] == ["app.py", "src/m.py", "nope/"]


def test_retired_and_superseded_lessons_are_left_out_unless_asked(
    repo: Path, store: Store, cli: Cli
) -> None:
    _code(repo)
    old = _record(cli, "Old retry advice", "--path", "app.py")
    replaced = _record(cli, "Replaced retry advice", "--path", "app.py")
    _commit_all(repo, "lessons")
    assert cli("retire", old, "--reason", "fixed upstream").returncode == 0
    current = _record(cli, "Current retry advice", "--path", "app.py", "--supersedes", replaced)
    _commit_all(repo, "retire and supersede")

    assert [r["id"] for r in cli.json("about", "app.py")["results"]] == [current]
    everything = cli.json("about", "app.py", "--include-retired")["results"]
    status = {r["id"]: (r["status"], r["supersededBy"]) for r in everything}
    assert status == {
        old: ("retired", []),
        replaced: ("superseded", [current]),
        current: ("active", []),
    }
    text = cli("about", "app.py", "--include-retired").stdout
    assert f"{old}  Old retry advice  [retired]" in text
    assert f"[superseded by {current}]" in text

    # stale: the code changes under all three; only the live one is listed by default.
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "app.py").write_text("x = 2\n")
    _commit_all(repo, "change app")
    # --base HEAD: on a branch, stale judges at the merge base (the branch's own commits
    # are its change, test_freshness_under_review.py); here they are what makes it stale.
    assert [r["id"] for r in cli.json("stale", "--base", "HEAD")["stale"]] == [current]
    marked = cli.json("stale", "--base", "HEAD", "--include-retired")["stale"]
    assert sorted(r["id"] for r in marked) == sorted([old, replaced, current])

    # review's section about the changed code: the same rule.
    review = json.loads(cli("review", "main", "feature", "--format", "json").stdout)
    assert [r["id"] for r in review["aboutChangedCode"]] == [current]
    with_retired = cli("review", "main", "feature", "--format", "json", "--include-retired")
    review = json.loads(with_retired.stdout)
    assert {r["id"]: r["status"] for r in review["aboutChangedCode"]} == {
        old: "retired",
        replaced: "superseded",
        current: "active",
    }
    markdown = cli("review", "main", "feature", "--include-retired").stdout
    assert "_retired_" in markdown


def test_feedback_after_the_change_confirms_and_outdated_makes_stale(
    repo: Path, store: Store, cli: Cli
) -> None:
    _code(repo)
    lesson = _record(cli, "Retry advice", "--path", "app.py")
    other = _record(cli, "Logging advice")  # no paths
    _commit_all(repo, "lessons")
    (repo / "app.py").write_text("x = 2\n")
    _commit_all(repo, "a two-line fix")
    assert cli("stale", "--exit-code").returncode == 1
    assert cli("stale").returncode == 0  # without --exit-code: a report, not a failure

    # Used on the changed code and it held: success feedback, committed, clears it.
    assert cli("feedback", lesson, "success", "-m", "held after the fix").returncode == 0
    _commit_all(repo, "feedback")
    fresh = cli.json("show", lesson)["freshness"]
    assert fresh["state"] == "fresh"
    assert fresh["confirmedAt"]["subject"] == "feedback"
    assert cli("stale", "--exit-code").returncode == 0

    # A later change makes it stale again, measured from the confirmation.
    (repo / "app.py").write_text("x = 3\n")
    _commit_all(repo, "another change")
    again = cli.json("show", lesson)["freshness"]
    assert (again["state"], again["commitsSince"]) == ("stale", 1)

    # outdated feedback makes a record stale whatever its paths (here: none).
    assert cli("feedback", other, "outdated", "-m", "no longer true").returncode == 0
    listed = {r["id"]: r["freshness"] for r in cli.json("stale")["stale"]}
    assert listed[other]["state"] == "stale"
    assert listed[other]["outdated"] is True
    assert "feedback says it is outdated" in cli("stale").stdout


def test_record_edit_never_saves_the_templates_placeholders(
    repo: Path, store: Store, cli: Cli, tmp_path: Path
) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\n"
        "path = sys.argv[1]\n"
        "text = open(path, encoding='utf-8').read()\n"
        "text = text.replace('title: \"\"', 'title: \"Pin the linter\"')\n"
        "text = text.replace('What worked.', 'Pin ruff in the lock file.')\n"
        "text = text.replace('- What went wrong, one problem per bullet.',\n"
        "    '- What went wrong, one problem per bullet.\\n- CI linted with a newer ruff.')\n"
        "open(path, 'w', encoding='utf-8').write(text)\n"
    )
    done = cli("record", "--edit", env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
    assert done.returncode == 0, done.stderr
    record_id = done.stdout.split()[1]
    saved = cli.json("show", record_id)
    assert saved["problems"] == ["CI linted with a newer ruff."]
    assert saved["solution"] == "Pin ruff in the lock file."
    assert (saved["task"], saved["whyItWorked"], saved["applicability"]) == ("", "", "")
    assert saved["failedAttempts"] == [] and saved["warnings"] == []
    assert cli.json("search", "problem per bullet")["total"] == 0


def test_the_hook_names_the_lessons_about_the_files_committed(
    repo: Path, store: Store, cli: Cli
) -> None:
    _code(repo)
    (repo / "README.md").write_text("hi\n")
    live = _record(cli, "Retry advice", "--path", "app.py")
    retired = _record(cli, "Old retry advice", "--path", "app.py", "--path", "src/")
    assert cli("retire", retired, "--reason", "gone").returncode == 0
    _commit_all(repo, "code and lessons")

    (repo / "README.md").write_text("hello\n")
    git(repo, "add", "README.md")
    quiet = cli("check", "--staged")
    assert quiet.returncode == 0 and "about files in this commit" not in quiet.stdout
    assert cli.json("check", "--staged")["lessonsAbout"] is None

    (repo / "app.py").write_text("x = 2\n")
    (repo / "src" / "m.py").write_text("y = 2\n")
    git(repo, "add", "app.py", "src/m.py")
    told = cli("check", "--staged")
    assert told.returncode == 0, told.stderr
    assert "1 lesson is about files in this commit: reliora about app.py" in told.stdout
    assert live  # the retired one (about src/ too) is not counted
    assert cli.json("check", "--staged")["lessonsAbout"] == {"lessons": 1, "files": ["app.py"]}

    # Records staged in the same commit are read from the index, not from the cache.
    _record(cli, "Module advice", "--path", "src/m.py")
    git(repo, "add", ".reliora")
    both = cli("check", "--staged").stdout
    assert "2 lessons are about files in this commit: reliora about app.py src/m.py" in both


def test_update_adds_tags_paths_and_supersedes(repo: Path, store: Store, cli: Cli) -> None:
    _code(repo)
    old = _record(cli, "Old retry advice")
    lesson = _record(cli, "Retry advice", "--tag", "http")
    done = cli(
        "update",
        lesson,
        "--add-tag",
        "retry",
        "--add-tag",
        "http",
        "--add-path",
        "./app.py",
        "--supersedes",
        old[:8],
    )
    assert done.returncode == 0, done.stderr
    shown = cli.json("show", lesson)
    assert shown["tags"] == ["http", "retry"]
    assert shown["paths"] == ["app.py"]
    assert shown["supersedes"] == [old]
    assert cli.json("show", old)["supersededBy"] == [lesson]
    unknown = cli("update", lesson, "--supersedes", "no-such-record")
    assert unknown.returncode == 2 and "supersedes:" in unknown.stderr


def test_json_input_in_front_matter_spelling_is_told_the_json_name(
    repo: Path, store: Store, cli: Cli
) -> None:
    given = {"title": "t", "problems": ["p"], "solution": "s", "project_context": "python"}
    done = cli("record", "--json", "-", input=json.dumps(given))
    assert done.returncode == 2
    assert "did you mean 'projectContext'?" in json.loads(done.stdout)["error"]["message"]
    lesson = _record(cli, "Retry advice")
    done = cli("update", lesson, "--json", "-", input=json.dumps({"why_it_worked": "x"}))
    assert done.returncode == 2
    assert "did you mean 'whyItWorked'?" in json.loads(done.stdout)["error"]["message"]


def test_the_hooks_secret_line_says_what_to_do(repo: Path, store: Store, cli: Cli) -> None:
    lesson = _record(cli, "Retry advice")
    folder = store.feedback / lesson
    folder.mkdir(parents=True, exist_ok=True)
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    (folder / "20261203T100000Z-aaaaaa.md").write_text(
        f"---\nrecord: {lesson}\noutcome: success\nat: '2026-12-03T10:00:00Z'\n"
        f"note: token {token}\n---\n"
    )
    git(repo, "add", ".reliora")
    done = cli("check", "--staged")
    assert done.returncode == 1
    assert "Remove it and `git add` the file again" in done.stdout
    assert "already wrote it into .git's object store, so rotate the secret" in done.stdout
    assert token not in done.stdout
