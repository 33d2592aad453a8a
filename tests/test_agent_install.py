"""``agent install | uninstall | status``: other people's bytes kept, install twice a no-op,
uninstall the exact inverse, and the installed hook command working from a fresh clone."""

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

from reliora_git.operations.agents import install as agents
from reliora_git.operations.agents import jsonedit
from reliora_git.operations.agents.clients.instructions import BLOCK
from reliora_git.operations.agents.files import MCP_SERVER, MD_BEGIN, MD_END
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

SETTINGS = """{
    "permissions": {
        "allow": ["Bash(npm test)", "Read(~/.zshrc)"]
    },
    "env": {"FOO": "bar \\u00e9"},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}]
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    }
}
"""
MCP = '{"mcpServers": {"db": {"command": "npx", "args": ["-y", "@acme/db-mcp"]}}, "x": 1}'
AGENTS = "# Agents\n\nUse tabs, not spaces.\n- run `make test` before pushing"


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def snapshot(repo: Path, names: list[str]) -> dict[str, bytes | None]:
    return {n: (repo / n).read_bytes() if (repo / n).exists() else None for n in names}


def only_insertions(before: str, after: str) -> bool:
    """Whether ``after`` is ``before`` with text inserted and nothing else changed."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return all(tag in ("equal", "insert") for tag, *_ in matcher.get_opcodes())


ALL_FILES = list(dict.fromkeys(f.path for f in agents.client_files()))


def test_install_keeps_other_hooks_keys_and_text_and_uninstall_restores_the_bytes(
    repo: Path, cli: Cli
) -> None:
    write(repo, {".claude/settings.json": SETTINGS, ".mcp.json": MCP, "AGENTS.md": AGENTS})
    original = snapshot(repo, ALL_FILES)
    done = cli("agent", "install")
    assert done.returncode == 0, done.stderr
    settings = (repo / ".claude/settings.json").read_text()
    assert only_insertions(SETTINGS, settings)
    assert only_insertions(MCP, (repo / ".mcp.json").read_text())
    assert only_insertions(AGENTS, (repo / "AGENTS.md").read_text())
    value = json.loads(settings)
    assert value["permissions"] == json.loads(SETTINGS)["permissions"]
    theirs, ours = value["hooks"]["Stop"]  # theirs first, untouched; ours, the end-of-turn ask
    assert [theirs] == json.loads(SETTINGS)["hooks"]["Stop"] and "reliora hook" in str(ours)
    assert value["hooks"]["PreToolUse"][0]["matcher"] == "Bash"  # theirs first, untouched
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers["db"]["command"] == "npx" and servers["reliora"] == MCP_SERVER
    assert not (repo / ".cursor").exists() and not (repo / ".github").exists()

    installed = snapshot(repo, ALL_FILES)
    again = cli("agent", "install", "--json")
    assert again.returncode == 0, again.stderr
    assert {f["action"] for f in json.loads(again.stdout)["files"]} == {"unchanged"}
    assert snapshot(repo, ALL_FILES) == installed

    removed = cli("agent", "uninstall")
    assert removed.returncode == 0, removed.stderr
    assert snapshot(repo, ALL_FILES) == original


def test_the_hooks_have_the_documented_shape(repo: Path, cli: Cli) -> None:
    assert cli("agent", "install", "claude-code").returncode == 0
    hooks = json.loads((repo / ".claude/settings.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"}
    for groups in hooks.values():
        (group,) = groups
        (entry,) = group["hooks"]
        assert entry["type"] == "command"
        assert "reliora hook --client claude-code" in entry["command"]
        assert isinstance(entry["timeout"], int)
        assert "/" not in entry["command"].split("&&")[1]  # no path of this machine
    matcher = hooks["PreToolUse"][0]["matcher"]
    for tool in ("Read", "Edit", "MultiEdit", "Write", "NotebookEdit"):
        assert re.fullmatch(matcher, tool)
    assert not re.fullmatch(matcher, "Bash")
    assert "matcher" not in hooks["SessionStart"][0] and "matcher" not in hooks["Stop"][0]


def test_files_install_created_are_removed_with_their_folders(repo: Path, cli: Cli) -> None:
    done = cli("agent", "install", "claude-code", "cursor", "codex", "copilot", "--json")
    assert done.returncode == 0, done.stderr
    assert {f["action"] for f in json.loads(done.stdout)["files"]} == {"created"}
    rule = (repo / ".cursor/rules/reliora.mdc").read_text()
    assert rule.startswith("---\ndescription: ") and "\nalwaysApply: true\n---\n" in rule
    assert MD_BEGIN in (repo / ".github/copilot-instructions.md").read_text()
    assert cli("agent", "uninstall").returncode == 0
    assert sorted(p.name for p in repo.iterdir()) == [".git"]


def test_someone_elses_hook_added_to_our_group_stays(repo: Path, cli: Cli) -> None:
    cli("agent", "install", "claude-code")
    path = repo / ".claude/settings.json"
    value = json.loads(path.read_text())
    value["hooks"]["UserPromptSubmit"][0]["hooks"].append({"type": "command", "command": "date"})
    path.write_text(json.dumps(value, indent=4))
    assert cli("agent", "uninstall", "claude-code").returncode == 0
    assert json.loads(path.read_text()) == {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}]}
    }


def test_uninstall_after_the_user_reformatted_removes_only_our_entries(
    repo: Path, cli: Cli
) -> None:
    write(repo, {".mcp.json": MCP})
    cli("agent", "install", "claude-code")
    path = repo / ".mcp.json"
    path.write_text(json.dumps(json.loads(path.read_text()), indent="\t") + "\n")
    assert cli("agent", "uninstall", "claude-code").returncode == 0
    assert json.loads(path.read_text()) == json.loads(MCP)
    assert "\t" in path.read_text()  # their formatting, not ours


def test_a_reliora_server_of_their_own_is_kept(repo: Path, cli: Cli) -> None:
    theirs = (
        '{"mcpServers": {"reliora": {"command": "reliora", "args": ["mcp", "--repo", "/srv/x"]}}}'
    )
    write(repo, {".mcp.json": theirs})
    cli("agent", "install", "claude-code")
    assert (repo / ".mcp.json").read_text() == theirs


def test_an_updated_block_is_replaced_in_place(repo: Path, cli: Cli) -> None:
    old = f"# Agents\n\n{MD_BEGIN}\nold advice\n{MD_END}\n\n## Style\nTabs.\n"
    write(repo, {"AGENTS.md": old})
    assert cli("agent", "status", "--json").returncode == 0
    cli("agent", "install", "codex")
    text = (repo / "AGENTS.md").read_text()
    assert text == "# Agents\n\n" + BLOCK + "\n## Style\nTabs.\n"


def test_crlf_files_keep_their_line_endings(repo: Path, cli: Cli) -> None:
    crlf = "# Agents\r\n\r\nUse tabs.\r\n"
    write(repo, {"AGENTS.md": crlf})
    cli("agent", "install", "codex")
    data = (repo / "AGENTS.md").read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b"")
    cli("agent", "uninstall", "codex")
    assert (repo / "AGENTS.md").read_bytes() == crlf.encode()


def test_invalid_json_is_named_with_its_line_and_left_alone(repo: Path, cli: Cli) -> None:
    broken = '{\n  "hooks": {\n    "Stop": [,]\n  }\n}\n'
    write(repo, {".claude/settings.json": broken})
    done = cli("agent", "install", "claude-code")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and ".claude/settings.json:3" in done.stderr
    assert (repo / ".claude/settings.json").read_text() == broken
    assert not (repo / ".mcp.json").exists()  # nothing written when one file is refused


def test_an_unknown_client_is_a_usage_error(repo: Path, cli: Cli) -> None:
    done = cli("agent", "install", "emacs", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "invalid_option"


def test_dry_run_prints_a_diff_and_writes_nothing(repo: Path, cli: Cli) -> None:
    write(repo, {"AGENTS.md": AGENTS})
    done = cli("agent", "install", "--dry-run")
    assert done.returncode == 0
    assert "+<!-- reliora:begin -->" in done.stdout and "would be updated" in done.stdout
    assert snapshot(repo, ALL_FILES) == {**dict.fromkeys(ALL_FILES), "AGENTS.md": AGENTS.encode()}


@pytest.mark.parametrize(
    ("present", "chosen"),
    [
        ([], ["claude-code", "codex"]),
        ([".cursor/rules/style.mdc"], ["cursor"]),
        ([".github/copilot-instructions.md", "CLAUDE.md"], ["claude-code", "copilot"]),
    ],
)
def test_default_clients_follow_the_files_the_repo_has(
    repo: Path, cli: Cli, present: list[str], chosen: list[str]
) -> None:
    write(repo, dict.fromkeys(present, "x\n"))
    done = cli("agent", "install", "--json")
    assert json.loads(done.stdout)["clients"] == chosen


def test_status_names_each_file_state_and_path(repo: Path, cli: Cli) -> None:
    cli("agent", "install", "codex")
    status = cli.json("agent", "status")
    states = {(f["client"], f["path"]): f["state"] for f in status["files"]}
    assert states[("codex", "AGENTS.md")] == "installed"
    assert states[("gemini", "AGENTS.md")] == "not installed (the file is codex's too)"
    assert states[("claude-code", ".mcp.json")] == "absent"
    assert status["clients"] == ["codex"] and status["hookLog"] == []


def test_install_prints_next_steps(repo: Path, cli: Cli) -> None:
    done = cli("agent", "install")
    assert "Next steps:" in done.stdout
    assert (
        "git add .claude/settings.json .mcp.json CLAUDE.md .codex/hooks.json .codex/config.toml "
        "AGENTS.md" in done.stdout
    )
    assert "claude-code: Claude Code asks once" in done.stdout and "codex: " in done.stdout
    assert "reliora hooks install" in done.stdout


def test_init_prints_next_steps(repo: Path, cli: Cli) -> None:
    document = cli.json("init")
    steps = document["nextSteps"]
    assert any("git add .reliora" in s for s in steps)
    assert any("reliora hooks install" in s for s in steps)
    assert any("reliora agent install" in s for s in steps)
    assert cli("hooks", "install").returncode == 0 and cli("agent", "install").returncode == 0
    steps = cli.json("init")["nextSteps"]
    assert not any("hooks install" in s or "agent install" in s for s in steps)


# --- the hook command, run as Claude Code runs it, from a fresh clone ---------------------------


def run_hook_command(
    command: str, cwd: Path, stdin: str, path: str
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path, "CLAUDE_PROJECT_DIR": str(cwd)}
    return subprocess.run(
        ["sh", "-c", command],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_the_installed_command_works_from_a_fresh_clone(
    store: Store, write_record: RecordMaker, repo: Path, cli: Cli, tmp_path: Path
) -> None:
    write_record(
        "billing-retry-backoff",
        "Billing retries need jittered exponential backoff",
        "## Problems\n- the payment provider rate limited our invoice retries\n\n"
        "## Solution\nUse exponential backoff with full jitter; cap at five attempts.\n",
        tags=["billing"],
    )
    topics = ("vim macros", "tmux panes", "ssh agent", "css grid", "sql joins", "rust lifetimes")
    for number, topic in enumerate(topics):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} broke\n\n## Solution\nRead its manual.\n",
        )
    assert cli("agent", "install", "claude-code").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store and agent files")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    settings = json.loads((clone / ".claude/settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    stdin = json.dumps(
        {
            "session_id": "abc123",
            "transcript_path": str(tmp_path / "t.jsonl"),
            "cwd": str(clone),
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "invoices fail because the payment provider rate limits our retries",
        }
    )
    venv_bin = str(Path(sys.executable).parent)
    done = run_hook_command(command, clone, stdin, f"{venv_bin}:/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "billing-retry-backoff" in context
    # Without reliora on PATH the session goes on: nothing printed, exit 0.
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    missing = run_hook_command(command, clone, stdin, f"{empty}:/usr/bin:/bin")
    assert (missing.returncode, missing.stdout) == (0, "")


# --- the text edits themselves ---------------------------------------------------------------

DOCUMENTS: list[tuple[str, tuple[Any, ...]]] = [
    ("{}", ()),
    ("{ }", ()),
    ("{}\n", ()),
    ('{"a": 1}', ()),
    ('{\n  "a": 1\n}\n', ()),
    ('{\n\t"a": {\n\t\t"b": [1, 2]\n\t}\n}', ("a",)),
    ('{\n    "a": {\n        "b": [\n            1\n        ]\n    }\n}', ("a", "b")),
    ('{"a": {"b": []}}', ("a", "b")),
    ('{\n  "a": {\n    "b": []\n  }\n}', ("a", "b")),
    ('  {"k": "v \\" }", "n": null}  ', ()),
]


@pytest.mark.parametrize(("text", "path"), DOCUMENTS)
def test_append_then_remove_gives_the_original_text(text: str, path: tuple[Any, ...]) -> None:
    container = jsonedit.resolve(text, path)
    assert container is not None
    key = "reliora" if container.kind == "object" else None
    added = jsonedit.append(text, container, {"x": [1, {"y": "z"}]}, key=key)
    value = json.loads(added)
    target = value
    for step in path:
        target = target[step]
    assert (target[key] if key else target[-1]) == {"x": [1, {"y": "z"}]}
    assert only_insertions(text, added)
    after = jsonedit.resolve(added, path)
    assert after is not None
    assert jsonedit.remove(added, after, len(after.children) - 1) == text


def test_uninstall_with_nothing_installed_says_so(repo: Path, cli: Cli) -> None:
    write(repo, {"AGENTS.md": AGENTS})
    done = cli("agent", "uninstall")
    assert done.returncode == 0 and "Nothing to remove" in done.stdout
    assert (repo / "AGENTS.md").read_text() == AGENTS


def test_status_prints_the_hook_log(repo: Path, cli: Cli) -> None:
    cli("hook", input="{not json")
    done = cli("agent", "status")
    assert done.returncode == 0
    assert "Hook log (newest last):" in done.stdout and "stdin is not JSON" in done.stdout


def test_a_crlf_file_is_installed_right_after_install(repo: Path, cli: Cli) -> None:
    write(repo, {"AGENTS.md": "# Agents\r\n\r\nUse tabs.\r\n"})
    cli("agent", "install", "codex")
    files = cli.json("agent", "status")["files"]
    states = {(f["client"], f["path"]): f["state"] for f in files}
    assert states[("codex", "AGENTS.md")] == "installed"
