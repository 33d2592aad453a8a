"""GitHub Copilot CLI itself, headless, against a mock model: what reaches the model (SPEC §14.1).

A temporary repository gets a store, two lessons and `reliora agent install copilot`;
`copilot -p` then runs in it, offline and on its own key (BYOK: COPILOT_PROVIDER_BASE_URL,
no GitHub login), with the project's hooks (.github/hooks/reliora.json) and .mcp.json server,
and the mock model (OpenAI Chat Completions, tests/real_clients/chat_completions.py) calls
``view`` on src/billing.py and answers. The requests it logged are what the model saw.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reliora_git.interfaces.mcp_help import LEAN_TOOLS
from tests.conftest import Cli, reliora_executable
from tests.real_clients import chat_completions
from tests.real_clients.mock_model import MockModel, find_binary
from tests.real_clients.project import Lesson, Project, make_project
from tests.real_clients.standing_cost import MOST, instruction_chars, reliora_chars, report

FINAL_TEXT = "Done: the mock model's final answer"
#: Copilot CLI names an MCP tool `<server>-<tool>`.
MCP_TOOLS = {f"reliora-{name}" for name in LEAN_TOOLS}
#: The instruction block's heading (in .github/copilot-instructions.md).
BLOCK_HEADING = "## Lessons from past work (Reliora)"
COPILOT_TIMEOUT = 90


def copilot_env(model: MockModel, home: Path, with_reliora: bool = True) -> dict[str, str]:
    """Headless Copilot CLI on the mock model: no login, no traffic but to 127.0.0.1."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("COPILOT_", "GH_", "GITHUB_", "OTEL_"))
        and "proxy" not in name.lower()
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),  # the executable unpacks itself here (~240 MB)
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        # Bring your own key: the model behind this base URL, no GitHub login.
        COPILOT_PROVIDER_BASE_URL=f"{model.url}/v1",
        COPILOT_MODEL="gpt-4.1",
        # No GitHub authentication, telemetry, web tools, GitHub MCP server or update check.
        COPILOT_OFFLINE="true",
        COPILOT_AUTO_UPDATE="false",
        # The hooks run `reliora` from PATH, as in a clone with reliora installed.
        PATH=os.pathsep.join([str(Path(reliora_executable()).parent), os.environ.get("PATH", "")]),
    )
    if not with_reliora:
        reliora_dir = str(Path(reliora_executable()).parent)
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != reliora_dir)
    return env


def run_copilot(
    project: Project, prompt: str, home: Path, with_reliora: bool = True
) -> list[dict[str, Any]]:
    """Run `copilot -p PROMPT` to its end; return the bodies of the conversation's turns."""
    copilot = find_binary("copilot")
    routes = chat_completions.routes("view", {"path": "src/billing.py"}, FINAL_TEXT)
    with MockModel(routes) as model:
        command = [
            str(copilot),
            "-p",
            prompt,
            "--allow-all-tools",
            "--trust-folder",  # this run only: the project's hooks and MCP server load
            "--silent",
            "--no-auto-update",
            "--disable-client-telemetry",
            "--disable-builtin-mcps",
            "--log-dir",
            str(home / "copilot-logs"),
        ]
        try:
            done = subprocess.run(
                command,
                cwd=project.root,
                env=copilot_env(model, home, with_reliora),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=COPILOT_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            paths = [request.path for request in model.requests]
            pytest.fail(f"copilot ran past {COPILOT_TIMEOUT} s; the mock model saw {paths}")
        requests = model.requests
        assert model.errors == []
    assert done.returncode == 0, done.stderr + done.stdout
    assert FINAL_TEXT in done.stdout, done.stdout + done.stderr
    assert [request.path for request in requests if not request.routed] == []
    turns = [r.body for r in requests if r.path == chat_completions.CHAT and r.body]
    assert len(turns) >= 2 and chat_completions.tool_position(turns[-1]) is not None
    return turns


def after_view(body: dict[str, Any]) -> str:
    """The tool's result and the messages after it (where Copilot puts postToolUse context)."""
    position = chat_completions.tool_position(body)
    assert position is not None
    return "\n".join(chat_completions.message_texts(body)[position:])


def repeated_lines(text: str, lesson: Lesson) -> list[str]:
    """Lines naming the lesson that a request holds more than once (a lesson pushed twice)."""
    naming = (line for line in text.splitlines() if lesson.id in line or lesson.marker in line)
    return [line for line, count in Counter(naming).items() if count > 1]


def assert_pushed_once(turns: list[dict[str, Any]], project: Project) -> None:
    first, last = turns[0], turns[-1]
    # The prompt's lesson reaches the model with the prompt, the reliora tools are offered,
    # and the lesson about the file arrives, in full, with the file.
    assert project.invoice.id in chat_completions.request_text(first)
    assert set(chat_completions.tool_names(first)) >= MCP_TOOLS
    assert project.billing.marker not in chat_completions.request_text(first)
    assert project.billing.marker in after_view(last)
    last_text = chat_completions.request_text(last)
    for lesson in (project.invoice, project.billing):
        assert last_text.count(lesson.marker) <= 1, lesson
        assert repeated_lines(last_text, lesson) == [], lesson


PROMPT = "Invoice totals are off by a cent; fix the rounding of invoice totals"


def test_copilot_gets_the_prompt_lesson_the_file_lesson_the_tools_and_the_block(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    project = make_project(repo, cli, ("copilot",))
    turns = run_copilot(project, PROMPT, tmp_path / "home")
    assert_pushed_once(turns, project)
    system = chat_completions.message_texts(turns[0])[0]
    assert system.count(BLOCK_HEADING) == 1  # from .github/copilot-instructions.md


def test_copilot_with_claude_code_installed_too_gets_each_lesson_once(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    """Copilot CLI runs the Claude Code hooks of .claude/settings.json as well as its own;
    those stay silent, so nothing arrives twice."""
    project = make_project(repo, cli, ("claude-code", "copilot"))
    assert (project.root / ".claude" / "settings.json").exists()
    turns = run_copilot(project, PROMPT, tmp_path / "home")
    assert_pushed_once(turns, project)
    last_text = chat_completions.request_text(turns[-1])
    assert last_text.count(project.invoice.id) == 1
    # Copilot frames what a Claude-format PreToolUse hook adds this way (1.0.102): none came.
    assert "Additional context from preToolUse hook" not in last_text


def test_a_clone_without_reliora_shows_no_failed_server(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    """A contributor without `reliora` (SPEC §14.3): the run ends as usual, no lesson, and the
    log records no MCP server that failed: the entry's fallback answers the handshake."""
    project = make_project(repo, cli, ("copilot",))
    home = tmp_path / "home"
    turns = run_copilot(project, "Fix the rounding of invoice totals", home, with_reliora=False)
    assert project.invoice.marker not in json.dumps(turns[-1])
    logs = "\n".join(p.read_text(errors="replace") for p in (home / "copilot-logs").rglob("*"))
    failed = [line for line in logs.splitlines() if "reliora" in line and "fail" in line.lower()]
    assert failed == [], failed[:5]



def test_what_reliora_adds_to_a_request_without_a_lesson_stays_small(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    """The tools and the copilot-instructions block, paid on every turn: at most 4,000."""
    project = make_project(repo, cli, ("copilot",))
    first = run_copilot(project, "Add a docstring to the total function", tmp_path / "home")[0]
    text = chat_completions.request_text(first)
    assert project.invoice.id not in text and project.billing.id not in text
    assert {n for n in chat_completions.tool_names(first) if "reliora" in n} == MCP_TOOLS
    assert instruction_chars(text) > 0
    report("copilot", first, text)
    assert reliora_chars(first, text) <= MOST
