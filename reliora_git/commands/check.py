"""``check``: validate records and report duplicates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from reliora_git import api
from reliora_git.commands.common import JsonFlag, RepoOption, reporting
from reliora_git.jsonio import problem_to_json
from reliora_git.store import find_store


def check(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Record files to check closely (default: the whole store).", show_default=False
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
) -> None:
    """Validate records; exit 1 when any is invalid. Similar records are warnings only.

    Every record is validated and checked for clashing ids and exact duplicates;
    the files named in PATHS are also searched for similar experiences.

    With --staged, the records added, copied, modified or renamed in the git
    index are checked instead (their staged text, not the working tree's), and
    searched for similar experiences among every staged record. Exit 1 for an
    unresolved conflict, or an invalid record when block_on_invalid is true.

    \b
    Examples:
      reliora check .reliora/experiences/flaky-pytest-timeouts-3f9a1c.md
      reliora check --staged
    """
    from reliora_git.output import Printer, print_json

    if staged:
        check_staged(paths, repo, json_output)
        return
    with reporting(json_output):
        report = api.check(find_store(repo), paths or None)
        if json_output:
            print_json(report_to_json(report))
        else:
            Printer().check(report)
    if not report.ok:
        raise typer.Exit(1)


def check_staged(paths: list[str] | None, repo: Path | None, json_output: bool) -> None:
    """``check --staged``: the pre-commit hook's check of the git index."""
    from reliora_git.config import load_config
    from reliora_git.errors import RelioraError
    from reliora_git.output import Printer, print_json
    from reliora_git.staged import check_staged as check_index
    from reliora_git.staged import find_git_store

    with reporting(json_output):
        if paths:
            raise RelioraError("--staged checks the whole index; give no PATHS", code="usage")
        store = find_git_store(repo)
        config = load_config(store)
        result = check_index(store, duplicates=config.hook_duplicates)
        if json_output:
            print_json({**report_to_json(result.report), "staged": True})
        elif result.report.checked:
            # Nothing staged under .reliora/ (most commits): say nothing.
            Printer().check(result.report)
    if result.conflicts or (result.has_invalid_records and config.block_on_invalid):
        raise typer.Exit(1)


def report_to_json(report: api.CheckReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "checked": report.checked,
        "files": [
            {
                "locator": f.locator,
                "id": f.id,
                "problems": [problem_to_json(p) for p in f.problems],
                "warnings": [w.to_json() for w in f.similar],
            }
            for f in report.files
        ],
    }


def register(app: typer.Typer) -> None:
    app.command()(check)
