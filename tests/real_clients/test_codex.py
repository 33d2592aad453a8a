"""Codex itself, headless, against a mock Responses API: what reaches the model (SPEC §14.1).

A temporary repository gets a store, two lessons and `reliora agent install codex`;
`codex exec` then runs in it with the project's `.codex/` (hooks, the `reliora` MCP server
and its start-up grace) and AGENTS.md, and the mock model (tests/real_clients/
responses_api.py) reads src/billing.py through the shell, or patches it, and answers. The
requests it logged are what the model saw.

The person's side is what `agent status` asks of them, done here as Codex itself records
it in CODEX_HOME/config.toml: the project trusted (`[projects."<path>"]`), and the
project's hooks reviewed and trusted — the hashes Codex reports for them (`hooks/list` of
its app server, the list `/hooks` shows) saved under `hooks.state`, as `/hooks` saves them.
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
from tests.real_clients import responses_api
from tests.real_clients.mock_model import MockModel, find_binary
from tests.real_clients.project import Project, make_project
from tests.real_clients.standing_cost import MOST, instruction_chars, reliora_chars, report

#: A model Codex has no metadata for: it offers the MCP tools in every request. (With the
#: models it knows, such as gpt-5.5, Codex defers MCP tools behind its `tool_search` tool.)
MODEL = "reliora-mock-model"
#: A model Codex knows: it offers `apply_patch`, the edit tool.
PATCH_MODEL = "gpt-5.5"
CODEX_TIMEOUT = 90
API_KEY_ENV = "RELIORA_MOCK_API_KEY"
MCP_TOOLS = {f"mcp__reliora.{name}" for name in LEAN_TOOLS}
PATCH = (
    "*** Begin Patch\n*** Update File: src/billing.py\n@@\n"
    "-    return sum(item.price for item in items)\n"
    "+    return sum(item.price_cents for item in items)\n"
    "*** End Patch\n"
)


@pytest.fixture
def project(repo: Path, cli: Cli) -> Project:
    """A committed repository with a store, two lessons and Codex's project files."""
    return make_project(repo, cli, ("codex",))


def codex_env(home: Path, with_reliora: bool = True) -> dict[str, str]:
    """Headless Codex: a CODEX_HOME and HOME of its own, the mock's key, nothing else.

    Built from nothing rather than from this process's environment: Codex reads variables
    (OPENAI_*, CODEX_*, proxies) that would change what it does."""
    node = shutil.which("node")
    # The hooks and the server run `reliora` from PATH.
    path = [str(Path(reliora_executable()).parent)] if with_reliora else []
    path += [str(Path(node).parent)] if node else []
    return {
        "PATH": os.pathsep.join([*path, "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        API_KEY_ENV: "mock-key",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "LANG": "C.UTF-8",
    }


def user_config(model: MockModel, project: Path, model_name: str) -> str:
    """The person's CODEX_HOME/config.toml: the mock as the model provider (an API key from
    the environment, no login), nothing sent anywhere else, and the project trusted."""
    return f"""model = "{model_name}"
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.mock]
name = "Mock Responses API"
base_url = "{model.url}/v1"
env_key = "{API_KEY_ENV}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects.{json.dumps(str(project))}]
trust_level = "trusted"
"""


def listed_hooks(binary: Path, env: dict[str, str], root: Path) -> list[dict[str, Any]]:
    """The hooks Codex found for ``root``, with their trust, from its app server."""
    requests = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(root)]}},
    ]
    server = subprocess.Popen(
        [str(binary), "app-server"],
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        for message in requests:
            server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        for line in server.stdout:
            answer = json.loads(line)
            if answer.get("id") == 2:
                (result,) = answer["result"]["data"]
                assert result["errors"] == [], result
                return list(result["hooks"])
        pytest.fail("codex app-server closed without answering hooks/list")
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def trust_hooks(binary: Path, env: dict[str, str], root: Path, source: str = "project") -> None:
    """What a person does in `/hooks`: trust each reliora hook at its current hash."""
    hooks = listed_hooks(binary, env, root)
    ours = [h for h in hooks if "reliora hook --client codex" in h["command"]]
    events = {h["eventName"] for h in ours}
    assert events == {"sessionStart", "userPromptSubmit", "preToolUse", "stop"}, hooks
    assert all(h["source"] == source for h in ours), ours
    ours = [h for h in ours if h["trustStatus"] != "trusted"]
    config = Path(env["CODEX_HOME"]) / "config.toml"
    with config.open("a", encoding="utf-8") as out:
        for hook in ours:
            out.write(f"\n[hooks.state.{json.dumps(hook['key'])}]\n")
            out.write(f"trusted_hash = {json.dumps(hook['currentHash'])}\n")
    trusted = [h for h in listed_hooks(binary, env, root) if h["key"] in {o["key"] for o in ours}]
    assert [h["trustStatus"] for h in trusted] == ["trusted"] * len(ours)


def run_codex(
    project: Project,
    prompt: str,
    home: Path,
    call: Any,
    model_name: str = MODEL,
    with_reliora: bool = True,
    personal: Any = None,
    stderr: list[str] | None = None,
) -> list[Any]:
    """Run `codex exec PROMPT` to its end; return the bodies of the requests to the model
    (``personal``: a Cli that makes a personal install once the person's config is written)."""
    binary = find_binary("codex")
    env = codex_env(home, with_reliora)
    (home / ".codex").mkdir(parents=True)
    last_message = home / "last-message.txt"
    with MockModel(responses_api.routes(call)) as model:
        (home / ".codex" / "config.toml").write_text(
            user_config(model, project.root, model_name), encoding="utf-8"
        )
        if personal is not None:
            mine = {"HOME": env["HOME"], "CODEX_HOME": env["CODEX_HOME"]}
            installed = personal("agent", "install", "--personal", "codex", env=mine)
            assert installed.returncode == 0, installed.stderr
        trust_hooks(binary, env, project.root, "user" if personal is not None else "project")
        command = [str(binary), "exec", "--strict-config", "-o", str(last_message), prompt]
        try:
            done = subprocess.run(
                command,
                cwd=project.root,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CODEX_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            paths = [request.path for request in model.requests]
            pytest.fail(f"codex ran past {CODEX_TIMEOUT} s; the mock model saw {paths}")
        requests = model.requests
        assert model.errors == []
    assert done.returncode == 0, done.stderr + done.stdout
    if stderr is not None:
        stderr.append(done.stderr)
    assert last_message.read_text(encoding="utf-8").strip() == responses_api.FINAL_TEXT
    assert [request.path for request in requests if not request.routed] == []
    bodies = [request.body for request in requests]
    assert len(bodies) >= 2 and responses_api.call_output(bodies[-1]) is not None
    return bodies


def read_billing(body: Any) -> responses_api.Call:
    return responses_api.shell_call(body, "cat src/billing.py")


def patch_billing(body: Any) -> responses_api.Call:
    assert "apply_patch" in responses_api.tool_names(body)
    return responses_api.Call("apply_patch", text=PATCH)


def pushed_after_call(body: Any) -> str:
    """What the hooks added after the scripted call (PreToolUse context goes right after it)."""
    position = responses_api.call_position(body)
    assert position is not None
    return "\n".join(responses_api.developer_texts(body, after=position))


def test_codex_gets_the_prompt_lesson_the_file_lesson_and_the_tools(
    project: Project, tmp_path: Path
) -> None:
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    bodies = run_codex(project, prompt, tmp_path / "home", read_billing)
    first, last = bodies[0], bodies[-1]
    pushed_first = "\n".join(responses_api.developer_texts(first))
    assert project.invoice.id in pushed_first and project.invoice.marker in pushed_first
    assert project.billing.id not in responses_api.request_text(first)
    assert set(responses_api.tool_names(first)) >= MCP_TOOLS
    assert "Lessons from past work (Reliora)" in responses_api.request_text(first)  # AGENTS.md
    # The lesson about the file arrives with the shell's `cat src/billing.py` (PreToolUse).
    read_context = pushed_after_call(last)
    assert project.billing.id in read_context and project.billing.marker in read_context
    last_text = responses_api.request_text(last)
    for lesson in (project.invoice, project.billing):
        assert last_text.count(lesson.marker) == 1, lesson


def test_codex_gets_the_lesson_of_the_file_it_patches(project: Project, tmp_path: Path) -> None:
    bodies = run_codex(
        project,
        "Apply the patch from the code review",  # a prompt that brings no lesson of its own
        tmp_path / "home",
        patch_billing,
        model_name=PATCH_MODEL,
    )
    assert "price_cents" in (project.root / "src" / "billing.py").read_text(encoding="utf-8")
    assert project.billing.marker not in responses_api.request_text(bodies[0])
    pushed = pushed_after_call(bodies[-1])
    assert project.billing.id in pushed and project.billing.marker in pushed
    assert responses_api.request_text(bodies[-1]).count(project.billing.marker) == 1


def test_codex_gets_a_lesson_once_from_session_start_prompt_and_read(
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
    bodies = run_codex(
        project,
        "Make the billing module add up prices in integer cents, never floats",
        tmp_path / "home",
        read_billing,
    )
    first, last = bodies[0], bodies[-1]
    assert project.billing.id in "\n".join(responses_api.developer_texts(first))
    assert responses_api.request_text(last).count(project.billing.marker) == 1
    assert project.billing.marker not in pushed_after_call(last)


def test_a_clone_without_reliora_still_runs_codex(project: Project, tmp_path: Path) -> None:
    """The server is never `required` and the hooks are silent without `reliora` on PATH."""
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    said: list[str] = []
    bodies = run_codex(
        project, prompt, tmp_path / "home", read_billing, with_reliora=False, stderr=said
    )
    # Codex lists a server's namespace and its tool: only the one that says it is missing.
    ours = [n for n in responses_api.tool_names(bodies[0]) if n.startswith("mcp__reliora")]
    assert all(n in ("mcp__reliora", "mcp__reliora.not_installed") for n in ours), ours
    (text,) = said  # no server that failed to start (its fallback answers with no tools)
    assert not [line for line in text.splitlines() if "reliora" in line and "fail" in line.lower()]
    for body in bodies:
        text = responses_api.request_text(body)
        assert project.invoice.marker not in text and project.billing.marker not in text


def test_a_personal_install_alone_brings_the_lesson_and_the_tools(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    """No project file: `agent install --personal codex` adds the hooks and the server to
    CODEX_HOME (SPEC §14.3); the hooks are trusted as a person trusts them in `/hooks`."""
    project = make_project(repo, cli, ())
    prompt = "Invoice totals are off by a cent; fix the rounding of invoice totals"
    bodies = run_codex(project, prompt, tmp_path / "home", read_billing, personal=cli)
    first = bodies[0]
    pushed_first = "\n".join(responses_api.developer_texts(first))
    assert project.invoice.id in pushed_first
    assert set(responses_api.tool_names(first)) >= MCP_TOOLS
    assert "Lessons from past work (Reliora)" in responses_api.request_text(first)
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""



def test_what_reliora_adds_to_a_request_without_a_lesson_stays_small(
    project: Project, tmp_path: Path
) -> None:
    """The tools and the AGENTS.md block, paid on every turn: at most 4,000 characters."""
    bodies = run_codex(project, "Add a docstring to the total function", tmp_path / "home",
                       read_billing)  # fmt: skip
    first = bodies[0]
    text = responses_api.request_text(first)
    assert project.invoice.id not in text and project.billing.id not in text
    assert {n for n in responses_api.tool_names(first) if "reliora." in n} == MCP_TOOLS
    assert instruction_chars(text) > 0
    report("codex", first, text)
    assert reliora_chars(first, text) <= MOST
