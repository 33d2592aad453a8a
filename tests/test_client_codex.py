"""Codex: its three files installed and removed byte for byte, their states, and each hook
event answered through the installed `reliora hook --client codex` command."""

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

from reliora_git.operations.agents.clients import codex
from reliora_git.operations.agents.clients.base import HookInputError
from reliora_git.operations.agents.files import MCP_SERVER
from reliora_git.storage.store import Store
from tests.conftest import Cli, RecordMaker, git

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

FILES = [".codex/hooks.json", ".codex/config.toml", "AGENTS.md"]
HOOKS = """{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh"}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
  }
}
"""
CONFIG = """# Codex settings for this repository
model = "gpt-5.5"   # the team's model
approval_policy = "on-request"

[features]
hooks = true

# the database server
[mcp_servers.db]
command = "npx"
args = ["-y", "@acme/db-mcp"]
env = { DB_URL = "postgres://localhost/dev" }

[[profiles.fast]]
model = "gpt-5.5-mini"
"""
AGENTS = "# Agents\n\nUse tabs, not spaces.\n- run `make test` before pushing"
EXISTING = {".codex/hooks.json": HOOKS, ".codex/config.toml": CONFIG, "AGENTS.md": AGENTS}


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def snapshot(repo: Path) -> dict[str, bytes | None]:
    return {n: (repo / n).read_bytes() if (repo / n).exists() else None for n in FILES}


def only_insertions(before: str, after: str) -> bool:
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return all(tag in ("equal", "insert") for tag, *_ in matcher.get_opcodes())


def crlf(files: dict[str, str]) -> dict[str, str]:
    return {name: text.replace("\n", "\r\n") for name, text in files.items()}


@pytest.mark.parametrize("existing", [{}, EXISTING, crlf(EXISTING)], ids=["none", "lf", "crlf"])
def test_install_twice_then_uninstall_gives_the_original_bytes(
    repo: Path, cli: Cli, existing: dict[str, str]
) -> None:
    write(repo, existing)
    before = snapshot(repo)
    assert cli("agent", "install", "codex").returncode == 0
    installed = snapshot(repo)
    assert all(installed[name] is not None for name in FILES)
    assert cli("agent", "install", "codex").returncode == 0
    assert snapshot(repo) == installed
    for name, text in existing.items():  # their text is all still there, only added to
        data = installed[name]
        assert data is not None
        assert only_insertions(text, data.decode())
        if "\r\n" in text:
            assert b"\n" not in data.replace(b"\r\n", b"")
    done = cli("agent", "uninstall", "codex")
    assert done.returncode == 0, done.stderr
    assert snapshot(repo) == before
    if not existing:
        assert sorted(p.name for p in repo.iterdir()) == [".git"]


def test_the_installed_files_say_what_codex_reads(repo: Path, cli: Cli) -> None:
    write(repo, EXISTING)
    cli("agent", "install", "codex")
    hooks = json.loads((repo / ".codex/hooks.json").read_text())["hooks"]
    # Theirs kept first; ours (the end-of-turn ask) after it.
    assert hooks["Stop"] == [*json.loads(HOOKS)["hooks"]["Stop"], {"hooks": [codex.HOOK_ENTRY]}]
    theirs, ours = hooks["PreToolUse"]
    assert theirs["hooks"][0]["command"] == "./scripts/guard.sh"
    for event in ("SessionStart", "UserPromptSubmit"):
        (group,) = hooks[event]
        assert "matcher" not in group
        assert group["hooks"] == [codex.HOOK_ENTRY]
    assert ours["hooks"] == [codex.HOOK_ENTRY]
    assert codex.HOOK_ENTRY["command"] == (
        "command -v reliora >/dev/null 2>&1 && reliora hook --client codex || true"
    )
    for tool in ("Bash", "apply_patch"):
        assert re.fullmatch(ours["matcher"], tool)
    assert not re.fullmatch(ours["matcher"], "mcp__reliora__brief")

    config = tomllib.loads((repo / ".codex/config.toml").read_text())
    assert config == {
        **tomllib.loads(CONFIG),
        "mcp_optional_startup_grace_ms": codex.GRACE_MS,
        "mcp_servers": {
            "db": tomllib.loads(CONFIG)["mcp_servers"]["db"],
            "reliora": MCP_SERVER,
        },
    }
    assert "required" not in (repo / ".codex/config.toml").read_text()
    assert "Lessons from past work (Reliora)" in (repo / "AGENTS.md").read_text()


# --- .codex/config.toml, the editor on its own -------------------------------------------------

CONFIGS = [
    "",
    'model = "o3"\n',
    'model = "o3"',
    "[features]\nhooks = true\n",
    "\n\n# only a comment\n",
    'notes = """\n[not a table]\n"""\n[real]\nx = 1\n',
    "x = [\n  [1, 2],\n]\n[t]\ny = 1\n",
    'mcp_servers.other.command = "x"\n',
    "[[profiles]]\nname = 'a'\n[[profiles]]\nname = 'b'\n",
    "a = 1\r\n[t]\nb = 2\r\n",
    "mcp_optional_startup_grace_ms = 3000\n[t]\nb = 2\n",
    "[mcp_servers]\n[mcp_servers.db]\ncommand = 'db'\n",
]


@pytest.mark.parametrize("text", CONFIGS)
def test_the_config_block_reads_as_the_file_plus_ours(text: str) -> None:
    installed = codex.install_config(text, "c.toml")
    document = tomllib.loads(installed)
    original = tomllib.loads(text)
    grace = original.get("mcp_optional_startup_grace_ms", codex.GRACE_MS)
    assert document.pop("mcp_optional_startup_grace_ms") == grace
    assert document["mcp_servers"].pop("reliora") == MCP_SERVER
    if not document["mcp_servers"] and "mcp_servers" not in original:
        del document["mcp_servers"]
    original.pop("mcp_optional_startup_grace_ms", None)
    assert document == original
    assert codex.install_config(installed, "c.toml") == installed
    assert codex.config_state(installed, "c.toml") == "installed"
    assert codex.uninstall_config(installed, "c.toml") == (text or None)


def test_a_reliora_server_of_their_own_is_kept() -> None:
    theirs = '[mcp_servers.reliora]\ncommand = "reliora"\nargs = ["mcp", "--repo", "/srv/x"]\n'
    assert codex.install_config(theirs, "c.toml") == theirs
    assert codex.config_state(theirs, "c.toml") == "installed"
    other = '[mcp_servers.reliora]\ncommand = "node"\nargs = ["server.js"]\n'
    assert codex.install_config(other, "c.toml") == other
    assert codex.config_state(other, "c.toml") == "another 'reliora' server"
    assert codex.uninstall_config(other, "c.toml") == other


def test_an_outdated_block_is_replaced_in_place() -> None:
    old = (
        "a = 1\n# reliora:begin\n[mcp_servers.reliora]\n"
        'command = "reliora"\nargs = ["mcp"]\nrequired = true\n# reliora:end\n\n[t]\nb = 2\n'
    )
    assert codex.config_state(old, "c.toml") == "outdated"
    updated = codex.install_config(old, "c.toml")
    assert updated.startswith("a = 1\n# reliora:begin\n") and updated.endswith("\n\n[t]\nb = 2\n")
    assert "required" not in updated
    assert codex.config_state(updated, "c.toml") == "installed"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[t]\nx = \n", "is not valid TOML"),
        ("a = 1\n# reliora:begin\n[mcp_servers.reliora]\n", "without `# reliora:end`"),
    ],
)
def test_a_broken_config_is_refused_with_the_reason(
    repo: Path, cli: Cli, text: str, message: str
) -> None:
    write(repo, {".codex/config.toml": text})
    done = cli("agent", "install", "codex")
    assert done.returncode == 2
    assert ".codex/config.toml" in done.stderr and message in done.stderr
    assert (repo / ".codex/config.toml").read_text() == text
    assert not (repo / ".codex/hooks.json").exists()  # nothing written when one file is refused


# --- status -------------------------------------------------------------------------------------


def file_states(cli: Cli) -> dict[str, str]:
    status = cli.json("agent", "status")
    return {f["path"]: f["state"] for f in status["files"] if f["client"] == "codex"}


def test_status_follows_each_file(repo: Path, cli: Cli) -> None:
    assert file_states(cli) == dict.fromkeys(FILES, "absent")
    write(repo, EXISTING)
    assert file_states(cli) == dict.fromkeys(FILES, "not installed")
    cli("agent", "install", "codex")
    assert file_states(cli) == dict.fromkeys(FILES, "installed")

    hooks_path = repo / ".codex/hooks.json"
    value = json.loads(hooks_path.read_text())
    del value["hooks"]["SessionStart"]
    hooks_path.write_text(json.dumps(value))
    config_path = repo / ".codex/config.toml"
    config_path.write_text(config_path.read_text().replace("10000", "500"))
    assert file_states(cli) == {
        ".codex/hooks.json": "partial",
        ".codex/config.toml": "outdated",
        "AGENTS.md": "installed",
    }
    cli("agent", "install", "codex")
    assert file_states(cli) == dict.fromkeys(FILES, "installed")


def test_todo_names_trust_until_the_project_is_trusted(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    steps = codex.todo(repo)
    assert len(steps) == 2
    assert "trust" in steps[0] and "codex exec --trust" in steps[0]
    assert "/hooks" in steps[1]
    (home / "config.toml").write_text(f'[projects."{repo}"]\ntrust_level = "trusted"\n')
    steps = codex.todo(repo)
    assert len(steps) == 1 and "/hooks" in steps[0]
    (home / "config.toml").write_text(f'[projects."{repo}"]\ntrust_level = "untrusted"\n')
    assert len(codex.todo(repo)) == 2
    (home / "config.toml").write_text("not toml [")
    assert len(codex.todo(repo)) == 2


# --- hook events --------------------------------------------------------------------------------


def event(name: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    """A Codex hook input as Codex 0.171 writes it."""
    return {
        "session_id": "01a24240-73b7-7472-9ff4-c9ea841fead6",
        "turn_id": "01a24240-73cf-7903-86e4-a059ae9a4033",
        "transcript_path": str(cwd / "rollout.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": name,
        "model": "gpt-5.5",
        "permission_mode": "default",
        **fields,
    }


def bash(command: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "call_1"}


PATCH = (
    "*** Begin Patch\n*** Update File: src/billing.py\n@@\n-a\n+b\n"
    "*** Add File: src/x.py\n+x\n*** End Patch\n"
)
#: Codex models of the shell era run apply_patch as a command with the patch in a heredoc.
SHELL_PATCH = "apply_patch <<'EOF'\n" + PATCH + "EOF\n"


@pytest.mark.parametrize(
    ("fields", "kind", "files", "reads"),
    [
        ({"source": "startup"}, "session", (), False),
        ({"prompt": "fix the totals"}, "prompt", (), False),
        (bash("cat src/billing.py"), "file", ("src/billing.py",), True),
        (bash("bash -lc 'nl -ba src/a.py | sed -n 1,20p'"), "file", ("src/a.py",), True),
        (bash("pytest -q"), "file", (), False),
        (
            {"tool_name": "apply_patch", "tool_input": {"command": PATCH}},
            "file",
            ("src/billing.py", "src/x.py"),
            False,
        ),
        (bash(SHELL_PATCH), "file", ("src/billing.py", "src/x.py"), False),
        ({"tool_name": "Bash", "tool_input": "cat a.py"}, "file", (), False),
        (
            {"tool_name": "mcp__reliora__about", "tool_input": {"command": "cat a"}},
            "file",
            (),
            False,
        ),
    ],
)
def test_parse_event(
    tmp_path: Path, fields: dict[str, Any], kind: str, files: tuple[str, ...], reads: bool
) -> None:
    name = {"session": "SessionStart", "prompt": "UserPromptSubmit"}.get(kind, "PreToolUse")
    parsed = codex.parse_event(event(name, tmp_path, **fields), Path("/"))
    assert (parsed.kind, parsed.name, parsed.files, parsed.reads) == (kind, name, files, reads)
    assert parsed.session == "01a24240-73b7-7472-9ff4-c9ea841fead6"
    assert parsed.cwd == tmp_path
    assert parsed.prompt == fields.get("prompt", "")


@pytest.mark.parametrize("name", ["PostToolUse", "SubagentStop", "PermissionRequest", None, 3])
def test_events_we_do_not_install_are_refused(tmp_path: Path, name: Any) -> None:
    with pytest.raises(HookInputError):
        codex.parse_event(event("x", tmp_path, hook_event_name=name), tmp_path)


def test_render_output_is_codex_additional_context(tmp_path: Path) -> None:
    parsed = codex.parse_event(event("UserPromptSubmit", tmp_path, prompt="p"), tmp_path)
    output = json.loads(codex.render_output(parsed, "## A lesson"))
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "## A lesson",
        }
    }


@pytest.fixture
def lessons(store: Store, write_record: RecordMaker, repo: Path, cli: Cli) -> Path:
    """A repository with Codex wired, a lesson about src/billing.py and one about a task."""
    write_record(
        "billing-currency-kingfisher",
        "Billing totals need currency codes normalised KINGFISHER-3",
        "## Problems\n- totals mixed EUR and eur\n\n"
        "## Solution\nPass every currency code through normalize_currency (KINGFISHER-3).\n",
        paths=["src/billing.py"],
    )
    write_record(
        "invoice-rounding-zebrafish",
        "Invoice rounding drifts by a cent ZEBRAFISH-7",
        "## Problems\n- invoice totals rounded with floats drifted by a cent\n\n"
        "## Solution\nRound invoices with Decimal and ROUND_HALF_UP (ZEBRAFISH-7).\n",
        tags=["invoices", "rounding"],
    )
    for number, topic in enumerate(("vim macros", "tmux panes", "ssh agent", "css grid")):
        write_record(
            f"note-{number}",
            f"A note about {topic}",
            f"## Problems\n- {topic} broke\n\n## Solution\nRead its manual.\n",
        )
    (repo / "src").mkdir()
    (repo / "src/billing.py").write_text("def total():\n    return 1\n")
    assert cli("agent", "install", "codex").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "store, code and Codex files")
    return repo


def run_installed_hook(repo: Path, stdin: str, event_name: str) -> subprocess.CompletedProcess[str]:
    """The command .codex/hooks.json holds for ``event_name``, run as Codex runs it."""
    hooks = json.loads((repo / ".codex/hooks.json").read_text())["hooks"]
    command = hooks[event_name][-1]["hooks"][0]["command"]
    venv_bin = str(Path(sys.executable).parent)
    return subprocess.run(
        ["sh", "-c", command],
        cwd=repo,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{venv_bin}:/usr/bin:/bin"},
        timeout=60,
    )


def context_of(done: subprocess.CompletedProcess[str], event_name: str) -> str:
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == event_name
    text = output["additionalContext"]
    assert isinstance(text, str)
    return text


def test_the_prompt_brings_its_lesson(lessons: Path) -> None:
    stdin = json.dumps(
        event("UserPromptSubmit", lessons, prompt="invoice totals drift by a cent when rounding")
    )
    text = context_of(run_installed_hook(lessons, stdin, "UserPromptSubmit"), "UserPromptSubmit")
    assert "ZEBRAFISH-7" in text and "invoice-rounding-zebrafish" in text
    assert "KINGFISHER-3" not in text


@pytest.mark.parametrize(
    "command",
    ["cat src/billing.py", "sed -n '1,80p' src/billing.py", "cd src && nl -ba billing.py"],
)
def test_reading_a_file_through_the_shell_brings_its_lesson(lessons: Path, command: str) -> None:
    stdin = json.dumps(event("PreToolUse", lessons, **bash(command)))
    text = context_of(run_installed_hook(lessons, stdin, "PreToolUse"), "PreToolUse")
    assert "KINGFISHER-3" in text and "billing-currency-kingfisher" in text


def test_a_tool_event_in_a_subfolder_reads_paths_from_there(lessons: Path) -> None:
    stdin = json.dumps(event("PreToolUse", lessons / "src", **bash("head -5 billing.py")))
    text = context_of(run_installed_hook(lessons, stdin, "PreToolUse"), "PreToolUse")
    assert "KINGFISHER-3" in text


def test_a_patch_brings_the_lesson_of_the_file_it_edits(lessons: Path) -> None:
    stdin = json.dumps(
        event("PreToolUse", lessons, tool_name="apply_patch", tool_input={"command": PATCH})
    )
    text = context_of(run_installed_hook(lessons, stdin, "PreToolUse"), "PreToolUse")
    assert "KINGFISHER-3" in text


def test_the_session_start_brings_the_lessons_of_changed_files(lessons: Path) -> None:
    (lessons / "src/billing.py").write_text("def total():\n    return 2\n")
    stdin = json.dumps(event("SessionStart", lessons, source="startup"))
    text = context_of(run_installed_hook(lessons, stdin, "SessionStart"), "SessionStart")
    assert "KINGFISHER-3" in text


@pytest.mark.parametrize(
    "stdin",
    [
        json.dumps(event("PreToolUse", Path("/nonexistent"), **bash("ls -la"))),
        json.dumps(event("PreToolUse", Path("/nonexistent"), **bash("cat README.md"))),
        json.dumps(event("PostToolUse", Path("/nonexistent"), **bash("cat src/billing.py"))),
        json.dumps(event("Stop", Path("/nonexistent"), stop_hook_active=False)),
        "{not json",
        "",
        json.dumps(event("PreToolUse", Path("/nonexistent"), **bash("cat 'src/billing.py"))),
    ],
)
def test_nothing_to_say_prints_nothing_and_exits_0(lessons: Path, stdin: str) -> None:
    stdin = stdin.replace("/nonexistent", str(lessons))
    done = run_installed_hook(lessons, stdin, "PreToolUse")
    assert (done.returncode, done.stdout) == (0, "")


def test_without_reliora_on_path_the_hook_is_silent(lessons: Path, tmp_path: Path) -> None:
    hooks = json.loads((lessons / ".codex/hooks.json").read_text())["hooks"]
    command = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=lessons,
        input=json.dumps(event("UserPromptSubmit", lessons, prompt="invoice rounding")),
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{empty}:/usr/bin:/bin"},
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "")
