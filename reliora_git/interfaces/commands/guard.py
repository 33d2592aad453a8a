"""``reliora guard list`` and ``guard test``; the ``--guard`` flags of ``record`` and ``update``
(SPEC §15)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from reliora_git.interfaces.commands.common import JsonFlag, RepoOption, reporting
from reliora_git.records.model import Guard

if TYPE_CHECKING:
    from reliora_git.operations.guards.nouns import GuardOf

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
GuardExcludeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--guard-exclude",
        metavar="GLOB",
        help="Files the --guard patterns never look at, e.g. the one module that wraps the "
        "call: 'src/crypto/legacy.py' (repeatable).",
    ),
]
GuardMessageOption = Annotated[
    str | None,
    typer.Option(
        "--guard-message",
        metavar="TEXT",
        help="What a developer reads when a --guard fires (default: the record's title).",
    ),
]
BlockFlag = Annotated[
    bool, typer.Option("--block", help="The --guard patterns stop the commit (default: warn).")
]
AllowExistingFlag = Annotated[
    bool,
    typer.Option(
        "--allow-existing",
        help="Save a --guard although it already matches the working tree: the record says "
        "so (existing: allowed), and check and review warn instead of failing.",
    ),
]


def guards_from_flags(
    patterns: list[str] | None,
    paths: list[str] | None,
    block: bool,
    exclude: list[str] | None = None,
    message: str | None = None,
) -> list[Guard]:
    """The guards ``--guard`` and its flags ask for (paths, exclusions and message are every
    one's)."""
    from reliora_git.records.errors import RelioraError

    if not patterns:
        if paths or block or exclude or message is not None:
            raise RelioraError(
                "--guard-path, --guard-exclude, --guard-message and --block need a --guard",
                code="invalid_option",
            )
        return []
    severity = "block" if block else "warn"
    text = (message or "").strip()
    globs, excluded = tuple(paths or ()), tuple(exclude or ())
    return [Guard(pattern, globs, text, severity, excluded) for pattern in patterns]


guard_app = typer.Typer(
    name="guard",
    help="Guards: lessons that check the code being committed.\n\n"
    "A record's `guards` are run by git's pre-commit hook (`reliora hooks install`) and by "
    "`reliora review` (docs/record-format.md, Guards).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@guard_app.command("list")
def guard_list(repo: RepoOption = None, json_output: JsonFlag = False) -> None:
    """List every active guard, its files, severity and lesson.

    The paths a guard looks at are its own globs, else its lesson's paths, else
    every file outside .reliora/; files matching its exclude globs are left out.
    Guards of retired and superseded lessons are off and not listed. `existing:
    allowed` marks a guard saved with --allow-existing (the code already held
    matches). Exit 0, also when there is no guard.

    \b
    Examples:
      reliora guard list
      reliora guard list --json
    """
    from reliora_git.interfaces.output import Printer, print_json
    from reliora_git.operations.guards.listing import list_guards
    from reliora_git.storage.store import find_store

    with reporting(json_output):
        found = list_guards(find_store(repo))
        if json_output:
            print_json(found.to_json())
            return
        printer = Printer()
        for g in found.guards:
            for line in _guard_lines(g):
                printer.line(line)
        count = len(found.guards)
        printer.line(
            f"{count} active guard{'s' * (count != 1)} in {found.records} "
            f"lesson{'s' * (found.records != 1)}"
        )


def _guard_lines(g: GuardOf) -> list[str]:
    """A guard as ``guard list`` prints it: a head line, then what it looks at and says."""
    from reliora_git.interfaces.output import one_line
    from reliora_git.operations.guards.listing import SCOPES
    from reliora_git.records.guards import MAX_PATTERN_CHARS, shown_pattern

    guard = g.guard
    accepted = "  [existing: allowed]" if guard.existing_allowed else ""
    where = ", ".join(one_line(p) for p in guard.paths)
    lines = [
        f"{g.record_id}  guard {guard.number}  {guard.severity}{accepted}",
        f"    pattern: {shown_pattern(guard.pattern, MAX_PATTERN_CHARS)}",
        f"    paths: {SCOPES[guard.scope]}" + (f": {where}" if where else ""),
    ]
    if guard.exclude:
        lines.append(f"    exclude: {', '.join(one_line(p) for p in guard.exclude)}")
    lines.append(f"    message: {one_line(guard.message)}")
    return lines


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
