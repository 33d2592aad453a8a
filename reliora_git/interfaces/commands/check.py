"""``check``: validate records and report duplicates."""

from __future__ import annotations

from typing import Annotated

import typer

from reliora_git.interfaces.commands.check_staged import run_check_staged
from reliora_git.interfaces.commands.common import AllFlag, JsonFlag, RepoOption, reporting
from reliora_git.storage.store import find_store


def check(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="PATHS",
            help="Record files to check closely (default: the whole store).",
            show_default=False,
        ),
    ] = None,
    staged: Annotated[
        bool,
        typer.Option(
            "--staged",
            help="Check the records staged for the next commit, as the git index holds them "
            "(what the pre-commit hook runs).",
        ),
    ] = False,
    repo: RepoOption = None,
    json_output: JsonFlag = False,
    show_all: AllFlag = False,
) -> None:
    """Validate records; exit 1 when any is invalid.

    Similar records are warnings only. Every record is validated and checked
    for clashing ids and exact duplicates; the files named in PATHS are also
    searched for similar experiences.

    With --staged, the records added, copied, modified or renamed in the git
    index are checked instead (their staged text, not the working tree's), and
    searched for similar experiences among every staged record. Exit 1 for an
    unresolved conflict, or an invalid record when block_on_invalid is true.

    Likely duplicates are shown in full, with the words they share; records that
    are only related are named on one line (--all shows them in full). A record
    that the last commit already holds is warned about likely duplicates only.

    \b
    Examples:
      reliora check .reliora/experiences/flaky-pytest-timeouts-3f9a1c.md
      reliora check --staged
      reliora check --all .reliora/experiences/new-record-1a2b3c.md
    """
    from reliora_git.interfaces.output import Printer, print_json

    if staged:
        code = run_check_staged(paths, repo, json_output, show_all)
        if code:
            raise typer.Exit(code)
        return
    from reliora_git.operations.review.check import check as check_store  # not for the others

    with reporting(json_output):
        report = check_store(find_store(repo), paths or None)
        if json_output:
            print_json(report.to_json())
        else:
            Printer().check(report, show_all)
    if not report.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command()(check)
