"""Hostile input, round 5: each fault found against the end-of-turn ask, `history`,
`record --from-commit` and `agent install | uninstall`, as a test that failed before it was
fixed (docs/security.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli, git

GEMINI_SETTINGS = ".gemini/settings.json"


def _snapshot(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }


# --- uninstall takes away only what install added -------------------------------------------


@pytest.mark.parametrize(
    "names", [["AGENTS.md", "GEMINI.md"], ["AGENTS.md"], ["CONTEXT.md", "AGENTS.md"]]
)
def test_uninstall_keeps_a_context_file_name_the_person_listed(
    repo: Path, cli: Cli, names: list[str]
) -> None:
    (repo / ".gemini").mkdir()
    theirs = json.dumps({"context": {"fileName": names}}, indent=2) + "\n"
    (repo / GEMINI_SETTINGS).write_text(theirs)
    original = _snapshot(repo)
    assert cli("agent", "install", "gemini").returncode == 0
    assert json.loads((repo / GEMINI_SETTINGS).read_text())["context"]["fileName"] == names
    done = cli("agent", "uninstall", "gemini")
    assert done.returncode == 0, done.stderr
    assert (repo / GEMINI_SETTINGS).read_text() == theirs
    assert _snapshot(repo) == original


def test_what_install_added_to_context_is_taken_out_again(repo: Path, cli: Cli) -> None:
    (repo / ".gemini").mkdir()
    theirs = json.dumps({"context": {"fileName": ["CONTEXT.md"]}}, indent=2) + "\n"
    (repo / GEMINI_SETTINGS).write_text(theirs)
    assert cli("agent", "install", "gemini").returncode == 0
    names = json.loads((repo / GEMINI_SETTINGS).read_text())["context"]["fileName"]
    assert names == ["CONTEXT.md", "AGENTS.md"]
    assert cli("agent", "uninstall", "gemini").returncode == 0
    assert (repo / GEMINI_SETTINGS).read_text() == theirs


def test_a_clone_that_did_not_install_leaves_the_context_setting_alone(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    assert cli("agent", "install", "gemini").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "wire gemini")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    done = cli("agent", "uninstall", "gemini", cwd=clone)
    assert done.returncode == 0, done.stderr
    settings = json.loads((clone / GEMINI_SETTINGS).read_text())
    assert settings == {"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}
    status = json.loads(cli("agent", "status", "--json", cwd=clone).stdout)
    assert "gemini" not in status["clients"]
