"""Asked-as lines (SPEC.md §3): written by whoever writes a lesson, read by the task ranking.

Every command that writes or shows a record carries them; the task ranking (brief, the
push, eval's reach) reads them as a field of its own, ``asked``; search (§5) does not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git
from tests.test_hook import prompt

TASK = "my commit from this morning vanished after I moved the branch back to yesterday"
ASKED = [
    "my commit from this morning vanished after I moved the branch back",
    "get back work that disappeared from the history after a reset",
]
REFLOG_BODY = (
    "## Problems\n- a hard reset dropped commits\n\n"
    "## Solution\nFind the hash in `git reflog` and check it out.\n"
)


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    """A lesson whose title and body share no word with TASK, and unrelated neighbours."""
    write_record("reflog-recovery", "Recover lost commits with the reflog", REFLOG_BODY)
    for number, topic in enumerate(
        ("vim macros", "tmux panes", "ssh agent", "css grid", "sql joins", "rust lifetimes")
    ):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual of {topic}.\n",
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons")
    return store


def add_asked(cli: Cli, record_id: str, *lines: str) -> None:
    flags = [arg for line in lines for arg in ("--add-asked", line)]
    done = cli("update", record_id, *flags)
    assert done.returncode == 0, done.stderr


# --- the field through every command ------------------------------------------------------


def test_record_update_and_show_carry_the_lines(store: Store, cli: Cli) -> None:
    done = cli(
        "record",
        "--title",
        "Recover lost commits with the reflog",
        "--problem",
        "a hard reset dropped commits",
        "--solution",
        "Find the hash in the reflog",
        "--asked",
        ASKED[0],
        "--asked",
        ASKED[1],
    )
    assert done.returncode == 0, done.stderr
    _, record_id, _, locator = done.stdout.splitlines()[0].split()  # saved ID as LOCATOR
    saved = {"id": record_id, "locator": locator}
    record_id = saved["id"]
    text = (store.root / saved["locator"]).read_text(encoding="utf-8")
    assert f"## Asked as\n- {ASKED[0]}\n- {ASKED[1]}\n" in text
    assert cli.json("show", record_id)["askedAs"] == ASKED
    shown = cli("show", record_id).stdout
    assert "Asked as" in shown and ASKED[1] in shown

    add_asked(cli, record_id, "undo a reset that threw away my work", ASKED[0])  # once each
    assert cli.json("show", record_id)["askedAs"] == [
        *ASKED,
        "undo a reset that threw away my work",
    ]

    replaced = cli("update", record_id, "--json", "-", input=json.dumps({"askedAs": ["only this"]}))
    assert replaced.returncode == 0, replaced.stderr
    assert cli.json("show", record_id)["askedAs"] == ["only this"]
    added = cli(
        "update", record_id, "--json", "-", input=json.dumps({"addAskedAs": ["and this one"]})
    )
    assert added.returncode == 0, added.stderr
    assert cli.json("show", record_id)["askedAs"] == ["only this", "and this one"]


def test_json_input_takes_the_lines_and_drops_unfilled_placeholders(store: Store, cli: Cli) -> None:
    document = {
        "title": "Recover lost commits with the reflog",
        "problems": ["a hard reset dropped commits"],
        "solution": "Find the hash in the reflog",
        # What a draft holds where the writer is to write: never saved as words of the lesson.
        "askedAs": ["…", "… how someone would ask", ASKED[0]],
    }
    saved = cli.json("record", "--json", "-", input=json.dumps(document))
    assert cli.json("show", saved["id"])["askedAs"] == [ASKED[0]]


def test_a_lesson_without_lines_is_valid_and_too_many_are_a_warning(
    store: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record("plain", "A plain lesson")
    many = "".join(f"- way number {n} of asking\n" for n in range(7))
    write_record("chatty", "A chatty lesson", REFLOG_BODY + f"\n## Asked as\n{many}")
    report = cli.json("check")
    assert report["ok"] is True
    (chatty,) = [f for f in report["files"] if f["id"] == "chatty"]
    messages = [p["message"] for p in chatty["problems"]]
    assert messages == ["7 asked-as lines; the ranking reads the first 5"]


def test_history_drafts_hold_a_placeholder_not_made_up_text(repo: Path, cli: Cli) -> None:
    (repo / "app.py").write_text("def pay(): return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Add pay")
    (repo / "app.py").write_text("def pay(): return 2\n")
    git(repo, "commit", "-q", "-am", "Fix pay returning the wrong amount\n\nIt returned 1.")
    draft = cli.json("record", "--from-commit", "HEAD", "--json")
    (line,) = draft["askedAs"]
    assert line.startswith("… how someone would ask an agent")


# --- read by the task ranking, not by search ------------------------------------------------


def test_the_task_ranking_finds_a_lesson_through_its_lines(lessons: Store, cli: Cli) -> None:
    assert cli.json("brief", TASK)["lessons"] == []  # no word shared with title or body
    before = cli.json("search", "reflog commits")["results"]
    add_asked(cli, "reflog-recovery", *ASKED)
    (lesson,) = cli.json("brief", TASK)["lessons"]
    assert lesson["id"] == "reflog-recovery"
    fields = {token["word"]: token["fields"] for token in lesson["reason"]["tokens"]}
    assert fields["vanished"] == ["asked"]  # `why` names the field each word came from
    # Search is §5's, on the nine fields: the lines change neither what it finds nor a score.
    assert cli.json("search", "morning vanished")["results"] == []
    after = cli.json("search", "reflog commits")["results"]
    assert [(r["id"], r["score"]) for r in after] == [(r["id"], r["score"]) for r in before]


def test_a_line_of_the_push_may_stand_on_asked_as_words(lessons: Store, cli: Cli) -> None:
    add_asked(cli, "reflog-recovery", *ASKED)
    pushed = cli.json("brief", "--push", TASK)
    (entry,) = pushed["lessons"]
    assert entry["id"] == "reflog-recovery"
    # Its words are in no title or tag: without asked-as lines it would earn no entry.
    assert pushed["lessons"][0]["reason"]["earns"]["line"] is True
    assert "shares" in entry["text"] or entry["form"] == "full"


def test_the_hook_pushes_a_lesson_found_only_through_its_lines(
    lessons: Store, cli: Cli, repo: Path
) -> None:
    add_asked(cli, "reflog-recovery", *ASKED)
    done = cli("hook", input=prompt(repo, TASK))
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "reflog-recovery" in context


# --- asked for where lessons are judged -------------------------------------------------------


def test_eval_names_the_lessons_to_give_lines(
    lessons: Store, cli: Cli, write_record: RecordMaker
) -> None:
    write_record(
        "export-memory",
        "Misc",
        "## Task\nthe nightly export job runs out of memory\n\n"
        "## Problems\n- the nightly export job runs out of memory\n\n## Solution\nStream rows.\n",
    )
    reach = cli.json("eval")["reach"]
    to_fix = {item["id"]: item["reason"] for item in reach["addAskedAs"]}
    assert "export-memory" in to_fix and to_fix["export-memory"].startswith("add asked-as lines")
    assert "lessons to give asked-as lines" in cli("eval").stdout or (
        "lesson to give asked-as lines" in cli("eval").stdout
    )
    add_asked(cli, "export-memory", "the nightly export job runs out of memory on big tables")
    reach = cli.json("eval")["reach"]
    assert "export-memory" not in {item["id"] for item in reach["addAskedAs"]}
    assert "export-memory" not in {item["id"] for item in reach["unreachable"]}


def test_check_suggest_names_lessons_without_lines_most_pushed_first(
    lessons: Store, cli: Cli, repo: Path
) -> None:
    add_asked(cli, "note-0", "record a repeated edit in vim once and replay it")
    # Real pushes through the hook: note-3 (css grid) twice, note-4 (sql joins) once.
    for session, text in (
        ("s1", "the css grid misbehaved in the layout"),
        ("s2", "the css grid misbehaved in the footer"),
        ("s3", "the sql joins misbehaved in the report"),
    ):
        assert cli("hook", input=prompt(repo, text, session=session)).returncode == 0
    pushes = {
        lesson["id"]
        for log in cli.json("agent", "log")["sessions"]
        for lesson in cli.json("agent", "log", log["session"])["pushes"][0]["lessons"]
    }
    assert {"note-3", "note-4"} <= pushes
    listed = cli.json("check", "--suggest")["withoutAskedAs"]
    ids = [item["id"] for item in listed]
    assert "note-0" not in ids  # it has its lines
    assert ids[:2] == ["note-3", "note-4"]
    assert listed[0]["pushes"] == 2 and listed[1]["pushes"] == 1
    text = cli("check", "--suggest").stdout
    assert "without asked-as lines" in text and "note-3  (pushed 2×)" in text
    assert cli("check", "--suggest").returncode == 0  # a suggestion never fails the check
