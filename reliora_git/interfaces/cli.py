"""The `reliora` command line: the Typer app and its commands (see interfaces.commands).

Typer builds a command's options from its function's signature each time the
program starts, for every command the app holds: for all of them, that is most
of a short command's start-up. So a run that names its command gets an app
holding only the module that defines it (:func:`app_for`); help, an unknown
command or an option first get the whole app (:data:`app`), which lists and
suggests every command.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from reliora_git import __version__
from reliora_git.interfaces.commands.common import JsonAwareGroup, PlainUsageCommand

#: Each command (or group) name → the module of interfaces.commands that registers it.
COMMAND_MODULES: dict[str, str] = {
    "init": "basic",
    "search": "basic",
    "show": "basic",
    "list": "basic",
    "feedback": "basic",
    "brief": "brief",
    "record": "record",
    "history": "history",
    "update": "lifecycle",
    "edit": "lifecycle",
    "retire": "lifecycle",
    "supersede": "lifecycle",
    "stale": "lifecycle",
    "about": "lifecycle",
    "check": "check",
    "guard": "guard",
    "hooks": "hooks",
    "review": "review",
    "eval": "evaluate",
    "mcp": "mcp",
    "org": "org",
    "agent": "agent",
    "hook": "agent",
    "serve": "web",
}
#: The modules in the order their commands are listed by ``reliora --help``.
MODULES = (
    "basic",
    "brief",
    "record",
    "history",
    "lifecycle",
    "check",
    "guard",
    "hooks",
    "review",
    "evaluate",
    "mcp",
    "org",
    "agent",
    "web",
)


def _show_version(value: bool) -> None:
    if value:
        print(f"reliora {__version__}")
        raise typer.Exit()


def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Engineering experiences kept next to the code, found by explained lexical search.

    \b
    Example:
      reliora search "flaky pytest timeouts" --project-context python
    """


def build_app(modules: Iterable[str] = MODULES) -> typer.Typer:
    """The app with the commands of ``modules`` (names in interfaces.commands)."""
    built = typer.Typer(
        name="reliora",
        cls=JsonAwareGroup,
        no_args_is_help=True,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )
    # A callback keeps the app a group even with one command (else Typer would run
    # that command without its name).
    built.callback()(main)
    for name in modules:
        importlib.import_module(f"reliora_git.interfaces.commands.{name}").register(built)
    _plain_usage(built)
    return built


def _plain_usage(app: typer.Typer) -> None:
    """Every command of ``app`` and of its groups gets a usage line as people write it.

    Set here, once, rather than at each ``app.command()``: a command added later cannot
    be left out (the usage lines are checked by tests/test_newcomer_words.py).
    """
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):  # Typer's default, whichever way it says so
            info.cls = PlainUsageCommand
    for group in app.registered_groups:
        if group.typer_instance is not None:
            _plain_usage(group.typer_instance)


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app to run ``reliora ARGS`` with: only the named command's module, if it names one."""
    module = COMMAND_MODULES.get(args[0]) if args else None
    return build_app([module] if module is not None else MODULES)


def __getattr__(name: str) -> Any:
    # ``app``, the whole app, is built when asked for (tests and docs read it).
    if name == "app":
        return build_app()
    raise AttributeError(name)
