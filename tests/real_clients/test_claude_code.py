"""Claude Code itself, headless, against a mock Anthropic API: what reaches the model (SPEC §14.1).

A temporary repository gets a store, two lessons and `reliora agent install claude-code`;
`claude -p` then runs in it with the project's hooks and `.mcp.json` server, and the mock
model (tests/real_clients/anthropic_api.py) reads src/billing.py and answers. The requests it
logged are what the model saw.
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
from tests.conftest import Cli, git, reliora_executable
from tests.real_clients import anthropic_api
from tests.real_clients.mock_model import MockModel, find_binary
from tests.real_clients.project import Lesson, Project, make_project, record
from tests.real_clients.standing_cost import (
    MOST,
    instruction_chars,
    reliora_chars,
    report,
    tool_chars,
)

FINAL_TEXT = "Done: the mock model's final answer"
#: The reliora MCP tools the first request must offer (Claude Code prefixes them).
MCP_TOOLS = {f"mcp__reliora__{name}" for name in LEAN_TOOLS}
#: A prompt no lesson of the project fits: what Reliora costs it is its standing cost.
UNRELATED = "Add a docstring to the total function"
CLAUDE_TIMEOUT = 90


@pytest.fixture
def project(repo: Path, cli: Cli) -> Project:
    """A committed repository with a store, two lessons and Claude Code's project files."""
    return make_project(repo, cli, ("claude-code",))


def claude_env(model: MockModel, home: Path) -> dict[str, str]:
    """Headless Claude Code on the mock model: no login, no traffic but to 127.0.0.1."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("ANTHROPIC_", "CLAUDE_")) and "proxy" not in name.lower()
    }
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        ANTHROPIC_BASE_URL=model.url,
        ANTHROPIC_API_KEY="mock-key",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        # MCP tools go in `tools` of every request, not behind the ToolSearch tool
        # (2.1.332 defers them by default and names them in a system message).
        ENABLE_TOOL_SEARCH="false",
        # `claude -p` holds the first request for the MCP servers about 2.5 s, then sends it
        # without their tools; on a loaded test machine `reliora mcp` can start slower than
        # that. The test is that the server starts and lists its tools; its start-up time
        # is measured elsewhere (SPEC §14.1: initialize within 0.5 s).
        CLAUDE_CODE_MCP_STARTUP_WAIT_MS="30000",
        # The hooks run `reliora` from PATH, as in a clone with reliora installed.
        PATH=os.pathsep.join([str(Path(reliora_executable()).parent), os.environ.get("PATH", "")]),
    )
    return env


def run_claude(
    project: Project, prompt: str, home: Path, extra_env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Run `claude -p PROMPT` to its end; return the bodies of the conversation's turns."""
    claude = find_binary("claude")
    routes = anthropic_api.routes(str(project.root / "src" / "billing.py"), FINAL_TEXT)
    with MockModel(routes) as model:
        command = [str(claude), "-p", prompt, "--output-format", "json", "--allowedTools", "Read"]
        try:
            done = subprocess.run(
                command,
                cwd=project.root,
                env={**claude_env(model, home), **(extra_env or {})},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CLAUDE_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            paths = [request.path for request in model.requests]
            pytest.fail(f"claude ran past {CLAUDE_TIMEOUT} s; the mock model saw {paths}")
        requests = model.requests
        assert model.errors == []
    assert done.returncode == 0, done.stderr + done.stdout
    result = json.loads(done.stdout)
    assert (result.get("is_error"), result.get("result")) == (False, FINAL_TEXT), done.stdout
    assert [request.path for request in requests if not request.routed] == []
    turns = anthropic_api.turns(requests)
    assert len(turns) >= 2 and anthropic_api.read_position(turns[-1]) is not None
    return turns


def after_read(body: dict[str, Any]) -> str:
    """The text of the messages that follow the scripted Read in a request."""
    position = anthropic_api.read_position(body)
    assert position is not None
    return "\n".join(anthropic_api.message_texts(body)[position + 1 :])


def repeated_lines(text: str, lesson: Lesson) -> list[str]:
    """Lines naming the lesson that a request holds more than once (a lesson pushed twice)."""
    naming = (line for line in text.splitlines() if lesson.id in line or lesson.marker in line)
    lines = Counter(naming)
    return [line for line, count in lines.items() if count > 1]


def test_claude_code_gets_the_prompt_lesson_the_file_lesson_and_the_tools(
    project: Project, tmp_path: Path
) -> None:
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    turns = run_claude(project, prompt, tmp_path / "home")
    first, last = turns[0], turns[-1]
    assert project.invoice.id in anthropic_api.request_text(first)
    assert set(anthropic_api.tool_names(first)) >= MCP_TOOLS
    # The lesson about the file arrives with the Read, in full (its solution).
    assert project.billing.marker in after_read(last)
    last_text = anthropic_api.request_text(last)
    for lesson in (project.invoice, project.billing):
        assert len(anthropic_api.pushed_by(last_text, lesson.marker)) <= 1, lesson
        assert repeated_lines(last_text, lesson) == []


def test_claude_code_gets_a_lesson_once_from_session_start_prompt_and_read(
    project: Project, tmp_path: Path
) -> None:
    """On a branch that changed src/billing.py, its lesson comes at session start; the
    prompt about billing and the Read of the file do not push it again."""
    git(project.root, "checkout", "-q", "-b", "integer-cents")
    billing = project.root / "src" / "billing.py"
    billing.write_text(
        "def total(items):\n    return sum(item.price_cents for item in items)\n",
        encoding="utf-8",
    )
    git(project.root, "commit", "-q", "-am", "sum the cents")
    turns = run_claude(
        project,
        "Make the billing module add up prices in integer cents, never floats",
        tmp_path / "home",
    )
    first, last = turns[0], turns[-1]
    assert "SessionStart" in anthropic_api.pushed_by(
        anthropic_api.request_text(first), project.billing.id
    )
    last_text = anthropic_api.request_text(last)
    # Where each full copy came from, e.g. ["SessionStart", "PreToolUse:Read"].
    assert len(anthropic_api.pushed_by(last_text, project.billing.marker)) == 1
    assert repeated_lines(last_text, project.billing) == []


def test_a_personal_install_alone_brings_the_lesson_and_the_tools(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    """No project file: `agent install --personal claude-code` writes .claude/settings.local.json
    (kept out of git) and the local MCP scope of the person's .claude.json (SPEC §14.3)."""
    project = make_project(repo, cli, ())
    home = tmp_path / "home"
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    installed = cli("agent", "install", "--personal", "claude-code", env=env)
    assert installed.returncode == 0, installed.stderr
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    first = run_claude(project, prompt, home)[0]
    text = anthropic_api.request_text(first)
    assert project.invoice.marker in text or project.invoice.id in text
    assert "Lessons from past work (Reliora)" in text  # the instructions, with session start
    assert set(anthropic_api.tool_names(first)) >= MCP_TOOLS
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_clone_without_reliora_shows_no_failed_server(
    project: Project, tmp_path: Path
) -> None:
    """A contributor without `reliora` (SPEC §14.3): the hooks print nothing, and the project
    server answers the handshake (one tool saying it is not installed) instead of failing."""
    claude = find_binary("claude")
    routes = anthropic_api.routes(str(project.root / "src" / "billing.py"), FINAL_TEXT)
    with MockModel(routes) as model:
        env = claude_env(model, tmp_path / "home")
        reliora_dir = str(Path(reliora_executable()).parent)
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != reliora_dir)
        done = subprocess.run(
            [str(claude), "-p", "Fix the rounding of invoice totals", "--output-format",
             "stream-json", "--verbose", "--allowedTools", "Read"],
            cwd=project.root, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=CLAUDE_TIMEOUT,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    (init,) = [e for e in events if e.get("type") == "system" and e.get("subtype") == "init"]
    assert {"name": "reliora", "status": "connected", "source": "project"} in init["mcp_servers"]
    ours = [t for t in init.get("tools", []) if t.startswith("mcp__reliora")]
    assert ours == ["mcp__reliora__not_installed"]  # it says why there are no lessons
    assert "reliora" not in done.stderr



#: A solution with a Python block (a `#` comment), a shell continuation, JSX and a link.
CODE_SOLUTION = (
    "Round once at the end:\n\n```python\ntotal = sum(lines)  # not per line\n"
    "return total.quantize(CENT)\n```\n\nDeploy with\n\n```sh\n./deploy.sh --env prod \\\n"
    "  --wait\n```\n\nThe form keeps `<Total value={a => a < b} />` "
    "([docs](https://example.com/round)). MARMOT-9."
)


def test_the_model_reads_a_pushed_lesson_as_the_record_says_it(
    project: Project, tmp_path: Path
) -> None:
    # Found through its asked-as line only: the prompt shares no word with its title.
    record(
        Cli(project.root),
        {
            "title": "Ledger sums rounded once with quantize",
            "task": "ledger sums are a cent off after the quarterly import",
            "solution": CODE_SOLUTION,
            "askedAs": ["the quarterly import leaves the ledger sums a cent off"],
        },
        "MARMOT-9",
    )
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "a lesson with code")
    prompt = "the quarterly import leaves the ledger sums a cent off, fix it"
    turns = run_claude(project, prompt, tmp_path / "home")
    text = anthropic_api.request_text(turns[0])
    assert f"What worked: {CODE_SOLUTION}" in text  # blocks, line breaks and characters kept


def test_what_reliora_adds_to_a_request_without_a_lesson_stays_small(
    project: Project, tmp_path: Path
) -> None:
    """The tools and the CLAUDE.md block, paid on every turn: at most 4,000 characters."""
    first = run_claude(project, UNRELATED, tmp_path / "home")[0]
    text = anthropic_api.request_text(first)
    assert project.invoice.id not in text and project.billing.id not in text
    assert {n for n in anthropic_api.tool_names(first) if "reliora" in n} == MCP_TOOLS
    tools, said = tool_chars(first), instruction_chars(text)
    assert tools > 0 and said > 0  # both are there, and counted
    report("claude-code", first, text)
    assert reliora_chars(first, text) <= MOST, (tools, said)


def test_with_an_off_switch_a_personal_install_adds_nothing(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    """RELIORA_AGENT=off: no push, no instructions, and the server offers no tools."""
    project = make_project(repo, cli, ())
    home = tmp_path / "home"
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    assert cli("agent", "install", "--personal", "claude-code", env=env).returncode == 0
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    first = run_claude(project, prompt, home, {"RELIORA_AGENT": "off"})[0]
    text = anthropic_api.request_text(first)
    assert [n for n in anthropic_api.tool_names(first) if "reliora" in n] == []
    assert project.invoice.marker not in text and project.invoice.id not in text
    assert reliora_chars(first, text) == 0
