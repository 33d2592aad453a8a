"""Options and error handling shared by every command."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

# Error reporting needs no Typer, so the fast `search` path shares it; re-exported here.
from reliora_git.interfaces.commands.reporting import fail, reporting
from reliora_git.interfaces.output import print_json
from reliora_git.records.errors import RelioraError

if TYPE_CHECKING:
    from reliora_git.storage.store import Store

__all__ = [
    "AllFlag",
    "JsonAwareGroup",
    "JsonFlag",
    "PlainUsageCommand",
    "RepoOption",
    "fail",
    "reporting",
    "usage_error",
]

RepoOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="Folder holding .reliora/ (default: the nearest one above; env RELIORA_REPO).",
        show_default=False,
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of text.")]
AllFlag = Annotated[
    bool,
    typer.Option("--all", help="Show related records in full, not only likely duplicates."),
]


class JsonAwareGroup(TyperGroup):
    """The top-level group: usage errors become JSON on stdout when ``--json`` was asked for.

    Click reports a missing argument or a bad option value before any command code
    runs, as text on stderr. An agent that passed ``--json`` reads stdout only, so
    it would see nothing; here the same error (same exit code 2) is printed as the
    ``{"error": …}`` document instead. Without ``--json`` click's text is kept.
    """

    # ``ctx`` is Any: Typer's Context type depends on the Typer release (recent ones
    # vendor their own copy of click), and these overrides only pass it through.
    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        ctx.meta[_WANTS_JSON] = wants_json(args[1:])
        ctx.meta[_COMMAND] = args[0] if args else None
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except USAGE_ERROR as error:
            if not ctx.meta.get(_WANTS_JSON):
                raise
            print_json(usage_error(error, ctx.meta.get(_COMMAND)).to_json())
            raise typer.Exit(2) from None


class PlainUsageCommand(TyperCommand):
    """A command whose usage line names its arguments as people write them: ``ID OUTCOME``.

    Typer's own usage line wraps a required argument in braces (``{ID} {outcome}``), which
    reads as a set to choose from, and spells an argument without a metavar in lower case.
    """

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                pieces.append(argument_usage(param))
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


def argument_usage(param: Any) -> str:
    """``ID``, ``[PATHS]...``, or a metavar that already says it all (``[TASK | -]``)."""
    name = param.metavar or (param.name or "").upper()
    if name.startswith("["):
        return str(name)
    shown = name if param.required else f"[{name}]"
    if param.nargs != 1 and not name.endswith(("...", "…")):
        shown += "..."
    return str(shown)


def usage_error(error: Any, command: str | None) -> RelioraError:
    """A click usage error as ours: its message plus the command's usage line."""
    message = error.format_message()
    if getattr(error, "ctx", None) is not None:
        message = f"{message} ({error.ctx.get_usage()}; see --help)"
    else:  # raised by the option parser, which has no context to describe
        message = f"{message} (Usage: reliora {command or 'COMMAND'} …; see --help)"
    return RelioraError(message, code="usage_error")


#: Click's UsageError, found through Typer's public BadParameter: recent Typer
#: releases vendor click, so ``import click`` would name a different class.
USAGE_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError"
)
_WANTS_JSON = "reliora.wants_json"
_COMMAND = "reliora.command"


def wants_json(args: list[str]) -> bool:
    """Whether a command line asks for JSON output (``--json`` before any ``--``)."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json" or arg.startswith("--json="):
            return True
    return False


def store_or_repository(repo: Path | None) -> Store:
    """The store; without one (before `reliora init`), the repository around the folder, so
    that what only reads git (`history`, a draft from a commit) works before a store exists."""
    from reliora_git.storage.store import Store, find_store

    try:
        return find_store(repo)
    except RelioraError as error:
        if error.code != "no_store" or repo is not None:
            raise
        from reliora_git.gitrepo.git import toplevel

        top = toplevel(Path.cwd())
        if top is None:
            raise
        return Store(top)


def optional_value(
    args: Sequence[str], option: str, placeholder: str, takes: Callable[[str], bool]
) -> list[str]:
    """``args`` with ``placeholder`` put after each ``option`` that is not followed by a value
    ``takes`` accepts: Typer gives an option an optional value in no other way (``--ask`` and
    ``--ask 5``, ``record --from-commit X --json``)."""
    given: list[str] = []
    for position, arg in enumerate(args):
        if arg == "--":
            given += list(args[position:])
            break
        given.append(arg)
        after = args[position + 1] if position + 1 < len(args) else None
        if arg == option and (after is None or not takes(after)):
            given.append(placeholder)
    return given
