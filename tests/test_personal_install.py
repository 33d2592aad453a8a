"""`agent install --personal` (SPEC.md §14.3): each client wired through files no one else
sees — user-level files under a HOME the test owns, or a repository-local file that goes into
.git/info/exclude — with `git status` unchanged, the same byte-for-byte restore as a project
install, status showing personal and project installs apart."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliora_git.operations.agents.files import MCP_SERVER
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git, reliora_executable


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CODEX_HOME", "COPILOT_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return folder


def porcelain(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all")


#: Where each client's personal files are, under HOME (or in the repository).
PERSONAL = {
    "claude-code": [".claude/settings.local.json", "~/.claude.json"],
    "codex": ["~/.codex/hooks.json", "~/.codex/config.toml"],
    "gemini": ["~/.gemini/settings.json"],
    "copilot": ["~/.copilot/mcp-config.json"],
    "cursor": ["~/.cursor/hooks.json", "~/.cursor/mcp.json"],
}


def on_disk(repo: Path, home: Path, path: str) -> Path:
    return home / path[2:] if path.startswith("~/") else repo / path


@pytest.mark.parametrize("client", list(PERSONAL))
def test_a_personal_install_leaves_git_status_as_it_was(
    client: str, repo: Path, store: Store, home: Path, cli: Cli
) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "store")
    before = porcelain(repo)
    done = cli("agent", "install", "--personal", client, "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["personal"] is True
    theirs = [f for f in document["files"] if f["client"] == client]
    assert [f["path"] for f in theirs] == PERSONAL[client]
    assert {f["action"] for f in theirs} == {"created"}
    # Every edit is named: a repository-local file goes into .git/info/exclude.
    local = any(not path.startswith("~/") for path in PERSONAL[client])
    exclude = [f for f in document["files"] if f["client"] is None]
    assert [f["path"] for f in exclude] == ([".git/info/exclude"] if local else [])
    for path in PERSONAL[client]:
        assert on_disk(repo, home, path).is_file()
    assert porcelain(repo) == before
    assert not any("Commit the agent files" in step for step in document["nextSteps"])
    status = json.loads(cli("agent", "status", "--json").stdout)
    assert status["personal"]["clients"] == [client] and status["clients"] == []
    again = json.loads(cli("agent", "install", "--personal", client, "--json").stdout)
    assert {f["action"] for f in again["files"]} == {"unchanged"}
    gone = cli("agent", "uninstall", "--personal", "--json")
    assert gone.returncode == 0, gone.stderr
    removed = [f for f in json.loads(gone.stdout)["files"] if f["client"] == client]
    assert {f["action"] for f in removed} == {"removed"}
    for path in PERSONAL[client]:
        assert not on_disk(repo, home, path).exists()
    assert porcelain(repo) == before


def test_what_the_persons_files_hold_keeps_its_bytes(
    repo: Path, store: Store, home: Path, cli: Cli, tmp_path: Path
) -> None:
    (home / ".gemini").mkdir()
    theirs = '{\n  "theme": "Dracula",\n  "mcpServers": {"db": {"command": "pg-mcp"}}\n}\n'
    (home / ".gemini" / "settings.json").write_text(theirs, encoding="utf-8")
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    config = 'model = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    (codex_home / "config.toml").write_text(config, encoding="utf-8")
    env = {"CODEX_HOME": str(codex_home)}
    assert cli("agent", "install", "--personal", "gemini", "codex", env=env).returncode == 0
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["theme"] == "Dracula" and set(settings["mcpServers"]) == {"db", "reliora"}
    assert "context" not in settings  # the instructions come with the session-start push
    assert "[mcp_servers.reliora]" in (codex_home / "config.toml").read_text()
    assert (codex_home / "hooks.json").is_file() and not (home / ".codex").exists()
    assert cli("agent", "uninstall", "--personal", env=env).returncode == 0
    assert (home / ".gemini" / "settings.json").read_text() == theirs
    assert (codex_home / "config.toml").read_text() == config


def test_a_dotfile_link_is_written_where_it_points(
    repo: Path, store: Store, home: Path, cli: Cli, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "hooks.json").write_text('{"version": 1, "hooks": {}}\n', encoding="utf-8")
    (home / ".cursor").mkdir()
    (home / ".cursor" / "hooks.json").symlink_to(dotfiles / "hooks.json")
    assert cli("agent", "install", "--personal", "cursor").returncode == 0
    assert (home / ".cursor" / "hooks.json").is_symlink()
    assert "reliora hook --client cursor" in (dotfiles / "hooks.json").read_text()


def test_the_local_settings_file_is_excluded_and_let_go_again(
    repo: Path, store: Store, home: Path, cli: Cli
) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text("*.log\n", encoding="utf-8")
    assert cli("agent", "install", "--personal", "claude-code").returncode == 0
    assert exclude.read_text() == (
        "*.log\n# reliora agent install --personal\n/.claude/settings.local.json\n"
    )
    claude = json.loads((home / ".claude.json").read_text())
    assert claude["projects"][str(repo)]["mcpServers"]["reliora"] == MCP_SERVER
    assert cli("agent", "install", "--personal", "claude-code").returncode == 0
    assert exclude.read_text().count("settings.local.json") == 1
    assert cli("agent", "uninstall", "--personal").returncode == 0
    assert exclude.read_text() == "*.log\n"


def test_status_shows_personal_and_project_installs_apart(
    repo: Path, store: Store, home: Path, cli: Cli
) -> None:
    assert cli("agent", "install", "claude-code").returncode == 0
    assert cli("agent", "install", "--personal", "codex").returncode == 0
    text = cli("agent", "status").stdout
    project = text[text.index("Project files") : text.index("Personal files")]
    personal = text[text.index("Personal files") :]
    assert "claude-code  .claude/settings.json" in project and "installed" in project
    # .mcp.json is Copilot's file too: Copilot is not installed for having it.
    copilot = next(r for r in project.splitlines() if "copilot" in r and ".mcp.json" in r)
    assert "not installed (the file is claude-code's too)" in copilot
    assert "codex        ~/.codex/hooks.json" in personal
    status = json.loads(cli("agent", "status", "--json").stdout)
    assert status["clients"] == ["claude-code"] and status["personal"]["clients"] == ["codex"]


def test_a_mistyped_client_gets_a_did_you_mean(repo: Path, cli: Cli) -> None:
    done = cli("agent", "install", "cladue-code")
    assert done.returncode == 2
    assert "unknown agent client 'cladue-code' (did you mean 'claude-code'?)" in done.stderr
    helped = " ".join(cli("agent", "install", "--help").stdout.split())
    for client in PERSONAL:
        assert client in helped
    assert "--personal" in helped and "~/.gemini/settings.json" in helped


LESSON = "billing-retry-backoff"


@pytest.fixture
def lesson(store: Store, write_record: RecordMaker) -> Store:
    write_record(
        LESSON,
        "Billing retries need jittered exponential backoff",
        "## Problems\n- the payment provider rate limited our invoice retries\n\n"
        "## Solution\nUse exponential backoff with full jitter; cap at five attempts.\n",
        tags=["billing"],
    )
    return store


def prompt(repo: Path, session: str) -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": str(repo / "t.jsonl"),
            "cwd": str(repo),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "invoice retries are rate limited by the payment provider",
        }
    )


def hook(repo: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [reliora_executable(), "hook", "--client", "claude-code"],
        cwd=repo, input=stdin, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def test_personal_and_project_installs_together_push_a_lesson_once(
    repo: Path, lesson: Store, home: Path, cli: Cli
) -> None:
    assert cli("agent", "install", "claude-code").returncode == 0
    assert cli("agent", "install", "--personal", "claude-code").returncode == 0
    project = json.loads((repo / ".claude/settings.json").read_text())
    local = json.loads((repo / ".claude/settings.local.json").read_text())
    assert project["hooks"]["UserPromptSubmit"] == local["hooks"]["UserPromptSubmit"]
    # Claude Code runs both files' hooks for one prompt: the session memory answers once.
    first, second = hook(repo, prompt(repo, "both")), hook(repo, prompt(repo, "both"))
    assert LESSON in first.stdout and second.stdout == ""


def test_session_start_brings_the_instructions_when_no_file_holds_them(
    repo: Path, lesson: Store, home: Path, cli: Cli
) -> None:
    def session_start(session: str) -> dict[str, Any]:
        stdin = json.dumps({"session_id": session, "cwd": str(repo), "source": "startup",
                            "hook_event_name": "SessionStart",
                            "transcript_path": str(repo / "t.jsonl")})  # fmt: skip
        done = hook(repo, stdin)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout else {}

    assert cli("agent", "install", "--personal", "claude-code").returncode == 0
    pushed = session_start("personal")["hookSpecificOutput"]["additionalContext"]
    assert "## Lessons from past work (Reliora)" in pushed and "<!--" not in pushed
    assert cli("agent", "install", "claude-code").returncode == 0  # CLAUDE.md holds the block
    assert "Lessons from past work" not in json.dumps(session_start("project"))


def test_the_user_level_hook_costs_nothing_outside_a_store(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "-q")
    stdin = prompt(plain, "elsewhere")
    done = hook(plain, stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not (plain / ".git" / "reliora").exists()  # not even a log: nothing happened
    assert os.listdir(plain) == [".git"]


def test_a_committed_claude_link_is_never_written_through(
    repo: Path, store: Store, home: Path, cli: Cli, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".claude").symlink_to(elsewhere)  # a pull request committed `.claude -> …`
    done = cli("agent", "install", "--personal", "claude-code")
    assert done.returncode == 2 and "symbolic link" in done.stderr
    assert list(elsewhere.iterdir()) == []


def test_personal_uninstall_keeps_the_exclude_files_bytes_and_removes_its_folder(
    repo: Path, store: Store, home: Path, cli: Cli
) -> None:
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_bytes(b"*.log\r\n/build")  # CRLF, and no final newline
    assert cli("agent", "install", "--personal", "claude-code").returncode == 0
    assert exclude.read_bytes() == (
        b"*.log\r\n/build\r\n# reliora agent install --personal\r\n/.claude/settings.local.json\r\n"
    )
    assert cli("agent", "uninstall", "--personal").returncode == 0
    assert exclude.read_bytes() == b"*.log\r\n/build\r\n"  # the person's lines, their endings
    assert not (repo / ".claude").exists()  # the folder the install made is gone too
