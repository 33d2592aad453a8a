"""`agent status` names what a person must still do by hand (SPEC.md §14.1)."""

from __future__ import annotations

from pathlib import Path

from reliora_git.storage.store import Store
from tests.conftest import Cli


def test_status_says_this_clone_lacks_the_git_hook_until_it_is_installed(
    store: Store, cli: Cli, repo: Path
) -> None:
    assert cli("agent", "install", "claude-code").returncode == 0
    steps = cli.json("agent", "status")["todo"]
    assert {"client": "git", "step": steps[-1]["step"]} == steps[-1]
    assert "reliora hooks install" in steps[-1]["step"]
    assert any(s["client"] == "claude-code" and "approve" in s["step"] for s in steps)
    text = cli("agent", "status").stdout
    assert "Still to do by hand" in text and "guards do not check commits here" in text
    assert cli("hooks", "install").returncode == 0
    steps = cli.json("agent", "status")["todo"]
    assert [s for s in steps if s["client"] == "git"] == []
