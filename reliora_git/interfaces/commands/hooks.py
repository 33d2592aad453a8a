"""``hooks install | uninstall | status``: the git pre-commit hook."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reliora_git.interfaces.commands.common import JsonFlag, reporting

if TYPE_CHECKING:
    from reliora_git.gitrepo.hooks import Outcome

RepoDirOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="A folder in the git repository (default: the current folder).",
        show_default=False,
    ),
]

hooks_app = typer.Typer(
    name="hooks",
    help="Git's pre-commit hook (agents' hooks: reliora agent).\n\n"
    "Manage the git pre-commit hook that runs `reliora check --staged` on every commit: "
    "records validated, duplicates and guards reported. The hooks of coding agents are "
    "`reliora agent install`.\n\n"
    "\b\nExample:\n  reliora hooks install\n  reliora hooks status",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _outcome_json(outcome: Outcome) -> dict[str, Any]:
    state = outcome.state
    return {
        "action": outcome.action,
        "hook": str(state.hook),
        "installed": state.installed,
        "chained": state.chained,
        "foreignHook": state.foreign,
        "hooksPath": state.managed_by,
        "message": outcome.message,
    }


def _run(action: str, repo: Path | None, json_output: bool) -> None:
    from reliora_git.gitrepo import hooks
    from reliora_git.interfaces.output import Printer, print_json

    with reporting(json_output):
        cwd = repo.resolve() if repo else Path.cwd()
        outcome = hooks.install(cwd) if action == "install" else hooks.uninstall(cwd)
        if json_output:
            print_json(_outcome_json(outcome))
        else:
            Printer().line(outcome.message)


@hooks_app.command()
def install(repo: RepoDirOption = None, json_output: JsonFlag = False) -> None:
    """Install git's pre-commit hook; an existing one still runs.

    An existing hook is kept and runs first. Installing again changes nothing.
    With core.hooksPath set (husky, lefthook…) nothing is written: the line to
    add to that tool is printed.

    \b
    Example:
      reliora hooks install
    """
    _run("install", repo, json_output)


@hooks_app.command()
def uninstall(repo: RepoDirOption = None, json_output: JsonFlag = False) -> None:
    """Remove git's pre-commit hook; put back the one it replaced.

    \b
    Example:
      reliora hooks uninstall
    """
    _run("uninstall", repo, json_output)


@hooks_app.command()
def status(repo: RepoDirOption = None, json_output: JsonFlag = False) -> None:
    """Say whether git's pre-commit hook is installed.

    And what else is there (a chained hook, core.hooksPath).

    \b
    Example:
      reliora hooks status --json
    """
    from reliora_git.gitrepo import hooks
    from reliora_git.interfaces.output import Printer, print_json

    with reporting(json_output):
        state = hooks.state(repo.resolve() if repo else Path.cwd())
        if json_output:
            print_json(
                {
                    "hook": str(state.hook),
                    "installed": state.installed,
                    "chained": state.chained,
                    "foreignHook": state.foreign,
                    "hooksPath": state.managed_by,
                }
            )
            return
        printer = Printer()
        if state.managed_by is not None:
            printer.line(hooks.external_message(state.managed_by))
            return
        if state.installed:
            printer.line(f"installed: {state.hook}")
        elif state.foreign:
            printer.line(f"not installed: {state.hook} is another hook (install chains it)")
        else:
            printer.line(f"not installed (would go to {state.hook})")
        if state.chained:
            printer.line(f"chained: {state.chained_hook} runs first")


def register(app: typer.Typer) -> None:
    app.add_typer(hooks_app)
