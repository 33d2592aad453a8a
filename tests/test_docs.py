"""Documentation that is checked: every command shows an example and has a section in docs/."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from reliora_git.interfaces.cli import app
from tests.conftest import Cli

ROOT = Path(__file__).resolve().parents[1]


def all_commands() -> list[str]:
    found = []
    for name, command in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        found += [f"{name} {sub}" for sub in subcommands] if subcommands else [name]
    return sorted(found)


@pytest.mark.parametrize("name", all_commands())
def test_every_command_has_an_example_and_a_documented_section(name: str, tmp_path: Path) -> None:
    done = Cli(tmp_path)(*name.split(), "--help")
    assert done.returncode == 0, done.stderr
    assert "Example" in done.stdout, f"`reliora {name} --help` shows no example"
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    top = name.split()[0]
    assert f"## reliora {top}" in docs, f"no '## reliora {top}' section in docs/"
