"""``reliora agent log``: what the hooks pushed, read back from the session memory.

Pushes come from the real hook (the installed executable, Claude Code's and Codex's
documented inputs); older session files, written before the ``push`` line, still read.
"""

from __future__ import annotations

import json
from pathlib import Path

from reliora_git.operations.agents.ledger import parse_pushes
from reliora_git.storage.store import Store
from tests.conftest import Cli, git
from tests.test_hook import lessons, prompt, read_file  # noqa: F401 (the fixture)

RETRY = "src/billing/retry.py"
PROMPT = "invoices fail: the payment provider rate limits our retries"


def codex_prompt(repo: Path, text: str, session: str) -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": None,
            "cwd": str(repo),
            "hook_event_name": "UserPromptSubmit",
            "model": "gpt-5",
            "turn_id": "t1",
            "prompt": text,
        }
    )


def sessions_folder(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "reliora" / "sessions"


def test_a_session_lists_each_push_with_client_event_lessons_and_characters(
    lessons: Store,  # noqa: F811
    cli: Cli,
    repo: Path,
) -> None:
    pushed = cli("hook", input=prompt(repo, PROMPT, session="sess-log"))
    said = json.loads(pushed.stdout)["hookSpecificOutput"]["additionalContext"]
    read = cli("hook", input=read_file(repo, RETRY, session="sess-log"))  # the line comes in full
    then = json.loads(read.stdout)["hookSpecificOutput"]["additionalContext"]
    cli("hook", input=read_file(repo, RETRY, session="sess-log"))  # nothing new: no push

    document = cli.json("agent", "log", "sess-log")
    assert document["session"] == "sess-log"
    first, second = document["pushes"]
    assert (first["client"], first["event"]) == ("claude-code", "UserPromptSubmit")
    assert (second["client"], second["event"]) == ("claude-code", "PreToolUse")
    assert first["chars"] == len(said)  # the exact cost of what the client received
    assert second["chars"] == len(then)
    assert first["lessons"] == [{"id": "billing-retry-backoff", "form": "line"}]
    assert second["lessons"] == [{"id": "billing-retry-backoff", "form": "full"}]
    assert first["time"].endswith("Z")
    assert document["totalChars"] == len(said) + len(then)

    plain = cli("agent", "log", "sess-log")
    assert plain.returncode == 0, plain.stderr
    assert "claude-code  UserPromptSubmit" in plain.stdout
    assert "billing-retry-backoff (full)" in plain.stdout
    assert f"Total: {len(said) + len(then)} characters in 2 pushes" in plain.stdout


def test_recent_sessions_come_newest_first_with_their_clients(
    lessons: Store,  # noqa: F811
    cli: Cli,
    repo: Path,
) -> None:
    cli("hook", input=prompt(repo, PROMPT, session="older"))
    older = sessions_folder(repo) / "older"
    import os

    os.utime(older, (1_700_000_000, 1_700_000_000))
    done = cli("hook", "--client", "codex", input=codex_prompt(repo, PROMPT, "newer"))
    assert done.returncode == 0 and done.stdout, done.stderr

    listed = cli.json("agent", "log")["sessions"]
    assert [s["session"] for s in listed] == ["newer", "older"]
    assert listed[0]["clients"] == ["codex"]
    assert listed[1]["clients"] == ["claude-code"]
    assert listed[0]["pushCount"] == 1 and listed[0]["totalChars"] > 0
    assert "pushes" not in listed[0]  # the list names sessions; one session has the pushes
    assert cli.json("agent", "log", "--limit", "1")["sessions"][0]["session"] == "newer"


def test_an_unknown_session_is_one_line_and_exit_2(
    lessons: Store,  # noqa: F811
    cli: Cli,
    repo: Path,
) -> None:
    cli("hook", input=prompt(repo, PROMPT, session="known"))
    for wrong in ("nope", "../../config", "."):
        done = cli("agent", "log", wrong)
        assert done.returncode == 2
        assert done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1
        assert "no session" in done.stderr and "known" in done.stderr
    done = cli("agent", "log", "nope", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "not_found"


def test_no_session_yet_is_said_plainly(store: Store, cli: Cli) -> None:
    done = cli("agent", "log")
    assert done.returncode == 0
    assert "No session was pushed" in done.stdout
    assert cli.json("agent", "log") == {"sessions": []}


def test_a_session_file_from_before_the_push_line_still_reads(
    lessons: Store,  # noqa: F811
    cli: Cli,
    repo: Path,
) -> None:
    folder = sessions_folder(repo)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "old-format").write_text(
        "full\tbilling-retry-backoff\nline\tnote-1\nfile\tsrc/a.py\nchars\t420\n"
        "line\tnote-2\nchars\t90\nasked\n"
    )
    document = cli.json("agent", "log", "old-format")
    assert [p["chars"] for p in document["pushes"]] == [420, 90]
    assert document["pushes"][0]["lessons"] == [
        {"id": "billing-retry-backoff", "form": "full"},
        {"id": "note-1", "form": "line"},
    ]
    assert document["pushes"][0]["client"] is None and document["pushes"][0]["time"] is None
    assert document["totalChars"] == 510 and document["asked"] is True
    # And the hook still reads the old file: what it holds is not pushed again.
    done = cli("hook", input=prompt(repo, PROMPT, session="old-format"))
    assert (done.returncode, done.stdout) == (0, "")


def test_new_lines_keep_the_old_reader_and_the_new_one_in_step() -> None:
    text = (
        "push\t2026-01-02T03:04:05Z\tgemini\tBeforeAgent\t300\nfull\ta\nline\tb\nchars\t300\n"
        "push\t2026-01-02T03:05:00Z\tgemini\tBeforeAgent\t120\nspent\nchars\t120\n"
        "push\tbroken\nline\tc\n"
    )
    pushes, asked = parse_pushes(text)
    assert [(p.time, p.client, p.event, p.chars) for p in pushes[:2]] == [
        ("2026-01-02T03:04:05Z", "gemini", "BeforeAgent", 300),
        ("2026-01-02T03:05:00Z", "gemini", "BeforeAgent", 120),
    ]
    assert pushes[0].lessons == [("a", "full"), ("b", "line")]
    assert pushes[1].spent and not asked
    assert pushes[2].lessons == [("c", "line")]  # a damaged push line loses its header only
    from reliora_git.operations.agents.session import parse

    old = parse(text)
    assert old.chars == 420 and old.forms == {"a": "full", "b": "line", "c": "line"}
