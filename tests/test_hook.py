"""``reliora hook``: Claude Code's hook input in, its documented output (or nothing) out, exit 0.

The inputs copy the fields Claude Code's hooks reference documents for each
event (common: session_id, transcript_path, cwd, permission_mode,
hook_event_name; then source, prompt, tool_name/tool_input/tool_use_id).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

RETRY = "src/billing/retry.py"


def event(repo: Path, name: str, session: str = "sess-1", **fields: Any) -> str:
    document: dict[str, Any] = {
        "session_id": session,
        "transcript_path": str(repo / ".claude-transcript.jsonl"),
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": name,
    }
    document.update(fields)
    return json.dumps(document)


def read_file(repo: Path, path: str, session: str = "sess-1") -> str:
    return event(
        repo,
        "PreToolUse",
        session,
        tool_name="Read",
        tool_input={"file_path": str(repo / path)},
        tool_use_id="toolu_01ABC123",
    )


def edit_file(repo: Path, path: str, session: str = "sess-1") -> str:
    return event(
        repo,
        "PreToolUse",
        session,
        tool_name="Edit",
        tool_input={"file_path": str(repo / path), "old_string": "a", "new_string": "b"},
        tool_use_id="toolu_01ABC124",
    )


def prompt(repo: Path, text: str, session: str = "sess-1") -> str:
    return event(repo, "UserPromptSubmit", session, prompt=text)


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    """A store whose words are rare enough for a brief: one lesson about the retry code."""
    write_record(
        "billing-retry-backoff",
        "Billing retries need jittered exponential backoff",
        "## Problems\n- the payment provider rate limited our invoice retries\n\n"
        "## Solution\nUse exponential backoff with full jitter; cap at five attempts.\n",
        paths=[RETRY],
        tags=["billing"],
    )
    for number, topic in enumerate(
        ("vim macros", "tmux panes", "ssh agent", "css grid", "sql joins", "rust lifetimes")
    ):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual of {topic}.\n",
        )
    (repo / "src" / "billing").mkdir(parents=True)
    (repo / RETRY).write_text("def retry(): ...\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons and code")
    return store


def context_of(done: Any, name: str) -> str:
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["hookSpecificOutput"]["hookEventName"] == name
    text = document["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


def log_lines(cli: Cli) -> list[str]:
    status = cli.json("agent", "status")
    lines: list[str] = status["hookLog"]
    return lines


def test_a_prompt_gets_the_lessons_that_fit_it(lessons: Store, cli: Cli, repo: Path) -> None:
    done = cli(
        "hook", input=prompt(repo, "invoices fail: the payment provider rate limits our retries")
    )
    text = context_of(done, "UserPromptSubmit")
    assert "billing-retry-backoff" in text
    assert text.startswith("Lessons kept in this repository")  # framed as data, not orders
    assert "pull request" not in text  # no claim about where the lessons came from


def test_the_client_flag_names_claude_code(lessons: Store, cli: Cli, repo: Path) -> None:
    done = cli(
        "hook",
        "--client",
        "claude-code",
        input=prompt(repo, "payment provider rate limits invoice retries"),
    )
    assert "billing-retry-backoff" in context_of(done, "UserPromptSubmit")
    done = cli(
        "hook",
        "--client=claude-code",
        input=prompt(repo, "payment provider rate limits invoice retries", session="sess-2"),
    )
    assert "billing-retry-backoff" in context_of(done, "UserPromptSubmit")


def test_a_prompt_without_a_task_prints_nothing(lessons: Store, cli: Cli, repo: Path) -> None:
    done = cli("hook", input=prompt(repo, "yes, go ahead"))
    assert (done.returncode, done.stdout) == (0, "")
    assert log_lines(cli) == []  # an empty brief is not a problem


def test_reading_a_file_gets_its_lessons_once_per_session(
    lessons: Store, cli: Cli, repo: Path
) -> None:
    first = cli("hook", input=read_file(repo, RETRY))
    assert "billing-retry-backoff" in context_of(first, "PreToolUse")
    again = cli("hook", input=read_file(repo, RETRY))
    assert (again.returncode, again.stdout) == (0, "")
    edit = cli("hook", input=edit_file(repo, RETRY))  # the same file, another tool: still once
    assert (edit.returncode, edit.stdout) == (0, "")
    other_session = cli("hook", input=read_file(repo, RETRY, session="sess-2"))
    assert "billing-retry-backoff" in context_of(other_session, "PreToolUse")
    assert log_lines(cli) == []


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Edit", {"old_string": "a", "new_string": "b"}),
        ("MultiEdit", {"edits": [{"old_string": "a", "new_string": "b"}]}),
        ("Write", {"content": "x = 1\n"}),
    ],
)
def test_each_editing_tool_gets_the_lessons(
    lessons: Store, cli: Cli, repo: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    payload = event(
        repo,
        "PreToolUse",
        tool_name=tool,
        tool_input={"file_path": str(repo / RETRY), **tool_input},
    )
    assert "billing-retry-backoff" in context_of(cli("hook", input=payload), "PreToolUse")


def test_notebook_edit_names_its_file_by_notebook_path(
    lessons: Store, write_record: RecordMaker, cli: Cli, repo: Path
) -> None:
    write_record("notebook-seeds", "Seed the notebook's random state", paths=["nb/analysis.ipynb"])
    payload = event(
        repo,
        "PreToolUse",
        tool_name="NotebookEdit",
        tool_input={"notebook_path": str(repo / "nb/analysis.ipynb"), "new_source": "x = 1"},
    )
    assert "notebook-seeds" in context_of(cli("hook", input=payload), "PreToolUse")


def test_a_relative_path_is_read_against_the_cwd(lessons: Store, cli: Cli, repo: Path) -> None:
    payload = event(
        repo / "src",
        "PreToolUse",
        tool_name="Read",
        tool_input={"file_path": "billing/retry.py"},
    )
    assert "billing-retry-backoff" in context_of(cli("hook", input=payload), "PreToolUse")


def test_files_without_lessons_outside_the_repo_or_other_tools_print_nothing(
    lessons: Store, cli: Cli, repo: Path, tmp_path: Path
) -> None:
    for payload in (
        read_file(repo, "README.md"),
        event(
            repo, "PreToolUse", tool_name="Read", tool_input={"file_path": str(tmp_path / "x.py")}
        ),
        event(repo, "PreToolUse", tool_name="Bash", tool_input={"command": f"cat {RETRY}"}),
        event(repo, "PreToolUse", tool_name="Read", tool_input={}),
    ):
        done = cli("hook", input=payload)
        assert (done.returncode, done.stdout) == (0, "")
    assert log_lines(cli) == []


def test_session_start_briefs_on_the_branch_changes(lessons: Store, cli: Cli, repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    (repo / RETRY).write_text("def retry(attempts=5): ...\n")
    git(repo, "commit", "-q", "-am", "retry: cap attempts")
    done = cli("hook", input=event(repo, "SessionStart", source="startup", model="claude-sonnet"))
    assert "billing-retry-backoff" in context_of(done, "SessionStart")


def test_session_start_without_changes_prints_nothing(lessons: Store, cli: Cli, repo: Path) -> None:
    done = cli("hook", input=event(repo, "SessionStart", source="startup"))
    assert (done.returncode, done.stdout) == (0, "")


@pytest.mark.parametrize(
    ("stdin", "logged"),
    [
        ("", "no JSON on stdin"),
        ("   \n", "no JSON on stdin"),
        ("{not json", "stdin is not JSON"),
        ('["UserPromptSubmit"]', "not a JSON object"),
        ('{"hook_event_name": "Notification", "session_id": "s"}', "unknown event Notification"),
        ('{"session_id": "s", "prompt": "x"}', "unknown event None"),
    ],
)
def test_bad_input_prints_nothing_exits_0_and_logs_one_line(
    lessons: Store, cli: Cli, stdin: str, logged: str
) -> None:
    done = cli("hook", input=stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    lines = log_lines(cli)
    assert len(lines) == 1 and logged in lines[0], lines


def test_no_store_prints_nothing_and_logs(repo: Path, cli: Cli) -> None:
    """In a repository whose committed files run the hook; a user-level hook elsewhere logs
    nothing (tests/test_personal_install.py)."""
    assert cli("agent", "install", "claude-code").returncode == 0
    done = cli("hook", input=prompt(repo, "payment provider rate limits invoice retries"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    lines = log_lines(cli)
    assert len(lines) == 1 and "no_store" in lines[0]


def test_an_unknown_client_prints_nothing_and_logs(lessons: Store, cli: Cli, repo: Path) -> None:
    done = cli("hook", "--client", "notepad", input=prompt(repo, "payment provider rate limits"))
    assert (done.returncode, done.stdout) == (0, "")
    assert "notepad" in log_lines(cli)[-1]


def test_a_store_error_prints_nothing_and_logs(lessons: Store, cli: Cli, repo: Path) -> None:
    (lessons.path / "config.toml").write_text("brief_budget = [\n")  # not TOML
    done = cli("hook", input=prompt(repo, "payment provider rate limits invoice retries"))
    assert (done.returncode, done.stdout) == (0, "")
    assert len(log_lines(cli)) == 1


def test_a_slow_store_is_given_up_on_at_the_deadline(lessons: Store, cli: Cli, repo: Path) -> None:
    done = cli(
        "hook",
        input=prompt(repo, "payment provider rate limits invoice retries"),
        env={"RELIORA_HOOK_DEADLINE": "0.001"},
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert "gave up after" in log_lines(cli)[-1]


def test_the_log_stays_bounded(lessons: Store, cli: Cli, repo: Path) -> None:
    state = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "reliora"
    state.mkdir(parents=True)
    (state / "hook.log").write_text("old line\n" * 20_000)
    cli("hook", input="{not json")
    size = (state / "hook.log").stat().st_size
    assert size <= 64 * 1024
    assert (state / "hook.log").read_text().endswith("stdin is not JSON\n")


def test_old_sessions_are_pruned_at_session_start(lessons: Store, cli: Cli, repo: Path) -> None:
    sessions = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "reliora" / "sessions"
    sessions.mkdir(parents=True)
    month_ago = time.time() - 30 * 24 * 3600
    for number in range(230):
        path = sessions / f"s{number}"
        path.write_text("src/x.py\n")
        if number < 10:
            os.utime(path, (month_ago, month_ago))
    cli("hook", input=event(repo, "SessionStart", source="startup"))
    left = {p.name for p in sessions.iterdir()}
    assert len(left) <= 200
    assert not left & {f"s{n}" for n in range(10)}


def test_a_session_id_never_escapes_the_sessions_folder(
    lessons: Store, cli: Cli, repo: Path
) -> None:
    done = cli("hook", input=read_file(repo, RETRY, session="../../../escape"))
    assert "billing-retry-backoff" in context_of(done, "PreToolUse")
    assert not (repo / "escape").exists()
    sessions = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "reliora" / "sessions"
    assert len(list(sessions.iterdir())) == 1


def test_hook_help_goes_through_typer(tmp_path: Path) -> None:
    done = Cli(tmp_path)("hook", "--help")
    assert done.returncode == 0 and "Example" in done.stdout


def test_warming_builds_the_store_index_for_the_next_hook(
    lessons: Store, cli: Cli, repo: Path
) -> None:
    cache = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "reliora-cache"
    if cache.exists():
        import shutil

        shutil.rmtree(cache)
    state = cache.parent / "reliora"
    state.mkdir(exist_ok=True)
    (state / "warming").write_text("")  # the lock a hook that gave up takes
    done = cli("hook", "--warm", str(repo))
    assert (done.returncode, done.stdout) == (0, "")
    assert cache.is_dir() and any(cache.iterdir())
    assert not (state / "warming").exists()


def test_a_cwd_that_no_longer_exists_falls_back_to_the_hook_folder(
    lessons: Store, cli: Cli, repo: Path, tmp_path: Path
) -> None:
    payload = json.loads(prompt(repo, "payment provider rate limits invoice retries"))
    payload["cwd"] = str(tmp_path / "removed")
    done = cli("hook", input=json.dumps(payload))
    assert "billing-retry-backoff" in context_of(done, "UserPromptSubmit")


def test_stdin_past_its_limit_prints_nothing_and_logs(lessons: Store, cli: Cli, repo: Path) -> None:
    done = cli("hook", input=prompt(repo, "retries " * 150_000))
    assert (done.returncode, done.stdout) == (0, "")
    assert "larger than 1024 KiB" in log_lines(cli)[-1]
