"""Off switches (SPEC.md §14.3) for every hook of every client: RELIORA_AGENT=off for a
session, `git config reliora.agent off` for a clone, `agent = "off"` in config.toml for
everyone, `push = false` / `capture = false` for one of the two; `agent status` names the
switch in force. Each client's session-start event is sent to the installed `reliora hook`
as the client sends it, in a store whose lesson is about the file this branch changed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git, reliora_executable

RETRY = "src/billing/retry.py"
LESSON = "billing-retry-backoff"


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path) -> Store:
    write_record(
        LESSON,
        "Billing retries need jittered exponential backoff",
        "## Problems\n- the payment provider rate limited our invoice retries\n\n"
        "## Solution\nUse exponential backoff with full jitter; cap at five attempts.\n",
        paths=[RETRY],
        tags=["billing"],
    )
    (repo / "src" / "billing").mkdir(parents=True)
    (repo / RETRY).write_text("def retry(): ...\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "billing")
    git(repo, "switch", "-q", "-c", "feature")
    (repo / RETRY).write_text("def retry(attempts=5): ...\n", encoding="utf-8")
    git(repo, "commit", "-qam", "retry: cap attempts")
    return store


def session_start(client: str, repo: Path, session: str) -> dict[str, Any]:
    """Each client's session-start event, in its own field names."""
    if client == "copilot":
        return {"sessionId": session, "timestamp": 1796407867946, "cwd": str(repo),
                "source": "new", "initialPrompt": "tidy the retry code"}  # fmt: skip
    if client == "cursor":
        return {"conversation_id": session, "generation_id": "g", "model": "composer-1",
                "hook_event_name": "sessionStart", "cursor_version": "2.3.41",
                "workspace_roots": [str(repo)], "user_email": None,
                "is_background_agent": False, "composer_mode": "agent"}  # fmt: skip
    return {
        "session_id": session,
        "transcript_path": str(repo / "transcript.jsonl"),
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": "startup",
        **({"model": "gpt-5.5"} if client == "codex" else {}),
    }


CLIENTS = ("claude-code", "codex", "gemini", "copilot", "cursor")


def run_hook(
    client: str, repo: Path, session: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [reliora_executable(), "hook", "--client", client],
        cwd=repo,
        input=json.dumps(session_start(client, repo, session)),
        capture_output=True,
        text=True,
        env={**os.environ, "COPILOT_CLI": "1", **(env or {})},
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_each_switch_silences_every_clients_hook(
    client: str, lessons: Store, repo: Path, cli: Cli
) -> None:
    on = run_hook(client, repo, "on")
    assert on.returncode == 0 and LESSON in on.stdout, (on.stdout, on.stderr)

    session = run_hook(client, repo, "env", env={"RELIORA_AGENT": "off"})
    assert (session.returncode, session.stdout) == (0, "")

    git(repo, "config", "reliora.agent", "off")
    clone = run_hook(client, repo, "git")
    assert (clone.returncode, clone.stdout) == (0, "")
    git(repo, "config", "--unset", "reliora.agent")
    assert LESSON in run_hook(client, repo, "back").stdout

    config = repo / ".reliora" / "config.toml"
    config.write_text('agent = "off"\n', encoding="utf-8")
    everyone = run_hook(client, repo, "store")
    assert (everyone.returncode, everyone.stdout) == (0, "")
    config.write_text("push = false\n", encoding="utf-8")
    pushless = run_hook(client, repo, "push")
    assert (pushless.returncode, pushless.stdout) == (0, "")
    config.write_text("capture = false\n", encoding="utf-8")
    assert LESSON in run_hook(client, repo, "capture").stdout  # the push stays
    log = cli("agent", "status", "--json")
    assert json.loads(log.stdout)["hookLog"] == []  # a switch is no error


def test_status_names_the_switch_in_force(lessons: Store, repo: Path, cli: Cli) -> None:
    def switches(env: dict[str, str] | None = None) -> list[dict[str, str]]:
        done = cli("agent", "status", "--json", env=env)
        assert done.returncode == 0, done.stderr
        found: list[dict[str, str]] = json.loads(done.stdout)["switches"]
        return found

    assert switches() == []
    assert "Agent hooks: on" in cli("agent", "status").stdout
    (session,) = switches({"RELIORA_AGENT": "off"})
    assert session == {
        "what": "agent",
        "by": "environment",
        "setting": "RELIORA_AGENT=off",
        "undo": "unset RELIORA_AGENT",
    }
    git(repo, "config", "reliora.agent", "off")
    (clone,) = switches()
    assert (clone["by"], clone["undo"]) == ("git config", "git config --unset reliora.agent")
    text = cli("agent", "status").stdout
    assert "Switched off: agent off by reliora.agent=off (git config)" in text
    git(repo, "config", "--unset", "reliora.agent")
    (repo / ".reliora" / "config.toml").write_text(
        'agent = "off"\npush = false\ncapture = false\n', encoding="utf-8"
    )
    assert [(s["what"], s["by"]) for s in switches()] == [
        ("agent", "config.toml"),
        ("push", "config.toml"),
        ("capture", "config.toml"),
    ]


def test_a_wrong_agent_setting_is_named(lessons: Store, repo: Path, cli: Cli) -> None:
    (repo / ".reliora" / "config.toml").write_text('agent = "of"\n', encoding="utf-8")
    done = cli("search", "retry")
    assert done.returncode == 2 and "'agent' must be \"on\" or \"off\"" in done.stdout + done.stderr
