"""What a new user tripped over, round 3 (issue 32): a likely duplicate shown as a machine
code with no way back, help that is cut or confusing, and small wrong words.

Each test drives the installed `reliora` in a real git repository.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli, git

ORIGINAL = [
    "--title",
    "Flaky pytest timeouts on CI runners",
    "--tag",
    "pytest",
    "--problem",
    "pytest-timeout killed tests on 2-core runners",
    "--solution",
    "Raise the per-test timeout only for the git-fixture tests",
]
AGAIN = [
    "--title",
    "Flaky pytest timeouts on CI",
    "--tag",
    "pytest",
    "--problem",
    "pytest-timeout killed tests on 2-core runners",
    "--solution",
    "Mark slow tests",
]


def _saved_id(done: object) -> str:
    stdout = getattr(done, "stdout", "")
    assert stdout.startswith("saved "), stdout
    return str(stdout.split()[1])


# --- item 3: a likely duplicate at `record` -------------------------------------------------


def test_a_likely_duplicate_is_shown_in_full_with_how_to_undo_the_save(
    store: Store, cli: Cli
) -> None:
    first = cli("record", *ORIGINAL)
    other = _saved_id(first)
    done = cli("record", *AGAIN)
    assert done.returncode == 0, done.stderr
    new = _saved_id(done)
    said = done.stderr.splitlines()
    assert "SIMILAR_EXPERIENCE_FOUND" not in done.stderr  # the machine code is for --json
    head = said.index(f"likely duplicate: {other} 'Flaky pytest timeouts on CI runners'")
    assert said[head + 1] == f"  in .reliora/experiences/{other}.md (moderate match)"
    assert said[head + 2].startswith("  why: overlap 1.00, the share of this record's title")
    assert said[head + 3].startswith("  shared words: ") and "pytest" in said[head + 3]
    assert f"{new} is saved all the same." in done.stderr
    assert f"reliora update {other} --add-problem" in done.stderr
    # The way back, as printed, works: the new record is retired (search leaves it out).
    undo = next(line.strip() for line in said if line.startswith(f"  reliora retire {new}"))
    assert undo == f'reliora retire {new} --reason "duplicate of {other}"'
    retired = cli(*shlex.split(undo)[1:])
    assert retired.returncode == 0, retired.stderr
    assert cli.json("show", new)["status"] == "retired"
    # --json keeps the machine code and every field of the evidence.
    again = cli("record", "--json", "-", input=json.dumps(
        {"title": "Flaky pytest timeouts on CI", "tags": ["pytest"],
         "problems": ["pytest-timeout killed tests on 2-core runners"],
         "solution": "Mark slow tests"}))  # fmt: skip
    warning = json.loads(again.stdout)["warnings"][0]
    assert (warning["code"], warning["verdict"]) == ("SIMILAR_EXPERIENCE_FOUND", "likely-duplicate")


# --- item 9: small text bugs ----------------------------------------------------------------


def test_a_refused_secret_is_reported_once(store: Store, cli: Cli) -> None:
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL2mN4pQ6rS8tU0vW1xY3zA5"
    done = cli("record", "--title", "Deploy", "--task", "t", "--solution", f"use {token}")
    assert done.returncode == 2
    assert done.stderr.count("GitHub Token") == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"reliora: error: the experience holds a secret: solution, line 1: GitHub Token "
        f"(…{token[-4:]}); remove it (rotate it if it was real), or mark a false positive "
        "with `pragma: allowlist secret` on its line"
    ]


def test_the_edit_template_gives_no_confidence_and_shows_paths_and_guards(
    repo: Path, store: Store, cli: Cli, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.md"
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import shutil, sys\n"
        "path = sys.argv[1]\n"
        f"shutil.copyfile(path, {str(seen)!r})\n"
        "text = open(path, encoding='utf-8').read()\n"
        "text = text.replace('title: \"\"', 'title: \"Pin the linter\"')\n"
        "text = text.replace('What worked.', 'Pin ruff in the lock file.')\n"
        "text = text.replace('What you were trying to do.', 'Lint in CI.')\n"
        "text = text.replace('paths: []', 'paths: [pyproject.toml]')\n"
        "text = text.replace('guards: []', 'guards: [ruff>=]')\n"
        "open(path, 'w', encoding='utf-8').write(text)\n"
    )
    done = cli("record", "--edit", env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
    assert done.returncode == 0, done.stderr
    keys = [line.split(":")[0] for line in seen.read_text().split("---")[1].splitlines()]
    assert {"confidence", "paths", "guards"} <= set(keys)
    from_editor = cli.json("show", _saved_id(done))
    assert from_editor["paths"] == ["pyproject.toml"]
    assert [g["pattern"] for g in from_editor["guards"]] == ["ruff>="]
    from_flags = cli.json("show", _saved_id(cli("record", "--title", "Other", "--task", "t",
                                                "--solution", "s")))  # fmt: skip
    # The same default both ways: a confidence is what its author says, never assumed.
    assert from_editor["confidence"] is None and from_flags["confidence"] is None
    brief = cli("brief", "pin the linter ruff").stdout
    assert "confidence: not given" in brief


def test_the_record_format_names_every_json_field(store: Store, cli: Cli) -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "record-format.md").read_text()
    section = text[text.index("## The record as JSON") :]
    paragraph = section[section.index("use:") : section.index("In the input")]
    named = re.findall(r"`(\w+)`", paragraph)
    cli("record", "--title", "Guarded", "--task", "t", "--solution", "s", "--guard", "x")
    [listed] = cli.json("list")
    assert named == list(listed)


def test_the_hook_names_a_command_that_shows_related_records_in_full(
    repo: Path, store: Store, cli: Cli
) -> None:
    assert cli("hooks", "install").returncode == 0
    other = _saved_id(cli("record", *ORIGINAL))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a lesson")
    related = ["--title", "Pytest timeouts on CI for the slow fixture suite", "--problem",
               "pytest-timeout kills slow database fixtures under xdist workers",
               "--solution", "Mark slow tests"]  # fmt: skip
    assert cli("record", *related).returncode == 0
    git(repo, "add", "-A")
    hint = f"also related: {other} (`reliora check --staged --all` for details)"
    done = subprocess.run(
        ["git", "commit", "-m", "another"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert hint in done.stdout + done.stderr
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    # The command the hook names works as written: the related record in full.
    shown = cli(*shlex.split(hint.split("`")[1])[1:])
    assert shown.returncode == 0, shown.stderr
    assert f"related to existing experience {other}" in shown.stdout


def test_agent_install_names_only_the_steps_of_the_clients_it_wired(repo: Path, cli: Cli) -> None:
    done = cli("agent", "install", "cursor", "copilot")
    assert done.returncode == 0, done.stderr
    steps = done.stdout[done.stdout.index("Next steps:") :]
    assert "Claude Code" not in steps and "claude-code" not in steps
    assert "cursor: Cursor runs the project's hooks" in steps and "copilot: Copilot CLI" in steps


# --- item 8: help and names -----------------------------------------------------------------


def _listed(cli: Cli, *group: str) -> dict[str, str]:
    """The Commands section of ``reliora [GROUP] --help`` on an 80-column terminal."""
    done = cli(*group, "--help", env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    rows = done.stdout[done.stdout.index("Commands:") :].splitlines()[1:]
    return {row.split()[0]: " ".join(row.split()[1:]) for row in rows if row.strip()}


def test_every_command_list_shows_whole_descriptions(repo: Path, cli: Cli) -> None:
    listed = {"": _listed(cli)}
    for group in ("guard", "hooks", "org", "agent"):
        listed[group] = _listed(cli, group)
    cut = [f"{g} {name}: {text}" for g, rows in listed.items() for name, text in rows.items()
           if text.endswith("...") or not text]  # fmt: skip
    assert cut == []
    assert len(listed[""]) >= 21 and "supersede" in listed[""]
    # Which hook is which: the agents', git's, and the one init installs.
    assert "agents' hook (not git's)" in listed[""]["hook"]
    assert listed[""]["hooks"].startswith("Git's pre-commit hook")
    assert "agents' hooks: reliora agent" in listed[""]["hooks"]
    init_help = " ".join(cli("init", "--help").stdout.split())
    assert "--hooks Also install the git pre-commit hook (reliora hooks install)" in init_help
    assert "not the agents' hooks (reliora agent install)" in init_help


def test_usage_lines_name_arguments_as_people_write_them(repo: Path, cli: Cli) -> None:
    wanted = {
        ("feedback",): "reliora feedback [OPTIONS] ID OUTCOME",
        ("search",): "reliora search [OPTIONS] QUERY",
        ("show",): "reliora show [OPTIONS] ID",
        ("check",): "reliora check [OPTIONS] [PATHS]...",
        ("supersede",): "reliora supersede [OPTIONS] NEW OLD…",
        ("org", "search"): "reliora org search [OPTIONS] QUERY",
    }
    for args, usage in wanted.items():
        shown = cli(*args, "--help").stdout.splitlines()[0]
        assert shown == f"Usage: {usage}", shown
    missing = cli("feedback", "some-id")
    assert missing.returncode == 2
    assert "Usage: reliora feedback [OPTIONS] ID OUTCOME" in missing.stderr
    assert "Missing argument 'OUTCOME'" in missing.stderr


def test_supersede_marks_the_old_records_replaced(store: Store, cli: Cli) -> None:
    old = _saved_id(cli("record", "--title", "Old CI timeouts", "--task", "t", "--solution", "a"))
    new = _saved_id(cli("record", "--title", "New CI timeouts", "--task", "t", "--solution", "b"))
    done = cli("supersede", new[:12], old)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{new} supersedes {old}")
    assert cli.json("show", new)["supersedes"] == [old]
    shown = cli("show", old).stdout
    assert f"superseded by: {new}" in shown
    assert [r["id"] for r in cli.json("search", "CI timeouts")["results"]] == [new]
    unknown = cli("supersede", new, "no-such-record", "--json")
    assert unknown.returncode == 2
    assert (
        "no experience with id 'no-such-record'" in json.loads(unknown.stdout)["error"]["message"]
    )


def test_the_mcp_server_retires_as_the_command_does(repo: Path, store: Store, cli: Cli) -> None:
    import pytest

    pytest.importorskip("mcp.server.mcpserver", reason="needs the optional `mcp` extra (2.x)")
    from tests.test_mcp import document, reliora_mcp, run

    lesson = _saved_id(cli("record", "--title", "Pin the linter", "--task", "t", "--solution", "s"))

    async def scenario() -> None:
        async with reliora_mcp(repo) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert "reason" in tools["retire"].input_schema["required"]
            done = await session.call_tool("retire", {"id": lesson[:8], "reason": "a duplicate"})
            assert not done.is_error, done
            assert document(done)["id"] == lesson
            refused = await session.call_tool("retire", {"id": lesson, "reason": "  "})
            assert refused.is_error

    run(scenario)
    shown = cli.json("show", lesson)
    assert shown["status"] == "retired"
    assert cli.json("search", "pin the linter")["total"] == 0
