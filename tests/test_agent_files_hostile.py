"""Files `agent install` edits arrive in pull requests: links and marker lines are hostile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reliora_git.operations.agents.files import MD_BEGIN, MD_END
from tests.conftest import Cli


def test_install_never_writes_through_a_linked_folder(repo: Path, cli: Cli, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "settings.json").write_text('{"theirs": true}\n')
    (repo / ".claude").symlink_to(outside, target_is_directory=True)
    done = cli("agent", "install", "claude-code")
    assert done.returncode == 2
    assert done.stderr.startswith("reliora: error: .claude: is a symbolic link")
    assert done.stderr.count("\n") == 1
    assert (outside / "settings.json").read_text() == '{"theirs": true}\n'
    assert not (repo / ".mcp.json").exists()  # nothing written when one file is refused
    done = cli("agent", "uninstall", "claude-code")
    assert done.returncode == 2 and (outside / "settings.json").exists()


def test_install_never_copies_a_linked_file_into_the_repository(
    repo: Path, cli: Cli, tmp_path: Path
) -> None:
    secret = tmp_path / "registry.json"
    secret.write_text(json.dumps({"mcpServers": {"npm": {"env": {"TOKEN": "s3cr3t-value"}}}}))
    (repo / ".mcp.json").symlink_to(secret)
    done = cli("agent", "install", "claude-code")
    assert done.returncode == 2 and ".mcp.json: is a symbolic link" in done.stderr
    assert (repo / ".mcp.json").is_symlink()
    assert "s3cr3t" not in "".join(
        p.read_text()
        for p in repo.rglob("*")
        if p.is_file() and not p.is_symlink() and ".git" not in p.parts
    )
    status = cli.json("agent", "status")
    states = {f["path"]: f["state"] for f in status["files"]}
    assert states[".mcp.json"] == "a symbolic link (left alone)"


FENCED = f"""# Agents

Our install adds a block like this:

```markdown
{MD_BEGIN}
an example, not ours
{MD_END}
```

Keep this text.
"""


def test_marker_lines_in_a_code_fence_are_text(repo: Path, cli: Cli) -> None:
    (repo / "AGENTS.md").write_text(FENCED)
    assert cli("agent", "install", "codex").returncode == 0
    text = (repo / "AGENTS.md").read_text()
    assert text.startswith(FENCED) and "an example, not ours" in text
    assert text.count(MD_BEGIN) == 2
    assert cli("agent", "uninstall", "codex").returncode == 0
    assert (repo / "AGENTS.md").read_text() == FENCED


@pytest.mark.parametrize(
    "text",
    [
        f"{MD_BEGIN}\nmine\n{MD_BEGIN}\nnested\n{MD_END}\n",
        f"{MD_BEGIN}\none\n{MD_END}\n\n{MD_BEGIN}\ntwo\n{MD_END}\n",
        f"text\n{MD_END}\n",
    ],
)
def test_nested_or_repeated_markers_are_refused_and_nothing_is_written(
    repo: Path, cli: Cli, text: str
) -> None:
    (repo / "AGENTS.md").write_text(text)
    for action in ("install", "uninstall"):
        done = cli("agent", action, "codex")
        assert done.returncode == 2 and done.stderr.count("\n") == 1
        assert done.stderr.startswith("reliora: error: AGENTS.md:")
        assert (repo / "AGENTS.md").read_text() == text
    assert not (repo / ".codex").exists()
