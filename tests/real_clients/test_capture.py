"""Claude Code itself, headless, against a mock model: the end-of-turn ask (SPEC §16).

The mock model works through a troubled turn with real tool calls: `python3 check.py` fails
with `AssertionError: customer charged twice`, an Edit fixes src/billing.py, the same command
passes, and it gives its final answer. Claude Code then runs the project's `Stop` hook
(installed by `reliora agent install claude-code`), which reads the session's transcript.
What the mock model receives after its final answer is what the ask made of it.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reliora_git.operations.agents.trouble import OPENING
from tests.conftest import Cli, git
from tests.real_clients import anthropic_api
from tests.real_clients.mock_model import MockModel, find_binary
from tests.real_clients.test_claude_code import CLAUDE_TIMEOUT, claude_env

CHECK = "python3 check.py"
CLOSING = "say so in one line and finish."
FINAL_TEXT = "Fixed: the customer is charged once."
PROMPT = "The customer is charged twice; fix the billing charges"
BUGGY = "def charges(amount):\n    return [amount, amount]\n"
FIXED = "def charges(amount):\n    return [amount]\n"
CHECK_PY = (
    "from src.billing import charges\n"
    "assert len(charges(5)) == 1, 'customer charged twice'\n"
    "print('ok')\n"
)


@dataclass(frozen=True)
class Project:
    root: Path
    lesson: str  # the id of the lesson the prompt pushes


@pytest.fixture
def project(repo: Path, cli: Cli) -> Project:
    (repo / "src").mkdir()
    (repo / "src" / "billing.py").write_text(BUGGY, encoding="utf-8")
    (repo / "check.py").write_text(CHECK_PY, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "billing")
    assert cli("init").returncode == 0
    fields = {
        "title": "Customers charged twice when billing repeats a charge",
        "task": "Fix billing charging a customer twice",
        "problems": ["The customer was charged twice for one invoice"],
        "solution": "Make each charge idempotent with a key per invoice (ZEBRAFISH-7).",
    }
    done = cli("record", "--json", "-", input=json.dumps(fields))
    assert done.returncode == 0, done.stderr
    install = cli("agent", "install", "claude-code")
    assert install.returncode == 0, install.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store and agent files")
    return Project(repo, json.loads(done.stdout)["id"])


def troubled_calls(root: Path) -> list[tuple[str, dict[str, Any]]]:
    edit = {"file_path": str(root / "src" / "billing.py"), "old_string": BUGGY, "new_string": FIXED}
    return [
        ("Bash", {"command": CHECK, "description": "Run the check"}),
        ("Edit", edit),
        ("Bash", {"command": CHECK, "description": "Run the check again"}),
    ]


@dataclass(frozen=True)
class Run:
    session: str
    turns: list[dict[str, Any]]  # the bodies of the requests that offered Claude Code's tools


def run_claude(
    project: Project,
    calls: list[tuple[str, dict[str, Any]]],
    home: Path,
    prompt: str = PROMPT,
    resume: str | None = None,
) -> Run:
    claude = find_binary("claude")
    with MockModel(anthropic_api.script_routes(calls, FINAL_TEXT)) as model:
        command = [str(claude), "-p", prompt, "--output-format", "json"]
        command += ["--allowedTools", "Bash", "Edit", "Read"]
        command += ["--resume", resume] if resume else []
        try:
            done = subprocess.run(
                command,
                cwd=project.root,
                env=claude_env(model, home),
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
    turns = [
        request.body
        for request in requests
        if request.path == anthropic_api.MESSAGES
        and isinstance(request.body, dict)
        and "Bash" in anthropic_api.tool_names(request.body)
    ]
    return Run(str(result["session_id"]), turns)


def final_answer_position(body: dict[str, Any]) -> int | None:
    """The index of the first message holding the scripted final answer, if the request has it."""
    for position, text in enumerate(anthropic_api.message_texts(body)):
        if FINAL_TEXT in text:
            return position
    return None


def asks_in(body: dict[str, Any]) -> list[str]:
    """The distinct asks a request holds, and where (Claude Code 2.1.332 shows a Stop hook's
    reason twice: as "Stop hook feedback" after the tool results and as a system message)."""
    asks: dict[str, None] = {}
    for text in anthropic_api.message_texts(body):
        start = text.find(OPENING)
        while start != -1:
            end = text.find(CLOSING, start)
            asks[text[start : end + len(CLOSING) if end != -1 else len(text)]] = None
            start = text.find(OPENING, start + 1)
    return list(asks)


def blocks_in(body: dict[str, Any]) -> int:
    """How many times a Stop hook made Claude go on (one system message each)."""
    return sum(text.count("Stop hook blocking error") for text in anthropic_api.message_texts(body))


def ask_position(body: dict[str, Any]) -> int | None:
    for position, text in enumerate(anthropic_api.message_texts(body)):
        if OPENING in text:
            return position
    return None


def test_a_troubled_session_is_asked_once_after_its_final_answer(
    project: Project, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    run = run_claude(project, troubled_calls(project.root), home)
    assert (project.root / "src" / "billing.py").read_text(encoding="utf-8") == FIXED
    before = [body for body in run.turns if not asks_in(body)]
    after = [body for body in run.turns if asks_in(body)]
    # The turn ran to its final answer without an ask; the ask came after that answer.
    assert before and after and run.turns.index(after[0]) == len(before)
    last = after[-1]
    (ask,) = asks_in(last)
    answer, asked = final_answer_position(last), ask_position(last)
    assert answer is not None and asked is not None and asked > answer
    # It names the failing command, its error line, the file changed and the pushed lesson.
    assert f"`{CHECK}` failed" in ask
    assert f"{CHECK} -> AssertionError: customer charged twice" in ask
    assert "src/billing.py" in ask and "reliora record --json -" in ask
    assert project.lesson in ask and "reliora feedback" in ask
    assert "ZEBRAFISH-7" in anthropic_api.request_text(run.turns[0])  # pushed at the prompt
    # Claude Code stopped after the model answered the ask: one ask, never two.
    assert len(after) == 1 and blocks_in(last) == 1

    # The next turn of the same session (the trouble still in its transcript) is not asked.
    again = run_claude(project, [], home, prompt="Thanks, that is all.", resume=run.session)
    assert again.session == run.session
    assert again.turns
    for body in again.turns:
        assert len(asks_in(body)) == 1 and blocks_in(body) == 1  # the first ask, in the history
    sessions = project.root / ".git" / "reliora" / "sessions"
    marks = [p.read_text(encoding="utf-8").splitlines().count("asked") for p in sessions.iterdir()]
    assert sorted(marks)[-1] == 1


def test_a_calm_session_gets_no_ask(project: Project, tmp_path: Path) -> None:
    (project.root / "src" / "billing.py").write_text(FIXED, encoding="utf-8")
    git(project.root, "commit", "-q", "-am", "charge once")
    calls = [("Bash", {"command": CHECK, "description": "Run the check"})]
    run = run_claude(project, calls, tmp_path / "home")
    assert "ZEBRAFISH-7" in anthropic_api.request_text(run.turns[0])  # a lesson was pushed
    final = [body for body in run.turns if final_answer_position(body) is not None]
    assert final == [] or all(asks_in(body) == [] for body in final)
    assert all(asks_in(body) == [] for body in run.turns)
    assert run.turns and len(anthropic_api.tool_result_ids(run.turns[-1])) == 1


# --- Codex and Gemini CLI: their own end-of-turn hooks, the same ask ----------------------------

PATCH = (
    "*** Begin Patch\n*** Update File: src/billing.py\n@@\n"
    "-    return [amount, amount]\n+    return [amount]\n*** End Patch\n"
)


def assert_one_ask_after_the_answer(bodies: list[str], final_text: str, lesson: str) -> None:
    """The request texts in order: none holds the ask until the one after the final answer,
    which holds it once and names the command, its error line, the file and the lesson."""
    asked = [number for number, text in enumerate(bodies) if OPENING in text]
    assert asked and asked[0] == len(bodies) - len(asked), asked
    last = bodies[asked[0]]
    assert last.count(OPENING) == 1 and last.index(final_text) < last.index(OPENING)
    for part in (CHECK, "AssertionError: customer charged twice", "src/billing.py", lesson):
        assert part in last[last.index(OPENING) :], part


def test_codex_stop_asks_once_after_a_troubled_turn(
    project: Project, cli: Cli, tmp_path: Path
) -> None:
    from tests.real_clients import responses_api
    from tests.real_clients.test_codex import CODEX_TIMEOUT, codex_env, listed_hooks, user_config

    assert cli("agent", "install", "codex").returncode == 0
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "codex files")
    binary = find_binary("codex")
    home = tmp_path / "home"
    env = codex_env(home)
    (home / ".codex").mkdir(parents=True)

    def check(body: Any) -> responses_api.Call:
        return responses_api.shell_call(body, CHECK)

    def patch(body: Any) -> responses_api.Call:
        return responses_api.Call("apply_patch", text=PATCH)

    steps = [check, patch, check]
    final = "Fixed: charged once."
    with MockModel(responses_api.script_routes(steps, final)) as model:
        config = home / ".codex" / "config.toml"
        config.write_text(user_config(model, project.root, "gpt-5.5"), encoding="utf-8")
        ours = [
            h for h in listed_hooks(binary, env, project.root) if "reliora hook" in h["command"]
        ]
        assert "stop" in {hook["eventName"] for hook in ours}
        with config.open("a", encoding="utf-8") as out:  # what /hooks saves when trusted
            for hook in ours:
                out.write(f"\n[hooks.state.{json.dumps(hook['key'])}]\n")
                out.write(f"trusted_hash = {json.dumps(hook['currentHash'])}\n")
        done = subprocess.run(
            [str(binary), "exec", "--strict-config", "--dangerously-bypass-approvals-and-sandbox",
             PROMPT],
            cwd=project.root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CODEX_TIMEOUT,
        )  # fmt: skip
        requests = model.requests
        assert model.errors == []
    assert done.returncode == 0, done.stderr[-3000:]
    assert (project.root / "src" / "billing.py").read_text(encoding="utf-8") == FIXED
    texts = [responses_api.request_text(request.body) for request in requests]
    assert_one_ask_after_the_answer(texts, final, project.lesson)


def test_gemini_after_agent_asks_once_after_a_troubled_turn(
    project: Project, cli: Cli, tmp_path: Path
) -> None:
    from tests.real_clients import gemini_api
    from tests.real_clients.test_gemini import GEMINI_TIMEOUT, MODEL, gemini_env, gemini_home

    assert cli("agent", "install", "gemini").returncode == 0
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "gemini files")
    binary = find_binary("gemini")
    home = gemini_home(tmp_path / "home", project.root)
    billing = str(project.root / "src" / "billing.py")
    run = {"name": "run_shell_command", "args": {"command": CHECK, "description": "check"}}
    fix = {"file_path": billing, "old_string": BUGGY, "new_string": FIXED, "instruction": "fix"}
    calls = [run, {"name": "replace", "args": fix}, run]
    final = "Fixed: charged once."
    with MockModel(gemini_api.script_routes(calls, final)) as model:
        done = subprocess.run(
            [str(binary), "-m", MODEL, "-p", PROMPT, "--yolo", "--output-format", "json"],
            cwd=project.root,
            env=gemini_env(model, home),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GEMINI_TIMEOUT,
        )
        requests = model.requests
        assert model.errors == []
    assert done.returncode == 0, done.stderr[-3000:]
    assert (project.root / "src" / "billing.py").read_text(encoding="utf-8") == FIXED
    turns = gemini_api.turns(requests)
    texts = [gemini_api.conversation_text(body) for body in turns]
    assert_one_ask_after_the_answer(texts, final, project.lesson)
