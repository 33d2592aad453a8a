"""GitHub Copilot's project files and hooks: install keeps other people's bytes, the installed
hook command answers each event Copilot sends with its documented output.

The hook inputs are what Copilot CLI 1.0.102 wrote to a hook's stdin (captured with a hook
that logs stdin): no event name, camelCase fields, ``toolArgs`` an object (or the patch text
for apply_patch). tests/real_clients/test_copilot.py runs the client itself.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliora_git.operations.agents.clients import copilot
from reliora_git.operations.agents.clients.base import hook_command
from reliora_git.operations.agents.files import MCP_SERVER
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git, reliora_executable

FILES = [".github/hooks/reliora.json", ".mcp.json", ".github/copilot-instructions.md"]
#: Someone's own hooks in our file's name, their MCP server, their instructions.
HOOKS = """{
  "version": 1,
  "hooks": {
    "postToolUse": [{"type": "command", "bash": "./scripts/lint.sh", "timeoutSec": 5}],
    "sessionEnd": [{"type": "command", "bash": "echo done >> .log"}]
  }
}
"""
MCP = '{"mcpServers": {"db": {"command": "npx", "args": ["-y", "@acme/db-mcp"]}}}\n'
INSTRUCTIONS = "# Copilot instructions\n\nUse tabs. Run `make test` before pushing.\n"
OTHER_HOOKS = '{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "true"}]}}'
RETRY = "src/billing/retry.py"
SESSION = "c7192af0-f5d5-423f-8909-61b04677374e"


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def snapshot(repo: Path, names: list[str]) -> dict[str, bytes | None]:
    return {n: (repo / n).read_bytes() if (repo / n).exists() else None for n in names}


def states(cli: Cli) -> dict[str, str]:
    status = cli.json("agent", "status")
    return {f["path"]: f["state"] for f in status["files"] if f["client"] == "copilot"}


def test_install_keeps_their_bytes_twice_changes_nothing_uninstall_restores_them(
    repo: Path, cli: Cli
) -> None:
    mine = {
        ".github/hooks/reliora.json": HOOKS,
        ".mcp.json": MCP,
        ".github/copilot-instructions.md": INSTRUCTIONS,
    }
    write(repo, {**mine, ".github/hooks/lint.json": OTHER_HOOKS})
    before = snapshot(repo, [*FILES, ".github/hooks/lint.json"])
    assert cli("agent", "install", "copilot").returncode == 0
    installed = snapshot(repo, [*FILES, ".github/hooks/lint.json"])
    assert installed[".github/hooks/lint.json"] == OTHER_HOOKS.encode()
    hooks = json.loads((repo / ".github/hooks/reliora.json").read_text())
    assert hooks["version"] == 1
    assert hooks["hooks"]["postToolUse"][0] == json.loads(HOOKS)["hooks"]["postToolUse"][0]
    assert hooks["hooks"]["sessionEnd"] == json.loads(HOOKS)["hooks"]["sessionEnd"]
    ours = hooks["hooks"]["postToolUse"][1]
    assert ours["bash"] == hook_command("copilot")
    assert ours["matcher"] == "view|edit|create|apply_patch" and ours["timeoutSec"] == 10
    for event in ("sessionStart", "userPromptSubmitted"):
        assert hooks["hooks"][event] == [copilot.HOOK_ENTRY]
    assert json.loads((repo / ".mcp.json").read_text())["mcpServers"]["db"]["command"] == "npx"
    text = (repo / ".github/copilot-instructions.md").read_text()
    assert text.startswith(INSTRUCTIONS) and "## Lessons from past work (Reliora)" in text
    assert states(cli) == dict.fromkeys(FILES, "installed")

    assert cli("agent", "install", "copilot").returncode == 0
    assert snapshot(repo, [*FILES, ".github/hooks/lint.json"]) == installed
    assert cli("agent", "uninstall", "copilot").returncode == 0
    assert snapshot(repo, [*FILES, ".github/hooks/lint.json"]) == before
    assert states(cli) == dict.fromkeys(FILES, "not installed")


def test_a_fresh_repository_gets_the_files_and_uninstall_removes_them(repo: Path, cli: Cli) -> None:
    assert states(cli) == dict.fromkeys(FILES, "absent")
    assert cli("agent", "install", "copilot").returncode == 0
    hooks = json.loads((repo / ".github/hooks/reliora.json").read_text())
    assert list(hooks) == ["version", "hooks"]
    assert list(hooks["hooks"]) == ["sessionStart", "userPromptSubmitted", "postToolUse"]
    assert json.loads((repo / ".mcp.json").read_text()) == {
        "mcpServers": {"reliora": MCP_SERVER}
    }
    assert cli("agent", "uninstall", "copilot").returncode == 0
    assert snapshot(repo, FILES) == dict.fromkeys(FILES)


def test_a_hook_taken_out_by_hand_shows_as_partial(repo: Path, cli: Cli) -> None:
    assert cli("agent", "install", "copilot").returncode == 0
    path = repo / ".github/hooks/reliora.json"
    document = json.loads(path.read_text())
    del document["hooks"]["postToolUse"]
    path.write_text(json.dumps(document, indent=2) + "\n")
    assert states(cli)[".github/hooks/reliora.json"] == "partial"
    assert cli("agent", "install", "copilot").returncode == 0
    assert states(cli)[".github/hooks/reliora.json"] == "installed"


def test_the_server_is_shared_with_claude_code_in_one_entry(repo: Path, cli: Cli) -> None:
    """Copilot CLI reads .mcp.json, and skips .github/mcp.json when .mcp.json exists."""
    assert cli("agent", "install", "claude-code", "copilot").returncode == 0
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["reliora"]
    assert cli("agent", "uninstall", "copilot").returncode == 0
    assert "reliora" in json.loads((repo / ".mcp.json").read_text())["mcpServers"]


# --- the installed hook command, given what Copilot CLI sends --------------------------------


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path, cli: Cli) -> Store:
    """A store with one lesson about the retry code (among unrelated notes), and the hooks."""
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
    assert cli("agent", "install", "copilot").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lessons, code and hooks")
    return store


def installed_command(repo: Path, event: str) -> str:
    hooks = json.loads((repo / ".github/hooks/reliora.json").read_text())["hooks"]
    command = hooks[event][0]["bash"]
    assert isinstance(command, str)
    return command


def run_hook(repo: Path, event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The installed command of ``event``, run as Copilot runs it: bash, from the repository."""
    path = os.pathsep.join([str(Path(reliora_executable()).parent), os.environ["PATH"]])
    return subprocess.run(
        ["bash", "-c", installed_command(repo, event)],
        cwd=repo,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, "COPILOT_CLI": "1"},
        timeout=60,
    )


def base(repo: Path, session: str = SESSION) -> dict[str, Any]:
    return {"sessionId": session, "timestamp": 1796407867946, "cwd": str(repo)}


def context(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert list(document) == ["additionalContext"]  # Copilot's documented output field
    text = document["additionalContext"]
    assert isinstance(text, str)
    return text


def log_lines(cli: Cli) -> list[str]:
    lines: list[str] = cli.json("agent", "status")["hookLog"]
    return lines


def view(repo: Path, path: str, session: str = SESSION) -> dict[str, Any]:
    return {
        **base(repo, session),
        "toolName": "view",
        "toolArgs": {"path": path},
        "toolResult": {"resultType": "success", "textResultForLlm": "def retry(): ...\n"},
    }


def test_the_prompt_gets_the_lessons_that_fit_it(lessons: Store, repo: Path, cli: Cli) -> None:
    prompt = "invoices fail: the payment provider rate limits our retries"
    payload = {**base(repo), "prompt": prompt}
    text = context(run_hook(repo, "userPromptSubmitted", payload))
    assert "billing-retry-backoff" in text
    assert log_lines(cli) == []


def test_session_start_briefs_on_the_branch_changes(lessons: Store, repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    (repo / RETRY).write_text("def retry(attempts=5): ...\n")
    git(repo, "commit", "-q", "-am", "retry: cap attempts")
    payload = {**base(repo), "source": "new", "initialPrompt": "tidy the retry code"}
    assert "billing-retry-backoff" in context(run_hook(repo, "sessionStart", payload))


@pytest.mark.parametrize("path", [RETRY, "ABSOLUTE"])
def test_viewing_a_file_gets_its_lesson_once_per_session(
    lessons: Store, repo: Path, path: str
) -> None:
    named = str(repo / RETRY) if path == "ABSOLUTE" else path
    assert "jittered exponential backoff" in context(
        run_hook(repo, "postToolUse", view(repo, named))
    )
    again = run_hook(repo, "postToolUse", view(repo, named))
    assert (again.returncode, again.stdout) == (0, "")
    other = run_hook(repo, "postToolUse", view(repo, named, session="another-session"))
    assert "billing-retry-backoff" in context(other)


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("edit", {"path": RETRY, "old_str": "...", "new_str": "pass"}),
        ("create", {"path": RETRY, "file_text": "def retry(): pass\n"}),
        # toolArgs as the hooks reference documents it: a JSON string.
        ("edit", json.dumps({"path": RETRY, "old_str": "...", "new_str": "pass"})),
        # GPT-5 models edit through apply_patch; toolArgs is the patch itself.
        (
            "apply_patch",
            "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n"
            f"*** Update File: {RETRY}\n@@\n-def retry(): ...\n+def retry(): pass\n"
            "*** End Patch\n",
        ),
    ],
)
def test_each_file_tool_gets_the_lesson(lessons: Store, repo: Path, tool: str, args: Any) -> None:
    payload = {
        **base(repo),
        "toolName": tool,
        "toolArgs": args,
        "toolResult": {"resultType": "success", "textResultForLlm": "ok"},
    }
    assert "billing-retry-backoff" in context(run_hook(repo, "postToolUse", payload))


def test_other_tools_and_events_print_nothing(lessons: Store, repo: Path, cli: Cli) -> None:
    bash = {
        **base(repo),
        "toolName": "bash",
        "toolArgs": {"command": f"cat {RETRY}", "description": "read it"},
        "toolResult": {"resultType": "success", "textResultForLlm": "def retry(): ...\n"},
    }
    done = run_hook(repo, "postToolUse", bash)
    assert (done.returncode, done.stdout) == (0, "")
    assert log_lines(cli) == []
    session_end = {**base(repo), "reason": "complete"}
    done = run_hook(repo, "sessionStart", session_end)  # an event we never installed
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    lines = log_lines(cli)
    assert len(lines) == 1 and "not a sessionStart" in lines[0], lines


def test_the_claude_code_hooks_copilot_also_runs_stay_silent(
    lessons: Store, repo: Path, cli: Cli
) -> None:
    """What Copilot CLI sends to the hooks of .claude/settings.json (1.0.102): Claude's field
    names, its own tool names mapped to Claude's, no transcript_path. Copilot's own hooks push;
    these print nothing and mark nothing as pushed."""
    copied = {
        "hook_event_name": "PreToolUse",
        "session_id": SESSION,
        "timestamp": "2026-12-04T18:11:25.022Z",
        "cwd": str(repo),
        "tool_name": "Read",
        "tool_input": {"path": RETRY},
    }
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": SESSION,
        "timestamp": "2026-12-04T18:11:24.906Z",
        "cwd": str(repo),
        "prompt": "invoices fail: the payment provider rate limits our retries",
    }
    for payload in (copied, prompt):
        done = cli("hook", "--client", "claude-code", input=json.dumps(payload))
        assert (done.returncode, done.stdout) == (0, ""), payload
    assert log_lines(cli) == []
    # Nothing was marked as pushed: Copilot's own hook still brings the lesson in.
    assert "billing-retry-backoff" in context(run_hook(repo, "postToolUse", view(repo, RETRY)))


def test_patch_files_names_each_added_updated_or_moved_file_once() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@\n-x\n+y\n"
        "*** Add File: c.py\n+z\n*** Delete File: d.py\n*** Update File: a.py\n*** End Patch\n"
    )
    assert copilot.patch_files(patch) == ("a.py", "b.py", "c.py")


def test_todo_names_the_trust_prompt_and_the_cloud_agent_setup(repo: Path) -> None:
    steps = copilot.todo(repo)
    assert any("--trust-folder" in step for step in steps)
    assert any("copilot-setup-steps.yml" in step for step in steps)
    setup = "steps:\n  - run: pipx install reliora-git\n"
    write(repo, {".github/workflows/copilot-setup-steps.yml": setup})
    assert not any("copilot-setup-steps.yml" in step for step in copilot.todo(repo))
