"""A personal store (SPEC.md §14.3): `init --personal`, a personal install that speaks as one,
its next steps, and an uninstall that leaves the clone and HOME as they were.

Real git in a temporary clone, the installed `reliora` in a subprocess, a HOME the test owns.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reliora_git.operations.agents.clients.instructions import HEADING
from reliora_git.operations.agents.personal import STORE_LINE, STORE_MARK
from tests.conftest import Cli, git, reliora_executable

CLIENTS = ("claude-code", "codex", "gemini", "copilot", "cursor")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / ".gitconfig-kept").write_text("the person's own file\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(folder))
    for name in ("CODEX_HOME", "COPILOT_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return folder


@pytest.fixture
def clone(repo: Path) -> Path:
    """A repository someone else owns: a commit, and a file git ignores."""
    (repo / "app.py").write_text("print('hi')\n", encoding="utf-8")
    (repo / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (repo / "debug.log").write_text("x\n", encoding="utf-8")
    git(repo, "add", "app.py", ".gitignore")
    git(repo, "commit", "-qm", "app")
    return repo


def everything_in(folder: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``folder``."""
    found: dict[str, bytes | None] = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        found[key] = None if path.is_dir() else path.read_bytes()
    return found


def status(repo: Path, ignored: bool = True) -> str:
    shown = ["--ignored"] if ignored else []
    return git(repo, "status", "--porcelain", *shown, "--untracked-files=all")


def hook(repo: Path, event: dict[str, Any]) -> str:
    stdin = json.dumps({"session_id": "s1", "cwd": str(repo),
                        "transcript_path": str(repo / "t.jsonl"), **event})  # fmt: skip
    done = subprocess.run(
        [reliora_executable(), "hook", "--client", "claude-code"],
        cwd=repo, input=stdin, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    if not done.stdout:
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def record(cli: Cli) -> str:
    lesson = {
        "title": "Invoice totals are rounded once",
        "task": "Fix the rounding of invoice totals",
        "solution": "Round once at the end with Decimal.",
    }
    done = cli("record", "--json", "-", input=json.dumps(lesson))
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def test_a_personal_store_install_and_uninstall_leave_the_clone_and_home_as_they_were(
    clone: Path, home: Path, cli: Cli
) -> None:
    before, home_before = status(clone), everything_in(home)
    untracked = status(clone, ignored=False)
    made = cli("init", "--personal")
    assert made.returncode == 0, made.stderr
    assert status(clone, ignored=False) == untracked  # git does not see the store
    assert cli("agent", "install", "--personal", *CLIENTS).returncode == 0
    assert status(clone, ignored=False) == untracked
    lesson = record(cli)
    pushed = hook(clone, {"hook_event_name": "UserPromptSubmit",
                          "prompt": "the invoice totals rounding is off"})  # fmt: skip
    assert lesson in pushed  # it works: the push, and the session memory it keeps
    assert (clone / ".git" / "reliora").is_dir()
    cli("search", "invoice")  # the parse cache

    done = cli("agent", "uninstall", "--personal")
    assert done.returncode == 0, done.stderr
    assert not (clone / ".git" / "reliora").exists()
    assert not (clone / ".git" / "reliora-cache").exists()
    assert everything_in(home) == home_before  # byte for byte, no folder left behind
    # The message names the store it leaves and how to remove it with its exclude line.
    said = " ".join(done.stdout.split())
    assert "The store .reliora/ stays" in said
    assert f"rm -r .reliora, then delete the lines `{STORE_MARK}` and `{STORE_LINE}`" in said
    shutil.rmtree(clone / ".reliora")
    exclude = clone / ".git" / "info" / "exclude"
    lines = exclude.read_text(encoding="utf-8").splitlines(keepends=True)
    exclude.write_text(
        "".join(line for line in lines if line.strip() not in (STORE_MARK, STORE_LINE)),
        encoding="utf-8",
    )
    assert status(clone) == before


def test_init_personal_lists_the_store_in_git_s_exclude_file(clone: Path, cli: Cli) -> None:
    exclude = clone / ".git" / "info" / "exclude"
    kept = exclude.read_bytes() if exclude.exists() else b""
    done = cli("init", "--personal", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert exclude.read_bytes() == kept + f"{STORE_MARK}\n{STORE_LINE}\n".encode()
    assert any(".git/info/exclude" in note for note in document["updated"])
    steps = " ".join(document["nextSteps"])
    assert "agent install --personal" in steps
    assert "Commit" not in steps and "hooks install" not in steps  # nothing of it is committed
    again = cli("init", "--personal")  # twice: the same one line
    assert again.returncode == 0 and exclude.read_text().count(STORE_LINE) == 1


def test_init_personal_outside_git_writes_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    done = Cli(outside)("init", "--personal")
    assert done.returncode != 0 and "not a git repository" in done.stderr
    assert "Traceback" not in done.stderr and list(outside.iterdir()) == []


def session_start(repo: Path, session: str) -> str:
    return hook(repo, {"hook_event_name": "SessionStart", "source": "startup",
                       "session_id": session})  # fmt: skip


def test_a_personal_store_is_never_told_to_be_committed(clone: Path, home: Path, cli: Cli) -> None:
    assert cli("init", "--personal").returncode == 0
    assert cli("agent", "install", "--personal", "claude-code").returncode == 0
    record(cli)
    said = session_start(clone, "personal")
    assert HEADING in said and "kept out of git" in said
    assert not re.search(r"commit|pull request|reviewed", said, re.IGNORECASE)


def test_a_committed_store_with_a_personal_install_keeps_the_team_s_words(
    clone: Path, home: Path, cli: Cli
) -> None:
    """Trying Reliora in a project whose store is committed already: lessons do go to git."""
    assert cli("init").returncode == 0
    record(cli)
    git(clone, "add", ".reliora")
    git(clone, "commit", "-qm", "store")
    assert cli("agent", "install", "--personal", "claude-code").returncode == 0
    said = session_start(clone, "team")
    assert "Commit the new" in said and "reviewed like code" in said


def test_a_personal_install_without_a_store_says_how_to_make_one(
    clone: Path, home: Path, cli: Cli
) -> None:
    done = cli("agent", "install", "--personal", "claude-code")
    assert done.returncode == 0, done.stderr
    assert "no .reliora/ store here" in done.stdout and "reliora init --personal" in done.stdout
    document = json.loads(cli("agent", "install", "--personal", "codex", "--json").stdout)
    assert any("reliora init --personal" in note for note in document["notes"])


def test_a_personal_dry_run_shows_every_edit_and_writes_none(
    clone: Path, home: Path, cli: Cli
) -> None:
    assert cli("init", "--personal").returncode == 0
    exclude = clone / ".git" / "info" / "exclude"
    before, home_before = exclude.read_bytes(), everything_in(home)
    done = cli("agent", "install", "--personal", "--dry-run", "claude-code")
    assert done.returncode == 0, done.stderr
    assert ".git/info/exclude: would be updated" in done.stdout
    assert "+/.claude/settings.local.json" in done.stdout  # the exclude edit, as a diff
    assert "~/.claude.json (claude-code): would be created" in done.stdout
    assert exclude.read_bytes() == before and everything_in(home) == home_before
    assert not (clone / ".claude").exists()


def codex_hook_keys(home: Path) -> list[str]:
    """The keys Codex gives our user-level hooks (`hooks/list` of its app server)."""
    hooks = home / ".codex" / "hooks.json"
    listed = json.loads(hooks.read_text())["hooks"]
    snake = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
             "PreToolUse": "pre_tool_use", "Stop": "stop"}  # fmt: skip
    return [f"{hooks}:{snake[event]}:0:0" for event in listed]


def test_codex_s_user_level_hook_trust_is_a_step_until_it_is_done(
    clone: Path, home: Path, cli: Cli
) -> None:
    assert cli("init", "--personal").returncode == 0
    done = cli("agent", "install", "--personal", "codex", "--json")
    steps = json.loads(done.stdout)["nextSteps"]
    trust = [step for step in steps if "/hooks" in step]
    assert len(trust) == 1 and "user-level hooks" in trust[0]
    assert not [step for step in steps if ".mcp.json" in step or "trust this folder" in step]
    todo = json.loads(cli("agent", "status", "--json").stdout)["todo"]
    assert [t["client"] for t in todo] == ["codex (personal)"]
    # What a person's /hooks review writes into the Codex config: then the step is done.
    config = home / ".codex" / "config.toml"
    with config.open("a", encoding="utf-8") as out:
        for key in codex_hook_keys(home):
            out.write(f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "sha256:00"\n')
    assert json.loads(cli("agent", "status", "--json").stdout)["todo"] == []


def test_the_block_says_if_reliora_is_installed(clone: Path, cli: Cli) -> None:
    """A teammate without reliora reads the same CLAUDE.md: it must not order them to run it."""
    assert cli("init").returncode == 0
    assert cli("agent", "install", "claude-code").returncode == 0
    block = (clone / "CLAUDE.md").read_text(encoding="utf-8")
    assert "If `reliora` is installed:" in block
