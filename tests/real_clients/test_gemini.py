"""Gemini CLI itself, headless, against a mock Gemini API: what reaches the model (SPEC §14.1).

A temporary repository gets a store, two lessons and `reliora agent install gemini`;
`gemini -p` then runs in it with the project's `.gemini/settings.json` (hooks, the
`reliora` MCP server, AGENTS.md as a context file), and the mock model
(tests/real_clients/gemini_api.py) reads src/billing.py and answers. The requests it logged
are what the model saw. The person's side is what `agent status` asks of them: the folder
is trusted in ~/.gemini/trustedFolders.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliora_git.interfaces.mcp_help import LEAN_TOOLS
from tests.conftest import Cli, git, reliora_executable
from tests.real_clients import gemini_api
from tests.real_clients.mock_model import MockModel, find_binary
from tests.real_clients.project import Project, make_project
from tests.real_clients.standing_cost import MOST, instruction_chars, reliora_chars, report

#: The reliora MCP tools the first request must offer (Gemini CLI prefixes them).
MCP_TOOLS = {f"mcp_reliora_{name}" for name in LEAN_TOOLS}
#: Named on the command line: with its default ("auto") Gemini CLI first asks a router model.
MODEL = "gemini-2.5-flash"
GEMINI_TIMEOUT = 90
#: The person's settings: an API key (here for the mock), and nothing sent anywhere else —
#: no usage statistics, no telemetry, no update check.
USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


@pytest.fixture
def project(repo: Path, cli: Cli) -> Project:
    """A committed repository with a store, two lessons and Gemini CLI's project files."""
    return make_project(repo, cli, ("gemini",))


def gemini_home(home: Path, project: Path) -> Path:
    """A HOME whose Gemini CLI settings send nothing but to the mock, trusting ``project``."""
    folder = home / ".gemini"
    folder.mkdir(parents=True)
    (folder / "settings.json").write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    rules = {str(project): "TRUST_FOLDER"}
    (folder / "trustedFolders.json").write_text(json.dumps(rules), encoding="utf-8")
    return home


def gemini_env(model: MockModel, home: Path, with_reliora: bool = True) -> dict[str, str]:
    """Headless Gemini CLI on the mock model: an API key, a base URL, a HOME of its own.

    Built from nothing rather than from this process's environment: Gemini CLI reads many
    variables (CI, proxies, GOOGLE_*, GEMINI_*) that would change what it does."""
    node = shutil.which("node")
    # The hooks run `reliora` from PATH.
    path = [str(Path(reliora_executable()).parent)] if with_reliora else []
    path += [str(Path(node).parent)] if node else []
    return {
        "PATH": os.pathsep.join([*path, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "GEMINI_API_KEY": "mock-key",
        "GOOGLE_GEMINI_BASE_URL": model.url,
        "NO_COLOR": "1",
        # What reaches the model is under test, not how fast the hook is: a loaded machine
        # must not make it give up.
        "RELIORA_HOOK_DEADLINE": "60",
        "TERM": "dumb",
        "LANG": "C.UTF-8",
    }


def run_gemini(
    project: Project,
    prompt: str,
    home: Path,
    prepared: bool = False,
    with_reliora: bool = True,
    stderr: list[str] | None = None,
) -> list[Any]:
    """Run `gemini -p PROMPT` to its end; return the bodies of the conversation's turns
    (``prepared``: the HOME's settings are made already; ``stderr`` collects what it says)."""
    binary = find_binary("gemini")
    if not prepared:
        gemini_home(home, project.root)
    with MockModel(gemini_api.ROUTES) as model:
        command = [str(binary), "-m", MODEL, "-p", prompt, "--yolo", "--output-format", "json"]
        try:
            done = subprocess.run(
                command,
                cwd=project.root,
                env=gemini_env(model, home, with_reliora),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=GEMINI_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            paths = [request.path for request in model.requests]
            pytest.fail(f"gemini ran past {GEMINI_TIMEOUT} s; the mock model saw {paths}")
        requests = model.requests
        assert model.errors == []
    assert done.returncode == 0, done.stderr + done.stdout
    if stderr is not None:
        stderr.append(done.stderr)
    result = json.loads(done.stdout)
    assert result.get("response") == gemini_api.FINAL_TEXT, done.stdout
    assert [request.path for request in requests if not request.routed] == []
    turns = gemini_api.turns(requests)
    assert len(turns) >= 2 and gemini_api.tool_result_text(turns[-1])
    return turns


def test_gemini_gets_the_prompt_lesson_the_file_lesson_and_the_tools(
    project: Project, tmp_path: Path
) -> None:
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    turns = run_gemini(project, prompt, tmp_path / "home")
    first, last = turns[0], turns[-1]
    first_text = gemini_api.request_text(first)
    pushed_first = gemini_api.pushed(first)
    assert project.invoice.id in pushed_first and project.billing.id not in pushed_first
    assert set(gemini_api.offered_tools(first)) >= MCP_TOOLS
    # context.fileName: AGENTS.md (and its block) is read as well as GEMINI.md.
    assert "Lessons from past work (Reliora)" in first_text
    # The lesson about the file arrives with the read_file result (AfterTool), in full.
    (read_context,) = gemini_api.hook_contexts(gemini_api.tool_result_text(last))
    assert project.billing.id in read_context and project.billing.marker in read_context
    pushed_last = gemini_api.pushed(last)
    for lesson in (project.invoice, project.billing):
        assert pushed_last.count(lesson.id) == 1, lesson
        assert gemini_api.request_text(last).count(lesson.marker) <= 1, lesson


def test_gemini_gets_a_lesson_once_from_session_start_prompt_and_read(
    project: Project, tmp_path: Path
) -> None:
    """On a branch that changed src/billing.py, its lesson comes at session start; the
    prompt about billing and the read of the file do not push it again."""
    git(project.root, "checkout", "-q", "-b", "integer-cents")
    billing = project.root / "src" / "billing.py"
    billing.write_text(
        "def total(items):\n    return sum(item.price_cents for item in items)\n",
        encoding="utf-8",
    )
    git(project.root, "commit", "-q", "-am", "sum the cents")
    turns = run_gemini(
        project,
        "Make the billing module add up prices in integer cents, never floats",
        tmp_path / "home",
    )
    first, last = turns[0], turns[-1]
    assert project.billing.id in gemini_api.pushed(first)
    last_text = gemini_api.request_text(last)
    assert last_text.count(project.billing.marker) == 1
    assert project.billing.marker not in gemini_api.tool_result_text(last)


def test_a_personal_install_alone_brings_the_lesson_and_the_tools(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    """No project file: `agent install --personal gemini` adds the hooks and the server to the
    person's ~/.gemini/settings.json (SPEC §14.3), next to what it holds."""
    project = make_project(repo, cli, ())
    home = gemini_home(tmp_path / "home", project.root)
    installed = cli("agent", "install", "--personal", "gemini", env={"HOME": str(home)})
    assert installed.returncode == 0, installed.stderr
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    first = run_gemini(project, prompt, home, prepared=True)[0]
    assert project.invoice.id in gemini_api.pushed(first)
    assert set(gemini_api.offered_tools(first)) >= MCP_TOOLS
    assert "Lessons from past work (Reliora)" in gemini_api.request_text(first)
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_clone_without_reliora_shows_no_failed_server(project: Project, tmp_path: Path) -> None:
    """A contributor without `reliora` (SPEC §14.3): no lesson, and no "MCP issues": the
    server answers the handshake with one tool that says reliora is not installed."""
    said: list[str] = []
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    turns = run_gemini(project, prompt, tmp_path / "home", with_reliora=False, stderr=said)
    offered = [t for t in gemini_api.offered_tools(turns[0]) if "reliora" in t]
    assert offered and all("not_installed" in t for t in offered), offered
    assert project.invoice.marker not in gemini_api.request_text(turns[-1])
    (text,) = said
    assert "MCP issues" not in text, text
    # Gemini warns of every project's hooks (with reliora too); nothing says one failed.
    assert not [line for line in text.splitlines() if "reliora" in line and "fail" in line]



def test_what_reliora_adds_to_a_request_without_a_lesson_stays_small(
    project: Project, tmp_path: Path
) -> None:
    """The tools and the AGENTS.md block, paid on every turn: at most 4,000 characters."""
    first = run_gemini(project, "Add a docstring to the total function", tmp_path / "home")[0]
    text = gemini_api.request_text(first)
    pushed = gemini_api.pushed(first)  # (Gemini lists the project's files, store included)
    assert project.invoice.id not in pushed and project.billing.id not in pushed
    assert {n for n in gemini_api.offered_tools(first) if "reliora" in n} == MCP_TOOLS
    assert instruction_chars(text) > 0
    report("gemini", first, text)
    assert reliora_chars(first, text) <= MOST
