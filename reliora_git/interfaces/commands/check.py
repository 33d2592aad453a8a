"""``check``: validate records and report duplicates."""

from __future__ import annotations

from typing import Annotated

import typer

from reliora_git.interfaces.commands.check_staged import run_check_staged
from reliora_git.interfaces.commands.common import AllFlag, JsonFlag, RepoOption


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
    suggest: Annotated[
        bool,
        typer.Option(
            "--suggest",
            help="Also name the lessons without asked-as lines (how people would ask for "
            "them), most pushed to agents first.",
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
      reliora check --suggest
    """
    if staged:
        code = run_check_staged(paths, repo, json_output, show_all)
        if code:
            raise typer.Exit(code)
        return
    from reliora_git.interfaces.commands.checking import run_check

    code = run_check(
        paths or None, repo=repo, json_output=json_output, show_all=show_all, suggest=suggest
    )
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command()(check)
