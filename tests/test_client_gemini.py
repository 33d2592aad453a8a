"""Gemini CLI's files and hooks: `.gemini/settings.json` and AGENTS.md kept byte for byte, and
each event Gemini CLI sends answered through the installed `reliora hook --client gemini`.

The event inputs copy what Gemini CLI 0.61 sends (logged from the real client): common
``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``; then
``source`` (SessionStart), ``prompt`` (BeforeAgent) or ``tool_name``, ``tool_input`` and
``tool_response`` (AfterTool).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reliora_git.operations.agents.clients import gemini
from reliora_git.operations.agents.clients.base import HookInputError
from reliora_git.operations.agents.files import MCP_SERVER, MD_BEGIN
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

SETTINGS_PATH = ".gemini/settings.json"
FILES = [SETTINGS_PATH, "AGENTS.md"]
RETRY = "src/billing/retry.py"
LESSON = "billing-retry-backoff"
AGENTS = "# Agents\n\nUse tabs, not spaces.\n"

#: People's settings as they come: comments are not JSON, so none; one of each way
#: context.fileName is written (absent, a name, a list), their own hooks and servers.
THEIR_SETTINGS = {
    "a name, two-space indents": """{
  "theme": "GitHub",
  "context": {
    "fileName": "CONTEXT.md"
  },
  "hooks": {
    "AfterTool": [
      {
        "matcher": "run_shell_command",
        "hooks": [{"type": "command", "command": "./scripts/audit.sh", "timeout": 5000}]
      }
    ]
  },
  "mcpServers": {"db": {"command": "npx", "args": ["-y", "@acme/db-mcp"]}}
}
""",
    "a list, tabs": '{\n\t"context": {\n\t\t"fileName": ["GEMINI.md", "docs/STYLE.md"]\n\t}\n}\n',
    "one line, no fileName": '{"context": {"importFormat": "tree"}, "general": {"vimMode": true}}',
    "no context at all": '{\n    "ui": {"hideBanner": true}\n}\n',
}


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def snapshot(repo: Path) -> dict[str, bytes | None]:
    return {n: (repo / n).read_bytes() if (repo / n).exists() else None for n in FILES}


def only_insertions(before: str, after: str) -> bool:
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return all(tag in ("equal", "insert") for tag, *_ in matcher.get_opcodes())


def file_names(repo: Path) -> Any:
    return json.loads((repo / SETTINGS_PATH).read_text())["context"]["fileName"]


@pytest.mark.parametrize("kind", list(THEIR_SETTINGS))
def test_install_keeps_their_settings_and_uninstall_gives_the_bytes_back(
    repo: Path, cli: Cli, kind: str
) -> None:
    theirs = THEIR_SETTINGS[kind]
    write(repo, {SETTINGS_PATH: theirs, "AGENTS.md": AGENTS})
    original = snapshot(repo)
    done = cli("agent", "install", "gemini")
    assert done.returncode == 0, done.stderr
    settings = (repo / SETTINGS_PATH).read_text()
    assert only_insertions(theirs, settings)
    assert only_insertions(AGENTS, (repo / "AGENTS.md").read_text())
    value, before = json.loads(settings), json.loads(theirs)
    for key in set(before) - {"hooks", "mcpServers", "context"}:
        assert value[key] == before[key]
    names = file_names(repo)
    assert "AGENTS.md" in names
    held = before.get("context", {}).get("fileName", "GEMINI.md")
    assert all(name in names for name in ([held] if isinstance(held, str) else held))
    if "hooks" in before:
        assert value["hooks"]["AfterTool"][0] == before["hooks"]["AfterTool"][0]
    if "mcpServers" in before:
        assert value["mcpServers"]["db"] == before["mcpServers"]["db"]

    installed = snapshot(repo)
    again = cli("agent", "install", "gemini", "--json")
    assert {f["action"] for f in json.loads(again.stdout)["files"]} == {"unchanged"}
    assert snapshot(repo) == installed

    assert cli("agent", "uninstall", "gemini").returncode == 0
    assert snapshot(repo) == original


def test_a_new_settings_file_has_the_documented_shape(repo: Path, cli: Cli) -> None:
    done = cli("agent", "install", "gemini", "--json")
    assert {f["action"] for f in json.loads(done.stdout)["files"]} == {"created"}
    settings = json.loads((repo / SETTINGS_PATH).read_text())
    hooks = settings["hooks"]
    assert set(hooks) == {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"}
    for groups in hooks.values():
        (group,) = groups
        (entry,) = group["hooks"]
        assert entry["type"] == "command"
        assert "reliora hook --client gemini" in entry["command"]
        # Milliseconds: Gemini CLI would give up on a hook of "10" at once.
        assert isinstance(entry["timeout"], int) and entry["timeout"] >= 5000
    for lifecycle in ("SessionStart", "BeforeAgent", "AfterAgent"):
        assert "matcher" not in hooks[lifecycle][0]
    matcher = hooks["AfterTool"][0]["matcher"]
    for tool in ("read_file", "read_many_files", "write_file", "replace"):
        assert re.search(matcher, tool)  # Gemini CLI tests the tool name with RegExp.test
    for tool in ("run_shell_command", "mcp_reliora_read_file", "replace_all", "glob"):
        assert not re.search(matcher, tool)
    assert settings["mcpServers"] == {"reliora": MCP_SERVER}
    assert settings["context"]["fileName"] == ["AGENTS.md", "GEMINI.md"]
    assert (repo / "AGENTS.md").read_text().count(MD_BEGIN) == 1

    assert cli("agent", "uninstall", "gemini").returncode == 0
    assert sorted(p.name for p in repo.iterdir()) == [".git"]


def test_codex_and_gemini_share_one_block_in_agents_md(repo: Path, cli: Cli) -> None:
    write(repo, {"AGENTS.md": AGENTS})
    assert cli("agent", "install", "gemini", "codex").returncode == 0
    assert (repo / "AGENTS.md").read_text().count(MD_BEGIN) == 1
    assert cli("agent", "uninstall", "gemini").returncode == 0
    assert MD_BEGIN in (repo / "AGENTS.md").read_text()  # Codex still reads it
    assert not (repo / SETTINGS_PATH).exists()


def gemini_states(cli: Cli) -> dict[str, str]:
    status = cli.json("agent", "status")
    return {f["path"]: f["state"] for f in status["files"] if f["client"] == "gemini"}


def test_status_names_each_gemini_file_and_a_half_removed_install(repo: Path, cli: Cli) -> None:
    assert gemini_states(cli) == {SETTINGS_PATH: "absent", "AGENTS.md": "absent"}
    cli("agent", "install", "gemini")
    assert gemini_states(cli) == {SETTINGS_PATH: "installed", "AGENTS.md": "installed"}
    assert "gemini" in cli.json("agent", "status")["clients"]
    path = repo / SETTINGS_PATH
    settings = json.loads(path.read_text())
    del settings["mcpServers"]
    path.write_text(json.dumps(settings, indent=2))
    assert gemini_states(cli)[SETTINGS_PATH] == "partial"
    # install puts back only what is missing
    cli("agent", "install", "gemini")
    assert gemini_states(cli)[SETTINGS_PATH] == "installed"


def test_a_file_name_that_is_not_a_name_is_refused_and_left_alone(repo: Path, cli: Cli) -> None:
    broken = '{"context": {"fileName": 7}}'
    write(repo, {SETTINGS_PATH: broken})
    done = cli("agent", "install", "gemini")
    assert done.returncode == 2 and "context.fileName" in done.stderr
    assert (repo / SETTINGS_PATH).read_text() == broken


# --- the hook, run as Gemini CLI runs it ------------------------------------------------------


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path, cli: Cli) -> Store:
    """A committed store with one lesson about the retry code, and Gemini CLI's files."""
    write_record(
        LESSON,
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
    assert cli("agent", "install", "gemini").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons, code and Gemini CLI's files")
    return store


def gemini_event(repo: Path, name: str, session: str, **fields: Any) -> str:
    document: dict[str, Any] = {
        "session_id": session,
        "transcript_path": str(repo / ".gemini-home/chats/session.jsonl"),
        "cwd": str(repo),
        "hook_event_name": name,
        "timestamp": "2026-12-04T18:13:10.218Z",
    }
    document.update(fields)
    return json.dumps(document)


def after_tool(repo: Path, session: str, tool: str, tool_input: dict[str, Any]) -> str:
    response = {"llmContent": "def retry(): ...\n", "returnDisplay": ""}
    return gemini_event(
        repo, "AfterTool", session, tool_name=tool, tool_input=tool_input, tool_response=response
    )


def run_installed_hook(repo: Path, event_name: str, stdin: str) -> subprocess.CompletedProcess[str]:
    """The command of ``event_name`` in the installed settings, run as Gemini CLI runs it:
    ``sh -c`` in the project folder, ``reliora`` from PATH, the event JSON on stdin."""
    settings = json.loads((repo / SETTINGS_PATH).read_text())
    command = settings["hooks"][event_name][0]["hooks"][0]["command"]
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env = {**os.environ, "PATH": path, "GEMINI_PROJECT_DIR": str(repo), "GEMINI_CWD": str(repo)}
    # What is pushed is under test, not how fast: a loaded machine must not hit the deadline.
    env["RELIORA_HOOK_DEADLINE"] = "60"
    return subprocess.run(
        ["sh", "-c", command], cwd=repo, input=stdin, capture_output=True, text=True, env=env
    )


def context_of(done: subprocess.CompletedProcess[str], name: str) -> str:
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == name
    text = output["additionalContext"]
    assert isinstance(text, str)
    return text


def test_before_agent_pushes_the_lessons_of_the_prompt(lessons: Store, repo: Path) -> None:
    prompt = "invoices fail: the payment provider rate limits our retries"
    done = run_installed_hook(
        repo, "BeforeAgent", gemini_event(repo, "BeforeAgent", "s-1", prompt=prompt)
    )
    assert LESSON in context_of(done, "BeforeAgent")


def test_before_agent_reads_the_prompt_without_the_session_start_context(
    lessons: Store, repo: Path
) -> None:
    """Headless, Gemini CLI puts the session-start context in front of the prompt: those
    words are the lessons already pushed, not the task."""
    pushed = "<hook_context>payment provider rate limits invoice retries</hook_context>"
    stdin = gemini_event(repo, "BeforeAgent", "s-2", prompt=f"{pushed}\n\nyes, go ahead")
    done = run_installed_hook(repo, "BeforeAgent", stdin)
    assert (done.returncode, done.stdout) == (0, "")


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("read_file", {"file_path": RETRY}),
        ("read_file", {"file_path": RETRY, "start_line": 1, "end_line": 20}),
        ("read_file", {"absolute_path": f"{{repo}}/{RETRY}"}),
        ("read_many_files", {"include": ["src/**/*.py", RETRY]}),
        ("write_file", {"file_path": f"{{repo}}/{RETRY}", "content": "def retry(): pass\n"}),
        ("replace", {"file_path": RETRY, "old_string": "...", "new_string": "pass"}),
    ],
)
def test_after_tool_pushes_the_lessons_about_the_file(
    lessons: Store, repo: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    arguments = {k: v.format(repo=repo) if isinstance(v, str) else v for k, v in tool_input.items()}
    done = run_installed_hook(repo, "AfterTool", after_tool(repo, f"s-{tool}", tool, arguments))
    assert LESSON in context_of(done, "AfterTool")


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("read_many_files", {"include": ["src/**/*.py", "src/billing/*"]}),  # patterns only
        ("run_shell_command", {"command": f"cat {RETRY}"}),
        ("read_file", {}),
    ],
)
def test_after_tool_without_a_plain_file_path_prints_nothing(
    lessons: Store, repo: Path, cli: Cli, tool: str, tool_input: dict[str, Any]
) -> None:
    done = run_installed_hook(repo, "AfterTool", after_tool(repo, "s-x", tool, tool_input))
    assert (done.returncode, done.stdout) == (0, "")
    assert cli.json("agent", "status")["hookLog"] == []


def test_a_file_is_pushed_once_a_session(lessons: Store, repo: Path) -> None:
    stdin = after_tool(repo, "s-once", "read_file", {"file_path": RETRY})
    assert LESSON in context_of(run_installed_hook(repo, "AfterTool", stdin), "AfterTool")
    again = run_installed_hook(repo, "AfterTool", stdin)
    assert (again.returncode, again.stdout) == (0, "")


def test_session_start_pushes_the_lessons_of_the_branch(lessons: Store, repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    (repo / RETRY).write_text("def retry(attempts=5): ...\n")
    git(repo, "commit", "-q", "-am", "retry: cap attempts")
    stdin = gemini_event(repo, "SessionStart", "s-start", source="startup")
    assert LESSON in context_of(run_installed_hook(repo, "SessionStart", stdin), "SessionStart")


def test_before_tool_is_not_ours_prints_nothing_and_is_logged(
    lessons: Store, repo: Path, cli: Cli
) -> None:
    """Gemini CLI drops the context of BeforeTool: install never asks for it."""
    stdin = gemini_event(
        repo, "BeforeTool", "s-b", tool_name="read_file", tool_input={"file_path": RETRY}
    )
    done = run_installed_hook(repo, "AfterTool", stdin)
    assert (done.returncode, done.stdout) == (0, "")
    (line,) = cli.json("agent", "status")["hookLog"]
    assert "unknown event BeforeTool" in line


# --- the pure parts -----------------------------------------------------------------------------


def test_parse_event_reads_gemini_fields(tmp_path: Path) -> None:
    data = {
        "session_id": "abc",
        "cwd": str(tmp_path),
        "hook_event_name": "AfterTool",
        "tool_name": "read_many_files",
        "tool_input": {"include": ["a.py", "docs/*.md", "b/[x].py", "", 3, "c/d.py"]},
    }
    event = gemini.parse_event(data, Path("/"))
    assert (event.kind, event.name, event.session, event.cwd) == (
        "file",
        "AfterTool",
        "abc",
        tmp_path,
    )
    assert event.files == ("a.py", "c/d.py") and event.reads
    edit = gemini.parse_event(
        {**data, "tool_name": "replace", "tool_input": {"file_path": "x"}}, tmp_path
    )
    assert edit.files == ("x",) and not edit.reads
    start = gemini.parse_event(
        {**data, "hook_event_name": "SessionStart", "source": "startup"}, tmp_path
    )
    assert (start.kind, start.files) == ("session", ())
    prompt = "<hook_context>a\n\nb</hook_context>\n\n<hook_context>c</hook_context>\n\nFix x <b>"
    event = gemini.parse_event(
        {**data, "hook_event_name": "BeforeAgent", "prompt": prompt}, tmp_path
    )
    assert (event.kind, event.prompt) == ("prompt", "Fix x <b>")
    for name in ("BeforeTool", "AfterModel", None):
        with pytest.raises(HookInputError):
            gemini.parse_event({**data, "hook_event_name": name}, tmp_path)


def test_todo_asks_for_a_trusted_folder_until_gemini_trusts_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules_file = tmp_path / "trusted.json"
    monkeypatch.setenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", str(rules_file))
    (line,) = gemini.todo(repo)
    assert "trusted folder" in line
    cases: list[tuple[dict[str, str], bool]] = [
        ({str(repo): "TRUST_FOLDER"}, True),
        ({str(repo.parent): "TRUST_FOLDER"}, True),
        ({str(repo.parent / "sibling"): "TRUST_PARENT"}, True),
        ({str(repo.parent): "TRUST_FOLDER", str(repo): "DO_NOT_TRUST"}, False),
        ({str(repo / "sub"): "TRUST_FOLDER"}, False),
    ]
    for rules, trusted in cases:
        rules_file.write_text(json.dumps(rules))
        assert (gemini.todo(repo) == []) is trusted, rules
    rules_file.write_text("{ not json")
    assert len(gemini.todo(repo)) == 1
