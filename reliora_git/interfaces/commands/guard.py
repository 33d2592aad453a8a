"""``reliora guard test``; the ``--guard`` flags of ``record`` and ``update`` (SPEC §15)."""

from __future__ import annotations

from typing import Annotated

import typer

from reliora_git.interfaces.commands.common import JsonFlag, RepoOption, reporting
from reliora_git.records.model import Guard

GuardOption = Annotated[
    list[str] | None,
    typer.Option(
        "--guard",
        metavar="PATTERN",
        help="A guard: an RE2 regular expression that the pre-commit hook and review look for "
        "in added lines of code (repeatable). Refused when it already matches the code.",
    ),
]
GuardPathOption = Annotated[
    list[str] | None,
    typer.Option(
        "--guard-path",
        metavar="GLOB",
        help="Files the --guard patterns look at, e.g. 'src/**/*.js' (repeatable; default: the "
        "record's paths, else every file outside .reliora/).",
    ),
]
BlockFlag = Annotated[
    bool, typer.Option("--block", help="The --guard patterns stop the commit (default: warn).")
]
AllowExistingFlag = Annotated[
    bool,
    typer.Option(
        "--allow-existing", help="Save a --guard although it already matches the working tree."
    ),
]


def guards_from_flags(
    patterns: list[str] | None, paths: list[str] | None, block: bool
) -> list[Guard]:
    """The guards ``--guard``/``--guard-path``/``--block`` ask for (the paths are every one's)."""
    from reliora_git.records.errors import RelioraError

    if not patterns:
        if paths or block:
            raise RelioraError("--guard-path and --block need a --guard", code="invalid_option")
        return []
    severity = "block" if block else "warn"
    return [Guard(pattern, tuple(paths or ()), "", severity) for pattern in patterns]


guard_app = typer.Typer(
    name="guard",
    help="Guards: lessons that check the code being committed.\n\n"
    "A record's `guards` are run by git's pre-commit hook (`reliora hooks install`) and by "
    "`reliora review` (docs/record-format.md, Guards).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@guard_app.command("test")
def guard_test(
    ids: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[ID]...",
            help="Records whose guards to run, whatever their status (default: every active "
            "record's).",
            show_default=False,
        ),
    ] = None,
    rev: Annotated[
        str | None,
        typer.Option(
            "--rev",
            metavar="REV",
            help="Run over the lines commit REV added (default: every line of the working tree).",
        ),
    ] = None,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
) -> None:
    """Show what the guards fire on, in the code or a commit.

    The working tree's code, or one commit's change (--rev).

    Exit 0 whatever fires (it is a test); 1 when a record's guard cannot run
    (the record is invalid: `reliora check` says why).

    \b
    Examples:
      reliora guard test
      reliora guard test avoid-moment-js --rev HEAD
      reliora guard test --rev main~3 --json
    """
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.guards.trial import run_guard_test

    with reporting(json_output):
        result = run_guard_test(repo, ids or [], rev)
        if json_output:
            print_json(result.to_json())
            return
        printer = Printer()
        for finding in result.report.findings:
            printer.line(finding.summary())
            if finding.text:
                printer.line(f"    {finding.text}")
        for path, reason in result.report.skipped:
            printer.warn(f"{path}: not judged, {reason}")
        printer.line(result.summary())


def register(app: typer.Typer) -> None:
    app.add_typer(guard_app)
