"""The `reliora` command line: the Typer app and its commands (see interfaces.commands)."""

from __future__ import annotations

from typing import Annotated

import typer

from reliora_git import __version__
from reliora_git.interfaces.commands import (
    agent,
    basic,
    brief,
    check,
    guard,
    hooks,
    lifecycle,
    mcp,
    org,
    record,
    review,
)
from reliora_git.interfaces.commands.common import JsonAwareGroup

app = typer.Typer(
    name="reliora",
    cls=JsonAwareGroup,
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        print(f"reliora {__version__}")
        raise typer.Exit()


@app.callback()
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


for module in (basic, brief, record, lifecycle, check, guard, hooks, review, mcp, org, agent):
    module.register(app)
