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
    related = ["--title", "Pytest timeouts flaky on CI", "--problem", "pytest-timeout kills slow",
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
