"""Documentation that is checked: every command has an example and a section in docs/commands.md."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import typer

from reliora_git.cli import app

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = typer.main.get_command(app)
assert isinstance(COMMANDS, click.Group)


def all_commands() -> list[tuple[str, click.Command]]:
    found = []
    for name, command in COMMANDS.commands.items():
        if isinstance(command, click.Group):
            found += [(f"{name} {sub}", c) for sub, c in command.commands.items()]
        else:
            found.append((name, command))
    return sorted(found)


@pytest.mark.parametrize(("name", "command"), all_commands())
def test_every_command_has_an_example_and_a_documented_section(
    name: str, command: click.Command
) -> None:
    with click.Context(command, info_name=f"reliora {name}") as ctx:
        help_text = command.get_help(ctx)
    assert "Example" in help_text, f"`reliora {name} --help` shows no example"
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    top = name.split()[0]
    assert f"## reliora {top}" in docs, f"no '## reliora {top}' section in docs/"
