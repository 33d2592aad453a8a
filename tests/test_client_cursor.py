"""Cursor's project files and hooks: install keeps other people's bytes, the installed hook
command answers the events Cursor's documentation describes with its documented output.

Cursor cannot run here (it needs a login), so the inputs follow https://cursor.com/docs/hooks:
common fields ``conversation_id``, ``generation_id``, ``model``, ``hook_event_name``,
``cursor_version``, ``workspace_roots``, ``user_email`` (``session_id``, ``transcript_path``
in later versions); ``sessionStart`` adds ``is_background_agent`` and ``composer_mode``;
``postToolUse`` adds ``tool_name``, ``tool_input``, ``tool_output``, ``cwd``. The output that
adds context for the model is ``additional_context``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliora_git.operations.agents.clients import cursor
from reliora_git.operations.agents.clients.base import hook_command
from reliora_git.operations.agents.files import MCP_SERVER
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git, reliora_executable

FILES = [".cursor/hooks.json", ".cursor/rules/reliora.mdc", ".cursor/mcp.json"]
HOOKS = """{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": "./hooks/format.sh" }],
    "postToolUse": [{ "command": "./hooks/audit.sh", "timeout": 5 }]
  }
}
"""
MCP = '{\n  "mcpServers": {\n    "db": {"command": "npx", "args": ["-y", "@acme/db-mcp"]}\n  }\n}\n'
STYLE_RULE = "---\ndescription: House style\nalwaysApply: true\n---\n\nUse tabs.\n"
RETRY = "src/billing/retry.py"
CONVERSATION = "5b0d6c1e-8a4f-4f1e-9d8e-2b7f1c3a9e10"


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def snapshot(repo: Path, names: list[str]) -> dict[str, bytes | None]:
    return {n: (repo / n).read_bytes() if (repo / n).exists() else None for n in names}


def states(cli: Cli) -> dict[str, str]:
    status = cli.json("agent", "status")
    return {f["path"]: f["state"] for f in status["files"] if f["client"] == "cursor"}


def test_install_keeps_their_bytes_twice_changes_nothing_uninstall_restores_them(
    repo: Path, cli: Cli
) -> None:
    write(
        repo,
        {
            ".cursor/hooks.json": HOOKS,
            ".cursor/mcp.json": MCP,
            ".cursor/rules/style.mdc": STYLE_RULE,
        },
    )
    names = [*FILES, ".cursor/rules/style.mdc"]
    before = snapshot(repo, names)
    assert cli("agent", "install", "cursor").returncode == 0
    installed = snapshot(repo, names)
    assert installed[".cursor/rules/style.mdc"] == STYLE_RULE.encode()
    hooks = json.loads((repo / ".cursor/hooks.json").read_text())
    theirs = json.loads(HOOKS)["hooks"]
    assert hooks["version"] == 1 and hooks["hooks"]["afterFileEdit"] == theirs["afterFileEdit"]
    assert hooks["hooks"]["postToolUse"][0] == theirs["postToolUse"][0]
    assert hooks["hooks"]["postToolUse"][1] == {
        "command": hook_command("cursor"),
        "timeout": 10,
        "matcher": "^(Read|Write|Edit|StrReplace|MultiEdit)$",
    }
    assert hooks["hooks"]["sessionStart"] == [{"command": hook_command("cursor"), "timeout": 10}]
    servers = json.loads((repo / ".cursor/mcp.json").read_text())["mcpServers"]
    assert servers["db"]["command"] == "npx" and servers["reliora"] == MCP_SERVER
    assert states(cli) == dict.fromkeys(FILES, "installed")

    assert cli("agent", "install", "cursor").returncode == 0
    assert snapshot(repo, names) == installed
    assert cli("agent", "uninstall", "cursor").returncode == 0
    assert snapshot(repo, names) == before
    assert states(cli) == {
        ".cursor/hooks.json": "not installed",
        ".cursor/rules/reliora.mdc": "absent",
        ".cursor/mcp.json": "not installed",
    }


def test_the_rule_always_applies_and_uninstall_removes_the_files_it_created(
    repo: Path, cli: Cli
) -> None:
    assert states(cli) == dict.fromkeys(FILES, "absent")
    assert cli("agent", "install", "cursor").returncode == 0
    rule = (repo / ".cursor/rules/reliora.mdc").read_text()
    front, body = rule.split("---\n")[1], rule.split("---\n", 2)[2]
    assert "alwaysApply: true" in front.splitlines()
    assert any(line.startswith("description: ") for line in front.splitlines())
    assert "## Lessons from past work (Reliora)" in body
    assert list(json.loads((repo / ".cursor/hooks.json").read_text())["hooks"]) == [
        "sessionStart",
        "postToolUse",
    ]
    assert cli("agent", "uninstall", "cursor").returncode == 0
    assert snapshot(repo, FILES) == dict.fromkeys(FILES)


# --- the installed hook command, given what Cursor documents --------------------------------


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path, cli: Cli) -> Store:
    write_record(
        "billing-retry-backoff",
        "Billing retries need jittered exponential backoff",
        "## Problems\n- the payment provider rate limited our invoice retries\n\n"
        "## Solution\nUse exponential backoff with full jitter; cap at five attempts.\n",
        paths=[RETRY],
        tags=["billing"],
    )
    for number, topic in enumerate(("vim macros", "tmux panes", "ssh agent", "css grid")):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} misbehaved once\n\n## Solution\nRead the manual of {topic}.\n",
        )
    (repo / "src" / "billing").mkdir(parents=True)
    (repo / RETRY).write_text("def retry(): ...\n")
    assert cli("agent", "install", "cursor").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons, code and hooks")
    return store


def run_hook(repo: Path, event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The installed command of ``event``, run from the workspace root as Cursor runs it."""
    command = json.loads((repo / ".cursor/hooks.json").read_text())["hooks"][event][-1]["command"]
    path = os.pathsep.join([str(Path(reliora_executable()).parent), os.environ["PATH"]])
    return subprocess.run(
        ["sh", "-c", command],
        cwd=repo,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, "CURSOR_PROJECT_DIR": str(repo)},
        timeout=60,
    )


def common(repo: Path, event: str, conversation: str = CONVERSATION) -> dict[str, Any]:
    return {
        "conversation_id": conversation,
        "generation_id": "f2a9c0d4-1b7e-4c55-a0e2-6d3b8e71c4aa",
        "model": "composer-1",
        "hook_event_name": event,
        "cursor_version": "2.3.41",
        "workspace_roots": [str(repo)],
        "user_email": None,
    }


def tool(
    repo: Path, name: str, tool_input: Any, conversation: str = CONVERSATION
) -> dict[str, Any]:
    return {
        **common(repo, "postToolUse", conversation),
        "tool_name": name,
        "tool_input": tool_input,
        "tool_output": json.dumps({"content": "def retry(): ...\n"}),
        "cwd": str(repo),
    }


def context(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert list(document) == ["additional_context"]  # Cursor's documented output field
    text = document["additional_context"]
    assert isinstance(text, str)
    return text


def log_lines(cli: Cli) -> list[str]:
    lines: list[str] = cli.json("agent", "status")["hookLog"]
    return lines


def test_session_start_briefs_on_the_branch_changes(lessons: Store, repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    (repo / RETRY).write_text("def retry(attempts=5): ...\n")
    git(repo, "commit", "-q", "-am", "retry: cap attempts")
    payload = {
        **common(repo, "sessionStart"),
        "is_background_agent": False,
        "composer_mode": "agent",
    }
    assert "billing-retry-backoff" in context(run_hook(repo, "sessionStart", payload))


def test_reading_a_file_gets_its_lesson_once_per_conversation(lessons: Store, repo: Path) -> None:
    read = tool(repo, "Read", {"file_path": str(repo / RETRY)})
    assert "jittered exponential backoff" in context(run_hook(repo, "postToolUse", read))
    again = run_hook(repo, "postToolUse", read)
    assert (again.returncode, again.stdout) == (0, "")
    other = tool(repo, "Read", {"file_path": str(repo / RETRY)}, conversation="another")
    assert "billing-retry-backoff" in context(run_hook(repo, "postToolUse", other))


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Write", {"file_path": RETRY, "content": "def retry(): pass\n"}),
        ("Edit", {"path": RETRY, "old_string": "...", "new_string": "pass"}),
        ("StrReplace", json.dumps({"file_path": RETRY, "old_string": "...", "new_string": "p"})),
    ],
)
def test_each_file_tool_gets_the_lesson(
    lessons: Store, repo: Path, name: str, tool_input: Any
) -> None:
    assert "billing-retry-backoff" in context(
        run_hook(repo, "postToolUse", tool(repo, name, tool_input))
    )


def test_other_tools_print_nothing_and_other_events_are_logged(
    lessons: Store, repo: Path, cli: Cli
) -> None:
    shell = tool(repo, "Shell", {"command": f"cat {RETRY}", "cwd": str(repo)})
    done = run_hook(repo, "postToolUse", shell)
    assert (done.returncode, done.stdout) == (0, "")
    assert log_lines(cli) == []
    prompt = {**common(repo, "beforeSubmitPrompt"), "prompt": "fix retries", "attachments": []}
    done = run_hook(repo, "sessionStart", prompt)  # no context to give there: never installed
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    lines = log_lines(cli)
    assert len(lines) == 1 and "unknown event beforeSubmitPrompt" in lines[0], lines


def test_the_claude_code_hooks_cursor_also_runs_stay_silent(
    lessons: Store, repo: Path, cli: Cli
) -> None:
    """Cursor runs the hooks of .claude/settings.json too, with its own common fields."""
    payload = {
        **common(repo, "PreToolUse"),
        "session_id": CONVERSATION,
        "transcript_path": None,
        "cwd": str(repo),
        "tool_name": "Read",
        "tool_input": {"file_path": str(repo / RETRY)},
    }
    done = cli("hook", "--client", "claude-code", input=json.dumps(payload))
    assert (done.returncode, done.stdout) == (0, "")
    assert log_lines(cli) == []
    read = tool(repo, "Read", {"file_path": str(repo / RETRY)})
    assert "billing-retry-backoff" in context(run_hook(repo, "postToolUse", read))


def test_todo_names_the_workspace_trust_and_the_server_approval(repo: Path) -> None:
    steps = cursor.todo(repo)
    assert any("trusted workspace" in step for step in steps)
    assert any("mcp enable reliora" in step for step in steps)
