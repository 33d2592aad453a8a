"""The app a run gets (interfaces/cli.py): only the named command's module, the same command."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from reliora_git.interfaces.cli import COMMAND_MODULES, MODULES, app_for, build_app


def _commands(app: typer.Typer) -> dict[str, Any]:
    group = typer.main.get_command(app)
    return dict(group.commands)  # type: ignore[attr-defined]


def test_every_command_is_mapped_to_the_module_that_registers_it() -> None:
    registered = {name: module for module in MODULES for name in _commands(build_app([module]))}
    assert registered == COMMAND_MODULES


def _help(command: Any, name: str) -> str:
    group = typer.main.get_command(build_app([]))
    parent = group.context_class(group, info_name="reliora")
    context = command.context_class(command, info_name=name, parent=parent)
    return str(command.get_help(context))


@pytest.mark.parametrize("name", sorted(COMMAND_MODULES))
def test_a_run_naming_a_command_gets_that_command_as_the_whole_app_has_it(name: str) -> None:
    alone = _commands(app_for([name, "--help"]))
    assert set(alone) == {n for n, m in COMMAND_MODULES.items() if m == COMMAND_MODULES[name]}
    whole = _commands(app_for([]))
    assert _help(alone[name], name) == _help(whole[name], name)


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["recrod"]])
def test_help_options_and_unknown_commands_get_every_command(args: list[str]) -> None:
    assert set(_commands(app_for(args))) == set(COMMAND_MODULES)
